"""The public API: ``__all__`` is complete and sorted, the error tree is the documented one,
and the public names have the types a user's type checker sees (``assert_type`` lines are
checked by ``mypy --strict``; the tests also run them)."""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import json
import re
from collections.abc import Callable
from itertools import pairwise
from pathlib import Path
from typing import Any, Literal, assert_type

import pytest
from langgraph.graph.state import CompiledStateGraph
from pydantic import BaseModel

import dynavec_langgraph
from dynavec_langgraph import (
    AgentResult,
    AgentState,
    AgentStep,
    AgentTool,
    ApprovalPolicyError,
    ApproverMismatchError,
    ApproverRefusedError,
    ApproverRequiredError,
    BaseCheckpointer,
    Checkpoint,
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
    MemoryCheckpointer,
    Message,
    NothingToResumeError,
    ReActAgent,
    RemoteRunError,
    ServerUnavailableError,
    StaleDecisionError,
    StorageError,
    ThreadAccessError,
    ThreadPausedError,
    ToolCall,
    ToolContextError,
    UnkeyedResumeError,
    interrupt,
    tool,
)
from dynavec_langgraph.chat import Role
from dynavec_langgraph.testing import ScriptedChatModel

PACKAGE = Path(dynavec_langgraph.__file__).parent

DYNAVEC_NAMES = {
    "ReActAgent",
    "interrupt",
    "tool",
    "AgentTool",
    "AgentResult",
    "AgentStep",
    "AgentState",
    "Checkpoint",
    "BaseCheckpointer",
    "MemoryCheckpointer",
    "Message",
    "ToolCall",
}
"""dynavec.agents' names (docs/compatibility.md N1), without the ones dynavec marks optional."""

ERRORS: dict[type[DynavecError], type[Exception]] = {
    ThreadPausedError: RuntimeError,
    ConcurrentResumeError: RuntimeError,
    NothingToResumeError: ValueError,
    InvalidDecisionError: ValueError,
    ApproverRefusedError: ValueError,
    ApproverRequiredError: ValueError,
    ApproverMismatchError: ValueError,
    IncompatibleThreadError: ValueError,
    StaleDecisionError: ValueError,
    InvalidLinkError: ValueError,
    UnkeyedResumeError: ValueError,
    InvalidInputError: ValueError,
    InterruptCallError: TypeError,
    InvalidOptionError: ValueError,
    CheckpointNotFoundError: ValueError,
    CheckpointerConfigError: ValueError,
    StorageError: RuntimeError,
    DamagedThreadError: RuntimeError,
    InboxError: ValueError,
    ServerUnavailableError: ConnectionError,
    RemoteRunError: RuntimeError,
    ThreadAccessError: PermissionError,
    InDoubtCallError: RuntimeError,
    ApprovalPolicyError: RuntimeError,
    ToolContextError: RuntimeError,
}
"""The tree drawn in ``dynavec_langgraph._errors``' docstring."""


def test_all_is_sorted() -> None:
    assert dynavec_langgraph.__all__ == sorted(dynavec_langgraph.__all__)
    assert len(set(dynavec_langgraph.__all__)) == len(dynavec_langgraph.__all__)


def test_all_is_complete() -> None:
    exported = set(dynavec_langgraph.__all__)
    assert exported >= DYNAVEC_NAMES
    assert exported >= {e.__name__ for e in ERRORS} | {"DynavecError"}
    public = {  # dir(): the names are imported on first use (dynavec_langgraph/__init__.py)
        name
        for name in dir(dynavec_langgraph)
        if not name.startswith("_") and not inspect.ismodule(getattr(dynavec_langgraph, name))
    }
    assert public == exported
    for name in exported:
        assert getattr(dynavec_langgraph, name) is not None


def test_error_tree_matches_the_errors_module_docs() -> None:
    import dynavec_langgraph._errors as errors

    doc = errors.__doc__ or ""
    for error, builtin in ERRORS.items():
        assert issubclass(error, DynavecError) and issubclass(error, builtin)
        assert f"{error.__name__}({builtin.__name__})" in doc
    assert issubclass(DynavecError, Exception)
    assert set(errors.__all__) == {e.__name__ for e in ERRORS} | {"DynavecError"}
    assert issubclass(InvalidOptionError, TypeError)  # also the builtin of a wrong type
    assert "also a TypeError" in doc
    assert not issubclass(ApproverRequiredError, StaleDecisionError | ApproverRefusedError)
    assert issubclass(UnkeyedResumeError, RuntimeError)  # the class LangGraph raises for it


