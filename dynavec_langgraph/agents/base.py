"""``dynavec.agents.base``: the records, the tool type and decorator, and ``interrupt``.

The same objects as :mod:`dynavec_langgraph.agents` and the package top level
(docs/compatibility.md, N6).
"""

from __future__ import annotations

from dynavec_langgraph._dynavec.planner import Plan, PlanStep
from dynavec_langgraph._dynavec.records import AgentResult, AgentStep
from dynavec_langgraph._tools.agent_tool import AgentTool, tool
from dynavec_langgraph.interrupt import interrupt

__all__ = ["AgentResult", "AgentStep", "AgentTool", "Plan", "PlanStep", "interrupt", "tool"]
