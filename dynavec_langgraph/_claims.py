"""One run per decision inside the graph: the claim a resumed tool call makes before it runs.

The package's own doors (``ReActAgent.resume``, the inbox, the command line) hold the thread's
resume lock while they run the graph. A graph driven by anyone else (``graph.invoke(Command(
resume=...))`` from two processes, a server that does not serialise runs) had nothing to stop
two resumes of one pause from both running the approved tool. The tool node now does it
itself, for a call that is being resumed (the run resumes, and the checkpoint it runs from
holds a pause of this call):

1. it takes the call's own lock without waiting (the thread's resume lock primitive,
   :mod:`dynavec_langgraph._locks`, keyed by thread and call, so the calls of one parallel
   turn resumed together do not exclude each other, and a package door holding the thread's
   lock is no obstacle): :class:`~dynavec_langgraph._errors.ConcurrentResumeError` if another
   caller holds it. Whoever holds it is alive, so a claim found open while holding it was
   left by a caller that died;
2. it reads the thread's latest checkpoint: if that is no longer the one this run resumes,
   another caller applied a decision and the thread moved on → ``ConcurrentResumeError``;
3. it claims the answer it applies (the call id and how many of its pauses were answered
   before: a re-asked approval is a new answer) with a write on that checkpoint that only the
   first writer gets (every LangGraph saver keeps the first write of a task id and index),
   read back to see who got it unless the lock already excludes other processes (a SQLite
   file's, a PostgreSQL advisory lock: then no other caller can be writing it);
   a claim of the call already marked done by another caller, under any answer count →
   ``ConcurrentResumeError`` (the call ran to its end from this checkpoint: once its task's
   writes are saved, before the next checkpoint is, the winner's decision is among the answers
   counted, so a late caller would otherwise count one more and claim that); a claim left open
   by a caller that died mid-call (it no longer holds the lock) → the call runs again under a
   new claim, as a resume after a crash always did;
4. the tool runs; when it ends (or pauses again) the claim is marked finished (or closed) on
   the same checkpoint *before* the node returns, so a caller that comes after the lock is
   released, but before LangGraph saved the next checkpoint, still sees it.

The loser of a race is told through ``invoke()``: the ``ConcurrentResumeError`` names the
thread and the call and says that nothing ran for it. The claim writes use a task id and a
channel of their own, which LangGraph ignores when it loads the checkpoint.

What it reads from LangGraph that is not a public name (langgraph 1.2.24, pinned by
``tests/test_claims.py``): the task config's ``"checkpoint_map"`` (the checkpoint each
namespace runs from), ``"__pregel_resuming"`` (the run resumes), the namespace separator
``"|"``, and the pending-write channels ``"__interrupt__"`` / ``"__resume__"`` of a paused task
(``langgraph._internal._constants``).
"""

from __future__ import annotations

import hashlib
import re
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, ExitStack, asynccontextmanager, contextmanager
from dataclasses import dataclass
from typing import Any, Final

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple
from langgraph.errors import GraphInterrupt

from dynavec_langgraph._errors import ConcurrentResumeError
from dynavec_langgraph._lg_names import INTERRUPT_WRITE, RESUME_WRITE
from dynavec_langgraph._persistence.locks import aresume_lock, resume_lock
from dynavec_langgraph._run_data import RunData
from dynavec_langgraph.interrupt import ToolCallRef, interrupt_fields

__all__ = ["CLAIM_CHANNEL", "CLAIM_REFUSED", "aclaimed", "claimed"]

CLAIM_CHANNEL: Final = "__dynavec_claim__"
"""The channel of the claim writes (no channel of the graph has this name)."""
_CLAIM_PREFIX: Final = "dynavec-claim:"
_INTERRUPT: Final = INTERRUPT_WRITE
_RESUME: Final = RESUME_WRITE
_BUSY: Final = "is being resumed by another caller right now"
CLAIM_REFUSED: Final = "nothing ran here and your decision was not applied"
"""Part of every refusal's message (a server that keeps only the message of a failed run,
such as Aegra, is read by it: :mod:`dynavec_langgraph.remote`)."""


def _refused(thread_id: str, call: ToolCallRef, why: str) -> ConcurrentResumeError:
    return ConcurrentResumeError(
        f"thread {thread_id!r}: call {call['id']!r} ({call['name']}) {why}; {CLAIM_REFUSED}. "
        "Read the thread again (graph.get_state) to see "
        "its outcome before deciding again"
    )


