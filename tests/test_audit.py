"""The audit trail and the notification outbox (docs/audit-and-notifications.md), on real
parts: SQLite files, the PostgreSQL server of tests/pg.py, DynamoDB (moto), a webhook receiver
process on 127.0.0.1, SIGKILLed children and the command line in fresh processes."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import BaseMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from dynavec_langgraph import (
    ConcurrentResumeError,
    InvalidDecisionError,
    ReActAgent,
    create_react_agent,
)
from dynavec_langgraph._approvals.inbox import thread_ids
from dynavec_langgraph._persistence.locks import resume_lock
from dynavec_langgraph.audit import (
    AUDIT_KEY,
    audit_trail,
    deliver,
    enqueue,
    notification_body,
    outbox,
    record,
    wait_for_deliveries,
)
from dynavec_langgraph.testing import ScriptedChatModel, Turn
from tests.children.audit_child import make_agent, model, transfer
from tests.children.scenario import ROOT, open_saver
from tests.children.warm import run as warm_run
from tests.webhook import Receiver

TIMEOUT = 120


def _child(*args: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "tests.children.audit_child", *args]
    return warm_run(argv, cwd=ROOT, timeout=TIMEOUT)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "dynavec_langgraph._cli", *args]
    return warm_run(argv, cwd=ROOT, timeout=TIMEOUT)


def _last_json(done: subprocess.CompletedProcess[str]) -> Any:
    assert done.stdout.strip(), done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def _kinds(events: list[Any]) -> list[str]:
    return [e["kind"] if isinstance(e, dict) else e.kind for e in events]


# --- the trail on every saver ---------------------------------------------------------------


def _decide_everything(agent: ReActAgent, saver: Any, thread: str) -> None:
    """Pause, a refused decision, a refused concurrent resume, an accepted decision."""
    assert agent.run("pay the rent", thread_id=thread).termination_reason == "interrupted"
    with pytest.raises(InvalidDecisionError):
        agent.resume(thread_id=thread, human_decision={"decisions": [{"type": "bogus"}]})
    with resume_lock(saver, thread), pytest.raises(ConcurrentResumeError):
        agent.resume(thread_id=thread, human_decision="approved")
    decision = {"decisions": [{"type": "approve", "approver": "ana"}]}
    assert agent.resume(thread_id=thread, human_decision=decision).output == (
        "Done: Transferred 100."
    )


def test_every_decision_and_refusal_is_recorded_and_read_back_by_a_new_process(db: str) -> None:
    with open_saver(db) as saver:
        agent = make_agent(saver, None, fail_after=False)
        _decide_everything(agent, saver, "t1")
        trail = agent.audit("t1")
        assert thread_ids(saver) == ["t1"]  # the trail is no thread of its own
    assert _kinds(trail) == ["paused", "refused", "reasked", "refused", "decision"]
    first, bad, again, busy, ok = trail
    assert {e.surface for e in trail} == {"api"}
    assert first.node_id == "approve_transfer" and first.outcome == "waiting"
    assert bad.interrupt_id == first.interrupt_id  # the decision answered that pause
    assert "unknown decision type 'bogus'" in bad.outcome
    assert again.interrupt_id != first.interrupt_id and again.comment == bad.outcome
    assert busy.outcome == "concurrent resume refused" and busy.decision == "approved"
    assert ok.interrupt_id == again.interrupt_id and ok.outcome == "accepted"
    assert ok.who == "ana" and ok.decision == {
        "decisions": [{"type": "approve", "approver": "ana"}]
    }
    assert ok.tool_call_id == first.tool_call_id and ok.tool_call_id
    assert [e.at for e in trail] == sorted(e.at for e in trail)

    shown = _cli("inbox", "history", "t1", "--db", db, "--json")
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout) == [e.as_dict() for e in trail]
    text = _cli("inbox", "history", "t1", "--db", db)
    assert text.returncode == 0, text.stderr
    assert "5 audit entries of 't1'" in text.stdout
    assert "decision  approve_transfer  via api by ana: accepted" in text.stdout


def test_the_trail_on_dynamodb_through_the_adapter(dynamodb_url: str) -> None:
    with open_saver(dynamodb_url) as saver:
        agent = make_agent(saver, None, fail_after=False)
        _decide_everything(agent, saver, "t1")
        assert _kinds(agent.audit("t1")) == ["paused", "refused", "reasked", "refused", "decision"]
        state = agent.graph.get_state({"configurable": {"thread_id": "t1"}})
        assert state.values["messages"][-1].content == "Done: Transferred 100."
    with open_saver(dynamodb_url) as again:  # a new saver object: read from the table
        assert _kinds(audit_trail(again, "t1"))[-1] == "decision"


def test_interrupt_ids_of_the_trail_are_langgraphs() -> None:
    """Pins the mirror of ``langgraph.types._interrupt_id`` (the answered pause's id) and the
    config key of the checkpointer a node runs with (nothing would be recorded without it)."""
    saver = InMemorySaver()
    agent = make_agent(saver, None, fail_after=False)
    agent.run("pay", thread_id="t1")
    first = agent.graph.get_state({"configurable": {"thread_id": "t1"}}).interrupts
    with pytest.raises(InvalidDecisionError):
        agent.resume(thread_id="t1", human_decision={"decisions": [{"type": "bogus"}]})
    second = agent.graph.get_state({"configurable": {"thread_id": "t1"}}).interrupts
    agent.resume(thread_id="t1", human_decision="approved")
    paused, refused, reasked, accepted = agent.audit("t1")
    assert paused.interrupt_id == refused.interrupt_id == first[0].id
    assert reasked.interrupt_id == accepted.interrupt_id == second[0].id != first[0].id


def test_a_raw_graph_records_with_its_config_and_a_plain_one_records_nothing() -> None:
    def policy(messages: list[BaseMessage]) -> Turn:
        if isinstance(messages[-1], HumanMessage):
            return [{"name": "transfer", "args": {"amount": 5}}]
        return "ok"

    saver = InMemorySaver()
    graph = create_react_agent(ScriptedChatModel(policy=policy), [transfer], checkpointer=saver)
    audited: Any = {"configurable": {"thread_id": "raw", AUDIT_KEY: True}}
    graph.invoke({"messages": [HumanMessage("pay")]}, audited)
    graph.invoke(Command(resume="approved"), audited)
    trail = audit_trail(saver, "raw")
    assert _kinds(trail) == ["paused", "decision"]
    assert {e.surface for e in trail} == {"graph"} and trail[1].decision == "approved"
    plain: Any = {"configurable": {"thread_id": "plain"}}
    graph.invoke({"messages": [HumanMessage("pay")]}, plain)
    graph.invoke(Command(resume="approved"), plain)
    assert audit_trail(saver, "plain") == []
    assert sorted(thread_ids(saver)) == ["plain", "raw"]


def test_record_is_append_only_and_written_once_per_event_id(tmp_path: Path) -> None:
    db = str(tmp_path / "a.db")
    with open_saver(db) as saver:
        first = record(saver, "t9", "expired", outcome="rejected", surface="sweeper", event_id="e1")
        record(saver, "t9", "expired", outcome="rejected", surface="sweeper", event_id="e1")
        record(saver, "t9", "in_doubt", outcome="settled", surface="cli", who="bo", comment="x")
        with pytest.raises(ValueError, match="surface='web'"):
            record(saver, "t9", "expired", outcome="x", surface="web")
        with pytest.raises(TypeError, match="neither a LangGraph checkpointer nor a store"):
            record(object(), "t9", "expired", outcome="x", surface="cli")
    with open_saver(db) as saver:
        trail = audit_trail(saver, "t9")
    assert [(e.event_id == "e1", e.kind, e.who) for e in trail] == [
        (True, "expired", None),
        (False, "in_doubt", "bo"),
    ]
    assert trail[0] == first


def test_the_trail_survives_a_restart_and_a_later_failure_of_the_run(db: str) -> None:
    paused = _last_json(_child("--db", db, "pause", "t1"))
    assert paused == {"ok": True, "termination_reason": "interrupted"}
    failed = _last_json(_child("--db", db, "--fail-after", "answer", "t1", '"approved"'))
    assert failed["ok"] is False and failed["error"] == "RuntimeError", failed
    shown = _cli("inbox", "history", "t1", "--db", db, "--json")
    assert shown.returncode == 0, shown.stderr
    trail = json.loads(shown.stdout)
    assert _kinds(trail) == ["paused", "decision"]
    assert trail[1]["decision"] == "approved" and trail[1]["outcome"] == "accepted"


def test_the_command_line_records_its_answers_on_an_audited_thread(tmp_path: Path) -> None:
    db = str(tmp_path / "a.db")
    assert _last_json(_child("--db", db, "pause", "t1"))["ok"]
    answer = ["inbox", "answer", "--db", db, "--thread", "t1"]
    answer += ["--graph", f"{ROOT / 'tests' / 'children' / 'audit_child.py'}:graph"]
    bad = _cli(*answer, "--decision", '{"decisions": [{"type": "bogus"}]}')
    assert bad.returncode == 2 and "unknown decision type" in bad.stderr
    ok = _cli(*answer, "--approve")
    assert ok.returncode == 0, ok.stderr
    with open_saver(db) as saver:
        trail = audit_trail(saver, "t1")
    assert [(e.kind, e.surface) for e in trail] == [
        ("paused", "api"),
        ("refused", "cli"),
        ("reasked", "cli"),
        ("decision", "cli"),
    ]


# --- notifications ---------------------------------------------------------------------------


def test_a_receiver_down_then_up_gets_the_pause_once_and_the_run_never_waits(
    tmp_path: Path,
) -> None:
    receiver = Receiver(tmp_path / "hook.jsonl")
    saver = InMemorySaver()
    agent = make_agent(saver, receiver.url, fail_after=False)
    started = time.monotonic()
    assert agent.run("pay", thread_id="t1").termination_reason == "interrupted"
    assert time.monotonic() - started < 5  # nothing listens: the run does not wait for it
    deadline = time.monotonic() + 30
    while not any(d.tries for d in outbox(saver, "t1")):
        assert time.monotonic() < deadline, "no failed try was recorded"
        time.sleep(0.05)  # the background delivery's first try, against a closed port
    receiver.start()
    try:
        wait_for_deliveries(30)
        got = receiver.received()
    finally:
        receiver.stop()
    assert len(got) == 1, got
    body, headers = got[0]["body"], got[0]["headers"]
    pending = agent.graph.get_state({"configurable": {"thread_id": "t1"}}).interrupts[0]
    assert headers["X-Dynavec-Event-Id"] == body["event_id"] == headers["Idempotency-Key"]
    assert body["event"] == "paused" and body["thread_id"] == "t1"
    assert body["node_id"] == "approve_transfer" and body["payload"] == {"amount": 100}
    assert body["tool_call"]["name"] == "transfer" and body["interrupt_id"] == pending.id
    assert f"--thread t1 --node {pending.id} --approve" in body["resume"]["command"]
    assert body["resume"]["langgraph"] == {"resume": {pending.id: "approved"}}
    assert "deadline" in body and "approvals" in body and "digest" in body
    [item] = outbox(saver, "t1")
    assert item.delivered and item.tries >= 1 and "ConnectError" in str(item.last_error)


def test_a_failing_callback_never_fails_the_run_and_re_asks_notify_too() -> None:
    calls: list[dict[str, Any]] = []

    def flaky(body: dict[str, Any]) -> None:
        calls.append(body)
        if len(calls) == 1:
            raise OSError("the pager is down")

    saver = InMemorySaver()
    agent = make_agent(saver, flaky, fail_after=False)
    assert agent.run("pay", thread_id="t1").termination_reason == "interrupted"
    with pytest.raises(InvalidDecisionError):
        agent.resume(thread_id="t1", human_decision={"decisions": [{"type": "bogus"}]})
    wait_for_deliveries(30)
    events = [c["event"] for c in calls]
    assert events.count("paused") == 2 and events.count("reasked") == 1  # one retry
    assert len({c["event_id"] for c in calls}) == 2  # the retry is recognisable
    assert all(d.delivered for d in outbox(saver, "t1"))
    assert deliver(saver, "t1", flaky) == (0, 0)  # nothing left: nothing sent again


def test_failed_tries_back_off_doubling() -> None:
    saver = InMemorySaver()
    enqueue(saver, "t1", notification_body("t1", "expired", {"node_id": "a"}, None, event_id="e"))

    def down(body: dict[str, Any]) -> None:
        raise ConnectionError("down")

    before = time.time()
    assert deliver(saver, "t1", down, backoff=10) == (0, 1)
    assert deliver(saver, "t1", down, backoff=10) == (0, 0)  # not due yet
    [first] = outbox(saver, "t1")
    assert first.tries == 1 and before + 10 <= first.next_at <= time.time() + 10
    assert deliver(saver, "t1", down, backoff=10, force=True) == (0, 1)
    [second] = outbox(saver, "t1")
    assert second.tries == 2 and second.next_at >= before + 20
    assert second.last_error == "ConnectionError: down"
    assert deliver(saver, "t1", lambda body: None, force=True) == (1, 0)
    assert outbox(saver, "t1")[0].delivered


def test_a_process_killed_right_after_pausing_is_notified_by_the_sweeper(
    db: str, tmp_path: Path
) -> None:
    receiver = Receiver(tmp_path / "hook.jsonl")
    killed = _child("--db", db, "--webhook", receiver.url, "--kill", "pause", "t1")
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert _last_json(killed)["termination_reason"] == "interrupted"
    with open_saver(db) as saver:
        [item] = outbox(saver, "t1")
    assert not item.delivered

    sweep = ["inbox", "notify", "--db", db, "--webhook", receiver.url, "--backoff", "60"]
    down = _cli(*sweep, "--now")
    assert down.returncode == 1 and "Delivered 0 notification(s), 1 failed." in down.stdout
    with open_saver(db) as saver:
        [item] = outbox(saver, "t1")
    assert item.tries >= 1 and item.next_at > time.time() + 30  # backing off for 60 s
    receiver.start()
    try:
        early = _cli(*sweep)  # still backing off after the failed try: not sent yet
        assert early.returncode == 0 and "Delivered 0 notification(s), 0 failed." in early.stdout
        assert receiver.received() == []
        up = _cli(*sweep, "--now", "--json")
        assert up.returncode == 0, up.stdout + up.stderr
        assert json.loads(up.stdout) == {"delivered": 1, "failed": 0, "threads": {"t1": [1, 0]}}
        again = _cli(*sweep, "--now")
        assert "Delivered 0 notification(s), 0 failed." in again.stdout
        got = receiver.received()
    finally:
        receiver.stop()
    assert len(got) == 1 and got[0]["body"]["event_id"] == item.event_id
    assert got[0]["body"]["thread_id"] == "t1"


def test_bad_notify_options_say_what_to_pass(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="starts with http:// or https://"):
        ReActAgent(model(), [transfer], notify="ftp://x")
    with pytest.raises(TypeError, match="a webhook URL"):
        ReActAgent(model(), [transfer], notify=3)  # type: ignore[arg-type]
    db = str(tmp_path / "a.db")
    _child("--db", db, "pause", "t1")
    done = _cli("inbox", "notify", "--db", db)
    assert done.returncode == 2 and "give --webhook URL" in done.stderr
    done = _cli("inbox", "notify", "--db", db, "--webhook", "mailto:x")
    assert done.returncode == 2 and "starts with http:// or https://" in done.stderr


@pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")
async def test_the_async_twins_record_on_an_async_saver(tmp_path: Path) -> None:
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    from dynavec_langgraph.audit import aaudit_trail, arecord

    async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "a.db")) as saver:
        agent = make_agent(saver, None, fail_after=False)
        assert (await agent.arun("pay", thread_id="t1")).termination_reason == "interrupted"
        with pytest.raises(InvalidDecisionError):
            await agent.aresume(thread_id="t1", human_decision={"decisions": [{"type": "no"}]})
        done = await agent.aresume(thread_id="t1", human_decision="approved")
        assert done.output == "Done: Transferred 100."
        await arecord(saver, "t1", "expired", outcome="none pending", surface="sweeper")
        trail = await agent.aaudit("t1")
        assert _kinds(trail) == ["paused", "refused", "reasked", "decision", "expired"]
        assert trail == await aaudit_trail(saver, "t1")


def test_a_kill_while_the_receiver_is_up_delivers_at_least_once_with_one_event_id(
    tmp_path: Path,
) -> None:
    """Whether the killed process sent it before dying or not, the sweeper completes the
    delivery; a copy sent twice carries the same event id."""
    db = str(tmp_path / "a.db")
    receiver = Receiver(tmp_path / "hook.jsonl").start()
    try:
        killed = _child("--db", db, "--webhook", receiver.url, "--kill", "pause", "t1")
        assert killed.returncode == -signal.SIGKILL, killed.stderr
        swept = _cli("inbox", "notify", "--db", db, "--webhook", receiver.url, "--json")
        assert swept.returncode == 0, swept.stdout + swept.stderr
        got = receiver.received()
    finally:
        receiver.stop()
    with open_saver(db) as saver:
        [item] = outbox(saver, "t1")
    assert item.delivered
    assert len(got) >= 1 and {g["body"]["event_id"] for g in got} == {item.event_id}
    assert {g["headers"]["X-Dynavec-Event-Id"] for g in got} == {item.event_id}


def test_an_agent_with_a_store_records_in_the_store() -> None:
    from langgraph.store.memory import InMemoryStore

    store, saver = InMemoryStore(), InMemorySaver()
    agent = ReActAgent(model(), [transfer], checkpointer=saver, store=store, audit=True)
    agent.run("pay", thread_id="t1")
    agent.resume(thread_id="t1", human_decision="approved")
    assert _kinds(agent.audit("t1")) == ["paused", "decision"]
    assert _kinds(audit_trail(store, "t1")) == ["paused", "decision"]
    assert audit_trail(saver, "t1") == []  # the store is where the graph records