def test_thread_paused_error_says_what_to_do() -> None:
    error = ThreadPausedError("t1", ["approve_transfer"])
    assert (error.thread_id, error.node_ids) == ("t1", ["approve_transfer"])
    assert "'approve_transfer'" in str(error) and "resume(thread_id='t1'" in str(error)
    with pytest.raises(RuntimeError):
        raise error


# --- types, as a user's type checker sees them --------------------------------------------


class Approval(BaseModel):
    approved: bool
    note: str = ""


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@tool("double_it", description="Double a number.")
def double(x: int) -> int:
    return 2 * x


@tool()
def approve_payment(amount: int, state: AgentState) -> str:
    """Pay after a typed approval."""
    decision = interrupt("approve_payment", {"amount": amount}, response_schema=Approval)
    assert_type(decision, Approval)
    assert isinstance(decision, Approval)
    state.data["note"] = decision.note
    return f"paid {amount}" if decision.approved else "not paid"


@tool
def ask(question: str) -> str:
    """Ask a person."""
    answer = interrupt("ask", {"question": question})
    assert_type(answer, Any)
    return str(answer)


def _add_one(x: int) -> int:
    return x + 1


def test_tool_types() -> None:
    assert_type(tool("pay", on_crash="ask"), Callable[[Callable[..., Any]], AgentTool])
    assert_type(add, AgentTool)
    assert_type(double, AgentTool)
    assert_type(tool(_add_one), AgentTool)
    assert_type(tool("inc"), Callable[[Callable[..., Any]], AgentTool])
    assert_type(tool()(_add_one), AgentTool)
    assert_type(add.name, str)
    assert_type(add.description, str)
    assert_type(add.parameters, dict[str, Any])
    assert_type(add.execute({"a": 1, "b": 2}), str)
    assert add.execute({"a": 1, "b": 2}) == "3"
    assert add(3, 4) == 7
    assert double.name == "double_it" and double.description == "Double a number."
    assert "state" not in approve_payment.parameters["properties"]


def test_record_types() -> None:
    call = ToolCall("c1", "add", '{"a": 1}')
    assert_type(call.arguments, str)
    message = Message("assistant", None, [call])
    assert_type(message.role, Role | Literal["system", "user", "assistant", "tool"])
    assert_type(message.content, str | None)
    assert_type(message.tool_calls, list[ToolCall])
    assert_type(message.tool_call_id, str | None)
    step = AgentStep(1, "thinking", [call], ["1"])
    assert_type(step.observations, list[str])
    assert_type(step.thought, str | None)
    assert_type(AgentState().data, dict[str, Any])
    assert AgentState().data is not AgentState().data


def test_agent_types() -> None:
    model = ScriptedChatModel(turns=[[{"name": "add", "args": {"a": 1, "b": 2}}], "3"])
    agent = ReActAgent(model, [add], system_prompt="", max_steps=3)
    result = agent.run("1 + 2?", thread_id="types", temperature=0)
    assert_type(result, AgentResult)
    assert_type(result.output, str)
    assert_type(result.steps, list[AgentStep])
    assert_type(result.finished, bool)
    assert_type(result.termination_reason, Literal["completed", "max_steps_reached", "interrupted"])
    assert_type(result.total_steps, int)
    assert_type(result.tool_calls_count, int)
    assert_type(result.interrupt_payload, dict[str, Any] | None)
    assert (result.output, result.tool_calls_count) == ("3", 1)


def test_resume_types_with_a_typed_decision() -> None:
    model = ScriptedChatModel(turns=[[{"name": "approve_payment", "args": {"amount": 5}}], "ok"])
    agent = ReActAgent(model, [approve_payment])
    state = AgentState()
    paused = agent.run("pay 5", state=state)
    assert paused.interrupt_payload is not None
    final = agent.resume(
        thread_id=paused.interrupt_payload["thread_id"],
        human_decision={"approved": True, "note": "fine"},
        state=state,
    )
    assert_type(final, AgentResult)
    assert final.steps[0].observations == ["paid 5"]
    assert state.data == {"note": "fine"}


async def test_async_agent_types() -> None:
    model = ScriptedChatModel(turns=[[{"name": "ask", "args": {"question": "why?"}}], "ok"])
    agent = ReActAgent(model, [ask])
    paused = await agent.arun("ask")
    assert_type(paused, AgentResult)
    assert paused.interrupt_payload is not None
    saved = paused.interrupt_payload["messages"]
    final = await agent.aresume(saved, human_decision="because", start_step=1)
    assert_type(final, AgentResult)
    assert final.steps[0].observations == ["because"]