@dataclass
class _Target:
    """Where the claim of one resumed call lives."""

    saver: BaseCheckpointSaver[Any]
    thread_id: str
    base: RunnableConfig  # the checkpoint this run resumes (thread, namespace, id)
    latest: RunnableConfig  # the thread's latest checkpoint in that namespace


def _target(data: RunData) -> _Target | None:
    if not data.resuming:
        return None
    saver, thread_id = data.saver, data.thread_id
    parent, checkpoint_id = data.parent_ns, data.parent_checkpoint_id
    if saver is None or thread_id is None or not checkpoint_id:
        return None
    tid = str(thread_id)
    base: RunnableConfig = {
        "configurable": {"thread_id": tid, "checkpoint_ns": parent, "checkpoint_id": checkpoint_id}
    }
    latest: RunnableConfig = {"configurable": {"thread_id": tid, "checkpoint_ns": parent}}
    return _Target(saver, tid, base, latest)


def _lock_key(thread_id: str, call_id: str) -> str:
    """The name the call's lock is taken under (a lock of its own, beside the thread's): the
    thread id plus a digest of the call id, so a lock that names files or keys after the
    thread id (a user's ``resume_lock``) gets only characters it already takes."""
    digest = hashlib.sha256(call_id.encode()).hexdigest()[:16]
    return f"{thread_id}.claim-{digest}"


@dataclass
class _Plan:
    """What the read of the checkpoint says: claim ``task_id`` (or refuse, or nothing)."""

    task_id: str | None = None
    refusal: str | None = None


def _plan(tup: CheckpointTuple | None, target: _Target, call_id: str) -> _Plan:
    """Read the thread's latest checkpoint: is it the one resumed, is this call paused there,
    which claim comes next."""
    conf = (tup.config.get("configurable") or {}) if tup is not None else {}
    if tup is None or conf.get("checkpoint_id") != target.base["configurable"]["checkpoint_id"]:
        return _Plan(refusal="was resumed by another caller, and the thread has moved on")
    writes = tup.pending_writes or []
    task = next(
        (
            tid
            for tid, channel, value in writes
            if channel == _INTERRUPT and _pauses_call(value, call_id)
        ),
        None,
    )
    if task is None:
        return _Plan()  # not a pause of this call: nothing to claim
    answered = next(
        (len(v) for tid, ch, v in writes if tid == task and ch == _RESUME and isinstance(v, list)),
        0,
    )
    claims = _claims_of(writes, call_id)
    # a claim of this call marked done, whatever answer it claimed, means the call ran to its
    # end from this checkpoint. It is looked for under every answer: when a caller takes the
    # lock after the winner's call ended but before LangGraph saved the next checkpoint, the
    # winner's own decision is already among the recorded answers (LangGraph saved the task's
    # writes), and counting it as an earlier answer would claim a new one and run it again
    if any("done" in states for by_attempt in claims.values() for states in by_attempt.values()):
        return _Plan(refusal="was resumed by another caller, which ran it")
    # open claims left by callers that died mid-call are in doubt: run again, a new attempt
    attempt = max(claims.get(answered, {}), default=-1) + 1
    return _Plan(task_id=f"{_CLAIM_PREFIX}{call_id}:{answered}:{attempt}")


def _claims_of(writes: list[tuple[str, str, Any]], call_id: str) -> dict[int, dict[int, set[str]]]:
    """The claims of ``call_id`` on a checkpoint: ``{answer: {attempt: states}}`` (the task id
    ``dynavec-claim:<call id>:<answer>:<attempt>[:<end>]``; read from its end, since a call id
    may hold ``:``)."""
    prefix = f"{_CLAIM_PREFIX}{call_id}:"
    claims: dict[int, dict[int, set[str]]] = {}
    for tid, channel, value in writes:
        if channel != CLAIM_CHANNEL or not tid.startswith(prefix) or not isinstance(value, dict):
            continue
        match = _CLAIM_TAIL.fullmatch(tid.removeprefix(prefix))
        if match is None:
            continue  # another call's, whose id starts with this one's and a ":"
        by_attempt = claims.setdefault(int(match[1]), {})
        by_attempt.setdefault(int(match[2]), set()).add(str(value.get("state")))
    return claims


_CLAIM_TAIL: Final = re.compile(r"(\d+):(\d+)(?::(?:done|closed))?")
"""What follows the call id in a claim's task id: the answer, the attempt, the end mark."""


