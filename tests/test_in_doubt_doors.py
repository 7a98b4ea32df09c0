"""In-doubt calls of a parallel batch and behind an approval, through every door (issue 34,
silent cases 1 and 2).

Real parts: the fake payment service in its own process (``tests/payment_service.py``), the
agent in a child process (``tests/children/batch_pay.py``) SIGKILLed after its charge reached
the service and before the tool returned, a SQLite file and the PostgreSQL server the tests
start, the command line in its own process.

1. ``parallel_tool_calls=True``, the batch ``[a (retry), pay (ask)]``, killed in ``pay``: the
   next run holds ``pay`` (its batch had a finished call) and sends it again from a later
   checkpoint; its crash marks are on the held step's, and it pauses in doubt.
2. ``require_approval(pay)`` + ``on_crash="ask"``, killed after the approval while ``pay``
   ran: every door still shows the approval, so the next answer is for it. It is not taken as
   the in-doubt question's "run it again": refused (``StaleDecisionError`` at the package's
   doors; the raw graph pauses in doubt with the refusal in ``error``), nothing runs, and the
   in-doubt question is pending, before the approval is asked again.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dynavec_langgraph._exactly_once.gate import STALE_TEXT
from tests.children.batch_pay import A_LOG_ENV, HANG_ENV, SERVICE_ENV
from tests.children.scenario import ROOT, TIMEOUT, wait_for
from tests.children.warm import Child
from tests.children.warm import run as warm_run
from tests.payment_service import PaymentService

CHILD = "tests.children.batch_pay"


@pytest.fixture
def service(tmp_path: Path) -> Iterator[PaymentService]:
    with PaymentService(tmp_path) as running:
        yield running


def _env(service: PaymentService, tmp_path: Path, hang: Path | None = None) -> dict[str, str]:
    env = {**os.environ, SERVICE_ENV: service.url, A_LOG_ENV: str(tmp_path / "a.log")}
    env.pop(HANG_ENV, None)
    if hang is not None:
        env[HANG_ENV] = str(hang)
    return env


def _popen(env: dict[str, str], *args: str) -> Child:
    return Child(
        [sys.executable, *args], cwd=ROOT, env=env, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip


def _run(db: str, shape: str, env: dict[str, str], *args: str) -> dict[str, Any]:
    proc = _popen(env, "-m", CHILD, "--db", db, "--shape", shape, *args)
    out, err = proc.communicate(timeout=TIMEOUT)
    if proc.returncode != 0 or not out.strip():
        raise AssertionError(f"child failed ({proc.returncode}):\n{err}\n{out}")
    result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return result


def _crash(db: str, shape: str, service: PaymentService, tmp_path: Path, *args: str) -> str:
    """Run ``args`` until ``pay``'s charge reached the service, SIGKILL the child there; the
    call's idempotency key."""
    hang = tmp_path / "hang"
    hang.mkdir()
    env = _env(service, tmp_path, hang)
    proc = _popen(env, "-m", CHILD, "--db", db, "--shape", shape, *args)
    try:
        wait_for(hang / "charged", proc)
    finally:
        proc.kill()  # SIGKILL: no cleanup, no last write
        proc.communicate(timeout=TIMEOUT)
    assert proc.returncode == -signal.SIGKILL
    assert len(service.stats()["requests"]) == 1
    return (hang / "charged").read_text()


def _nodes(result: dict[str, Any]) -> list[str]:
    return [i["node_id"] for i in result["interrupts"]]


def _a_runs(tmp_path: Path) -> int:
    log = tmp_path / "a.log"
    return len(log.read_text().splitlines()) if log.exists() else 0


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return warm_run(
        [sys.executable, "-m", "dynavec_langgraph._cli", "inbox", *args],
        cwd=ROOT, env=env, timeout=TIMEOUT,
    )  # fmt: skip


# --- 1. a parallel batch -------------------------------------------------------------------


