"""Signed, single-use approval links without a server (docs/security.md): the token (HMAC
signing, key rotation, expiry, tampering) and its check inside the paused tool, on a graph run
with a store as a LangGraph server runs it. ``tests/test_approval_links.py`` does the same
through a real ``langgraph dev`` serving ``dynavec_langgraph.links:app``.
"""

from __future__ import annotations

import base64
import json
import re
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore
from langgraph.types import Command, Interrupt

from dynavec_langgraph import (
    ApprovalPolicy,
    InvalidDecisionError,
    InvalidLinkError,
    InvalidOptionError,
    MissingDependencyError,
    ReActAgent,
    create_react_agent,
    tool,
)
from dynavec_langgraph._approvals.links import link_answer, read_link, sign_link
from dynavec_langgraph._names import USED_NS
from dynavec_langgraph.approval import require_approval
from dynavec_langgraph.audit import audit_trail
from dynavec_langgraph.links import LinkKeys, approval_links, create_app, verify_link
from dynavec_langgraph.testing import ScriptedChatModel

SECRET_1 = "first-secret-0123456789abcdefgh"
SECRET_2 = "second-secret-0123456789abcdefg"
KEYS = LinkKeys({"k1": SECRET_1})
SOON = timedelta(minutes=10)
ran: list[dict[str, Any]] = []


@tool
def pay(amount: int, to: str) -> str:
    """Pay ``amount`` to ``to``."""
    ran.append({"amount": amount, "to": to})
    return f"Paid {amount} to {to}."


@pytest.fixture(autouse=True)
def _fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    ran.clear()
    monkeypatch.delenv("DYNAVEC_LINK_KEYS", raising=False)


def _token(keys: LinkKeys = KEYS, **given: Any) -> str:
    claims: dict[str, Any] = {
        "thread_id": "t",
        "review_digest": "d" * 32,
        "decision": "approved",
        "approver": "alice",
        "expires_at": datetime.now(UTC) + SOON,
    }
    return sign_link(keys, **{**claims, **given})


def _changed(token: str, **fields: Any) -> str:
    """``token`` with its payload edited (the signature left as it was)."""
    version, kid, payload, signature = token.split(".")
    body = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    body.update(fields)
    raw = json.dumps(body, sort_keys=True, separators=(",", ":")).encode()
    edited = base64.urlsafe_b64encode(raw).rstrip(b"=").decode()
    return f"{version}.{kid}.{edited}.{signature}"


# --- the token ---------------------------------------------------------------------------


def test_a_signed_token_verifies_and_says_what_it_binds() -> None:
    token = _token()
    claims = verify_link(token, KEYS)
    assert (claims.key_id, claims.thread_id, claims.review_digest) == ("k1", "t", "d" * 32)
    assert (claims.decision, claims.approver) == ("approved", "alice")
    assert read_link(token) == claims
    assert SECRET_1 not in token  # the key never travels


def test_a_token_carries_the_roles_and_permissions_the_deployment_vouched_for() -> None:
    claims = verify_link(_token(roles=["finance"], permissions=["payments:approve"]), KEYS)
    assert (claims.roles, claims.permissions) == (("finance",), ("payments:approve",))
    assert verify_link(_token(), KEYS).permissions == ()
    with pytest.raises(InvalidOptionError, match="list of names"):
        _token(roles="finance")


def test_tokens_are_unique_per_signing() -> None:
    assert read_link(_token()).nonce != read_link(_token()).nonce


@pytest.mark.parametrize(
    ("edit", "match"),
    [
        ({"v": "rejected"}, "bad signature"),  # a changed decision
        ({"a": "mallory"}, "bad signature"),  # a forged approver
        ({"t": "other"}, "bad signature"),  # another thread
        ({"d": "e" * 32}, "bad signature"),  # another pause
        ({"e": 4102444800}, "bad signature"),  # a later expiry
        ({"p": ["payments:approve"]}, "bad signature"),  # a permission added
    ],
    ids=["decision", "approver", "thread", "pause", "expiry", "permission"],
)
def test_an_edited_token_is_refused(edit: dict[str, Any], match: str) -> None:
    with pytest.raises(InvalidLinkError, match=match):
        verify_link(_changed(_token(), **edit), KEYS)


