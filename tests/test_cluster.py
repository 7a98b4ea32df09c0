"""The agent on two Agent Protocol servers over one PostgreSQL, driven by this package's
:class:`~dynavec_langgraph.remote.RemoteReActAgent` and ``inbox --server``, on two engines:

* ``langhost``: ``langhost serve`` (stock langgraph-api on ``langgraph-runtime-pg``, + Redis);
* ``aegra``: Aegra 0.6.0 (its own run handling; no Redis, no run queue, no run recovery).

The cluster (``tests/cluster.py``) runs each from its own cached virtualenv holding this
package's built wheel, in a folder outside the clone (the first test checks that the servers
import the wheel and nothing of the clone), and serves a copy of
``tests/langgraph_cluster.json``: the demo agent (``dynavec_agent``) and the gated
agent of ``tests/cluster_graph.py`` (``gated_agent``), the payment agents of
``tests/cluster_payment_graph.py`` (``pay_retry_agent``, ``pay_ask_agent``, ``pay_fail_agent``,
charging the fake payment service ``tests/payment_service.py`` the module starts), and the
approval agents of ``tests/approvals_graph.py`` (``pay_two``; ``pay_expiring``, whose approvals
expire with ``on_expire="raise"``). The servers append every finished tool run to one ledger
file, which the tests count. A part that cannot be installed or started fails the tests with
the reason.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import socket
import sys
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from langchain_core.messages import ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph_sdk import get_sync_client

from dynavec_langgraph import (
    AgentState,
    ApprovalPolicy,
    ApprovalTimeoutError,
    ConcurrentResumeError,
    InvalidDecisionError,
    NothingToResumeError,
    ReActAgent,
    StaleDecisionError,
    ThreadPausedError,
)
from dynavec_langgraph._cli import main
from dynavec_langgraph._demo import DEMO_SYSTEM_PROMPT, DEMO_TOOLS
from dynavec_langgraph._names import NOTE_NS
from dynavec_langgraph._remote.server import Plan
from dynavec_langgraph._remote.threads import Seen
from dynavec_langgraph.demo import LEDGER_ENV, demo_model
from dynavec_langgraph.records import AgentResult
from dynavec_langgraph.remote import (
    RemoteReActAgent,
    RemoteRunError,
    ServerUnavailableError,
    server_thread_id,
)
from dynavec_langgraph.testing import ScriptedChatModel
from tests import dist
from tests.approvals_graph import RAISE_IN, expiring_policy, expiring_tools
from tests.cluster import ENGINES, REPO, Cluster, ClusterUnavailable, Server, site_packages
from tests.cluster_graph import GATES_ENV
from tests.cluster_payment_graph import PAYMENT_ENV
from tests.payment_service import PaymentService
from tests.pg import PostgresServer, _free_port

CONFIG = Path(__file__).with_name("langgraph_cluster.json")
DEMO = "dynavec_agent"
HEARTBEAT = "4"  # s; a killed server's run is re-claimed in 2-4 heartbeats; shorter risks
# re-claiming a live run on a loaded machine


class Deployment:
    """The running cluster, its ledger and what the tests measure."""

    def __init__(
        self, cluster: Cluster, ledger: Path, gates: Path, payments: PaymentService
    ) -> None:
        self.cluster = cluster
        self.engine = cluster.engine
        self.ledger = ledger
        self.gates = gates
        self.payments = payments

    @property
    def a(self) -> Server:
        return self.cluster.running[0]

    @property
    def b(self) -> Server:
        return self.cluster.running[1]

    def agent(self, server: Server, assistant: str = DEMO, **kwargs: Any) -> RemoteReActAgent:
        kwargs.setdefault("timeout", 60)
        return RemoteReActAgent(server.url, assistant, **kwargs)

    def entries(self, thread_id: str) -> list[dict[str, Any]]:
        """The ledger lines the tools wrote for ``thread_id`` (any id form), in order."""
        sid = server_thread_id(thread_id)
        if not self.ledger.exists():
            return []
        lines = self.ledger.read_text(encoding="utf-8").splitlines()
        return [e for e in map(json.loads, lines) if e.get("thread_id") == sid]

    def wires(self, *names: str) -> list[tuple[str, Any]]:
        """The finished ``wire`` runs (``tests/inbox_graph.py``) to ``names``."""
        lines = self.ledger.read_text(encoding="utf-8").splitlines() if self.ledger.exists() else []
        entries = map(json.loads, lines)
        return [
            (e["to"], e["decision"]) for e in entries if e["tool"] == "wire" and e["to"] in names
        ]


@pytest.fixture(scope="module", params=ENGINES)
def deployment(
    request: pytest.FixtureRequest,
    postgres_server: PostgresServer,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Deployment]:
    engine = str(request.param)
    work = tmp_path_factory.mktemp(f"cluster-{engine}")
    ledger, gates = work / "ledger.jsonl", work / "gates"
    gates.mkdir()
    payments = PaymentService(work).start()  # tests/cluster_payment_graph.py charges it
    cluster = Cluster(
        config=CONFIG,
        servers=2,
        engine=engine,
        env={
            "LG_BG_JOB_HEARTBEAT": HEARTBEAT,
            "N_JOBS_PER_WORKER": "4",
            LEDGER_ENV: str(ledger),
            GATES_ENV: str(gates),
            PAYMENT_ENV: payments.url,
            "OPENAI_API_KEY": "",  # the scripted demo model, offline
        },
        work=work,
        postgres=postgres_server,
    )
    started = time.monotonic()
    try:
        cluster.start()
    except ClusterUnavailable as error:
        payments.stop()
        pytest.fail(f"the {engine} cluster could not start: {error}")
    try:
        yield Deployment(cluster, ledger, gates, payments)
    finally:
        cluster.stop()
        payments.stop()
        timings = ", ".join(f"{k} {v:.1f} s" for k, v in cluster.timings.items())
        took = time.monotonic() - started
        print(f"\n{engine} cluster: {timings}; module {took:.1f} s", file=sys.stderr)


def _tools(entries: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    return [(e["tool"], e.get("decision")) for e in entries if e.get("event", "finish") == "finish"]


def _shape(result: AgentResult) -> dict[str, Any]:
    """What a dynavec caller reads, without ids and balances."""
    payload = result.interrupt_payload or {}
    return {
        "finished": result.finished,
        "reason": result.termination_reason,
        "steps": [[c.name for c in s.tool_calls] for s in result.steps],
        "calls": result.tool_calls_count,
        "node_id": payload.get("node_id"),
        "payload": payload.get("payload"),
        "has_ids": bool(payload.get("tool_call_id")) if payload else None,
        "roles": [m.role for m in payload.get("messages", []) if m.role != "system"],
        "output": re.sub(r"Balance: \d+", "Balance: N", result.output),
    }


# --- what runs on the servers ------------------------------------------------------------------


def test_the_servers_run_the_built_wheel_not_the_clone(deployment: Deployment) -> None:
    """Each server imports this package from the wheel built from the tree, installed in its
    virtualenv, and no module of the clone (tests/installed_graph.py reports it)."""
    cluster = deployment.cluster
    assert cluster.venv is not None and cluster.served is not None
    wheel = dist.built().wheel
    for server in cluster.running:
        client = get_sync_client(url=server.url, timeout=60)
        thread = client.threads.create()
        where = client.runs.wait(thread["thread_id"], "installed", input={"clone": str(REPO)})
        assert isinstance(where, dict), where
        package = site_packages(cluster.venv) / "dynavec_langgraph/__init__.py"
        assert Path(where["package"]).resolve() == package.resolve()
        assert not Path(where["package"]).resolve().is_relative_to(REPO)
        app = cluster.served.parent.resolve()
        assert Path(where["graph"]) == app / "tests/installed_graph.py"
        source = json.loads(where["source"])
        assert source["url"] == wheel.as_uri()
        assert source["archive_info"]["hashes"] == {
            "sha256": hashlib.sha256(wheel.read_bytes()).hexdigest()
        }
        assert where["modules_from_clone"] == []
        assert where["path_from_clone"] == []


# --- pause on A, resume on B -----------------------------------------------------------------


def test_pause_via_a_resume_via_b_like_the_local_agent(deployment: Deployment) -> None:
    a, b = deployment.agent(deployment.a), deployment.agent(deployment.b)
    local = ReActAgent(demo_model(), DEMO_TOOLS, system_prompt=DEMO_SYSTEM_PROMPT)

    shared = AgentState({"customer": "c-17"})
    paused = a.run("Pay 75 to Alice", thread_id="pause-a-resume-b", state=shared)
    reference = local.run("Pay 75 to Alice", thread_id="local")

    assert paused.termination_reason == "interrupted"
    assert paused.interrupt_payload is not None
    assert paused.interrupt_payload["thread_id"] == "pause-a-resume-b"
    assert paused.interrupt_payload["payload"] == {"amount": 75, "to": "Alice"}
    assert _shape(paused) == _shape(reference)
    assert _tools(deployment.entries("pause-a-resume-b")) == [("get_balance", None)]

    sid = server_thread_id("pause-a-resume-b")
    before = a.sent(a.reading(sid)).checkpoint_id
    final = b.resume("approved", thread_id="pause-a-resume-b", state=shared)
    assert shared.data == {"customer": "c-17"}  # sent with the run, read back from the thread
    # the engine records the run that wrote the checkpoint after the pause: the resume's
    # (what the client reads to tell who answered first, _remote.runs.writer_after)
    (resumed,) = b.sync_client.runs.list(sid, limit=1)
    assert b.sent(b._first_writer(sid, before)) == str(resumed["run_id"])

    assert _shape(final) == _shape(local.resume(thread_id="local", human_decision="approved"))
    assert final.finished and final.output.endswith("Transferred 75 to Alice.")
    assert _tools(deployment.entries("pause-a-resume-b")) == [
        ("get_balance", None),
        ("transfer_funds", "approved"),
    ]
    assert a.result("pause-a-resume-b").output == final.output  # both servers see one thread


# --- two resumes at once, through A and B ------------------------------------------------------


class LateReader(RemoteReActAgent):
    """A caller that read the thread (``seen``) before others answered it."""

    def __init__(self, url: str, assistant_id: str, seen: Seen) -> None:
        super().__init__(url, assistant_id, timeout=60)
        self.seen = seen

    def reading(self, thread_id: str) -> Plan[Seen]:
        yield from ()  # a plan that asks the server nothing: its read is the one made before
        return self.seen


def _resume(
    start: threading.Barrier,
    outcomes: dict[str, Any],
    name: str,
    agent: RemoteReActAgent,
    decision: str,
    thread_id: str,
) -> None:
    start.wait()  # both callers send at the same moment
    try:
        outcomes[name] = agent.resume(decision, thread_id=thread_id)
    except ConcurrentResumeError as error:
        outcomes[name] = error


def test_simultaneous_resumes_via_a_and_b_run_the_tool_once(deployment: Deployment) -> None:
    """Both callers read the pause, then send their decisions at the same moment (langhost:
    its run queue rejects the second run; Aegra lets both runs run, the tool node's claim
    lets one decision through)."""
    first = deployment.agent(deployment.a)
    for round_ in range(3):
        thread_id = f"race-{round_}"
        first.run(f"Pay {round_ + 1} to Bob", thread_id=thread_id)
        seen = first.sent(first.reading(server_thread_id(thread_id)))
        a = LateReader(deployment.a.url, DEMO, seen)
        b = LateReader(deployment.b.url, DEMO, seen)
        start = threading.Barrier(2)
        outcomes: dict[str, Any] = {}
        workers = [
            threading.Thread(target=_resume, args=(start, outcomes, n, agent, d, thread_id))
            for n, agent, d in (("a", a, "approved"), ("b", b, "rejected"))
        ]
        for w in workers:
            w.start()
        for w in workers:
            w.join(timeout=120)

        won = [n for n, o in outcomes.items() if isinstance(o, AgentResult)]
        lost = [n for n, o in outcomes.items() if isinstance(o, ConcurrentResumeError)]
        assert len(won) == 1 and len(lost) == 1, outcomes
        decision = "approved" if won == ["a"] else "rejected"
        transfers = [t for t in _tools(deployment.entries(thread_id)) if t[0] == "transfer_funds"]
        assert transfers == [("transfer_funds", decision)]  # the tool ran once, the winner's
        reader = deployment.agent(deployment.b)  # a fresh read through B
        assert reader.result(thread_id).output == outcomes[won[0]].output


async def test_async_twins_and_a_late_resume_is_refused_not_applied(
    deployment: Deployment,
) -> None:
    a, b = deployment.agent(deployment.a), deployment.agent(deployment.b)
    paused = await a.arun("Pay 9 to Cleo", thread_id="late")
    assert paused.termination_reason == "interrupted"
    stale = b.sent(b.reading(server_thread_id("late")))  # B read the pause...
    assert [i.id for i in stale.interrupts] == [paused.interrupt_payload["interrupt_id"]]  # type: ignore[index]
    final = await a.aresume("approved", thread_id="late")  # ...A answered it first...

    late = LateReader(deployment.b.url, DEMO, stale)
    with pytest.raises(ConcurrentResumeError, match="first"):  # ...then B sends its decision
        late.resume("rejected", thread_id="late")

    assert _tools(deployment.entries("late")) == [
        ("get_balance", None),
        ("transfer_funds", "approved"),
    ]
    assert (await b.aresult("late")).output == final.output


# --- errors, as ReActAgent raises them ----------------------------------------------------------


def test_remote_agent_raises_the_errors_of_react_agent(deployment: Deployment) -> None:
    a = deployment.agent(deployment.a)
    with pytest.raises(NothingToResumeError, match="unknown thread"):
        a.resume("approved", thread_id="never-ran")
    paused = a.run("Pay 5 to Dan", thread_id="errors")

    with pytest.raises(ThreadPausedError, match="resume"):
        a.run("Also pay 1 to Eve", thread_id="errors")
    with pytest.raises(InvalidDecisionError, match="human_decision"):
        a.resume(thread_id="errors")
    with pytest.raises(InvalidDecisionError, match="not pending"):
        a.resume(thread_id="errors", decisions={"approve_wire": "approved"})
    with pytest.raises(InvalidDecisionError, match="was refused"):
        a.resume({"decision": "maybe"}, thread_id="errors")

    again = a.result("errors").interrupt_payload  # still paused, the same approval asked again
    assert again is not None and paused.interrupt_payload is not None
    for key in ("node_id", "payload", "tool_call_id"):
        assert again[key] == paused.interrupt_payload[key]
    assert _tools(deployment.entries("errors")) == [("get_balance", None)]
    final = a.resume(thread_id="errors", decisions={"approve_transfer": "rejected"})
    assert final.output.endswith("Transfer of 5 to Dan was rejected.")
    with pytest.raises(NothingToResumeError, match="not paused"):
        a.resume("approved", thread_id="errors")
    assert _tools(deployment.entries("errors")) == [
        ("get_balance", None),
        ("transfer_funds", "rejected"),
    ]
    unknown = {"langhost": "Invalid assistant: 'no_such_graph'", "aegra": "no_such_graph"}
    with pytest.raises(RemoteRunError, match=unknown[deployment.engine]):
        deployment.agent(deployment.a, "no_such_graph").run("Pay 1 to Al")


def test_unreachable_and_silent_servers_give_a_clear_error() -> None:
    closed = RemoteReActAgent(f"http://127.0.0.1:{_free_port()}", DEMO, timeout=5)
    with pytest.raises(ServerUnavailableError, match="cannot reach"):
        closed.run("Pay 1 to Al")
    with socket.socket() as silent:  # accepts connections, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        with pytest.raises(ServerUnavailableError, match="did not answer in time"):
            RemoteReActAgent(url, DEMO, timeout=1).resume("approved", thread_id="t1")


def test_without_langgraph_sdk_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "langgraph_sdk", None)
    with pytest.raises(ImportError, match=r"dynavec-langgraph\[studio\]"):
        RemoteReActAgent("http://127.0.0.1:1", DEMO)


# --- inbox --server, against the database mode ---------------------------------------------------


def _cli(capsys: pytest.CaptureFixture[str], *args: str, code: int = 0) -> str:
    capsys.readouterr()
    assert main(list(args)) == code
    out, err = capsys.readouterr()
    return out if code == 0 else err


def _same(text: str, *names: tuple[str, str]) -> str:
    for value, name in names:
        text = text.replace(value, name)
    text = re.sub(r"since \S+", "since T", text)
    text = re.sub(r"interrupt [0-9a-f]{32}", "interrupt I", text)
    text = re.sub(r"digest [0-9a-f]{32}", "digest D", text)  # covers the call id: theirs differ
    return re.sub(r"Balance: \d+", "Balance: N", text)


def test_inbox_server_lists_and_answers_like_the_database_mode(
    deployment: Deployment,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv(LEDGER_ENV, raising=False)
    a, b = deployment.agent(deployment.a), deployment.b.url
    a.run("Pay 12 to Ida", thread_id="inbox")
    sid = server_thread_id("inbox")
    db = str(tmp_path / "inbox.db")
    _cli(capsys, "demo", "--db", db, "--thread", sid, "--message", "Pay 12 to Ida")

    local = _cli(capsys, "inbox", "list", "--db", db)
    remote = _cli(capsys, "inbox", "list", "--server", b, "--assistant", DEMO)
    [row] = [line for line in remote.splitlines() if line.startswith(sid)]
    assert _same(local, (db, "HERE")).splitlines()[1] == _same(row)
    assert "pending approval(s) in " + b in remote
    assert sid not in _cli(capsys, "inbox", "list", "--server", b, "--assistant", "gated_agent")
    [local_json] = json.loads(_cli(capsys, "inbox", "list", "--db", db, "--json"))
    [remote_json] = [
        r
        for r in json.loads(_cli(capsys, "inbox", "list", "--server", b, "--json"))
        if r["thread_id"] == sid
    ]
    for key in ("thread_id", "node_id", "payload"):
        assert remote_json[key] == local_json[key]
    assert remote_json["tool_call"]["args"] == local_json["tool_call"]["args"]

    answer = ("inbox", "answer", "--thread", sid, "--approve")
    local = _cli(capsys, *answer[:2], "--db", db, *answer[2:])
    remote = _cli(capsys, *answer[:2], "--server", b, *answer[2:])
    assert _same(remote) == _same(local)
    assert remote.splitlines()[-1].endswith("Transferred 12 to Ida.")
    assert _tools(deployment.entries(sid)) == [
        ("get_balance", None),
        ("transfer_funds", "approved"),
    ]

    again = _cli(capsys, *answer[:2], "--server", b, *answer[2:], code=2)
    assert "is not paused: nothing to resume" in again
    unknown = _cli(
        capsys, "inbox", "answer", "--server", b, "--thread", "nope", "--approve", code=2
    )
    assert "unknown thread 'nope'" in unknown
    both = _cli(capsys, "inbox", "list", "--server", b, "--db", db, code=2)
    assert "--db PATH_OR_URI" in both and "--server URL" in both
    assert len(_tools(deployment.entries(sid))) == 2  # nothing ran again


def test_several_pending_approvals_decisions_and_inbox_node(
    deployment: Deployment, capsys: pytest.CaptureFixture[str]
) -> None:
    a = deployment.agent(deployment.a, "parallel_agent")
    b = deployment.agent(deployment.b, "parallel_agent")
    paused = a.run("wire 5 to Uma and 7 to Vic", thread_id="parallel")
    assert paused.interrupt_payload is not None
    pending = {p["payload"]["to"]: p["interrupt_id"] for p in paused.interrupt_payload["pending"]}
    assert sorted(pending) == ["Uma", "Vic"]
    with pytest.raises(InvalidDecisionError, match="2 decisions are pending"):
        b.resume("approved", thread_id="parallel")
    sid, url = server_thread_id("parallel"), deployment.b.url
    refused = _cli(capsys, "inbox", "answer", "--server", url, "--thread", sid, "--approve", code=2)
    assert "2 decisions are pending" in refused and "--node" in refused
    assert deployment.wires("Uma", "Vic") == []

    stale = b.sent(b.reading(sid))  # a caller reads both pauses...
    partly = _cli(
        capsys, "inbox", "answer", "--server", url, "--thread", sid, "--node", pending["Uma"],
        "--approve",
    )  # fmt: skip  # ...the inbox answers Uma's first
    assert "is still paused" in partly and "'approve_wire'" in partly
    assert f"inbox answer --server {url} --thread {sid} --approve" in partly  # one left
    assert deployment.wires("Uma", "Vic") == [("Uma", "approved")]

    late = LateReader(deployment.b.url, "parallel_agent", stale)
    with pytest.raises(ConcurrentResumeError, match="first"):  # Uma's was answered already
        late.resume(thread_id="parallel", decisions={pending["Uma"]: "rejected"})
    final = late.resume(thread_id="parallel", decisions={pending["Vic"]: "rejected"})  # not yet

    assert final.finished
    assert "Wired 5 to Uma." in final.output and "Wire to Vic refused." in final.output
    assert deployment.wires("Uma", "Vic") == [("Uma", "approved"), ("Vic", "rejected")]


# --- on_expire="raise": ApprovalTimeoutError, as ReActAgent raises it -------------------------

EXPIRING = "pay_expiring"


class Clocked(RemoteReActAgent):
    """A client whose clock is ``offset`` away from the servers' (the paused tool on the
    server compares the deadline with the server's clock)."""

    def __init__(self, url: str, assistant_id: str, offset: timedelta) -> None:
        super().__init__(url, assistant_id, timeout=60)
        self.offset = offset

    def _now(self) -> datetime:
        return datetime.now(UTC) + self.offset