@pytest.mark.parametrize("door", ["raw", "agent"])
@pytest.mark.service  # child processes and the payment service
def test_a_parallel_batch_killed_in_pay_pauses_in_doubt_and_approve_charges_once(
    db: str, service: PaymentService, tmp_path: Path, door: str
) -> None:
    key = _crash(db, "batch", service, tmp_path, door, "run", "t1", "pay the invoice")
    assert _a_runs(tmp_path) == 1
    env = _env(service, tmp_path)

    paused = _run(db, "batch", env, door, "continue", "t1")
    assert paused["ok"], paused
    assert _nodes(paused) == ["in_doubt_pay"]  # not run again silently
    (value,) = paused["interrupts"]
    assert value["payload"]["in_doubt"] is True and value["payload"]["idempotency_key"] == key
    assert len(service.stats()["requests"]) == 1 and _a_runs(tmp_path) == 1

    done = _run(db, "batch", env, door, "resume", "t1", json.dumps({"type": "approve"}))
    assert done["ok"] and done["interrupts"] == [], done
    stats = service.stats()
    assert [r["key"] for r in stats["requests"]] == [key, key]  # run again under its key
    assert len(stats["charges"]) == 1
    assert _a_runs(tmp_path) == 1  # the batch's finished call never ran again
    assert "a ok" in done["messages"] and "charged ch_1 (42) replayed=True" in done["messages"]


@pytest.mark.parametrize("door", ["raw", "agent"])
@pytest.mark.service  # child processes and the payment service
def test_a_parallel_batch_killed_in_pay_reject_skips_it(
    db: str, service: PaymentService, tmp_path: Path, door: str
) -> None:
    key = _crash(db, "batch", service, tmp_path, door, "run", "t1", "pay the invoice")
    env = _env(service, tmp_path)
    assert _nodes(_run(db, "batch", env, door, "continue", "t1")) == ["in_doubt_pay"]
    done = _run(db, "batch", env, door, "resume", "t1", json.dumps({"type": "reject"}))
    assert done["ok"] and done["interrupts"] == [], done
    skipped = [m for m in done["messages"] if m.startswith("Not run again")]
    assert len(skipped) == 1 and key in skipped[0]
    assert len(service.stats()["requests"]) == 1 and _a_runs(tmp_path) == 1


# --- 2. behind an approval -----------------------------------------------------------------


def _approved_and_killed(db: str, service: PaymentService, tmp_path: Path, door: str) -> str:
    env = _env(service, tmp_path)
    assert _nodes(_run(db, "approval", env, door, "run", "t1", "pay the invoice")) == [
        "approve_pay"
    ]
    return _crash(db, "approval", service, tmp_path, door, "resume", "t1", json.dumps("approved"))


@pytest.mark.parametrize(
    "answer", [{"type": "approve"}, "approved", {"decisions": [{"type": "approve"}]}]
)
@pytest.mark.service  # child processes and the payment service
def test_after_a_crash_behind_an_approval_react_agent_refuses_the_old_approvals_answer(
    db: str, service: PaymentService, tmp_path: Path, answer: Any
) -> None:
    """ReActAgent.resume: the thread still shows ``approve_pay``; the answer meant for it is
    refused (StaleDecisionError: the call may have run), nothing runs, ``in_doubt_pay`` is
    pending; it is answered, then the approval is asked again, and pay runs under its key."""
    _the_old_approvals_answer_is_refused(db, service, tmp_path, "agent", answer)


@pytest.mark.parametrize("door", ["async", "astream"])
@pytest.mark.service  # child processes and the payment service
def test_after_a_crash_behind_an_approval_the_async_doors_refuse_the_old_approvals_answer(
    db: str, service: PaymentService, tmp_path: Path, door: str
) -> None:
    """The same through ``ReActAgent``'s async doors (the async tool node, ``aresuming``):
    ``arun`` / ``aresume``, and ``astream`` / ``astream_resume`` read to the end; the run,
    the approval killed in ``pay`` and every answer after it go through that door."""
    _the_old_approvals_answer_is_refused(db, service, tmp_path, door, {"type": "approve"})


