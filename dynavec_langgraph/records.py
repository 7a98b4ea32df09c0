"""dynavec's records: chat messages, steps, results and the shared agent state.

A checkpoint names these classes by this module (``dynavec_langgraph.records``), where they
are still found.

The code is in ``dynavec_langgraph._dynavec.records``; this module is its public import path.
"""

from dynavec_langgraph._dynavec.records import (
    AgentResult,
    AgentState,
    AgentStep,
    Message,
    Role,
    RoleName,
    TerminationReason,
    ToolCall,
    arguments_json,
)

__all__ = [
    "AgentResult",
    "AgentState",
    "AgentStep",
    "Message",
    "Role",
    "RoleName",
    "TerminationReason",
    "ToolCall",
    "arguments_json",
]
