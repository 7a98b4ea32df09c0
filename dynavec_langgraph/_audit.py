"""The audit trail of a thread's approvals and the notification outbox of its pauses.

Both live beside the thread's checkpoints, in the thread's own storage, append-only:

- on a checkpointer (every ``BaseCheckpointSaver``: memory, SQLite, PostgreSQL, the dynavec
  adapter and DynamoDB), each entry is one checkpoint of the thread in its own checkpoint
  namespace (:data:`AUDIT_NS`, :data:`OUTBOX_NS`), holding the entry (an audit entry in a
  pending write, see "The chain" below; an outbox entry in its metadata); the graph's own
  checkpoints (namespace ``""``) are untouched, so listing, history and resuming do not see
  them, and deleting the thread deletes them;
- on a LangGraph store (a LangGraph API server, ``langgraph dev``: the graph gets the
  server's store), each entry is one item under ``(AUDIT_NS, thread_id)`` /
  ``(OUTBOX_NS, thread_id)`` keyed by its event id, which ``langgraph_sdk``'s
  ``client.store.search_items`` reads.

Entries are written where decisions are read, inside the graph (:func:`on_pause` and
:func:`on_decision`, called by :func:`dynavec_langgraph.interrupt.ask`), so a raw graph,
``langgraph dev`` and the servers record them too; what happens outside a graph (a concurrent
resume refused by the lock) is recorded by the caller with :func:`record`. Every entry has a
deterministic event id: a re-run of the paused tool reads its stored answers again and writes
the same ids, which are written once (a writer reads the trail before appending, and again
after losing its place; an outbox duplicate found later is dropped on reading).

**The chain.** Every entry of the audit trail carries its thread's sequence number ``seq`` (1,
2, ...), the ``hash`` of the entry before it (``prev_hash``; :data:`GENESIS` for the first) and
its own ``hash``: SHA-256 of the entry without ``hash``, as canonical JSON (:func:`entry_hash`).
On a checkpointer entry ``n`` is the pending write of task :data:`ENTRY_TASK` on the checkpoint
``dynavec-audit-<n, 12 digits>`` of :data:`AUDIT_NS`: the savers keep the first write of a
``(checkpoint, task, index)`` and ignore later ones (SQLite ``INSERT OR IGNORE``, PostgreSQL
``ON CONFLICT DO NOTHING``, the in-memory saver, the DynamoDB adapter's conditional put), so
two writers that both try entry ``n`` cannot both get it: the loser reads the winner back and
appends after it. On a store (no conditional put) a writer puts its item, reads the items of
its ``seq`` back and, finding another one, deletes its own and tries again.
:func:`check_thread` reads it all back and names every entry that was edited, deleted,
reordered or inserted; entries written before the chain (no ``hash``) are counted as
unchained, not as tampering.

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
import random
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any, Final, Protocol, TypeGuard

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
from dynavec_langgraph._errors import (
    InvalidInputError,
    StorageError,
    too_deep_text,
    webhook_url_text,
)
from dynavec_langgraph._links import notification_links
from dynavec_langgraph._persistence.kinds import stored_in
from dynavec_langgraph._run_data import SignedIn
from dynavec_langgraph._storable import (
    MAX_NESTING,
    brief,
    check_id,
    check_text,
    lone_surrogate,
    too_deep,
)

__all__ = [
    "APPROVER_KEY",
    "AUDIT_ENV",
    "AUDIT_KEY",
    "AUDIT_NS",
    "AUTHENTICATED_BY",
    "ENTRY_TASK",
    "GENESIS",
    "IN_PROCESS_BACKOFF",
    "IN_PROCESS_TRIES",
    "MAX_BACKOFF",
    "NOTIFY_ENV",
    "NOTIFY_KEY",
    "OUTBOX_NS",
    "SURFACES",
    "SURFACE_KEY",
    "SWEEPER_BACKOFF",
    "TAMPERING",
    "AuditEvent",
    "Delivery",
    "Notifier",
    "ThreadTrail",
    "TrailProblem",
    "TrailReport",
    "aaudit_trail",
    "arecord",
    "audit_refusals",
    "audit_trail",
    "check_items",
    "check_thread",
    "deliver",
    "deliver_soon",
    "enqueue",
    "entry_hash",
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
    "trail_thread_ids",
    "wait_for_deliveries",
    "with_audit",
    "written",
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
ENTRY_TASK: Final = "dynavec_audit"
"""The task id of the pending write holding a chained entry on a checkpointer."""

Notifier = str | Callable[[dict[str, Any]], Any]
"""A webhook URL (the body is POSTed as JSON; any 2xx is delivered) or a callable given the body
(returning is delivered, raising is a failed try)."""

# The graph's checkpointer, as LangGraph passes it to a running node: langgraph 1.2
# (langgraph._internal._constants.CONFIG_KEY_CHECKPOINTER); pinned by tests/test_audit.py.
_CHECKPOINTER_KEY: Final = "__pregel_checkpointer"
_META: Final = "dynavec_entry"
"""The metadata key of an outbox entry (and of an audit entry written before the chain), and
the channel of the pending write holding a chained audit entry."""
_ID: Final = "dynavec_event_id"
_SLOT: Final = "dynavec-audit-"
"""Chained entry ``n`` lives on the checkpoint ``f"{_SLOT}{n:012d}"`` of :data:`AUDIT_NS`."""
_SEQ: Final = "dynavec_seq"
_ATTEMPTS: Final = 50
"""Appends of one entry that lost its place to another writer before giving up."""
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
    decision: Any = None
    comment: str | None = None
    authenticated_by: str | None = None
    seq: int | None = None
    prev_hash: str | None = None
    hash: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """The entry as plain JSON."""
        return asdict(self)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


def event_id(*parts: Any) -> str:
    """A deterministic id for an entry made of ``parts`` (the same parts, the same id)."""
    try:
        text = json.dumps(parts, sort_keys=True, default=repr, ensure_ascii=False)
    except (RecursionError, ValueError):  # a part nested too deeply (or circular) to encode
        text = json.dumps([brief(p, 10_000) for p in parts], ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def entry_hash(entry: Mapping[str, Any]) -> str:
    """The ``hash`` of a chained entry: SHA-256 (hex) of the entry without its ``hash`` key,
    as JSON with sorted keys, no spaces and non-ASCII characters escaped (Python's
    ``json.dumps(entry, sort_keys=True, separators=(",", ":"))``), UTF-8 encoded. It covers
    every field: who, ``authenticated_by``, the decision, ``seq`` and ``prev_hash``.

    Example:
        >>> entry_hash({"seq": 1, "prev_hash": GENESIS, "hash": "ignored"})[:16]
        'c8a95bcfa326d90b'
    """
    body = {k: v for k, v in entry.items() if k != "hash"}
    return hashlib.sha256(_canonical(body)).hexdigest()


def _canonical(entry: Mapping[str, Any]) -> bytes:
    return json.dumps(entry, sort_keys=True, separators=(",", ":")).encode("utf-8")


def _linked(entry: Mapping[str, Any], seq: int, prev_hash: str) -> dict[str, Any]:
    """``entry`` as entry ``seq`` of its chain, after the entry whose hash is ``prev_hash``:
    plain JSON (string keys), with ``seq``, ``prev_hash`` and its ``hash``."""
    body = json.loads(json.dumps(dict(entry), default=repr))
    body.pop("hash", None)
    body["seq"], body["prev_hash"] = seq, prev_hash
    body["hash"] = entry_hash(body)
    return dict(body)


# --- storage: a checkpoint per entry, or a store item -------------------------------------


def _config(thread_id: str, ns: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns}}


def _entry_checkpoint(entry: Mapping[str, Any]) -> tuple[Any, dict[str, Any]]:
    checkpoint = empty_checkpoint()
    metadata: dict[str, Any] = {"source": "update", "step": -1, "parents": {}}
    metadata[_ID] = entry["event_id"]
    metadata[_META] = json.dumps(entry, default=repr, ensure_ascii=False)
    return checkpoint, metadata


def _slot(thread_id: str, seq: int) -> tuple[dict[str, Any], Any, dict[str, Any]]:
    """The config, checkpoint and metadata of the checkpoint holding chained entry ``seq``:
    the same for every writer, so saving it again changes nothing that is read."""
    checkpoint = empty_checkpoint()
    checkpoint["id"] = f"{_SLOT}{seq:012d}"
    metadata: dict[str, Any] = {"source": "update", "step": -1, "parents": {}, _SEQ: seq}
    return _config(thread_id, AUDIT_NS), checkpoint, metadata


def _slot_seq(checkpoint_id: str) -> int | None:
    """The ``seq`` of a chain slot's checkpoint id; ``None`` for any other id."""
    digits = checkpoint_id.removeprefix(_SLOT)
    if digits == checkpoint_id or len(digits) != 12 or not digits.isdigit():
        return None
    return int(digits)


