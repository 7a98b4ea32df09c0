"""Threads that stay in the process: :class:`ScratchThreads`.

dynavec wrote checkpoints only when it had both a checkpointer and a thread id. So when
``ReActAgent.run()`` (or ``resume(messages, ...)``) gets no ``thread_id``, the thread it makes
up must not reach the user's checkpointer (junk in a durable database, growth in a
``MemoryCheckpointer``). :class:`ScratchThreads` is the saver the agent's graph runs on when a
checkpointer is given: threads marked with :meth:`ScratchThreads.mark` live in an in-process
``InMemorySaver``, every other thread goes to the user's saver (``inner``) untouched. A pause of
such a run stays resumable from ``interrupt_payload["messages"]`` anywhere, and by its thread id
on the same agent (docs/compatibility.md).
"""

from __future__ import annotations

import copy
import threading
from collections.abc import AsyncIterator, Collection, Iterator, Mapping, Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    CheckpointMetadata,
    CheckpointTuple,
    DeltaChannelHistory,
)
from langgraph.checkpoint.base import Checkpoint as LGCheckpoint
from langgraph.checkpoint.memory import InMemorySaver

__all__ = ["ScratchThreads"]


class ScratchThreads(BaseCheckpointSaver[Any]):
    """``inner`` for every thread except the marked ones, which stay in this process.

    Example:
        >>> saver = ScratchThreads(InMemorySaver())
        >>> saver.mark("t0")
        'scratch'
        >>> saver.pick({"configurable": {"thread_id": "t0"}}) is saver.scratch
        True
    """

    def __init__(self, inner: BaseCheckpointSaver[Any]) -> None:
        super().__init__(serde=inner.serde)
        self.inner = inner
        self.scratch = InMemorySaver(serde=inner.serde)
        self._marked: set[str] = set()
        self._lock = threading.Lock()

    @property
    def wrapped_saver(self) -> BaseCheckpointSaver[Any]:
        """The saver this one stores through (the locks' hook, ``locks.WrapsSaver``)."""
        return self.inner

    def mark(self, thread_id: str) -> str:
        """Keep ``thread_id`` in the process from now on; returns ``"scratch"``."""
        with self._lock:
            self._marked.add(thread_id)
        return "scratch"

    def is_scratch(self, thread_id: str) -> bool:
        """Whether ``thread_id`` stays in the process."""
        with self._lock:
            return thread_id in self._marked

    def pick(self, config: RunnableConfig | None) -> BaseCheckpointSaver[Any]:
        """The saver of the thread named by ``config``."""
        thread_id = ((config or {}).get("configurable") or {}).get("thread_id")
        return (
            self.scratch
            if thread_id is not None and self.is_scratch(str(thread_id))
            else self.inner
        )

    def _by_thread(self, thread_id: str) -> BaseCheckpointSaver[Any]:
        return self.scratch if self.is_scratch(thread_id) else self.inner

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """See ``BaseCheckpointSaver.get_tuple``."""
        return self.pick(config).get_tuple(config)

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """See ``BaseCheckpointSaver.aget_tuple``."""
        return await self.pick(config).aget_tuple(config)

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """See ``BaseCheckpointSaver.list`` (without a thread: the user's saver only)."""
        return self.pick(config).list(config, filter=filter, before=before, limit=limit)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        """See ``BaseCheckpointSaver.alist``."""
        async for item in self.pick(config).alist(
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
        return self.pick(config).put(config, checkpoint, metadata, new_versions)

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: LGCheckpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """See ``BaseCheckpointSaver.aput``."""
        return await self.pick(config).aput(config, checkpoint, metadata, new_versions)

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """See ``BaseCheckpointSaver.put_writes``."""
        self.pick(config).put_writes(config, writes, task_id, task_path)

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """See ``BaseCheckpointSaver.aput_writes``."""
        await self.pick(config).aput_writes(config, writes, task_id, task_path)

    def delete_thread(self, thread_id: str) -> None:
        """See ``BaseCheckpointSaver.delete_thread``."""
        self._by_thread(thread_id).delete_thread(thread_id)

    async def adelete_thread(self, thread_id: str) -> None:
        """See ``BaseCheckpointSaver.adelete_thread``."""
        await self._by_thread(thread_id).adelete_thread(thread_id)

    def get_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """See ``BaseCheckpointSaver.get_delta_channel_history``."""
        return self.pick(config).get_delta_channel_history(config=config, channels=channels)

    async def aget_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """See ``BaseCheckpointSaver.aget_delta_channel_history``."""
        return await self.pick(config).aget_delta_channel_history(config=config, channels=channels)

    def with_allowlist(self, extra_allowlist: Collection[tuple[str, ...]]) -> ScratchThreads:
        """A clone over the user's saver with the derived allowlist (same scratch threads)."""
        inner = self.inner.with_allowlist(extra_allowlist)
        if inner is self.inner:
            return self
        clone = copy.copy(self)
        clone.inner, clone.serde = inner, inner.serde
        return clone

    def get_next_version(self, current: Any, channel: None) -> Any:
        """The user's saver's versions, for every thread."""
        return self.inner.get_next_version(current, channel)
