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

import threading
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver

from dynavec_langgraph._persistence.base import DelegatingSaver

__all__ = ["ScratchThreads"]


class ScratchThreads(DelegatingSaver):
    """``inner`` for every thread except the marked ones, which stay in this process.

    Every call goes to the saver :meth:`pick` names for its thread (a list without a thread:
    the user's saver); versions come from the user's saver for every thread, and
    ``with_allowlist`` clones over the user's saver with the same scratch threads.

    Example:
        >>> saver = ScratchThreads(InMemorySaver())
        >>> saver.mark("t0")
        'scratch'
        >>> saver.pick({"configurable": {"thread_id": "t0"}}) is saver.scratch
        True
    """

    def __init__(self, inner: BaseCheckpointSaver[Any]) -> None:
        super().__init__(inner)
        self.scratch = InMemorySaver(serde=inner.serde)
        self._marked: set[str] = set()
        self._lock = threading.Lock()

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

    def route(self, config: RunnableConfig | None) -> BaseCheckpointSaver[Any]:
        """:meth:`pick`: the saver every call of ``config``'s thread goes to."""
        return self.pick(config)

    def route_thread(self, thread_id: str) -> BaseCheckpointSaver[Any]:
        """The saver of ``thread_id`` (for ``delete_thread``)."""
        return self.scratch if self.is_scratch(thread_id) else self.inner