def _from_blob(value: Any) -> dict[str, Any] | None:
    """A stored chained entry (the JSON bytes of the pending write); ``None`` if unreadable."""
    try:
        text = value.decode("utf-8") if isinstance(value, bytes | bytearray) else value
        entry = json.loads(text) if isinstance(text, str) else None
    except ValueError:
        return None
    return entry if isinstance(entry, dict) else None


@dataclass
class _Found:
    """One audit entry as stored: ``where`` (a checkpoint id or a store key), the chain slot
    its place names (``None`` outside the slots) and what it holds (``None``: unreadable)."""

    where: str
    slot: int | None
    entry: dict[str, Any] | None
    edited: bool = False


def _found_in(tuples: Iterable[Any]) -> list[_Found]:
    """The entries of the checkpoints of a trail: those written before the chain (in the
    metadata) and the chained ones (the pending writes of :data:`ENTRY_TASK`)."""
    found: list[_Found] = []
    for t in tuples:
        cid = str(t.config["configurable"].get("checkpoint_id"))
        earlier = _decode(t.metadata)
        if earlier is not None:
            found.append(_Found(cid, None, earlier))
        slot = _slot_seq(cid)
        for task_id, channel, value in t.pending_writes or ():
            if channel == _META:
                place = slot if task_id == ENTRY_TASK else None
                found.append(_Found(cid, place, _from_blob(value)))
    return found


