"""``dynavec_langgraph.agui``'s logic through its ASGI interface (httpx's ASGI transport, a real
SQLite file): every pause as an AG-UI 1.0 interrupt outcome, ``resume[]`` through the guarded
resume, the refusals as ``RUN_ERROR`` with nothing run, the stream's events. The same app
through a real server and real clients (``@ag-ui/client``, CopilotKit in Chromium):
tests/test_agui_clients.py."""

from __future__ import annotations

import asyncio
import importlib
import json
import sys
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from ag_ui.core import RunAgentInput
from langgraph.checkpoint.memory import InMemorySaver

from dynavec_langgraph import (
    InvalidInputError,
    InvalidOptionError,
    MissingDependencyError,
    create_react_agent,
)
from dynavec_langgraph.agui import create_agui_app, interrupt_outcome, stream_run
from dynavec_langgraph.demo import LEDGER_ENV
from dynavec_langgraph.testing import ScriptedChatModel
from tests.agui_graph import EXPIRES_IN, graphs
from tests.ui_graph import send_money

Events = list[dict[str, Any]]


class Client:
    """One AG-UI endpoint per test graph on a SQLite file, driven through the ASGI app."""

    def __init__(self, db: Path) -> None:
        self.apps = {
            name: create_agui_app(
                graph,
                checkpointer=f"sqlite:///{db}",
                tools=[send_money],
                approver=lambda _request, entry: (entry.metadata or {}).get("approver"),
            )
            for name, graph in graphs().items()
        }

    def post(self, agent: str, body: dict[str, Any]) -> httpx.Response:
        async def go() -> httpx.Response:
            transport = httpx.ASGITransport(app=self.apps[agent])
            async with httpx.AsyncClient(transport=transport, base_url="http://agui") as c:
                return await c.post("/", json=body)

        return asyncio.run(go())

    def run(self, agent: str, thread: str, **body: Any) -> Events:
        body = {"threadId": thread, "runId": str(uuid.uuid4()), "messages": [], **body}
        response = self.post(agent, body)
        assert response.status_code == 200, response.text
        assert response.headers["content-type"].startswith("text/event-stream")
        lines = [line for line in response.text.splitlines() if line]
        assert all(line.startswith("data: ") for line in lines), lines
        return [json.loads(line[len("data: ") :]) for line in lines]

    def start(self, agent: str) -> tuple[str, Events]:
        thread = str(uuid.uuid4())
        message = {"id": str(uuid.uuid4()), "role": "user", "content": "go"}
        return thread, self.run(agent, thread, messages=[message])


def answer(iid: str, payload: Any = None, status: str = "resolved", **more: Any) -> dict[str, Any]:
    return {"interruptId": iid, "status": status, "payload": payload, **more}


def types(events: Events) -> list[str]:
    return [e["type"] for e in events]


def interrupts(events: Events) -> list[dict[str, Any]]:
    last = events[-1]
    assert last["type"] == "RUN_FINISHED", last
    assert last["outcome"]["type"] == "interrupt", last
    return list(last["outcome"]["interrupts"])


def finished(events: Events) -> str:
    """The run's last assistant text (it ended with success)."""
    assert events[-1]["type"] == "RUN_FINISHED" and events[-1]["outcome"] == {"type": "success"}
    snapshot = next(e for e in events if e["type"] == "MESSAGES_SNAPSHOT")
    return str(snapshot["messages"][-1]["content"])


def error(events: Events) -> dict[str, Any]:
    assert types(events) == ["RUN_STARTED", "RUN_ERROR"], events
    return events[-1]


