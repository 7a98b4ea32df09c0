"""``dynavec.agents.handoff``: :class:`~dynavec_langgraph.supervisor.Handoff`, the same object
as :mod:`dynavec_langgraph.supervisor`'s (docs/compatibility.md, N6)."""

from __future__ import annotations

from dynavec_langgraph._dynavec.supervisor import Handoff

__all__ = ["Handoff"]
