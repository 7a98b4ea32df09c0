"""Where the entries are kept: a checkpoint per entry in the thread's own checkpointer (the
chained audit entries in numbered slots a writer claims first-come), or an item of a LangGraph
store; written once per event id, read back oldest first."""

from __future__ import annotations

import asyncio
import json
import random
import threading
import time
from collections.abc import Generator, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final, Protocol, TypeGuard, cast

from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple, empty_checkpoint
from langgraph.store.base import BaseStore

from dynavec_langgraph._audit.entries import GENESIS, canonical, entry_hash
from dynavec_langgraph._errors import StorageError
from dynavec_langgraph._names import (
    AUDIT_NS,
    AUDIT_SLOT_PREFIX,
    ENTRY_META_KEY,
    ENTRY_TASK,
    EVENT_ID_KEY,
    SEQ_KEY,
)
from dynavec_langgraph._persistence.kinds import stored_in

if TYPE_CHECKING:
    from typing import TypeAlias

    from langchain_core.runnables import RunnableConfig
    from langgraph.checkpoint.base import Checkpoint, CheckpointMetadata

    from dynavec_langgraph._types import JSONMapping, JSONObject, Saver

    Target: TypeAlias = Saver | BaseStore
    """Where a trail is kept: the thread's checkpointer, or a store (a server's)."""

__all__ = [
    "PAGE",
    "Found",
    "Items",
    "append_item",
    "aread",
    "awrite",
    "check_target",
    "found_items",
    "is_seq",
    "last_task",
    "ordered",
    "read",
    "stored",
    "write",
]

_ATTEMPTS: Final = 50
"""Appends of one entry that lost its place to another writer before giving up."""


def _linked(entry: JSONMapping, seq: int, prev_hash: str) -> JSONObject:
    """``entry`` as entry ``seq`` of its chain, after the entry whose hash is ``prev_hash``:
    plain JSON (string keys), with ``seq``, ``prev_hash`` and its ``hash``."""
    body = json.loads(json.dumps(dict(entry), default=repr))
    body.pop("hash", None)
    body["seq"], body["prev_hash"] = seq, prev_hash
    body["hash"] = entry_hash(body)
    return dict(body)


def _config(thread_id: str, ns: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns}}


def _entry_checkpoint(entry: JSONMapping) -> tuple[Checkpoint, CheckpointMetadata]:
    checkpoint = empty_checkpoint()
    metadata: JSONObject = {"source": "update", "step": -1, "parents": {}}
    metadata[EVENT_ID_KEY] = entry["event_id"]
    metadata[ENTRY_META_KEY] = json.dumps(entry, default=repr, ensure_ascii=False)
    return checkpoint, cast("CheckpointMetadata", metadata)  # its own keys too: kept as given


def _slot(thread_id: str, seq: int) -> tuple[RunnableConfig, Checkpoint, CheckpointMetadata]:
    """The config, checkpoint and metadata of the checkpoint holding chained entry ``seq``:
    the same for every writer, so saving it again changes nothing that is read."""
    checkpoint = empty_checkpoint()
    checkpoint["id"] = f"{AUDIT_SLOT_PREFIX}{seq:012d}"
    metadata: JSONObject = {"source": "update", "step": -1, "parents": {}, SEQ_KEY: seq}
    return _config(thread_id, AUDIT_NS), checkpoint, cast("CheckpointMetadata", metadata)


def _slot_seq(checkpoint_id: str) -> int | None:
    """The ``seq`` of a chain slot's checkpoint id; ``None`` for any other id."""
    digits = checkpoint_id.removeprefix(AUDIT_SLOT_PREFIX)
    if digits == checkpoint_id or len(digits) != 12 or not digits.isdigit():
        return None
    return int(digits)


def _from_blob(value: object) -> JSONObject | None:
    """A stored chained entry (the JSON bytes of the pending write); ``None`` if unreadable."""
    try:
        text = value.decode("utf-8") if isinstance(value, bytes | bytearray) else value
        entry = json.loads(text) if isinstance(text, str) else None
    except ValueError:
        return None
    return entry if isinstance(entry, dict) else None


@dataclass
class Found:
    """One audit entry as stored: ``where`` (a checkpoint id or a store key), the chain slot
    its place names (``None`` outside the slots) and what it holds (``None``: unreadable)."""

    where: str
    slot: int | None
    entry: JSONObject | None
    edited: bool = False


def _found_in(tuples: Iterable[CheckpointTuple]) -> list[Found]:
    """The entries of the checkpoints of a trail: those written before the chain (in the
    metadata) and the chained ones (the pending writes of :data:`ENTRY_TASK`)."""
    found: list[Found] = []
    for t in tuples:
        cid = str(t.config["configurable"].get("checkpoint_id"))
        earlier = _decode(t.metadata)
        if earlier is not None:
            found.append(Found(cid, None, earlier))
        slot = _slot_seq(cid)
        for task_id, channel, value in t.pending_writes or ():
            if channel == ENTRY_META_KEY:
                place = slot if task_id == ENTRY_TASK else None
                found.append(Found(cid, place, _from_blob(value)))
    return found


