"""How :mod:`dynavec_langgraph.remote` reads run and thread statuses as both engines report
them (the servers themselves are exercised in ``tests/test_cluster.py``; these pin the reading
of each status shape, on both engines' forms, without a server).

langgraph-api marks a paused run ``success`` and the thread ``interrupted``; Aegra marks the
paused *run* ``interrupted``, keeps only the message of a failed run (``error_message``), and
does not record a run's command (a resume of this package tags its run config instead).
"""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.types import Interrupt

from dynavec_langgraph import ConcurrentResumeError, InvalidDecisionError
from dynavec_langgraph._claims import CLAIM_REFUSED
from dynavec_langgraph.remote import (
    RemoteRunError,
    _answers_any,
    _check_run,
    _failures_since_last_result,
    _Seen,
    _settled,
    _tagged,
)

PAUSE = Interrupt(value={"node_id": "approve", "payload": {}}, id="a" * 32)
PAUSED = _Seen(True, "c1", [PAUSE], {})
DONE = _Seen(True, "c2", [], {"messages": []}, status="idle")


def test_a_paused_run_is_fine_on_both_engines() -> None:
    _check_run("t", {"status": "success"}, {}, DONE, PAUSED)  # langgraph-api
    _check_run("t", {"status": "interrupted"}, {}, DONE, PAUSED)  # Aegra
    with pytest.raises(RemoteRunError, match="ended with status 'interrupted'"):
        _check_run("t", {"status": "interrupted"}, {}, PAUSED, DONE)  # cancelled, not paused


def test_a_run_the_claim_refused_is_a_concurrent_resume_on_both_engines() -> None:
    message = f"thread 't': call 'c' (pay) is being resumed right now; {CLAIM_REFUSED}."
    joined = {"__error__": {"error": "ConcurrentResumeError", "message": message}}
    with pytest.raises(ConcurrentResumeError, match="nothing ran here"):
        _check_run("t", {"status": "error"}, joined, PAUSED, PAUSED)  # langgraph-api
    with pytest.raises(ConcurrentResumeError, match="nothing ran here"):
        _check_run("t", {"status": "error", "error_message": message}, {}, PAUSED, PAUSED)
    with pytest.raises(RemoteRunError, match="boom"):  # any other failure stays one
        _check_run("t", {"status": "error", "error_message": "boom"}, {}, PAUSED, PAUSED)


def test_a_schema_refusal_from_the_message_alone() -> None:
    message = "1 validation error for Approval\napproved\n  Field required"
    with pytest.raises(InvalidDecisionError):
        _check_run("t", {"status": "error", "error_message": message}, {}, PAUSED, PAUSED)


def test_a_run_still_in_flight_after_the_wait_is_not_a_result() -> None:
    with pytest.raises(RemoteRunError, match=r"still 'running'.*Aegra 0\.6\.0"):
        _check_run("t", {"status": "running", "run_id": "r"}, {}, PAUSED, PAUSED)


def test_a_busy_or_failed_thread_has_no_result() -> None:
    assert _settled("t", DONE) is DONE
    assert _settled("t", PAUSED) is PAUSED
    for status, said in (("busy", "is busy"), ("error", "failed on the server")):
        with pytest.raises(RemoteRunError, match=said):
            _settled("t", _Seen(True, "c", [], {}, status == "busy", "r1", status))


def test_runs_tagged_with_the_interrupt_ids_they_answer() -> None:
    other = "b" * 32
    aegra_run: dict[str, Any] = {"config": _tagged({other: "approved"})}
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
    assert _failures_since_last_result([refused, won, paused]) == [refused]
    # a failure before the newest result began was followed by that result
    old = {"run_id": "old", "status": "error", "created_at": "09:58", "updated_at": "09:58:30"}
    assert _failures_since_last_result([won, old]) == []
    # a run in flight left no result: the failures before it still count
    flying = {"run_id": "fly", "status": "running", "created_at": "10:01", "updated_at": "10:01"}
    assert _failures_since_last_result([flying, old]) == [old]
    assert _failures_since_last_result([]) == []
