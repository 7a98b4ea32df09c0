"""The conversation of a thread kept between calls: :class:`HistoryCache`.

LangGraph rebuilds a ``DeltaChannel`` every time it loads a checkpoint: the saver's
``get_delta_channel_history`` reads the nearest stored snapshot of the channel and the writes
since, the serializer revives every message of the snapshot and the reducer folds the writes
in. For the ``messages`` channel that is the whole conversation, so on a long thread each
``invoke``, ``Command(resume=...)`` and ``get_state`` costs O(length of the thread), and a
run + resume does it several times.

:class:`HistoryCache` is the saver the package's graphs are compiled with: it passes every call
to the given saver (``inner``) and answers ``get_delta_channel_history`` for the graph's
:class:`~dynavec_langgraph._graph.messages.ConversationChannel` channels from the values it built
before. The value of a channel at a checkpoint never changes (a checkpoint's ancestors and
their writes are fixed once it has children), so it keeps, per thread, the value at the last
few checkpoints it loaded (an LRU of threads). Loading a descendant of one of them reads only
the checkpoints in between (``get_tuple``, a few small rows: the writes of the steps since)
and folds their writes into the kept value with the channel's own ``from_checkpoint`` /
``replay_writes``, exactly as the default ``BaseCheckpointSaver.get_delta_channel_history``
contract describes (writes of the parent chain, oldest first, each checkpoint's in
``get_tuple`` order). A thread it has not seen in this process, or one whose kept checkpoint
is too far up, goes to the saver's own ``get_delta_channel_history`` as before; so does any
other channel and any subgraph namespace. The answer is the value as the seed of the history
(a plain value, which ``DeltaChannel.from_checkpoint`` uses as is) with no writes: the
conversation arrives analysed (``Conversation``) and nothing is revived again.

What is shared: the message objects of a kept value are the ones the next call of the thread
gets (the list is copied, the messages are not), as LangGraph shares them between the steps
of one run. Treat messages a graph returns as read-only (``model_copy`` to change one), or a
change made in place shows in this process's next call of the thread and not in the stored
checkpoint. Rows changed in the database behind the saver's back are not seen for the
checkpoints kept here; new checkpoints written by another process are read normally.

**Which checkpoints are stored.** It also knows which checkpoints are in the saver without
asking it (:class:`StoredCheckpoints`): the ones whose ``put`` through it returned and the ones
``get_tuple`` read from it. Under LangGraph's default ``durability="async"`` a tool call waits
until the checkpoint it runs from is stored (:mod:`dynavec_langgraph._exactly_once`): it asks
``HistoryCache.stored``, which answers at once when the checkpoint is known stored and
otherwise wakes the moment a ``put`` of it here returns, instead of reading the checkpoint
from the database until it is there. What it does not know (a checkpoint another process
stored, one dropped by :meth:`HistoryCache.forget`) is read from the saver as before.
"""

from __future__ import annotations

import asyncio
import builtins
import copy
import threading
from collections import OrderedDict
from collections.abc import Collection, Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from langchain_core.runnables import ConfigurableFieldSpec, RunnableConfig
from langgraph.channels import DeltaChannel
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    CheckpointMetadata,
    CheckpointTuple,
    DeltaChannelHistory,
    PendingWrite,
)
from langgraph.checkpoint.base import Checkpoint as LGCheckpoint

from dynavec_langgraph._persistence.base import DelegatingSaver, SaverPlan, ask, twins
from dynavec_langgraph._persistence.stored import StoredCheckpoints

if TYPE_CHECKING:
    from dynavec_langgraph._types import CheckpointSaver, ForeignObject

__all__ = [
    "MAX_THREADS",
    "MAX_WALK",
    "PER_THREAD",
    "HistoryCache",
    "keep_conversations",
]

MAX_THREADS: Final = 64
"""Threads whose conversation is kept (least recently loaded dropped first)."""
PER_THREAD: Final = 4
"""Checkpoints kept per thread (the latest loaded)."""
MAX_WALK: Final = 32
"""Ancestors read at most to reach a kept checkpoint; further up, the saver's own walk."""


_Key = tuple[str, str]  # (thread_id, checkpoint_id), root namespace only
_Values = dict[str, object]  # channel -> value at the checkpoint
_Address = tuple[str, str, str]  # (thread_id, checkpoint_ns, checkpoint_id or "" for the latest)
_Reader = tuple[int, int | None]  # (the thread's id, the asyncio task's or None)


