"""The records of the audit trail: the entry (:class:`AuditEvent`) with its names and
kinds, its deterministic id and its hash (:func:`entry_hash`), built and checked before it is
written (:func:`make_event`)."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any, Final, Required, TypedDict, Unpack

from dynavec_langgraph._errors import InvalidInputError, too_deep_text
from dynavec_langgraph._storable import (
    MAX_NESTING,
    brief,
    check_id,
    check_text,
    lone_surrogate,
    too_deep,
)
from dynavec_langgraph._types import JSONMapping, JSONObject, UserPayload

__all__ = [
    "AUTHENTICATED_BY",
    "GENESIS",
    "SURFACES",
    "TAMPERING",
    "AuditEvent",
    "EventFields",
    "Notifier",
    "canonical",
    "check_entry",
    "entry_hash",
    "event_id",
    "first_text",
    "jsonable",
    "make_event",
    "now",
]


SURFACES: Final = ("api", "cli", "inbox", "server", "ui", "graph", "sweeper")
"""Where a decision came from: ``ReActAgent`` (api), the command line, the inbox commands, a
LangGraph API server (its runs: server; ``RemoteReActAgent`` sets api), an approval UI, a raw
graph (graph), a sweeper command."""

AUTHENTICATED_BY: Final = ("explicit", "server", "signed_link")
"""How the actor ``who`` of an entry was identified (its ``authenticated_by``; ``None`` when
the entry names nobody): ``explicit``, a name the caller gave in the process (``approver=`` /
``"as"`` in the decision, ``dynavec_approver`` in the config, ``--as`` on the command line),
which proves nothing beyond what the caller claims; ``server``, the user a LangGraph server
authenticated; ``signed_link``, the holder of a signed approval link. Only ``explicit`` is
written so far."""
GENESIS: Final = "0" * 64
"""The ``prev_hash`` of a thread's first chained entry."""
TAMPERING: Final = ("edited", "deleted", "reordered", "inserted")
"""The kinds of :class:`TrailProblem`."""

Notifier = str | Callable[[JSONObject], Any]
"""A webhook URL (the body is POSTed as JSON; any 2xx is delivered) or a callable given the body
(returning is delivered, raising is a failed try)."""


@dataclass(frozen=True)
class AuditEvent:
    """One entry of a thread's audit trail.

    ``kind``: ``paused`` (a new pause), ``reasked`` (a pause asked again after a refused
    decision), ``decision`` (a decision accepted), ``refused`` (a decision refused, or a
    resume refused), ``expired`` and ``in_doubt`` (settlements other features record),
    ``notified`` is not recorded here (see the outbox). ``surface`` is one of
    :data:`SURFACES`; ``who`` the approver when known, ``authenticated_by`` how it was
    identified (one of :data:`AUTHENTICATED_BY`); ``digest`` the reviewed action's digest when
    the pause has one. ``seq``, ``prev_hash`` and ``hash`` chain the entry to the one before it
    in its thread (``None`` for an entry written before the chain, and for one not written
    yet).
    """

    event_id: str
    thread_id: str
    kind: str
    at: str
    surface: str
    outcome: str
    who: str | None = None
    node_id: str | None = None
    interrupt_id: str | None = None
    tool_call_id: str | None = None
    digest: str | None = None
    decision: UserPayload = None
    comment: str | None = None
    authenticated_by: str | None = None
    seq: int | None = None
    prev_hash: str | None = None
    hash: str | None = None

    def as_dict(self) -> JSONObject:
        """The entry as plain JSON."""
        return asdict(self)


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