def test_a_token_signed_with_another_secret_or_an_unknown_key_id_is_refused() -> None:
    forged = _token(LinkKeys({"k1": "not-the-deployment-secret-000"}))
    with pytest.raises(InvalidLinkError, match="bad signature"):
        verify_link(forged, KEYS)
    foreign = _token(LinkKeys({"k9": SECRET_1}))
    with pytest.raises(InvalidLinkError, match="key id 'k9'"):
        verify_link(foreign, KEYS)


def test_an_expired_token_is_refused() -> None:
    token = _token(expires_at=datetime.now(UTC) - timedelta(seconds=1))
    with pytest.raises(InvalidLinkError, match="expired"):
        verify_link(token, KEYS)
    assert verify_link(token, KEYS, check_expiry=False).approver == "alice"


@pytest.mark.parametrize(
    "token", ["", "x", "dl1.k1.abc", "dl2.k1.e30.sig", "dl1.k 1.e30.sig", "dl1.k1.!!!.sig", 7]
)
def test_a_malformed_token_is_refused_saying_so(token: Any) -> None:
    with pytest.raises(InvalidLinkError, match="approval link token"):
        verify_link(token, KEYS)
    assert isinstance(InvalidLinkError("x"), InvalidDecisionError | ValueError)


def test_key_rotation_old_keys_verify_only_the_current_one_signs() -> None:
    old = _token(LinkKeys({"k1": SECRET_1}))
    rotated = LinkKeys({"k2": SECRET_2, "k1": SECRET_1})
    new = _token(rotated)
    assert read_link(new).key_id == "k2"  # the first key signs
    assert verify_link(old, rotated).key_id == "k1"  # the old key still verifies
    assert verify_link(new, rotated).key_id == "k2"
    with pytest.raises(InvalidLinkError, match="key id 'k1'"):  # retired
        verify_link(old, LinkKeys({"k2": SECRET_2}))
    assert (
        read_link(_token(LinkKeys({"k2": SECRET_2, "k1": SECRET_1}, current="k1"))).key_id == "k1"
    )


def test_keys_come_from_the_environment_and_never_show() -> None:
    keys = LinkKeys.from_env({"DYNAVEC_LINK_KEYS": f"k2={SECRET_2}, k1={SECRET_1}"})
    assert keys is not None and (keys.current, keys.key_ids) == ("k2", ("k2", "k1"))
    assert SECRET_1 not in repr(keys) and SECRET_2 not in repr(keys) and SECRET_1 not in str(keys)
    assert LinkKeys.from_env({}) is None


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("k1", "KEY_ID=SECRET"),
        (f"k1={SECRET_1},k1={SECRET_2}", "given twice"),
        ("k1=short", "at least 16"),
        (f"bad id={SECRET_1}", "letters, digits"),
    ],
)
def test_malformed_keys_are_refused_without_showing_the_secret(text: str, match: str) -> None:
    with pytest.raises(InvalidOptionError, match=match) as error:
        LinkKeys.from_env({"DYNAVEC_LINK_KEYS": text})
    assert SECRET_1 not in str(error.value) and "short" not in str(error.value)
    assert isinstance(error.value, ValueError)