def _is_seq(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _found_items(items: Iterable[tuple[str, Mapping[str, Any]]]) -> list[_Found]:
    """Store items: a chained one is in the slot its own ``seq`` names (a store keeps no
    other order)."""
    found = []
    for key, value in items:
        seq = value.get("seq")
        found.append(_Found(key, seq if _is_seq(seq) else None, dict(value)))
    return found


def _head(found: Iterable[_Found]) -> tuple[int, str]:
    """``(seq, hash)`` of the last chained entry in its slot (``(0, GENESIS)``: none)."""
    seq, head = 0, GENESIS
    for f in found:
        e = f.entry
        if e is None or f.slot is None or e.get("seq") != f.slot:
            continue
        if f.slot > seq and isinstance(e.get("hash"), str):
            seq, head = f.slot, str(e["hash"])
    return seq, head


def _with_id(found: Iterable[_Found], eid: str) -> dict[str, Any] | None:
    for f in found:
        if f.entry is not None and f.entry.get("event_id") == eid:
            return f.entry
    return None


def _won(claimed: Any, linked: Mapping[str, Any]) -> bool:
    """Whether the checkpoint tuple of a slot holds ``linked`` (this writer got the slot):
    the same hash, which covers all of it."""
    for task_id, channel, value in getattr(claimed, "pending_writes", None) or ():
        if task_id == ENTRY_TASK and channel == _META:
            return bool((_from_blob(value) or {}).get("hash") == linked["hash"])
    return False


def _lost(thread_id: str) -> StorageError:
    return StorageError(
        f"could not append to the audit trail of thread {thread_id!r}: other writers kept "
        f"taking its next entry ({_ATTEMPTS} attempts). Try again",
        thread_id,
        [],
    )


def _pause(attempt: int) -> float:
    """Seconds to wait before attempt ``attempt`` of an append (random, growing)."""
    return min(0.002 * 2**attempt, 0.1) * random.random() if attempt else 0.0


_TURNS: Final[dict[tuple[int, str], tuple[threading.RLock, int]]] = {}
"""The appends of one process to one trail take turns, so they never race each other for a
slot (other processes are kept apart by the storage): a lock of that trail alone (the saver
that stores it and the thread) and how many appends use it, dropped with the last one. Never
one lock for several trails: an append runs saver methods, which may append to another trail
(a wrapper that records), and two trails sharing a lock then made the thread wait for itself
(with 32 shared locks, 1 time in 32). Reentrant, for a saver that appends to its own trail
while claiming a slot of it (the inner entry takes the slot; the outer one goes after it)."""
_TURNS_GUARD: Final = threading.Lock()
"""Guards :data:`_TURNS`; held for a dict update only, never while waiting for a turn."""


@contextmanager
def _turn(target: Any, thread_id: str) -> Iterator[None]:
    key = (id(stored_in(target)), thread_id)
    with _TURNS_GUARD:
        lock, users = _TURNS.get(key) or (threading.RLock(), 0)
        _TURNS[key] = (lock, users + 1)
    try:
        with lock:
            yield
    finally:
        with _TURNS_GUARD:
            lock, users = _TURNS[key]
            if users > 1:
                _TURNS[key] = (lock, users - 1)
            else:
                del _TURNS[key]


def _append(saver: Any, thread_id: str, entry: Mapping[str, Any]) -> dict[str, Any]:
    """Chain ``entry`` to the end of ``thread_id``'s trail in ``saver`` (once per event id)
    and return it as stored. The slot of the next entry is claimed with a pending write,
    which the savers keep first-come: a writer that lost it reads the winner and goes on."""
    eid = str(entry["event_id"])
    with _turn(saver, thread_id):
        for attempt in range(_ATTEMPTS):
            if attempt:
                time.sleep(_pause(attempt))
            found = _found_in(saver.list(_config(thread_id, AUDIT_NS)))
            there = _with_id(found, eid)
            if there is not None:
                return there
            seq, prev = _head(found)
            linked = _linked(entry, seq + 1, prev)
            config, checkpoint, metadata = _slot(thread_id, seq + 1)
            stored = saver.put(config, checkpoint, metadata, {})
            saver.put_writes(stored, [(_META, _canonical(linked))], ENTRY_TASK)
            if _won(saver.get_tuple(stored), linked):
                return linked
    raise _lost(thread_id)


async def _aappend(saver: Any, thread_id: str, entry: Mapping[str, Any]) -> dict[str, Any]:
    """Async twin of :func:`_append` (the storage keeps writers apart)."""
    eid = str(entry["event_id"])
    for attempt in range(_ATTEMPTS):
        await asyncio.sleep(_pause(attempt))
        found = _found_in([t async for t in saver.alist(_config(thread_id, AUDIT_NS))])
        there = _with_id(found, eid)
        if there is not None:
            return there
        seq, prev = _head(found)
        linked = _linked(entry, seq + 1, prev)
        config, checkpoint, metadata = _slot(thread_id, seq + 1)
        stored = await saver.aput(config, checkpoint, metadata, {})
        await saver.aput_writes(stored, [(_META, _canonical(linked))], ENTRY_TASK)
        if _won(await saver.aget_tuple(stored), linked):
            return linked
    raise _lost(thread_id)


class Items(Protocol):
    """The items of one thread's trail in a store: a LangGraph ``BaseStore``
    (:class:`_StoreItems`) or a server's store through ``langgraph_sdk``
    (:mod:`dynavec_langgraph._remote_audit`)."""

    def values(self) -> list[tuple[str, Mapping[str, Any]]]:
        """Every item, as ``(key, value)``."""
        ...

    def with_seq(self, seq: int) -> list[str]:
        """The keys of the items whose ``seq`` is ``seq``."""
        ...

    def put(self, key: str, value: dict[str, Any]) -> None: ...

    def delete(self, key: str) -> None: ...


_PAGE: Final = 100


class _StoreItems:
    """:class:`Items` of ``(ns, thread_id)`` in a LangGraph store."""

    def __init__(self, store: BaseStore, ns: str, thread_id: str) -> None:
        self.store, self.ns = store, (ns, thread_id)

    def values(self) -> list[tuple[str, Mapping[str, Any]]]:
        found: list[tuple[str, Mapping[str, Any]]] = []
        while True:
            page = self.store.search(self.ns, limit=_PAGE, offset=len(found))
            found += [(item.key, item.value) for item in page]
            if len(page) < _PAGE:
                return found

    def with_seq(self, seq: int) -> list[str]:
        return [i.key for i in self.store.search(self.ns, filter={"seq": seq}, limit=_PAGE)]

    def put(self, key: str, value: dict[str, Any]) -> None:
        self.store.put(self.ns, key, value, index=False)

    def delete(self, key: str) -> None:
        self.store.delete(self.ns, key)


def append_item(items: Items, thread_id: str, entry: Mapping[str, Any]) -> dict[str, Any]:
    """Chain ``entry`` to the end of a trail kept in a store (once per event id) and return
    it as stored. A store has no conditional put: the writer puts its item, reads the items
    of its ``seq`` back and, finding another, deletes its own and tries again (of two writers
    that overlap, at least the later one sees the other)."""
    eid = str(entry["event_id"])
    for attempt in range(_ATTEMPTS):
        if attempt:  # (no sleep(0) first: on a server's event loop that is a blocking call)
            time.sleep(_pause(attempt))
        found = _found_items(items.values())
        there = _with_id(found, eid)
        if there is not None:
            return there
        seq, prev = _head(found)
        linked = _linked(entry, seq + 1, prev)
        items.put(eid, linked)
        if not [k for k in items.with_seq(seq + 1) if k != eid]:
            return linked
        items.delete(eid)
    raise _lost(thread_id)


async def _aappend_item(store: BaseStore, thread_id: str, entry: Mapping[str, Any]) -> Any:
    """Async twin of :func:`append_item` on a LangGraph store."""
    eid, ns = str(entry["event_id"]), (AUDIT_NS, thread_id)
    for attempt in range(_ATTEMPTS):
        await asyncio.sleep(_pause(attempt))
        found = _found_items(await _asearch_all(store, ns))
        there = _with_id(found, eid)
        if there is not None:
            return there
        seq, prev = _head(found)
        linked = _linked(entry, seq + 1, prev)
        await store.aput(ns, eid, linked, index=False)
        rivals = await store.asearch(ns, filter={"seq": seq + 1}, limit=_PAGE)
        if not [i for i in rivals if i.key != eid]:
            return linked
        await store.adelete(ns, eid)
    raise _lost(thread_id)


async def _asearch_all(store: BaseStore, ns: tuple[str, str]) -> list[tuple[str, Any]]:
    found: list[tuple[str, Any]] = []
    while True:
        page = await store.asearch(ns, limit=_PAGE, offset=len(found))
        found += [(item.key, item.value) for item in page]
        if len(page) < _PAGE:
            return found


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
_last_task: dict[tuple[int, str], asyncio.Task[Any]] = {}
"""The latest write task of each (saver, thread): the next one waits for it, so a thread's
entries are chained in the order they were recorded."""


def _in_task(
    loop: asyncio.AbstractEventLoop, target: Any, ns: str, thread_id: str, entry: dict[str, Any]
) -> None:
    """Write ``entry`` from a task of ``loop``, after the thread's earlier ones."""
    key = (id(target), thread_id)
    before = _last_task.get(key)

    async def write() -> None:
        if before is not None and not before.done():
            await asyncio.wait({before})
        await _awrite(target, ns, thread_id, entry)

    task = loop.create_task(write())
    _pending_tasks.add(task)
    _last_task[key] = task

    def done(finished: asyncio.Task[Any]) -> None:
        _pending_tasks.discard(finished)
        if _last_task.get(key) is finished:
            del _last_task[key]

    task.add_done_callback(done)


def _exists(target: Any, ns: str, thread_id: str, eid: str) -> bool:
    return bool(list(target.list(_config(thread_id, ns), filter={_ID: eid}, limit=1)))


def _write(target: Any, ns: str, thread_id: str, entry: dict[str, Any]) -> dict[str, Any] | None:
    """Append ``entry`` (once per event id) to ``target``'s ``ns`` of ``thread_id``, chained
    in the audit trail; the entry as stored (``None``: a task of the saver's loop writes it)."""
    eid = str(entry["event_id"])
    if isinstance(target, BaseStore):
        try:
            if ns == AUDIT_NS:
                return append_item(_StoreItems(target, ns, thread_id), thread_id, entry)
            if target.get((ns, thread_id), eid) is None:
                target.put((ns, thread_id), eid, entry, index=False)
        except asyncio.InvalidStateError:
            # a LangGraph API server's store refuses sync calls on its event loop (an async
            # tool's pause runs there), before doing anything: a task of the loop writes it
            _in_task(asyncio.get_running_loop(), target, ns, thread_id, entry)
            return None
        return entry
    loop = _on_own_loop(target)
    if loop is not None:  # an async saver on its own loop: write it from a task
        _in_task(loop, target, ns, thread_id, entry)
        return None
    if ns == AUDIT_NS:
        return _append(target, thread_id, entry)
    if not _exists(target, ns, thread_id, eid):
        checkpoint, metadata = _entry_checkpoint(entry)
        target.put(_config(thread_id, ns), checkpoint, metadata, {})
    return entry


async def _awrite(target: Any, ns: str, thread_id: str, entry: dict[str, Any]) -> dict[str, Any]:
    eid = str(entry["event_id"])
    if isinstance(target, BaseStore):
        if ns == AUDIT_NS:
            return dict(await _aappend_item(target, thread_id, entry))
        if await target.aget((ns, thread_id), eid) is None:
            await target.aput((ns, thread_id), eid, entry, index=False)
        return entry
    if ns == AUDIT_NS:
        return await _aappend(target, thread_id, entry)
    found = [t async for t in target.alist(_config(thread_id, ns), filter={_ID: eid}, limit=1)]
    if not found:
        checkpoint, metadata = _entry_checkpoint(entry)
        await target.aput(_config(thread_id, ns), checkpoint, metadata, {})
    return entry


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
    """Oldest first: the entries written before the chain by time, then the chain by
    ``seq``; an event id found twice is kept once, at its first place."""

    def place(entry: Mapping[str, Any]) -> tuple[int, str, int]:
        seq = entry.get("seq")
        return (1, "", seq) if _is_seq(seq) else (0, str(entry.get("at", "")), 0)

    seen: dict[str, dict[str, Any]] = {}
    for entry in sorted(entries, key=place):
        seen.setdefault(str(entry.get("event_id")), entry)
    return list(seen.values())


def _stored(target: Any, ns: str, thread_id: str) -> list[_Found]:
    if isinstance(target, BaseStore):
        return _found_items(_StoreItems(target, ns, thread_id).values())
    return _found_in(target.list(_config(thread_id, ns)))


async def _astored(target: Any, ns: str, thread_id: str) -> list[_Found]:
    if isinstance(target, BaseStore):
        return _found_items(await _asearch_all(target, (ns, thread_id)))
    return _found_in([t async for t in target.alist(_config(thread_id, ns))])


def _read(target: Any, ns: str, thread_id: str) -> list[dict[str, Any]]:
    return ordered(f.entry for f in _stored(target, ns, thread_id) if f.entry is not None)


async def _aread(target: Any, ns: str, thread_id: str) -> list[dict[str, Any]]:
    found = await _astored(target, ns, thread_id)
    return ordered(f.entry for f in found if f.entry is not None)


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
    authenticated_by: str | None = None,
) -> AuditEvent:
    """An entry (not written yet); ``authenticated_by`` defaults to ``explicit`` when it
    names someone (``who``), else ``None``."""
    if surface not in SURFACES:
        raise ValueError(f"surface={surface!r}: use one of {', '.join(SURFACES)}")
    if authenticated_by is None and who is not None:
        authenticated_by = "explicit"
    if authenticated_by is not None and authenticated_by not in AUTHENTICATED_BY:
        raise ValueError(
            f"authenticated_by={authenticated_by!r}: use one of {', '.join(AUTHENTICATED_BY)} "
            "(or None when the entry names nobody)"
        )
    eid = event_id_ or event_id(
        "audit", thread_id, kind, node_id, interrupt_id, outcome, decision, time.time_ns()
    )
    return AuditEvent(
        event_id=eid,
        thread_id=thread_id,
        kind=kind,
        at=at or _now(),
        surface=surface,
        outcome=_escaped(outcome) or "",
        who=_escaped(who),
        node_id=_escaped(node_id),
        interrupt_id=interrupt_id,
        tool_call_id=_escaped(tool_call_id),
        digest=digest,
        decision=_jsonable(decision),
        comment=_escaped(comment),
        authenticated_by=authenticated_by,
    )


