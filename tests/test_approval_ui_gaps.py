"""What the approval UIs showed wrong, each now a tested behaviour, through a real
``langgraph dev`` serving tests/langgraph_ui.json (the demo, ``ui_agent``, ``plain_agent`` of
:mod:`tests.ui_graph`) and driven with ``langgraph_sdk`` as the UIs drive it.

- Agent Inbox reads an action request's arguments under ``arguments``: they are there, beside
  ``args``, and its ``config`` offers Accept, Edit, Ignore and Respond.
- A refused decision is asked again with the reason in both descriptions (what the UIs show).
- An edit whose arguments the tool refuses is asked again (nothing runs), not a tool error.
- After an edit the model is told the call was replaced, in the words of LangChain's
  ``HumanInTheLoopMiddleware`` (pinned here against the installed middleware).
- A reject reason given to a plain ``interrupt()`` reaches the tool (``Rejected.message``).
- "Mark as Resolved" (``Command(goto="__end__")``, what both Agent Inbox UIs send) answers
  nothing in LangGraph: the approval stays pending, unchanged, and nothing runs; Ignore closes it.

The browser side (the Agent Chat UI template) is in tests/test_browser.py.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.messages import HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from langgraph_sdk import get_client
from langgraph_sdk.client import LangGraphClient

from dynavec_langgraph import create_agent, create_react_agent
from dynavec_langgraph import tool as dv_tool
from dynavec_langgraph.approval import EDIT_NOTICE, edit_notice, require_approval
from dynavec_langgraph.interrupt import Rejected, refusal_note
from dynavec_langgraph.testing import ScriptedChatModel
from tests.langgraph_server import REPO, langgraph_dev
from tests.review import same_ask_again, says_why_first
from tests.test_studio import Studio

CONFIG = REPO / "tests" / "langgraph_ui.json"
ARGS = {"amount": 10, "to": "Ann"}


@pytest.fixture(scope="module")
def ui_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Studio]:
    """``langgraph dev --config tests/langgraph_ui.json``; one that does not come up fails."""
    work = tmp_path_factory.mktemp("ui-server")
    with langgraph_dev(work, CONFIG, cwd=CONFIG.parent, first_on_path=()) as running:
        yield Studio(running.url, running.ledger, running.start_seconds)


async def _paused(server: Studio, graph_id: str, text: str = "go") -> tuple[str, dict[str, Any]]:
    """A new thread run to its approval: ``(thread_id, the one pending interrupt)``."""
    client = get_client(url=server.url)
    thread_id = (await client.threads.create())["thread_id"]
    await _wait(
        client, thread_id, graph_id, input={"messages": [{"role": "user", "content": text}]}
    )
    return thread_id, await _pending(client, thread_id)


async def _wait(client: LangGraphClient, thread_id: str, graph_id: str, **kwargs: Any) -> Any:
    return await client.runs.wait(thread_id, graph_id, raise_error=True, **kwargs)


async def _pending(client: LangGraphClient, thread_id: str) -> dict[str, Any]:
    assert (await client.threads.get(thread_id))["status"] == "interrupted"
    interrupts: list[Any] = list((await client.threads.get_state(thread_id))["interrupts"])
    assert len(interrupts) == 1, interrupts
    return dict(interrupts[0])


async def test_agent_inbox_finds_the_arguments_and_every_button(ui_server: Studio) -> None:
    _, pause = await _paused(ui_server, "ui_agent")
    value = pause["value"]
    (action,) = value["action_requests"]
    assert action["name"] == "send_money"
    assert action["arguments"] == action["args"] == ARGS  # Agent Inbox reads `arguments`
    assert value["action_request"] == {"action": "send_money", "args": ARGS}
    assert value["config"] == {
        "allow_accept": True,
        "allow_edit": True,
        "allow_ignore": True,
        "allow_respond": True,
    }
    assert value["review_configs"][0]["allowed_decisions"] == [
        "approve",
        "edit",
        "reject",
        "respond",
    ]


async def test_a_refused_decision_says_why_in_the_description(ui_server: Studio) -> None:
    client = get_client(url=ui_server.url)
    thread_id, pause = await _paused(ui_server, "ui_agent")

    await _wait(client, thread_id, "ui_agent", command={"resume": {pause["id"]: "maybe"}})

    again = await _pending(client, thread_id)
    value = again["value"]
    assert again["id"] != pause["id"]
    assert "'maybe' is no decision on 'send_money'" in value["error"]
    note = refusal_note(value["error"])
    assert value["description"] == f"{note}\n\n{pause['value']['description']}"
    assert note == (
        "Asked again: 'maybe' is no decision on 'send_money': answer 'approved' / 'rejected' or "
        "an approval UI's decision (approve, edit, reject, respond). Nothing ran; decide again."
    )
    assert value["action_requests"][0]["description"] == value["description"]
    assert same_ask_again(pause["value"], value)  # the same approval, nothing else changed
    assert ui_server.entries(thread_id) == []


async def test_an_edit_the_tool_refuses_is_asked_again_then_the_model_is_told(
    ui_server: Studio,
) -> None:
    client = get_client(url=ui_server.url)
    thread_id, pause = await _paused(ui_server, "ui_agent")
    bad = [{"type": "edit", "args": {"action": "send_money", "args": {"amount": "lots"}}}]

    await _wait(client, thread_id, "ui_agent", command={"resume": {pause["id"]: bad}})

    again = await _pending(client, thread_id)  # interrupted, not a tool error
    error = again["value"]["error"]
    assert "the edited arguments do not fit 'send_money'" in error
    assert "amount" in error and "to" in error  # both problems named
    assert says_why_first(again["value"])
    assert ui_server.entries(thread_id) == []  # nothing ran

    edited = {"amount": 3, "to": "Bob"}
    decision = {
        "decisions": [{"type": "edit", "edited_action": {"name": "send_money", "args": edited}}]
    }
    final = await _wait(client, thread_id, "ui_agent", command={"resume": {again["id"]: decision}})

    told = edit_notice("send_money", edited, "sent 3 to Bob")
    assert told.startswith(EDIT_NOTICE)
    tool_messages = [m for m in final["messages"] if m["type"] == "tool"]
    assert [m["content"] for m in tool_messages] == [told]
    assert final["messages"][-1]["content"] == f"Done: {told}"
    assert [(e["amount"], e["to"]) for e in ui_server.entries(thread_id)] == [(3, "Bob")]
    assert (await client.threads.get(thread_id))["status"] == "idle"


REJECTS = [
    ("langchain-1.0", {"decisions": [{"type": "reject", "message": "too early"}]}, "too early"),
    ("per-call", {"type": "reject", "message": "not today"}, "not today"),
    ("agent-inbox-ignore", [{"type": "ignore", "args": None}], None),
]


@pytest.mark.parametrize(
    ("decision", "reason"), [r[1:] for r in REJECTS], ids=[r[0] for r in REJECTS]
)
async def test_a_plain_interrupt_gets_the_reject_reason(
    ui_server: Studio, decision: Any, reason: str | None
) -> None:
    client = get_client(url=ui_server.url)
    thread_id, pause = await _paused(ui_server, "plain_agent")

    final = await _wait(
        client, thread_id, "plain_agent", command={"resume": {pause["id"]: decision}}
    )

    assert ui_server.entries(thread_id) == [
        {"thread_id": thread_id, "tool": "ask_first", "decision": "rejected", "reason": reason}
    ]
    assert final["messages"][-1]["content"] == f"Done: decision=rejected reason={reason}"


async def test_mark_as_resolved_leaves_the_approval_pending_and_ignore_closes_it(
    ui_server: Studio,
) -> None:
    """What both Agent Inbox UIs send for "Mark as Resolved" is ``Command(goto="__end__")``
    with no resume value: LangGraph drops that write (no node is called ``__end__``), the
    paused call re-runs and pauses again at the same interrupt. A documented limit of those
    UIs (docs/approval-uis.md): Ignore (a reject) is the button that closes an approval."""
    client = get_client(url=ui_server.url)
    thread_id, pause = await _paused(ui_server, "ui_agent")

    await _wait(client, thread_id, "ui_agent", command={"goto": "__end__"})

    still = await _pending(client, thread_id)
    assert still == pause  # same id, same value: nothing was decided
    assert ui_server.entries(thread_id) == []
    # a new message: the same approval comes back (nothing answered it)
    await _wait(
        client, thread_id, "ui_agent", input={"messages": [{"role": "user", "content": "?"}]}
    )
    assert (await _pending(client, thread_id))["value"] == pause["value"]

    final = await _wait(
        client, thread_id, "ui_agent", command={"resume": [{"type": "ignore", "args": None}]}
    )
    first_call = pause["value"]["tool_call"]["id"]
    (answer,) = [m for m in final["messages"] if m.get("tool_call_id") == first_call]
    assert answer["content"].startswith("User rejected the tool call for `send_money`.")
    assert ui_server.entries(thread_id) == []
    # the model then answers the held message "?" (this script asks to send again): a new call
    assert (await _pending(client, thread_id))["value"]["tool_call"]["id"] != first_call


async def test_agent_inbox_s_mark_as_resolved_clears_the_step_and_the_approval_comes_back(
    ui_server: Studio,
) -> None:
    """The current Agent Inbox's "Mark as Resolved" (its ``ignoreThread``) is
    ``threads.updateState(id, {values: null, asNode: END})``: LangGraph clears the paused step,
    the thread shows ``idle`` and the inbox drops it, but no decision was given: nothing ran,
    and the next run of the thread asks the same approval again before the model is called
    (it is never sent the unanswered call). Its Respond then closes it."""
    client = get_client(url=ui_server.url)
    thread_id, pause = await _paused(ui_server, "ui_agent")

    await client.threads.update_state(thread_id, None, as_node="__end__")

    assert (await client.threads.get(thread_id))["status"] == "idle"
    assert (await client.threads.get_state(thread_id))["interrupts"] == []
    assert ui_server.entries(thread_id) == []
    await _wait(
        client, thread_id, "ui_agent", input={"messages": [{"role": "user", "content": "?"}]}
    )
    again = await _pending(client, thread_id)
    assert again["value"] == pause["value"]  # the same call, the same review: nothing decided
    state = await client.threads.get_state(thread_id)
    values = state["values"]
    assert isinstance(values, dict)
    assert [m["type"] for m in values["messages"]] == ["human", "ai", "human"]  # no model turn

    final = await _wait(
        client, thread_id, "ui_agent", command={"resume": [{"type": "response", "args": "no"}]}
    )
    first_call = pause["value"]["tool_call"]["id"]
    (answer,) = [m for m in final["messages"] if m.get("tool_call_id") == first_call]
    assert answer["content"] == "no" and ui_server.entries(thread_id) == []


async def test_an_unkeyed_ui_resume_with_two_pauses_pending_fails_and_keeps_both(
    ui_server: Studio,
) -> None:
    """Two calls paused at once: the UIs' unkeyed resume cannot say which it answers. The
    run fails with UnkeyedResumeError (what to do instead), nothing ran, both pauses stay;
    answered by their ids (what ``inbox answer`` and the package's doors send) both run."""
    client = get_client(url=ui_server.url)
    thread_id = (await client.threads.create())["thread_id"]
    await _wait(
        client, thread_id, "parallel_agent", input={"messages": [{"role": "user", "content": "go"}]}
    )
    pauses = (await client.threads.get_state(thread_id))["interrupts"]
    assert [p["value"]["args"]["to"] for p in pauses] == ["Ann", "Bob"]
    for accept in ({"decisions": [{"type": "approve"}]}, [{"type": "accept", "args": None}]):
        failed: Any = await client.runs.wait(
            thread_id, "parallel_agent", input={}, command={"resume": accept}, raise_error=False
        )
        error = failed["__error__"]
        assert error["error"] == "UnkeyedResumeError", failed
        assert error["message"].startswith("2 pauses are pending on thread ")
        assert "nothing ran and every pause stays" in error["message"]
        assert (await client.runs.list(thread_id))[0]["status"] == "error"
        assert (await client.threads.get(thread_id))["status"] == "error"  # the server's word
        assert (await client.threads.get_state(thread_id))["interrupts"] == pauses
        assert ui_server.entries(thread_id) == []

    answers = {p["id"]: {"decisions": [{"type": "approve"}]} for p in pauses}
    final = await _wait(client, thread_id, "parallel_agent", command={"resume": answers})
    assert final["messages"][-1]["content"] == "Done: 2 answers"
    assert sorted(e["to"] for e in ui_server.entries(thread_id)) == ["Ann", "Bob"]


# --- in-process: the pins on what is mirrored -------------------------------------------------

SENT: list[dict[str, Any]] = []


@dv_tool
def send(to: str, amount: int) -> str:
    """Send money."""
    SENT.append({"to": to, "amount": amount})
    return f"sent {amount} to {to}"


def test_the_edit_notice_is_the_one_langchains_hitl_middleware_gives() -> None:
    """Same edit, same tool: LangChain's ``HumanInTheLoopMiddleware`` (its default
    ``edit_notice``, ``_notice`` and ``_prepend_notice``) and ``require_approval`` tell the model
    the same text. Fails when the installed langchain changes its wording."""
    assert HumanInTheLoopMiddleware(interrupt_on={}).edit_notice == EDIT_NOTICE
    edited = {"to": "Bob", "amount": 3}
    decision = {"decisions": [{"type": "edit", "edited_action": {"name": "send", "args": edited}}]}

    def told(agent: Any) -> str:
        cfg: Any = {"configurable": {"thread_id": "t"}}
        agent.invoke({"messages": [HumanMessage("pay")]}, cfg)
        out = agent.invoke(Command(resume=decision), cfg)
        (message,) = [m for m in out["messages"] if isinstance(m, ToolMessage)]
        assert isinstance(message.content, str)
        return message.content

    def model() -> ScriptedChatModel:
        return ScriptedChatModel(
            turns=[[{"name": "send", "args": {"to": "Ann", "amount": 10}}], "ok"]
        )

    hitl = HumanInTheLoopMiddleware(interrupt_on={"send": True})
    theirs = told(create_agent(model(), [send], middleware=[hitl], checkpointer=InMemorySaver()))
    ours = told(create_react_agent(model(), [require_approval(send)], checkpointer=InMemorySaver()))
    assert ours == theirs == edit_notice("send", edited, "sent 3 to Bob")
    assert SENT[-2:] == [edited, edited]


def test_rejected_is_the_string_rejected_and_survives_a_checkpoint() -> None:
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    reason = Rejected("too much")
    assert reason == "rejected" and reason.message == "too much" and Rejected().message is None
    assert json.dumps({"d": reason}) == '{"d": "rejected"}'
    serde = JsonPlusSerializer()
    assert serde.loads_typed(serde.dumps_typed({"d": reason})) == {"d": "rejected"}


def test_the_demo_keeps_a_reject_reason_as_its_comment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dynavec_langgraph.demo import create_demo_agent, demo_model

    ledger = tmp_path / "ledger.jsonl"
    monkeypatch.setenv("DYNAVEC_DEMO_LEDGER", str(ledger))
    graph = create_demo_agent(model=demo_model(), checkpointer=InMemorySaver())
    cfg: Any = {"configurable": {"thread_id": "t"}}
    graph.invoke({"messages": [("user", "pay 30 to Bob")]}, cfg)
    out = graph.invoke(
        Command(resume={"decisions": [{"type": "reject", "message": "too much"}]}), cfg
    )
    (result,) = [m.content for m in out["messages"] if isinstance(m, ToolMessage)][-1:]
    assert result == "Transfer of 30 to Bob was rejected (too much)."
