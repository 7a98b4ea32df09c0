"""The thread read from its saver under the caller's lock, and a storage failure turned into a
``StorageError`` naming what ran."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import CheckpointTuple
from langgraph.types import StateSnapshot

from dynavec_langgraph._errors import DynavecError, StorageError
from dynavec_langgraph._graph.tool_call import CompletedCall
from dynavec_langgraph._persistence.base import DelegatingSaver
from dynavec_langgraph._persistence.connections import (
    is_schema_error,
    is_storage_error,
    schema_conflict,
)
from dynavec_langgraph._persistence.history import HistoryCache
from dynavec_langgraph._resuming.answers import MISSING
from dynavec_langgraph._storable import brief
from dynavec_langgraph._types import UserPayload
from dynavec_langgraph.savers import describe_storage

if TYPE_CHECKING:
    from dynavec_langgraph._types import CheckpointSaver, UserGraph

__all__ = [
    "aread_thread",
    "aread_thread_once",
    "read_thread",
    "read_thread_once",
    "storage_guard",
]


def _unreadable(thread_id: str, error: Exception) -> StorageError:
    return StorageError(
        f"thread {thread_id!r} cannot be read: {type(error).__name__}: {error}. Its records "
        "were written by another program or version, or were damaged; nothing was changed",
        thread_id,
        [],
    )


def read_thread(graph: UserGraph, config: RunnableConfig, thread_id: str) -> StateSnapshot:
    """``graph.get_state(config)``; a record that cannot be read → ``StorageError`` (a storage
    failure passes through, for :func:`storage_guard`)."""
    try:
        return graph.get_state(config)
    except Exception as error:
        if isinstance(error, DynavecError) or is_storage_error(error):
            raise
        raise _unreadable(thread_id, error) from None


async def aread_thread(graph: UserGraph, config: RunnableConfig, thread_id: str) -> StateSnapshot:
    """Async twin of :func:`read_thread`."""
    try:
        return await graph.aget_state(config)
    except Exception as error:
        if isinstance(error, DynavecError) or is_storage_error(error):
            raise
        raise _unreadable(thread_id, error) from None


def _cache_of(
    graph: UserGraph, saver: CheckpointSaver, config: RunnableConfig
) -> HistoryCache | None:
    """The graph's saver when it is the package's ``HistoryCache`` storing ``config``'s
    thread in ``saver`` (through the package's wrappers, each routing the thread), else
    None."""
    cache = getattr(graph, "checkpointer", None)
    if not isinstance(cache, HistoryCache):
        return None
    hop: CheckpointSaver = cache
    for _ in range(8):  # the package's wrappers are a few deep
        if hop is saver:
            return cache
        if not isinstance(hop, DelegatingSaver):
            return None
        hop = hop.route(config)
    return None


def read_thread_once(
    graph: UserGraph, saver: CheckpointSaver, config: RunnableConfig, thread_id: str
) -> tuple[StateSnapshot, CheckpointTuple | None]:
    """:func:`read_thread` and the stored checkpoint it shows (its pending writes: the crash
    marks), read once: the checkpoint read for the marks is handed to the snapshot's read of
    it (:meth:`HistoryCache.hand_over`; the caller holds the thread's lock, so nothing is
    written between). With another saver, the snapshot, then the checkpoint."""
    cache = _cache_of(graph, saver, config)
    if cache is None:
        snapshot = read_thread(graph, config, thread_id)
        return snapshot, saver.get_tuple(config)
    stored = _unless_unreadable(thread_id, lambda: cache.get_tuple(config))
    handle = None if stored is None else cache.hand_over(config, stored)
    try:
        return read_thread(graph, config, thread_id), stored
    finally:
        if handle is not None:
            cache.take_back(handle)


async def aread_thread_once(
    graph: UserGraph, saver: CheckpointSaver, config: RunnableConfig, thread_id: str
) -> tuple[StateSnapshot, CheckpointTuple | None]:
    """Async twin of :func:`read_thread_once`."""
    cache = _cache_of(graph, saver, config)
    if cache is None:
        snapshot = await aread_thread(graph, config, thread_id)
        return snapshot, await saver.aget_tuple(config)
    try:
        stored = await cache.aget_tuple(config)
    except Exception as error:
        if isinstance(error, DynavecError) or is_storage_error(error):
            raise
        raise _unreadable(thread_id, error) from None
    handle = None if stored is None else cache.hand_over(config, stored)
    try:
        return await aread_thread(graph, config, thread_id), stored
    finally:
        if handle is not None:
            cache.take_back(handle)


def _unless_unreadable(
    thread_id: str, read: Callable[[], CheckpointTuple | None]
) -> CheckpointTuple | None:
    """``read()``; a record that cannot be read -> ``StorageError``, as :func:`read_thread`."""
    try:
        return read()
    except Exception as error:
        if isinstance(error, DynavecError) or is_storage_error(error):
            raise
        raise _unreadable(thread_id, error) from None


def _storage_error(
    saver: CheckpointSaver,
    error: BaseException,
    thread_id: str | None,
    record: Mapping[str, CompletedCall] | None,
    decision: UserPayload,
) -> StorageError:
    where = describe_storage(saver)
    thread = f"thread {thread_id!r}" if thread_id else "the thread"
    conflict = schema_conflict(saver, where) if is_schema_error(error) else None
    if conflict and not record:
        return StorageError(
            f"{conflict} ({type(error).__name__}: {error}); {thread} is unchanged",
            thread_id,
            [],
        )
    if not record:
        return StorageError(
            f"{where} failed ({type(error).__name__}: {error}). No tool ran and {thread} is "
            "unchanged: try again once the storage works",
            thread_id,
            [],
        )
    ran = [c.describe() for c in record.values()]
    decided = f" with the decision {brief(decision)}" if decision is not MISSING else ""
    return StorageError(
        f"{where} failed ({type(error).__name__}: {error}) after these tool calls ran"
        f"{decided}: {'; '.join(ran)}. Their results were not saved, so {thread} still shows "
        "them as not done. This agent remembers the results: call the same method on it again "
        "once the storage works and they will not run again (another agent or process would "
        "run them again)",
        thread_id,
        ran,
    )


@contextmanager
def storage_guard(
    saver: CheckpointSaver,
    thread_id: str | None,
    record: Mapping[str, CompletedCall] | None = None,
    decision: UserPayload = MISSING,
) -> Iterator[None]:
    """A storage failure inside → :class:`StorageError` naming the storage and the tool calls
    in ``record`` (those that ran but were not saved); other errors pass through."""
    try:
        yield
    except Exception as error:
        if isinstance(error, DynavecError) or not is_storage_error(error):
            raise
        raise _storage_error(saver, error, thread_id, record, decision) from error