def _the_old_approvals_answer_is_refused(
    db: str, service: PaymentService, tmp_path: Path, door: str, answer: Any
) -> None:
    key = _approved_and_killed(db, service, tmp_path, door)
    env = _env(service, tmp_path)

    refused = _run(db, "approval", env, door, "resume", "t1", json.dumps(answer))
    assert not refused["ok"] and refused["error"] == "StaleDecisionError", refused
    assert "may or may not have run" in refused["message"] and key in refused["message"]
    assert "'approve_pay'" in refused["message"] and "'in_doubt_pay'" in refused["message"]
    assert _nodes(refused) == ["in_doubt_pay"]  # asked now, durably
    (value,) = refused["interrupts"]
    assert value["payload"]["in_doubt"] is True and value["payload"]["idempotency_key"] == key
    assert len(service.stats()["requests"]) == 1  # nothing ran

    again = _run(db, "approval", env, door, "resume", "t1", json.dumps({"type": "approve"}))
    assert again["ok"] and _nodes(again) == ["approve_pay"], again  # then the approval
    assert len(service.stats()["requests"]) == 1

    done = _run(db, "approval", env, door, "resume", "t1", json.dumps("approved"))
    assert done["ok"] and done["interrupts"] == [], done
    stats = service.stats()
    assert [r["key"] for r in stats["requests"]] == [key, key] and len(stats["charges"]) == 1


@pytest.mark.parametrize("door", ["agent", "async"])
@pytest.mark.service  # child processes and the payment service
def test_after_a_crash_behind_an_approval_the_read_only_views_show_the_in_doubt_question(
    db: str, service: PaymentService, tmp_path: Path, door: str
) -> None:
    """What ``ReActAgent`` shows of the thread without answering it (``run()``'s
    ``ThreadPausedError``, ``get_checkpoint`` and ``list_checkpoints``, and their async twins)
    is the in-doubt question with the key, not the stale ``approve_pay`` the stored state
    still lists; reading writes nothing (the stored state still lists it) and runs nothing."""
    key = _approved_and_killed(db, service, tmp_path, door)
    env = _env(service, tmp_path)
    proc = _popen(env, "-m", CHILD, "--db", db, "--shape", "approval", door, "views", "t1")
    out, err = proc.communicate(timeout=TIMEOUT)
    assert proc.returncode == 0, err
    shown = json.loads(out.strip().splitlines()[-1])
    assert shown["stored"] == ["approve_pay"]  # nothing was written
    assert shown["paused"] == ["in_doubt_pay"], shown
    for view in (shown["checkpoint"], shown["listed"]):
        assert view["node_id"] == "in_doubt_pay", shown
        assert view["payload"]["in_doubt"] is True and view["payload"]["idempotency_key"] == key
    assert len(service.stats()["requests"]) == 1  # nothing ran


@pytest.mark.service  # child processes and the payment service
def test_after_a_crash_behind_an_approval_an_answer_naming_the_in_doubt_question_applies(
    db: str, service: PaymentService, tmp_path: Path
) -> None:
    """An answer that names ``in_doubt_pay`` (what ``inbox list`` shows) is the in-doubt
    question's at once: respond settles the call, nothing runs again."""
    _approved_and_killed(db, service, tmp_path, "agent")
    env = _env(service, tmp_path)
    told = {"in_doubt_pay": {"type": "respond", "message": "charged ch_1 (42)"}}
    done = _run(db, "approval", env, "agent", "decide", "t1", json.dumps(told))
    assert done["ok"] and done["interrupts"] == [], done
    assert "charged ch_1 (42)" in done["messages"]
    assert len(service.stats()["requests"]) == 1


@pytest.mark.service  # child processes and the payment service
def test_after_a_crash_behind_an_approval_the_raw_graph_asks_in_doubt_first(
    db: str, service: PaymentService, tmp_path: Path
) -> None:
    """The raw graph, ``Command(resume=...)`` for the approval the thread still shows: not
    applied; the in-doubt pause is pending with the refusal in ``error``; respond settles it
    without running anything."""
    key = _approved_and_killed(db, service, tmp_path, "raw")
    env = _env(service, tmp_path)
    moved = _run(db, "approval", env, "raw", "resume", "t1", json.dumps({"type": "approve"}))
    assert moved["ok"] and _nodes(moved) == ["in_doubt_pay"], moved
    (value,) = moved["interrupts"]
    assert value["payload"]["idempotency_key"] == key and value["error"].startswith(STALE_TEXT)
    assert value["action_requests"][0]["name"] == "pay"  # the HITL request format
    assert value["action_request"] == {"action": "pay", "args": {"amount": 42}}  # Agent Inbox
    assert len(service.stats()["requests"]) == 1

    told = {"type": "respond", "message": "charged ch_1 (42)"}
    done = _run(db, "approval", env, "raw", "resume", "t1", json.dumps(told))
    assert done["ok"] and done["interrupts"] == [], done
    assert "charged ch_1 (42)" in done["messages"]
    assert len(service.stats()["requests"]) == 1