def _deadline(agent: RemoteReActAgent, thread_id: str) -> datetime:
    (pending,) = agent.sync_client.threads.get_state(server_thread_id(thread_id))["interrupts"]
    value: Any = pending["value"]
    assert value["approval"]["on_expire"] == "raise"
    return datetime.fromisoformat(value["expires_at"])


def _told(agent: RemoteReActAgent, thread_id: str) -> list[str]:
    """The tool answers of ``thread_id``, deadlines replaced by ``D``."""
    values: Any = agent.sync_client.threads.get_state(server_thread_id(thread_id))["values"]
    answers = [str(m["content"]) for m in values["messages"] if m["type"] == "tool"]
    return [re.sub(r"expired at \S+\+00:00", "expired at D", a) for a in answers]


class _Clock:
    def __init__(self) -> None:
        self.offset = timedelta()

    def __call__(self) -> datetime:
        return datetime.now(UTC) + self.offset


def _local_timeouts() -> tuple[str, str, list[str]]:
    """What ``ReActAgent`` raises on the same agent (its tools and model) for an expired
    ``pay`` approval: from ``resume`` and from ``run`` (thread ids ``exp-resume`` and
    ``exp-run``), and the tool answer the thread then holds."""
    clock = _Clock()
    local = ReActAgent(
        ScriptedChatModel(policy=expiring_policy),
        expiring_tools(),
        checkpointer=InMemorySaver(),
        approval_policy=ApprovalPolicy(clock=clock),
    )
    local.run("pay 3 to Di", thread_id="exp-resume")
    local.run("pay 5 to Fay", thread_id="exp-run")
    clock.offset = timedelta(seconds=RAISE_IN + 1)
    with pytest.raises(ApprovalTimeoutError) as by_resume:
        local.resume(thread_id="exp-resume", human_decision="approved")
    with pytest.raises(ApprovalTimeoutError) as by_run:
        local.run("pay 50 to Zed", thread_id="exp-run")
    state = local.graph.get_state({"configurable": {"thread_id": "exp-resume"}})
    told = [str(m.content) for m in state.values["messages"] if isinstance(m, ToolMessage)]
    told = [re.sub(r"expired at \S+\+00:00", "expired at D", a) for a in told]
    return str(by_resume.value), str(by_run.value), told


