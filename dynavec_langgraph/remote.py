"""``RemoteReActAgent``: dynavec's run / resume API against a LangGraph API deployment.

The agent runs on LangGraph API servers (``langgraph dev``, ``langhost serve``, LangSmith
Deployment) that serve a graph of :func:`dynavec_langgraph.create_react_agent`; this client
talks to them over ``langgraph_sdk`` (the ``studio`` extra) and returns the same
:class:`~dynavec_langgraph.records.AgentResult` and errors as
:class:`~dynavec_langgraph._agent.ReActAgent`.

How a resume stays single when several callers (or servers) answer the same pause:

- the decision is keyed by the pending interrupt's id (``{interrupt_id: decision}``), so a late
  decision never answers a newer pause of the thread;
- on a server whose ``/info`` reports strict resume (:func:`reports_strict_resume`), resumes
  are sent with ``strict_resume=True``: the server itself refuses an answer to an interrupt
  that is no longer pending (LangGraph's ``UnknownInterruptError``, raised here as
  :class:`ConcurrentResumeError`; the thread is unchanged). Asked once per client, cached;
  langgraph-api 0.16.7 does not report it, and then nothing changes;
- runs are sent with ``multitask_strategy="reject"``: while another run of the thread is in
  flight the server answers HTTP 409, raised as :class:`ConcurrentResumeError`;
- runs of a thread never overlap then, so after the run, a run created between this caller's
  read of the pause and its own run that answered the same interrupt (and did not fail) means
  another caller resumed first (:class:`ConcurrentResumeError`; this decision was not applied:
  its interrupt id was no longer pending).

Runs use ``durability="sync"`` (each step's checkpoint is written before the next step), so a
server that dies mid-run leaves the last finished tool call saved; another server of the
deployment re-claims the run after the heartbeat and finishes it.

Errors of this module beside the package's: :class:`ServerUnavailableError`
(``ConnectionError``: refused connection or timeout) and :class:`RemoteRunError`
(``RuntimeError``: the run failed on the server), and :class:`ThreadAccessError`
(``PermissionError``: a thread the server's auth rules keep from the signed-in user).

On a server with custom auth every request carries the client's credentials (``headers=``,
``api_key=``) and the server applies its auth handler's thread rules itself: a thread the
user may not access is one the server does not show (HTTP 404; ``resume`` / ``result``
raise :class:`NothingToResumeError` saying so), and ``run`` on such a thread id is refused
with :class:`ThreadAccessError`.
"""

from __future__ import annotations

import asyncio
import inspect
import re
import time
import uuid
from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import httpx
from langchain_core.messages import BaseMessage, convert_to_messages
from langgraph.types import Interrupt

from dynavec_langgraph._audit import AuditEvent, TrailReport
from dynavec_langgraph._audit_switch import check_audit
from dynavec_langgraph._claims import CLAIM_REFUSED
from dynavec_langgraph._digest import refuse_stale, review_digest
from dynavec_langgraph._errors import (
    ConcurrentResumeError,
    InvalidDecisionError,
    InvalidLinkError,
    InvalidOptionError,
    NothingToResumeError,
    RemoteRunError,
    ServerUnavailableError,
    ThreadAccessError,
    not_paused_text,
    option_text,
)
from dynavec_langgraph._exactly_once import NOTE_NS, noted_in_doubt
from dynavec_langgraph._extras import install_command, missing_extra
from dynavec_langgraph._links import REFUSED, link_answer, read_link
from dynavec_langgraph._policy.answers import expiry_answer
from dynavec_langgraph._policy.doors import expired_pauses, expiry_command, refuse_approver
from dynavec_langgraph._policy.spec import EXPIRE
from dynavec_langgraph._remote_audit import (
    aread_items,
    read_items,
    record_refusal,
    run_config,
    verify_items,
)
from dynavec_langgraph._resuming.answers import (
    MISSING,
    Answer,
    in_doubt_first,
    refuse_if_asked_again,
    refuse_if_paused,
    schema_refusal,
)
from dynavec_langgraph._run_data import durability
from dynavec_langgraph._storable import brief, check_id, check_text
from dynavec_langgraph._view import build_result
from dynavec_langgraph.exceptions import ApprovalTimeoutError
from dynavec_langgraph.records import AgentResult, AgentState

if TYPE_CHECKING:
    from langgraph_sdk.client import LangGraphClient, SyncLangGraphClient
    from langgraph_sdk.schema import Config

__all__ = [
    "DEFAULT_TIMEOUT",
    "RemoteReActAgent",
    "RemoteRunError",
    "ServerUnavailableError",
    "ThreadAccessError",
    "reports_strict_resume",
    "server_thread_id",
]

DEFAULT_TIMEOUT = 120.0
"""Seconds to wait for one answer of the server (a run's whole wait included)."""
_RUNS_PAGE = 20
_INTERRUPT_ID = re.compile(r"[0-9a-f]{32}")


# --- plain functions: what is sent, what came back ------------------------------------------


@dataclass(frozen=True)
class _Seen:
    """A thread as the server showed it: its latest checkpoint and pending interrupts."""

    exists: bool
    checkpoint_id: str | None
    interrupts: list[Interrupt]
    values: dict[str, Any]
    busy: bool = False
    last_run_id: str | None = None
    """The thread's newest run when it was read: the runs after it answered or moved it."""
    status: str | None = None
    """The thread's status (read when nothing is pending): idle, busy, error, interrupted."""
    stale: list[Interrupt] = field(default_factory=list)
    """The pauses the server's state lists that ``interrupts`` shows as in-doubt questions
    (their approved call's run died while it ran: :func:`thread_seen`); empty when none."""


def thread_seen(
    state: Mapping[str, Any] | None,
    status: str | None = None,
    last_run: str | None = None,
    notes: Sequence[Mapping[str, Any]] = (),
) -> _Seen:
    """The thread as its views show it: ``state`` (the server's thread state), each pause of
    a call whose note (``notes``, :func:`_notes`) says its run died while it ran shown as the
    call's in-doubt question (``_exactly_once.noted_in_doubt``), as ``ReActAgent`` does."""
    if state is None:
        return _Seen(False, None, [], {})
    checkpoint = state.get("checkpoint") or {}
    listed = [
        Interrupt(value=i.get("value"), id=str(i["id"])) for i in state.get("interrupts") or []
    ]
    doubts = noted_in_doubt(checkpoint.get("checkpoint_id"), listed, notes) if notes else {}
    interrupts = [Interrupt(value=doubts[i.id], id=i.id) if i.id in doubts else i for i in listed]
    values = state.get("values")
    return _Seen(
        True,
        checkpoint.get("checkpoint_id"),
        interrupts,
        dict(values) if isinstance(values, Mapping) else {},
        status == "busy",
        last_run,
        status,
        [i for i in listed if i.id in doubts],
    )


def _note_values(found: Any) -> list[Mapping[str, Any]]:
    items = found.get("items") if isinstance(found, Mapping) else None
    return [i["value"] for i in items or [] if isinstance(i.get("value"), Mapping)]