@pytest.fixture
def ledger(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    path = tmp_path / "ledger.jsonl"
    monkeypatch.setenv(LEDGER_ENV, str(path))
    yield path


def sent(ledger: Path, thread: str) -> list[tuple[int, str]]:
    if not ledger.exists():
        return []
    rows = [json.loads(line) for line in ledger.read_text().splitlines()]
    return [(r["amount"], r["to"]) for r in rows if r["thread_id"] == thread]


@pytest.fixture
def client(tmp_path: Path) -> Client:
    return Client(tmp_path / "agui.db")


APPROVE = {"type": "approve"}


def test_a_pause_streams_the_call_and_ends_with_a_standard_interrupt_outcome(
    client: Client, ledger: Path
) -> None:
    thread, events = client.start("approval")
    assert types(events) == [
        "RUN_STARTED", "TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END",
        "MESSAGES_SNAPSHOT", "STATE_SNAPSHOT", "RUN_FINISHED",
    ]  # fmt: skip
    assert events[0]["protocolVersion"] == "1.0"
    call = events[1]
    assert call["toolCallName"] == "send_money"
    assert json.loads(events[2]["delta"]) == {"amount": 10, "to": "Ann"}
    [pause] = interrupts(events)
    assert pause["reason"] == "tool_call" and pause["toolCallId"] == call["toolCallId"]
    assert pause["message"] == "send_money(amount=10, to='Ann')"
    assert "expiresAt" not in pause
    kinds = [o["title"] for o in pause["responseSchema"]["oneOf"]]
    assert kinds == ["approve", "edit", "reject", "respond"]
    edit = pause["responseSchema"]["oneOf"][1]["properties"]["args"]
    assert edit["properties"] == {"amount": {"type": "integer"}, "to": {"type": "string"}}
    meta = pause["metadata"]
    assert meta["nodeId"] == "approve_send_money" and meta["path"] == ["tools"]
    assert meta["args"] == {"amount": 10, "to": "Ann"} and len(meta["reviewDigest"]) == 32
    assert sent(ledger, thread) == []


def test_resume_one_approve_runs_it_once_and_streams_the_answer(
    client: Client, ledger: Path
) -> None:
    thread, events = client.start("approval")
    [pause] = interrupts(events)
    done = client.run("approval", thread, resume=[answer(pause["id"], APPROVE)])
    assert types(done)[:3] == ["RUN_STARTED", "TOOL_CALL_RESULT", "TEXT_MESSAGE_START"]
    assert done[1]["content"] == "sent 10 to Ann"
    deltas = "".join(e["delta"] for e in done if e["type"] == "TEXT_MESSAGE_CONTENT")
    assert deltas == finished(done) == "Done: sent 10 to Ann"
    assert sent(ledger, thread) == [(10, "Ann")]
    # a second answer to the same interrupt: refused, nothing runs again
    again = error(client.run("approval", thread, resume=[answer(pause["id"], APPROVE)]))
    assert again["code"] == "STALE_INTERRUPT" and "not pending" in again["message"]
    assert sent(ledger, thread) == [(10, "Ann")]


def test_resume_several_at_once_each_applied_once_to_its_own_call(
    client: Client, ledger: Path
) -> None:
    thread, events = client.start("parallel")
    ann, bob = interrupts(events)
    assert (ann["metadata"]["args"]["to"], bob["metadata"]["args"]["to"]) == ("Ann", "Bob")
    edit = {"type": "edit", "args": {"amount": 3, "to": "Bob"}}
    done = client.run(
        "parallel", thread, resume=[answer(bob["id"], edit), answer(ann["id"], APPROVE)]
    )
    results = {e["toolCallId"]: e["content"] for e in done if e["type"] == "TOOL_CALL_RESULT"}
    assert results[ann["toolCallId"]] == "sent 10 to Ann"
    assert results[bob["toolCallId"]].endswith("sent 3 to Bob")
    assert "a human reviewer replaced this tool call" in results[bob["toolCallId"]]
    finished(done)
    assert sorted(sent(ledger, thread)) == [(3, "Bob"), (10, "Ann")]


def test_a_partial_resume_answers_one_and_the_other_stays_pending(
    client: Client, ledger: Path
) -> None:
    thread, events = client.start("parallel")
    ann, bob = interrupts(events)
    rest = client.run("parallel", thread, resume=[answer(ann["id"], APPROVE)])
    [left] = interrupts(rest)
    assert left["toolCallId"] == bob["toolCallId"]
    assert sent(ledger, thread) == [(10, "Ann")]
    done = client.run("parallel", thread, resume=[answer(left["id"], {"type": "reject"})])
    finished(done)
    assert sent(ledger, thread) == [(10, "Ann")]


def test_cancelled_is_a_rejection_the_model_is_told_about(client: Client, ledger: Path) -> None:
    thread, events = client.start("approval")
    [pause] = interrupts(events)
    done = client.run(
        "approval", thread, resume=[answer(pause["id"], {"message": "not today"}, "cancelled")]
    )
    result = next(e for e in done if e["type"] == "TOOL_CALL_RESULT")
    assert "rejected" in result["content"] and "not today" in result["content"]
    assert "not today" in finished(done)
    assert sent(ledger, thread) == []


@pytest.mark.parametrize(
    ("payload", "code", "says"),
    [
        ({"type": "edit", "args": {"amount": "lots", "to": "Bob"}}, "INVALID_ARGUMENTS", "amount"),
        ({"type": "edit", "args": {"amount": 3}}, "INVALID_ARGUMENTS", "to"),
        ({"type": "edit", "args": {"amount": 3, "to": "Bob", "x": 1}}, "INVALID_ARGUMENTS", "x"),
        ({"type": "edit"}, "INVALID_DECISION", "args"),
        ({"type": "respond"}, "INVALID_DECISION", "message"),
        ("approved", "INVALID_DECISION", "responseSchema"),
        (None, "INVALID_DECISION", "responseSchema"),
    ],
)
def test_a_bad_decision_is_refused_before_anything_runs(
    client: Client, ledger: Path, payload: Any, code: str, says: str
) -> None:
    thread, events = client.start("approval")
    [pause] = interrupts(events)
    refused = error(client.run("approval", thread, resume=[answer(pause["id"], payload)]))
    assert refused["code"] == code and says in refused["message"], refused
    # nothing ran and the same interrupt is still the one to answer
    done = client.run("approval", thread, resume=[answer(pause["id"], APPROVE)])
    assert finished(done) == "Done: sent 10 to Ann"
    assert sent(ledger, thread) == [(10, "Ann")]


def test_unknown_and_duplicate_answers_are_refused_and_nothing_runs(
    client: Client, ledger: Path
) -> None:
    thread, events = client.start("parallel")
    ann, bob = interrupts(events)
    unknown = client.run(
        "parallel", thread, resume=[answer(ann["id"], APPROVE), answer("x", APPROVE)]
    )
    assert error(unknown)["code"] == "STALE_INTERRUPT"
    twice = [answer(ann["id"], APPROVE), answer(ann["id"], {"type": "reject"})]
    assert error(client.run("parallel", thread, resume=twice))["code"] == "DUPLICATE_RESUME"
    assert sent(ledger, thread) == []
    assert [
        i["id"]
        for i in interrupts(client.run("parallel", thread, resume=[answer(bob["id"], APPROVE)]))
    ] == [ann["id"]]


def test_a_decision_not_offered_is_refused(client: Client, tmp_path: Path) -> None:
    from dynavec_langgraph.approval import require_approval

    model = ScriptedChatModel(
        turns=[[{"name": "send_money", "args": {"amount": 1, "to": "A"}}], "ok"]
    )
    graph = create_react_agent(
        model,
        [require_approval(send_money, allowed=("approve", "reject"))],
        checkpointer=InMemorySaver(),
    )
    app = create_agui_app(graph)
    client.apps["narrow"] = app
    thread, events = client.start("narrow")
    [pause] = interrupts(events)
    assert [o["title"] for o in pause["responseSchema"]["oneOf"]] == ["approve", "reject"]
    edit = {"type": "edit", "args": {"amount": 2, "to": "A"}}
    refused = error(client.run("narrow", thread, resume=[answer(pause["id"], edit)]))
    assert refused["code"] == "DECISION_NOT_ALLOWED"


def test_a_plain_interrupt_takes_any_value_and_a_decision(client: Client) -> None:
    thread, events = client.start("plain")
    [pause] = interrupts(events)
    assert pause["reason"] == "confirmation" and pause["metadata"]["nodeId"] == "approve_plain"
    assert pause["responseSchema"]["oneOf"][-1] == {"title": "value", "not": {"type": "null"}}
    done = client.run("plain", thread, resume=[answer(pause["id"], "approved")])
    result = next(e for e in done if e["type"] == "TOOL_CALL_RESULT")
    assert result["content"] == "decision=approved reason=None"
    thread, events = client.start("plain")
    [pause] = interrupts(events)
    done = client.run(
        "plain", thread, resume=[answer(pause["id"], {"type": "reject", "message": "no"})]
    )
    result = next(e for e in done if e["type"] == "TOOL_CALL_RESULT")
    assert result["content"] == "decision=rejected reason=no"


def test_a_subagent_pause_carries_its_nested_path_and_resumes_through_the_parent(
    client: Client, ledger: Path
) -> None:
    thread, events = client.start("subagent")
    [pause] = interrupts(events)
    assert pause["metadata"]["path"] == ["worker", "tools"]
    assert pause["reason"] == "tool_call"
    done = client.run("subagent", thread, resume=[answer(pause["id"], APPROVE)])
    finished(done)
    calls = [e for e in done if e["type"] == "TOOL_CALL_START"]
    assert calls == []  # the call was drawn by the first run; the resume draws its result
    assert sent(ledger, thread) == [(10, "Ann")]


def test_m_of_n_needs_named_distinct_approvers_and_runs_once(client: Client, ledger: Path) -> None:
    thread, events = client.start("two_approvers")
    [pause] = interrupts(events)
    approval = pause["metadata"]["approval"]
    assert (approval["approvals_required"], approval["approvers"]) == (2, ["ann", "bob", "cy"])
    assert "0 of 2 approvals in." in pause["message"]
    nobody = error(client.run("two_approvers", thread, resume=[answer(pause["id"], APPROVE)]))
    assert nobody["code"] == "APPROVER_REQUIRED"

    def by(who: str, iid: str) -> Events:
        entry = answer(iid, APPROVE, metadata={"approver": who})
        return client.run("two_approvers", thread, resume=[entry])

    [second] = interrupts(by("ann", pause["id"]))
    assert second["id"] != pause["id"] and "1 of 2 approvals in (ann)." in second["message"]
    assert second["metadata"]["approval"]["approved_by"] == ["ann"]
    assert sent(ledger, thread) == []
    assert error(by("ann", second["id"]))["code"] == "ApproverRefusedError"
    assert error(by("zed", second["id"]))["code"] == "ApproverRefusedError"
    assert error(by("bob", pause["id"]))["code"] == "STALE_INTERRUPT"
    assert sent(ledger, thread) == []
    finished(by("bob", second["id"]))
    assert sent(ledger, thread) == [(10, "Ann")]


def test_an_expiring_approval_has_expires_at_and_a_late_answer_is_refused(
    ledger: Path,
) -> None:
    graph = graphs()["expiring"].copy(update={"checkpointer": InMemorySaver()})

    def run(*resume: dict[str, Any], now: datetime | None = None) -> list[Any]:
        given: dict[str, Any] = {"threadId": "t", "runId": str(uuid.uuid4()), "messages": []}
        if resume:
            given["resume"] = list(resume)
        else:
            given["messages"] = [{"id": "m1", "role": "user", "content": "go"}]
        clock = (lambda: now) if now is not None else (lambda: datetime.now(UTC))

        async def collect() -> list[Any]:
            agui_run = RunAgentInput.model_validate(given)
            return [e async for e in stream_run(graph, agui_run, tools=[send_money], now=clock)]

        return asyncio.run(collect())

    [pause] = run()[-1].outcome.interrupts
    deadline = datetime.fromisoformat(pause.expires_at)
    assert timedelta(0) < deadline - datetime.now(UTC) <= timedelta(seconds=EXPIRES_IN)
    assert pause.metadata["approval"]["expires_at"] == pause.expires_at
    # a clock past the deadline: the answer is refused and nothing runs
    late = run(answer(pause.id, APPROVE), now=deadline + timedelta(seconds=1))[-1]
    assert late.type == "RUN_ERROR" and late.code == "INTERRUPT_EXPIRED"
    assert pause.expires_at in late.message and "cancelled" in late.message
    assert sent(ledger, "t") == []
    # cancelled closes it: the call never runs, the model is told
    closed = run(answer(pause.id, None, "cancelled"), now=deadline + timedelta(seconds=1))
    assert closed[-1].type == "RUN_FINISHED" and closed[-1].outcome.type == "success"
    assert sent(ledger, "t") == []


def test_a_paused_thread_refuses_a_new_message_and_an_empty_run(client: Client) -> None:
    thread, events = client.start("approval")
    interrupts(events)
    message = {"id": str(uuid.uuid4()), "role": "user", "content": "again"}
    paused = error(client.run("approval", thread, messages=[message]))
    assert paused["code"] == "ThreadPausedError"
    assert error(client.run("approval", str(uuid.uuid4())))["code"] == "InvalidInputError"


def test_a_body_that_is_no_run_input_gets_422(client: Client) -> None:
    response = client.post("approval", {"threadId": "t"})
    assert response.status_code == 422
    assert "RunAgentInput" in response.json()["error"]


def test_the_app_needs_a_checkpointer_and_a_graph() -> None:
    graph = create_react_agent(ScriptedChatModel(turns=["hi"]), [])
    with pytest.raises(InvalidOptionError, match="checkpointer"):
        create_agui_app(graph)
    with pytest.raises(InvalidOptionError, match="compiled graph"):
        create_agui_app(object())


def test_interrupt_outcome_reads_a_graph_state() -> None:
    graph = graphs()["approval"].copy(update={"checkpointer": InMemorySaver()})
    cfg = {"configurable": {"thread_id": "t"}}
    graph.invoke({"messages": [("user", "go")]}, cfg)
    outcome = interrupt_outcome(graph.get_state(cfg).interrupts, [send_money])
    assert outcome.type == "interrupt" and outcome.interrupts[0].reason == "tool_call"
    with pytest.raises(InvalidInputError):
        interrupt_outcome([])


PARTS = "dynavec_langgraph._agui"
"""The AG-UI app's parts behind the face (imported with it)."""


def test_without_the_agui_extra_the_module_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ag_ui.core", None)
    for name in [m for m in sys.modules if m.startswith(("dynavec_langgraph.agui", PARTS))]:
        monkeypatch.delitem(sys.modules, name)  # the face and its parts, as in a fresh process
    with pytest.raises(MissingDependencyError) as raised:
        importlib.import_module("dynavec_langgraph.agui")
    assert raised.value.extra == "agui"
    assert "pip install 'dynavec-langgraph[agui]'" in str(raised.value)
