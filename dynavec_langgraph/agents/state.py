"""``dynavec.agents.state``: :class:`~dynavec_langgraph.AgentState`, the same object as
:mod:`dynavec_langgraph.records`' (docs/compatibility.md, N6)."""

from __future__ import annotations

from dynavec_langgraph._dynavec.records import AgentState

__all__ = ["AgentState"]