def test_approval_links_sign_one_link_per_decision_bound_to_the_pause() -> None:
    deadline = (datetime.now(UTC) + timedelta(minutes=5)).isoformat()
    pause = {"thread_id": "t", "digest": "d" * 32, "deadline": deadline}
    links = approval_links(pause, approver="bob", keys=KEYS, base_url="https://srv.test/")
    tokens = {k: v.removeprefix("https://srv.test/dynavec/link/") for k, v in links.items()}
    decided = {k: verify_link(v, KEYS).decision for k, v in tokens.items()}
    assert decided == {"approve": "approved", "reject": "rejected"}
    claims = verify_link(tokens["approve"], KEYS)
    assert claims.expires_at <= datetime.fromisoformat(deadline)  # never past the pause's
    with pytest.raises(InvalidOptionError, match="need keys"):
        approval_links(pause, approver="bob")
    with pytest.raises(InvalidOptionError, match="no review digest"):
        approval_links({"thread_id": "t"}, approver="bob", keys=KEYS)


# --- inside the paused tool (a graph run as a server runs it: with a store) ----------------


def _graph(*, store: bool = True, **options: Any) -> Any:
    call = {"name": "pay", "args": {"amount": 5, "to": "Ann"}, "id": "c1"}
    policy = ApprovalPolicy(link_keys=LinkKeys({"k2": SECRET_2, "k1": SECRET_1}))
    graph = create_react_agent(
        ScriptedChatModel(turns=[AIMessage("", tool_calls=[call]), "done"]),
        [require_approval(pay, policy=policy, **options)],
        checkpointer=InMemorySaver(),
        store=InMemoryStore() if store else None,
    )
    graph.invoke({"messages": [("user", "pay")]}, _config())
    return graph


def _config(thread: str = "t") -> Any:
    return {"configurable": {"thread_id": thread, "dynavec_audit": True}}


def _pending(graph: Any) -> Interrupt | None:
    found = graph.get_state(_config()).interrupts
    return found[0] if found else None


def _link(graph: Any, approver: str = "alice", decision: str = "approved", **given: Any) -> str:
    pause = _pending(graph)
    assert pause is not None
    digest = pause.value["review_digest"]
    return _token(review_digest=digest, decision=decision, approver=approver, **given)


def _send(graph: Any, token: str) -> tuple[Interrupt, Interrupt | None]:
    pause = _pending(graph)
    assert pause is not None
    graph.invoke(Command(resume={pause.id: link_answer(token)}), _config())
    return pause, _pending(graph)


def test_a_valid_link_applies_once_and_the_trail_says_signed_link_with_its_key_id() -> None:
    graph = _graph(approvers=["alice", "bob"])
    token = _link(graph)
    _, after = _send(graph, token)
    assert after is None and ran == [{"amount": 5, "to": "Ann"}]
    (decided,) = [e for e in audit_trail(graph.store, "t") if e.kind == "decision"]
    assert (decided.who, decided.authenticated_by) == ("alice", "signed_link")
    assert decided.decision["signed_link"]["key_id"] == "k1"
    assert token not in json.dumps([e.as_dict() for e in audit_trail(graph.store, "t")])
    assert SECRET_1 not in json.dumps(graph.get_state(_config()).values, default=str)


def _refused(graph: Any, token: str, match: str) -> None:
    pause, again = _send(graph, token)
    assert again is not None and ran == []
    assert match in again.value["error"], again.value["error"]
    assert again.value["review_digest"] == pause.value["review_digest"]  # the real links work


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda g: _changed(_link(g), v="rejected"), "bad signature"),
        (lambda g: _link(g, thread_id="other"), "for thread 'other'"),
        (lambda g: _token(review_digest="e" * 32), "review digest"),
        (lambda g: _link(g, expires_at=datetime.now(UTC) - timedelta(seconds=1)), "expired"),
        (lambda g: _link(g, keys=LinkKeys({"k3": SECRET_1})), "key id 'k3'"),
        (lambda g: _link(g, approver="mallory"), "'mallory' may not approve"),
    ],
    ids=["changed-decision", "other-thread", "other-pause", "expired", "unknown-key", "approver"],
)
def test_a_bad_link_is_refused_and_the_real_one_still_works(make: Any, match: str) -> None:
    graph = _graph(approvers=["alice", "bob"])
    _refused(graph, make(graph), match)
    refused = [e for e in audit_trail(graph.store, "t") if e.kind == "refused"]
    assert refused and refused[-1].authenticated_by in (None, "signed_link")
    _, after = _send(graph, _link(graph, "bob"))
    assert after is None and ran == [{"amount": 5, "to": "Ann"}]


