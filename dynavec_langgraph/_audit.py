"""The audit trail of a thread's approvals and the notification outbox of its pauses.

Both live beside the thread's checkpoints, in the thread's own storage, append-only:

- on a checkpointer (every ``BaseCheckpointSaver``: memory, SQLite, PostgreSQL, the dynavec
  adapter and DynamoDB), each entry is one checkpoint of the thread in its own checkpoint
  namespace (:data:`AUDIT_NS`, :data:`OUTBOX_NS`) whose metadata holds the entry; the graph's
  own checkpoints (namespace ``""``) are untouched, so listing, history and resuming do not
  see them, and deleting the thread deletes them;
- on a LangGraph store (a LangGraph API server, ``langgraph dev``: the graph gets the
  server's store), each entry is one item under ``(AUDIT_NS, thread_id)`` /
  ``(OUTBOX_NS, thread_id)`` keyed by its event id, which ``langgraph_sdk``'s
  ``client.store.search_items`` reads.

Entries are written where decisions are read, inside the graph (:func:`on_pause` and
:func:`on_decision`, called by :func:`dynavec_langgraph.interrupt.ask`), so a raw graph,
``langgraph dev`` and the servers record them too; what happens outside a graph (a concurrent
resume refused by the lock) is recorded by the caller with :func:`record`. Every entry has a
deterministic event id: a re-run of the paused tool reads its stored answers again and writes
the same ids, which are written once (a duplicate found later is dropped on reading).

Recording is opt-in (the agent's ``audit=True`` / ``notify=...``, the graph's config keys
:data:`AUDIT_KEY` / :data:`NOTIFY_KEY`, or the environment variables :data:`AUDIT_ENV` /
:data:`NOTIFY_ENV` for a server): a pause without them pays one dict lookup.

Notifications (:func:`deliver`) are sent at least once from the outbox: every pause (and
re-ask) is first written to the outbox, then sent by a background thread of the process that
paused (a few tries, backing off) and by the sweeper (``dynavec-langgraph inbox notify``)
for whatever is still undelivered; each try is recorded, a failing receiver never fails or
blocks the run, and a duplicate carries the same ``event_id`` (also the ``X-Dynavec-Event-Id``
and ``Idempotency-Key`` headers).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any, Final

from langgraph.checkpoint.base import BaseCheckpointSaver, empty_checkpoint
from langgraph.store.base import BaseStore
from langgraph.types import Interrupt

from dynavec_langgraph._audit_switch import (
    AUDIT_ENV,
    AUDIT_KEY,
    NOTIFY_ENV,
    NOTIFY_KEY,
    audit_flag,
    notifier,
)
from dynavec_langgraph._errors import webhook_url_text

__all__ = [
    "APPROVER_KEY",
    "AUDIT_ENV",
    "AUDIT_KEY",
    "AUDIT_NS",
    "IN_PROCESS_BACKOFF",
    "IN_PROCESS_TRIES",
    "MAX_BACKOFF",
    "NOTIFY_ENV",
    "NOTIFY_KEY",
    "OUTBOX_NS",
    "SURFACES",
    "SURFACE_KEY",
    "SWEEPER_BACKOFF",
    "AuditEvent",
    "Delivery",
    "Notifier",
    "aaudit_trail",
    "arecord",
    "audit_refusals",
    "audit_trail",
    "deliver",
    "deliver_soon",
    "enqueue",
    "event_id",
    "events_of",
    "make_event",
    "mirrored_interrupt_id",
    "notification_body",
    "on_decision",
    "on_pause",
    "ordered",
    "outbox",
    "record",
    "recording",
    "wait_for_deliveries",
    "with_audit",
]

AUDIT_NS: Final = "dynavec_audit"
"""The checkpoint namespace (or store namespace prefix) of the audit trail."""
OUTBOX_NS: Final = "dynavec_outbox"
"""The checkpoint namespace (or store namespace prefix) of the notification outbox."""
SURFACE_KEY: Final = "dynavec_surface"
"""``config["configurable"][SURFACE_KEY]``: which surface answers (``api``, ``cli``, ...)."""
APPROVER_KEY: Final = "dynavec_approver"
"""``config["configurable"][APPROVER_KEY]``: who answers (also read from the decision)."""

SURFACES: Final = ("api", "cli", "inbox", "server", "ui", "graph", "sweeper")
"""Where a decision came from: ``ReActAgent`` (api), the command line, the inbox commands, a
LangGraph API server (its runs: server; ``RemoteReActAgent`` sets api), an approval UI, a raw
graph (graph), a sweeper command."""

Notifier = str | Callable[[dict[str, Any]], Any]
"""A webhook URL (the body is POSTed as JSON; any 2xx is delivered) or a callable given the body
(returning is delivered, raising is a failed try)."""

# The graph's checkpointer, as LangGraph passes it to a running node: langgraph 1.2
# (langgraph._internal._constants.CONFIG_KEY_CHECKPOINTER); pinned by tests/test_audit.py.
_CHECKPOINTER_KEY: Final = "__pregel_checkpointer"
_META: Final = "dynavec_entry"
_ID: Final = "dynavec_event_id"
IN_PROCESS_TRIES: Final = 4
"""Tries of the background delivery of the process that paused (then the sweeper's turn)."""
IN_PROCESS_BACKOFF: Final = 0.5
"""Seconds before its second try; doubled after each failed one."""
SWEEPER_BACKOFF: Final = 30.0
"""Seconds the sweeper waits after a failed try before trying again; doubled each time, at
most :data:`MAX_BACKOFF`."""
MAX_BACKOFF: Final = 3600.0


@dataclass(frozen=True)
class AuditEvent:
    """One entry of a thread's audit trail.

    ``kind``: ``paused`` (a new pause), ``reasked`` (a pause asked again after a refused
    decision), ``decision`` (a decision accepted), ``refused`` (a decision refused, or a
    resume refused), ``expired`` and ``in_doubt`` (settlements other features record),
    ``notified`` is not recorded here (see the outbox). ``surface`` is one of
    :data:`SURFACES`; ``who`` the approver when known; ``digest`` the reviewed action's
    digest when the pause has one.
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
    decision: Any = None
    comment: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """The entry as plain JSON."""
        return asdict(self)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


def event_id(*parts: Any) -> str:
    """A deterministic id for an entry made of ``parts`` (the same parts, the same id)."""
    text = json.dumps(parts, sort_keys=True, default=repr, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


# --- storage: a checkpoint per entry, or a store item -------------------------------------


def _config(thread_id: str, ns: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns}}


def _entry_checkpoint(entry: Mapping[str, Any]) -> tuple[Any, dict[str, Any]]:
    checkpoint = empty_checkpoint()
    metadata: dict[str, Any] = {"source": "update", "step": -1, "parents": {}}
    metadata[_ID] = entry["event_id"]
    metadata[_META] = json.dumps(entry, default=repr, ensure_ascii=False)
    return checkpoint, metadata


def _on_own_loop(saver: Any) -> asyncio.AbstractEventLoop | None:
    """The running loop, when ``saver`` is an async saver bound to it (its sync methods
    refuse this thread then)."""
    loop = getattr(saver, "loop", None)
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        return None
    return running if loop is running else None


_pending_tasks: set[asyncio.Task[Any]] = set()


def _exists(target: Any, ns: str, thread_id: str, eid: str) -> bool:
    if isinstance(target, BaseStore):
        return target.get((ns, thread_id), eid) is not None
    return bool(list(target.list(_config(thread_id, ns), filter={_ID: eid}, limit=1)))


def _write(target: Any, ns: str, thread_id: str, entry: dict[str, Any]) -> None:
    """Append ``entry`` (once per event id) to ``target``'s ``ns`` of ``thread_id``."""
    eid = str(entry["event_id"])
    if isinstance(target, BaseStore):
        if target.get((ns, thread_id), eid) is None:
            target.put((ns, thread_id), eid, entry, index=False)
        return
    loop = _on_own_loop(target)
    if loop is not None:  # an async saver on its own loop: write it from a task
        task = loop.create_task(_awrite(target, ns, thread_id, entry))
        _pending_tasks.add(task)
        task.add_done_callback(_pending_tasks.discard)
        return
    if _exists(target, ns, thread_id, eid):
        return
    checkpoint, metadata = _entry_checkpoint(entry)
    target.put(_config(thread_id, ns), checkpoint, metadata, {})


async def _awrite(target: Any, ns: str, thread_id: str, entry: dict[str, Any]) -> None:
    eid = str(entry["event_id"])
    if isinstance(target, BaseStore):
        if await target.aget((ns, thread_id), eid) is None:
            await target.aput((ns, thread_id), eid, entry, index=False)
        return
    found = [t async for t in target.alist(_config(thread_id, ns), filter={_ID: eid}, limit=1)]
    if found:
        return
    checkpoint, metadata = _entry_checkpoint(entry)
    await target.aput(_config(thread_id, ns), checkpoint, metadata, {})


def _decode(metadata: Mapping[str, Any]) -> dict[str, Any] | None:
    raw = metadata.get(_META)
    if not isinstance(raw, str):
        return None
    try:
        entry = json.loads(raw)
    except ValueError:
        return None
    return entry if isinstance(entry, dict) else None


def ordered(entries: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    seen: dict[str, dict[str, Any]] = {}
    for entry in entries:
        seen.setdefault(str(entry.get("event_id")), entry)
    return sorted(seen.values(), key=lambda e: (str(e.get("at", "")), str(e.get("seq", ""))))


def _read(target: Any, ns: str, thread_id: str) -> list[dict[str, Any]]:
    if isinstance(target, BaseStore):
        found: list[dict[str, Any]] = []
        offset = 0
        while True:
            page = target.search((ns, thread_id), limit=100, offset=offset)
            found += [dict(item.value) for item in page]
            if len(page) < 100:
                return ordered(found)
            offset += 100
    items = target.list(_config(thread_id, ns))
    return ordered(e for t in items if (e := _decode(t.metadata)) is not None)


async def _aread(target: Any, ns: str, thread_id: str) -> list[dict[str, Any]]:
    if isinstance(target, BaseStore):
        found: list[dict[str, Any]] = []
        offset = 0
        while True:
            page = await target.asearch((ns, thread_id), limit=100, offset=offset)
            found += [dict(item.value) for item in page]
            if len(page) < 100:
                return ordered(found)
            offset += 100
    entries = []
    async for t in target.alist(_config(thread_id, ns)):
        if (e := _decode(t.metadata)) is not None:
            entries.append(e)
    return ordered(entries)


def _check_target(target: Any) -> None:
    if not isinstance(target, BaseCheckpointSaver | BaseStore):
        raise TypeError(
            f"{target!r:.80} is neither a LangGraph checkpointer nor a store: pass the "
            "checkpointer the thread runs on (or the server's store)"
        )


# --- the audit trail ------------------------------------------------------------------------


def make_event(
    thread_id: str,
    kind: str,
    *,
    outcome: str,
    surface: str,
    who: str | None = None,
    node_id: str | None = None,
    interrupt_id: str | None = None,
    tool_call_id: str | None = None,
    digest: str | None = None,
    decision: Any = None,
    comment: str | None = None,
    event_id_: str | None = None,
    at: str | None = None,
) -> AuditEvent:
    if surface not in SURFACES:
        raise ValueError(f"surface={surface!r}: use one of {', '.join(SURFACES)}")
    eid = event_id_ or event_id(
        "audit", thread_id, kind, node_id, interrupt_id, outcome, decision, time.time_ns()
    )
    return AuditEvent(
        event_id=eid,
        thread_id=thread_id,
        kind=kind,
        at=at or _now(),
        surface=surface,
        outcome=outcome,
        who=who,
        node_id=node_id,
        interrupt_id=interrupt_id,
        tool_call_id=tool_call_id,
        digest=digest,
        decision=_jsonable(decision),
        comment=comment,
    )


def _jsonable(value: Any) -> Any:
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        return repr(value)
    return value


def record(
    target: Any,
    thread_id: str,
    kind: str,
    *,
    outcome: str,
    surface: str,
    who: str | None = None,
    node_id: str | None = None,
    interrupt_id: str | None = None,
    tool_call_id: str | None = None,
    digest: str | None = None,
    decision: Any = None,
    comment: str | None = None,
    event_id: str | None = None,
    at: str | None = None,
) -> AuditEvent:
    """Append one entry to ``thread_id``'s audit trail in ``target`` and return it.

    For features that settle a pause outside the graph (expiry, a refused approver, an
    in-doubt call, a refused concurrent resume). ``target`` is the thread's checkpointer (or
    the server's store). Give a deterministic ``event_id`` when the same settlement may be
    recorded again (a retried sweeper): it is written once.

    Raises:
        TypeError: ``target`` is no checkpointer or store.
        ValueError: an unknown ``surface``.
    """
    _check_target(target)
    event = make_event(
        thread_id,
        kind,
        outcome=outcome,
        surface=surface,
        who=who,
        node_id=node_id,
        interrupt_id=interrupt_id,
        tool_call_id=tool_call_id,
        digest=digest,
        decision=decision,
        comment=comment,
        event_id_=event_id,
        at=at,
    )
    _write(target, AUDIT_NS, thread_id, event.as_dict())
    return event


async def arecord(target: Any, thread_id: str, kind: str, **fields: Any) -> AuditEvent:
    """Async twin of :func:`record` (for async savers)."""
    _check_target(target)
    eid = fields.pop("event_id", None)
    event = make_event(thread_id, kind, event_id_=eid, **fields)
    await _awrite(target, AUDIT_NS, thread_id, event.as_dict())
    return event


def events_of(entries: Sequence[dict[str, Any]]) -> list[AuditEvent]:
    names = set(AuditEvent.__dataclass_fields__)
    return [AuditEvent(**{k: v for k, v in e.items() if k in names}) for e in entries]


def audit_trail(target: Any, thread_id: str) -> list[AuditEvent]:
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
    _check_target(target)
    return events_of(_read(target, AUDIT_NS, thread_id))


async def aaudit_trail(target: Any, thread_id: str) -> list[AuditEvent]:
    """Async twin of :func:`audit_trail`."""
    _check_target(target)
    return events_of(await _aread(target, AUDIT_NS, thread_id))


# --- inside the graph: where decisions are read --------------------------------------------


@dataclass(frozen=True)
class _Setting:
    target: Any
    thread_id: str
    ns: str
    audit: bool
    notify: Notifier | None
    surface: str
    who: str | None


def _setting(conf: Mapping[str, Any]) -> _Setting | None:
    notify = notifier(conf)
    audit = audit_flag(conf) or notify is not None
    if not audit:
        return None
    from langgraph.config import get_store

    try:
        store = get_store()
    except RuntimeError:
        store = None
    target = store if store is not None else conf.get(_CHECKPOINTER_KEY)
    if not isinstance(target, BaseCheckpointSaver | BaseStore) or "thread_id" not in conf:
        return None  # nothing durable to record in: a graph run without a checkpointer
    surface = conf.get(SURFACE_KEY)
    if surface not in SURFACES:
        surface = "server" if "assistant_id" in conf else "graph"
    who = conf.get(APPROVER_KEY) or conf.get("langgraph_auth_user_id") or None
    return _Setting(
        target,
        str(conf["thread_id"]),
        str(conf.get("checkpoint_ns", "")),
        audit,
        notify,
        str(surface),
        str(who) if who is not None else None,
    )


def _current() -> _Setting | None:
    from langgraph.config import get_config

    try:
        conf = get_config().get("configurable") or {}
    except RuntimeError:
        return None
    return _setting(conf)


def _digest_of(value: Mapping[str, Any]) -> str | None:
    """The pause's review digest (``review_digest``, dynavec_langgraph._digest), if any."""
    for key in ("review_digest", "digest"):
        if isinstance(value.get(key), str):
            return str(value[key])
    return None


def _pause_fields(value: Any) -> dict[str, Any]:
    value = value if isinstance(value, Mapping) else {}
    call = value.get("tool_call")
    return {
        "node_id": value.get("node_id"),
        "tool_call_id": call.get("id") if isinstance(call, Mapping) else None,
        "digest": _digest_of(value),
    }


def mirrored_interrupt_id(ns: str, answered: int) -> str:
    """The id LangGraph gives the interrupt that fills answer slot ``answered`` of the task
    ``ns`` (mirrors ``langgraph.types._interrupt_id`` of langgraph 1.2; pinned by
    tests/test_audit.py)."""
    from xxhash import xxh3_128_hexdigest

    return xxh3_128_hexdigest((f"{ns}|{answered}" if answered else ns).encode())


def _who(raw: Any, setting: _Setting) -> str | None:
    """The approver: named in the decision (``approver`` / ``as`` / ``user``), else the config's."""
    items = raw.get("decisions") if isinstance(raw, Mapping) else raw
    candidates = items if isinstance(items, list) else [raw]
    for item in [raw, *candidates]:
        if isinstance(item, Mapping):
            for key in ("approver", "as", "user"):
                if isinstance(item.get(key), str):
                    return str(item[key])
    return setting.who


def _comment(raw: Any) -> str | None:
    items = raw.get("decisions") if isinstance(raw, Mapping) else raw
    first = items[0] if isinstance(items, list) and items else raw
    if isinstance(first, Mapping):
        for key in ("comment", "message"):
            if isinstance(first.get(key), str):
                return str(first[key])
    return None


def on_decision(
    value: Any,
    raw: Any,
    index: int,
    refused: str | None,
    *,
    kind: str | None = None,
    outcome: str | None = None,
    who: str | None = None,
    authenticated_by: str | None = None,
) -> None:
    """Record a decision ``ask`` read for the pause ``value`` (its ``index``-th ask):
    accepted, or refused with the reason ``refused``. A no-op unless recording is on.

    An approval policy's loop (``dynavec_langgraph._policy.ask_with_policy``) names its own
    ``kind`` (``"expired"``), ``outcome`` (``"approval 1 of 2"``) and approver ``who``, and
    how ``who`` was identified: ``authenticated_by`` ``"server"`` (the user a LangGraph API
    server with auth signed in) or ``"explicit"`` (named in the answer or the run's config).
    The entries have no field for it yet (it is passed for the trail's ``authenticated_by``;
    ``who`` is the signed-in user either way)."""
    del authenticated_by  # no field of AuditEvent holds it yet
    setting = _current()
    if setting is None:
        return
    fields = _pause_fields(value)
    interrupt_id = mirrored_interrupt_id(setting.ns, index)
    default_kind, default_outcome = ("refused", refused) if refused else ("decision", "accepted")
    kind, outcome = kind or default_kind, outcome or default_outcome
    eid = event_id("decision", setting.thread_id, setting.ns, index, fields["node_id"], raw)
    if kind == "expired" and setting.notify is not None:  # approvers hear of an expiry too
        body = notification_body(setting.thread_id, kind, value, interrupt_id, event_id=eid)
        _write(setting.target, OUTBOX_NS, setting.thread_id, _outbox_entry(body))
        deliver_soon(setting.target, setting.thread_id, setting.notify)
    if not setting.audit:
        return
    event = make_event(
        setting.thread_id,
        kind,
        outcome=outcome,
        surface=setting.surface,
        who=who or _who(raw, setting),
        interrupt_id=interrupt_id,
        decision=raw,
        comment=_comment(raw),
        event_id_=eid,
        **fields,
    )
    _write(setting.target, AUDIT_NS, setting.thread_id, event.as_dict())


def on_pause(value: Any, interrupts: Sequence[Interrupt], reasked: bool) -> None:
    """Record a pause ``ask`` raised (``interrupts``: the ``GraphInterrupt``'s), put its
    notification in the outbox and start sending it. A no-op unless recording is on; never
    raises for a receiver (delivery runs in the background)."""
    setting = _current()
    if setting is None:
        return
    fields = _pause_fields(value)
    interrupt = interrupts[0] if interrupts else None
    iid = interrupt.id if interrupt is not None else None
    kind = "reasked" if reasked else "paused"
    eid = event_id("pause", setting.thread_id, iid, fields["node_id"])
    if setting.audit:
        error = value.get("error") if isinstance(value, Mapping) else None
        event = make_event(
            setting.thread_id,
            kind,
            outcome="waiting",
            surface=setting.surface,
            interrupt_id=iid,
            comment=error if isinstance(error, str) else None,
            event_id_=eid,
            **fields,
        )
        _write(setting.target, AUDIT_NS, setting.thread_id, event.as_dict())
    if setting.notify is not None:
        body = notification_body(setting.thread_id, kind, value, iid, event_id=eid)
        _write(setting.target, OUTBOX_NS, setting.thread_id, _outbox_entry(body))
        deliver_soon(setting.target, setting.thread_id, setting.notify)


# --- notifications --------------------------------------------------------------------------


def notification_body(
    thread_id: str,
    kind: str,
    value: Any,
    interrupt_id: str | None,
    *,
    event_id: str,
    db: str | None = None,
) -> dict[str, Any]:
    """What a receiver gets for a pause ``value`` (an :class:`InterruptValue` or any
    interrupt value): the thread, the approval, the call, and how to answer it."""
    value = value if isinstance(value, Mapping) else {"payload": value}
    node = value.get("node_id")
    target = interrupt_id or node or "NODE_ID"
    answer = ["dynavec-langgraph", "inbox", "answer", "--db", db or "DB", "--thread", thread_id]
    answer += ["--node", str(target), "--approve"]
    return {
        "event_id": event_id,
        "event": kind,
        "at": _now(),
        "thread_id": thread_id,
        "interrupt_id": interrupt_id,
        "node_id": node,
        "payload": _jsonable(value.get("payload")),
        "tool_call": _jsonable(value.get("tool_call")),
        "description": value.get("description"),
        "error": value.get("error"),
        "allowed_decisions": value.get("allowed_decisions"),
        # an approval policy's fields (dynavec_langgraph._policy): the deadline, who approved
        "deadline": value.get("expires_at", value.get("deadline")),
        "approvals": _approvals(value),
        "digest": _digest_of(value),
        "resume": {
            "command": " ".join(answer),
            "python": f"agent.resume('approved', thread_id={thread_id!r})",
            "langgraph": {"resume": {str(target): "approved"}},
        },
    }


def _approvals(value: Mapping[str, Any]) -> Any:
    """Who has approved so far: the policy's ``approval.approved_by`` (with the count needed),
    or a value's own ``approvals`` / ``approved_by``."""
    state = value.get("approval")
    if isinstance(state, Mapping):
        return {
            "approved_by": list(state.get("approved_by") or []),
            "required": state.get("approvals_required"),
        }
    return value.get("approvals", value.get("approved_by"))


def _outbox_entry(body: Mapping[str, Any]) -> dict[str, Any]:
    return {"event_id": body["event_id"], "type": "event", "at": body["at"], "body": dict(body)}


def enqueue(target: Any, thread_id: str, body: Mapping[str, Any]) -> None:
    """Put one notification ``body`` (with its ``event_id``) in ``thread_id``'s outbox, for
    features that notify outside the graph (an expiry settled by a sweeper)."""
    _check_target(target)
    _write(target, OUTBOX_NS, thread_id, _outbox_entry(body))


@dataclass(frozen=True)
class Delivery:
    """One outbox entry: its body, how many tries failed, and when the next is due."""

    event_id: str
    body: dict[str, Any]
    delivered: bool
    tries: int
    next_at: float
    last_error: str | None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def outbox(target: Any, thread_id: str) -> list[Delivery]:
    """Every notification of ``thread_id`` in ``target``, oldest first, with its state."""
    _check_target(target)
    entries = _read(target, OUTBOX_NS, thread_id)
    tries: dict[str, list[dict[str, Any]]] = {}
    for e in entries:
        if e.get("type") == "try":
            tries.setdefault(str(e["of"]), []).append(e)
    found = []
    for e in entries:
        if e.get("type") != "event":
            continue
        done = tries.get(str(e["event_id"]), [])
        failed = [t for t in done if not t.get("ok")]
        last = failed[-1] if failed else None
        found.append(
            Delivery(
                event_id=str(e["event_id"]),
                body=dict(e["body"]),
                delivered=any(t.get("ok") for t in done),
                tries=len(failed),
                next_at=float(last["next_at"]) if last else 0.0,
                last_error=str(last["error"]) if last else None,
            )
        )
    return found


def _send(notify: Notifier, body: Mapping[str, Any], timeout: float) -> None:
    if callable(notify):
        notify(dict(body))
        return
    import httpx

    eid = str(body["event_id"])
    headers = {"X-Dynavec-Event-Id": eid, "Idempotency-Key": eid}
    response = httpx.post(notify, json=dict(body), headers=headers, timeout=timeout)
    response.raise_for_status()


def _backoff(tries: int, base: float) -> float:
    return float(min(base * 2 ** max(tries - 1, 0), MAX_BACKOFF))


def deliver(
    target: Any,
    thread_id: str,
    notify: Notifier,
    *,
    backoff: float = SWEEPER_BACKOFF,
    force: bool = False,
    timeout: float = 10.0,
) -> tuple[int, int]:
    """Send ``thread_id``'s undelivered notifications that are due (all with ``force``);
    record each try. Returns ``(delivered, failed)``; never raises for the receiver."""
    _check_target(target)
    sent = failed = 0
    for item in outbox(target, thread_id):
        if item.delivered or (not force and item.next_at > time.time()):
            continue
        try:
            _send(notify, item.body, timeout)
        except Exception as error:  # any receiver failure is a failed try, never the caller's
            failed += 1
            tries = item.tries + 1
            _write(
                target,
                OUTBOX_NS,
                thread_id,
                {
                    "event_id": event_id("try", item.event_id, tries, time.time_ns()),
                    "type": "try",
                    "of": item.event_id,
                    "ok": False,
                    "at": _now(),
                    "error": f"{type(error).__name__}: {error}"[:500],
                    "next_at": time.time() + _backoff(tries, backoff),
                },
            )
            continue
        sent += 1
        _write(
            target,
            OUTBOX_NS,
            thread_id,
            {
                "event_id": event_id("delivered", item.event_id),
                "type": "try",
                "of": item.event_id,
                "ok": True,
                "at": _now(),
            },
        )
    return sent, failed


def deliver_soon(
    target: Any,
    thread_id: str,
    notify: Notifier,
    *,
    tries: int = IN_PROCESS_TRIES,
    backoff: float = IN_PROCESS_BACKOFF,
) -> threading.Thread:
    """Send ``thread_id``'s outbox from a daemon thread: up to ``tries`` rounds, waiting
    ``backoff`` seconds (doubled each time) after a failed one; what is still undelivered
    then is the sweeper's. The run that paused does not wait for it."""

    def work() -> None:
        wait = backoff
        for _ in range(tries):
            try:
                _, failed = deliver(target, thread_id, notify, backoff=wait, force=True)
            except Exception:  # storage gone (process ending): the sweeper sends it later
                return
            if not failed:
                return
            time.sleep(wait)
            wait *= 2

    worker = threading.Thread(target=work, name=f"dynavec-notify-{thread_id}", daemon=True)
    worker.start()
    _workers.append(worker)
    del _workers[:-64]
    return worker


_workers: list[threading.Thread] = []


def wait_for_deliveries(timeout: float = 10.0) -> None:
    """Wait for this process's background deliveries (tests, or before a planned exit)."""
    end = time.monotonic() + timeout
    for worker in list(_workers):
        worker.join(max(0.0, end - time.monotonic()))


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
    configurable: dict[str, Any] = {AUDIT_KEY: True, SURFACE_KEY: surface}
    if notify is not None:
        configurable[NOTIFY_KEY] = notify
    return graph.with_config({"configurable": configurable})


def recording(graph: Any) -> bool:
    """Whether ``graph`` records its audit trail (its config, or :data:`AUDIT_ENV`)."""
    conf = (getattr(graph, "config", None) or {}).get("configurable") or {}
    return audit_flag(conf)


@contextmanager
def audit_refusals(
    graph: Any, target: Any, thread_id: str | None, decision: Any, surface: str
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