def is_seq(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def found_items(items: Iterable[tuple[str, JSONMapping]]) -> list[Found]:
    """Store items: a chained one is in the slot its own ``seq`` names (a store keeps no
    other order)."""
    found = []
    for key, value in items:
        seq = value.get("seq")
        found.append(Found(key, seq if is_seq(seq) else None, dict(value)))
    return found


def _head(found: Iterable[Found]) -> tuple[int, str]:
    """``(seq, hash)`` of the last chained entry in its slot (``(0, GENESIS)``: none)."""
    seq, head = 0, GENESIS
    for f in found:
        e = f.entry
        if e is None or f.slot is None or e.get("seq") != f.slot:
            continue
        if f.slot > seq and isinstance(e.get("hash"), str):
            seq, head = f.slot, str(e["hash"])
    return seq, head


def _with_id(found: Iterable[Found], eid: str) -> JSONObject | None:
    for f in found:
        if f.entry is not None and f.entry.get("event_id") == eid:
            return f.entry
    return None


def _won(claimed: CheckpointTuple | None, linked: JSONMapping) -> bool:
    """Whether the checkpoint tuple of a slot holds ``linked`` (this writer got the slot):
    the same hash, which covers all of it."""
    for task_id, channel, value in getattr(claimed, "pending_writes", None) or ():
        if task_id == ENTRY_TASK and channel == ENTRY_META_KEY:
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
def _turn(target: Target, thread_id: str) -> Iterator[None]:
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


@dataclass
class _Read:
    """A step of an append: wait ``pause`` seconds, then read the trail (into ``found``)."""

    pause: float
    found: list[Found] = field(default_factory=list)


@dataclass
class _Claim:
    """A step of an append: claim slot ``seq`` of the trail for ``entry`` (``won``: got it)."""

    seq: int
    entry: JSONObject
    won: bool = False


def _appending(thread_id: str, entry: JSONMapping) -> Generator[_Read | _Claim, None, JSONObject]:
    """The one rule of an append, without its I/O (the sync and async storages each run its
    steps): chain ``entry`` to the end of ``thread_id``'s trail, once per event id (an entry
    already there is returned); a writer that lost the next slot reads the winner and goes on.

    Raises:
        StorageError: other writers kept taking the next slot (:data:`_ATTEMPTS` tries).
    """
    eid = str(entry["event_id"])
    for attempt in range(_ATTEMPTS):
        yield (read := _Read(_pause(attempt)))
        there = _with_id(read.found, eid)
        if there is not None:
            return there
        seq, prev = _head(read.found)
        yield (claim := _Claim(seq + 1, _linked(entry, seq + 1, prev)))
        if claim.won:
            return claim.entry
    raise _lost(thread_id)


class _Plan:
    """The steps of one append (:func:`_appending`), for a storage to run; then the entry as
    stored (:attr:`stored`)."""

    stored: JSONObject

    def __init__(self, thread_id: str, entry: JSONMapping) -> None:
        self.thread_id, self.entry = thread_id, entry

    def __iter__(self) -> Iterator[_Read | _Claim]:
        self.stored = yield from _appending(self.thread_id, self.entry)


class _Trail(Protocol):
    """A trail's storage as an append reads and claims it, with sync calls."""

    def found(self) -> list[Found]: ...

    def claim(self, seq: int, entry: JSONObject) -> bool: ...


class _ATrail(Protocol):
    """Async twin of :class:`_Trail`."""

    async def found(self) -> list[Found]: ...

    async def claim(self, seq: int, entry: JSONObject) -> bool: ...


def _run(trail: _Trail, thread_id: str, entry: JSONMapping) -> JSONObject:
    """:func:`_appending` run on ``trail`` (no ``sleep(0)`` before the first read: on a
    server's event loop that is a blocking call)."""
    plan = _Plan(thread_id, entry)
    for step in plan:
        if isinstance(step, _Claim):
            step.won = trail.claim(step.seq, step.entry)
        else:
            if step.pause:
                time.sleep(step.pause)
            step.found = trail.found()
    return plan.stored


async def _arun(trail: _ATrail, thread_id: str, entry: JSONMapping) -> JSONObject:
    """Async twin of :func:`_run`."""
    plan = _Plan(thread_id, entry)
    for step in plan:
        if isinstance(step, _Claim):
            step.won = await trail.claim(step.seq, step.entry)
        else:
            await asyncio.sleep(step.pause)
            step.found = await trail.found()
    return plan.stored


@dataclass
class _SaverTrail:
    """A trail on a checkpointer: the slot of the next entry is claimed with a pending write,
    which the savers keep first-come."""

    saver: Saver
    thread_id: str

    def found(self) -> list[Found]:
        return _found_in(self.saver.list(_config(self.thread_id, AUDIT_NS)))

    def claim(self, seq: int, entry: JSONObject) -> bool:
        config, checkpoint, metadata = _slot(self.thread_id, seq)
        stored = self.saver.put(config, checkpoint, metadata, {})
        self.saver.put_writes(stored, [(ENTRY_META_KEY, canonical(entry))], ENTRY_TASK)
        return _won(self.saver.get_tuple(stored), entry)


@dataclass
class _ASaverTrail:
    """Async twin of :class:`_SaverTrail`."""

    saver: Saver
    thread_id: str

    async def found(self) -> list[Found]:
        return _found_in([t async for t in self.saver.alist(_config(self.thread_id, AUDIT_NS))])

    async def claim(self, seq: int, entry: JSONObject) -> bool:
        config, checkpoint, metadata = _slot(self.thread_id, seq)
        stored = await self.saver.aput(config, checkpoint, metadata, {})
        await self.saver.aput_writes(stored, [(ENTRY_META_KEY, canonical(entry))], ENTRY_TASK)
        return _won(await self.saver.aget_tuple(stored), entry)


def _append(saver: Saver, thread_id: str, entry: JSONMapping) -> JSONObject:
    """Chain ``entry`` to the end of ``thread_id``'s trail in ``saver`` (once per event id)
    and return it as stored; this process's appends to the trail take turns."""
    with _turn(saver, thread_id):
        return _run(_SaverTrail(saver, thread_id), thread_id, entry)


class Items(Protocol):
    """The items of one thread's trail in a store: a LangGraph ``BaseStore``
    (:class:`_StoreItems`) or a server's store through ``langgraph_sdk``
    (:mod:`dynavec_langgraph._remote.audit`)."""

    def values(self) -> list[tuple[str, JSONMapping]]:
        """Every item, as ``(key, value)``."""
        ...

    def with_seq(self, seq: int) -> list[str]:
        """The keys of the items whose ``seq`` is ``seq``."""
        ...

    def put(self, key: str, value: JSONObject) -> None: ...

    def delete(self, key: str) -> None: ...


PAGE: Final = 100


class _StoreItems:
    """:class:`Items` of ``(ns, thread_id)`` in a LangGraph store."""

    def __init__(self, store: BaseStore, ns: str, thread_id: str) -> None:
        self.store, self.ns = store, (ns, thread_id)

    def values(self) -> list[tuple[str, JSONMapping]]:
        found: list[tuple[str, JSONMapping]] = []
        while True:
            page = self.store.search(self.ns, limit=PAGE, offset=len(found))
            found += [(item.key, item.value) for item in page]
            if len(page) < PAGE:
                return found

    def with_seq(self, seq: int) -> list[str]:
        return [i.key for i in self.store.search(self.ns, filter={"seq": seq}, limit=PAGE)]

    def put(self, key: str, value: JSONObject) -> None:
        self.store.put(self.ns, key, value, index=False)

    def delete(self, key: str) -> None:
        self.store.delete(self.ns, key)


@dataclass
class _ItemsTrail:
    """A trail in a store: a store has no conditional put, so the writer puts its item, reads
    the items of its ``seq`` back and, finding another, deletes its own (of two writers that
    overlap, at least the later one sees the other)."""

    items: Items

    def found(self) -> list[Found]:
        return found_items(self.items.values())

    def claim(self, seq: int, entry: JSONObject) -> bool:
        eid = str(entry["event_id"])
        self.items.put(eid, entry)
        if not [k for k in self.items.with_seq(seq) if k != eid]:
            return True
        self.items.delete(eid)
        return False


@dataclass
class _AStoreTrail:
    """Async twin of :class:`_ItemsTrail` on a LangGraph store."""

    store: BaseStore
    ns: tuple[str, str]

    async def found(self) -> list[Found]:
        return found_items(await _asearch_all(self.store, self.ns))

    async def claim(self, seq: int, entry: JSONObject) -> bool:
        eid = str(entry["event_id"])
        await self.store.aput(self.ns, eid, entry, index=False)
        rivals = await self.store.asearch(self.ns, filter={"seq": seq}, limit=PAGE)
        if not [i for i in rivals if i.key != eid]:
            return True
        await self.store.adelete(self.ns, eid)
        return False


def append_item(items: Items, thread_id: str, entry: JSONMapping) -> JSONObject:
    """Chain ``entry`` to the end of a trail kept in a store (once per event id) and return
    it as stored."""
    return _run(_ItemsTrail(items), thread_id, entry)


async def _asearch_all(store: BaseStore, ns: tuple[str, str]) -> list[tuple[str, JSONObject]]:
    found: list[tuple[str, JSONObject]] = []
    while True:
        page = await store.asearch(ns, limit=PAGE, offset=len(found))
        found += [(item.key, item.value) for item in page]
        if len(page) < PAGE:
            return found


def _on_own_loop(saver: Saver) -> asyncio.AbstractEventLoop | None:
    """The running loop, when ``saver`` is an async saver bound to it (its sync methods
    refuse this thread then)."""
    loop = getattr(saver, "loop", None)
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        return None
    return running if loop is running else None


_pending_tasks: set[asyncio.Task[None]] = set()
last_task: dict[tuple[int, str], asyncio.Task[None]] = {}
"""The latest write task of each (saver, thread): the next one waits for it, so a thread's
entries are chained in the order they were recorded."""


def _in_task(
    loop: asyncio.AbstractEventLoop, target: Target, ns: str, thread_id: str, entry: JSONObject
) -> None:
    """Write ``entry`` from a task of ``loop``, after the thread's earlier ones."""
    key = (id(target), thread_id)
    before = last_task.get(key)

    async def write() -> None:
        if before is not None and not before.done():
            await asyncio.wait({before})
        await awrite(target, ns, thread_id, entry)

    task = loop.create_task(write())
    _pending_tasks.add(task)
    last_task[key] = task

    def done(finished: asyncio.Task[None]) -> None:
        _pending_tasks.discard(finished)
        if last_task.get(key) is finished:
            del last_task[key]

    task.add_done_callback(done)


def _exists(target: Saver, ns: str, thread_id: str, eid: str) -> bool:
    return bool(list(target.list(_config(thread_id, ns), filter={EVENT_ID_KEY: eid}, limit=1)))


def write(target: Target, ns: str, thread_id: str, entry: JSONObject) -> JSONObject | None:
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


async def awrite(target: Target, ns: str, thread_id: str, entry: JSONObject) -> JSONObject:
    eid = str(entry["event_id"])
    if isinstance(target, BaseStore):
        if ns == AUDIT_NS:
            trail = _AStoreTrail(target, (AUDIT_NS, thread_id))
            return dict(await _arun(trail, thread_id, entry))
        if await target.aget((ns, thread_id), eid) is None:
            await target.aput((ns, thread_id), eid, entry, index=False)
        return entry
    if ns == AUDIT_NS:
        return await _arun(_ASaverTrail(target, thread_id), thread_id, entry)
    found = [
        t async for t in target.alist(_config(thread_id, ns), filter={EVENT_ID_KEY: eid}, limit=1)
    ]
    if not found:
        checkpoint, metadata = _entry_checkpoint(entry)
        await target.aput(_config(thread_id, ns), checkpoint, metadata, {})
    return entry


def _decode(metadata: JSONMapping) -> JSONObject | None:
    raw = metadata.get(ENTRY_META_KEY)
    if not isinstance(raw, str):
        return None
    try:
        entry = json.loads(raw)
    except ValueError:
        return None
    return entry if isinstance(entry, dict) else None


def ordered(entries: Iterable[JSONObject]) -> list[JSONObject]:
    """Oldest first: the entries written before the chain by time, then the chain by
    ``seq``; an event id found twice is kept once, at its first place."""

    def place(entry: JSONMapping) -> tuple[int, str, int]:
        seq = entry.get("seq")
        return (1, "", seq) if is_seq(seq) else (0, str(entry.get("at", "")), 0)

    seen: dict[str, JSONObject] = {}
    for entry in sorted(entries, key=place):
        seen.setdefault(str(entry.get("event_id")), entry)
    return list(seen.values())


def stored(target: Target, ns: str, thread_id: str) -> list[Found]:
    if isinstance(target, BaseStore):
        return found_items(_StoreItems(target, ns, thread_id).values())
    return _found_in(target.list(_config(thread_id, ns)))


async def _astored(target: Target, ns: str, thread_id: str) -> list[Found]:
    if isinstance(target, BaseStore):
        return found_items(await _asearch_all(target, (ns, thread_id)))
    return _found_in([t async for t in target.alist(_config(thread_id, ns))])


def read(target: Target, ns: str, thread_id: str) -> list[JSONObject]:
    return ordered(f.entry for f in stored(target, ns, thread_id) if f.entry is not None)


async def aread(target: Target, ns: str, thread_id: str) -> list[JSONObject]:
    found = await _astored(target, ns, thread_id)
    return ordered(f.entry for f in found if f.entry is not None)


def check_target(target: object) -> Target:
    """``target``, a checkpointer or a store (for the type checker too)."""
    if not isinstance(target, BaseCheckpointSaver | BaseStore):
        raise TypeError(
            f"{target!r:.80} is neither a LangGraph checkpointer nor a store: pass the "
            "checkpointer the thread runs on (or the server's store)"
        )
    return target
