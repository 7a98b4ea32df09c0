"""``dynavec.agents.base``: the records, the tool type and decorator, and ``interrupt``.

The same objects as :mod:`dynavec_langgraph.agents` and the package top level
(docs/compatibility.md, N6).
"""

from __future__ import annotations

from dynavec_langgraph._tools.agent_tool import AgentTool, tool
from dynavec_langgraph.interrupt import interrupt
from dynavec_langgraph.planner import Plan, PlanStep
from dynavec_langgraph.records import AgentResult, AgentStep

__all__ = ["AgentResult", "AgentStep", "AgentTool", "Plan", "PlanStep", "interrupt", "tool"]