async def test_on_expire_raise_gives_approval_timeout_error_as_react_agent_does(
    deployment: Deployment, capsys: pytest.CaptureFixture[str]
) -> None:
    """An approval whose policy says ``on_expire="raise"``, answered (``resume`` /
    ``aresume``) or run on (``run`` / ``arun``) through B after its deadline: the paused tool
    settles it on the server (the call does not run) and the client raises dynavec's
    ``ApprovalTimeoutError`` with ``ReActAgent``'s message. Also a decision the client sends
    before the deadline by its clock that the server's tool gets after it (``require_approval``
    tells why in the tool answer), a plain ``interrupt()`` pause, and a client clock ahead of
    the server's (the tool refuses the expiry answer: the decision is then sent as given).
    ``inbox answer --server`` (which answers through ``RemoteReActAgent``) fails with the same
    message, as the database mode does."""
    a, b = deployment.agent(deployment.a, EXPIRING), deployment.agent(deployment.b, EXPIRING)
    behind = Clocked(deployment.b.url, EXPIRING, -timedelta(hours=1))
    ahead = Clocked(deployment.b.url, EXPIRING, timedelta(hours=1))
    goals = {
        "exp-resume": "pay 3 to Di",
        "exp-aresume": "pay 4 to Ed",
        "exp-run": "pay 5 to Fay",
        "exp-arun": "pay 6 to Gus",
        "exp-late": "pay 7 to Hal",
        "exp-inbox": "pay 2 to Kim",
        "exp-refund": "refund 8 to Ivy within 3",
        "exp-skew": "refund 9 to Jo within 600",
    }
    deadlines = []
    for thread_id, goal in goals.items():
        assert a.run(goal, thread_id=thread_id).termination_reason == "interrupted"
        deadlines.append(_deadline(a, thread_id))

    # a client clock an hour ahead sees the 600 s approval expired: the server's tool does
    # not, asks again, and the client sends the decision as given: the refund runs once
    done = ahead.resume("approved", thread_id="exp-skew")
    assert done.finished and done.output == "Done: Refunded 9 to Jo."
    assert [e for e in _entries_of(deployment, "refund") if e["to"] == "Jo"] == [
        {"tool": "refund", "to": "Jo", "decision": "ran"}
    ]

    await asyncio.sleep(max(0.0, (max(deadlines[:-1]) - datetime.now(UTC)).total_seconds()) + 0.5)
    local_resume, local_run, local_told = _local_timeouts()
    assert local_resume == (
        f"Approval request at node 'approve_pay' for thread 'exp-resume' timed out after "
        f"{RAISE_IN} seconds."
    )

    with pytest.raises(ApprovalTimeoutError) as caught:
        b.resume("approved", thread_id="exp-resume")
    assert str(caught.value) == local_resume  # ReActAgent's message, for the caller's thread id
    assert (caught.value.thread_id, caught.value.node_id) == ("exp-resume", "approve_pay")
    assert caught.value.timeout_seconds == RAISE_IN
    assert _told(b, "exp-resume") == local_told  # the same settlement in the thread
    assert b.result("exp-resume").finished
    with pytest.raises(NothingToResumeError, match="not paused"):  # settled: nothing pending
        b.resume("approved", thread_id="exp-resume")

    with pytest.raises(ApprovalTimeoutError, match="'exp-aresume' timed out after"):
        await b.aresume("approved", thread_id="exp-aresume")

    with pytest.raises(ApprovalTimeoutError) as caught:
        b.run("pay 50 to Zed", thread_id="exp-run")
    assert str(caught.value) == local_run
    with pytest.raises(ApprovalTimeoutError, match="'exp-arun' timed out after"):
        await b.arun("pay 60 to Zoe", thread_id="exp-arun")
    for thread_id in ("exp-run", "exp-arun"):  # settled, and the new goal was not sent
        values: Any = b.sync_client.threads.get_state(server_thread_id(thread_id))["values"]
        humans = [m["content"] for m in values["messages"] if m["type"] == "human"]
        assert humans == [goals[thread_id]] and _told(b, thread_id) == local_told

    # the client's clock an hour behind: it sends the decision; the server's tool settles it
    # as expired and its answer says so
    with pytest.raises(ApprovalTimeoutError, match="'exp-late' timed out after"):
        behind.resume("approved", thread_id="exp-late")

    # a plain interrupt() pause with on_expire="raise": the tool gets a rejection
    with pytest.raises(ApprovalTimeoutError) as caught:
        b.resume("approved", thread_id="exp-refund")
    assert str(caught.value) == (
        "Approval request at node 'approve_refund' for thread 'exp-refund' timed out after 3 "
        "seconds."
    )
    assert _told(b, "exp-refund") == ["Refund to Ivy not approved (rejected)."]

    refused = _cli(
        capsys, "inbox", "answer", "--server", deployment.b.url, "--thread", "exp-inbox",
        "--approve", code=2,
    )  # fmt: skip
    assert (
        "error: Approval request at node 'approve_pay' for thread 'exp-inbox' timed out after "
        f"{RAISE_IN} seconds." in refused
    )
    assert _told(b, "exp-inbox") == local_told

    paid = {e["to"] for e in _entries_of(deployment, "pay")}
    assert paid.isdisjoint({"Di", "Ed", "Fay", "Gus", "Hal", "Kim", "Zed", "Zoe"})  # none late
    assert [e["to"] for e in _entries_of(deployment, "refund")] == ["Jo"]