def _jsonable(value: Any) -> Any:
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


def _check_entry(thread_id: str, fields: Mapping[str, Any]) -> None:
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
    authenticated_by: str | None = None,
) -> AuditEvent:
    """Append one entry to ``thread_id``'s audit trail in ``target`` and return it as
    stored (chained: with its ``seq``, ``prev_hash`` and ``hash``).

    For features that settle a pause outside the graph (expiry, a refused approver, an
    in-doubt call, a refused concurrent resume). ``target`` is the thread's checkpointer (or
    the server's store). Give a deterministic ``event_id`` when the same settlement may be
    recorded again (a retried sweeper): it is written once (the entry already there is
    returned). ``authenticated_by`` says how ``who`` was identified (:data:`AUTHENTICATED_BY`;
    default ``explicit`` when ``who`` is given).

    Raises:
        TypeError: ``target`` is no checkpointer or store.
        ValueError: an unknown ``surface`` or ``authenticated_by``.
        InvalidInputError: a value no saver stores as it is (a lone surrogate, a NUL in the
            thread id, a ``decision`` nested more than :data:`MAX_NESTING` levels deep);
            nothing was written.
        StorageError: other writers kept taking the trail's next entry.
    """
    _check_target(target)
    _check_entry(
        thread_id,
        _given(
            kind=kind,
            outcome=outcome,
            who=who,
            node_id=node_id,
            interrupt_id=interrupt_id,
            tool_call_id=tool_call_id,
            digest=digest,
            decision=decision,
            comment=comment,
            event_id=event_id,
        ),
    )
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
        authenticated_by=authenticated_by,
    )
    stored = _write(target, AUDIT_NS, thread_id, event.as_dict())
    return event if stored is None else _event(stored)


