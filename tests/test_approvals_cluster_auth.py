"""The signed-in user is the approver on the cluster (``tests/cluster.py``: API servers over
one PostgreSQL, from the built wheel) serving ``tests/langgraph_cluster_auth.json``: the graphs of
``tests/signed_in_graph.py`` with the auth handler of docs/approvals-in-production.md (the
``auth.py`` of ``tests/test_approvals_auth_server.py``: bearer tokens for alice, bob, both
holding ``payments:approve``, and mallory, none). The transfer's ledger counts its runs.

* Aegra 0.6.0, two servers: alice approves with a plain answer through server A; mallory,
  signed in and no approver, is refused claiming alice through server B; two approvals count
  distinct signed-in users across A and B. What Aegra does differently, pinned here and said in
  docs/scale-out.md: it calls the handler with the headers dict (the page's handler is adapted,
  :func:`aegra_auth_file`); a thread is readable by its creator only, but any signed-in user
  may create a run on it; and it keeps a ``langgraph_auth_user`` the client sent.
* langhost 0.11.1.post1, one server: it loads the handler, but every run of a signed-in user
  fails (500), so the signed-in approver cannot be used on it (pinned).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langgraph_sdk import get_sync_client
from langgraph_sdk.errors import AuthenticationError

from dynavec_langgraph import ApproverRefusedError, NothingToResumeError
from dynavec_langgraph.approval import approver_decision
from dynavec_langgraph.demo import LEDGER_ENV
from dynavec_langgraph.remote import RemoteReActAgent, RemoteRunError, server_thread_id
from tests.cluster import Cluster, ClusterUnavailable, Server, site_packages
from tests.pg import PostgresServer
from tests.test_approvals_auth_server import TOKENS, auth_file

CONFIG = Path(__file__).with_name("langgraph_cluster_auth.json")


class Signed:
    """The running cluster with auth, its ledger and each user's clients."""

    def __init__(self, cluster: Cluster, ledger: Path) -> None:
        self.cluster = cluster
        self.engine = cluster.engine
        self.ledger = ledger

    @property
    def a(self) -> Server:
        return self.cluster.running[0]

    @property
    def b(self) -> Server:
        return self.cluster.running[1]

    def agent(self, server: Server, user: str, graph: str) -> RemoteReActAgent:
        headers = {"Authorization": f"Bearer {TOKENS[user]}"}
        return RemoteReActAgent(server.url, graph, headers=headers, timeout=60)

    def sdk(self, server: Server, user: str) -> Any:
        headers = {"Authorization": f"Bearer {TOKENS[user]}"}
        return get_sync_client(url=server.url, headers=headers, timeout=60)

    def pending(self, thread: str) -> dict[str, Any]:
        state = self.sdk(self.a, "alice").threads.get_state(server_thread_id(thread))
        (pause,) = state["interrupts"]
        return pause  # type: ignore[no-any-return]

    def raw(
        self, server: Server, user: str, thread: str, graph: str, value: Any, **conf: Any
    ) -> Any:
        """``user`` resumes the pending pause through ``langgraph_sdk`` on ``server`` (with
        the configurable ``conf``); returns the pause's value afterwards."""
        pause = self.pending(thread)
        self.sdk(server, user).runs.wait(
            server_thread_id(thread),
            graph,
            command={"resume": {pause["id"]: value}},
            config={"configurable": conf},
        )
        return self.pending(thread)["value"]

    def ran(self, to: str) -> list[dict[str, Any]]:
        lines = self.ledger.read_text().splitlines() if self.ledger.exists() else []
        return [e for e in map(json.loads, lines) if e["to"] == to]


PAGE_SIGNATURE = (
    "async def authenticate(authorization: str | None) -> Auth.types.MinimalUserDict:\n"
)
AEGRA_SIGNATURE = (
    "async def authenticate(headers: dict[str, str]) -> Auth.types.MinimalUserDict:\n"
    '    authorization = headers.get("authorization")\n'
)


