"""What a remote agent sends: its input checked, the server's URL and thread ids, the resume of
each pause or of a signed link, strict resume and the run options."""

from __future__ import annotations

import inspect
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from dynavec_langgraph._approvals.links import REFUSED, link_answer, read_link
from dynavec_langgraph._dynavec.records import AgentState
from dynavec_langgraph._errors import (
    InvalidDecisionError,
    InvalidLinkError,
    InvalidOptionError,
    NothingToResumeError,
    not_paused_text,
    option_text,
)
from dynavec_langgraph._graph.run_data import durability
from dynavec_langgraph._pauses.digest import refuse_stale, review_digest
from dynavec_langgraph._pauses.policy.doors import expired_pauses
from dynavec_langgraph._remote.errors import busy, unknown_thread_text
from dynavec_langgraph._remote.threads import Seen
from dynavec_langgraph._resuming.answers import MISSING, Answer
from dynavec_langgraph._storable import brief, check_id, check_text
from dynavec_langgraph._types import JSONMapping, JSONObject, UserPayload

if TYPE_CHECKING:
    from dynavec_langgraph._types import Approver


def check_input(
    thread_id: str | None,
    goal: UserPayload = None,
    state: AgentState | None = None,
    decision: UserPayload = MISSING,
    decisions: JSONMapping | None = None,
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


def run_input(goal: str, state: AgentState | None) -> JSONObject:
    graph_input: JSONObject = {"messages": [{"role": "user", "content": goal}]}
    if state is not None:
        graph_input["shared"] = dict(state.data)
    return graph_input


def resume_map(
    thread_id: str,
    seen: Seen,
    decision: UserPayload,
    decisions: JSONMapping | None,
    approver: Approver = None,
) -> JSONObject:
    """``{interrupt_id: decision}`` for the pauses ``seen`` shows.

    Raises:
        NothingToResumeError: an unknown thread, or one that is not paused.
        InvalidDecisionError: no decision, ``None``, several pending for one decision, both
            ``human_decision`` and ``decisions``, or ``decisions`` naming what is not pending.
    """
    if not seen.exists or seen.checkpoint_id is None:
        raise NothingToResumeError(unknown_thread_text(thread_id, "nothing to resume"))
    if not seen.interrupts and seen.busy:
        raise busy(thread_id)
    if not seen.interrupts:
        raise NothingToResumeError(not_paused_text(thread_id, "; call run() to continue it"))
    # the decision checks of the guarded resume (the server holds the thread's lock)
    answer = Answer(decision, decisions, approver=approver)
    resume = dict(answer.command(seen.interrupts, None).resume or {})
    refuse_stale(thread_id, seen.interrupts, resume)
    return resume


def link_thread(
    link: str, thread_id: str | None, decision: UserPayload, other: bool
) -> tuple[str, Any]:
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


def link_resume(thread_id: str, seen: Seen, link: str, now: datetime) -> JSONObject:
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
def link_refusals(link: str | None) -> Iterator[None]:
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


def sdk_strict_resume(runs: Any) -> bool:
    """Whether this ``langgraph_sdk`` can ask for strict resume (``runs.create`` takes
    ``strict_resume``; older releases of the ``studio`` extra's range do not)."""
    try:
        return "strict_resume" in inspect.signature(type(runs).create).parameters
    except (AttributeError, TypeError, ValueError):
        return False


RUN_OPTIONS: JSONObject = {"multitask_strategy": "reject", "durability": durability("remote")}


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