_NOTES_LIMIT = 100
"""Notes read per thread (one per ``"ask"`` call whose run died; a thread has a few)."""


def _check_input(
    thread_id: str | None,
    goal: Any = None,
    state: AgentState | None = None,
    decision: Any = MISSING,
    decisions: Mapping[str, Any] | None = None,
) -> None:
    """Refuse, before anything is sent, text the server's saver would store changed (a lone
    surrogate: ``InvalidInputError`` / ``InvalidDecisionError`` naming the field)."""
    if isinstance(thread_id, str):
        check_id(thread_id, "thread_id")
    if isinstance(goal, str):
        check_text(goal, "goal")
    if state is not None:
        check_text(state.data, "state.data")
    if decision is not MISSING:
        check_text(decision, "human_decision", InvalidDecisionError)
    if isinstance(decisions, Mapping):
        for key, value in decisions.items():
            check_text(value, f"decisions[{brief(key, 40)}]", InvalidDecisionError)


def _run_input(goal: str, state: AgentState | None) -> dict[str, Any]:
    graph_input: dict[str, Any] = {"messages": [{"role": "user", "content": goal}]}
    if state is not None:
        graph_input["shared"] = dict(state.data)
    return graph_input


def _resume_map(
    thread_id: str,
    seen: _Seen,
    decision: Any,
    decisions: Mapping[str, Any] | None,
    approver: Any = None,
) -> dict[str, Any]:
    """``{interrupt_id: decision}`` for the pauses ``seen`` shows.

    Raises:
        NothingToResumeError: an unknown thread, or one that is not paused.
        InvalidDecisionError: no decision, ``None``, several pending for one decision, both
            ``human_decision`` and ``decisions``, or ``decisions`` naming what is not pending.
    """
    if not seen.exists or seen.checkpoint_id is None:
        raise NothingToResumeError(unknown_thread_text(thread_id, "nothing to resume"))
    if not seen.interrupts and seen.busy:
        raise _busy(thread_id)
    if not seen.interrupts:
        raise NothingToResumeError(not_paused_text(thread_id, "; call run() to continue it"))
    # the decision checks of the guarded resume (the server holds the thread's lock)
    answer = Answer(decision, decisions, approver=approver)
    resume = dict(answer.command(seen.interrupts, None).resume or {})
    refuse_stale(thread_id, seen.interrupts, resume)
    return resume


def _link_thread(link: str, thread_id: str | None, decision: Any, other: bool) -> tuple[str, Any]:
    """``(thread_id, decision)`` of a resume with the signed link ``link`` (what it says; the
    paused tool on the server verifies it).

    Raises:
        InvalidLinkError: a malformed token, a ``thread_id`` or ``human_decision`` other than
            the link's; nothing was sent.
        InvalidDecisionError: ``decisions=`` or ``approver=`` beside ``link=``.
    """
    claims = read_link(link)
    if other:
        raise InvalidDecisionError(
            "link= carries its decision and its approver: pass it without decisions= or approver="
        )
    if decision is not MISSING and decision != claims.decision:
        raise InvalidLinkError(
            f"approval link for the decision {claims.decision!r}, not {decision!r}: a link "
            "cannot change its decision; nothing was sent"
        )
    if thread_id is not None and server_thread_id(thread_id) != claims.thread_id:
        raise InvalidLinkError(
            f"approval link for thread {claims.thread_id!r}, not {thread_id!r}: nothing was sent"
        )
    return claims.thread_id, claims.decision


def _link_resume(thread_id: str, seen: _Seen, link: str, now: datetime) -> dict[str, Any]:
    """``{interrupt_id: link answer}`` for the pending pause the link was signed for.

    Raises:
        InvalidLinkError: no pending pause has the link's review digest (answered already,
            asked again since, or another pause), or it has expired; nothing was sent.
    """
    claims = read_link(link)
    pending = [i for i in seen.interrupts if review_digest(i) == claims.review_digest]
    if not pending:
        raise InvalidLinkError(
            f"approval link for a pause that is not pending in thread {thread_id!r} (answered "
            "already, or another pause): nothing was applied"
        )
    if expired_pauses(pending, now):
        raise InvalidLinkError(
            f"approval link for a pause of thread {thread_id!r} that has expired: nothing was "
            "applied (the expiry settles it: inbox expire, or the next run)"
        )
    return {pending[0].id: link_answer(link)}


@contextmanager
def _link_refusals(link: str | None) -> Iterator[None]:
    """The paused tool's refusal of a link (its error starts with :data:`REFUSED`) raised as
    :class:`InvalidLinkError`."""
    try:
        yield
    except InvalidDecisionError as error:
        if link is None or isinstance(error, InvalidLinkError) or REFUSED not in str(error):
            raise
        raise InvalidLinkError(str(error)) from None


def reports_strict_resume(info: object) -> bool:
    """Whether a server's ``GET /info`` answer reports strict resume (LangGraph 1.2.20+):
    ``"strict_resume": true`` among its ``flags`` (where langgraph-api reports what it
    supports) or at the top. ``langgraph_sdk`` has no reader of ``/info``; its
    ``runs.create(..., strict_resume=True)`` takes effect only on such a server.

    Example:
        >>> reports_strict_resume({"flags": {"assistants": True, "strict_resume": True}})
        True
        >>> reports_strict_resume({"version": "0.16.7", "flags": {"assistants": True}})
        False
    """
    if not isinstance(info, Mapping):
        return False
    flags = info.get("flags")
    if isinstance(flags, Mapping) and flags.get("strict_resume") is True:
        return True
    return info.get("strict_resume") is True


def _sdk_strict_resume(runs: Any) -> bool:
    """Whether this ``langgraph_sdk`` can ask for strict resume (``runs.create`` takes
    ``strict_resume``; older releases of the ``studio`` extra's range do not)."""
    try:
        return "strict_resume" in inspect.signature(type(runs).create).parameters
    except (AttributeError, TypeError, ValueError):
        return False


def _lost(thread_id: str) -> ConcurrentResumeError:
    return ConcurrentResumeError(
        f"another caller resumed thread {thread_id!r} first; its decision was applied and yours "
        "was not. Read the thread again (result(thread_id)) before deciding again"
    )


def _busy(thread_id: str) -> ConcurrentResumeError:
    return ConcurrentResumeError(
        f"thread {thread_id!r} is running another run (another caller's run or resume); "
        "nothing was sent. Read the thread again (result(thread_id)) when that run is done"
    )


