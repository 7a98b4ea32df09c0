"""dynavec's human-in-the-loop ReAct agent as a prebuilt LangGraph subgraph.

Code written against ``dynavec.agents`` runs after::

    from dynavec_langgraph import ReActAgent, interrupt, tool
"""

from dynavec_langgraph.agent import ReActAgent
from dynavec_langgraph.checkpoint import BaseCheckpointer, Checkpoint, MemoryCheckpointer
from dynavec_langgraph.errors import (
    CheckpointerConfigError,
    CheckpointNotFoundError,
    ConcurrentResumeError,
    DynavecError,
    InvalidDecisionError,
    NothingToResumeError,
    StorageError,
    ThreadPausedError,
)
from dynavec_langgraph.graph import ReActState, create_react_agent
from dynavec_langgraph.interrupt import InterruptValue, interrupt
from dynavec_langgraph.records import AgentResult, AgentState, AgentStep, Message, ToolCall
from dynavec_langgraph.tools import AgentTool, tool

__all__ = [
    "AgentResult",
    "AgentState",
    "AgentStep",
    "AgentTool",
    "BaseCheckpointer",
    "Checkpoint",
    "CheckpointNotFoundError",
    "CheckpointerConfigError",
    "ConcurrentResumeError",
    "DynavecError",
    "InterruptValue",
    "InvalidDecisionError",
    "MemoryCheckpointer",
    "Message",
    "NothingToResumeError",
    "ReActAgent",
    "ReActState",
    "StorageError",
    "ThreadPausedError",
    "ToolCall",
    "create_react_agent",
    "interrupt",
    "tool",
]
