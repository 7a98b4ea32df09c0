"""Resume locks: one resume of a paused thread at a time.  (STUB: being written.)"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any


@contextmanager
def resume_lock(saver: Any, thread_id: str) -> Iterator[None]:
    """Hold the thread's resume lock (stub: no lock)."""
    yield


@asynccontextmanager
async def aresume_lock(saver: Any, thread_id: str) -> AsyncIterator[None]:
    """Async twin of :func:`resume_lock` (stub: no lock)."""
    yield
