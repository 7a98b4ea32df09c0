"""``dynavec.agents.supervisor``: ``AgentLike`` and ``Supervisor``, the same objects as
:mod:`dynavec_langgraph.supervisor`'s (docs/compatibility.md, N6)."""

from __future__ import annotations

from dynavec_langgraph._dynavec.supervisor import AgentLike, Supervisor

__all__ = ["AgentLike", "Supervisor"]
