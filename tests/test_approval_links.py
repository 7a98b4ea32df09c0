"""Signed, single-use approval links through a real ``langgraph dev`` (docs/security.md).

The server runs the graphs of ``tests/signed_in_graph.py`` with the auth handler of
docs/approvals-in-production.md (bearer tokens for alice, bob, mallory), serves
``dynavec_langgraph.links:app`` as its custom routes (``langgraph.json`` ``"http"``) and holds
two link keys (``DYNAVEC_LINK_KEYS``: ``k2`` signs, ``k1`` still verifies). Links are sent as a
mail client or a chat button does (plain HTTP with ``httpx``, no sign-in), through
``RemoteReActAgent.resume(link=...)`` and ``dynavec-langgraph inbox answer --link``; the
transfer's ledger counts its runs. The token itself without a server:
``tests/test_link_tokens.py``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

import dynavec_langgraph
from dynavec_langgraph import ApproverRefusedError, InvalidLinkError
from dynavec_langgraph._approvals.links import sign_link
from dynavec_langgraph.links import LinkKeys, approval_links
from dynavec_langgraph.remote import RemoteReActAgent, server_thread_id
from tests.langgraph_server import REPO, langgraph_dev
from tests.test_approvals_auth_server import GRAPHS, TOKENS, Server, auth_file
from tests.test_link_tokens import _changed
from tests.webhook import Receiver

OLD = LinkKeys({"k1": "the-old-link-secret-0123456789"})
NEW = LinkKeys({"k2": "the-new-link-secret-0123456789"})
ENV_KEYS = "k2=the-new-link-secret-0123456789,k1=the-old-link-secret-0123456789"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """``langgraph dev`` with the page's auth handler and the links endpoint; one that does
    not come up fails."""
    assert Path(dynavec_langgraph.__file__).is_relative_to(REPO)  # the package under test
    work = tmp_path_factory.mktemp("links_server")
    (work / "auth.py").write_text(auth_file())
    graphs = {
        "alice_or_bob": f"{GRAPHS}:alice_or_bob",
        "two": f"{GRAPHS}:two_signed_in",
        "expiring": f"{Path(__file__).with_name('links_graph.py')}:expiring",
    }
    config = {
        "dependencies": [str(REPO)],
        "graphs": graphs,
        "auth": {"path": "./auth.py:auth"},
        "http": {"app": "dynavec_langgraph.links:app"},
    }
    extra_env = {
        "DYNAVEC_LINK_KEYS": ENV_KEYS,
        "DYNAVEC_LINK_BASE_URL": "{url}",  # each pause notification carries its approvers' links
        "DYNAVEC_AUDIT": "1",  # the trail of every run, the links endpoint's too
    }
    with langgraph_dev(work, config, extra_env) as running:
        yield Server(running.url, running.ledger)
    log = (work / "server.log").read_text(errors="replace")
    assert "the-old-link-secret" not in log and "the-new-link-secret" not in log


def _paused(server: Server, graph: str, goal: str, thread: str) -> dict[str, Any]:
    """alice starts ``goal`` in ``thread``; the pending pause (with the server's thread id)."""
    paused = server.agent("alice", graph).run(goal, thread_id=thread)
    assert paused.termination_reason == "interrupted"
    return _pending(server, thread)


def _pending(server: Server, thread: str) -> dict[str, Any]:
    sid = server_thread_id(thread)
    found = server.sdk("alice").threads.get_state(sid)["interrupts"]
    value = found[0]["value"] if found else {}
    return {"thread_id": sid, "digest": value.get("review_digest"), "id": found and found[0]["id"]}


def _links(server: Server, pause: dict[str, Any], approver: str, **options: Any) -> dict[str, str]:
    return approval_links(pause, approver=approver, base_url=server.url, **options)


def _token(link: str) -> str:
    return link.rsplit("/", 1)[1]


def _edited(link: str, **fields: Any) -> str:
    """``link`` with its token's payload edited (its signature left as it was)."""
    base, token = link.rsplit("/", 1)
    return f"{base}/{_changed(token, **fields)}"


def _post(link: str, **body: Any) -> httpx.Response:
    """A chat button's (or a browser form's) POST: no sign-in, the link authorizes it."""
    return httpx.post(link, data=body or None, headers={"accept": "application/json"}, timeout=90)


@pytest.mark.service
def test_a_link_is_confirmed_by_get_applied_once_by_post_and_refused_when_forged(
    server: Server,
) -> None:
    pause = _paused(server, "alice_or_bob", "transfer 5 to Ann", "link-one")
    bob = _links(server, pause, "bob", keys=OLD)  # an old key: it still verifies
    approve = bob["approve"]

    shown = httpx.get(approve, headers={"accept": "text/html"}, timeout=30)
    assert shown.status_code == 200 and 'method="post"' in shown.text and "bob" in shown.text
    assert _pending(server, "link-one") == pause and server.ran("Ann") == []  # GET: nothing

    soon = datetime.now(UTC) + timedelta(minutes=5)
    signed = {"thread_id": pause["thread_id"], "review_digest": pause["digest"]}
    refused = {
        "changed decision": (_post(approve, decision="rejected"), 400),
        "forged approver": (_post(_edited(approve, a="alice")), 403),
        "forged decision": (_post(_edited(bob["reject"], v="approved")), 403),
        "other thread": (_post(_edited(approve, t=server_thread_id("x"))), 403),
        "unknown key": (_post(_links(server, pause, "bob", keys=_foreign())["approve"]), 403),
        "expired": (
            _post(f"{server.url}/dynavec/link/" + _signed(signed, soon - timedelta(hours=1))),
            410,
        ),
        "another pause": (
            _post(_links(server, {**pause, "digest": "f" * 32}, "bob", keys=NEW)["approve"]),
            409,
        ),
    }
    for what, (answer, status) in refused.items():
        assert answer.status_code == status, (what, answer.text)
        assert answer.json()["applied"] is False, what
    assert _pending(server, "link-one") == pause and server.ran("Ann") == []  # nothing changed

    applied = _post(approve)
    assert applied.status_code == 200 and applied.json()["applied"] is True, applied.text
    assert [e["amount"] for e in server.ran("Ann")] == [5]
    replayed = _post(approve)
    assert replayed.status_code == 409 and "no longer pending" in replayed.json()["detail"]
    late = _post(bob["reject"])  # after the pause was answered
    assert late.status_code == 409
    assert [e["amount"] for e in server.ran("Ann")] == [5]

    trail = server.agent("alice", "alice_or_bob").audit("link-one")
    (decided,) = [e for e in trail if e.kind == "decision"]
    assert (decided.who, decided.authenticated_by) == ("bob", "signed_link")
    assert decided.decision["signed_link"]["key_id"] == "k1"
    assert _token(approve) not in json.dumps([e.as_dict() for e in trail])


def _foreign() -> LinkKeys:
    return LinkKeys({"k9": "the-old-link-secret-0123456789"})


def _signed(pause: dict[str, Any], expires_at: datetime) -> str:
    return sign_link(NEW, decision="approved", approver="bob", expires_at=expires_at, **pause)


@pytest.mark.service
def test_two_posts_of_one_link_at_once_apply_it_once(server: Server) -> None:
    pause = _paused(server, "alice_or_bob", "transfer 6 to Di", "link-race")
    approve = _links(server, pause, "alice", keys=NEW)["approve"]
    with ThreadPoolExecutor(2) as pool:
        answers = list(pool.map(lambda _: _post(approve), range(2)))
    assert sorted(a.status_code for a in answers) == [200, 409], [a.text for a in answers]
    assert [e["amount"] for e in server.ran("Di")] == [6]


@pytest.mark.service
def test_two_links_of_two_approvers_at_once_apply_one(server: Server) -> None:
    pause = _paused(server, "alice_or_bob", "transfer 8 to Ed", "link-race-two")
    links = [_links(server, pause, who, keys=NEW)["approve"] for who in ("alice", "bob")]
    with ThreadPoolExecutor(2) as pool:
        answers = list(pool.map(_post, links))
    assert sorted(a.status_code for a in answers) == [200, 409], [a.text for a in answers]
    assert [e["amount"] for e in server.ran("Ed")] == [8]


@pytest.mark.service
def test_links_through_the_cli_and_remote_react_agent_count_once_each(server: Server) -> None:
    """Two approvals needed: alice's link through the command line, bob's through
    ``RemoteReActAgent``; alice's link again, and a reject link after, are refused."""
    pause = _paused(server, "two", "transfer 7 to Bo", "link-two")
    vouched = {"permissions": ["payments:approve"]}  # what the mailer knows of its users
    alice = _token(_links(server, pause, "alice", **vouched)["approve"])  # DYNAVEC_LINK_KEYS
    bob = _token(_links(server, pause, "bob", **vouched)["approve"])
    mallory = _token(_links(server, pause, "mallory")["approve"])  # no permission
    with pytest.raises(ApproverRefusedError, match="'mallory' may not approve"):
        server.agent("mallory", "two").resume(link=mallory)
    answered = server.cli(
        "answer", "--server", server.url, "--link", alice, token=TOKENS["mallory"]
    )  # mallory carries alice's link: a link is its own proof (docs/security.md)
    assert answered.returncode == 0, answered.stderr
    assert server.ran("Bo") == []  # approval 1 of 2

    again = server.cli("answer", "--server", server.url, "--link", alice, token=TOKENS["alice"])
    assert again.returncode == 2 and "used already" in again.stderr, again.stderr
    with pytest.raises(InvalidLinkError, match="used already"):
        server.agent("alice", "two").resume(link=alice)
    with pytest.raises(InvalidLinkError, match="cannot change its decision"):
        server.agent("bob", "two").resume("rejected", link=bob)
    assert server.ran("Bo") == []

    done = server.agent("bob", "two").resume(link=bob)
    assert done.termination_reason == "completed"
    assert [e["amount"] for e in server.ran("Bo")] == [7]
    trail = [
        (e.kind, e.who, e.authenticated_by) for e in server.agent("bob", "two").audit("link-two")
    ]
    assert ("decision", "alice", "signed_link") in trail
    assert ("decision", "bob", "signed_link") in trail
    with pytest.raises(InvalidLinkError, match="not pending"):
        server.agent("bob", "two").resume(link=bob)


@pytest.fixture(autouse=True)
def _keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """This process signs with the deployment's keys (``k2`` first), as its mailer would."""
    monkeypatch.setenv("DYNAVEC_LINK_KEYS", ENV_KEYS)


@pytest.mark.service
def test_the_pause_notification_carries_what_signs_its_links(
    server: Server, tmp_path: Path
) -> None:
    """The deployment's notification of a pause (its webhook) carries a pair of links per
    named approver (``DYNAVEC_LINK_BASE_URL``); it also names the thread and the review digest,
    from which a receiver holding the keys signs links itself."""
    receiver = Receiver(tmp_path / "hook.jsonl").start()
    try:
        headers = {"Authorization": f"Bearer {TOKENS['alice']}"}
        alice = RemoteReActAgent(
            server.url, "alice_or_bob", headers=headers, timeout=60, notify=receiver.url
        )
        assert alice.run("transfer 9 to Flo", thread_id="link-mail").termination_reason == (
            "interrupted"
        )
        deadline = time.monotonic() + 30
        while not [r for r in receiver.received() if r["body"]["event"] == "paused"]:
            assert time.monotonic() < deadline, "the server did not notify the webhook"
            time.sleep(0.1)  # the server's background delivery; nothing to wait on instead
        (note,) = [r["body"] for r in receiver.received() if r["body"]["event"] == "paused"]
    finally:
        receiver.stop()
    assert sorted(note["links"]) == ["alice", "bob"]
    assert sorted(note["links"]["bob"]) == ["approve", "reject"]
    assert note["links"]["bob"]["reject"].startswith(f"{server.url}/dynavec/link/dl1.k2.")
    signed = approval_links(note, approver="bob", base_url=server.url)  # the receiver's own
    assert _post(note["links"]["bob"]["reject"]).status_code == 200  # bob rejects from his mail
    assert server.ran("Flo") == []
    assert _pending(server, "link-mail")["id"] == []  # answered: the run went on
    assert _post(note["links"]["bob"]["approve"]).status_code == 409  # its pair: too late
    assert _post(signed["approve"]).status_code == 409
    assert server.ran("Flo") == []


@pytest.mark.service
def test_a_link_after_its_pause_expired_is_refused_and_changes_nothing(server: Server) -> None:
    """The pause expires two seconds after it is raised; the link itself would still be
    valid for a day. The expiry is the tool's to settle (``inbox expire``, the next run)."""
    pause = _paused(server, "expiring", "transfer 4 to Gus", "link-late")
    approve = _links(server, pause, "bob", expires_in=timedelta(days=1))["approve"]
    state = server.sdk("alice").threads.get_state(pause["thread_id"])
    due = datetime.fromisoformat(state["interrupts"][0]["value"]["expires_at"])
    time.sleep(max(0.0, (due - datetime.now(UTC)).total_seconds()) + 0.2)  # a real deadline
    shown = httpx.get(approve, headers={"accept": "application/json"}, timeout=30)
    assert shown.status_code == 410, shown.text
    late = _post(approve)
    assert late.status_code == 410 and "expired" in late.json()["detail"], late.text
    with pytest.raises(InvalidLinkError, match="expired"):
        server.agent("bob", "expiring").resume(link=_token(approve))
    assert _pending(server, "link-late") == pause and server.ran("Gus") == []