def _check_run(
    thread_id: str, run: Mapping[str, Any], joined: Any, seen: _Seen, after: _Seen | None = None
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
    if _refusal(run, joined):
        # the tool node's claim refused this resume before the tool ran (dynavec_langgraph
        # ._claims): another run of the thread applies its decision; nothing of ours ran
        raise ConcurrentResumeError(f"the server refused this resume: {message}")
    if status in _IN_FLIGHT:
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
_IN_FLIGHT = frozenset({"pending", "running"})
"""Run statuses of a run not finished yet."""


_RECENT = 5
"""Runs read to find the one that finished last."""


def _failures_since_last_result(runs: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
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


def _refusal(run: Mapping[str, Any], joined: Any) -> bool:
    """Whether a failed run is a resume the tool node's claim refused before the tool ran
    (``dynavec_langgraph._claims``): its error's name (langgraph-api) or message (Aegra)."""
    if run.get("status") != "error":
        return False
    error = joined.get("__error__") if isinstance(joined, Mapping) else None
    error = error if isinstance(error, Mapping) else {}
    if str(error.get("error", "")) in _REFUSALS:
        return True
    return CLAIM_REFUSED in str(error.get("message") or run.get("error_message") or "")


def _unsettled(runs: Sequence[Mapping[str, Any]], run_id: str, since: str | None) -> bool:
    """Whether a run created between ``since`` and ``run_id`` (``runs`` newest first) is still
    in flight (servers that let runs of a thread overlap, such as Aegra): its outcome decides
    whether it answered first."""
    ids = [str(r["run_id"]) for r in runs]
    if run_id not in ids:
        return False
    for run in runs[ids.index(run_id) + 1 :]:
        if since is not None and str(run["run_id"]) == since:
            return False
        if run.get("status") in _IN_FLIGHT:
            return True
    return False


_ANSWERS = "dynavec-answers:"
"""The prefix of the run-config tags naming the interrupt ids a resume answers (Aegra keeps a
run's config, not its command)."""


def _tagged(resume: Mapping[str, Any]) -> Config:
    """The run config of a resume: a tag per interrupt id it answers."""
    return {"tags": [f"{_ANSWERS}{key}" for key in sorted(map(str, resume))]}


def _answers_any(run: Mapping[str, Any], interrupt_ids: Collection[str]) -> bool:
    """Whether ``run`` may have answered one of ``interrupt_ids`` (True unless its command,
    or the ids a resume of this package tagged it with, names other interrupt ids only)."""
    command = (run.get("kwargs") or {}).get("command") or {}
    resume = command.get("resume") if isinstance(command, Mapping) else None
    if isinstance(resume, Mapping) and all(_INTERRUPT_ID.fullmatch(str(k)) for k in resume):
        return bool(set(map(str, resume)) & set(interrupt_ids))
    tags = (run.get("config") or {}).get("tags") or []
    tagged = {str(t)[len(_ANSWERS) :] for t in tags if str(t).startswith(_ANSWERS)}
    if resume is None and tagged:
        return bool(tagged & set(interrupt_ids))
    return True  # new input, a plain resume value, or no command: it moved the thread


def _runs_between(
    runs: Sequence[Mapping[str, Any]],
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


def _messages(values: Mapping[str, Any]) -> list[BaseMessage]:
    return convert_to_messages(values.get("messages") or [])


# --- expired approvals whose policy says on_expire="raise" -----------------------------------
#
# The paused tool settles an expiry on the server, which does not tell the client what the
# policy chose; the pause value does (``approval.on_expire``, ``expires_at``, ``expires_in``).
# The client knows a pause was settled as expired when it answered it with the expiry answer
# (``run()``, and ``resume()`` when its clock says the deadline passed: the tool accepts that
# answer only after its deadline, else asks again) and the pause is gone; or, for a decision
# the tool received after its deadline, when the call's tool answer gives the expiry reason
# (``require_approval``'s answer does).


def _raising(item: Interrupt) -> Mapping[str, Any] | None:
    """The approval state of a pause whose policy says ``on_expire="raise"``, else None."""
    value = item.value
    state = value.get("approval") if isinstance(value, Mapping) else None
    if isinstance(state, Mapping) and state.get("on_expire") == EXPIRE and state.get("expires_at"):
        return state
    return None


def _call_id(item: Interrupt) -> Any:
    call = item.value.get("tool_call") if isinstance(item.value, Mapping) else None
    return call.get("id") if isinstance(call, Mapping) else None


def _still_asked(item: Interrupt, after: _Seen) -> bool:
    """Whether ``item`` is pending in ``after``, or asked again (same node and call)."""
    node = item.value.get("node_id")
    return any(
        i.id == item.id
        or (
            isinstance(i.value, Mapping)
            and i.value.get("node_id") == node
            and _call_id(i) == _call_id(item)
        )
        for i in after.interrupts
    )


def _expiry_told(item: Interrupt, state: Mapping[str, Any], after: _Seen) -> bool:
    """Whether the tool answer of ``item``'s call gives its expiry reason (``ask_with_policy``
    settles with ``the approval of NODE expired at DEADLINE``)."""
    reason = f"the approval of {item.value.get('node_id')!r} expired at {state['expires_at']}"
    call = _call_id(item)
    return call is not None and any(
        getattr(m, "tool_call_id", None) == call and reason in str(m.content)
        for m in _messages(after.values)
    )


def _timeout(
    thread_id: str, answered: Sequence[Interrupt], settled: Collection[str], after: _Seen
) -> ApprovalTimeoutError | None:
    """dynavec's ``ApprovalTimeoutError`` for the first pause of ``answered`` whose policy
    says ``on_expire="raise"`` and that the run settled as expired (``settled``: the ids
    answered with the expiry answer), as ``ReActAgent`` raises it; else None."""
    for item in answered:
        state = _raising(item)
        if state is None or _still_asked(item, after):
            continue
        if item.id in settled or _expiry_told(item, state, after):
            return ApprovalTimeoutError(
                thread_id, item.value.get("node_id"), state.get("expires_in")
            )
    return None


def _settling(
    seen: _Seen, resume: Mapping[str, Any], now: datetime
) -> tuple[dict[str, Any], list[str]]:
    """``resume`` with the decision for each answered pause that expired by ``now`` and whose
    policy raises replaced by the expiry answer (the tool settles it as ``ReActAgent``'s
    door raises for it); and the ids replaced."""
    due = [i.id for i in expired_pauses(seen.interrupts, now) if i.id in resume and _raising(i)]
    return {k: expiry_answer() if k in due else v for k, v in resume.items()}, due


def _not_yet(
    seen: _Seen, due: Sequence[str], decided: Mapping[str, Any], after: _Seen
) -> tuple[dict[str, Any], list[str]]:
    """After a resume that answered the pauses ``due`` with the expiry answer: the decisions
    to send again (a pause the tool asked again, its own clock saying the deadline has not
    passed, gets the decision ``decided`` gave it, under its new interrupt id) and the ids of
    ``due`` the tool did settle."""
    again: dict[str, Any] = {}
    settled: list[str] = []
    for item in seen.interrupts:
        if item.id not in due:
            continue
        node = item.value.get("node_id")
        asked = [
            new.id
            for new in after.interrupts
            if new.id != item.id
            and isinstance(new.value, Mapping)
            and new.value.get("node_id") == node
            and _call_id(new) == _call_id(item)
        ]
        if asked:
            again[asked[0]] = decided[item.id]
        elif not _still_asked(item, after):
            settled.append(item.id)
    return again, settled


def _result(thread_id: str, seen: _Seen, max_steps: int, state: AgentState | None) -> AgentResult:
    values = {**seen.values, "messages": _messages(seen.values)}
    if state is not None and isinstance(values.get("shared"), Mapping):
        state.data.clear()
        state.data.update(values["shared"])
    return build_result(
        values, seen.interrupts, thread_id=thread_id, max_steps=max_steps, system_prompt=None
    )


@contextmanager
def _translated(url: str, thread_id: str | None, doing: str) -> Iterator[None]:
    """HTTP failures -> this package's errors, with what to do next."""
    try:
        yield
    except httpx.HTTPStatusError as error:
        status = error.response.status_code
        if status == 409 and thread_id is not None:
            raise _busy(thread_id) from error
        try:
            body = error.response.text
        except httpx.ResponseNotRead:
            body = ""
        if status == 400 and thread_id is not None and _NOT_PAUSED in body:
            # Aegra checks that the thread is paused when a resume is created
            raise ConcurrentResumeError(
                f"the server refused this resume: thread {thread_id!r} is no longer paused "
                "(another caller resumed it first, or a run of it is in flight); nothing was "
                "applied. Read the thread again (result(thread_id)) before deciding again"
            ) from error
        raise RemoteRunError(
            f"the server at {url} answered {status} while {doing}: {body or error}"
        ) from error
    except httpx.TimeoutException as error:
        raise ServerUnavailableError(
            f"the server at {url} did not answer in time while {doing} ({error!r}). If a run "
            "was sent it may still finish on the deployment: read the thread "
            "(result(thread_id)) before resuming again; a repeated resume of an answered pause "
            "is refused, never applied twice"
        ) from error
    except httpx.TransportError as error:
        raise ServerUnavailableError(
            f"cannot reach the LangGraph API server at {url} while {doing} ({error!r}): check "
            "the URL and that the server runs. If a run was sent it may still finish on the "
            "deployment: read the thread (result(thread_id)) before resuming again"
        ) from error


_NOT_PAUSED = "thread is not in interrupted state"
"""Aegra's answer to a resume of a thread that is not paused (HTTP 400)."""


def _not_found(error: httpx.HTTPStatusError) -> bool:
    return error.response.status_code == 404


class RemoteReActAgent:
    """dynavec's ``run`` / ``resume`` against an agent served by a LangGraph API deployment.

    Args:
        url: the server (or load balancer), e.g. ``"http://127.0.0.1:2024"``.
        assistant_id: the graph id of ``langgraph.json`` (e.g. ``"dynavec_agent"``) or an
            assistant's id.
        api_key: sent as ``x-api-key``; ``None`` sends none (environment keys are not read).
        headers: extra HTTP headers for every request.
        timeout: seconds to wait for one answer of the server, a run's wait included.
        max_steps: the graph's step budget, reported as ``total_steps`` when a run runs out.
        audit: the server's graph records the trail of the runs this client sends (in the
            server's store); read it with :meth:`audit` (docs/audit-and-notifications.md).
        notify: a webhook URL the server's graph notifies of every new pause; implies
            ``audit``.
        client: a ``langgraph_sdk`` async client to use for the async methods instead of one
            for ``url`` (``get_client()`` inside the server reaches it in process: the
            approval-link endpoint, ``dynavec_langgraph.links``).

    Raises:
        ImportError: ``langgraph_sdk`` is missing (install the ``studio`` extra).
        InvalidOptionError: ``url`` is no http(s) URL, ``audit`` no bool.

    Example:
        >>> agent = RemoteReActAgent("http://127.0.0.1:2024", "dynavec_agent")
        >>> agent.assistant_id
        'dynavec_agent'
    """

    def __init__(
        self,
        url: str,
        assistant_id: str,
        *,
        api_key: str | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_steps: int = 10,
        audit: bool = False,
        notify: str | None = None,
        client: LangGraphClient | None = None,
    ) -> None:
        self.url = check_server_url(url)
        check_audit(audit)
        try:
            from langgraph_sdk import get_client, get_sync_client
        except ImportError as error:
            raise missing_extra(
                "RemoteReActAgent",
                "langgraph_sdk",
                "studio",
                text="RemoteReActAgent needs langgraph_sdk, which the 'studio' extra installs: "
                + install_command("studio"),
            ) from error
        config = run_config(audit, notify)
        self._run_options = {**_RUN_OPTIONS, **({"config": config} if config else {})}
        self._audit = config is not None
        self.assistant_id = assistant_id
        self.max_steps = max_steps
        self.timeout = float(timeout)
        """Seconds to wait for one answer, and for a run still in flight."""
        connect = min(timeout, 5.0)
        limits = (connect, timeout, timeout, connect)  # connect, read, write, pool
        kwargs: dict[str, Any] = {"url": self.url, "api_key": api_key, "headers": headers}
        self.client: LangGraphClient = client or get_client(**kwargs, timeout=limits)
        """The ``langgraph_sdk`` async client (for what this class does not wrap)."""
        self.sync_client: SyncLangGraphClient = get_sync_client(**kwargs, timeout=limits)
        """The ``langgraph_sdk`` sync client."""
        self._strict: bool | None = None  # the server reports strict resume (asked once)

    def _strict_from(self, info: Any) -> bool:
        self._strict = reports_strict_resume(info) and _sdk_strict_resume(self.sync_client.runs)
        return self._strict

    def strict_resume(self) -> bool:
        """Whether this client's resumes ask the server for strict resume: its ``/info``
        reports it (:func:`reports_strict_resume`) and ``langgraph_sdk`` can send it. Read
        once, then cached; a server without ``/info`` (HTTP error) does not report it.

        Raises:
            ServerUnavailableError: the server cannot be reached.
        """
        if self._strict is not None:
            return self._strict
        with _translated(self.url, None, "reading /info"):
            try:
                info = self.sync_client.http.get("/info")
            except httpx.HTTPStatusError:
                info = None
        return self._strict_from(info)

    async def astrict_resume(self) -> bool:
        """Async twin of :meth:`strict_resume` (one cache for both)."""
        if self._strict is not None:
            return self._strict
        with _translated(self.url, None, "reading /info"):
            try:
                info = await self.client.http.get("/info")
            except httpx.HTTPStatusError:
                info = None
        return self._strict_from(info)

    def _resume_options(self, resume: Mapping[str, Any], strict: bool) -> dict[str, Any]:
        """The run options of a resume: the agent's, its config tagged with the interrupt ids
        the resume answers (:func:`_tagged`), and ``strict_resume=True`` when ``strict``
        (:meth:`strict_resume`)."""
        config = {**self._run_options.get("config", {})}
        config["tags"] = [*config.get("tags", []), *_tagged(resume)["tags"]]
        return {
            **self._run_options,
            "config": config,
            **({"strict_resume": True} if strict else {}),
        }

    # --- run --------------------------------------------------------------------------

    def run(
        self, goal: str, *, thread_id: str | None = None, state: AgentState | None = None
    ) -> AgentResult:
        """Run the agent on ``goal`` in ``thread_id`` (a new thread when None).

        Raises:
            ThreadPausedError: the thread waits for a decision; call :meth:`resume`.
            ConcurrentResumeError: another run of the thread is in flight (nothing sent).
            ThreadAccessError: the thread exists, but the server's auth rules keep it from
                these credentials (nothing sent).
            ServerUnavailableError: the server cannot be reached or did not answer in time.
            RemoteRunError: the run failed on the server.
            ApprovalTimeoutError: the thread's pause had expired and its policy says
                ``on_expire="raise"``: the paused tool settled it (the call did not run)
                and ``goal`` was not sent, as ``ReActAgent.run`` does.
        """
        _check_input(thread_id, goal, state)
        tid = thread_id or str(uuid.uuid4())
        sid = server_thread_id(tid)
        with _translated(self.url, tid, f"running thread {tid!r}"):
            try:
                self.sync_client.threads.create(thread_id=sid, if_exists="do_nothing")
            except httpx.HTTPStatusError as error:
                if _create_refused(error):
                    raise _access_refused(tid) from None
                raise
            seen = self._viewed(sid)
            settle = expiry_command(seen.interrupts, self._now())
            if settle is not None:  # an expired approval: the paused tool settles it first
                settling = self.sync_client.runs.create(
                    sid,
                    self.assistant_id,
                    command={"resume": settle.resume},
                    **self._resume_options(settle.resume, self.strict_resume()),
                )
                self._wait(sid, str(settling["run_id"]))
                before, seen = seen, thread_seen(self.sync_client.threads.get_state(sid))
                expired = _timeout(tid, before.interrupts, settle.resume, seen)
                if expired is not None:  # on_expire="raise": settled, the goal is not run
                    raise expired
            refuse_if_paused(tid, seen.interrupts)
            run = self.sync_client.runs.create(
                sid, self.assistant_id, input=_run_input(goal, state), **self._run_options
            )
            joined, done = self._wait(sid, str(run["run_id"]))
            after = thread_seen(self.sync_client.threads.get_state(sid))
            _check_run(tid, done, joined, seen, after)
            refuse_if_asked_again(seen.interrupts, after.interrupts)
        return _result(tid, after, self.max_steps, state)

    async def arun(
        self, goal: str, *, thread_id: str | None = None, state: AgentState | None = None
    ) -> AgentResult:
        """Async twin of :meth:`run`."""
        _check_input(thread_id, goal, state)
        tid = thread_id or str(uuid.uuid4())
        sid = server_thread_id(tid)
        with _translated(self.url, tid, f"running thread {tid!r}"):
            try:
                await self.client.threads.create(thread_id=sid, if_exists="do_nothing")
            except httpx.HTTPStatusError as error:
                if _create_refused(error):
                    raise _access_refused(tid) from None
                raise
            seen = await self._aviewed(sid)
            settle = expiry_command(seen.interrupts, self._now())
            if settle is not None:  # an expired approval: the paused tool settles it first
                settling = await self.client.runs.create(
                    sid,
                    self.assistant_id,
                    command={"resume": settle.resume},
                    **self._resume_options(settle.resume, await self.astrict_resume()),
                )
                await self._await(sid, str(settling["run_id"]))
                before, seen = seen, thread_seen(await self.client.threads.get_state(sid))
                expired = _timeout(tid, before.interrupts, settle.resume, seen)
                if expired is not None:  # on_expire="raise": settled, the goal is not run
                    raise expired
            refuse_if_paused(tid, seen.interrupts)
            run = await self.client.runs.create(
                sid, self.assistant_id, input=_run_input(goal, state), **self._run_options
            )
            joined, done = await self._await(sid, str(run["run_id"]))
            after = thread_seen(await self.client.threads.get_state(sid))
            _check_run(tid, done, joined, seen, after)
            refuse_if_asked_again(seen.interrupts, after.interrupts)
        return _result(tid, after, self.max_steps, state)

    # --- resume -----------------------------------------------------------------------

    def resume(
        self,
        human_decision: Any = MISSING,
        *,
        thread_id: str | None = None,
        decisions: Mapping[str, Any] | None = None,
        state: AgentState | None = None,
        approver: Any = None,
        link: str | None = None,
    ) -> AgentResult:
        """Answer the pause of ``thread_id`` with ``human_decision`` (or ``decisions={node_id
        or interrupt_id: decision}`` when several are pending), then let the run go on.

        ``link``: a signed approval link's token (``dynavec_langgraph.links``) answers the
        pause it was signed for with its decision and approver (``thread_id`` defaults to
        its thread); the paused tool on the server verifies it.

        Raises:
            NothingToResumeError: no thread id, an unknown thread (or one the server's auth
                rules keep from these credentials: the server answers both alike), or one not
                paused.
            InvalidDecisionError: no decision, several pending for one decision, decisions
                naming what is not pending, or one the pause's ``response_schema`` refuses
                (nothing saved, still paused).
            ConcurrentResumeError: another caller is resuming (or just resumed) the thread;
                this decision was not applied.
            ServerUnavailableError: the server cannot be reached or did not answer in time.
            RemoteRunError: the run failed on the server.
            ApproverRefusedError: ``approver`` may not answer the pause (its approval
                policy, checked here and by the paused tool on the server); nothing ran.
            InvalidLinkError: ``link`` is malformed, forged, expired, used, or for a pause
                that is not pending (answered, expired, another one); nothing ran.
            ApprovalTimeoutError: the pause had expired and its policy says
                ``on_expire="raise"``: the paused tool settled it (the call did not run) and
                the run went on, as ``ReActAgent.resume`` does. A pause this client sees
                expired is answered with the expiry answer; a decision the server's tool got
                after the deadline is recognised by the tool's answer (``require_approval``'s
                says why; a plain ``interrupt()`` tool's answer is its own: then the result
                is returned, docs/approvals-in-production.md).

        ``approver`` (a name or ``{"name", "roles"}``) travels in the resume value to a
        pause with an approval policy (docs/approvals-in-production.md).
        """
        if link is not None:
            other = decisions is not None or approver is not None
            thread_id, human_decision = _link_thread(link, thread_id, human_decision, other)
        _check_input(thread_id, decision=human_decision, decisions=decisions)
        tid = _thread(thread_id)
        sid = server_thread_id(tid)
        given = decisions if decisions is not None else human_decision
        with (
            _link_refusals(link),
            _translated(self.url, tid, f"resuming thread {tid!r}"),
            self._refusals(sid, given),
        ):
            seen = self._state(sid)
            if seen.stale and link is None:  # its in-doubt question comes first
                answer = Answer(human_decision, decisions, approver=approver)
                seen = self._ask_first(sid, tid, seen, answer)
            if link is not None:
                decided = _link_resume(tid, seen, link, self._now())
            else:
                decided = _resume_map(tid, seen, human_decision, decisions, approver)
            resume, due = _settling(seen, decided, self._now())
            after = self._send(sid, tid, seen, resume)
            again, settled = _not_yet(seen, due, decided, after)
            answered = [i for i in seen.interrupts if i.id in resume]
            if again:  # the server's clock: not expired yet; the decision goes as given
                seen = self._state(sid)
                after = self._send(sid, tid, seen, again)
                answered += [i for i in seen.interrupts if i.id in again]
            refuse_approver(seen.interrupts, after.interrupts)
            refuse_if_asked_again(seen.interrupts, after.interrupts)
            expired = _timeout(tid, answered, settled, after)
            if expired is not None:  # on_expire="raise": settled, the call did not run
                raise expired
        return _result(tid, after, self.max_steps, state)

    def _send(self, sid: str, tid: str, seen: _Seen, resume: Mapping[str, Any]) -> _Seen:
        """Send the resume ``resume`` of the pauses ``seen`` showed, wait for its run, check
        it won; the thread afterwards."""
        options = self._resume_options(resume, self.strict_resume())
        run = self.sync_client.runs.create(
            sid, self.assistant_id, command={"resume": resume}, **options
        )
        joined, done = self._wait(sid, str(run["run_id"]))
        _check_run(tid, done, joined, seen, thread_seen(self.sync_client.threads.get_state(sid)))
        self._check_won(sid, tid, seen, str(run["run_id"]), resume)
        return thread_seen(self.sync_client.threads.get_state(sid))

    async def _asend(self, sid: str, tid: str, seen: _Seen, resume: Mapping[str, Any]) -> _Seen:
        options = self._resume_options(resume, await self.astrict_resume())
        run = await self.client.runs.create(
            sid, self.assistant_id, command={"resume": resume}, **options
        )
        joined, done = await self._await(sid, str(run["run_id"]))
        now = thread_seen(await self.client.threads.get_state(sid))
        _check_run(tid, done, joined, seen, now)
        await self._acheck_won(sid, tid, seen, str(run["run_id"]), resume)
        return thread_seen(await self.client.threads.get_state(sid))

    def _now(self) -> datetime:
        """The time an approval's deadline is compared with before anything is sent (the
        paused tool on the server compares it with its own clock again)."""
        return datetime.now(UTC)

    async def aresume(
        self,
        human_decision: Any = MISSING,
        *,
        thread_id: str | None = None,
        decisions: Mapping[str, Any] | None = None,
        state: AgentState | None = None,
        approver: Any = None,
        link: str | None = None,
    ) -> AgentResult:
        """Async twin of :meth:`resume`."""
        if link is not None:
            other = decisions is not None or approver is not None
            thread_id, human_decision = _link_thread(link, thread_id, human_decision, other)
        _check_input(thread_id, decision=human_decision, decisions=decisions)
        tid = _thread(thread_id)
        sid = server_thread_id(tid)
        with _link_refusals(link), _translated(self.url, tid, f"resuming thread {tid!r}"):
            seen = await self._astate(sid)
            if seen.stale and link is None:  # as in resume()
                answer = Answer(human_decision, decisions, approver=approver)
                seen = await self._aask_first(sid, tid, seen, answer)
            if link is not None:
                decided = _link_resume(tid, seen, link, self._now())
            else:
                decided = _resume_map(tid, seen, human_decision, decisions, approver)
            resume, due = _settling(seen, decided, self._now())
            after = await self._asend(sid, tid, seen, resume)
            again, settled = _not_yet(seen, due, decided, after)
            answered = [i for i in seen.interrupts if i.id in resume]
            if again:  # the server's clock: not expired yet; the decision goes as given
                seen = await self._astate(sid)
                after = await self._asend(sid, tid, seen, again)
                answered += [i for i in seen.interrupts if i.id in again]
            refuse_approver(seen.interrupts, after.interrupts)
            refuse_if_asked_again(seen.interrupts, after.interrupts)
            expired = _timeout(tid, answered, settled, after)
            if expired is not None:  # on_expire="raise": settled, the call did not run
                raise expired
        return _result(tid, after, self.max_steps, state)

    # --- reading ----------------------------------------------------------------------

    def result(self, thread_id: str) -> AgentResult:
        """The thread's result as it stands (paused or finished); runs nothing.

        Raises:
            NothingToResumeError: an unknown thread.
            RemoteRunError: the thread is busy (a run in flight, or one whose server died on
                an engine without run recovery) or its last run failed: there is no result to
                report (never a ``completed`` one).
        """
        with _translated(self.url, thread_id, f"reading thread {thread_id!r}"):
            seen = self._state(server_thread_id(thread_id))
        return _result(thread_id, _settled(thread_id, seen), self.max_steps, None)

    async def aresult(self, thread_id: str) -> AgentResult:
        """Async twin of :meth:`result`."""
        with _translated(self.url, thread_id, f"reading thread {thread_id!r}"):
            seen = await self._astate(server_thread_id(thread_id))
        return _result(thread_id, _settled(thread_id, seen), self.max_steps, None)

    # --- waiting for a run ------------------------------------------------------------

    def _wait(self, sid: str, run_id: str) -> tuple[Any, Mapping[str, Any]]:
        """Join the run until it is no longer in flight (a join may return early: Aegra's
        returns after 30 s, or at once when another server runs it), at most ``timeout``."""
        deadline = time.monotonic() + self.timeout
        while True:
            joined = self.sync_client.runs.join(sid, run_id)
            run = self.sync_client.runs.get(sid, run_id)
            if run.get("status") not in _IN_FLIGHT or time.monotonic() > deadline:
                return joined, run
            time.sleep(_POLL)

    async def _await(self, sid: str, run_id: str) -> tuple[Any, Mapping[str, Any]]:
        deadline = time.monotonic() + self.timeout
        while True:
            joined = await self.client.runs.join(sid, run_id)
            run = await self.client.runs.get(sid, run_id)
            if run.get("status") not in _IN_FLIGHT or time.monotonic() > deadline:
                return joined, run
            await asyncio.sleep(_POLL)

    # --- connections ------------------------------------------------------------------

    def audit(self, thread_id: str) -> list[AuditEvent]:
        """The audit trail of ``thread_id`` on the server, oldest first (recorded by its
        graph when this client, or the deployment's ``DYNAVEC_AUDIT=1``, turned it on).

        Raises:
            ServerUnavailableError: the server cannot be reached or did not answer in time.
        """
        sid = server_thread_id(thread_id)
        with _translated(self.url, thread_id, f"reading the audit trail of {thread_id!r}"):
            return read_items(self.sync_client, sid)

    def verify_audit(self, thread_id: str | None = None) -> TrailReport:
        """Verify the hash chain of ``thread_id``'s audit trail on the server (every trail in
        its store when ``None``), read through the server's API (``dynavec-langgraph audit
        verify --server``): names every entry edited, deleted, reordered or inserted
        (docs/audit-and-notifications.md). Reads only; the report names server thread ids.

        Raises:
            ServerUnavailableError: the server cannot be reached or did not answer in time.
            RemoteRunError: the server refused (its auth handler may keep the store from
                these credentials: HTTP 403).
        """
        sid = server_thread_id(thread_id) if thread_id is not None else None
        with _translated(self.url, thread_id, "verifying the audit trail"):
            return verify_items(self.sync_client, sid)

    async def aaudit(self, thread_id: str) -> list[AuditEvent]:
        """Async twin of :meth:`audit`."""
        sid = server_thread_id(thread_id)
        with _translated(self.url, thread_id, f"reading the audit trail of {thread_id!r}"):
            return await aread_items(self.client, sid)

    @contextmanager
    def _refusals(self, sid: str, decision: Any) -> Iterator[None]:
        """Record a resume refused as concurrent (when recording), then raise it on."""
        try:
            yield
        except ConcurrentResumeError as error:
            if self._audit:
                with suppress(httpx.HTTPError):  # the refusal is what the caller must get
                    record_refusal(self.sync_client, sid, decision, error)
            raise

    def close(self) -> None:
        """Close the sync client's connections (the async ones: :meth:`aclose`)."""
        self.sync_client.close()

    async def aclose(self) -> None:
        """Close the connections of both clients."""
        self.sync_client.close()
        await self.client.aclose()

    def __enter__(self) -> RemoteReActAgent:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> RemoteReActAgent:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # --- the I/O lines of the twins ---------------------------------------------------

    def _state(self, thread_id: str) -> _Seen:
        """The thread's state (its status too when nothing is pending; its newest run, read
        first); unknown thread: ``exists`` False."""
        try:
            last = self.sync_client.runs.list(thread_id, limit=1, select=["run_id"])
            state = self.sync_client.threads.get_state(thread_id)
            status = None if state.get("interrupts") else self.sync_client.threads.get(thread_id)
            now = status and status.get("status")
            if now == "error" and self._was_refused(thread_id):
                now = "idle"
            notes = self._notes(thread_id, state)
        except httpx.HTTPStatusError as error:
            if _not_found(error):
                return thread_seen(None)
            raise
        return thread_seen(state, now, _run_id(last), notes)

    def _notes(self, thread_id: str, state: Mapping[str, Any]) -> list[Mapping[str, Any]]:
        """The notes of ``"ask"`` calls left in the server's store for a paused thread (none
        read when nothing is pending). A server that keeps its store from these credentials
        (HTTP 403 / 404) gives none: its views then show the thread state as it is."""
        if not state.get("interrupts"):
            return []
        try:
            found = self.sync_client.store.search_items((NOTE_NS, thread_id), limit=_NOTES_LIMIT)
        except httpx.HTTPStatusError as error:
            if error.response.status_code in (403, 404):
                return []
            raise
        return _note_values(found)

    async def _anotes(self, thread_id: str, state: Mapping[str, Any]) -> list[Mapping[str, Any]]:
        """Async twin of :meth:`_notes`."""
        if not state.get("interrupts"):
            return []
        try:
            found = await self.client.store.search_items((NOTE_NS, thread_id), limit=_NOTES_LIMIT)
        except httpx.HTTPStatusError as error:
            if error.response.status_code in (403, 404):
                return []
            raise
        return _note_values(found)

    def _viewed(self, thread_id: str) -> _Seen:
        """The thread state as the views show it (:func:`thread_seen` with the notes)."""
        state = self.sync_client.threads.get_state(thread_id)
        return thread_seen(state, notes=self._notes(thread_id, state))

    async def _aviewed(self, thread_id: str) -> _Seen:
        state = await self.client.threads.get_state(thread_id)
        return thread_seen(state, notes=await self._anotes(thread_id, state))

    def _ask_first(self, sid: str, tid: str, seen: _Seen, answer: Answer) -> _Seen:
        """``seen`` shows an in-doubt question the server's state does not list yet (the run
        that answered the pause died while the approved call ran): continue the thread first,
        without a decision (the server's run asks that question; nothing runs: a command that
        adds no message, like ``graph.invoke(None, config)``, as Aegra refuses ``input=None``
        and LangGraph an empty command), then let
        ``answer`` go on only if it names that question, as ``ReActAgent.resume`` does.

        Raises:
            StaleDecisionError: ``answer`` does not name the in-doubt question; nothing was
                applied, nothing ran, and the question is pending now.
        """
        run = self.sync_client.runs.create(
            sid, self.assistant_id, command={"update": {"messages": []}}, **self._run_options
        )
        self._wait(sid, str(run["run_id"]))
        after = self._state(sid)
        in_doubt_first(answer, tid, _Listed(seen.stale), _asked(seen), _Listed(after.interrupts))
        return after

    async def _aask_first(self, sid: str, tid: str, seen: _Seen, answer: Answer) -> _Seen:
        """Async twin of :meth:`_ask_first`."""
        run = await self.client.runs.create(
            sid, self.assistant_id, command={"update": {"messages": []}}, **self._run_options
        )
        await self._await(sid, str(run["run_id"]))
        after = await self._astate(sid)
        in_doubt_first(answer, tid, _Listed(seen.stale), _asked(seen), _Listed(after.interrupts))
        return after

    def _was_refused(self, sid: str) -> bool:
        """Whether the failed runs that may have left the thread's ``error`` status are all
        resumes the tool node's claim refused: then the state is the winner's, valid."""
        failed = _failures_since_last_result(self.sync_client.runs.list(sid, limit=_RECENT))
        for run in failed:
            rid = str(run["run_id"])
            joined = None if run.get("error_message") else self.sync_client.runs.join(sid, rid)
            if not _refusal(run, joined):
                return False
        return bool(failed)

    async def _awas_refused(self, sid: str) -> bool:
        failed = _failures_since_last_result(await self.client.runs.list(sid, limit=_RECENT))
        for run in failed:
            rid = str(run["run_id"])
            joined = None if run.get("error_message") else await self.client.runs.join(sid, rid)
            if not _refusal(run, joined):
                return False
        return bool(failed)

    async def _astate(self, thread_id: str) -> _Seen:
        try:
            last = await self.client.runs.list(thread_id, limit=1, select=["run_id"])
            state = await self.client.threads.get_state(thread_id)
            status = None if state.get("interrupts") else await self.client.threads.get(thread_id)
            now = status and status.get("status")
            if now == "error" and await self._awas_refused(thread_id):
                now = "idle"
            notes = await self._anotes(thread_id, state)
        except httpx.HTTPStatusError as error:
            if _not_found(error):
                return thread_seen(None)
            raise
        return thread_seen(state, now, _run_id(last), notes)

    def _check_won(
        self, sid: str, thread_id: str, seen: _Seen, run_id: str, answered: Collection[str]
    ) -> None:
        """Raise ConcurrentResumeError when another run answered the pause ``seen`` first:
        with ``multitask_strategy="reject"`` runs of a thread never overlap, so a run created
        between the read of the pause and this one (and not failed) came first."""
        deadline = time.monotonic() + self.timeout
        while True:
            runs: list[Mapping[str, Any]] = []
            while True:
                page = self.sync_client.runs.list(sid, limit=_RUNS_PAGE, offset=len(runs))
                runs += page
                found = _runs_between(
                    runs, run_id, seen.last_run_id, answered, complete=len(page) < _RUNS_PAGE
                )
                if found is not None:
                    break
            if not found or not _unsettled(runs, run_id, seen.last_run_id):
                break
            if time.monotonic() > deadline:
                break
            time.sleep(_POLL)  # an overlapping run (Aegra): its outcome decides
        writer = self._first_writer(sid, seen.checkpoint_id)
        if writer is not None:
            found = writer != run_id
        if found:
            raise _lost(thread_id)

    def _first_writer(self, sid: str, paused: str | None) -> str | None:
        """The run that wrote the first checkpoint after the paused one (see
        :func:`_writer_after`)."""
        before: str | None = None
        writer: str | None = None
        for _ in range(_HISTORY_PAGES):
            page = self.sync_client.threads.get_history(sid, limit=_HISTORY_PAGE, before=before)
            writer, before = _writer_after(page, paused, writer)
            if before is None:
                break
        return writer

    async def _afirst_writer(self, sid: str, paused: str | None) -> str | None:
        before: str | None = None
        writer: str | None = None
        for _ in range(_HISTORY_PAGES):
            page = await self.client.threads.get_history(sid, limit=_HISTORY_PAGE, before=before)
            writer, before = _writer_after(page, paused, writer)
            if before is None:
                break
        return writer

    async def _acheck_won(
        self, sid: str, thread_id: str, seen: _Seen, run_id: str, answered: Collection[str]
    ) -> None:
        deadline = time.monotonic() + self.timeout
        while True:
            runs: list[Mapping[str, Any]] = []
            while True:
                page = await self.client.runs.list(sid, limit=_RUNS_PAGE, offset=len(runs))
                runs += page
                found = _runs_between(
                    runs, run_id, seen.last_run_id, answered, complete=len(page) < _RUNS_PAGE
                )
                if found is not None:
                    break
            if not found or not _unsettled(runs, run_id, seen.last_run_id):
                break
            if time.monotonic() > deadline:
                break
            await asyncio.sleep(_POLL)
        writer = await self._afirst_writer(sid, seen.checkpoint_id)
        if writer is not None:
            found = writer != run_id
        if found:
            raise _lost(thread_id)


_HISTORY_PAGE = 20
_HISTORY_PAGES = 10
"""Checkpoints read per page, and pages at most, to find the one after a pause."""


def _writer_after(
    page: Sequence[Mapping[str, Any]], paused: str | None, newer: str | None = None
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
    return writer, (str(last) if last and len(page) >= _HISTORY_PAGE else None)


def _run_id(runs: Sequence[Mapping[str, Any]]) -> str | None:
    return str(runs[0]["run_id"]) if runs else None


_POLL = 0.2
"""Seconds between two reads of a run or thread still in flight."""
_RUN_OPTIONS: dict[str, Any] = {"multitask_strategy": "reject", "durability": durability("remote")}


def check_server_url(url: object, option: str = "url") -> str:
    """``url`` without its trailing ``/``: the http(s) URL of a LangGraph API server.

    Raises:
        InvalidOptionError: anything else (``""``, ``"file:///..."``, a host without a
            scheme), named as ``option``.

    >>> check_server_url("http://127.0.0.1:2024/")
    'http://127.0.0.1:2024'
    """
    parts = urlsplit(url) if isinstance(url, str) else None
    if parts is None or parts.scheme not in ("http", "https") or not parts.netloc:
        raise InvalidOptionError(
            option_text(
                option,
                url,
                "a LangGraph API server is reached at an http:// or https:// URL, e.g. "
                "'http://127.0.0.1:2024' (what `langgraph dev` serves)",
            ),
            option,
        )
    return str(url).rstrip("/")


def server_thread_id(thread_id: str) -> str:
    """The server's id for ``thread_id``: itself when it is a UUID (the server's ids are),
    else a UUID derived from it, so ``thread_id="t1"`` names the same thread every time.

    >>> server_thread_id("t1") == server_thread_id("t1") != server_thread_id("t2")
    True
    >>> server_thread_id("1f1ed19a-2c98-6658-8002-e533ae5ca1a4")
    '1f1ed19a-2c98-6658-8002-e533ae5ca1a4'
    """
    try:
        return str(uuid.UUID(thread_id))
    except ValueError:
        return str(uuid.uuid5(_THREAD_NAMESPACE, thread_id))


_THREAD_NAMESPACE = uuid.UUID("6f1c5b0e-4d1a-5c3e-9a57-1d2f0e6b7a10")


def _thread(thread_id: str | None) -> str:
    if thread_id is None:
        raise NothingToResumeError(
            "nothing to resume: pass thread_id= of a paused thread (RemoteReActAgent resumes "
            "threads kept by the server)"
        )
    return thread_id


def unknown_thread_text(thread_id: str, consequence: str) -> str:
    """The text of a thread the server does not show (HTTP 404): unknown, or kept from the
    caller by the server's auth rules, which answer both alike."""
    return (
        f"unknown thread {thread_id!r} on the server, or one its auth rules do not let these "
        f"credentials see: {consequence} (check the thread id, the server URL and the token)"
    )


def _access_refused(thread_id: str) -> ThreadAccessError:
    return ThreadAccessError(
        f"thread {thread_id!r} exists on the server, but its auth rules do not let these "
        "credentials use it: nothing was sent. Use a thread of your own (another thread id), "
        "or the token of a user the thread is shared with"
    )


def _create_refused(error: httpx.HTTPStatusError) -> bool:
    """A ``threads.create(..., if_exists="do_nothing")`` answered 409: the thread exists but
    the server's auth rules hide it (a thread the caller may read comes back as it is)."""
    return error.response.status_code == 409


@dataclass(frozen=True)
class _Listed:
    """Pending ``Interrupt``s where ``_resuming._in_doubt_first`` reads a snapshot's."""

    interrupts: list[Interrupt]


def _asked(seen: _Seen) -> dict[str, Any]:
    """``{interrupt id: in-doubt question}`` for the pauses ``seen`` shows as one."""
    return {i.id: i.value for i in seen.interrupts if i.id in {s.id for s in seen.stale}}


def _known(thread_id: str, seen: _Seen) -> _Seen:
    if not seen.exists:
        raise NothingToResumeError(unknown_thread_text(thread_id, "no result to read"))
    return seen


def _settled(thread_id: str, seen: _Seen) -> _Seen:
    """``seen`` when it holds a result (paused, or done); a busy or failed thread has none."""
    seen = _known(thread_id, seen)
    if seen.interrupts or seen.status not in {"busy", "error"}:
        return seen
    if seen.status == "busy":
        raise RemoteRunError(
            f"thread {thread_id!r} is busy: a run of it is in flight (run "
            f"{seen.last_run_id}), so it has no result yet; read it again when the run is "
            "done. A run whose server died stays in flight on an engine without run recovery "
            "(Aegra 0.6.0): then the thread stays busy and needs an operator"
        )
    raise RemoteRunError(
        f"thread {thread_id!r}: its last run (run {seen.last_run_id}) failed on the server, so "
        "it has no result; its state is that of its last saved checkpoint. Read the run's error "
        "on the server, then run or resume the thread again"
    )