def _key(config: RunnableConfig | None) -> _Key | None:
    conf = (config or {}).get("configurable") or {}
    thread_id, checkpoint_id = conf.get("thread_id"), conf.get("checkpoint_id")
    if thread_id is None or not checkpoint_id or conf.get("checkpoint_ns", ""):
        return None
    return str(thread_id), str(checkpoint_id)


class _Walk:
    """The state of one walk up the parent chain (shared by the sync and async walks)."""

    def __init__(self, channels: Sequence[str]) -> None:
        self.writes: dict[str, list[PendingWrite]] = {c: [] for c in channels}
        self.seeds: dict[str, object] = {}
        self.remaining = set(channels)

    def visit(self, tup: CheckpointTuple, kept: _Values | None) -> None:
        """Take an ancestor's writes, then its value (kept here, or its stored snapshot)."""
        for write in reversed(tup.pending_writes or []):
            if write[1] in self.remaining:
                self.writes[write[1]].append(write)
        stored = tup.checkpoint["channel_values"]
        for ch in list(self.remaining):
            if kept is not None and ch in kept:
                self.seeds[ch] = kept[ch]
            elif ch in stored:
                self.seeds[ch] = stored[ch]
            else:
                continue
            self.remaining.discard(ch)


class HistoryCache(DelegatingSaver):
    """``inner`` for everything; the values of ``channels`` kept between loads of a thread.

    Args:
        inner: the saver that stores everything.
        channels: ``{name: channel}`` of the graph's conversation channels (a
            ``DeltaChannel`` whose reducer is batching-invariant, as LangGraph requires).

    Example:
        >>> from langgraph.checkpoint.memory import InMemorySaver
        >>> from dynavec_langgraph._graph.messages import ConversationChannel
        >>> saver = HistoryCache(InMemorySaver(), {"messages": ConversationChannel()})
        >>> saver.kept_threads()
        []
    """

    def __init__(self, inner: CheckpointSaver, channels: Mapping[str, DeltaChannel[Any]]):
        super().__init__(inner)
        self.channels = dict(channels)
        self._lock = threading.Lock()
        self._kept: OrderedDict[str, OrderedDict[str, _Values]] = OrderedDict()
        self._parents: OrderedDict[_Key, RunnableConfig | None] = OrderedDict()
        self.stored = StoredCheckpoints()
        self._handed: dict[tuple[_Reader, _Address], CheckpointTuple] = {}

    def __getattr__(self, name: str) -> ForeignObject:
        # what only the wrapped saver has (``conn``, ``setup``, ...)
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)

    # --- what is kept -------------------------------------------------------------------

    def kept_threads(self) -> list[str]:
        """The threads whose conversation is kept, least recently loaded first."""
        with self._lock:
            return list(self._kept)

    def forget(self, thread_id: str | None = None) -> None:
        """Drop what is kept for ``thread_id`` (every thread when ``None``), and what is
        known stored of it."""
        self.stored.forget(thread_id)
        with self._lock:
            if thread_id is None:
                self._kept.clear()
                self._parents.clear()
            else:
                self._kept.pop(str(thread_id), None)
                for key in [k for k in self._parents if k[0] == str(thread_id)]:
                    del self._parents[key]

    def _lookup(self, key: _Key | None, channels: Collection[str]) -> _Values | None:
        if key is None:
            return None
        with self._lock:
            thread = self._kept.get(key[0])
            values = thread.get(key[1]) if thread is not None else None
            if values is None or any(c not in values for c in channels):
                return None
            self._kept.move_to_end(key[0])
            thread.move_to_end(key[1])  # type: ignore[union-attr]
            return values

    def _oldest_before(self, key: _Key) -> str | None:
        """The oldest kept checkpoint of the thread created before ``key``'s (checkpoint ids
        are time-ordered): an ancestor can only be among those. ``None`` when there is none."""
        with self._lock:
            thread = self._kept.get(key[0])
            older = [cid for cid in thread or () if cid < key[1]]
        return min(older) if older else None

    def _keep(self, key: _Key, values: _Values) -> None:
        with self._lock:
            thread = self._kept.setdefault(key[0], OrderedDict())
            thread[key[1]] = values
            thread.move_to_end(key[1])
            self._kept.move_to_end(key[0])
            while len(thread) > PER_THREAD:
                thread.popitem(last=False)
            while len(self._kept) > MAX_THREADS:
                self._kept.popitem(last=False)

    def _remember(self, tup: CheckpointTuple | None) -> CheckpointTuple | None:
        if tup is not None:
            self.stored.seen(tup.config)
        key = _key(tup.config) if tup is not None else None
        if key is not None and tup is not None:
            with self._lock:
                self._parents[key] = tup.parent_config
                while len(self._parents) > MAX_THREADS * PER_THREAD:
                    self._parents.popitem(last=False)
        return tup

    def _parent(self, key: _Key) -> tuple[bool, RunnableConfig | None]:
        with self._lock:
            if key in self._parents:
                return True, self._parents[key]
        return False, None

    # --- building a value ---------------------------------------------------------------

    def _fold(self, channel: str, seed: object, writes: Sequence[PendingWrite]) -> object:
        """The channel's value from ``seed`` and ``writes`` (oldest first), as LangGraph
        builds it: ``from_checkpoint(seed)`` then ``replay_writes(writes)``."""
        built = self.channels[channel].from_checkpoint(seed)
        built.replay_writes(writes)
        return built.get()

    def _finish(self, walk: _Walk, full: Mapping[str, DeltaChannelHistory]) -> _Values:
        values: _Values = {}
        for ch in walk.writes:
            if ch in full:  # the saver's own history (no kept checkpoint close enough)
                history = full[ch]
                values[ch] = self._fold(ch, history.get("seed"), history["writes"])
            else:
                values[ch] = self._fold(ch, walk.seeds.get(ch), walk.writes[ch][::-1])
        return values

    def _answer(
        self, values: _Values, others: Mapping[str, DeltaChannelHistory]
    ) -> dict[str, DeltaChannelHistory]:
        out = dict(others)
        for ch, value in values.items():
            out[ch] = {"seed": copy.copy(value), "writes": []}
        return out

    def _split(
        self, config: RunnableConfig, channels: Sequence[str]
    ) -> tuple[_Key | None, list[str], list[str]]:
        key = _key(config)
        mine = [c for c in channels if c in self.channels] if key is not None else []
        return key, mine, [c for c in channels if c not in mine]

    def _get_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> SaverPlan[Mapping[str, DeltaChannelHistory]]:
        """See ``BaseCheckpointSaver.get_delta_channel_history`` (conversation channels from
        the values kept, when the thread's kept checkpoint is an ancestor)."""
        key, mine, others = self._split(config, channels)
        history = BaseCheckpointSaver.get_delta_channel_history
        if key is None or not mine:
            return (yield from ask(self.inner, history, config=config, channels=channels))
        rest = (
            (yield from ask(self.inner, history, config=config, channels=others)) if others else {}
        )
        values = self._lookup(key, mine)
        if values is None:
            values = yield from self._build(config, key, mine)
            self._keep(key, values)
        return self._answer(values, rest)

    get_delta_channel_history, aget_delta_channel_history = twins(_get_delta_channel_history)

    def _build(self, config: RunnableConfig, key: _Key, mine: list[str]) -> SaverPlan[_Values]:
        walk = _Walk(mine)
        oldest = self._oldest_before(key)
        cursor: RunnableConfig | None = None
        if oldest is not None:
            known, cursor = self._parent(key)
            if not known:
                target = self._remember(
                    (yield from ask(self.inner, BaseCheckpointSaver.get_tuple, config))
                )
                cursor = target.parent_config if target is not None else None
        depth = 0
        while cursor is not None and walk.remaining and depth < MAX_WALK:
            at = _key(cursor)
            if at is None or oldest is None or at[1] < oldest:
                break  # past every kept checkpoint: the saver's own walk
            tup = yield from ask(self.inner, BaseCheckpointSaver.get_tuple, cursor)
            if tup is None:
                break
            walk.visit(tup, self._lookup(_key(tup.config), walk.remaining))
            cursor, depth = tup.parent_config, depth + 1
        full: Mapping[str, DeltaChannelHistory] = {}
        if walk.remaining and (cursor is not None or oldest is None):
            history = BaseCheckpointSaver.get_delta_channel_history
            full = yield from ask(self.inner, history, config=config, channels=mine)
        return self._finish(walk, full)

    # --- what the wrapper adds to the wrapped saver's methods ---------------------------

    def hand_over(self, config: RunnableConfig, tup: CheckpointTuple) -> Hashable:
        """Give ``tup`` (just read with ``config``) to the next ``get_tuple`` / ``aget_tuple``
        of the same checkpoint by the same reader (this thread, this asyncio task), instead of
        reading it again: the graph's pre-run check of a resume reads the thread's checkpoint,
        then LangGraph's loop reads it at once in the same call. Returns the handle for
        :meth:`take_back`, which the caller runs when its run ends (taken or not)."""
        handle = (_reader(), _read_at(config))
        self._handed[handle] = tup
        return handle

    def take_back(self, handle: Hashable) -> None:
        """Drop what :meth:`hand_over` gave, if no read took it."""
        self._handed.pop(handle, None)  # type: ignore[call-overload]

    def _taken(self, config: RunnableConfig) -> CheckpointTuple | None:
        if not self._handed:
            return None
        return self._handed.pop((_reader(), _read_at(config)), None)

    def _get_tuple(self, config: RunnableConfig) -> SaverPlan[CheckpointTuple | None]:
        """See ``BaseCheckpointSaver.get_tuple``."""
        if (handed := self._taken(config)) is not None:
            return handed
        return self._remember((yield from ask(self.inner, BaseCheckpointSaver.get_tuple, config)))

    def _put(
        self,
        config: RunnableConfig,
        checkpoint: LGCheckpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> SaverPlan[RunnableConfig]:
        """See ``BaseCheckpointSaver.put`` (the checkpoint known stored once it returns)."""
        with self.stored.storing(_stored_at(config, checkpoint)):
            return (
                yield from ask(
                    self.inner, BaseCheckpointSaver.put, config, checkpoint, metadata, new_versions
                )
            )

    def _delete_thread(self, thread_id: str) -> SaverPlan[None]:
        """See ``BaseCheckpointSaver.delete_thread``."""
        self.forget(thread_id)
        yield from ask(self.route_thread(thread_id), BaseCheckpointSaver.delete_thread, thread_id)

    def _delete_for_runs(self, run_ids: Sequence[str]) -> SaverPlan[None]:
        """See ``BaseCheckpointSaver.delete_for_runs``."""
        self.forget()
        yield from ask(self.inner, BaseCheckpointSaver.delete_for_runs, run_ids)

    def _copy_thread(self, source_thread_id: str, target_thread_id: str) -> SaverPlan[None]:
        """See ``BaseCheckpointSaver.copy_thread``."""
        self.forget(target_thread_id)
        yield from ask(
            self.inner, BaseCheckpointSaver.copy_thread, source_thread_id, target_thread_id
        )

    def _prune(
        self, thread_ids: Sequence[str], *, strategy: str = "keep_latest"
    ) -> SaverPlan[None]:
        """See ``BaseCheckpointSaver.prune``."""
        for tid in thread_ids:
            self.forget(tid)
        yield from ask(self.inner, BaseCheckpointSaver.prune, thread_ids, strategy=strategy)

    get_tuple, aget_tuple = twins(_get_tuple)
    put, aput = twins(_put)
    delete_thread, adelete_thread = twins(_delete_thread)
    delete_for_runs, adelete_for_runs = twins(_delete_for_runs)
    copy_thread, acopy_thread = twins(_copy_thread)
    prune, aprune = twins(_prune)

    @property
    def config_specs(self) -> builtins.list[ConfigurableFieldSpec]:
        """The wrapped saver's."""
        return list(self.inner.config_specs)


def _reader() -> _Reader:
    """Who reads: this thread, and the asyncio task running on it (if any)."""
    try:
        task = asyncio.current_task()
    except RuntimeError:  # no event loop runs on this thread
        task = None
    return threading.get_ident(), None if task is None else id(task)


def _read_at(config: RunnableConfig) -> _Address:
    """What a ``get_tuple(config)`` reads: a thread's checkpoint by id, or its latest ("")."""
    conf = config.get("configurable") or {}
    return (
        str(conf.get("thread_id")),
        str(conf.get("checkpoint_ns") or ""),
        str(conf.get("checkpoint_id") or ""),
    )


def _stored_at(config: RunnableConfig, checkpoint: LGCheckpoint) -> RunnableConfig:
    """The address of the checkpoint a ``put(config, checkpoint, ...)`` stores."""
    conf = config.get("configurable") or {}
    return {
        "configurable": {
            "thread_id": conf.get("thread_id"),
            "checkpoint_ns": conf.get("checkpoint_ns") or "",
            "checkpoint_id": checkpoint["id"],
        }
    }


def keep_conversations(saver: CheckpointSaver, channels: Mapping[str, object]) -> CheckpointSaver:
    """``saver`` wrapped in a :class:`HistoryCache` for the conversation channels among
    ``channels`` (a graph's ``{name: channel}``); ``saver`` itself when there are none or it
    is one already."""
    from dynavec_langgraph._graph.messages import ConversationChannel

    kept = {k: c for k, c in channels.items() if isinstance(c, ConversationChannel)}
    if not kept or isinstance(saver, HistoryCache):
        return saver
    return HistoryCache(saver, kept)