def _entries_of(deployment: Deployment, tool: str) -> list[dict[str, Any]]:
    if not deployment.ledger.exists():
        return []
    lines = deployment.ledger.read_text(encoding="utf-8").splitlines()
    return [e for e in map(json.loads, lines) if e.get("tool") == tool]


# --- a server killed after its tool's charge reached the payment service ------------------------


def _start_paying(
    deployment: Deployment, assistant: str, label: str, approve: bool
) -> tuple[str, Any]:
    """Start, through A, the run of ``assistant`` on thread ``label`` that charges: its first
    run (the model calls ``pay``), or with ``approve`` the run answering the approval the
    first run paused at (``"approved"``, keyed by its interrupt id, as ``RemoteReActAgent``
    does). Return the server's thread id and the run."""
    thread_id = server_thread_id(label)
    client = deployment.agent(deployment.a, assistant).sync_client
    client.threads.create(thread_id=thread_id, if_exists="do_nothing")
    job: dict[str, Any] = {"messages": [{"role": "user", "content": "pay the invoice"}]}
    if not approve:
        run = client.runs.create(
            thread_id, assistant, input=job, multitask_strategy="reject", durability="sync"
        )
        return thread_id, run
    paused = deployment.agent(deployment.a, assistant).run("pay the invoice", thread_id=label)
    assert paused.interrupt_payload and paused.interrupt_payload["node_id"] == "approve_pay"
    (pending,) = client.threads.get_state(thread_id)["interrupts"]
    run = client.runs.create(
        thread_id, assistant, command={"resume": {pending["id"]: "approved"}},
        multitask_strategy="reject", durability="sync",
    )  # fmt: skip
    return thread_id, run


