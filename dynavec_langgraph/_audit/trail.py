"""Recording and reading a thread's audit trail from outside the graph (:func:`record`,
:func:`audit_trail` and their async twins), and the doors' part: a graph switched to record
(:func:`with_audit`) and the refusals recorded around a resume (:func:`audit_refusals`)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Unpack

from dynavec_langgraph._audit.entries import (
    AuditEvent,
    EventFields,
    Notifier,
    check_entry,
    make_event,
)
from dynavec_langgraph._audit.storage import aread, awrite, check_target, read, write
from dynavec_langgraph._audit.switch import audit_flag
from dynavec_langgraph._errors import webhook_url_text
from dynavec_langgraph._names import APPROVER_KEY, AUDIT_KEY, AUDIT_NS, NOTIFY_KEY, SURFACE_KEY
from dynavec_langgraph._storable import check_id
from dynavec_langgraph._types import JSONMapping, JSONObject, UserPayload

if TYPE_CHECKING:
    from dynavec_langgraph._audit.storage import Target

__all__ = [
    "aaudit_trail",
    "arecord",
    "audit_refusals",
    "audit_trail",
    "events_of",
    "record",
    "recording",
    "with_audit",
]


def record(target: object, thread_id: str, kind: str, **fields: Unpack[EventFields]) -> AuditEvent:
    """Append one entry to ``thread_id``'s audit trail in ``target`` and return it as
    stored (chained: with its ``seq``, ``prev_hash`` and ``hash``).

    For features that settle a pause outside the graph (expiry, a refused approver, an
    in-doubt call, a refused concurrent resume). ``target`` is the thread's checkpointer (or
    the server's store). ``fields``: ``outcome`` and ``surface``, and when known ``who``,
    ``node_id``, ``interrupt_id``, ``tool_call_id``, ``digest``, ``decision``, ``comment``,
    ``event_id``, ``at``, ``authenticated_by`` (:class:`EventFields`). Give a deterministic
    ``event_id`` when the same settlement may be recorded again (a retried sweeper): it is
    written once (the entry already there is returned). ``authenticated_by`` says how ``who``
    was identified (:data:`AUTHENTICATED_BY`; default ``explicit`` when ``who`` is given).

    Raises:
        TypeError: ``target`` is no checkpointer or store.
        ValueError: an unknown ``surface`` or ``authenticated_by``.
        InvalidInputError: a value no saver stores as it is (a lone surrogate, a NUL in the
            thread id, a ``decision`` nested more than :data:`MAX_NESTING` levels deep);
            nothing was written.
        StorageError: other writers kept taking the trail's next entry.
    """
    target, event = _checked(target, thread_id, kind, fields)
    stored = write(target, AUDIT_NS, thread_id, event.as_dict())
    return event if stored is None else _event(stored)


async def arecord(
    target: object, thread_id: str, kind: str, **fields: Unpack[EventFields]
) -> AuditEvent:
    """Async twin of :func:`record` (for async savers)."""
    target, event = _checked(target, thread_id, kind, fields)
    return _event(await awrite(target, AUDIT_NS, thread_id, event.as_dict()))


def _checked(
    target: object, thread_id: str, kind: str, fields: EventFields
) -> tuple[Target, AuditEvent]:
    """What :func:`record` writes, and where: ``target`` and every field given (not
    ``None``) checked before anything is written."""
    target = check_target(target)
    given = {k: v for k, v in fields.items() if v is not None}
    check_entry(thread_id, {"kind": kind, **given})
    return target, make_event(thread_id, kind, **fields)


def _event(entry: JSONMapping) -> AuditEvent:
    names = AuditEvent.__dataclass_fields__
    return AuditEvent(**{k: v for k, v in entry.items() if k in names})


def events_of(entries: Sequence[JSONObject]) -> list[AuditEvent]:
    return [_event(e) for e in entries]


def audit_trail(target: object, thread_id: str) -> list[AuditEvent]:
    """The audit trail of ``thread_id`` in ``target`` (a checkpointer or a store), oldest
    first; empty for a thread without one.

    Example:
        >>> from langgraph.checkpoint.memory import InMemorySaver
        >>> saver = InMemorySaver()
        >>> _ = record(saver, "t1", "refused", outcome="concurrent resume refused",
        ...            surface="cli", who="ana")
        >>> [(e.kind, e.who) for e in audit_trail(saver, "t1")]
        [('refused', 'ana')]
    """
    target = check_target(target)
    check_id(thread_id, "thread_id")
    return events_of(read(target, AUDIT_NS, thread_id))


async def aaudit_trail(target: object, thread_id: str) -> list[AuditEvent]:
    """Async twin of :func:`audit_trail`."""
    target = check_target(target)
    check_id(thread_id, "thread_id")
    return events_of(await aread(target, AUDIT_NS, thread_id))


# --- the callers outside the graph ------------------------------------------------------------


def with_audit(graph: Any, *, audit: bool, notify: Notifier | None, surface: str) -> Any:
    """``graph`` with recording on (``audit``) and ``notify`` as its notifier; ``graph``
    itself when neither is given."""
    if not audit and notify is None:
        return graph
    if notify is not None and not (callable(notify) or isinstance(notify, str)):
        raise TypeError(
            f"notify={notify!r:.80}: pass a webhook URL (http:// or https://) or a callable "
            "taking the notification's JSON body"
        )
    if isinstance(notify, str) and not notify.startswith(("http://", "https://")):
        raise ValueError(webhook_url_text(f"notify={notify!r}"))
    configurable: JSONObject = {AUDIT_KEY: True, SURFACE_KEY: surface}
    if notify is not None:
        configurable[NOTIFY_KEY] = notify
    return graph.with_config({"configurable": configurable})


def recording(graph: Any) -> bool:
    """Whether ``graph`` records its audit trail (its config, or :data:`AUDIT_ENV`)."""
    conf = (getattr(graph, "config", None) or {}).get("configurable") or {}
    return audit_flag(conf)


@contextmanager
def audit_refusals(
    graph: Any, target: Target, thread_id: str | None, decision: UserPayload, surface: str
) -> Iterator[None]:
    """Record a resume the lock refused (:class:`ConcurrentResumeError`), or an approver a
    door refused before sending anything (:class:`ApproverRefusedError`; one the paused tool
    refused is in the trail already), in ``thread_id``'s trail when ``graph`` records one,
    then raise it on."""
    from dynavec_langgraph._errors import ApproverRefusedError, ConcurrentResumeError

    try:
        yield
    except ApproverRefusedError as error:
        if thread_id is not None and not error.recorded and recording(graph):
            record(
                target,
                thread_id,
                "refused",
                outcome=f"approver {error.approver!r} refused",
                surface=surface,
                who=error.approver,
                node_id=str(error.node_id) if error.node_id is not None else None,
                decision=decision,
                comment=str(error),
            )
        raise
    except ConcurrentResumeError as error:
        if thread_id is not None and recording(graph):
            conf = (getattr(graph, "config", None) or {}).get("configurable") or {}
            who = conf.get(APPROVER_KEY)
            record(
                target,
                thread_id,
                "refused",
                outcome="concurrent resume refused",
                surface=surface,
                who=str(who) if who is not None else None,
                decision=decision,
                comment=str(error),
            )
        raise
