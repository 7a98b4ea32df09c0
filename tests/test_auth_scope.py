"""Who can see a pause, and the audit trail, on a real ``langgraph dev`` with custom auth.

The server runs the owners' ``auth.py`` of docs/approvals-in-production.md ("Who can see a
pause"; the page's block, written to the server's directory as it is): a thread is its
creator's (``owner`` metadata), only its owner reads, searches, runs and answers it; the store
(the audit trails) is read through the API by the auditor carol only. alice and bob each own
a paused transfer; everything goes through the server with the user's bearer token:
``langgraph_sdk``, ``RemoteReActAgent`` and ``dynavec-langgraph inbox --server``.

The trail tests run async tools on the server's event loop (where its store refuses
synchronous calls), with the trail switched on through the run's config and in the graph
(``with_config``), on that server and on one without auth (``require_approval`` around an
async tool). The graphs are ``tests/signed_in_graph.py``'s; the transfers' ledger counts
what ran.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_sync_client

from dynavec_langgraph import NothingToResumeError, RemoteRunError, ThreadAccessError
from dynavec_langgraph.audit import GENESIS, AuditEvent, entry_hash
from dynavec_langgraph.remote import RemoteReActAgent, server_thread_id
from tests.langgraph_server import REPO, langgraph_dev
from tests.test_approvals_auth_server import GRAPHS, Server, auth_file

TOKENS = {"alice": "token-alice", "bob": "token-bob", "carol": "token-carol"}
GRAPH_IDS = {
    "owners": f"{GRAPHS}:owners_approve",
    "async_pause": f"{GRAPHS}:async_pause",
    "audited": f"{GRAPHS}:audited_async_pause",
    "async_approval": f"{GRAPHS}:async_approval",
}
REFUSED_BY_THE_LOOP = ("Synchronous calls to", "Blocking call to")
"""What langgraph dev says when a graph calls its store synchronously on its event loop."""


def _headers(user: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKENS[user]}"} if user else {}


def _agent(server: Server, user: str | None, graph: str, audit: bool = False) -> RemoteReActAgent:
    return RemoteReActAgent(server.url, graph, headers=_headers(user), timeout=60, audit=audit)


def _sdk(server: Server, user: str | None) -> Any:
    return get_sync_client(url=server.url, headers=_headers(user))


@pytest.fixture(scope="module")
def owners(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """``langgraph dev`` with the page's owners' ``auth.py``, Studio's bypass switched off."""
    work = tmp_path_factory.mktemp("owners_server")
    (work / "auth.py").write_text(auth_file(marker="token-carol"))
    auth = {"path": "./auth.py:auth", "disable_studio_auth": True}
    config = {"dependencies": [str(REPO)], "graphs": GRAPH_IDS, "auth": auth}
    with langgraph_dev(work, config) as running:
        yield Server(running.url, running.ledger)


@pytest.fixture(scope="module")
def open_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """``langgraph dev`` without auth, serving the same graphs."""
    work = tmp_path_factory.mktemp("open_server")
    with langgraph_dev(work, {"dependencies": [str(REPO)], "graphs": GRAPH_IDS}) as running:
        yield Server(running.url, running.ledger)


def _interrupted(server: Server, user: str | None) -> set[str]:
    found = _sdk(server, user).threads.search(status="interrupted", limit=100)
    return {str(t["thread_id"]) for t in found}


def _pause(server: Server, user: str, thread: str) -> dict[str, Any]:
    (pause,) = _sdk(server, user).threads.get_state(server_thread_id(thread))["interrupts"]
    return pause  # type: ignore[no-any-return]


def _log(server: Server) -> str:
    return (server.ledger.parent / "server.log").read_text(errors="replace")