def test_create_agent_has_langchains_signature() -> None:
    """``dynavec_langgraph.create_agent`` takes exactly what the installed
    ``langchain.agents.create_agent`` takes, with its defaults, kinds and order."""
    from langchain.agents import create_agent as reference

    ours = inspect.signature(dynavec_langgraph.create_agent).parameters
    theirs = inspect.signature(reference).parameters
    assert [(p.name, p.kind, p.default) for p in ours.values()] == [
        (p.name, p.kind, p.default) for p in theirs.values()
    ]
    assert_type(
        dynavec_langgraph.create_agent(ScriptedChatModel(turns=["hi"])),
        CompiledStateGraph[Any, Any, Any, Any],
    )


def test_checkpoint_types() -> None:
    store = MemoryCheckpointer()
    assert_type(store, MemoryCheckpointer)
    assert isinstance(store, BaseCheckpointer)
    first = store.put("t1", {"goal": "hi"}, node_id="init")
    assert_type(first, Checkpoint)
    assert_type(store.get("t1"), Checkpoint | None)
    assert_type(store.list("t1", limit=1), list[Checkpoint])
    assert_type(first.to_dict(), dict[str, Any])
    assert_type(Checkpoint.from_dict(first.to_dict()), Checkpoint)
    assert Checkpoint.from_dict(first.to_dict()) == first
    assert first.checkpoint_id.startswith("cp_")


