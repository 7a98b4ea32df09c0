"""dynavec's human-in-the-loop ReAct agent as a prebuilt LangGraph subgraph.

Code written against ``dynavec.agents`` runs after::

    from dynavec_langgraph import ReActAgent, interrupt, tool
"""

from dynavec_langgraph._agent import ReActAgent
from dynavec_langgraph._create_agent import create_agent
from dynavec_langgraph._errors import (
    CheckpointerConfigError,
    CheckpointNotFoundError,
    ConcurrentResumeError,
    DamagedThreadError,
    DynavecError,
    InboxError,
    IncompatibleThreadError,
    InterruptCallError,
    InvalidDecisionError,
    InvalidInputError,
    NothingToResumeError,
    RemoteRunError,
    ServerUnavailableError,
    StorageError,
    ThreadPausedError,
)
from dynavec_langgraph._graph import ReActState, create_react_agent
from dynavec_langgraph._tools import AgentTool, tool
from dynavec_langgraph.checkpoint import BaseCheckpointer, Checkpoint, MemoryCheckpointer
from dynavec_langgraph.dynamodb import DynamoDBCheckpointer
from dynavec_langgraph.exceptions import ApprovalTimeoutError, MissingDependencyError, NodeInterrupt
from dynavec_langgraph.interrupt import InterruptValue, interrupt
from dynavec_langgraph.planner import Plan, Planner, PlanStep
from dynavec_langgraph.records import AgentResult, AgentState, AgentStep, Message, ToolCall
from dynavec_langgraph.registry import ToolRegistry, default_registry
from dynavec_langgraph.supervisor import AgentLike, Handoff, Supervisor

__all__ = [
    "AgentLike",
    "AgentResult",
    "AgentState",
    "AgentStep",
    "AgentTool",
    "ApprovalTimeoutError",
    "BaseCheckpointer",
    "Checkpoint",
    "CheckpointNotFoundError",
    "CheckpointerConfigError",
    "ConcurrentResumeError",
    "DamagedThreadError",
    "DynamoDBCheckpointer",
    "DynavecError",
    "Handoff",
    "InboxError",
    "IncompatibleThreadError",
    "InterruptCallError",
    "InterruptValue",
    "InvalidDecisionError",
    "InvalidInputError",
    "MemoryCheckpointer",
    "Message",
    "MissingDependencyError",
    "NodeInterrupt",
    "NothingToResumeError",
    "Plan",
    "PlanStep",
    "Planner",
    "ReActAgent",
    "ReActState",
    "RemoteRunError",
    "ServerUnavailableError",
    "StorageError",
    "Supervisor",
    "ThreadPausedError",
    "ToolCall",
    "ToolRegistry",
    "create_agent",
    "create_react_agent",
    "default_registry",
    "interrupt",
    "tool",
]
