"""Other dynavec behaviours users rely on (docs/compatibility.md F1-F3, E1-E5): dict
tool-call arguments from a dynavec model, the exception constructors and the exact strings
users match on."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any

import pytest

from dynavec_langgraph.agents import (
    AgentTool,
    MemoryCheckpointer,
    ReActAgent,
    ToolRegistry,
    interrupt,
    tool,
)
from dynavec_langgraph.chat import ChatModel, ChatResult, Message, Tool, ToolCall
from dynavec_langgraph.exceptions import (
    ApprovalTimeoutError,
    ConfigurationError,
    ConflictError,
    DimensionMismatchError,
    DynavecError,
    EmbeddingError,
    ItemTooLargeError,
    MissingDependencyError,
    NodeInterrupt,
    NotFoundError,
    ProvisioningError,
)

ADDED: list[tuple[int, int]] = []


@tool()
def add(a: int, b: int) -> int:
    """Add two numbers."""
    ADDED.append((a, b))
    return a + b


@tool()
def approve(amount: int) -> str:
    """Pay after approval."""
    return f"paid {amount}: {interrupt('approve_payment', {'amount': amount})}"


class DictArgumentsModel(ChatModel):
    """A HITL-fork style model: ``ToolCall.arguments`` is a dict, despite the annotation."""

    def __init__(self, calls: list[tuple[str, dict[str, Any]]]) -> None:
        super().__init__()
        self.calls = calls
        self.turn = 0
        self.seen: list[list[Message]] = []

    def invoke(
        self, messages: Sequence[Message], tools: Sequence[Tool] | None = None, **kwargs: Any
    ) -> ChatResult:
        self.seen.append(list(messages))
        self.turn += 1
        if self.turn == 1:
            calls = [
                ToolCall(f"c{i}", name, args)  # type: ignore[arg-type]
                for i, (name, args) in enumerate(self.calls)
            ]
            return ChatResult(Message("assistant", None, calls), "tool_calls")
        return ChatResult(Message("assistant", "done"), "stop")


def test_f1_dict_arguments_never_crash_the_run() -> None:
    ADDED.clear()
    store = MemoryCheckpointer()
    model = DictArgumentsModel([("add", {"a": 2, "b": 3}), ("add", {"a": 1, "b": 1})])
    result = ReActAgent(model, [add], checkpointer=store).run("add", thread_id="t")
    assert (result.output, result.termination_reason) == ("done", "completed")
    assert ADDED == [(2, 3), (1, 1)] and result.steps[0].observations == ["5", "2"]
    assert result.tool_calls_count == 2
    assert [c.name for c in result.steps[0].tool_calls] == ["add", "add"]
    # strings wherever a string is needed: the step records, the next model call, checkpoints
    assert json.loads(result.steps[0].tool_calls[0].arguments) == {"a": 2, "b": 3}
    assert json.loads(model.seen[1][2].tool_calls[0].arguments) == {"a": 2, "b": 3}
    saved = store.get("t")
    assert saved is not None
    stored = [c for m in saved.state["messages"] for c in m["tool_calls"]]
    assert [json.loads(c["arguments"]) for c in stored] == [{"a": 2, "b": 3}, {"a": 1, "b": 1}]


def test_f1_dict_arguments_async_and_across_a_pause() -> None:
    model = DictArgumentsModel([("approve", {"amount": 7})])
    agent = ReActAgent(model, [approve], checkpointer=MemoryCheckpointer())
    paused = asyncio.run(agent.arun("pay", thread_id="p"))
    assert paused.termination_reason == "interrupted"
    assert paused.interrupt_payload is not None
    assert paused.interrupt_payload["payload"] == {"amount": 7}
    done = agent.resume(thread_id="p", human_decision="ok")
    assert done.steps[0].observations == ["paid 7: ok"] and done.output == "done"


def test_f2_a_tool_and_the_registry_take_dict_arguments_as_they_are() -> None:
    assert add.execute({"a": 1, "b": 2}) == "3"
    registry = ToolRegistry()
    registry.register(add)
    assert registry.execute("add", {"a": 4, "b": 4}) == "8"


def test_e1_node_interrupt() -> None:
    error = NodeInterrupt("t1", "approval_node", {"x": 1})
    assert (error.thread_id, error.node_id, error.payload) == ("t1", "approval_node", {"x": 1})
    assert str(error) == (
        "Execution interrupted at node 'approval_node' for thread 't1'. Awaiting human input."
    )
    assert NodeInterrupt("t1", "n").payload == {}  # payload or {}
    assert isinstance(error, DynavecError) and isinstance(error, RuntimeError)

    @tool
    def legacy() -> str:
        return str(interrupt("approve_it", "the text"))

    with pytest.raises(NodeInterrupt) as raised:
        legacy.execute({})
    assert (raised.value.node_id, raised.value.payload, raised.value.thread_id) == (
        "approve_it", "the text", None,
    )  # fmt: skip


def test_e2_approval_timeout_error() -> None:
    error = ApprovalTimeoutError("t1", "approve", 30)
    assert (error.thread_id, error.node_id, error.timeout_seconds) == ("t1", "approve", 30)
    assert str(error) == (
        "Approval request at node 'approve' for thread 't1' timed out after 30 seconds."
    )
    assert isinstance(error, DynavecError) and isinstance(error, TimeoutError)
    assert str(ApprovalTimeoutError("no decision")) == "no decision"


def test_e3_missing_dependency_error() -> None:
    error = MissingDependencyError("DynamoDBMemoryStore", "boto3", "dynamodb")
    assert (error.feature, error.package, error.extra) == (
        "DynamoDBMemoryStore",
        "boto3",
        "dynamodb",
    )
    assert str(error) == (
        "DynamoDBMemoryStore requires the 'boto3' package. Install it with:  "
        "pip install 'dynavec-langgraph[dynamodb]'"
    )
    assert isinstance(error, ImportError) and isinstance(error, DynavecError)


def test_e4_the_other_dynavec_exception_names() -> None:
    for name in (
        ConfigurationError, ProvisioningError, EmbeddingError, DimensionMismatchError,
        NotFoundError, ItemTooLargeError, ConflictError,
    ):  # fmt: skip
        assert issubclass(name, DynavecError)
    big = ItemTooLargeError("d1", "ns", 500, 400)
    assert (big.doc_id, big.namespace, big.size_bytes, big.limit_bytes) == ("d1", "ns", 500, 400)
    conflict = ConflictError("d1", "ns", 3)
    assert (conflict.doc_id, conflict.namespace, conflict.expected_version) == ("d1", "ns", 3)
    raised = ConfigurationError("bad setting")
    assert str(raised) == "bad setting" and isinstance(raised, ValueError)


class OneCall(ChatModel):
    def __init__(self, name: str, args: str = "{}") -> None:
        super().__init__()
        self.name, self.args, self.turn = name, args, 0

    def invoke(
        self, messages: Sequence[Message], tools: Sequence[Tool] | None = None, **kwargs: Any
    ) -> ChatResult:
        self.turn += 1
        if self.turn == 1:
            return ChatResult(Message("assistant", None, [ToolCall("c1", self.name, self.args)]))
        return ChatResult(Message("assistant", "ok"))


def test_e5_strings_users_match_on() -> None:
    @tool
    def broken(x: int) -> str:
        raise ValueError(f"no luck with {x}")

    @tool
    async def slow() -> str:
        return "later"

    ran = ReActAgent(OneCall("broken", '{"x": 3}'), [broken]).run("go")
    assert ran.steps[0].observations == ["Error executing tool 'broken': no luck with 3"]
    unknown = ReActAgent(OneCall("nope"), [broken]).run("go")
    assert unknown.steps[0].observations == [
        "Error: Tool 'nope' is not registered in available tools."
    ]
    assert ToolRegistry().execute("nope") == "Error: Tool 'nope' is not registered."

    async def in_a_loop() -> str:
        return slow.execute({})

    assert asyncio.run(in_a_loop()) == (
        "Error: Cannot execute async tool 'slow' synchronously in a running event loop."
    )
    paused = ReActAgent(OneCall("approve", '{"amount": 5}'), [approve]).run("pay")
    assert paused.output == "Execution interrupted at node 'approve_payment'"
    assert isinstance(broken, AgentTool)


def test_e6_the_default_react_prompt_is_dynavecs_four_lines() -> None:
    from dynavec_langgraph.agents import DEFAULT_REACT_SYSTEM_PROMPT as from_agents
    from dynavec_langgraph.agents.react import DEFAULT_REACT_SYSTEM_PROMPT

    assert from_agents is DEFAULT_REACT_SYSTEM_PROMPT
    lines = DEFAULT_REACT_SYSTEM_PROMPT.split("\n")
    assert len(lines) == 4 and all(line.strip() == line and line for line in lines)
    assert lines[0] == "You are a helpful and precise reasoning agent."

    model = DictArgumentsModel([])
    result = ReActAgent(model, [add]).run("hi")
    assert result.termination_reason == "completed"
    # used verbatim as the default system message
    assert model.seen[0][0] == Message("system", DEFAULT_REACT_SYSTEM_PROMPT)
    assert model.seen[0][0].content == DEFAULT_REACT_SYSTEM_PROMPT