async def arecord(target: Any, thread_id: str, kind: str, **fields: Any) -> AuditEvent:
    """Async twin of :func:`record` (for async savers)."""
    _check_target(target)
    _check_entry(thread_id, _given(kind=kind, **fields))
    eid = fields.pop("event_id", None)
    event = make_event(thread_id, kind, event_id_=eid, **fields)
    return _event(await _awrite(target, AUDIT_NS, thread_id, event.as_dict()))


def _event(entry: Mapping[str, Any]) -> AuditEvent:
    names = AuditEvent.__dataclass_fields__
    return AuditEvent(**{k: v for k, v in entry.items() if k in names})


def _given(**fields: Any) -> dict[str, Any]:
    """The fields a caller gave (not ``None``), to check them (:func:`_check_entry`)."""
    return {k: v for k, v in fields.items() if v is not None}


def events_of(entries: Sequence[dict[str, Any]]) -> list[AuditEvent]:
    return [_event(e) for e in entries]


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
    check_id(thread_id, "thread_id")
    return events_of(_read(target, AUDIT_NS, thread_id))


async def aaudit_trail(target: Any, thread_id: str) -> list[AuditEvent]:
    """Async twin of :func:`audit_trail`."""
    _check_target(target)
    check_id(thread_id, "thread_id")
    return events_of(await _aread(target, AUDIT_NS, thread_id))