@pytest.mark.service  # child processes and the payment service
def test_after_a_crash_behind_an_approval_the_inbox_lists_the_in_doubt_question_first(
    db: str, service: PaymentService, tmp_path: Path
) -> None:
    """``inbox list`` shows ``in_doubt_pay`` (not the approval the stored state still holds);
    ``inbox answer --approve`` (the old approval's answer) is refused (exit 2, no traceback),
    nothing ran; ``--node in_doubt_pay`` with reject skips the call."""
    key = _approved_and_killed(db, service, tmp_path, "agent")
    env = _env(service, tmp_path)
    where = ("--db", db, "--graph", f"{CHILD}:graph_approval")

    listed = _cli(env, "list", *where, "--json")
    assert listed.returncode == 0, listed.stderr
    assert "in_doubt_pay" in listed.stdout and key in listed.stdout
    assert "approve_pay" not in listed.stdout

    refused = _cli(env, "answer", *where, "--thread", "t1", "--approve")
    assert refused.returncode == 2, (refused.stdout, refused.stderr)
    assert "may or may not have run" in refused.stderr and "Traceback" not in refused.stderr
    assert len(service.stats()["requests"]) == 1

    listed = _cli(env, "list", *where, "--json")
    assert "in_doubt_pay" in listed.stdout and "approve_pay" not in listed.stdout

    decided = ("--node", "in_doubt_pay", "--decision", '{"type": "reject"}')
    done = _cli(env, "answer", *where, "--thread", "t1", *decided)
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert len(service.stats()["requests"]) == 1
    assert _cli(env, "list", *where, "--json").stdout.strip() in ("[]", "")


@pytest.mark.service  # child processes and the payment service
def test_after_a_crash_behind_an_approval_an_answer_by_the_approvals_id_is_refused(
    db: str, service: PaymentService, tmp_path: Path
) -> None:
    """The approval answered by its interrupt id (as the package's doors answer) in the run
    that died: that answer was lost with the run, so LangGraph gives the in-doubt question the
    approval's id. ``inbox answer --node <that id>`` was meant for the approval: refused
    (exit 2), nothing runs, not taken as "run it again"."""
    env = _env(service, tmp_path)
    paused = _run(db, "approval", env, "raw", "run", "t1", "pay the invoice")
    assert _nodes(paused) == ["approve_pay"]
    key = _crash(db, "approval", service, tmp_path, "raw", "resume-id", "t1", '"approved"')
    where = ("--db", db, "--graph", f"{CHILD}:graph_approval")
    [row] = json.loads(_cli(env, "list", *where, "--json").stdout)
    assert row["node_id"] == "in_doubt_pay"
    decided = ("--node", row["interrupt_id"], "--decision", json.dumps({"type": "approve"}))
    refused = _cli(env, "answer", *where, "--thread", "t1", *decided)
    assert refused.returncode == 2, (refused.stdout, refused.stderr)
    assert "may or may not have run" in refused.stderr and key in refused.stderr
    assert len(service.stats()["requests"]) == 1


# --- in-process: the async tool node, and what the remote client reads ----------------------


