"""``dynavec.agents``, mirrored: code that imported from it runs after swapping the import.

::

    from dynavec_langgraph.agents import ReActAgent, interrupt, tool   # was: dynavec.agents

Everything here is the package's own object, re-exported under dynavec's names; the
submodules ``base``, ``react``, ``planner``, ``registry``, ``connectors``, ``state``,
``handoff`` and ``supervisor`` hold the same objects (see ``docs/compatibility.md`` for what
holds and what differs on purpose).
"""

from __future__ import annotations

from dynavec_langgraph._dynavec.memory import (
    BaseMemory,
    DynamoDBMemoryStore,
    InMemoryMemoryStore,
    MemoryPolicy,
    SummaryMemoryPolicy,
    TokenBudgetMemoryPolicy,
    WindowMemoryPolicy,
)
from dynavec_langgraph._dynavec.records import Message, ToolCall
from dynavec_langgraph.agents.base import (
    AgentResult,
    AgentStep,
    AgentTool,
    Plan,
    PlanStep,
    interrupt,
    tool,
)
from dynavec_langgraph.agents.connectors import (
    create_http_tool,
    create_python_code_tool,
    mcp_tools_from_session,
    mcp_tools_from_session_async,
)
from dynavec_langgraph.agents.graph import (
    AgentGraph,
    BaseNode,
    Edge,
    FlowGraph,
    FlowState,
    FunctionNode,
    GraphCycleError,
    GraphError,
    GraphResult,
    GraphState,
    GraphValidationError,
    MaxIterationsExceededError,
    NodeTrace,
    append_reducer,
    default_reducer,
)
from dynavec_langgraph.agents.handoff import Handoff
from dynavec_langgraph.agents.planner import DEFAULT_PLANNER_SYSTEM_PROMPT, Planner
from dynavec_langgraph.agents.react import DEFAULT_REACT_SYSTEM_PROMPT, ReActAgent
from dynavec_langgraph.agents.registry import ToolRegistry, default_registry
from dynavec_langgraph.agents.state import AgentState
from dynavec_langgraph.agents.supervisor import AgentLike, Supervisor
from dynavec_langgraph.checkpoint import BaseCheckpointer, Checkpoint, MemoryCheckpointer
from dynavec_langgraph.dynamodb import DynamoDBCheckpointer
from dynavec_langgraph.exceptions import ApprovalTimeoutError, MissingDependencyError, NodeInterrupt

__all__ = [
    "DEFAULT_PLANNER_SYSTEM_PROMPT",
    "DEFAULT_REACT_SYSTEM_PROMPT",
    "AgentGraph",
    "AgentLike",
    "AgentResult",
    "AgentState",
    "AgentStep",
    "AgentTool",
    "ApprovalTimeoutError",
    "BaseCheckpointer",
    "BaseMemory",
    "BaseNode",
    "Checkpoint",
    "DynamoDBCheckpointer",
    "DynamoDBMemoryStore",
    "Edge",
    "FlowGraph",
    "FlowState",
    "FunctionNode",
    "GraphCycleError",
    "GraphError",
    "GraphResult",
    "GraphState",
    "GraphValidationError",
    "Handoff",
    "InMemoryMemoryStore",
    "MaxIterationsExceededError",
    "MemoryCheckpointer",
    "MemoryPolicy",
    "Message",
    "MissingDependencyError",
    "NodeInterrupt",
    "NodeTrace",
    "Plan",
    "PlanStep",
    "Planner",
    "ReActAgent",
    "SummaryMemoryPolicy",
    "Supervisor",
    "TokenBudgetMemoryPolicy",
    "ToolCall",
    "ToolRegistry",
    "WindowMemoryPolicy",
    "append_reducer",
    "create_http_tool",
    "create_python_code_tool",
    "default_reducer",
    "default_registry",
    "interrupt",
    "mcp_tools_from_session",
    "mcp_tools_from_session_async",
    "tool",
]
