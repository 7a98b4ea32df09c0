"""``dynavec.agents``, mirrored: code that imported from it runs after swapping the import.

::

    from dynavec_langgraph.agents import ReActAgent, interrupt, tool   # was: dynavec.agents

Everything here is the package's own object, re-exported under dynavec's names (see
``docs/compatibility.md`` for what holds and what differs on purpose).
"""

from __future__ import annotations

from dynavec_langgraph._agent import DEFAULT_SYSTEM_PROMPT, ReActAgent
from dynavec_langgraph._tools import AgentTool, tool
from dynavec_langgraph.checkpoint import BaseCheckpointer, Checkpoint, MemoryCheckpointer
from dynavec_langgraph.exceptions import ApprovalTimeoutError, MissingDependencyError, NodeInterrupt
from dynavec_langgraph.interrupt import interrupt
from dynavec_langgraph.planner import Plan, Planner, PlanStep
from dynavec_langgraph.records import AgentResult, AgentState, AgentStep, Message, ToolCall
from dynavec_langgraph.registry import ToolRegistry, default_registry
from dynavec_langgraph.supervisor import AgentLike, Handoff, Supervisor

__all__ = [
    "DEFAULT_REACT_SYSTEM_PROMPT",
    "AgentLike",
    "AgentResult",
    "AgentState",
    "AgentStep",
    "AgentTool",
    "ApprovalTimeoutError",
    "BaseCheckpointer",
    "Checkpoint",
    "Handoff",
    "MemoryCheckpointer",
    "Message",
    "MissingDependencyError",
    "NodeInterrupt",
    "Plan",
    "PlanStep",
    "Planner",
    "ReActAgent",
    "Supervisor",
    "ToolCall",
    "ToolRegistry",
    "default_registry",
    "interrupt",
    "tool",
]

DEFAULT_REACT_SYSTEM_PROMPT = DEFAULT_SYSTEM_PROMPT
"""The system prompt a ``ReActAgent`` uses when ``system_prompt=None``."""