def _charge_then_kill(
    deployment: Deployment, assistant: str, label: str, approve: bool = False
) -> tuple[str, str, Server, Server, dict[str, Any]]:
    """Start a run of ``assistant`` through A; SIGKILL the server that runs it once its
    ``pay`` charged the service (the tool then waits at its gate: it never returned); open
    the gate. Return the thread id, the run id, the killed server, the other one and the
    ledger entry of the charge (its ``key``, ``charge`` id). ``approve``: the agent asks an
    approval first (``pay_approved_agent``): the run pauses, and the run killed is the one
    that answers it ``"approved"`` (keyed by its interrupt id, as ``RemoteReActAgent`` does)."""
    thread_id, run = _start_paying(deployment, assistant, label, approve)
    deadline = time.monotonic() + 60
    while not [e for e in deployment.entries(thread_id) if e["tool"] == "pay"]:
        assert time.monotonic() < deadline, "the run never charged"
        time.sleep(0.05)  # the run runs in a server process; poll the ledger it writes
    [charged] = deployment.entries(thread_id)
    [victim] = [s for s in deployment.cluster.running if s.pid == charged["pid"]]
    [survivor] = [s for s in deployment.cluster.running if s is not victim]
    deployment.cluster.kill(victim)
    (deployment.gates / thread_id).touch()
    requests = [r for r in deployment.payments.stats()["requests"] if r["key"] == charged["key"]]
    assert len(requests) == 1 and charged["replayed"] is False
    return thread_id, run["run_id"], victim, survivor, charged


def _charges(deployment: Deployment, key: str) -> tuple[int, int]:
    """(requests, charges) the payment service saw under ``key``: its requests with that key,
    and the distinct charges it answered them with (the ledger holds the answers)."""
    requests = [r for r in deployment.payments.stats()["requests"] if r["key"] == key]
    lines = deployment.ledger.read_text(encoding="utf-8").splitlines()
    charges = {e["charge"] for e in map(json.loads, lines) if e.get("key") == key}
    return len(requests), len(charges)


def _continue_on_b(
    deployment: Deployment, thread_id: str, run_id: str, survivor: Server, assistant: str
) -> None:
    """Let B finish the thread. langhost: B re-claims the killed server's run; wait for it.
    Aegra 0.6.0 has no run recovery (the run stays ``running``): continue the thread through B
    explicitly: a new run whose command adds no message (a continuation from the checkpoint,
    like ``invoke(None)``: Aegra refuses ``input=None``, LangGraph an empty ``Command``),
    interrupting the stuck run."""
    client = deployment.agent(survivor, assistant).sync_client
    if deployment.engine == "langhost":
        client.runs.join(thread_id, run_id)
        return
    time.sleep(3)  # a recovering engine would have re-claimed the run by now (langhost: ~2 s)
    assert client.runs.get(thread_id, run_id)["status"] == "running"  # nobody re-claims it
    again = client.runs.create(
        thread_id, assistant, command={"update": {"messages": []}}, durability="sync",
        multitask_strategy="interrupt",
    )  # fmt: skip
    client.runs.join(thread_id, again["run_id"])
    status = client.runs.get(thread_id, again["run_id"])["status"]
    print(f"\naegra: the continuation run ended {status!r}", file=sys.stderr)
    assert client.runs.get(thread_id, run_id)["status"] == "running"  # still: never closed


def test_sigkill_after_the_charge_retry_charges_once_through_b(deployment: Deployment) -> None:
    """``on_crash="retry"``: B re-runs the call under the same key (langhost: in the re-claimed
    run; Aegra: in the continuation B is asked for); the service sees two requests with one key
    and charges once."""
    assistant = "pay_retry_agent"
    thread_id, run_id, victim, survivor, charged = _charge_then_kill(deployment, assistant, "pay-r")
    key, done = (
        charged["key"],
        f"Done: charged {charged['charge']} (42) key={charged['key']} replayed=True",
    )
    try:
        _continue_on_b(deployment, thread_id, run_id, survivor, assistant)
        result = deployment.agent(survivor, assistant).result(thread_id)
        assert result.output == done
        assert _charges(deployment, key) == (2, 1)  # two requests, one key, charged once
        events = [(e["pid"], e["key"], e["replayed"]) for e in deployment.entries(thread_id)]
        assert events == [(victim.pid, key, False), (survivor.pid, key, True)]
    finally:
        deployment.cluster.replace(victim)


