"""The resume lock of the DynamoDB checkpointer: a leased lock item, across processes and
machines.

**The resume lock** (``resume_lock`` / ``aresume_lock``, used by ``ReActAgent`` around every
run and resume of a named thread) is a conditional put of the lock item, so it holds across
processes and machines. Its holder renews a short lease (``lock_ttl`` seconds, default 15)
every ``lock_heartbeat`` seconds (default ``lock_ttl / 3``) from a background thread, and the
item names the holder (host, boot, PID namespace, process id and start time). The next caller:

* on the holder's machine, takes the lock over at once when that process is gone (an owner
  check: a SIGKILLed holder blocks nobody) and never while it still runs (Linux; with
  ``lock_owner_check=False``, or elsewhere, the lease alone applies);
* elsewhere, takes it over once the lease has run out (at most ``lock_ttl`` seconds after the
  holder died);
* otherwise gets :class:`ConcurrentResumeError` saying which process holds it, when its lease
  was last renewed and when it would free if that process has died.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager, suppress
from decimal import Decimal
from typing import Any, Final

from dynavec_langgraph._errors import ConcurrentResumeError
from dynavec_langgraph._persistence.dynamodb.table import DynamoDBTable

__all__ = ["DynamoDBResumeLock", "machine"]

_LOCK: Final = "lg_lock"

_log = logging.getLogger(__name__)


# --- who holds a lock (the owner check) ---------------------------------------------------


def _read(path: str) -> str | None:
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def machine() -> str | None:
    """This machine and PID namespace (Linux: boot id + PID namespace); ``None`` elsewhere,
    which turns the owner check off (the lease alone then frees a dead holder's lock)."""
    boot = _read("/proc/sys/kernel/random/boot_id")
    try:
        pidns = os.readlink("/proc/self/ns/pid")
    except OSError:
        return None
    return f"{boot}|{pidns}" if boot else None


def _start_time(pid: int) -> str | None:
    """The start time of process ``pid`` in clock ticks since boot (``/proc/PID/stat``)."""
    stat = _read(f"/proc/{pid}/stat")
    if stat is None:
        return None
    fields = stat.rsplit(")", 1)[-1].split()
    return fields[19] if len(fields) > 19 else None


def _alive(pid: int, started: str | None) -> bool:
    """Whether process ``pid`` of this machine still runs (the same process: same start time,
    when its ``/proc`` entry can be read; another user's process counts as running)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    now = _start_time(pid)
    return now is None or started is None or now == started


class DynamoDBResumeLock(DynamoDBTable):
    """``resume_lock`` / ``aresume_lock``: the lock item, its lease and its heartbeat."""

    lock_ttl: float
    lock_heartbeat: float
    _machine: str | None

    # --- the resume lock ----------------------------------------------------------------

    def _lock_item(self, thread_id: str, owner: str, now: float) -> dict[str, Any]:
        pid = os.getpid()
        return {
            "pk": self._key("lglock", thread_id),
            "type": _LOCK,
            "owner": owner,
            "host": socket.gethostname(),
            "machine": self._machine or "",
            "pid": pid,
            "started": _start_time(pid) or "",
            "renewed_at": Decimal(repr(now)),
            "expires_at": Decimal(repr(now + self.lock_ttl)),
        }

    def _busy(self, thread_id: str, held: Mapping[str, Any], now: float) -> ConcurrentResumeError:
        pid, host = held.get("pid"), held.get("host")
        renewed = now - float(held.get("renewed_at") or now)
        left = float(held.get("expires_at") or now) - now
        local = bool(self._machine) and held.get("machine") == self._machine
        where = "on this machine" if local else f"on host {host!r}"
        if local:
            after = (
                "it is still running (checked just now), so the lock stays with it; it frees "
                "the moment that process ends"
            )
        else:
            after = (
                f"if that process has died, the lock is free {max(left, 0):.0f} s from now "
                f"(lock_ttl={self.lock_ttl:g} s after its last renewal)"
            )
        return ConcurrentResumeError(
            f"another caller is running or resuming thread {thread_id!r} right now: process "
            f"{pid} {where} holds its DynamoDB lock in table {self.table_name!r} (lease "
            f"renewed {renewed:.1f} s ago; {after}). Nothing was done here (no decision "
            "applied, no tool run). Wait for it to finish, then read the thread again before "
            "deciding"
        )

    def _free(self, held: Mapping[str, Any], now: float) -> bool:
        """Whether a held lock may be taken over: its holder is gone (same machine) or, on
        another machine, its lease ran out."""
        if self._machine and held.get("machine") == self._machine:
            started = str(held.get("started") or "") or None
            return not _alive(int(held.get("pid") or 0), started)
        return float(held.get("expires_at") or 0) < now

    def _acquire(self, thread_id: str) -> str:
        owner = uuid.uuid4().hex
        client = self.table.meta.client
        failed = client.exceptions.ConditionalCheckFailedException
        pk = self._key("lglock", thread_id)
        for _ in range(5):
            now = time.time()
            try:
                self._call(
                    self.table.put_item,
                    Item=self._lock_item(thread_id, owner, now),
                    ConditionExpression="attribute_not_exists(pk)",
                )
                return owner
            except failed:
                pass
            held = self._get(pk)
            if held is None:
                continue  # released meanwhile: try again
            if not self._free(held, now):
                raise self._busy(thread_id, held, now)
            try:  # take over the dead holder's lock, unless someone else just did
                self._call(
                    self.table.put_item,
                    Item=self._lock_item(thread_id, owner, now),
                    ConditionExpression="#o = :old",
                    ExpressionAttributeNames={"#o": "owner"},
                    ExpressionAttributeValues={":old": held.get("owner")},
                )
                _log.warning(
                    "took over the DynamoDB lock of thread %r in table %r from process %s on "
                    "%s, which is gone or stopped renewing it",
                    thread_id,
                    self.table_name,
                    held.get("pid"),
                    held.get("host"),
                )
                return owner
            except failed:
                continue
        held = self._get(pk) or {}
        raise self._busy(thread_id, held, time.time())

    def _renew(self, thread_id: str, owner: str) -> bool:
        """Extend the lease; ``False`` when the lock is no longer ours."""
        now = time.time()
        try:
            self._call(
                self.table.update_item,
                Key={"pk": self._key("lglock", thread_id)},
                UpdateExpression="SET expires_at = :exp, renewed_at = :now",
                ConditionExpression="#o = :me",
                ExpressionAttributeNames={"#o": "owner"},
                ExpressionAttributeValues={
                    ":me": owner,
                    ":now": Decimal(repr(now)),
                    ":exp": Decimal(repr(now + self.lock_ttl)),
                },
            )
        except self.table.meta.client.exceptions.ConditionalCheckFailedException:
            return False
        return True

    def _heartbeat(self, thread_id: str, owner: str, stop: threading.Event) -> None:
        while not stop.wait(self.lock_heartbeat):
            try:
                if not self._renew(thread_id, owner):
                    _log.error(
                        "lost the DynamoDB lock of thread %r in table %r: its lease ran out "
                        "and another caller took it (this process was stalled for more than "
                        "lock_ttl=%g s)",
                        thread_id,
                        self.table_name,
                        self.lock_ttl,
                    )
                    return
            except Exception:
                _log.warning("could not renew the DynamoDB lock of %r", thread_id, exc_info=True)

    def _release(self, thread_id: str, owner: str) -> None:
        client = self.table.meta.client
        # taken over by another caller: not ours to delete (the condition fails then)
        with suppress(client.exceptions.ConditionalCheckFailedException):
            self._call(
                self.table.delete_item,
                Key={"pk": self._key("lglock", thread_id)},
                ConditionExpression="#o = :me",
                ExpressionAttributeNames={"#o": "owner"},
                ExpressionAttributeValues={":me": owner},
            )

    def _hold(self, thread_id: str) -> tuple[str, threading.Event, threading.Thread]:
        owner = self._acquire(thread_id)
        stop = threading.Event()
        beat = threading.Thread(
            target=self._heartbeat,
            args=(thread_id, owner, stop),
            name=f"dynamodb-lock-heartbeat-{thread_id}",
            daemon=True,
        )
        beat.start()
        return owner, stop, beat

    def _let_go(self, thread_id: str, held: tuple[str, threading.Event, threading.Thread]) -> None:
        owner, stop, beat = held
        stop.set()
        beat.join(timeout=self.lock_heartbeat + 30)
        self._release(thread_id, owner)

    @contextmanager
    def resume_lock(self, thread_id: str) -> Iterator[None]:
        """Hold the thread's resume lock (never waits), renewing its lease meanwhile.

        Raises:
            ConcurrentResumeError: another live process (or thread) holds it.
        """
        held = self._hold(thread_id)
        try:
            yield
        finally:
            self._let_go(thread_id, held)

    @asynccontextmanager
    async def aresume_lock(self, thread_id: str) -> AsyncIterator[None]:
        """Async twin of :meth:`resume_lock` (the requests run in a worker thread)."""
        held = await asyncio.to_thread(self._hold, thread_id)
        try:
            yield
        finally:
            await asyncio.to_thread(self._let_go, thread_id, held)
