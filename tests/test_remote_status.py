"""How :mod:`dynavec_langgraph.remote` reads run and thread statuses as both engines report
them (the servers themselves are exercised in ``tests/test_cluster.py``; these pin the reading
of each status shape, on both engines' forms, without a server).

langgraph-api marks a paused run ``success`` and the thread ``interrupted``; Aegra marks the
paused *run* ``interrupted``, keeps only the message of a failed run (``error_message``), and
does not record a run's command (a resume of this package tags its run config instead).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Interrupt

from dynavec_langgraph import (
    ApprovalPolicy,
    ApprovalTimeoutError,
    ConcurrentResumeError,
    InvalidDecisionError,
    ReActAgent,
)
from dynavec_langgraph._exactly_once.claims import CLAIM_REFUSED
from dynavec_langgraph._pauses.policy.answers import expiry_answer
from dynavec_langgraph._remote.expiry import approval_timeout, not_yet, settling
from dynavec_langgraph._remote.runs import (
    _answers_any,
    check_run,
    failures_since_last_result,
    tagged,
    writer_after,
)
from dynavec_langgraph._remote.threads import Seen, settled, shown_checkpoints, thread_seen
from dynavec_langgraph.remote import RemoteRunError
from dynavec_langgraph.testing import ScriptedChatModel
from tests.approvals_graph import RAISE_IN, expiring_policy, expiring_tools

PAUSE = Interrupt(value={"node_id": "approve", "payload": {}}, id="a" * 32)
PAUSED = Seen(True, "c1", [PAUSE], {})
DONE = Seen(True, "c2", [], {"messages": []}, status="idle")


def test_a_paused_run_is_fine_on_both_engines() -> None:
    check_run("t", {"status": "success"}, {}, DONE, PAUSED)  # langgraph-api
    check_run("t", {"status": "interrupted"}, {}, DONE, PAUSED)  # Aegra
    with pytest.raises(RemoteRunError, match="ended with status 'interrupted'"):
        check_run("t", {"status": "interrupted"}, {}, PAUSED, DONE)  # cancelled, not paused


def test_a_run_the_claim_refused_is_a_concurrent_resume_on_both_engines() -> None:
    message = f"thread 't': call 'c' (pay) is being resumed right now; {CLAIM_REFUSED}."
    joined = {"__error__": {"error": "ConcurrentResumeError", "message": message}}
    with pytest.raises(ConcurrentResumeError, match="nothing ran here"):
        check_run("t", {"status": "error"}, joined, PAUSED, PAUSED)  # langgraph-api
    with pytest.raises(ConcurrentResumeError, match="nothing ran here"):
        check_run("t", {"status": "error", "error_message": message}, {}, PAUSED, PAUSED)
    with pytest.raises(RemoteRunError, match="boom"):  # any other failure stays one
        check_run("t", {"status": "error", "error_message": "boom"}, {}, PAUSED, PAUSED)


def test_a_schema_refusal_from_the_message_alone() -> None:
    message = "1 validation error for Approval\napproved\n  Field required"
    with pytest.raises(InvalidDecisionError):
        check_run("t", {"status": "error", "error_message": message}, {}, PAUSED, PAUSED)


def test_a_run_still_in_flight_after_the_wait_is_not_a_result() -> None:
    with pytest.raises(RemoteRunError, match=r"still 'running'.*Aegra 0\.6\.0"):
        check_run("t", {"status": "running", "run_id": "r"}, {}, PAUSED, PAUSED)


def test_a_busy_or_failed_thread_has_no_result() -> None:
    assert settled("t", DONE) is DONE
    assert settled("t", PAUSED) is PAUSED
    for status, said in (("busy", "is busy"), ("error", "failed on the server")):
        with pytest.raises(RemoteRunError, match=said):
            settled("t", Seen(True, "c", [], {}, status == "busy", "r1", status))


def test_runs_tagged_with_the_interrupt_ids_they_answer() -> None:
    other = "b" * 32
    aegra_run: dict[str, Any] = {"config": tagged({other: "approved"})}
    assert not _answers_any(aegra_run, [PAUSE.id])
    assert _answers_any(aegra_run, [other])
    lg_run = {"kwargs": {"command": {"resume": {other: "approved"}}}, **aegra_run}
    assert not _answers_any(lg_run, [PAUSE.id])
    assert _answers_any({"config": {}}, [PAUSE.id])  # untagged (new input): it moved the thread


def test_the_failures_that_may_have_set_the_threads_error_status() -> None:
    # Aegra, two resumes at once (seen in CI): the refused run's row was updated just before
    # the winner's, and its end wrote the thread's ``error`` status after the winner's ``idle``
    refused = {
        "run_id": "lost",
        "status": "error",
        "created_at": "10:00:00.2",
        "updated_at": "10:00:01.0",
    }
    won = {
        "run_id": "won",
        "status": "success",
        "created_at": "10:00:00.1",
        "updated_at": "10:00:01.1",
    }
    paused = {
        "run_id": "first",
        "status": "interrupted",
        "created_at": "09:59",
        "updated_at": "09:59:30",
    }
    assert failures_since_last_result([refused, won, paused]) == [refused]
    # a failure before the newest result began was followed by that result
    old = {"run_id": "old", "status": "error", "created_at": "09:58", "updated_at": "09:58:30"}
    assert failures_since_last_result([won, old]) == []
    # a run in flight left no result: the failures before it still count
    flying = {"run_id": "fly", "status": "running", "created_at": "10:01", "updated_at": "10:01"}
    assert failures_since_last_result([flying, old]) == [old]
    assert failures_since_last_result([]) == []


# --- expired approvals whose policy says on_expire="raise" -------------------------------------


class _Clock:
    def __init__(self) -> None:
        self.offset = timedelta()

    def __call__(self) -> datetime:
        return datetime.now(UTC) + self.offset


def test_an_expiry_that_raises_is_read_from_the_pause_and_the_settled_thread() -> None:
    """What the remote client reads to raise ``ApprovalTimeoutError`` as ``ReActAgent`` does,
    pinned on the values this package's tools write (the same tools run locally): the pause
    value's ``approval`` (``on_expire``, ``expires_at``, ``expires_in``) and the tool answer
    of a settled ``require_approval`` call."""
    clock = _Clock()
    agent = ReActAgent(
        ScriptedChatModel(policy=expiring_policy),
        expiring_tools(),
        checkpointer=InMemorySaver(),
        approval_policy=ApprovalPolicy(clock=clock),
    )
    config: Any = {"configurable": {"thread_id": "t"}}
    agent.run("pay 3 to Di", thread_id="t")
    (pause,) = agent.graph.get_state(config).interrupts
    assert pause.value["approval"]["on_expire"] == "raise"
    assert pause.value["approval"]["expires_in"] == RAISE_IN
    seen = Seen(True, "c1", [pause], {})
    deadline = datetime.fromisoformat(pause.value["expires_at"])

    # before the deadline (by the client's clock) the decision goes as given; after it, the
    # expiry answer, which the paused tool accepts only after its own deadline
    early = deadline - timedelta(seconds=1)
    assert settling(seen, {pause.id: "approved"}, early) == ({pause.id: "approved"}, [])
    resume, due = settling(seen, {pause.id: "approved"}, deadline)
    assert resume == {pause.id: expiry_answer()} and due == [pause.id]
    # the tool asked again (its clock: not expired yet): the decision again, under the new id
    asked = Interrupt(value={**pause.value, "error": "not expired"}, id="f" * 32)
    again = Seen(True, "c2", [asked], {})
    assert not_yet(seen, due, {pause.id: "approved"}, again) == ({asked.id: "approved"}, [])
    assert approval_timeout("t", [pause], [], again) is None

    clock.offset = timedelta(seconds=RAISE_IN + 1)
    with pytest.raises(ApprovalTimeoutError) as local:
        agent.resume(thread_id="t", human_decision="approved")
    done = Seen(True, "c3", [], {"messages": agent.graph.get_state(config).values["messages"]})
    assert not_yet(seen, due, {pause.id: "approved"}, done) == ({}, [pause.id])
    by_answer = approval_timeout("t", [pause], [pause.id], done)  # answered with the expiry answer
    by_told = approval_timeout("t", [pause], [], done)  # a decision: the tool answer says why
    for raised in (by_answer, by_told):
        assert isinstance(raised, ApprovalTimeoutError) and str(raised) == str(local.value)
    assert approval_timeout("t", [pause], [pause.id], seen) is None  # still pending: not settled
    plain = Interrupt(value={**pause.value, "approval": {"on_expire": "rejected"}}, id=pause.id)
    assert approval_timeout("t", [plain], [pause.id], done) is None  # the policy does not raise
    assert settling(Seen(True, "c1", [plain], {}), {plain.id: "approved"}, deadline)[1] == []


def _state(checkpoint: str, parent: str | None, run: str | None) -> dict[str, Any]:
    return {
        "checkpoint": {"checkpoint_id": checkpoint},
        "parent_checkpoint": {"checkpoint_id": parent} if parent else None,
        "metadata": {"run_id": run} if run else {},
    }


def test_the_run_that_answered_a_pause_is_the_writer_of_the_checkpoint_after_it() -> None:
    # Aegra (seen by a helper): B's resume was created first but started after A's had
    # finished; it found nothing to answer and ended "success": A's run wrote the successor
    history = [
        _state("c4", "c3", "run-b"),  # B's no-op run, after A's end
        _state("c3", "c2", "run-a"),
        _state("c2", "paused", "run-a"),
        _state("paused", "c0", "run-0"),
    ]
    assert writer_after(history, "paused") == ("run-a", None)
    assert writer_after(history[:1], "paused") == (None, None)  # a short page: the end
    assert writer_after(history[3:], "paused") == (None, None)  # no successor yet
    assert writer_after([_state("c1", "paused", None)], "paused") == (None, None)  # no run id
    full = [_state(f"c{i}", f"c{i - 1}", "r") for i in range(40, 20, -1)]
    assert writer_after(full, "paused") == (None, "c21")  # read the next page before c21


def test_when_two_runs_stepped_past_a_pause_the_first_one_answered_it() -> None:
    # Aegra (tests/test_cluster.py, two resumes at once): B's run loaded the paused checkpoint
    # after A's tool call ended (its result saved as the task's writes) but before A saved its
    # next checkpoint: B replayed A's result (the tool did not run, B's decision was applied
    # nowhere) and wrote a second successor of the pause, after A's
    history = [
        _state("d2", "d1", "run-b"),
        _state("c2", "c1", "run-a"),
        _state("d1", "paused", "run-b"),
        _state("c1", "paused", "run-a"),
        _state("paused", "c0", "run-0"),
    ]
    assert writer_after(history, "paused") == ("run-a", None)
    # the successors on two pages: the older page's decides
    assert writer_after(history[3:], "paused", "run-b") == ("run-a", None)
    # the oldest successor has no recorded run: unknown (the order of the runs decides)
    unknown = [*history[:3], _state("c1", "paused", None), history[4]]
    assert writer_after(unknown, "paused") == (None, None)


_CALL = {"id": "call-1", "name": "pay", "args": {"amount": 42}}
_APPROVAL = {"id": "i-1", "value": {"node_id": "approve_pay", "payload": {}, "tool_call": _CALL}}
_SUB = "payments:6f1c"  # the parent's node "payments", its task id


def _note(ns: str, checkpoint_id: str) -> dict[str, Any]:
    """A note as the tool node leaves it (``_exactly_once.marks.note``)."""
    return {"call": _CALL, "key": "key-1", "checkpoint_ns": ns, "checkpoint_id": checkpoint_id}


def _nested(subgraphs: bool) -> dict[str, Any]:
    """The server's state of a thread whose agent runs as the node ``payments`` of a parent
    graph, paused at the approval: read with ``subgraphs=True`` its task holds the subgraph's
    state (langgraph-api and Aegra both give its ``checkpoint`` with its namespace); without,
    only the subgraph's namespace (``checkpoint``, no checkpoint id)."""
    sub = {
        "checkpoint": {"thread_id": "t", "checkpoint_ns": _SUB, "checkpoint_id": "sub-2"},
        "interrupts": [_APPROVAL],
        "tasks": [{"id": "tools-1", "name": "tools", "interrupts": [_APPROVAL], "state": None}],
    }
    task = {
        "id": "6f1c",
        "name": "payments",
        "interrupts": [_APPROVAL],
        "checkpoint": None if subgraphs else {"thread_id": "t", "checkpoint_ns": _SUB},
        "state": sub if subgraphs else None,
    }
    return {
        "checkpoint": {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": "top-1"},
        "interrupts": [_APPROVAL],
        "tasks": [task],
        "values": {"messages": []},
    }


def _shown(state: dict[str, Any], *notes: dict[str, Any]) -> list[str]:
    return [i.value["node_id"] for i in thread_seen(state, notes=notes).interrupts]


def test_a_nested_agents_note_is_read_on_the_subgraph_checkpoint_the_state_shows() -> None:
    """Issue 34 on a server, the agent nested in a parent graph: its note names the
    subgraph's namespace and checkpoint; the thread state read with ``subgraphs=True`` shows
    that checkpoint, so the views show the call's in-doubt question with its key."""
    seen = thread_seen(_nested(subgraphs=True), notes=[_note(_SUB, "sub-2")])
    [shown] = seen.interrupts
    assert shown.id == "i-1" and shown.value["node_id"] == "in_doubt_pay"
    assert shown.value["payload"]["idempotency_key"] == "key-1"
    assert [i.id for i in seen.stale] == ["i-1"]
    assert shown_checkpoints(_nested(subgraphs=True)) == {"": "top-1", _SUB: "sub-2"}
    # a note left on an older checkpoint of the subgraph (a later run moved past it), in
    # another namespace, or on the parent's checkpoint id: the stored pause stays shown
    assert _shown(_nested(subgraphs=True), _note(_SUB, "sub-1")) == ["approve_pay"]
    assert _shown(_nested(subgraphs=True), _note("other:1", "sub-2")) == ["approve_pay"]
    assert _shown(_nested(subgraphs=True), _note(_SUB, "top-1")) == ["approve_pay"]
    # read without subgraphs the state cannot place the note (what the views did before)
    assert _shown(_nested(subgraphs=False), _note(_SUB, "sub-2")) == ["approve_pay"]
    # the agent at the top of the thread: its note is on the thread's own checkpoint
    assert _shown(_nested(subgraphs=True), _note("", "top-1")) == ["in_doubt_pay"]
