"""The signed-in user is the approver (docs/approvals-in-production.md, "On a server with
auth"), in process: the graph run with the config a LangGraph API server with custom auth
gives a run (``langgraph_auth_user``, ``langgraph_auth_permissions``) and a store, as the
server runs it. ``tests/test_approvals_auth_server.py`` does the same through a real
``langgraph dev`` with an auth handler.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore
from langgraph.types import Command, Interrupt

from dynavec_langgraph import (
    ApproverMismatchError,
    ApproverRefusedError,
    create_react_agent,
    tool,
)
from dynavec_langgraph._pauses.policy.doors import refuse_approver
from dynavec_langgraph.approval import approver_decision, require_approval
from dynavec_langgraph.audit import audit_trail
from dynavec_langgraph.testing import ScriptedChatModel

ran: list[dict[str, Any]] = []


@tool
def pay(amount: int, to: str) -> str:
    """Pay ``amount`` to ``to``."""
    ran.append({"amount": amount, "to": to})
    return f"Paid {amount} to {to}."


@pytest.fixture(autouse=True)
def _fresh_ledger() -> None:
    ran.clear()


USERS: dict[str, dict[str, Any]] = {
    "alice": {"identity": "alice", "permissions": ["payments:approve"]},
    "bob": {"identity": "bob", "permissions": ["payments:approve"]},
    "carol": {"identity": "carol", "permissions": ["payments:approve"], "roles": ["finance"]},
    "mallory": {"identity": "mallory", "permissions": []},
    "studio": {
        "identity": "langgraph-studio-user",
        "is_authenticated": False,
        "kind": "StudioUser",
    },
}


def _as(user: Any, thread: str = "t", **configurable: Any) -> Any:
    """The config a server with auth gives a run of ``user`` (a name of :data:`USERS`, or a
    user object) plus what the client sent."""
    signed = USERS[user] if isinstance(user, str) else user
    identity = signed["identity"] if isinstance(signed, dict) else signed.identity
    conf = {
        "thread_id": thread,
        "langgraph_auth_user": signed,
        "langgraph_auth_user_id": identity,
        "langgraph_auth_permissions": (
            signed.get("permissions", []) if isinstance(signed, dict) else signed.permissions
        ),
        **configurable,
    }
    return {"configurable": conf}


def _graph(*, store: bool = True, audit: bool = False, **options: Any) -> Any:
    call = {"name": "pay", "args": {"amount": 5, "to": "Ann"}, "id": "c1"}
    graph = create_react_agent(
        ScriptedChatModel(turns=[AIMessage("", tool_calls=[call]), "done"]),
        [require_approval(pay, **options)],
        checkpointer=InMemorySaver(),
        store=InMemoryStore() if store else None,
    )
    config = _as("alice", dynavec_audit=True) if audit else _as("alice")
    graph.invoke({"messages": [("user", "pay")]}, config)
    return graph


def _pending(graph: Any, thread: str = "t") -> Interrupt:
    (pause,) = graph.get_state({"configurable": {"thread_id": thread}}).interrupts
    return pause  # type: ignore[no-any-return]


def _answer(graph: Any, user: Any, value: Any, **configurable: Any) -> tuple[Interrupt, Any]:
    """``user`` answers the pending pause with ``value``: (the pause, the one after, or None)."""
    pause = _pending(graph)
    graph.invoke(Command(resume={pause.id: value}), _as(user, **configurable))
    after = graph.get_state({"configurable": {"thread_id": "t"}}).interrupts
    return pause, (after[0] if after else None)


def test_a_plain_answer_of_an_allowed_signed_in_user_is_accepted() -> None:
    graph = _graph(approvers=["alice", "bob"])
    _, after = _answer(graph, "bob", "approved")
    assert after is None and ran == [{"amount": 5, "to": "Ann"}]


@pytest.mark.parametrize(
    ("value", "configurable"),
    [
        (approver_decision("approved", "alice"), {}),  # the answer names alice
        ("approved", {"approver": "alice"}),  # the run's config names alice
        (approver_decision("approved", {"name": "alice", "roles": ["finance"]}), {}),
    ],
    ids=["value", "configurable", "value-with-roles"],
)
def test_a_signed_in_user_answering_as_another_is_refused(value: Any, configurable: Any) -> None:
    graph = _graph(approvers=["alice", "bob"])
    pause, again = _answer(graph, "mallory", value, **configurable)
    assert ran == [] and again is not None and again.id != pause.id
    state = again.value["approval"]
    assert (state["refused_approver"], state["claimed_approver"]) == ("mallory", "alice")
    assert again.value["error"].startswith(
        "the answer names approver 'alice', but the server signed in 'mallory'"
    )
    with pytest.raises(ApproverMismatchError, match="signed in 'mallory'") as caught:
        refuse_approver([pause], [again])  # what the doors raise from the re-asked pause
    assert (caught.value.approver, caught.value.claimed) == ("mallory", "alice")
    assert isinstance(caught.value, ApproverRefusedError)

    _, done = _answer(graph, "alice", "approved")  # alice herself, plain
    assert done is None and ran == [{"amount": 5, "to": "Ann"}]


def test_bob_answering_as_alice_is_refused_though_both_may_approve() -> None:
    graph = _graph(approvers=["alice", "bob"])
    _, again = _answer(graph, "bob", approver_decision("approved", "alice"))
    assert again is not None and again.value["approval"]["claimed_approver"] == "alice"
    assert ran == []
    _, done = _answer(graph, "bob", approver_decision("approved", "bob"))  # his own name: fine
    assert done is None and len(ran) == 1


def test_a_refused_answer_is_not_replayed_as_the_next_users() -> None:
    """LangGraph replays every answer under the latest run's config: mallory's refused edit
    must stay mallory's when alice's run replays it (it was bound to mallory in the store)."""
    graph = _graph(approvers=["alice"])
    to_mallory = {"name": "pay", "args": {"amount": 999, "to": "mallory"}}
    edit = {"decisions": [{"type": "edit", "edited_action": to_mallory}]}
    _, again = _answer(graph, "mallory", edit)
    assert again is not None and again.value["approval"]["refused_approver"] == "mallory"
    _, again = _answer(graph, "mallory", "rejected")
    assert again is not None and ran == []

    _, done = _answer(graph, "alice", "approved")
    assert done is None and ran == [{"amount": 5, "to": "Ann"}]  # alice's answer, as asked


def test_several_approvers_count_distinct_signed_in_users_only() -> None:
    graph = _graph(approvers=["alice", "bob", "carol"], approvals_required=2)
    _, first = _answer(graph, "alice", "approved")
    assert first is not None and first.value["approval"]["approved_by"] == ["alice"]
    _, again = _answer(graph, "alice", "approved")  # alice twice
    assert again is not None and "already approved" in again.value["error"]
    _, again = _answer(graph, "alice", approver_decision("approved", "bob"))  # alice as bob
    assert again is not None and again.value["approval"]["claimed_approver"] == "bob"
    _, again = _answer(graph, "mallory", approver_decision("approved", "bob"))
    assert again is not None and again.value["approval"]["refused_approver"] == "mallory"
    assert again.value["approval"]["approved_by"] == ["alice"] and ran == []

    _, done = _answer(graph, "bob", "approved")
    assert done is None and ran == [{"amount": 5, "to": "Ann"}]


def test_roles_and_permissions_come_from_the_server_not_from_the_answer() -> None:
    graph = _graph(approvers=["role:finance"])
    claimed = approver_decision("approved", {"name": "mallory", "roles": ["finance"]})
    _, again = _answer(graph, "mallory", claimed)  # her own name, a role she claims
    assert again is not None and again.value["error"] == (
        "approver 'mallory' may not approve 'approve_pay'"
    )
    _, done = _answer(graph, "carol", "approved")  # carol's role, from the server's user
    assert done is None and len(ran) == 1

    ran.clear()
    graph = _graph(approvers=["permission:payments:approve"])
    _, again = _answer(graph, "mallory", "approved")
    assert again is not None and again.value["approval"]["refused_approver"] == "mallory"
    _, done = _answer(graph, "bob", "approved")
    assert done is None and len(ran) == 1


def test_a_callable_rule_gets_the_signed_in_user_and_how_it_was_identified() -> None:
    seen: list[dict[str, Any]] = []

    def rule(approver: Any, pause: Any) -> bool:
        seen.append(dict(approver))
        return "payments:approve" in approver["permissions"]

    graph = _graph(approvers=rule)
    _answer(graph, "mallory", "approved")
    _answer(graph, "alice", "approved")
    assert len(ran) == 1
    assert seen[-1] == {
        "name": "alice",
        "roles": [],
        "permissions": ["payments:approve"],
        "authenticated_by": "server",
    }


def test_an_unauthenticated_user_cannot_approve_a_pause_that_names_approvers() -> None:
    """langgraph dev lets Studio's local user in without the auth handler (unauthenticated)."""
    graph = _graph(approvals_required=2)
    _, again = _answer(graph, "studio", "approved")
    assert again is not None and "is not authenticated" in again.value["error"]
    assert again.value["approval"]["approved_by"] == [] and ran == []


