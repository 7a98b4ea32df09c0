"""What a run on the server means: its status, a resume refused before anything ran, and which run
answered a pause first."""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from dynavec_langgraph._errors import ConcurrentResumeError, RemoteRunError
from dynavec_langgraph._exactly_once.claims import CLAIM_REFUSED
from dynavec_langgraph._names import ANSWERS_TAG_PREFIX
from dynavec_langgraph._remote.threads import Seen
from dynavec_langgraph._resuming.answers import schema_refusal
from dynavec_langgraph._types import JSONMapping

if TYPE_CHECKING:
    from langgraph_sdk.schema import Config

RUNS_PAGE = 20
_INTERRUPT_ID = re.compile(r"[0-9a-f]{32}")


def check_run(
    thread_id: str, run: JSONMapping, joined: Any, seen: Seen, after: Seen | None = None
) -> None:
    """Raise what a failed run means: a decision its schema refused, the graph's refusal of a
    concurrent resume (nothing ran), a run still in flight, or the server's error.

    A paused run is ``success`` on langgraph-api (the *thread* is ``interrupted``) and
    ``interrupted`` on Aegra: both are fine when the thread (``after``) is paused now."""
    status = run.get("status")
    if status == "success":
        return
    if status == "interrupted" and after is not None and after.interrupts:
        return
    error = joined.get("__error__") if isinstance(joined, Mapping) else None
    error = error if isinstance(error, Mapping) else {}
    name = str(error.get("error", ""))
    message = str(error.get("message") or run.get("error_message") or status)
    if seen.interrupts and (name == "ValidationError" or (not name and _INVALID in message)):
        raise schema_refusal(seen.interrupts, message)
    if refusal(run, joined):
        # the tool node's claim refused this resume before the tool ran (dynavec_langgraph
        # ._claims): another run of the thread applies its decision; nothing of ours ran
        raise ConcurrentResumeError(f"the server refused this resume: {message}")
    if status in IN_FLIGHT:
        raise RemoteRunError(
            f"run {run.get('run_id')} of thread {thread_id!r} is still {status!r} after the "
            "wait: it may finish later (read the thread with result(thread_id)), or the server "
            "that ran it died (an engine without run recovery, such as Aegra 0.6.0, leaves it "
            "so: the thread stays busy)"
        )
    raise RemoteRunError(
        f"run {run.get('run_id')} of thread {thread_id!r} ended with status "
        f"{run.get('status')!r}: {name + ': ' if name else ''}{message}"
    )


_REFUSALS = frozenset({ConcurrentResumeError.__name__, "UnknownInterruptError"})
"""A failed run's error names meaning the resume was refused before anything ran: the tool
node's claim, or LangGraph's strict resume (an interrupt id no longer pending)."""
_INVALID = "validation error for "
"""How pydantic's ValidationError message starts (a server that keeps only the message of a
failed run, such as Aegra)."""
IN_FLIGHT = frozenset({"pending", "running"})
"""Run statuses of a run not finished yet."""


RECENT = 5
"""Runs read to find the one that finished last."""


def failures_since_last_result(runs: Sequence[JSONMapping]) -> list[JSONMapping]:
    """The failed runs among ``runs`` that may have left the thread's ``error`` status: those
    that ended after the newest run that left a result (``success`` / ``interrupted``) began.

    Not simply the run updated last: runs of a thread overlap on Aegra, whose end of a run
    writes the run's status and then, in another statement, the thread's; so a refused resume
    whose run row was updated just before the winner's can still write the thread's status
    after it. A failure older than the newest result's start was followed by that result."""
    done = [r for r in runs if r.get("status") in {"success", "interrupted"}]
    since = max((str(r.get("created_at") or "") for r in done), default="")
    return [
        r for r in runs if r.get("status") == "error" and str(r.get("updated_at") or "") >= since
    ]


def refusal(run: JSONMapping, joined: Any) -> bool:
    """Whether a failed run is a resume the tool node's claim refused before the tool ran
    (``dynavec_langgraph._exactly_once.claims``): its error's name (langgraph-api) or message
    (Aegra)."""
    if run.get("status") != "error":
        return False
    error = joined.get("__error__") if isinstance(joined, Mapping) else None
    error = error if isinstance(error, Mapping) else {}
    if str(error.get("error", "")) in _REFUSALS:
        return True
    return CLAIM_REFUSED in str(error.get("message") or run.get("error_message") or "")