# --- verifying the chain -------------------------------------------------------------------


@dataclass(frozen=True)
class TrailProblem:
    """One sign of tampering in a thread's trail.

    ``kind`` is one of :data:`TAMPERING`: ``edited`` (an entry's content does not match its
    hash, or its link to the entry before it was rewritten), ``deleted`` (entries missing
    from the middle or the start of the chain: ``seq`` is the first missing one), ``reordered``
    (an entry stored in another entry's place, or linked to another entry than the one before
    it), ``inserted`` (an entry that is not part of the chain: a second entry for one place, an
    entry of another thread, one stored outside the chain, or one without a hash written after
    the chain began). ``seq`` and ``event_id`` name the entry (``event_id`` is ``None`` for
    deleted ones); ``detail`` says what is wrong.
    """

    thread_id: str
    kind: str
    seq: int | None
    event_id: str | None
    detail: str

    def __str__(self) -> str:
        where = f"entry {self.seq}" if self.seq is not None else "an entry"
        which = f" (event {self.event_id})" if self.event_id else ""
        return f"thread {self.thread_id!r}, {where}{which}: {self.kind}: {self.detail}"

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ThreadTrail:
    """What :func:`check_thread` found in one thread's trail: how many entries are chained and
    how many were written before the chain (``unchained``), the last entry of the chain
    (``head_seq``, ``head_hash``: keep them elsewhere to notice later that entries were cut
    off the end) and the problems."""

    thread_id: str
    chained: int
    unchained: int
    head_seq: int | None
    head_hash: str | None
    problems: tuple[TrailProblem, ...] = ()

    @property
    def ok(self) -> bool:
        """Whether nothing was found wrong."""
        return not self.problems

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["ok"] = self.ok
        return out


@dataclass(frozen=True)
class TrailReport:
    """What ``verify`` found in every trail it read (one :class:`ThreadTrail` a thread)."""

    threads: tuple[ThreadTrail, ...]

    @property
    def ok(self) -> bool:
        """Whether no trail shows tampering."""
        return all(t.ok for t in self.threads)

    @property
    def problems(self) -> list[TrailProblem]:
        return [p for t in self.threads for p in t.problems]

    def as_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "threads": [t.as_dict() for t in self.threads]}


def _chain_fields_ok(entry: Mapping[str, Any]) -> bool:
    return (
        _is_seq(entry.get("seq"))
        and isinstance(entry.get("prev_hash"), str)
        and isinstance(entry.get("hash"), str)
    )


def _rank(f: _Found, seq: int, linking: set[str], prev_hash: str) -> tuple[bool, ...]:
    """How surely ``f`` is the chain's entry ``seq`` among several claiming it: in its place,
    linked to by the next entry, linked to the entry before, content matching its hash."""
    e = f.entry or {}
    return (f.slot == seq, e["hash"] in linking, e["prev_hash"] == prev_hash, not f.edited)