PUBLIC_API: dict[str, list[str]] = {  # the public modules; the rest is private (_name.py)
    "dynavec_langgraph": [
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
    ],
    "dynavec_langgraph.agents": [
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
    ],
    "dynavec_langgraph.agents.base": [
        "AgentResult",
        "AgentStep",
        "AgentTool",
        "Plan",
        "PlanStep",
        "interrupt",
        "tool",
    ],
    "dynavec_langgraph.agents.connectors": [
        "create_http_tool",
        "create_python_code_tool",
        "mcp_tools_from_session",
        "mcp_tools_from_session_async",
    ],
    "dynavec_langgraph.agents.graph": [
        "AgentGraph",
        "AgentState",
        "BaseNode",
        "Edge",
        "FlowGraph",
        "FlowState",
        "FunctionNode",
        "GraphCycleError",
        "GraphError",
        "GraphResult",
        "GraphState",
        "GraphValidationError",
        "MaxIterationsExceededError",
        "NodeTrace",
        "ReducerFn",
        "append_reducer",
        "default_reducer",
        "safe_eval_expr",
    ],
    "dynavec_langgraph.agents.handoff": ["Handoff"],
    "dynavec_langgraph.agents.planner": ["DEFAULT_PLANNER_SYSTEM_PROMPT", "Planner"],
    "dynavec_langgraph.agents.react": ["DEFAULT_REACT_SYSTEM_PROMPT", "ReActAgent"],
    "dynavec_langgraph.agents.registry": ["ToolRegistry", "default_registry"],
    "dynavec_langgraph.agents.state": ["AgentState"],
    "dynavec_langgraph.agents.supervisor": ["AgentLike", "Supervisor"],
    "dynavec_langgraph.approval": [
        "EDIT_NOTICE",
        "EXPIRE",
        "ApprovalEvent",
        "ApprovalPolicy",
        "ApproverMismatchError",
        "ApproverRefusedError",
        "ApproverRequiredError",
        "add_approval_listener",
        "approver_decision",
        "edit_notice",
        "require_approval",
    ],
    "dynavec_langgraph.chat": [
        "AnthropicChatModel",
        "BedrockChatModel",
        "ChatChunk",
        "ChatModel",
        "ChatResult",
        "Message",
        "OpenAIChatModel",
        "Role",
        "Tool",
        "ToolCall",
    ],
    "dynavec_langgraph.chat.anthropic": ["AnthropicChatModel"],
    "dynavec_langgraph.chat.base": [
        "ChatChunk",
        "ChatModel",
        "ChatResult",
        "Message",
        "Role",
        "Tool",
        "ToolCall",
    ],
    "dynavec_langgraph.chat.bedrock": ["BedrockChatModel"],
    "dynavec_langgraph.chat.openai": ["OpenAIChatModel"],
    "dynavec_langgraph.checkpoint": [
        "BaseCheckpointer",
        "Checkpoint",
        "MemoryCheckpointer",
        "dynavec_view",
        "is_step_boundary",
    ],
    "dynavec_langgraph.demo": [
        "DEFAULT_OPENAI_MODEL",
        "LEDGER_ENV",
        "TransferDecision",
        "create_demo_agent",
        "demo_model",
        "demo_policy",
        "get_balance",
        "transfer_funds",
    ],
    "dynavec_langgraph.agui": [
        "AGUI_PROTOCOL_VERSION",
        "Approver",
        "approver_from_metadata",
        "create_agui_app",
        "interrupt_outcome",
        "stream_run",
    ],
    "dynavec_langgraph.connectors": [
        "create_http_tool",
        "create_python_code_tool",
        "mcp_tools_from_session",
        "mcp_tools_from_session_async",
    ],
    "dynavec_langgraph.dynamodb": [
        "INLINE_LIMIT",
        "PIECE_SIZE",
        "SCHEME",
        "DynamoDBCheckpointer",
        "from_url",
    ],
    "dynavec_langgraph.events": [
        "STREAM_MODES",
        "AgentEvent",
        "InterruptEvent",
        "ResultEvent",
        "TokenEvent",
        "ToolCallEvent",
        "ToolResultEvent",
        "events_from_chunk",
    ],
    "dynavec_langgraph.exceptions": [
        "ApprovalTimeoutError",
        "CheckpointNotFoundError",
        "CheckpointerConfigError",
        "ConcurrentResumeError",
        "ConfigurationError",
        "ConflictError",
        "DimensionMismatchError",
        "DynavecError",
        "EmbeddingError",
        "InvalidDecisionError",
        "ItemTooLargeError",
        "MissingDependencyError",
        "NodeInterrupt",
        "NotFoundError",
        "NothingToResumeError",
        "ProvisioningError",
        "ThreadPausedError",
    ],
    "dynavec_langgraph.links": [
        "LINK_KEYS_ENV",
        "InvalidLinkError",
        "LinkClaims",
        "LinkKeys",
        "approval_links",
        "create_app",
        "verify_link",
    ],
    "dynavec_langgraph.interrupt": [
        "InterruptValue",
        "Rejected",
        "ToolCallRef",
        "UnappliedResumeWarning",
        "bind_decision",
        "compute_review_digest",
        "decision_digest",
        "describe_pending",
        "first_asked",
        "interrupt",
        "pause_value",
        "refusal_note",
        "resume_command",
        "review_digest",
    ],
    "dynavec_langgraph.memory": [
        "BaseMemory",
        "DynamoDBMemoryStore",
        "InMemoryMemoryStore",
        "MemoryPolicy",
        "SummaryMemoryPolicy",
        "TokenBudgetMemoryPolicy",
        "WindowMemoryPolicy",
        "default_token_counter",
        "dict_to_message",
        "message_to_dict",
    ],
    "dynavec_langgraph.audit": [
        "APPROVER_KEY",
        "AUDIT_KEY",
        "GENESIS",
        "NOTIFY_KEY",
        "SURFACE_KEY",
        "AuditEvent",
        "Delivery",
        "ThreadTrail",
        "TrailProblem",
        "TrailReport",
        "aaudit_trail",
        "arecord",
        "audit_trail",
        "deliver",
        "enqueue",
        "entry_hash",
        "notification_body",
        "outbox",
        "record",
        "verify",
        "wait_for_deliveries",
    ],
    "dynavec_langgraph.planner": [
        "DEFAULT_PLANNER_PROMPT",
        "DEFAULT_PLANNER_SYSTEM_PROMPT",
        "Plan",
        "PlanStep",
        "Planner",
        "parse_plan",
        "planning_messages",
    ],
    "dynavec_langgraph.records": [
        "AgentResult",
        "AgentState",
        "AgentStep",
        "Message",
        "Role",
        "RoleName",
        "TerminationReason",
        "ToolCall",
        "arguments_json",
    ],
    "dynavec_langgraph.registry": ["ToolRegistry", "default_registry", "unregistered_observation"],
    "dynavec_langgraph.remote": [
        "DEFAULT_TIMEOUT",
        "RemoteReActAgent",
        "RemoteRunError",
        "ServerUnavailableError",
        "ThreadAccessError",
        "reports_strict_resume",
        "server_thread_id",
    ],
    "dynavec_langgraph.savers": [
        "ConnectionSaver",
        "describe_storage",
        "dynamodb_options",
        "is_storage_error",
        "masked_url",
        "parse_database_url",
        "resolve_checkpointer",
        "safe_serializer",
        "sqlite_url",
    ],
    "dynavec_langgraph.studio": ["flow", "graph"],
    "dynavec_langgraph.supervisor": [
        "AgentLike",
        "Handoff",
        "HandoffRecord",
        "HandoffSupervisor",
        "ResumableAgent",
        "Supervisor",
        "default_handoff",
    ],
    "dynavec_langgraph.temporal": [
        "AgentFactory",
        "Outcome",
        "Pause",
        "TemporalAgent",
        "ThreadStatus",
        "ThreadWorkflow",
        "create_worker",
        "load_agent",
        "run_worker",
        "temporal_cli",
        "workflow_id",
    ],
    "dynavec_langgraph.testing": ["ScriptedChatModel", "Turn"],
}
"""Every module"s ``__all__``, pinned: a change to the public API is a change to this test."""