def test_sigkill_after_the_charge_ask_pauses_on_b_and_the_inbox_answers(
    deployment: Deployment,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``on_crash="ask"``: B's re-claimed run pauses in doubt (thread state interrupts,
    ``inbox list --server``, ``RemoteReActAgent``); ``inbox answer --server`` with approve runs
    it again under the same key: charged once."""
    monkeypatch.delenv(LEDGER_ENV, raising=False)
    assistant = "pay_ask_agent"
    thread_id, run_id, victim, survivor, charged = _charge_then_kill(deployment, assistant, "pay-a")
    key, done = (
        charged["key"],
        f"Done: charged {charged['charge']} (42) key={charged['key']} replayed=True",
    )
    try:
        _continue_on_b(deployment, thread_id, run_id, survivor, assistant)
        client = deployment.agent(survivor, assistant).sync_client
        (pending,) = client.threads.get_state(thread_id)["interrupts"]
        value = pending["value"]
        assert value["node_id"] == "in_doubt_pay" and value["payload"]["in_doubt"] is True
        assert value["payload"]["idempotency_key"] == key
        assert "may or may not have run" in value["description"]
        assert _charges(deployment, key) == (1, 1)  # nothing ran on B

        paused = deployment.agent(survivor, assistant).result(thread_id)
        assert paused.termination_reason == "interrupted" and paused.interrupt_payload
        assert paused.interrupt_payload["node_id"] == "in_doubt_pay"

        # a stale plain "approved" (an approval re-sent) is no answer: asked again, nothing runs
        with pytest.raises(InvalidDecisionError, match="'approved' is no answer to an in-doubt"):
            deployment.agent(survivor, assistant).resume("approved", thread_id=thread_id)
        assert _charges(deployment, key) == (1, 1)

        url = survivor.url
        [row] = [
            r
            for r in json.loads(_cli(capsys, "inbox", "list", "--server", url, "--json"))
            if r["thread_id"] == thread_id
        ]
        assert row["node_id"] == "in_doubt_pay" and row["payload"]["idempotency_key"] == key
        listed = _cli(capsys, "inbox", "list", "--server", url, "--assistant", assistant)
        assert thread_id in listed and "in_doubt_pay" in listed

        answered = _cli(
            capsys,
            "inbox",
            "answer",
            "--server",
            url,
            "--thread",
            thread_id,
            "--decision",
            json.dumps({"type": "approve"}),
        )
        assert answered.splitlines()[-1].endswith(f"key={key} replayed=True"), answered
        assert _charges(deployment, key) == (2, 1)  # run again under the key: charged once
        final = deployment.agent(survivor, assistant).result(thread_id)
        assert final.finished and final.output == done
    finally:
        deployment.cluster.replace(victim)


def _charge_then_kill_all(
    deployment: Deployment, jobs: dict[str, str], approve: bool = False
) -> tuple[dict[str, tuple[str, str, dict[str, Any]]], Server]:
    """``_charge_then_kill`` for several threads at once (``jobs``: label -> assistant):
    start each run through A; once every ``pay`` charged the service, SIGKILL every server
    that runs one (langhost's run queue may give them to both servers: then a new server is
    started in the first one's place, and it re-claims them). ``approve``: each run killed
    answers the approval its thread paused at first (:func:`_start_paying`). Return label ->
    (thread id, run id, ledger entry of the charge), and the server left to continue them."""
    runs: dict[str, tuple[str, str]] = {}
    for label, assistant in jobs.items():
        thread_id, run = _start_paying(deployment, assistant, label, approve)
        runs[label] = (thread_id, str(run["run_id"]))
    deadline = time.monotonic() + 60
    while not all(deployment.entries(t) for t, _ in runs.values()):
        assert time.monotonic() < deadline, "a run never charged"
        time.sleep(0.05)  # the runs run in server processes; poll the ledger they write
    charged = {label: deployment.entries(t) for label, (t, _) in runs.items()}
    pids = {entry["pid"] for (entry,) in charged.values()}
    victims = [s for s in deployment.cluster.running if s.pid in pids]
    for victim in victims:
        deployment.cluster.kill(victim)
    for thread_id, _ in runs.values():
        (deployment.gates / thread_id).touch()
    survivors = [s for s in deployment.cluster.running if s not in victims]
    survivor = survivors[0] if survivors else deployment.cluster.replace(victims[0])
    for (entry,) in charged.values():
        assert _charges(deployment, entry["key"]) == (1, 1) and entry["replayed"] is False
    return {k: (t, r, charged[k][0]) for k, (t, r) in runs.items()}, survivor


def _revive(deployment: Deployment) -> None:
    """A new server in the place of every killed one."""
    for server in list(deployment.cluster.running):
        if server.proc.poll() is not None:
            deployment.cluster.replace(server)


def _failure(client: Any, thread_id: str) -> str:
    """What the failed runs of ``thread_id`` say (langhost: the joined run's ``__error__``;
    Aegra: the run's ``error_message``)."""
    failed = [r for r in client.runs.list(thread_id, limit=10) if r["status"] == "error"]
    assert failed, "no run of the thread failed"
    return " ".join(
        str(r.get("error_message") or "") or json.dumps(client.runs.join(thread_id, r["run_id"]))
        for r in failed
    )


def test_sigkill_after_the_charge_ask_respond_reject_and_fail_through_b(
    deployment: Deployment,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The other answers of the in-doubt question (``approve``: the test above), and
    ``on_crash="fail"``, on three threads killed at once: ``respond`` (it ran, here is its
    result; through ``RemoteReActAgent``) answers the call with the result and nothing runs;
    ``reject`` (through ``inbox answer --server``, LangChain's decision format) answers it as
    not run again and nothing runs; ``fail``: the continued run fails with the
    ``InDoubtCallError`` naming the call and its key, nothing runs, and a run with
    ``configurable["dynavec_in_doubt"] = {call_id: "retry"}`` runs it again under the key:
    charged once."""
    monkeypatch.delenv(LEDGER_ENV, raising=False)
    jobs = {"pay-respond": "pay_ask_agent", "pay-reject": "pay_ask_agent"}
    jobs["pay-fail"] = "pay_fail_agent"
    runs, survivor = _charge_then_kill_all(deployment, jobs)
    try:
        for label, (thread_id, run_id, _) in runs.items():
            _continue_on_b(deployment, thread_id, run_id, survivor, jobs[label])

        # respond: answered with the result given, nothing runs
        thread_id, _, charged = runs["pay-respond"]
        key, told = charged["key"], f"charged {charged['charge']} (42)"
        asked = deployment.agent(survivor, "pay_ask_agent")
        paused = asked.result(thread_id)
        assert paused.interrupt_payload and paused.interrupt_payload["node_id"] == "in_doubt_pay"
        final = asked.resume({"type": "respond", "message": told}, thread_id=thread_id)
        assert final.finished and final.output == f"Done: {told}"
        assert _tool_answers(asked, thread_id) == [told]
        assert _charges(deployment, key) == (1, 1)

        # reject: answered as not run again (the key in the answer), nothing runs
        thread_id, _, charged = runs["pay-reject"]
        key = charged["key"]
        (pending,) = asked.sync_client.threads.get_state(thread_id)["interrupts"]
        assert pending["value"]["payload"]["idempotency_key"] == key
        rejected = _cli(
            capsys, "inbox", "answer", "--server", survivor.url, "--thread", thread_id,
            "--decision", json.dumps({"decisions": [{"type": "reject"}]}),
        )  # fmt: skip
        assert "\nAnswer: Done: Not run again: the call of `pay`" in rejected, rejected
        (answer,) = _tool_answers(asked, thread_id)
        assert answer.startswith("Not run again") and key in answer
        assert asked.result(thread_id).finished
        assert _charges(deployment, key) == (1, 1)

        # fail: the continued run fails naming the call and its key; nothing runs
        thread_id, _, charged = runs["pay-fail"]
        key = charged["key"]
        failing = deployment.agent(survivor, "pay_fail_agent")
        assert failing.sync_client.threads.get(thread_id)["status"] == "error"
        with pytest.raises(RemoteRunError, match="failed on the server"):
            failing.result(thread_id)
        values: Any = failing.sync_client.threads.get_state(thread_id)["values"]
        (call,) = values["messages"][-1]["tool_calls"]
        error = _failure(failing.sync_client, thread_id)
        assert f"call {call['id']!r} of 'pay' was running when its process stopped" in error
        assert f"(idempotency key {key!r})" in error and "dynavec_in_doubt" in error
        if deployment.engine == "langhost":  # Aegra keeps the message, not the error's name
            assert '"error": "InDoubtCallError"' in error
        assert _charges(deployment, key) == (1, 1)
        # settled as the error says: run it again under the same key
        again = failing.sync_client.runs.create(
            thread_id, "pay_fail_agent", command={"update": {"messages": []}},
            config={"configurable": {"dynavec_in_doubt": {call["id"]: "retry"}}},
            durability="sync", multitask_strategy="interrupt",
        )  # fmt: skip
        failing.sync_client.runs.join(thread_id, again["run_id"])
        done = failing.result(thread_id)
        assert done.finished
        assert done.output == f"Done: charged {charged['charge']} (42) key={key} replayed=True"
        assert _charges(deployment, key) == (2, 1)  # two requests, one key: charged once
    finally:
        _revive(deployment)


def _tool_answers(agent: RemoteReActAgent, thread_id: str) -> list[str]:
    values: Any = agent.sync_client.threads.get_state(thread_id)["values"]
    return [str(m["content"]) for m in values["messages"] if m["type"] == "tool"]


# --- a server killed while it runs a run -------------------------------------------------------


def test_sigkill_of_the_running_server(deployment: Deployment) -> None:
    """langhost: the other server re-claims the run and finishes it, nothing duplicated.
    Aegra 0.6.0 has no run recovery: the run stays ``running``, the thread ``busy``; the
    remote client says so (never a ``completed`` result)."""
    thread_id = server_thread_id("crash")
    client = deployment.agent(deployment.a, "gated_agent").sync_client
    client.threads.create(thread_id=thread_id, if_exists="do_nothing")
    job: dict[str, Any] = {"messages": [{"role": "user", "content": "do the job"}]}
    run = client.runs.create(
        thread_id,
        "gated_agent",
        input=job,
        multitask_strategy="reject",
        durability="sync",
    )
    deadline = time.monotonic() + 60
    while not [e for e in deployment.entries(thread_id) if e["tool"] == "gated"]:
        assert time.monotonic() < deadline, "the run never reached the gate"
        time.sleep(0.05)  # the run runs in a server process; poll the ledger it writes
    [started] = [e for e in deployment.entries(thread_id) if e["tool"] == "gated"]
    [victim] = [s for s in deployment.cluster.running if s.pid == started["pid"]]
    [survivor] = [s for s in deployment.cluster.running if s is not victim]

    killed_at = time.monotonic()
    deployment.cluster.kill(victim)
    (deployment.gates / thread_id).touch()
    if deployment.engine == "aegra":
        _aegra_keeps_the_run_of_a_killed_server(deployment, thread_id, run, victim, survivor)
        return

    joined = deployment.agent(survivor, "gated_agent").sync_client.runs.join(
        thread_id, run["run_id"]
    )
    finished_after = time.monotonic() - killed_at
    print(f"\nre-claimed and finished {finished_after:.1f} s after the SIGKILL", file=sys.stderr)

    result = deployment.agent(survivor, "gated_agent").result(thread_id)
    assert result.finished and result.output == "Finished: prepared, done"
    assert [m["type"] for m in joined["messages"]] == ["human", "ai", "tool", "tool", "ai"]
    events = [(e["tool"], e["event"], e["pid"]) for e in deployment.entries(thread_id)]
    assert events == [
        ("prepare", "finish", victim.pid),  # not run again by the survivor
        ("gated", "start", victim.pid),  # killed here
        ("gated", "start", survivor.pid),  # re-claimed: the unfinished call runs again
        ("gated", "finish", survivor.pid),  # and finishes once
    ]
    with pytest.raises(ServerUnavailableError, match="cannot reach"):
        deployment.agent(victim).result(thread_id)


def _aegra_keeps_the_run_of_a_killed_server(
    deployment: Deployment,
    thread_id: str,
    run: Any,
    victim: Server,
    survivor: Server,
) -> None:
    agent = deployment.agent(survivor, "gated_agent", timeout=3)
    time.sleep(3)  # a recovering engine would have re-claimed the run by now (langhost: ~2 s)
    stuck = agent.sync_client.runs.get(thread_id, run["run_id"])
    assert stuck["status"] == "running"
    assert agent.sync_client.threads.get(thread_id)["status"] == "busy"
    with pytest.raises(RemoteRunError, match=r"is busy.*Aegra 0\.6\.0"):
        agent.result(thread_id)
    events = [(e["tool"], e["event"], e["pid"]) for e in deployment.entries(thread_id)]
    assert events == [  # nothing ran again, nothing finished
        ("prepare", "finish", victim.pid),
        ("gated", "start", victim.pid),
    ]


def _views_ask_in_doubt(deployment: Deployment, server: Server, thread_id: str, key: str,
                        capsys: pytest.CaptureFixture[str],
                        assistant: str = "pay_approved_agent") -> None:  # fmt: skip
    """Every view a person answers from through ``server`` shows the call's in-doubt
    question (with its key and what it means), not the approval the state still lists."""
    agent = deployment.agent(server, assistant)
    paused = agent.result(thread_id)
    assert paused.termination_reason == "interrupted" and paused.interrupt_payload
    value = paused.interrupt_payload
    assert value["node_id"] == "in_doubt_pay" and value["payload"]["idempotency_key"] == key
    assert "may or may not have run" in value["payload"]["description"]
    with pytest.raises(ThreadPausedError) as caught:
        agent.run("pay again", thread_id=thread_id)
    assert caught.value.node_ids == ["in_doubt_pay"]
    rows = json.loads(_cli(capsys, "inbox", "list", "--server", server.url, "--json"))
    [row] = [r for r in rows if r["thread_id"] == thread_id]
    assert row["node_id"] == "in_doubt_pay" and row["payload"]["idempotency_key"] == key
    listed = _cli(capsys, "inbox", "list", "--server", server.url)
    assert "in_doubt_pay" in listed and "approve_pay" not in listed


@pytest.mark.parametrize("assistant", ["pay_approved_agent", "pay_nested_agent"])
def test_sigkill_after_the_approval_every_view_asks_the_in_doubt_question_first(
    deployment: Deployment,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    assistant: str,
) -> None:
    """Issue 34, silent case 2 on a server: ``require_approval(pay)`` + ``on_crash="ask"``,
    the server running the approved ``pay`` SIGKILLed after its charge. The thread state
    still lists ``approve_pay`` (the crash marks are pending writes, which the API does not
    return); the views read the call's note in the server's store and show ``in_doubt_pay``
    first; a stale answer is refused, nothing runs; ``approve`` on the in-doubt question runs
    the call again under the same key: charged once. ``pay_nested_agent``: the same agent as
    the node of a parent graph (its note names the subgraph's checkpoint, which the state
    read with ``subgraphs=True`` shows)."""
    _revive(deployment)  # an earlier test of the module leaves a server killed
    monkeypatch.delenv(LEDGER_ENV, raising=False)
    thread_id, run_id, victim, survivor, charged = _charge_then_kill(
        deployment, assistant, assistant.replace("_", "-"), approve=True
    )
    key, url = charged["key"], survivor.url
    agent = deployment.agent(survivor, assistant)
    try:
        listed = agent.sync_client.threads.get_state(thread_id)["interrupts"]
        notes = agent.sync_client.store.search_items((NOTE_NS, thread_id))["items"]
        [noted] = [n["value"]["checkpoint_ns"] for n in notes]  # nested: the subgraph's
        assert noted.startswith("payments:") if "nested" in assistant else noted == ""
        if deployment.engine == "aegra":  # no run recovery: nothing ran since the crash
            assert [i["value"]["node_id"] for i in listed] == ["approve_pay"]
        _views_ask_in_doubt(deployment, survivor, thread_id, key, capsys, assistant)
        assert _charges(deployment, key) == (1, 1)

        if deployment.engine == "langhost":
            # the killed run is in flight until B re-claims it: an answer now is refused as
            # busy (or, once re-claimed, as no answer to the in-doubt question its run asks)
            early = _cli(capsys, "inbox", "answer", "--server", url, "--thread", thread_id,
                         "--approve", code=2)  # fmt: skip
            assert "nothing was sent" in early or "no answer to an in-doubt call" in early
            agent.sync_client.runs.join(thread_id, run_id)
            _views_ask_in_doubt(deployment, survivor, thread_id, key, capsys, assistant)
            with pytest.raises(InvalidDecisionError, match="no answer to an in-doubt call"):
                agent.resume("approved", thread_id=thread_id)  # the stale approval
        else:
            # the door asks the in-doubt question first (a run without a decision: nothing
            # runs), then refuses the answer meant for the approval the state listed
            with pytest.raises(StaleDecisionError, match="The thread now asks 'in_doubt_pay'"):
                agent.resume("approved", thread_id=thread_id)
            state = agent.sync_client.threads.get_state(thread_id)
            assert [i["value"]["node_id"] for i in state["interrupts"]] == ["in_doubt_pay"]
            again = _cli(capsys, "inbox", "answer", "--server", url, "--thread", thread_id,
                         "--approve", code=2)  # fmt: skip
            assert "no answer to an in-doubt call" in again
        assert _charges(deployment, key) == (1, 1)  # nothing ran

        approve = json.dumps({"type": "approve"})
        answered = _cli(capsys, "inbox", "answer", "--server", url, "--thread", thread_id,
                        "--node", "in_doubt_pay", "--decision", approve)  # fmt: skip
        # approve runs it again: the approval is asked again first (the crash lost it)
        assert "approve_pay" in answered, answered
        done = agent.resume("approved", thread_id=thread_id)
        assert done.finished
        assert done.output == f"Done: charged {charged['charge']} (42) key={key} replayed=True"
        assert _charges(deployment, key) == (2, 1)  # run again under the key: charged once
    finally:
        deployment.cluster.replace(victim)


UI_ANSWERS: dict[str, tuple[Any, Any, Any]] = {
    # UI: its answer to the approval it shows, then its answers to the in-doubt question
    # (approve: run it again) and to the approval that question asks again
    "agent-chat-ui": (  # LangChain's HITL decisions: Command(resume={"decisions": [...]})
        {"decisions": [{"type": "approve"}]},
        {"decisions": [{"type": "approve"}]},
        {"decisions": [{"type": "approve"}]},
    ),
    "agent-inbox": (  # its HumanResponse list
        [{"type": "accept", "args": None}],
        [{"type": "accept", "args": None}],
        [{"type": "accept", "args": None}],
    ),
    "studio": ("approved", "retry", "approved"),  # a plain resume value
}


def _pending(state: Any) -> list[str]:
    return [i["value"]["node_id"] for i in state["interrupts"]]


def test_sigkill_after_the_approval_each_ui_s_stale_answer_asks_the_in_doubt_question(
    deployment: Deployment, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 34, silent case 2, as the approval UIs answer on a server: ``require_approval(pay)``
    + ``on_crash="ask"``, three threads whose approved ``pay`` charged, the server running it
    SIGKILLed. Before any run, each thread's state (its ``interrupts`` and ``tasks``: what
    Studio, the Agent Chat UI and the Agent Inbox read) still shows ``approve_pay``, and the
    thread is ``busy``. Each UI answers that approval its own way, with no interrupt id
    (``runs.create(command={"resume": ...})``). Aegra refuses the answer (it resumes only an
    interrupted thread) and nothing changes; continued as the package's doors continue it, the
    thread asks ``in_doubt_pay``. langhost queues it behind the killed run, which it re-claims
    and which asks ``in_doubt_pay``; the queued answer, sent before that question was asked
    (the server keeps when its request arrived), is not taken as its answer: the question is
    asked again, ``superseded``. Then: nothing ran
    again, the thread keeps its messages and the key, and ``approve`` in the same UI's format
    asks the approval again, after which the call runs under the same key: two requests, one
    charge."""
    _revive(deployment)  # an earlier test of the module leaves a server killed
    monkeypatch.delenv(LEDGER_ENV, raising=False)
    assistant = "pay_approved_agent"
    runs, survivor = _charge_then_kill_all(
        deployment, {f"ui-{ui}": assistant for ui in UI_ANSWERS}, approve=True
    )
    client = get_sync_client(url=survivor.url, timeout=60)
    try:
        sent: dict[str, Any] = {}
        for ui, (stale, _, _) in UI_ANSWERS.items():
            thread_id = runs[f"ui-{ui}"][0]
            shown = client.threads.get_state(thread_id)  # what the UI shows before any run
            assert _pending(shown) == ["approve_pay"]
            assert [[i["value"]["node_id"] for i in t["interrupts"]] for t in shown["tasks"]] == [
                ["approve_pay"]
            ]
            assert client.threads.get(thread_id)["status"] == "busy"
            try:
                sent[ui] = client.runs.create(thread_id, assistant, command={"resume": stale})
            except httpx.HTTPStatusError as error:
                sent[ui] = error
        for ui, (_, again, approve) in UI_ANSWERS.items():
            thread_id, run_id, charged = runs[f"ui-{ui}"]
            key = charged["key"]
            if deployment.engine == "aegra":
                refused = sent[ui]
                assert isinstance(refused, httpx.HTTPStatusError), (ui, refused)
                assert refused.response.status_code == 400
                assert "thread is not in interrupted state" in refused.response.text
                assert _pending(client.threads.get_state(thread_id)) == ["approve_pay"]
                _continue_on_b(deployment, thread_id, run_id, survivor, assistant)
            else:
                assert isinstance(sent[ui], dict), (ui, sent[ui])  # queued, not refused
                client.runs.join(thread_id, run_id)  # the killed run, re-claimed
                client.runs.join(thread_id, sent[ui]["run_id"])
                # the queued answer was for approve_pay: not applied, the question asked again
                assert client.threads.get_state(thread_id)["interrupts"][0]["value"]["payload"][
                    "superseded"
                ], ui
            state = client.threads.get_state(thread_id)
            assert _pending(state) == ["in_doubt_pay"], (ui, state["interrupts"])
            value = state["interrupts"][0]["value"]
            assert value["payload"]["idempotency_key"] == key
            assert _charges(deployment, key) == (1, 1)  # nothing ran again
            values: Any = state["values"]
            messages = values["messages"]  # nothing lost: the goal and the call
            assert [m["type"] for m in messages] == ["human", "ai"]
            assert messages[-1]["tool_calls"][0]["id"] == value["tool_call"]["id"]

            client.runs.wait(thread_id, assistant, command={"resume": again})
            assert _pending(client.threads.get_state(thread_id)) == ["approve_pay"]
            client.runs.wait(thread_id, assistant, command={"resume": approve})
            done = client.threads.get_state(thread_id)
            assert done["interrupts"] == [], (ui, done["interrupts"])
            final: Any = done["values"]
            answer = final["messages"][-1]["content"]
            assert answer == f"Done: charged {charged['charge']} (42) key={key} replayed=True"
            assert _charges(deployment, key) == (2, 1)  # run again under the key: charged once
    finally:
        _revive(deployment)