@pytest.mark.parametrize("run_async", [False, True], ids=["sync", "async"])
def test_a_held_call_sent_again_reads_its_marks_from_the_held_step(run_async: bool) -> None:
    """Both tool nodes (``guarded`` / ``aguarded``): ``pay`` dies after its start mark in a
    parallel batch whose other call finished; the next run holds it (a finished call in the
    batch) and sends it again from a later checkpoint, where it still pauses in doubt."""
    import asyncio

    from langchain_core.messages import ToolMessage
    from langchain_core.runnables import RunnableConfig
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.types import Command

    from dynavec_langgraph import create_react_agent, idempotency_key, tool
    from dynavec_langgraph.testing import ScriptedChatModel

    class Died(BaseException):
        """The process dying inside the tool (no end mark, no result)."""

    keys: list[str] = []
    looked: list[str] = []

    @tool(on_crash="retry")
    def look() -> str:
        """Look."""
        looked.append(idempotency_key())
        return "looked"

    def body(amount: int) -> str:
        keys.append(idempotency_key())
        if len(keys) == 1:
            raise Died
        return f"paid {amount}"

    # the first run dies once `look` returned and its result was saved (polled, then a
    # margin for the save): the batch had a finished call, so `pay` is held on the next run
    if run_async:

        @tool(on_crash="ask")
        async def pay(amount: int) -> str:
            """Pay."""
            for _ in range(int(TIMEOUT / 0.005)):  # polled: `look` runs in a worker thread
                if keys or looked:
                    break
                await asyncio.sleep(0.005)
            if not keys:
                await asyncio.sleep(0.2)
            return body(amount)

    else:

        @tool(on_crash="ask")
        def pay(amount: int) -> str:
            """Pay."""
            while not keys and not looked:
                time.sleep(0.005)
            if not keys:
                time.sleep(0.2)
            return body(amount)

    model = ScriptedChatModel(
        turns=[[{"name": "look", "args": {}}, {"name": "pay", "args": {"amount": 3}}], "done"]
    )
    saver = InMemorySaver()
    put, aput = saver.put_writes, saver.aput_writes

    def dying(task_id: str) -> None:
        if task_id.endswith(":raised") and len(keys) == 1:
            raise Died  # the end mark never lands: dead, as after a SIGKILL

    def put_writes(cfg: Any, writes: Any, task_id: str, task_path: str = "") -> None:
        dying(task_id)
        put(cfg, writes, task_id, task_path)

    async def aput_writes(cfg: Any, writes: Any, task_id: str, task_path: str = "") -> None:
        dying(task_id)
        await aput(cfg, writes, task_id, task_path)

    saver.put_writes = put_writes  # type: ignore[method-assign,assignment]
    saver.aput_writes = aput_writes  # type: ignore[method-assign,assignment]
    graph = create_react_agent(model, [look, pay], checkpointer=saver, parallel_tool_calls=True)
    config: RunnableConfig = {"configurable": {"thread_id": "held"}}

    def call(graph_input: Any) -> None:
        if run_async:
            asyncio.run(graph.ainvoke(graph_input, config, durability="sync"))
        else:
            graph.invoke(graph_input, config, durability="sync")

    with pytest.raises(Died):
        call({"messages": [("user", "go")]})
    call(None)
    (pending,) = graph.get_state(config).interrupts
    assert pending.value["node_id"] == "in_doubt_pay" and len(keys) == 1
    assert pending.value["payload"]["idempotency_key"] == keys[0]
    call(Command(resume={"type": "approve"}))
    assert graph.get_state(config).interrupts == () and keys == [keys[0], keys[0]]
    messages = graph.get_state(config).values["messages"]
    answers = [m.content for m in messages if isinstance(m, ToolMessage)]
    assert sorted(answers) == ["looked", "paid 3"] and len(looked) == 1


def test_superseded_names_only_a_new_in_doubt_pause_marked_superseded() -> None:
    """The refusal after a resume (``refuse_if_asked_again``, also ``RemoteReActAgent``'s):
    only a new in-doubt pause marked ``superseded``, not one already shown (a refused answer
    to the in-doubt question itself)."""
    from langgraph.types import Interrupt

    from dynavec_langgraph._exactly_once.shown import superseded

    old = Interrupt({"node_id": "approve_pay"}, id="1" * 32)
    doubt: dict[str, Any] = {
        "node_id": "in_doubt_pay",
        "payload": {"in_doubt": True, "superseded": True, "name": "pay", "idempotency_key": "k"},
    }
    text = superseded([old], [Interrupt(doubt, id="2" * 32)])
    assert text is not None and "'approve_pay'" in text and "'in_doubt_pay'" in text
    assert "may or may not have run" in text and "k" in text
    shown = Interrupt(doubt, id="2" * 32)
    assert superseded([shown], [Interrupt(doubt, id="3" * 32)]) is None  # asked again
    plain = {**doubt, "payload": {**doubt["payload"], "superseded": False}}
    assert superseded([old], [Interrupt(plain, id="2" * 32)]) is None
