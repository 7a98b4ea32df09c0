"""dynavec's human-in-the-loop ReAct agent as a prebuilt LangGraph subgraph.

Code written against ``dynavec.agents`` runs after::

    from dynavec_langgraph import ReActAgent, interrupt, tool
"""

import importlib
import sys
import types
import typing

if typing.TYPE_CHECKING:
    from dynavec_langgraph._agent.agent import ReActAgent
    from dynavec_langgraph._dynavec.planner import Plan, Planner, PlanStep
    from dynavec_langgraph._dynavec.records import (
        AgentResult,
        AgentState,
        AgentStep,
        Message,
        ToolCall,
    )
    from dynavec_langgraph._dynavec.registry import ToolRegistry, default_registry
    from dynavec_langgraph._dynavec.supervisor import AgentLike, Handoff, Supervisor
    from dynavec_langgraph._errors import (
        ApprovalPolicyError,
        ApproverMismatchError,
        ApproverRefusedError,
        ApproverRequiredError,
        CheckpointerConfigError,
        CheckpointNotFoundError,
        ConcurrentResumeError,
        DamagedThreadError,
        DynavecError,
        InboxError,
        IncompatibleThreadError,
        InDoubtCallError,
        InterruptCallError,
        InvalidDecisionError,
        InvalidInputError,
        InvalidLinkError,
        InvalidOptionError,
        NothingToResumeError,
        RemoteRunError,
        ServerUnavailableError,
        StaleDecisionError,
        StorageError,
        ThreadAccessError,
        ThreadPausedError,
        ToolContextError,
        UnkeyedResumeError,
    )
    from dynavec_langgraph._exactly_once.keys import idempotency_key
    from dynavec_langgraph._graph.create_agent import create_agent
    from dynavec_langgraph._graph.factory import create_react_agent
    from dynavec_langgraph._graph.state import ReActState
    from dynavec_langgraph._pauses.policy.spec import ApprovalPolicy
    from dynavec_langgraph._tools.agent_tool import AgentTool, tool
    from dynavec_langgraph.checkpoint import BaseCheckpointer, Checkpoint, MemoryCheckpointer
    from dynavec_langgraph.dynamodb import DynamoDBCheckpointer
    from dynavec_langgraph.exceptions import (
        ApprovalTimeoutError,
        MissingDependencyError,
        NodeInterrupt,
    )
    from dynavec_langgraph.interrupt import InterruptValue, interrupt

__version__ = "0.1.0"
"""The package's version (``dynavec-langgraph --version``; pyproject.toml reads it from here)."""

