"""A user's own dynavec checkpointer on files, with a resume lock that holds across processes.

``FileCheckpointer(folder)`` keeps each thread's records as JSON lines in ``folder/THREAD.jsonl``
and defines ``resume_lock(thread_id)`` / ``aresume_lock(thread_id)``: ``flock`` on
``folder/THREAD.lock``, never waiting. The package uses a dynavec checkpointer's own lock when
it has one (docs/guarantees.md); without it a dynavec checkpointer shared between
processes is locked in-process only.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

from dynavec_langgraph import BaseCheckpointer, Checkpoint, ConcurrentResumeError

__all__ = ["FileCheckpointer"]


class FileCheckpointer(BaseCheckpointer):
    """dynavec records as JSON lines, one file per thread; a cross-process resume lock."""

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)

    def _file(self, thread_id: str, suffix: str = ".jsonl") -> Path:
        return self.folder / f"{thread_id}{suffix}"

    def save(self, checkpoint: Checkpoint) -> None:
        with self._file(checkpoint.thread_id).open("a", encoding="utf-8") as file:
            file.write(json.dumps(checkpoint.to_dict()) + "\n")
            file.flush()
            os.fsync(file.fileno())

    def _records(self, thread_id: str) -> list[Checkpoint]:
        path = self._file(thread_id)
        if not path.exists():
            return []
        lines = path.read_text(encoding="utf-8").splitlines()
        return [Checkpoint.from_dict(json.loads(line)) for line in lines if line]

    def get(self, thread_id: str, checkpoint_id: str | None = None) -> Checkpoint | None:
        mine = self._records(thread_id)
        if checkpoint_id is not None:
            mine = [c for c in mine if c.checkpoint_id == checkpoint_id]
        return mine[-1] if mine else None

    def list(self, thread_id: str, limit: int | None = None) -> list[Checkpoint]:
        newest: dict[str, Checkpoint] = {}
        for c in self._records(thread_id):
            newest[c.checkpoint_id] = c
        out = [*newest.values()]
        return out[-limit:] if limit else out

    @contextmanager
    def resume_lock(self, thread_id: str) -> Iterator[None]:
        """Hold the thread's lock (every process opening this folder); never waits."""
        fd = os.open(self._file(thread_id, ".lock"), os.O_RDWR | os.O_CREAT, 0o644)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise ConcurrentResumeError(
                    f"thread {thread_id!r} is taken by another process (file lock)"
                ) from None
            yield
        finally:
            os.close(fd)

    @asynccontextmanager
    async def aresume_lock(self, thread_id: str) -> AsyncIterator[None]:
        """Async twin of :meth:`resume_lock` (``flock`` with ``LOCK_NB`` never blocks)."""
        with self.resume_lock(thread_id):
            yield