def aegra_auth_file() -> str:
    """The page's ``auth.py`` as Aegra 0.6.0 calls it: with the request's headers (a dict,
    lower-case names) as the one argument, not by parameter name as langgraph-api does."""
    page = auth_file()
    assert PAGE_SIGNATURE in page, "the page's handler changed: update this adaptation"
    return page.replace(PAGE_SIGNATURE, AEGRA_SIGNATURE)


def _cluster(
    engine: str, servers: int, auth: str, postgres: PostgresServer, work: Path
) -> Iterator[Signed]:
    (work / "app").mkdir()
    (work / "app" / "auth.py").write_text(auth)  # beside the served langgraph.json
    ledger = work / "ledger.jsonl"
    cluster = Cluster(
        config=CONFIG,
        servers=servers,
        engine=engine,
        env={LEDGER_ENV: str(ledger), "OPENAI_API_KEY": ""},
        work=work,
        postgres=postgres,
    )
    started = time.monotonic()
    try:
        cluster.start()
    except ClusterUnavailable as error:
        pytest.fail(f"the {engine} cluster with auth could not start: {error}")
    try:
        yield Signed(cluster, ledger)
    finally:
        cluster.stop()
        print(f"\n{engine} cluster with auth: {time.monotonic() - started:.1f} s", file=sys.stderr)


def site_packages_of(signed: Signed) -> Path:
    """The server virtualenv's own site-packages (where the wheel is installed)."""
    assert signed.cluster.venv is not None
    return site_packages(signed.cluster.venv).resolve()


@pytest.fixture(scope="module")
def aegra(
    postgres_server: PostgresServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Signed]:
    """Two Aegra servers over one PostgreSQL with the page's handler (as Aegra calls it)."""
    work = tmp_path_factory.mktemp("cluster-auth-aegra")
    yield from _cluster("aegra", 2, aegra_auth_file(), postgres_server, work)


@pytest.fixture(scope="module")
def langhost(
    postgres_server: PostgresServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Signed]:
    """One ``langhost serve`` (its runs fail with auth: one server shows it) and Redis."""
    work = tmp_path_factory.mktemp("cluster-auth-langhost")
    yield from _cluster("langhost", 1, auth_file(), postgres_server, work)


@pytest.mark.service
def test_langhost_cannot_run_a_graph_for_a_signed_in_user(langhost: Signed) -> None:
    """langhost 0.11.1.post1 (langgraph-runtime-pg 0.11.1.post1, the newest) loads the auth
    handler, but cannot store a run created by a signed-in user: the run's row holds the
    server's ``ProxyUser``, which its JSON column cannot encode; every run answers 500 and
    nothing runs. docs/scale-out.md says what a deployment does instead."""
    server = langhost.a
    with pytest.raises(AuthenticationError, match="unknown or missing token"):  # the handler runs
        get_sync_client(url=server.url, headers={}, timeout=60).threads.create()
    alice = langhost.agent(server, "alice", "alice_or_bob")
    with pytest.raises(RemoteRunError, match="answered 500"):
        alice.run("transfer 1 to Al", thread_id="langhost")
    deadline = time.monotonic() + 10  # the traceback is logged after the 500 is sent
    while "ProxyUser is not JSON serializable" not in server.log.read_text(errors="replace"):
        assert time.monotonic() < deadline, server.log_tail()
        time.sleep(0.1)  # polling a log file; nothing to wait on instead
    assert langhost.ran("Al") == []


@pytest.mark.service
def test_aegra_refuses_a_request_without_a_token(aegra: Signed) -> None:
    for server in aegra.cluster.running:
        with pytest.raises(AuthenticationError, match="unknown or missing token"):  # the handler's
            get_sync_client(url=server.url, headers={}, timeout=60).threads.create()