def _check(thread_id: str, found: Sequence[_Found]) -> ThreadTrail:
    """The verdict on one thread's stored entries (see :class:`TrailProblem`)."""
    problems: list[TrailProblem] = []

    def report(kind: str, f: _Found | None, detail: str, seq: int | None = None) -> None:
        entry = f.entry if f is not None and f.entry is not None else {}
        eid = entry.get("event_id")
        at = seq if seq is not None else entry.get("seq") if _is_seq(entry.get("seq")) else None
        at = at if at is not None or f is None else f.slot
        problems.append(TrailProblem(thread_id, kind, at, str(eid) if eid else None, detail))

    chained: list[_Found] = []
    earlier: list[_Found] = []
    for f in found:
        if f.entry is None:
            report("edited", f, f"what is stored at {f.where!r} is no readable entry")
        elif f.slot is None and not {"seq", "prev_hash", "hash"} & set(f.entry):
            earlier.append(f)
        elif not _chain_fields_ok(f.entry):
            report("edited", f, "its seq, prev_hash or hash is missing or not valid")
        else:
            chained.append(f)
    for f in chained:
        e = f.entry or {}
        seq = int(e["seq"])
        if entry_hash(e) != e["hash"]:
            f.edited = True
            report("edited", f, "its content does not match its hash")
        if e.get("thread_id") != thread_id:
            report("inserted", f, f"it is an entry of thread {e.get('thread_id')!r}")
        if f.slot is None:
            report("inserted", f, f"it is stored outside the chain (at {f.where!r})")
        elif f.slot != seq:
            report("reordered", f, f"it is stored as entry {f.slot}")
    by_seq: dict[int, list[_Found]] = {}
    for f in chained:
        by_seq.setdefault(int((f.entry or {})["seq"]), []).append(f)
    by_hash = {str((f.entry or {})["hash"]): f for f in chained}
    prev_seq, prev_hash = 0, GENESIS
    for seq in sorted(by_seq):
        linking = {str((g.entry or {})["prev_hash"]) for g in by_seq.get(seq + 1, [])}
        group = by_seq[seq]
        ranks = [(_rank(g, seq, linking, prev_hash), -i) for i, g in enumerate(group)]
        first, *others = [group[i] for i in sorted(range(len(group)), key=ranks.__getitem__)[::-1]]
        e = first.entry or {}
        for other in others:
            report(
                "inserted",
                other,
                f"a second entry {seq}; the chain goes on from event {e.get('event_id')}",
            )
        if seq > prev_seq + 1:
            gap = f"{prev_seq + 1}" if seq == prev_seq + 2 else f"{prev_seq + 1} to {seq - 1}"
            after = f"entry {prev_seq} is followed by" if prev_seq else "the chain starts at"
            report(
                "deleted",
                None,
                f"entr{'y' if seq == prev_seq + 2 else 'ies'} {gap} of the chain "
                f"{'is' if seq == prev_seq + 2 else 'are'} missing ({after} entry {seq}, event "
                f"{e.get('event_id')})",
                seq=prev_seq + 1,
            )
        elif e["prev_hash"] != prev_hash:
            linked = by_hash.get(str(e["prev_hash"]))
            if linked is not None and linked.entry is not None and linked.entry["seq"] != prev_seq:
                report(
                    "reordered",
                    first,
                    f"it follows entry {linked.entry['seq']}, not entry {prev_seq}",
                )
            else:
                report(
                    "edited",
                    first,
                    f"its link to entry {prev_seq} is broken: one of the two "
                    "was rewritten (its hash recomputed) or replaced",
                )
        prev_seq, prev_hash = seq, str(e["hash"])
    late = []
    if chained:
        began = min(str((f.entry or {}).get("at", "")) for f in chained)
        late = [f for f in earlier if str((f.entry or {}).get("at", "")) > began]
        for f in late:
            report(
                "inserted",
                f,
                "it has no hash but was written after the chain began "
                f"({began}): forged, or written by a version of the package before it",
            )
    return ThreadTrail(
        thread_id,
        chained=len(chained),
        unchained=len(earlier) - len(late),
        head_seq=prev_seq if chained else None,
        head_hash=prev_hash if chained else None,
        problems=tuple(problems),
    )


def check_thread(target: Any, thread_id: str) -> ThreadTrail:
    """Verify the chain of ``thread_id``'s trail in ``target`` (a checkpointer or a store):
    every entry's hash, its link to the entry before it, its place; read only.

    Raises:
        TypeError: ``target`` is no checkpointer or store.
    """
    _check_target(target)
    return _check(thread_id, _stored(target, AUDIT_NS, thread_id))


def check_items(items: Items, thread_id: str) -> ThreadTrail:
    """:func:`check_thread` of a trail read as store items (a server's, through
    ``langgraph_sdk``: :mod:`dynavec_langgraph._remote_audit`)."""
    return _check(thread_id, _found_items(items.values()))


