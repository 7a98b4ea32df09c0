"""The two bases of the package's LangGraph savers.

* :class:`DelegatingSaver`: a saver that stores through another one (``inner``): every
  method of ``BaseCheckpointSaver`` and its async twin is passed to it, or to the saver
  :meth:`~DelegatingSaver.route` picks for the call's thread. The package's wrappers
  (``HistoryCache``, ``ScratchThreads``, ``ConnectionSaver``) are its subclasses and write only
  what they add; its ``wrapped_saver`` is the locks' hook
  (:class:`~dynavec_langgraph._persistence.kinds.WrapsSaver`), so a wrapped saver is locked as
  the saver it wraps.
* :class:`ThreadedAsyncSaver`: async methods that run the sync ones in a worker thread, for
  savers whose storage is synchronous (``DynavecCheckpointSaver``, ``ConnectionSaver``).
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import AsyncIterator, Collection, Iterator, Mapping, Sequence
from typing import Any, Self, TypeVar

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    CheckpointMetadata,
    CheckpointTuple,
    DeltaChannelHistory,
)
from langgraph.checkpoint.base import Checkpoint as LGCheckpoint

__all__ = ["DelegatingSaver", "ThreadedAsyncSaver"]

V = TypeVar("V", int, float, str)  # as BaseCheckpointSaver's


class ThreadedAsyncSaver(BaseCheckpointSaver[V]):
    """A saver whose async methods run its sync methods in a worker thread.

    For savers whose storage is synchronous (a dynavec checkpointer, a sync LangGraph saver
    wrapped by :class:`~dynavec_langgraph.savers.ConnectionSaver`), so that the same agent
    serves ``invoke`` and ``ainvoke`` without blocking the event loop.
    """

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """Async twin of :meth:`get_tuple` (worker thread)."""
        return await asyncio.to_thread(self.get_tuple, config)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        """Async twin of :meth:`list` (worker thread)."""
        found = await asyncio.to_thread(
            lambda: list(self.list(config, filter=filter, before=before, limit=limit))
        )
        for item in found:
            yield item

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: LGCheckpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Async twin of :meth:`put` (worker thread)."""
        return await asyncio.to_thread(self.put, config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Async twin of :meth:`put_writes` (worker thread)."""
        await asyncio.to_thread(self.put_writes, config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        """Async twin of :meth:`delete_thread` (worker thread)."""
        await asyncio.to_thread(self.delete_thread, thread_id)

    async def aget_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """Async twin of :meth:`get_delta_channel_history` (worker thread)."""
        return await asyncio.to_thread(
            lambda: self.get_delta_channel_history(config=config, channels=channels)
        )


class DelegatingSaver(BaseCheckpointSaver[Any]):
    """A saver that stores through ``inner``: every call goes to :meth:`route`'s saver.

    Subclasses override what they add (``HistoryCache``: the conversation kept between
    loads; ``ScratchThreads``: :meth:`route` picks the in-process saver for some threads;
    ``ConnectionSaver``: the connection it closes, async methods in a worker thread).

    Args:
        inner: the saver that stores everything; its ``serde`` is this saver's.

    Example:
        >>> from langgraph.checkpoint.memory import InMemorySaver
        >>> inner = InMemorySaver()
        >>> saver = DelegatingSaver(inner)
        >>> saver.wrapped_saver is inner, saver.get_tuple({"configurable": {"thread_id": "t"}})
        (True, None)
    """

    def __init__(self, inner: BaseCheckpointSaver[Any]) -> None:
        super().__init__(serde=inner.serde)
        self.inner = inner

    @property
    def wrapped_saver(self) -> BaseCheckpointSaver[Any]:
        """The saver this one stores through (the locks' hook, ``kinds.WrapsSaver``)."""
        return self.inner

    def route(self, config: RunnableConfig | None) -> BaseCheckpointSaver[Any]:
        """The saver of the thread ``config`` names (``inner``)."""
        return self.inner

    def route_thread(self, thread_id: str) -> BaseCheckpointSaver[Any]:
        """The saver of ``thread_id`` (``inner``)."""
        return self.inner

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """See ``BaseCheckpointSaver.get_tuple``."""
        return self.route(config).get_tuple(config)

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """See ``BaseCheckpointSaver.aget_tuple``."""
        return await self.route(config).aget_tuple(config)

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """See ``BaseCheckpointSaver.list``."""
        return self.route(config).list(config, filter=filter, before=before, limit=limit)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        """See ``BaseCheckpointSaver.alist``."""
        async for item in self.route(config).alist(
            config, filter=filter, before=before, limit=limit
        ):
            yield item

    def put(
        self,
        config: RunnableConfig,
        checkpoint: LGCheckpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """See ``BaseCheckpointSaver.put``."""
        return self.route(config).put(config, checkpoint, metadata, new_versions)

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: LGCheckpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """See ``BaseCheckpointSaver.aput``."""
        return await self.route(config).aput(config, checkpoint, metadata, new_versions)

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """See ``BaseCheckpointSaver.put_writes``."""
        self.route(config).put_writes(config, writes, task_id, task_path)

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """See ``BaseCheckpointSaver.aput_writes``."""
        await self.route(config).aput_writes(config, writes, task_id, task_path)

    def delete_thread(self, thread_id: str) -> None:
        """See ``BaseCheckpointSaver.delete_thread``."""
        self.route_thread(thread_id).delete_thread(thread_id)

    async def adelete_thread(self, thread_id: str) -> None:
        """See ``BaseCheckpointSaver.adelete_thread``."""
        await self.route_thread(thread_id).adelete_thread(thread_id)

    def get_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """See ``BaseCheckpointSaver.get_delta_channel_history``."""
        return self.route(config).get_delta_channel_history(config=config, channels=channels)

    async def aget_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """See ``BaseCheckpointSaver.aget_delta_channel_history``."""
        return await self.route(config).aget_delta_channel_history(config=config, channels=channels)

    def get_next_version(self, current: Any, channel: None) -> Any:
        """The versions of ``inner`` (for every thread)."""
        return self.inner.get_next_version(current, channel)

    def with_allowlist(self, extra_allowlist: Collection[tuple[str, ...]]) -> Self:
        """A clone over ``inner`` with the derived allowlist (the rest shared)."""
        inner = self.inner.with_allowlist(extra_allowlist)
        if inner is self.inner:
            return self
        clone = copy.copy(self)
        clone.inner, clone.serde = inner, inner.serde
        return clone