def test_without_a_store_the_signed_in_user_cannot_be_bound_and_the_answer_is_refused() -> None:
    graph = _graph(store=False, approvers=["alice"])
    _, again = _answer(graph, "alice", "approved")
    assert again is not None and ran == []
    assert again.value["error"].startswith("the signed-in approver cannot be bound")


def test_a_pause_anyone_may_answer_needs_no_binding() -> None:
    """An expiry only: who answered decides nothing, so no store is needed to accept it."""
    graph = _graph(store=False, expires_in=3600)
    _, done = _answer(graph, "mallory", "approved")
    assert done is None and len(ran) == 1


def test_the_trail_records_the_signed_in_user_not_the_claimed_one() -> None:
    graph = _graph(approvers=["alice", "bob"], audit=True)
    _answer(graph, "mallory", approver_decision("approved", "alice"), dynavec_audit=True)
    _answer(graph, "bob", "approved", dynavec_audit=True)
    trail = [(e.kind, e.who) for e in audit_trail(graph.store, "t") if e.kind != "paused"]
    assert ("refused", "mallory") in trail and ("decision", "bob") in trail
    assert all(who != "alice" for _, who in trail)


def test_a_user_langsmith_signed_in_names_its_approver_as_without_auth() -> None:
    """LangSmith's own auth (API keys, Studio) signs in a ``StudioUser``, not one of the
    deployment's users: its answers name their approver, as on a server without auth. An
    answer given earlier by a user of the deployment's handler keeps that user."""
    from langgraph_sdk.auth.types import StudioUser

    langsmith = StudioUser("ls-user-1", is_authenticated=True)
    graph = _graph(approvers=["alice", "bob"])
    _, again = _answer(graph, "mallory", approver_decision("approved", "alice"))
    assert again is not None and again.value["approval"]["claimed_approver"] == "alice"
    _, again = _answer(graph, langsmith, "approved")  # no name: as without auth
    assert again is not None and "needs a named approver" in again.value["error"]
    assert ran == []  # mallory's claim, replayed in this run, is still mallory's: refused

    _, done = _answer(graph, langsmith, approver_decision("approved", "bob"))
    assert done is None and ran == [{"amount": 5, "to": "Ann"}]


def test_a_server_without_auth_that_signs_in_anonymous_is_a_server_without_auth() -> None:
    """Aegra with no auth handler puts ``{"identity": "anonymous", "is_authenticated": True}``
    in every run's config: it proves nobody, so answers name their approver as without auth
    (tests/test_approvals_cluster.py runs this on a real Aegra server)."""
    anonymous = {"identity": "anonymous", "is_authenticated": True}  # and a display_name
    graph = _graph(approvers=["alice", "bob"])
    _, again = _answer(graph, anonymous, "approved")  # no name: asked again, as without auth
    assert again is not None and "needs a named approver" in again.value["error"]
    _, done = _answer(graph, anonymous, approver_decision("approved", "alice"))
    assert done is None and ran == [{"amount": 5, "to": "Ann"}]