def _pauses_call(value: Any, call_id: str) -> bool:
    items = value if isinstance(value, list | tuple) else [value]
    for item in items:
        call = interrupt_fields(item).tool_call
        if call is not None and call.get("id") == call_id:
            return True
    return False


def _claim_write(state: str, task_id: str, token: str) -> list[tuple[str, Any]]:
    attempt = int(task_id.rsplit(":", 1)[1])
    return [(CLAIM_CHANNEL, {"state": state, "attempt": attempt, "owner": token})]


def _won(tup: CheckpointTuple | None, task_id: str, token: str) -> bool:
    return any(
        tid == task_id and ch == CLAIM_CHANNEL and isinstance(v, dict) and v.get("owner") == token
        for tid, ch, v in (tup.pending_writes if tup is not None else None) or []
    )


class _Claim:
    """A won claim: marked finished (or closed by a new pause) when the call ends."""

    def __init__(self, target: _Target, task_id: str, token: str) -> None:
        self.target = target
        self.task_id = task_id
        self.token = token

    def ending(self, error: BaseException | None) -> tuple[str, list[tuple[str, Any]]] | None:
        """The write that ends the claim: ``done`` after the call returned, ``closed`` when it
        paused again; none when it failed (in doubt: the next resume runs it again)."""
        if error is None:
            state = "done"
        elif isinstance(error, GraphInterrupt):
            state = "closed"
        else:
            return None
        task_id = f"{self.task_id}:{state}"
        return task_id, _claim_write(state, self.task_id, self.token)


@contextmanager
def claimed(data: RunData, call: ToolCallRef) -> Iterator[None]:
    """Around one tool call in the tool node: the claim of a resumed call (nothing for any
    other call). Raises ``ConcurrentResumeError`` before the tool runs if it lost."""
    target = _target(data)
    if target is None:
        yield
        return
    with ExitStack() as stack:
        try:
            exclusive = stack.enter_context(
                resume_lock(target.saver, _lock_key(target.thread_id, call["id"]))
            )
        except ConcurrentResumeError:
            raise _refused(target.thread_id, call, _BUSY) from None
        plan = _plan(target.saver.get_tuple(target.latest), target, call["id"])
        if plan.refusal is not None:
            raise _refused(target.thread_id, call, plan.refusal)
        if plan.task_id is None:
            yield
            return
        token = uuid.uuid4().hex
        target.saver.put_writes(
            target.base, _claim_write("open", plan.task_id, token), plan.task_id
        )
        if not exclusive and not _won(target.saver.get_tuple(target.base), plan.task_id, token):
            raise _refused(target.thread_id, call, _BUSY)
        claim = _Claim(target, plan.task_id, token)
        try:
            yield
        except BaseException as error:
            end = claim.ending(error)
            if end is not None:
                target.saver.put_writes(target.base, end[1], end[0])
            raise
        end = claim.ending(None)
        assert end is not None
        target.saver.put_writes(target.base, end[1], end[0])


@asynccontextmanager
async def aclaimed(data: RunData, call: ToolCallRef) -> AsyncIterator[None]:
    """Async twin of :func:`claimed`."""
    target = _target(data)
    if target is None:
        yield
        return
    async with AsyncExitStack() as stack:
        try:
            exclusive = await stack.enter_async_context(
                aresume_lock(target.saver, _lock_key(target.thread_id, call["id"]))
            )
        except ConcurrentResumeError:
            raise _refused(target.thread_id, call, _BUSY) from None
        plan = _plan(await target.saver.aget_tuple(target.latest), target, call["id"])
        if plan.refusal is not None:
            raise _refused(target.thread_id, call, plan.refusal)
        if plan.task_id is None:
            yield
            return
        token = uuid.uuid4().hex
        await target.saver.aput_writes(
            target.base, _claim_write("open", plan.task_id, token), plan.task_id
        )
        if not exclusive and not _won(
            await target.saver.aget_tuple(target.base), plan.task_id, token
        ):
            raise _refused(target.thread_id, call, _BUSY)
        claim = _Claim(target, plan.task_id, token)
        try:
            yield
        except BaseException as error:
            end = claim.ending(error)
            if end is not None:
                await target.saver.aput_writes(target.base, end[1], end[0])
            raise
        end = claim.ending(None)
        assert end is not None
        await target.saver.aput_writes(target.base, end[1], end[0])