def test_a_link_used_twice_is_refused_also_for_the_next_approval_of_several() -> None:
    graph = _graph(approvers=["alice", "bob", "carol"], approvals_required=2)
    alice = _link(graph)
    _, after = _send(graph, alice)
    assert after is not None and after.value["approval"]["approved_by"] == ["alice"]
    _refused(graph, alice, "used already")  # the same digest is pending: the nonce refuses it
    _, after = _send(graph, _link(graph, "bob"))
    assert after is None and ran == [{"amount": 5, "to": "Ann"}]
    trail = [(e.kind, e.who, e.outcome) for e in audit_trail(graph.store, "t")]
    assert ("decision", "alice", "approval 1 of 2") in trail
    assert ("decision", "bob", "approval 2 of 2") in trail


def test_an_earlier_link_is_read_again_after_it_expired() -> None:
    """LangGraph gives the tool its earlier answers again on every run: alice's link, used
    before it expired, still counts when bob answers after its expiry."""
    graph = _graph(approvers=["alice", "bob"], approvals_required=2)
    alice = _link(graph, expires_at=datetime.now(UTC) + timedelta(seconds=1))
    _send(graph, alice)
    (entry,) = graph.store.search((USED_NS,))
    assert entry.key == read_link(alice).nonce
    time.sleep(max(0.0, (read_link(alice).expires_at - datetime.now(UTC)).total_seconds()))
    with pytest.raises(InvalidLinkError, match="expired"):  # alice's link has expired now
        verify_link(alice, KEYS)
    _, after = _send(graph, _link(graph, "bob"))
    assert after is None and ran == [{"amount": 5, "to": "Ann"}]


def test_a_link_to_a_graph_without_a_store_is_refused_saying_why() -> None:
    graph = _graph(store=False, approvers=["alice"])
    _refused(graph, _link(graph), "no store")


def test_a_pause_without_a_policy_takes_a_link_too() -> None:
    call = {"name": "pay", "args": {"amount": 5, "to": "Ann"}, "id": "c1"}
    graph = create_react_agent(
        ScriptedChatModel(turns=[AIMessage("", tool_calls=[call]), "done"]),
        [require_approval(pay)],
        checkpointer=InMemorySaver(),
        store=InMemoryStore(),
    )
    graph.invoke({"messages": [("user", "pay")]}, _config())
    forged = _changed(_link(graph), v="rejected")
    with pytest.MonkeyPatch.context() as env:
        env.setenv("DYNAVEC_LINK_KEYS", f"k1={SECRET_1}")
        _refused(graph, forged, "bad signature")
        _, after = _send(graph, _link(graph))
    assert after is None and ran == [{"amount": 5, "to": "Ann"}]
    (decided,) = [e for e in audit_trail(graph.store, "t") if e.kind == "decision"]
    assert (decided.who, decided.authenticated_by) == ("alice", "signed_link")


def test_every_test_docs_security_points_at_exists() -> None:
    """docs/security.md backs each claim with ``tests/FILE.py::test_name``: each exists."""
    root = Path(__file__).resolve().parents[1]
    cited = set(re.findall(r"(tests/\w+\.py)::(\w+)", (root / "docs/security.md").read_text()))
    assert len(cited) >= 20
    for path, name in sorted(cited):
        source = (root / path).read_text()
        assert re.search(rf"^(async )?def {name}\(", source, re.MULTILINE), f"{path}::{name}"


# --- the doors refuse a bad link before sending anything -----------------------------------