def event_id(*parts: Any) -> str:
    """A deterministic id for an entry made of ``parts`` (the same parts, the same id)."""
    try:
        text = json.dumps(parts, sort_keys=True, default=repr, ensure_ascii=False)
    except (RecursionError, ValueError):  # a part nested too deeply (or circular) to encode
        text = json.dumps([brief(p, 10_000) for p in parts], ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def entry_hash(entry: JSONMapping) -> str:
    """The ``hash`` of a chained entry: SHA-256 (hex) of the entry without its ``hash`` key,
    as JSON with sorted keys, no spaces and non-ASCII characters escaped (Python's
    ``json.dumps(entry, sort_keys=True, separators=(",", ":"))``), UTF-8 encoded. It covers
    every field: who, ``authenticated_by``, the decision, ``seq`` and ``prev_hash``.

    Example:
        >>> entry_hash({"seq": 1, "prev_hash": GENESIS, "hash": "ignored"})[:16]
        'c8a95bcfa326d90b'
    """
    body = {k: v for k, v in entry.items() if k != "hash"}
    return hashlib.sha256(canonical(body)).hexdigest()


def first_text(value: JSONMapping, keys: Sequence[str]) -> str | None:
    """The first of ``keys`` whose value in ``value`` is a string, as that string; else None."""
    for key in keys:
        if isinstance(value.get(key), str):
            return str(value[key])
    return None


def canonical(entry: JSONMapping) -> bytes:
    return json.dumps(entry, sort_keys=True, separators=(",", ":")).encode("utf-8")


class EventFields(TypedDict, total=False):
    """What a caller gives of an entry besides its thread and ``kind`` (:func:`make_event`,
    ``audit.record``): ``outcome`` and ``surface`` always, the others when known (the fields
    of :class:`AuditEvent`; ``event_id`` deterministic when the same entry may be recorded
    again, ``at`` the time it happened, now by default)."""

    outcome: Required[str]
    surface: Required[str]
    who: str | None
    node_id: str | None
    interrupt_id: str | None
    tool_call_id: str | None
    digest: str | None
    decision: UserPayload
    comment: str | None
    event_id: str | None
    at: str | None
    authenticated_by: str | None


def make_event(thread_id: str, kind: str, **fields: Unpack[EventFields]) -> AuditEvent:
    """An entry (not written yet); ``authenticated_by`` defaults to ``explicit`` when it
    names someone (``who``), else ``None``."""
    surface, outcome, who = fields["surface"], fields["outcome"], fields.get("who")
    if surface not in SURFACES:
        raise ValueError(f"surface={surface!r}: use one of {', '.join(SURFACES)}")
    authenticated_by = fields.get("authenticated_by")
    if authenticated_by is None and who is not None:
        authenticated_by = "explicit"
    if authenticated_by is not None and authenticated_by not in AUTHENTICATED_BY:
        raise ValueError(
            f"authenticated_by={authenticated_by!r}: use one of {', '.join(AUTHENTICATED_BY)} "
            "(or None when the entry names nobody)"
        )
    node_id, interrupt_id = fields.get("node_id"), fields.get("interrupt_id")
    decision = fields.get("decision")
    eid = fields.get("event_id") or event_id(
        "audit", thread_id, kind, node_id, interrupt_id, outcome, decision, time.time_ns()
    )
    return AuditEvent(
        event_id=eid,
        thread_id=thread_id,
        kind=kind,
        at=fields.get("at") or now(),
        surface=surface,
        outcome=_escaped(outcome) or "",
        who=_escaped(who),
        node_id=_escaped(node_id),
        interrupt_id=interrupt_id,
        tool_call_id=_escaped(fields.get("tool_call_id")),
        digest=fields.get("digest"),
        decision=jsonable(decision),
        comment=_escaped(fields.get("comment")),
        authenticated_by=authenticated_by,
    )


def jsonable(value: UserPayload) -> Any:
    """``value`` as it is when every saver and store can hold it as JSON, else its ``repr``
    (which escapes a lone surrogate; shortened for a value nested too deeply): what the
    graph records never fails the run for the value it records."""
    if too_deep(value) or lone_surrogate(value) is not None:
        return brief(value, 10_000)
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        return brief(value, 10_000)
    return value


def _escaped(text: str | None) -> str | None:
    """``text`` with any lone surrogate written as its escape (``\\ud83d``): a text the
    graph records (a refusal reason, a decision's comment) is stored, never refused."""
    if text is None or text.isascii():
        return text
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def check_entry(thread_id: str, fields: JSONMapping) -> None:
    """What a caller records or enqueues (:func:`record`, :func:`enqueue`), refused before
    anything is written when a saver cannot store it as it is.

    Raises:
        InvalidInputError: a thread id holding a lone surrogate or NUL; a value holding a
            lone surrogate or nested deeper than :data:`MAX_NESTING`; naming the field.
    """
    check_id(thread_id, "thread_id")
    for name, value in fields.items():
        if too_deep(value):
            raise InvalidInputError(too_deep_text(name, MAX_NESTING), name)
        check_text(value, name)
