"""The wait of a tool call for the checkpoint it runs from to be stored, sync and async."""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Final

from langgraph.checkpoint.base import CheckpointTuple

from dynavec_langgraph._errors import StorageError
from dynavec_langgraph._exactly_once.marks import Where
from dynavec_langgraph._graph.run_data import RunData
from dynavec_langgraph._pauses.value import ToolCallRef
from dynavec_langgraph._persistence.stored import StoredCheckpoints

if TYPE_CHECKING:
    from dynavec_langgraph._types import CheckpointSaver

__all__ = ["STORED_WAIT", "astored", "saved_in_background", "stored"]

STORED_WAIT: Final = 30.0
"""Seconds a tool call waits for the checkpoint it runs from to be stored."""
_STORED_POLL: Final = (0.00025, 0.0005, 0.001, 0.002)
"""The pauses between two reads of that checkpoint: short first (the save takes about a
millisecond), then every 2 ms. With the graph's saver they follow a read that found nothing;
before the first read (:data:`_FIRST_READ`) a sync call sleeps until the save of its
checkpoint here returns, an async one until a save here starts or returns, on no timer."""
_FIRST_READ: Final = 0.02
"""Seconds a call waits for the saves of its own process before it reads a checkpoint the
graph's saver does not know. In a run that is LangGraph's background save of it not started
yet (it waits for the save of the step before, 1-3 ms on PostgreSQL): a read then would only
queue behind those saves on the saver's connection. A checkpoint stored by another process is
known once LangGraph has read it at the start of the run."""


def saved_in_background(data: RunData) -> bool:
    """Whether the run saves its checkpoints in the background (LangGraph's default
    ``durability="async"``): then a task may start before the checkpoint it runs from is
    stored. ``"sync"`` stores it first; ``"exit"`` stores none per step (nothing to wait for)."""
    return data.durability == "async"


def _not_stored(where: Where, call: ToolCallRef) -> StorageError:
    return StorageError(
        f"thread {where.thread_id!r}: the checkpoint call {call['id']!r} ({call['name']}) runs "
        f"from was not stored within {STORED_WAIT:.0f} s, so the call did not run (its "
        "idempotency key and crash marks rest on that checkpoint). Check the checkpointer, "
        "then run the thread again (it is unchanged)",
        where.thread_id,
        [],
    )


def _marks_of(saver: CheckpointSaver) -> StoredCheckpoints | None:
    """What the package's saver knows is stored (a graph's ``HistoryCache`` keeps it as
    ``stored``), else ``None``."""
    marks = getattr(saver, "stored", None)
    return marks if isinstance(marks, StoredCheckpoints) else None


class _Waiting:
    """One wait for a checkpoint, what the sync and the async wait share: the deadline, when
    the next read is due and the pause before the next try; each wait does only its I/O (the
    waits on what is saved here, the reads, the naps)."""

    __slots__ = ("call", "deadline", "marks", "next_read", "now", "tries", "where")

    def __init__(
        self, where: Where, call: ToolCallRef, marks: StoredCheckpoints | None, start: float
    ) -> None:
        self.where, self.call, self.marks = where, call, marks
        self.deadline = start + STORED_WAIT
        self.next_read = start if marks is None else start + _FIRST_READ
        self.now = start
        self.tries = 0

    def left(self) -> float:
        """Seconds until the deadline."""
        return self.deadline - time.monotonic()

    def reads(self, known: bool) -> bool:
        """Whether to read the checkpoint now: it is known stored here, or its read is due."""
        self.now = time.monotonic()
        return known or self.now >= self.next_read

    def missed(self) -> None:
        """A read found nothing: the next is due after a pause."""
        self.next_read = self.now

    def pause(self) -> float:
        """The seconds to nap before the next try (:data:`_STORED_POLL`; with the graph's
        saver, until the read is due).

        Raises:
            StorageError: the checkpoint was not stored within :data:`STORED_WAIT`.
        """
        if self.now > self.deadline:
            raise _not_stored(self.where, self.call)
        pause = _STORED_POLL[min(self.tries, 3)]  # LangGraph's background save of it
        self.tries += 1
        return pause if self.marks is None else max(self.next_read - self.now, pause)


def stored(where: Where, call: ToolCallRef, *, read: bool = True) -> CheckpointTuple | None:
    """The checkpoint the call runs from, once the saver holds it (see
    :func:`saved_in_background`); ``read=False``: only wait for it (returns ``None``).

    A checkpoint the graph's saver knows stored (its ``put`` here returned, or it was read)
    needs no read to know it, and while its ``put`` runs here the call waits for that ``put``
    to return. One it does not know yet is LangGraph's save not started yet: the call waits
    for the saves here, and reads the checkpoint from the saver only after
    :data:`_FIRST_READ` (another process may have stored it); with any other saver it reads
    the checkpoint until it is there. The usual case is one sleep: until the ``put`` of it
    here returns (``wait_saved``), not woken as that ``put`` starts."""
    marks = _marks_of(where.saver)
    start = time.monotonic()
    if marks is not None and marks.wait_saved(where.base, _FIRST_READ) and not read:
        return None
    wait = _Waiting(where, call, marks, start)
    while True:
        known = marks is not None and marks.wait(where.base, wait.left())
        if known and not read:
            return None
        if wait.reads(known):
            if (found := where.saver.get_tuple(where.base)) is not None:
                return found
            wait.missed()
        pause = wait.pause()
        if marks is not None:  # until the read, woken as a save here starts or returns
            marks.nap(pause)
        else:
            time.sleep(pause)


async def astored(where: Where, call: ToolCallRef, *, read: bool = True) -> CheckpointTuple | None:
    """Async twin of :func:`stored`: the same waits, on the event loop (a save running here
    wakes the call as it returns, on whichever thread or loop it runs; nothing polls it)."""
    marks = _marks_of(where.saver)
    wait = _Waiting(where, call, marks, time.monotonic())
    while True:
        known = marks is not None and await marks.await_stored(where.base, wait.left())
        if known and not read:
            return None
        if wait.reads(known):
            if (found := await where.saver.aget_tuple(where.base)) is not None:
                return found
            wait.missed()
        pause = wait.pause()
        if marks is not None:  # until the read, woken as a save here starts or returns
            await marks.anap(pause)
        else:
            await asyncio.sleep(pause)