def unsettled(runs: Sequence[JSONMapping], run_id: str, since: str | None) -> bool:
    """Whether a run created between ``since`` and ``run_id`` (``runs`` newest first) is still
    in flight (servers that let runs of a thread overlap, such as Aegra): its outcome decides
    whether it answered first."""
    ids = [str(r["run_id"]) for r in runs]
    if run_id not in ids:
        return False
    for run in runs[ids.index(run_id) + 1 :]:
        if since is not None and str(run["run_id"]) == since:
            return False
        if run.get("status") in IN_FLIGHT:
            return True
    return False


def tagged(resume: JSONMapping) -> Config:
    """The run config of a resume: a tag per interrupt id it answers."""
    return {"tags": [f"{ANSWERS_TAG_PREFIX}{key}" for key in sorted(map(str, resume))]}


def _answers_any(run: JSONMapping, interrupt_ids: Collection[str]) -> bool:
    """Whether ``run`` may have answered one of ``interrupt_ids`` (True unless its command,
    or the ids a resume of this package tagged it with, names other interrupt ids only)."""
    command = (run.get("kwargs") or {}).get("command") or {}
    resume = command.get("resume") if isinstance(command, Mapping) else None
    if isinstance(resume, Mapping) and all(_INTERRUPT_ID.fullmatch(str(k)) for k in resume):
        return bool(set(map(str, resume)) & set(interrupt_ids))
    tags = (run.get("config") or {}).get("tags") or []
    tagged = {
        str(t)[len(ANSWERS_TAG_PREFIX) :] for t in tags if str(t).startswith(ANSWERS_TAG_PREFIX)
    }
    if resume is None and tagged:
        return bool(tagged & set(interrupt_ids))
    return True  # new input, a plain resume value, or no command: it moved the thread


def runs_between(
    runs: Sequence[JSONMapping],
    run_id: str,
    since: str | None,
    interrupt_ids: Collection[str],
    *,
    complete: bool,
) -> bool | None:
    """Whether a run created after ``since`` and before ``run_id`` answered one of
    ``interrupt_ids`` first (``runs`` newest first); None when more runs must be read."""
    ids = [str(r["run_id"]) for r in runs]
    if run_id not in ids:
        return None if not complete else True
    for run in runs[ids.index(run_id) + 1 :]:
        if since is not None and str(run["run_id"]) == since:
            return False
        # a failed run (a decision its schema refused, a resume the graph's claim refused)
        # applied nothing
        if run.get("status") != "error" and _answers_any(run, interrupt_ids):
            return True
    return None if not complete and since is not None else False


HISTORY_PAGE = 20
HISTORY_PAGES = 10
"""Checkpoints read per page, and pages at most, to find the one after a pause."""


def writer_after(
    page: Sequence[JSONMapping], paused: str | None, newer: str | None = None
) -> tuple[str | None, str | None]:
    """In one page of a thread's history (newest first): the ``run_id`` (checkpoint metadata,
    which both langgraph-api and Aegra record) of the oldest checkpoint whose parent is
    ``paused`` (``newer``: the writer found so far on the newer pages), and the checkpoint to
    read the next page before (``None``: stop, at ``paused`` or at the end of the history).

    The run that wrote it answered the pause first, whatever the order the runs were created
    in: on a server whose runs of a thread overlap (Aegra), a resume created first can start
    after another one finished, find nothing to answer and end ``success`` having applied
    nothing. The *oldest* successor, not the newest: such a run can also load the paused
    checkpoint after the winner's tool call ended (LangGraph saved the call's result as the
    task's writes) but before the winner saved its next checkpoint; it then replays the
    winner's result instead of running the tool (its own decision is applied nowhere) and
    writes a second successor of the pause, after the winner's (the winner writes its own
    right after the call ends; the other run can only load the winner's writes once they are
    saved). ``None`` as the writer when the pause has no successor (or none with a recorded
    run): the caller falls back on the order of the runs."""
    if paused is None:
        return None, None
    writer = newer
    for state in page:
        checkpoint = (state.get("checkpoint") or {}).get("checkpoint_id")
        if checkpoint == paused:
            return writer, None
        parent = (state.get("parent_checkpoint") or {}).get("checkpoint_id")
        if parent == paused:
            run = (state.get("metadata") or {}).get("run_id")
            writer = str(run) if run else None
    last = (page[-1].get("checkpoint") or {}).get("checkpoint_id") if page else None
    return writer, (str(last) if last and len(page) >= HISTORY_PAGE else None)


POLL = 0.2
"""Seconds between two reads of a run or thread still in flight."""