def test_remote_react_agent_refuses_a_bad_link_before_sending_anything() -> None:
    from dynavec_langgraph.remote import RemoteReActAgent

    agent = RemoteReActAgent("http://127.0.0.1:9", "graph", timeout=1)  # nothing listens there
    token = _token(thread_id="1f1ed19a-2c98-6658-8002-e533ae5ca1a4")
    with pytest.raises(InvalidLinkError, match="malformed"):
        agent.resume(link="dl1.k1.not-a-payload.sig")
    with pytest.raises(InvalidLinkError, match="cannot change its decision"):
        agent.resume("rejected", link=token)
    with pytest.raises(InvalidLinkError, match="not 'other'"):
        agent.resume(link=token, thread_id="other")
    with pytest.raises(InvalidDecisionError, match="without decisions= or approver="):
        agent.resume(link=token, approver="bob")


@pytest.mark.parametrize(
    ("argv", "match"),
    [
        (["--db", "x.db", "--link", "TOKEN"], "--link answers through a deployment"),
        (["--server", "http://127.0.0.1:9", "--link", "TOKEN", "--as", "bob"], "--as cannot"),
        (["--server", "http://127.0.0.1:9", "--link", "dl1.k1.x.y"], "malformed"),
        (["--server", "http://127.0.0.1:9", "--approve"], "give --thread ID"),
    ],
)
def test_inbox_answer_link_refuses_bad_arguments_saying_what_to_do(
    argv: list[str], match: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from dynavec_langgraph._cli import main

    assert main(["inbox", "answer", *argv]) == 2
    assert match in capsys.readouterr().err


def _notified(thread: str) -> dict[str, Any]:
    """The notification of the pause of a new agent's run in ``thread``."""
    notes: list[dict[str, Any]] = []
    call = {"name": "pay", "args": {"amount": 5, "to": "Ann"}, "id": "c1"}
    agent = ReActAgent(
        ScriptedChatModel(turns=[AIMessage("", tool_calls=[call]), "done"]),
        [require_approval(pay, approvers=["alice", "bob", "role:finance"])],
        checkpointer=InMemorySaver(),
        notify=notes.append,
    )
    agent.run("pay", thread_id=thread)
    deadline = time.monotonic() + 10
    while not notes:
        assert time.monotonic() < deadline, "no notification"
        time.sleep(0.05)  # the outbox delivers in the background; nothing to wait on instead
    (note,) = notes
    return note


def test_a_pause_notification_carries_its_named_approvers_links(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With ``DYNAVEC_LINK_BASE_URL`` and the keys set, each pause notification carries an
    approve / reject pair per named approver; roles name nobody to sign for."""
    monkeypatch.setenv("DYNAVEC_LINK_KEYS", f"k1={SECRET_1}")
    monkeypatch.setenv("DYNAVEC_LINK_BASE_URL", "https://agents.test")
    note = _notified("t")
    assert sorted(note["links"]) == ["alice", "bob"]
    token = note["links"]["alice"]["approve"].removeprefix("https://agents.test/dynavec/link/")
    claims = verify_link(token, KEYS)
    assert (claims.thread_id, claims.review_digest) == ("t", note["digest"])
    assert (claims.approver, claims.decision) == ("alice", "approved")
    monkeypatch.setenv("DYNAVEC_LINK_KEYS", "k1=short")
    broken = _notified("t2")
    assert "at least 16" in broken["links_error"] and "links" not in broken
    monkeypatch.delenv("DYNAVEC_LINK_BASE_URL")
    assert "links" not in _notified("t3")  # links only when the deployment asks for them


def test_the_endpoint_without_the_studio_extra_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Signing and verifying need only the standard library; serving links needs the server's
    packages (starlette, langgraph_sdk: the ``studio`` extra)."""
    monkeypatch.setitem(sys.modules, "starlette.applications", None)
    with pytest.raises(MissingDependencyError, match=r"dynavec-langgraph\[studio\]") as raised:
        create_app()
    assert raised.value.extra == "studio"
    assert verify_link(_token(), KEYS).approver == "alice"  # the token needs no extra
