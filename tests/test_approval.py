"""require_approval: LangChain's per-call tool_approval decisions and Agent Inbox responses."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import BaseMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from dynavec_langgraph import ReActAgent, create_react_agent, tool
from dynavec_langgraph._pauses.approval import normalize_decision
from dynavec_langgraph.approval import edit_notice, require_approval
from dynavec_langgraph.testing import ScriptedChatModel
from tests.review import same_ask_again

SENT: list[tuple[str, str]] = []


@tool
def send_email(to: str, body: str) -> str:
    """Send an email."""
    SENT.append((to, body))
    return f"sent to {to}"


def _policy(messages: list[BaseMessage]) -> Any:
    if isinstance(messages[-1], ToolMessage):
        return f"done: {messages[-1].content}"
    return [{"name": "send_email", "args": {"to": "a@x.org", "body": "hi"}}]


def _graph(**kw: Any) -> Any:
    gated = require_approval(send_email, **kw)
    model = ScriptedChatModel(policy=_policy)
    return create_react_agent(model, [gated], checkpointer=InMemorySaver())


@pytest.fixture(autouse=True)
def _clear() -> None:
    SENT.clear()


EDITED = {"to": "b@x.org", "body": "edited"}
CASES: list[tuple[Any, str, list[tuple[str, str]]]] = [
    ({"type": "approve"}, "sent to a@x.org", [("a@x.org", "hi")]),
    (
        {"type": "edit", "edited_action": {"name": "send_email", "args": EDITED}},
        edit_notice("send_email", EDITED, "sent to b@x.org"),
        [("b@x.org", "edited")],
    ),
    (
        {"type": "reject", "message": "not now"},
        "User rejected the tool call for `send_email` with reason: not now",
        [],
    ),
    ({"type": "respond", "message": "the reviewer says 42"}, "the reviewer says 42", []),
    # Agent Inbox sends a list with one HumanResponse
    ([{"type": "accept", "args": None}], "sent to a@x.org", [("a@x.org", "hi")]),
    (
        [{"type": "edit", "args": {"action": "send_email", "args": EDITED}}],
        edit_notice("send_email", EDITED, "sent to b@x.org"),  # the model is told
        [("b@x.org", "edited")],
    ),
    ([{"type": "response", "args": "typed by a person"}], "typed by a person", []),
    # LangChain 1.0 HITL (the current Agent Chat UI): one decision per action under review
    ({"decisions": [{"type": "approve"}]}, "sent to a@x.org", [("a@x.org", "hi")]),
    (
        {"decisions": [{"type": "edit", "edited_action": {"name": "send_email", "args": EDITED}}]},
        edit_notice("send_email", EDITED, "sent to b@x.org"),
        [("b@x.org", "edited")],
    ),
    (
        {"decisions": [{"type": "reject", "message": "not now"}]},
        "User rejected the tool call for `send_email` with reason: not now",
        [],
    ),
    # dynavec's plain values
    ("approved", "sent to a@x.org", [("a@x.org", "hi")]),
    (
        "rejected",
        "User rejected the tool call for `send_email`. The tool was not executed. "
        "Do not retry this tool call unless the user explicitly requests it.",
        [],
    ),
]


@pytest.mark.parametrize(("decision", "observation", "sent"), CASES)
def test_decisions_from_both_ui_formats(
    decision: Any, observation: str, sent: list[tuple[str, str]]
) -> None:
    graph = _graph()
    cfg: Any = {"configurable": {"thread_id": "t"}}
    paused = graph.invoke({"messages": [("user", "mail a")]}, cfg)
    assert SENT == []
    out = graph.invoke(Command(resume=decision), cfg)
    assert out["messages"][-2].content == observation
    assert out["messages"][-1].content == f"done: {observation}"
    assert sent == SENT
    assert paused["__interrupt__"][0].value["type"] == "tool_approval"


def test_ignore_rejects_without_reason() -> None:
    graph = _graph()
    cfg: Any = {"configurable": {"thread_id": "t"}}
    graph.invoke({"messages": [("user", "mail a")]}, cfg)
    out = graph.invoke(Command(resume=[{"type": "ignore", "args": None}]), cfg)
    assert out["messages"][-2].content.startswith("User rejected the tool call for `send_email`.")
    assert SENT == []


def test_interrupt_value_serves_langchain_inbox_and_dynavec_readers() -> None:
    graph = _graph(allowed=("approve", "reject"), description="Send the welcome mail")
    cfg: Any = {"configurable": {"thread_id": "t"}}
    out = graph.invoke({"messages": [("user", "mail a")]}, cfg)
    pending = out["__interrupt__"][0]
    value = pending.value
    call_id = value["tool_call"]["id"]
    assert value["type"] == "tool_approval"
    assert value["tool_call_id"] == call_id and call_id.startswith("call_")
    assert value["name"] == "send_email"
    assert value["args"] == {"to": "a@x.org", "body": "hi"}
    assert value["description"] == "Send the welcome mail"
    assert value["action_request"] == {"action": "send_email", "args": value["args"]}
    assert value["config"] == {
        "allow_accept": True,
        "allow_edit": False,
        "allow_ignore": True,
        "allow_respond": False,
    }
    assert value["node_id"] == "approve_send_email"
    assert value["payload"]["args"] == value["args"]
    assert pending.response_schema is not None  # Studio draws a typed form from it
    assert {"enum": ["approved", "rejected"], "type": "string"} in pending.response_schema["anyOf"]


def test_invalid_and_disallowed_decisions_leave_the_thread_paused() -> None:
    graph = _graph(allowed=("approve", "reject"))
    cfg: Any = {"configurable": {"thread_id": "t"}}
    (first,) = graph.invoke({"messages": [("user", "mail a")]}, cfg)["__interrupt__"]
    edit = {"type": "edit", "edited_action": {"name": "send_email", "args": EDITED}}
    refusals = [
        ({"type": "maybe"}, "{'type': 'maybe'} is no decision"),
        (edit, "'edit' is not allowed for 'send_email'; allowed: approve, reject"),
        ({"decisions": [{"type": "approve"}, {"type": "approve"}]}, "expected one decision"),
        ({"type": "respond", "message": "x"}, "'respond' is not allowed"),  # Agent Inbox's
        # response is a reject here (its Respond stands for reject): test_approval_uis.py
        ("yes", "'yes' is no decision"),
    ]
    for decision, says in refusals:
        out = graph.invoke(Command(resume=decision), cfg)
        (again,) = graph.get_state(cfg).interrupts
        assert out["__interrupt__"] == [again]
        assert says in again.value["error"]
        assert same_ask_again(first.value, again.value)  # the same approval, asked again
        assert again.response_schema == first.response_schema
    assert SENT == []
    out = graph.invoke(Command(resume={"type": "approve"}), cfg)
    assert out["messages"][-2].content == "sent to a@x.org"


def test_an_edit_cannot_switch_tools() -> None:
    with pytest.raises(ValueError, match="not name another action"):
        normalize_decision(
            {"type": "edit", "edited_action": {"name": "rm_rf", "args": {}}}, "send_email"
        )


def test_bad_allowed_is_refused_at_build_time() -> None:
    with pytest.raises(ValueError, match="approve, edit, reject, respond"):
        require_approval(send_email, allowed=("yes",))  # type: ignore[arg-type]


async def test_async_path_with_the_shim() -> None:
    agent = ReActAgent(ScriptedChatModel(policy=_policy), [require_approval(send_email)])
    paused = await agent.arun("mail a", thread_id="x")
    assert paused.termination_reason == "interrupted"
    assert paused.interrupt_payload is not None
    assert paused.interrupt_payload["node_id"] == "approve_send_email"
    final = await agent.aresume(thread_id="x", human_decision={"type": "approve"})
    assert final.output == "done: sent to a@x.org"
    assert SENT == [("a@x.org", "hi")]