def _module_name(path: Path) -> str:
    """``dynavec_langgraph.x.y`` for ``PACKAGE/x/y.py`` (a package's ``__init__`` is ``x``)."""
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_public(path: Path) -> bool:
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return not any(p.startswith("_") and p != "__init__" for p in parts)


@functools.cache
def _attribute_docs() -> frozenset[str]:
    """Module-level names followed by a docstring (``NAME = ...`` then ``\"\"\"...\"\"\"``)."""
    out: set[str] = set()
    for path in PACKAGE.rglob("*.py"):
        body = ast.parse(path.read_text()).body
        for node, after in pairwise(body):
            if not (isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)):
                continue
            if isinstance(node, ast.Assign):
                out |= {t.id for t in node.targets if isinstance(t, ast.Name)}
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                out.add(node.target.id)
    return frozenset(out)


def test_the_public_modules_and_their_names_are_pinned() -> None:
    """The public modules are exactly those pinned here; every other module is private
    (``_name.py``, the convention of httpx and pydantic-ai) and may change without notice."""
    public = sorted(_module_name(p) for p in PACKAGE.rglob("*.py") if _is_public(p))
    assert sorted(PUBLIC_API) == public
    for name in public:
        exported = getattr(importlib.import_module(name), "__all__", None)
        assert exported == PUBLIC_API[name], name
    private = [p for p in PACKAGE.rglob("*.py") if not _is_public(p)]
    assert len(private) >= 15  # the implementation lives there (``_name.py``, ``_folder/``)


def _documented_imports() -> list[tuple[str, list[str]]]:
    """``(module, names)`` of every ``from dynavec_langgraph... import ...`` in the README,
    docs/ and the notebooks."""
    root = PACKAGE.parent
    texts = [root.joinpath("README.md").read_text()]
    texts += [p.read_text() for p in sorted(root.joinpath("docs").glob("*.md"))]
    for nb in sorted(root.joinpath("notebooks").glob("*.ipynb")):
        cells = json.loads(nb.read_text())["cells"]
        texts += ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
    found: list[tuple[str, list[str]]] = []
    pattern = re.compile(r"from (dynavec_langgraph(?:\.\w+)*) import \(?([\w, \n]+)\)?")
    for text in texts:
        for module, names in pattern.findall(text):
            imported = [n.split()[0] for n in names.replace("\n", " ").split(",") if n.strip()]
            found.append((module, imported))
    return found


def test_every_import_path_the_docs_and_notebooks_use_works() -> None:
    """Old import paths keep working where the README, docs/ or a notebook used them."""
    found = _documented_imports()
    assert len(found) > 10
    for module, names in found:
        mod = importlib.import_module(module)
        assert not module.split(".")[-1].startswith("_"), module  # docs show public paths
        for name in names:
            assert hasattr(mod, name), f"{module}.{name}"


@pytest.mark.parametrize("module", sorted(PUBLIC_API))
def test_every_public_name_is_documented(module: str) -> None:
    mod = importlib.import_module(module)
    assert (mod.__doc__ or "").strip(), module
    documented = _attribute_docs()
    undocumented = []
    for name in PUBLIC_API[module]:
        value = getattr(mod, name)
        if inspect.isclass(value) or inspect.isroutine(value):
            ok = bool((value.__doc__ or "").strip())
        elif isinstance(value, AgentTool):
            ok = bool(value.description.strip())
        else:
            ok = name in documented
        if not ok:
            undocumented.append(name)
    assert undocumented == []
