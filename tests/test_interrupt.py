"""``interrupt(node_id, payload, *, response_schema=None)``: docs/compatibility.md §6, on
LangGraph."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from langgraph.types import Command
from pydantic import BaseModel
from typing_extensions import TypedDict

from dynavec_langgraph import AgentTool, InterruptCallError, create_react_agent, interrupt, tool
from dynavec_langgraph.exceptions import NodeInterrupt
from dynavec_langgraph.interrupt import first_asked
from dynavec_langgraph.testing import ScriptedChatModel
from tests.test_graph import SYNC_AND_ASYNC, assert_provider_valid, drive, thread


def _approval_tool(calls: Counter[str], decisions: list[Any], **interrupt_kw: Any) -> AgentTool:
    @tool
    def transfer_funds(amount: int) -> str:
        """Transfer money after a person approved it."""
        calls["started"] += 1
        decision = interrupt("approve_transfer", {"amount": amount}, **interrupt_kw)
        calls["decided"] += 1
        decisions.append(decision)
        return f"decision: {decision!r}"

    return transfer_funds


def _dynavec_keys(value: dict[str, Any]) -> dict[str, Any]:
    """The keys of dynavec's contract (the value also carries the approval UIs' keys)."""
    return {k: value[k] for k in ("node_id", "payload", "tool_call")}


def _agent(tool_: AgentTool, amount: int = 120) -> tuple[Any, ScriptedChatModel]:
    model = ScriptedChatModel(turns=[[{"name": tool_.name, "args": {"amount": amount}}], "Done."])
    return create_react_agent(model, [tool_], checkpointer=InMemorySaver()), model


def _check_model_calls(model: ScriptedChatModel) -> None:
    for received in model.calls:
        assert_provider_valid(received)


@SYNC_AND_ASYNC
async def test_interrupt_value_shape(use_async: bool) -> None:
    calls, decisions = Counter[str](), list[Any]()
    graph, model = _agent(_approval_tool(calls, decisions))
    out = await drive(graph, {"messages": [("user", "pay rent")]}, thread(), use_async)

    call = out["messages"][1].tool_calls[0]
    (pending,) = out["__interrupt__"]
    assert _dynavec_keys(pending.value) == {
        "node_id": "approve_transfer",
        "payload": {"amount": 120},
        "tool_call": {"id": call["id"], "name": "transfer_funds", "args": {"amount": 120}},
    }
    assert pending.value["error"] is None
    assert pending.response_schema is not None and "type" not in pending.response_schema  # any
    assert graph.get_state(thread()).interrupts == (pending,)
    # the pause is no observation: the paused call has no answer yet
    assert not [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert calls == Counter({"started": 1})
    assert len(model.calls) == 1

    out = await drive(graph, Command(resume="approved"), thread(), use_async)
    assert calls == Counter({"started": 2, "decided": 1})
    assert decisions == ["approved"]
    answers = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert [(m.tool_call_id, m.content) for m in answers] == [(call["id"], "decision: 'approved'")]
    assert out["messages"][-1].content == "Done."
    assert not graph.get_state(thread()).interrupts
    _check_model_calls(model)


async def test_interrupt_in_async_tool() -> None:
    calls = Counter[str]()

    @tool
    async def transfer_funds(amount: int) -> str:
        calls["started"] += 1
        decision = interrupt("approve_transfer", {"amount": amount})
        calls["decided"] += 1
        return f"async {decision}"

    graph, model = _agent(transfer_funds, amount=5)
    out = await graph.ainvoke({"messages": [("user", "pay")]}, thread())
    assert out["__interrupt__"][0].value["payload"] == {"amount": 5}
    assert calls == Counter({"started": 1})
    out = await graph.ainvoke(Command(resume="ok"), thread())
    assert [m.content for m in out["messages"] if isinstance(m, ToolMessage)] == ["async ok"]
    assert calls == Counter({"started": 2, "decided": 1})
    _check_model_calls(model)


@pytest.mark.parametrize(
    "payload",
    [object(), {"when": {1, 2}}, {"amount": math.nan}, b"bytes", {"nested": [AIMessage("x")]}],
    ids=["object", "set", "nan", "bytes", "message"],
)
def test_non_json_payload_raises_before_anything_is_saved(payload: Any) -> None:
    calls = Counter[str]()

    def ask(state: MessagesState) -> dict[str, Any]:
        calls["ask"] += 1
        interrupt("approve_odd", payload)
        calls["after"] += 1
        return {"messages": [("assistant", "never")]}

    builder = StateGraph(MessagesState)
    builder.add_node("ask", ask)
    builder.add_edge(START, "ask")
    builder.add_edge("ask", END)
    graph = builder.compile(checkpointer=InMemorySaver())
    with pytest.raises(TypeError, match="approve_odd") as raised:
        graph.invoke({"messages": [HumanMessage("hi")]}, thread())
    assert "JSON" in str(raised.value)
    snapshot = graph.get_state(thread())
    assert snapshot.interrupts == ()
    assert [m.content for m in snapshot.values["messages"]] == ["hi"]
    assert calls == Counter({"ask": 1})


@SYNC_AND_ASYNC
async def test_non_json_payload_in_a_tool_reaches_the_developer(use_async: bool) -> None:
    """A payload that cannot be stored is the tool's bug: ``InterruptCallError`` (a
    ``TypeError``) is raised to the caller, not shown to the model as an error observation
    with the run ending "completed". The steps before it stay saved."""
    calls = Counter[str]()

    @tool
    def transfer_funds(amount: int) -> str:
        calls["started"] += 1
        interrupt("approve_transfer", {"amount": amount, "currency": object()})
        calls["after"] += 1
        return "sent"

    graph, _model = _agent(transfer_funds)
    with pytest.raises(InterruptCallError) as raised:
        await drive(graph, {"messages": [("user", "pay")]}, thread(), use_async)
    assert isinstance(raised.value, TypeError)
    assert str(raised.value).startswith(
        "interrupt('approve_transfer'): the payload cannot be stored as JSON"
    )
    assert raised.value.field == "payload"
    snapshot = graph.get_state(thread())
    assert snapshot.interrupts == ()
    assert snapshot.next == ("tools",)  # the model's turn is saved, its call unanswered
    assert not [m for m in snapshot.values["messages"] if isinstance(m, ToolMessage)]
    assert calls == Counter({"started": 1})


@SYNC_AND_ASYNC
@pytest.mark.parametrize(
    "decision",
    [
        {"approved": True, "limits": {"max": 3, "tags": ["a", "b"]}},
        ["approve", 2],
        "approved",
        0,
        False,
    ],
    ids=["dict", "list", "str", "zero", "false"],
)
async def test_decision_is_returned_unchanged(decision: Any, use_async: bool) -> None:
    calls, decisions = Counter[str](), list[Any]()
    graph, model = _agent(_approval_tool(calls, decisions))
    await drive(graph, {"messages": [("user", "pay")]}, thread(), use_async)
    await drive(graph, Command(resume=decision), thread(), use_async)
    assert decisions == [decision]
    assert type(decisions[0]) is type(decision)
    assert calls == Counter({"started": 2, "decided": 1})
    _check_model_calls(model)


class PydanticDecision(BaseModel):
    approved: bool
    note: str = ""


class TypedDictDecision(TypedDict):
    approved: bool
    note: str


@dataclass
class DataclassDecision:
    approved: bool
    note: str = ""


@SYNC_AND_ASYNC
@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        (PydanticDecision, PydanticDecision(approved=True, note="ok")),
        (TypedDictDecision, TypedDictDecision(approved=True, note="ok")),
        (DataclassDecision, DataclassDecision(approved=True, note="ok")),
    ],
    ids=["pydantic", "typeddict", "dataclass"],
)
async def test_response_schema(schema: type[Any], expected: Any, use_async: bool) -> None:
    calls, decisions = Counter[str](), list[Any]()
    graph, model = _agent(_approval_tool(calls, decisions, response_schema=schema))
    out = await drive(graph, {"messages": [("user", "pay")]}, thread(), use_async)
    (pending,) = out["__interrupt__"]
    assert pending.value["node_id"] == "approve_transfer"
    json_schema = pending.response_schema
    assert isinstance(json_schema, dict)
    assert json_schema["type"] == "object"
    assert json_schema["properties"]["approved"]["type"] == "boolean"
    assert "approved" in json_schema["required"]

    # an invalid decision: the same approval is asked again, with the error; nothing ran
    out = await drive(graph, Command(resume={"approved": "perhaps"}), thread(), use_async)
    (again,) = graph.get_state(thread()).interrupts
    assert out["__interrupt__"] == [again]
    assert again.id != pending.id
    assert first_asked(again.value) == pending.value
    assert "'perhaps'" in again.value["error"] and "approved" in again.value["error"]
    assert again.response_schema == pending.response_schema
    assert calls["decided"] == 0
    assert decisions == []

    # ... and can be answered again
    out = await drive(graph, Command(resume={"approved": True, "note": "ok"}), thread(), use_async)
    assert decisions == [expected]
    assert type(decisions[0]) is type(expected)
    assert calls["decided"] == 1
    assert out["messages"][-1].content == "Done."
    assert not graph.get_state(thread()).interrupts
    _check_model_calls(model)


def test_interrupt_outside_a_graph() -> None:
    # dynavec's NodeInterrupt and message (docs/compatibility.md E1)
    with pytest.raises(RuntimeError, match=r"Execution interrupted at node 'approve' for thread"):
        interrupt("approve", {"amount": 1})

    # HITL v1: AgentTool.execute() lets NodeInterrupt through (docs/compatibility.md)
    calls, decisions = Counter[str](), list[Any]()
    transfer = _approval_tool(calls, decisions)
    with pytest.raises(NodeInterrupt, match="Awaiting human input") as raised:
        transfer.execute({"amount": 1})
    assert (raised.value.node_id, raised.value.payload) == ("approve_transfer", {"amount": 1})
    assert calls == Counter({"started": 1})


@pytest.mark.parametrize("node_id", ["", None, 3])
def test_interrupt_needs_a_node_id(node_id: Any) -> None:
    with pytest.raises(TypeError, match="node_id"):
        interrupt(node_id, {"amount": 1})


def _tool_node_graph(tool_: AgentTool, handle_tool_errors: Any) -> Any:
    builder = StateGraph(MessagesState)
    builder.add_node("tools", ToolNode([tool_], handle_tool_errors=handle_tool_errors))
    builder.add_edge(START, "tools")
    builder.add_edge("tools", END)
    return builder.compile(checkpointer=InMemorySaver())


@SYNC_AND_ASYNC
@pytest.mark.parametrize(
    "handle_tool_errors",
    [True, False, "tool failed", lambda error: f"handled: {error}"],
    ids=["true", "false", "text", "callable"],
)
async def test_interrupt_in_langgraph_tool_node(handle_tool_errors: Any, use_async: bool) -> None:
    calls, decisions = Counter[str](), list[Any]()
    graph = _tool_node_graph(_approval_tool(calls, decisions), handle_tool_errors)
    call_message = AIMessage(
        content="",
        tool_calls=[{"name": "transfer_funds", "args": {"amount": 9}, "id": "c1"}],
    )
    out = await drive(graph, {"messages": [call_message]}, thread(), use_async)
    (pending,) = out["__interrupt__"]
    assert _dynavec_keys(pending.value) == {
        "node_id": "approve_transfer",
        "payload": {"amount": 9},
        "tool_call": {"id": "c1", "name": "transfer_funds", "args": {"amount": 9}},
    }
    assert not [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert calls == Counter({"started": 1})

    out = await drive(graph, Command(resume={"ok": True}), thread(), use_async)
    answers = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert [(m.tool_call_id, m.content) for m in answers] == [("c1", "decision: {'ok': True}")]
    assert decisions == [{"ok": True}]
    assert calls == Counter({"started": 2, "decided": 1})
    assert_provider_valid(out["messages"])