def trail_thread_ids(target: Any) -> list[str]:
    """The threads of ``target`` that have an audit trail (a store's namespaces, a dynavec
    checkpointer's threads, or the threads of :data:`AUDIT_NS` in ``target.list(None)``)."""
    _check_target(target)
    if isinstance(target, BaseStore):
        spaces: list[tuple[str, ...]] = []
        while True:
            page = target.list_namespaces(
                prefix=(AUDIT_NS,), max_depth=2, limit=_PAGE, offset=len(spaces)
            )
            spaces += page
            if len(page) < _PAGE:
                return sorted({ns[1] for ns in spaces if len(ns) == 2})
    listing = getattr(getattr(stored_in(target), "checkpointer", None), "threads", None)
    if callable(listing):  # a dynavec checkpointer that lists its threads (DynamoDB)
        return sorted(str(t) for t in listing())
    seen = set()
    for t in target.list(None):
        configurable = t.config.get("configurable") or {}
        if configurable.get("checkpoint_ns") == AUDIT_NS:
            seen.add(str(configurable["thread_id"]))
    return sorted(seen)


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
    signed_in: str | None = None
    """The user a LangGraph API server with auth signed in for the run (its identity), when
    that user is who answers (:attr:`~dynavec_langgraph._run_data.SignedIn.proves_approver`)."""


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
    user = SignedIn.of(conf)
    return _Setting(
        target,
        str(conf["thread_id"]),
        str(conf.get("checkpoint_ns", "")),
        audit,
        notify,
        str(surface),
        str(who) if who is not None else None,
        user.name if user is not None and user.proves_approver else None,
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
    server with auth signed in) or ``"explicit"`` (named in the answer or the run's config),
    stored as the entry's ``authenticated_by``. A plain pause names none: on a server with
    auth its answer is the signed-in user's (``"server"``; the first run that reads an answer
    is the one that gave it, and a replay writes the same event id, kept once), else the name
    the answer or the config carries (``"explicit"``)."""
    setting = _current()
    if setting is None:
        return
    if who is None and setting.signed_in is not None:
        who, authenticated_by = setting.signed_in, "server"
    fields = _pause_fields(value)
    interrupt_id = mirrored_interrupt_id(setting.ns, index)
    default_kind, default_outcome = ("refused", refused) if refused else ("decision", "accepted")
    kind, outcome = kind or default_kind, outcome or default_outcome
    eid = event_id("decision", setting.thread_id, setting.ns, index, fields["node_id"], raw)
    if kind == "expired" and setting.notify is not None:  # approvers hear of an expiry too
        body = notification_body(setting.thread_id, kind, value, interrupt_id, event_id=eid)
        _write(setting.target, OUTBOX_NS, setting.thread_id, _outbox_entry(body))
        _notify(setting)
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
        authenticated_by=authenticated_by if who else None,
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
        _notify(setting)


def _notify(setting: _Setting) -> None:
    """Start sending the thread's outbox, once the entries a task of the running loop still
    writes (:func:`_write` on a server's event loop) are written."""
    assert setting.notify is not None
    task = _last_task.get((id(setting.target), setting.thread_id))
    if task is None or task.done():
        deliver_soon(setting.target, setting.thread_id, setting.notify)
        return
    target, thread_id, notify = setting.target, setting.thread_id, setting.notify
    task.add_done_callback(lambda _: deliver_soon(target, thread_id, notify))


async def written() -> None:
    """Wait until the running graph run's audit and outbox entries that tasks of this event
    loop write (:func:`_write`, on a LangGraph API server's loop) are written: the tool node
    awaits it after an async tool, so the run ends after its trail. A no-op elsewhere."""
    setting = _current()
    if setting is None:
        return
    task = _last_task.get((id(setting.target), setting.thread_id))
    if task is not None and not task.done():
        await asyncio.wait({task})  # each task waits for the one before: the last ends last


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
    links = notification_links(thread_id, value) if kind in ("paused", "reasked") else None
    return {
        **(links or {}),
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
    at = body.get("at") or _now()
    return {"event_id": body["event_id"], "type": "event", "at": at, "body": dict(body)}


def enqueue(target: Any, thread_id: str, body: Mapping[str, Any]) -> None:
    """Put one notification ``body`` (with its ``event_id``) in ``thread_id``'s outbox, for
    features that notify outside the graph (an expiry settled by a sweeper).

    Raises:
        TypeError: ``target`` is no checkpointer or store.
        InvalidInputError: ``body`` is no mapping, has no ``event_id`` (a non-empty string,
            the same for every retry of one notification: :func:`event_id` builds one), or
            holds what no saver stores as it is (as :func:`record`); nothing was written.
    """
    _check_target(target)
    if not isinstance(body, Mapping):
        raise InvalidInputError(
            f"body={brief(body, 80)}: pass the notification as a dict with its 'event_id' "
            "(notification_body(...) builds one); nothing was written",
            "body",
        )
    if not isinstance(body.get("event_id"), str) or not body["event_id"]:
        raise InvalidInputError(
            f"body['event_id']={brief(body.get('event_id'), 80)}: a notification needs its "
            "event_id, a non-empty string that is the same for every retry of it (the "
            "receiver drops duplicates by it; event_id(...) builds one); nothing was written",
            "body['event_id']",
        )
    _check_entry(thread_id, {"body": dict(body)})
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
    check_id(thread_id, "thread_id")
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