@pytest.mark.service
def test_alice_approves_on_a_mallory_is_refused_claiming_alice_on_b(aegra: Signed) -> None:
    graph = "alice_or_bob"
    alice = aegra.agent(aegra.a, "alice", graph)
    assert alice.run("transfer 5 to Ann", thread_id="one").termination_reason == "interrupted"

    # mallory, signed in on B and no approver, claims alice: in the value, in the config
    again = aegra.raw(aegra.b, "mallory", "one", graph, approver_decision("approved", "alice"))
    assert (again["approval"]["refused_approver"], again["approval"]["claimed_approver"]) == (
        "mallory",
        "alice",
    )
    again = aegra.raw(aegra.b, "mallory", "one", graph, "approved", approver="alice")
    assert (again["approval"]["refused_approver"], again["approval"]["claimed_approver"]) == (
        "mallory",
        "alice",
    )
    # through the client: Aegra 0.6.0 shows a thread to its creator only
    with pytest.raises(NothingToResumeError, match="unknown thread 'one'"):
        aegra.agent(aegra.b, "mallory", graph).resume("approved", thread_id="one", approver="alice")
    assert aegra.ran("Ann") == []

    # alice answers a plain "approved" through A: her token says who she is
    done = alice.resume("approved", thread_id="one")
    assert done.finished and done.output == "Done: Transferred 5 to Ann."
    assert [(e["to"], e["amount"]) for e in aegra.ran("Ann")] == [("Ann", 5)]
    assert Path(str(aegra.ran("Ann")[0]["package"])).is_relative_to(site_packages_of(aegra))


@pytest.mark.service
def test_two_approvals_count_distinct_signed_in_users_across_servers(aegra: Signed) -> None:
    graph = "two"
    alice_a = aegra.agent(aegra.a, "alice", graph)
    assert alice_a.run("transfer 7 to Bo", thread_id="two").termination_reason == "interrupted"
    assert alice_a.resume("approved", thread_id="two").termination_reason == "interrupted"
    assert aegra.pending("two")["value"]["approval"]["approved_by"] == ["alice"]

    # alice again through B, alice as bob through B, mallory as bob and as herself through B
    with pytest.raises(ApproverRefusedError, match="already approved"):
        aegra.agent(aegra.b, "alice", graph).resume("approved", thread_id="two")
    again = aegra.raw(aegra.b, "alice", "two", graph, approver_decision("approved", "bob"))
    assert again["approval"]["claimed_approver"] == "bob"
    again = aegra.raw(aegra.b, "mallory", "two", graph, "approved", approver="bob")
    assert again["approval"]["refused_approver"] == "mallory"
    again = aegra.raw(aegra.b, "mallory", "two", graph, "approved")
    assert again["approval"]["refused_approver"] == "mallory"
    assert again["approval"]["approved_by"] == ["alice"]
    assert aegra.ran("Bo") == []

    # bob, signed in on B (the thread is alice's: Aegra lets him run it, not read it)
    pause = aegra.pending("two")
    aegra.sdk(aegra.b, "bob").runs.wait(
        server_thread_id("two"), graph, command={"resume": {pause["id"]: "approved"}}
    )
    assert [e["amount"] for e in aegra.ran("Bo")] == [7]
    assert alice_a.result(thread_id="two").output == "Done: Transferred 7 to Bo."


@pytest.mark.service
def test_aegra_takes_a_client_sent_auth_user_for_the_signed_in_one(aegra: Signed) -> None:
    """Aegra 0.6.0 keeps a ``configurable["langgraph_auth_user"]`` the client sent (it sets
    its own only when none was sent; langgraph-api strips the client's): mallory, signed in,
    sends alice's identity and permissions, and approves as alice. docs/scale-out.md and
    docs/security.md say what a deployment on Aegra must do; this pins the engine's fact."""
    graph = "alice_or_bob"
    alice = aegra.agent(aegra.a, "alice", graph)
    assert alice.run("transfer 3 to Di", thread_id="forged").termination_reason == "interrupted"
    pause = aegra.pending("forged")
    forged = {"identity": "alice", "is_authenticated": True, "permissions": ["payments:approve"]}
    aegra.sdk(aegra.b, "mallory").runs.wait(
        server_thread_id("forged"),
        graph,
        command={"resume": {pause["id"]: "approved"}},
        config={"configurable": {"langgraph_auth_user": forged}},
    )
    assert [(e["to"], e["amount"]) for e in aegra.ran("Di")] == [("Di", 3)]
