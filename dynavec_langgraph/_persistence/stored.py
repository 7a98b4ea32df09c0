"""What one process knows is stored in a saver: the checkpoints whose ``put`` through the
graph's saver returned here, or that it read (:class:`StoredCheckpoints`).

A tool call under LangGraph's ``durability="async"`` waits until the checkpoint it runs from is
stored; with this record it waits for that save itself instead of reading the checkpoint back
(``HistoryCache`` keeps one; ``_exactly_once`` waits on it).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from typing import Final

from langchain_core.runnables import RunnableConfig

__all__ = ["STORED_KEPT", "StoredCheckpoints"]

STORED_KEPT: Final = 4096
"""Checkpoints remembered as stored (the latest first kept); an older one is read again."""

_Address = tuple[str, str, str]  # (thread_id, checkpoint_ns, checkpoint_id), any namespace


def _address(config: RunnableConfig | None) -> _Address | None:
    conf = (config or {}).get("configurable") or {}
    thread_id, checkpoint_id = conf.get("thread_id"), conf.get("checkpoint_id")
    if thread_id is None or not checkpoint_id:
        return None
    return str(thread_id), str(conf.get("checkpoint_ns") or ""), str(checkpoint_id)


class StoredCheckpoints:
    """The checkpoints this process knows are stored in one saver, and the ones being stored.

    ``saving`` / ``saved`` bracket a ``put`` (``saved(..., ok=False)`` when it raised: then the
    checkpoint is not known stored); ``seen`` marks one read from the saver. ``wait`` answers
    whether a checkpoint is known stored, waiting while a ``put`` of it runs (the thread that
    runs it wakes the waiters when it returns); ``await_stored`` and ``anap`` are the waits of
    a coroutine (woken on its event loop the same way, whichever thread or loop saves).

    Example:
        >>> marks = StoredCheckpoints()
        >>> at = {"configurable": {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": "1"}}
        >>> marks.wait(at, 0.0)
        False
        >>> marks.saving(at); marks.saved(at, ok=True); marks.wait(at, 0.0)
        True
    """

    def __init__(self, size: int = STORED_KEPT) -> None:
        self._size = size
        lock = threading.Lock()
        self._changed = threading.Condition(lock)  # a put started or returned
        self._returned = threading.Condition(lock)  # a put a call waits for returned
        self._awaited: dict[_Address, int] = {}  # the checkpoints calls wait for (wait_saved)
        self._stored: OrderedDict[_Address, None] = OrderedDict()
        self._saving: dict[_Address, int] = {}
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []

    def _add(self, at: _Address) -> None:
        self._stored[at] = None
        self._stored.move_to_end(at)
        while len(self._stored) > self._size:
            self._stored.popitem(last=False)

    def saving(self, config: RunnableConfig) -> None:
        """A ``put`` of the checkpoint ``config`` names has started; wakes every waiter."""
        if (at := _address(config)) is None:
            return
        with self._changed:
            self._saving[at] = self._saving.get(at, 0) + 1
            waiters = self._wake_all()
        _wake_loops(waiters)

    def saved(self, config: RunnableConfig, *, ok: bool) -> None:
        """That ``put`` returned (``ok``) or raised; wakes every waiter."""
        if (at := _address(config)) is None:
            return
        with self._changed:
            left = self._saving.get(at, 1) - 1
            if left > 0:
                self._saving[at] = left
            else:
                self._saving.pop(at, None)
            if ok:
                self._add(at)
            if at in self._awaited:
                self._returned.notify_all()
            waiters = self._wake_all()
        _wake_loops(waiters)

    @contextlib.contextmanager
    def storing(self, config: RunnableConfig) -> Iterator[None]:
        """Around one ``put`` of the checkpoint ``config`` names: :meth:`saving`, then
        :meth:`saved` (``ok`` when the block returned)."""
        self.saving(config)
        ok = False
        try:
            yield
            ok = True
        finally:
            self.saved(config, ok=ok)

    def _wake_all(self) -> list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]]:
        """Wake the waiting threads; the coroutines' futures to wake (caller holds the lock,
        wakes them once it is released)."""
        self._changed.notify_all()
        waiters, self._waiters = self._waiters, []
        return waiters

    def seen(self, config: RunnableConfig | None) -> None:
        """The checkpoint ``config`` names was read from the saver: it is stored."""
        if (at := _address(config)) is not None:
            with self._changed:
                self._add(at)
                if at in self._awaited:
                    self._returned.notify_all()

    def wait(self, config: RunnableConfig, timeout: float) -> bool:
        """Whether the checkpoint is known stored, waiting up to ``timeout`` seconds while a
        ``put`` of it runs here."""
        at = _address(config)
        if at is None:
            return False
        deadline = time.monotonic() + timeout
        with self._changed:
            while at not in self._stored and at in self._saving:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._changed.wait(left)
            return at in self._stored

    def wait_saved(self, config: RunnableConfig, timeout: float) -> bool:
        """Whether the checkpoint is known stored, sleeping up to ``timeout`` seconds until a
        ``put`` of it here returns. Woken only as a ``put`` of it returns (not as one starts,
        nor by the saves of other checkpoints): a call whose checkpoint LangGraph's background
        thread is about to save sleeps once."""
        at = _address(config)
        if at is None:
            return False
        deadline = time.monotonic() + timeout
        with self._returned:
            if at in self._stored:
                return True
            self._awaited[at] = self._awaited.get(at, 0) + 1
            try:
                while at not in self._stored:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        return False
                    self._returned.wait(left)
                return True
            finally:
                if self._awaited[at] > 1:
                    self._awaited[at] -= 1
                else:
                    del self._awaited[at]

    def nap(self, seconds: float) -> None:
        """Sleep up to ``seconds``, waking early when any ``put`` here starts or returns."""
        with self._changed:
            self._changed.wait(seconds)

    def _next_save(self) -> asyncio.Future[None]:
        """A future of the running loop, done when a ``put`` here next starts or returns
        (caller holds ``_changed``)."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        self._waiters.append((loop, future))
        return future

    async def await_stored(self, config: RunnableConfig, seconds: float) -> bool:
        """Async twin of :meth:`wait`: whether the checkpoint is known stored, waiting up to
        ``seconds`` while a ``put`` of it runs here (woken as that ``put`` returns, not by
        polling)."""
        at = _address(config)
        if at is None:
            return False
        deadline = time.monotonic() + seconds
        while True:
            with self._changed:
                if at in self._stored or at not in self._saving:
                    return at in self._stored
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                future = self._next_save()
            await self._until(future, left)

    async def anap(self, seconds: float) -> None:
        """Async twin of :meth:`nap`: sleep up to ``seconds``, waking early when any ``put``
        here starts or returns."""
        with self._changed:
            future = self._next_save()
        await self._until(future, seconds)

    async def _until(self, future: asyncio.Future[None], seconds: float) -> None:
        try:
            await asyncio.wait({future}, timeout=seconds)
        finally:
            if not future.done():  # timed out or cancelled: no save is to wake it
                with self._changed:
                    self._waiters = [w for w in self._waiters if w[1] is not future]

    def forget(self, thread_id: str | None = None) -> None:
        """Forget what is known of ``thread_id`` (every thread when ``None``)."""
        with self._changed:
            if thread_id is None:
                self._stored.clear()
            else:
                for at in [a for a in self._stored if a[0] == str(thread_id)]:
                    del self._stored[at]


def _wake(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def _wake_loops(waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]]) -> None:
    for loop, future in waiters:
        with contextlib.suppress(RuntimeError):  # its loop closed: nobody waits there
            loop.call_soon_threadsafe(_wake, future)