@pytest.mark.service
def test_each_user_lists_and_answers_only_the_pauses_of_threads_they_may_access(
    owners: Server,
) -> None:
    alice, bob = _agent(owners, "alice", "owners"), _agent(owners, "bob", "owners")
    assert alice.run("transfer 11 to Ann", thread_id="alice-1").termination_reason == (
        "interrupted"
    )
    assert bob.run("transfer 12 to Ben", thread_id="bob-1").termination_reason == "interrupted"
    a1, b1 = server_thread_id("alice-1"), server_thread_id("bob-1")
    assert _sdk(owners, "alice").threads.get(a1)["metadata"]["owner"] == "alice"

    # listing: the server's search with the user's token applies the handler's filter
    assert a1 in _interrupted(owners, "alice") and b1 not in _interrupted(owners, "alice")
    assert b1 in _interrupted(owners, "bob") and a1 not in _interrupted(owners, "bob")
    assert not _interrupted(owners, "carol") & {a1, b1}
    for user, mine, theirs in (("alice", a1, b1), ("bob", b1, a1)):
        listed = owners.cli("list", "--server", owners.url, "--json", token=TOKENS[user])
        assert listed.returncode == 0, listed.stderr
        shown = {r["thread_id"] for r in json.loads(listed.stdout)}
        assert mine in shown and theirs not in shown, (user, shown)
    nobody = owners.cli("list", "--server", owners.url, "--json")
    assert nobody.returncode == 2 and "401" in nobody.stderr, nobody.stderr

    # bob answers alice's pause every way there is: refused, nothing changes
    before = _pause(owners, "alice", "alice-1")
    with pytest.raises(NothingToResumeError, match="auth rules do not let these credentials"):
        bob.resume("approved", thread_id="alice-1")
    with pytest.raises(NothingToResumeError, match="auth rules do not let these credentials"):
        bob.result("alice-1")
    with pytest.raises(ThreadAccessError, match="'alice-1' exists on the server") as refused:
        bob.run("transfer 13 to Bea", thread_id="alice-1")
    assert isinstance(refused.value, PermissionError)
    answered = owners.cli(
        "answer", "--server", owners.url, "--thread", "alice-1", "--approve",
        "--token", TOKENS["bob"],
    )  # fmt: skip
    assert answered.returncode == 2, answered.stderr
    assert "auth rules do not let these credentials see" in answered.stderr
    resume = {"resume": {before["id"]: "approved"}}
    with pytest.raises(httpx.HTTPStatusError) as raw:
        _sdk(owners, "bob").runs.wait(a1, "owners", command=resume)
    assert raw.value.response.status_code == 404
    with pytest.raises(httpx.HTTPStatusError) as read:
        _sdk(owners, "bob").threads.get_state(a1)
    assert read.value.response.status_code == 404
    assert _pause(owners, "alice", "alice-1") == before  # the same pause, unanswered
    assert owners.ran("Ann") == [] and owners.ran("Bea") == []

    # each owner answers their own, with a plain approval: the token says who they are
    done = owners.cli(
        "answer", "--server", owners.url, "--thread", "alice-1", "--approve",
        "--token", TOKENS["alice"],
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert bob.resume("approved", thread_id="bob-1").termination_reason == "completed"
    assert [e["amount"] for e in owners.ran("Ann")] == [11]
    assert [e["amount"] for e in owners.ran("Ben")] == [12]


def _chained(trail: list[AuditEvent]) -> bool:
    links = [GENESIS, *(e.hash for e in trail[:-1])]
    pairs = zip(trail, links, strict=True)
    return all(e.prev_hash == p and e.hash == entry_hash(e.as_dict()) for e, p in pairs)


@pytest.mark.service
def test_the_trail_of_an_async_plain_pause_names_the_signed_in_user(owners: Server) -> None:
    """The trail switched on through the run's config (``RemoteReActAgent(audit=True)``) and
    in the graph (``with_config``): an async tool's ``interrupt()`` pauses on the server's
    event loop, its entries are written there, and the answer is recorded as the signed-in
    user's."""
    carol = _agent(owners, "carol", "async_pause")  # the auditor reads the trails
    alice = _agent(owners, "alice", "async_pause", audit=True)
    assert alice.run("transfer 21 to Cal", thread_id="trail-1").termination_reason == (
        "interrupted"
    )
    assert alice.resume("approved", thread_id="trail-1").termination_reason == "completed"
    assert [e["amount"] for e in owners.ran("Cal")] == [21]
    trail = carol.audit("trail-1")
    assert [(e.kind, e.who, e.authenticated_by, e.surface) for e in trail] == [
        ("paused", None, None, "api"),
        ("decision", "alice", "server", "api"),
    ]
    assert _chained(trail) and trail[0].thread_id == server_thread_id("trail-1")
    with pytest.raises(RemoteRunError, match="403"):
        alice.audit("trail-1")  # the store is the auditors' (the page's rule)
    checked = _verify(owners, "--thread", "trail-1", token=TOKENS["carol"])
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.splitlines()[-1] == "OK: 1 thread(s), 2 entries chained, intact."
    kept_out = _verify(owners, "--thread", "trail-1", token=TOKENS["alice"])
    assert kept_out.returncode == 2 and "403" in kept_out.stderr, kept_out.stderr

    # the graph records its trail itself: a plain SDK client, no config of its own
    bob = _sdk(owners, "bob")
    sid = str(bob.threads.create()["thread_id"])
    bob.runs.wait(sid, "audited", input={"messages": [("user", "transfer 22 to Dee")]})
    (pause,) = bob.threads.get_state(sid)["interrupts"]
    bob.runs.wait(sid, "audited", command={"resume": {pause["id"]: "approved"}})
    assert [e["amount"] for e in owners.ran("Dee")] == [22]
    audited = _sdk(owners, "carol").store.search_items(("dynavec_audit", sid), limit=100)
    assert sorted(
        (i["value"]["seq"], i["value"]["kind"], i["value"]["who"], i["value"]["authenticated_by"])
        for i in audited["items"]
    ) == [(1, "paused", None, None), (2, "decision", "bob", "server")]
    assert not any(text in _log(owners) for text in REFUSED_BY_THE_LOOP)


@pytest.mark.service
def test_the_trail_of_require_approval_around_an_async_tool_on_a_server_without_auth(
    open_server: Server,
) -> None:
    agent = _agent(open_server, None, "async_approval", audit=True)
    assert agent.run("transfer 31 to Eve", thread_id="open-1").termination_reason == ("interrupted")
    assert agent.resume("approved", thread_id="open-1").termination_reason == "completed"
    assert [e["amount"] for e in open_server.ran("Eve")] == [31]
    trail = agent.audit("open-1")
    assert [(e.kind, e.who, e.authenticated_by) for e in trail] == [
        ("paused", None, None),
        ("decision", None, None),
    ]
    assert _chained(trail)

    plain = _agent(open_server, None, "async_pause", audit=True)
    assert plain.run("transfer 32 to Fay", thread_id="open-2").termination_reason == ("interrupted")
    assert plain.resume("approved", thread_id="open-2").termination_reason == "completed"
    assert [e["amount"] for e in open_server.ran("Fay")] == [32]
    assert [(e.kind, e.who, e.authenticated_by) for e in plain.audit("open-2")] == [
        ("paused", None, None),
        ("decision", None, None),  # no sign-in, no name: nobody is claimed
    ]
    assert not any(text in _log(open_server) for text in REFUSED_BY_THE_LOOP)


def _verify(server: Server, *args: str, token: str | None = None) -> Any:
    return server.cli("verify", "--server", server.url, *args, token=token, command="audit")


@pytest.mark.service
def test_audit_verify_through_the_server_names_entries_changed_in_its_store(
    open_server: Server,
) -> None:
    agent = _agent(open_server, None, "async_pause", audit=True)
    for thread, payee in (("kept", "Gus"), ("changed", "Hal")):
        agent.run(f"transfer 41 to {payee}", thread_id=thread)
        agent.resume("approved", thread_id=thread)
    intact = _verify(open_server, "--thread", "changed")
    assert intact.returncode == 0, intact.stdout + intact.stderr
    assert intact.stdout.splitlines()[-1] == "OK: 1 thread(s), 2 entries chained, intact."

    # someone with write access to the store changes who approved
    sid = server_thread_id("changed")
    store = _sdk(open_server, None).store
    (decision,) = [
        i for i in store.search_items(["dynavec_audit", sid])["items"] if i["value"]["seq"] == 2
    ]
    store.put_item(["dynavec_audit", sid], decision["key"], {**decision["value"], "who": "eve"})
    found = _verify(open_server, "--json")
    assert found.returncode == 1, found.stdout + found.stderr
    problems = {
        t["thread_id"]: [(p["kind"], p["seq"], p["event_id"]) for p in t["problems"]]
        for t in json.loads(found.stdout)["threads"]
    }
    assert problems[sid] == [("edited", 2, decision["key"])]
    assert problems[server_thread_id("kept")] == []
    report = agent.verify_audit("changed")
    assert not report.ok and [p.kind for p in report.problems] == ["edited"]


def test_the_docs_example_is_the_served_one() -> None:
    """The test serves the page's block; the page names this test as where it runs."""
    text = auth_file(marker="token-carol")
    assert "@auth.on.threads" in text and "@auth.on.store" in text
    page = (REPO / "docs" / "approvals-in-production.md").read_text()
    assert f"tests/{Path(__file__).name}" in page


def test_an_async_pause_records_its_trail_in_a_store_that_refuses_sync_calls_on_its_loop(
    pg_uri: str,
) -> None:
    """In process, the same store kind as a server's: LangGraph's ``AsyncPostgresStore`` (an
    ``AsyncBatchedBaseStore``, whose sync methods refuse its own event loop) on the
    PostgreSQL of tests/pg.py. The async tool's pause and its answer are in the trail when
    ``ainvoke`` returns: the tool node waited for the task that wrote them."""
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.store.postgres import AsyncPostgresStore
    from langgraph.types import Command

    from dynavec_langgraph import create_react_agent
    from dynavec_langgraph.audit import AUDIT_KEY, aaudit_trail
    from dynavec_langgraph.testing import ScriptedChatModel
    from tests.signed_in_graph import apay

    async def scenario() -> list[tuple[str, int | None]]:
        async with AsyncPostgresStore.from_conn_string(pg_uri) as store:
            await store.setup()
            call = {"name": "transfer", "args": {"amount": 51, "to": "Ida"}, "id": "c1"}
            model = ScriptedChatModel(turns=[[call], "Done."])
            graph = create_react_agent(model, [apay], checkpointer=InMemorySaver(), store=store)
            config: Any = {"configurable": {"thread_id": "t1", AUDIT_KEY: True}}
            await graph.ainvoke({"messages": [("user", "Pay Ida 51")]}, config)
            paused = [(e.kind, e.seq) for e in await aaudit_trail(store, "t1")]
            assert paused == [("paused", 1)]  # written before ainvoke returned
            await graph.ainvoke(Command(resume="approved"), config)
            return [(e.kind, e.seq) for e in await aaudit_trail(store, "t1")]

    import asyncio

    assert asyncio.run(scenario()) == [("paused", 1), ("decision", 2)]