# The names below are imported when first used (PEP 562), so that a command such as
# ``dynavec-langgraph --help`` starts without importing LangGraph; ``from dynavec_langgraph
# import X`` and ``dynavec_langgraph.X`` give the same objects as an eager import would.
_EXPORTS: dict[str, str] = {
    "AgentLike": "dynavec_langgraph._dynavec.supervisor",
    "AgentResult": "dynavec_langgraph._dynavec.records",
    "AgentState": "dynavec_langgraph._dynavec.records",
    "AgentStep": "dynavec_langgraph._dynavec.records",
    "AgentTool": "dynavec_langgraph._tools.agent_tool",
    "ApprovalPolicy": "dynavec_langgraph._pauses.policy.spec",
    "ApprovalPolicyError": "dynavec_langgraph._errors",
    "ApprovalTimeoutError": "dynavec_langgraph.exceptions",
    "ApproverMismatchError": "dynavec_langgraph._errors",
    "ApproverRefusedError": "dynavec_langgraph._errors",
    "ApproverRequiredError": "dynavec_langgraph._errors",
    "BaseCheckpointer": "dynavec_langgraph.checkpoint",
    "Checkpoint": "dynavec_langgraph.checkpoint",
    "CheckpointNotFoundError": "dynavec_langgraph._errors",
    "CheckpointerConfigError": "dynavec_langgraph._errors",
    "ConcurrentResumeError": "dynavec_langgraph._errors",
    "DamagedThreadError": "dynavec_langgraph._errors",
    "DynamoDBCheckpointer": "dynavec_langgraph.dynamodb",
    "DynavecError": "dynavec_langgraph._errors",
    "Handoff": "dynavec_langgraph._dynavec.supervisor",
    "InDoubtCallError": "dynavec_langgraph._errors",
    "InboxError": "dynavec_langgraph._errors",
    "IncompatibleThreadError": "dynavec_langgraph._errors",
    "InterruptCallError": "dynavec_langgraph._errors",
    "InterruptValue": "dynavec_langgraph.interrupt",
    "InvalidDecisionError": "dynavec_langgraph._errors",
    "InvalidInputError": "dynavec_langgraph._errors",
    "InvalidLinkError": "dynavec_langgraph._errors",
    "InvalidOptionError": "dynavec_langgraph._errors",
    "MemoryCheckpointer": "dynavec_langgraph.checkpoint",
    "Message": "dynavec_langgraph._dynavec.records",
    "MissingDependencyError": "dynavec_langgraph.exceptions",
    "NodeInterrupt": "dynavec_langgraph.exceptions",
    "NothingToResumeError": "dynavec_langgraph._errors",
    "Plan": "dynavec_langgraph._dynavec.planner",
    "PlanStep": "dynavec_langgraph._dynavec.planner",
    "Planner": "dynavec_langgraph._dynavec.planner",
    "ReActAgent": "dynavec_langgraph._agent.agent",
    "ReActState": "dynavec_langgraph._graph.state",
    "RemoteRunError": "dynavec_langgraph._errors",
    "ServerUnavailableError": "dynavec_langgraph._errors",
    "StaleDecisionError": "dynavec_langgraph._errors",
    "StorageError": "dynavec_langgraph._errors",
    "Supervisor": "dynavec_langgraph._dynavec.supervisor",
    "ThreadAccessError": "dynavec_langgraph._errors",
    "ThreadPausedError": "dynavec_langgraph._errors",
    "ToolContextError": "dynavec_langgraph._errors",
    "UnkeyedResumeError": "dynavec_langgraph._errors",
    "ToolCall": "dynavec_langgraph._dynavec.records",
    "ToolRegistry": "dynavec_langgraph._dynavec.registry",
    "create_agent": "dynavec_langgraph._graph.create_agent",
    "create_react_agent": "dynavec_langgraph._graph.factory",
    "default_registry": "dynavec_langgraph._dynavec.registry",
    "idempotency_key": "dynavec_langgraph._exactly_once.keys",
    "interrupt": "dynavec_langgraph.interrupt",
    "tool": "dynavec_langgraph._tools.agent_tool",
}


def __getattr__(name: str) -> typing.Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})


class _Package(types.ModuleType):
    """Keeps ``dynavec_langgraph.interrupt`` the function: importing the submodule
    ``dynavec_langgraph.interrupt`` sets the package's attribute of that name to the module
    (the import system does), which an eager ``from .interrupt import interrupt`` undid."""

    def __setattr__(self, name: str, value: typing.Any) -> None:
        if name == "interrupt" and isinstance(value, types.ModuleType):
            value = value.interrupt
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package

__all__ = [
    "AgentLike",
    "AgentResult",
    "AgentState",
    "AgentStep",
    "AgentTool",
    "ApprovalPolicy",
    "ApprovalPolicyError",
    "ApprovalTimeoutError",
    "ApproverMismatchError",
    "ApproverRefusedError",
    "ApproverRequiredError",
    "BaseCheckpointer",
    "Checkpoint",
    "CheckpointNotFoundError",
    "CheckpointerConfigError",
    "ConcurrentResumeError",
    "DamagedThreadError",
    "DynamoDBCheckpointer",
    "DynavecError",
    "Handoff",
    "InDoubtCallError",
    "InboxError",
    "IncompatibleThreadError",
    "InterruptCallError",
    "InterruptValue",
    "InvalidDecisionError",
    "InvalidInputError",
    "InvalidLinkError",
    "InvalidOptionError",
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
    "StaleDecisionError",
    "StorageError",
    "Supervisor",
    "ThreadAccessError",
    "ThreadPausedError",
    "ToolCall",
    "ToolContextError",
    "ToolRegistry",
    "UnkeyedResumeError",
    "create_agent",
    "create_react_agent",
    "default_registry",
    "idempotency_key",
    "interrupt",
    "tool",
]
