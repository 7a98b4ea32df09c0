"""``dynavec.agents.planner``: :class:`~dynavec_langgraph.planner.Planner` and its default
prompt, the same objects as :mod:`dynavec_langgraph.planner` (docs/compatibility.md, N6).
"""

from __future__ import annotations

from dynavec_langgraph._dynavec.planner import DEFAULT_PLANNER_SYSTEM_PROMPT, Planner

__all__ = ["DEFAULT_PLANNER_SYSTEM_PROMPT", "Planner"]
