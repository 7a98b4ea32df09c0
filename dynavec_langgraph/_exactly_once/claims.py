"""One run per decision inside the graph: the claim a resumed tool call makes before it runs.

The package's own doors (``ReActAgent.resume``, the inbox, the command line) hold the thread's
resume lock while they run the graph. A graph driven by anyone else (``graph.invoke(Command(
resume=...))`` from two processes, a server that does not serialise runs) had nothing to stop
two resumes of one pause from both running the approved tool. The tool node now does it
itself, for a call that is being resumed (the run resumes, and the checkpoint it runs from
holds a pause of this call):

1. it takes the call's own lock without waiting (the thread's resume lock primitive,
   :mod:`dynavec_langgraph._persistence.locks`, keyed by thread and call, so the calls of one
   parallel turn resumed together do not exclude each other, and a package door holding the
   thread's lock is no obstacle): :class:`~dynavec_langgraph._errors.ConcurrentResumeError`
   if another caller holds it. Whoever holds it is alive, so a claim found open while holding
   it was left by a caller that died;
2. it reads the thread's latest checkpoint: if that is no longer the one this run resumes,
   another caller applied a decision and the thread moved on → ``ConcurrentResumeError``;
3. it checks that this run answers the pause that is open now: the answers it has for the
   call's earlier pauses (LangGraph gives the task the answers recorded when the run loaded
   the checkpoint, then this run's own) must be the recorded ones. A run that loaded the
   checkpoint before another caller's answer made the call ask again has fewer, or its own
   decision in that answer's place: it answers a pause that is answered →
   ``ConcurrentResumeError``. So is a run that comes while such a new pause is being saved
   (the claim of the answer it would give was closed a moment ago, see 5);
4. it claims the answer it applies (the call id and how many of its pauses were answered
   before: a re-asked approval is a new answer) with a write on that checkpoint that only the
   first writer gets (every LangGraph saver keeps the first write of a task id and index),
   read back to see who got it unless the lock already excludes other processes (a SQLite
   file's, a PostgreSQL advisory lock: then no other caller can be writing it);
   a claim of the call already marked done by another caller, under any answer count →
   ``ConcurrentResumeError`` (the call ran to its end from this checkpoint: once its task's
   writes are saved, before the next checkpoint is, the winner's decision is among the answers
   counted, so a late caller would otherwise count one more and claim that); a claim left open
   by a caller that died mid-call (it no longer holds the lock), or closed long ago with no new
   pause saved after it → the call runs again under a new claim, as a resume after a crash
   always did;
5. the tool runs; when it ends (or pauses again) the claim is marked finished (or closed, with
   the time) on the same checkpoint *before* the node returns, so a caller that comes after
   the lock is released, but before LangGraph saved the next checkpoint (or the new pause),
   still sees it.

The loser of a race is told through ``invoke()``: the ``ConcurrentResumeError`` names the
thread and the call and says that nothing ran for it. The claim writes use a task id and a
channel of their own, which LangGraph ignores when it loads the checkpoint.

What it reads from LangGraph that is not a public name (langgraph 1.2.24, pinned by
``tests/test_claims.py``): the task config's ``"checkpoint_map"`` (the checkpoint each
namespace runs from), ``"__pregel_resuming"`` (the run resumes), the ``resume`` list of the
task's ``"__pregel_scratchpad"`` (its answers in this run; without it, step 3 compares
nothing), the namespace separator ``"|"``, and the pending-write channels ``"__interrupt__"`` /
``"__resume__"`` of a paused task (``langgraph._internal._constants``).
"""

from __future__ import annotations

import hashlib
import re
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, ExitStack, asynccontextmanager, contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import CheckpointTuple
from langgraph.errors import GraphInterrupt

from dynavec_langgraph._errors import ConcurrentResumeError
from dynavec_langgraph._graph.call_ids import ToolCallRef
from dynavec_langgraph._graph.run_data import RunData
from dynavec_langgraph._lg_names import INTERRUPT_WRITE, RESUME_WRITE
from dynavec_langgraph._names import CLAIM_CHANNEL, CLAIM_PREFIX
from dynavec_langgraph._pauses.ask import open_pauses
from dynavec_langgraph._pauses.value import interrupt_fields
from dynavec_langgraph._persistence.locks import aresume_lock, resume_lock
from dynavec_langgraph._types import JSONObject, UserPayload

if TYPE_CHECKING:
    from langgraph.checkpoint.base import PendingWrite

    from dynavec_langgraph._types import Saver

__all__ = ["CLAIM_REFUSED", "aclaimed", "claimed"]

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


def _held(busy: ConcurrentResumeError) -> str:
    """Why the call's own lock refused: :data:`_BUSY`, and what its lock said (who holds it,
    when it frees: a holder that died on another machine keeps it until its lease ends)."""
    return f"{_BUSY} (the call's lock: {busy})"


@dataclass
class _Target:
    """Where the claim of one resumed call lives."""

    saver: Saver
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
    pauses: frozenset[str] = frozenset()
    """The ids of the call's pauses open on the checkpoint (the ones this run answers)."""
    nodes: frozenset[str] = frozenset()
    """The node ids of those pauses (:func:`~dynavec_langgraph._pauses.ask.open_pauses`)."""
    recorded: int = 0
    """The answers the task had recorded on the checkpoint before this run."""


def _plan(
    tup: CheckpointTuple | None,
    target: _Target,
    call_id: str,
    answers: tuple[UserPayload, ...] | None,
) -> _Plan:
    """Read the thread's latest checkpoint: is it the one resumed, is this call paused there,
    does this run answer the pause that is open now (``answers``: the task's answers in this
    run, :attr:`RunData.answers`), which claim comes next."""
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
    items = [
        item
        for tid, channel, value in writes
        if tid == task and channel == _INTERRUPT
        for item in _items(value)
        if _pauses_call(item, call_id)
    ]
    pauses = frozenset(str(item.id) for item in items if getattr(item, "id", None))
    nodes = frozenset(str(interrupt_fields(item).node_id) for item in items)
    recorded: list[UserPayload] = next(
        (v for tid, ch, v in writes if tid == task and ch == _RESUME and isinstance(v, list)), []
    )
    answered = len(recorded)
    claims = _claims_of(writes, call_id)
    # a claim of this call marked done, whatever answer it claimed, means the call ran to its
    # end from this checkpoint. It is looked for under every answer: when a caller takes the
    # lock after the winner's call ended but before LangGraph saved the next checkpoint, the
    # winner's own decision is already among the recorded answers (LangGraph saved the task's
    # writes), and counting it as an earlier answer would claim a new one and run it again
    if any("done" in marks for by_attempt in claims.values() for marks in by_attempt.values()):
        return _Plan(refusal="was resumed by another caller, which ran it")
    # the answers this run has for the call's earlier pauses must be the recorded ones: a run
    # that loaded the checkpoint before another caller's answer made the call ask again has
    # fewer, or its own decision in the place of that answer (it answers a pause that is
    # answered, not the one open now)
    if answers is not None and not _agrees(answers, recorded, target.saver):
        return _Plan(refusal="was resumed by another caller, which answered that pause first")
    mine = claims.get(answered, {})
    # a claim of this very answer closed a moment ago with the call asking again (a new
    # pause): LangGraph is saving it, and the pause this run answers was answered. Long closed
    # and still not followed by the new pause: its caller died in between, in doubt like an
    # open claim. (Closed on the same pause, the call was only run again: nothing answered.)
    if any(_asked_again(marks.get("closed")) for marks in mine.values()):
        return _Plan(refusal=_BUSY)
    # open claims left by callers that died mid-call are in doubt: run again, a new attempt
    attempt = max(mine, default=-1) + 1
    task_id = f"{CLAIM_PREFIX}{call_id}:{answered}:{attempt}"
    return _Plan(task_id=task_id, pauses=pauses, nodes=nodes, recorded=answered)


_SAVING: Final = 30.0
"""Seconds after a claim closed (its call asked again) within which the new pause is taken as
being saved by LangGraph (it takes milliseconds), not lost with a caller that died."""


def _asked_again(mark: JSONObject | None) -> bool:
    """Whether a ``closed`` mark says the call moved on to a new pause, ``_SAVING`` s ago at
    most."""
    if mark is None or not mark.get("asked_again"):
        return False
    at = mark.get("at")
    return isinstance(at, int | float) and time.time() - at < _SAVING


def _agrees(answers: tuple[UserPayload, ...], recorded: list[UserPayload], saver: Saver) -> bool:
    """Whether ``answers`` starts with the ``recorded`` ones (equal, or stored alike)."""
    return len(answers) >= len(recorded) and all(
        _same(mine, theirs, saver) for mine, theirs in zip(answers, recorded, strict=False)
    )


def _same(mine: UserPayload, theirs: UserPayload, saver: Saver) -> bool:
    try:
        if mine is theirs or bool(mine == theirs):
            return True
    except (TypeError, ValueError):  # a value whose == is no truth value
        pass
    try:  # a value without ==: two loads of one stored answer are stored alike
        return saver.serde.dumps_typed(mine) == saver.serde.dumps_typed(theirs)
    except (TypeError, ValueError):
        return False


def _claims_of(
    writes: list[PendingWrite], call_id: str
) -> dict[int, dict[int, dict[str, JSONObject]]]:
    """The claims of ``call_id`` on a checkpoint: ``{answer: {attempt: {state: mark}}}`` (the
    task id ``dynavec-claim:<call id>:<answer>:<attempt>[:<end>]``; read from its end, since a
    call id may hold ``:``)."""
    prefix = f"{CLAIM_PREFIX}{call_id}:"
    claims: dict[int, dict[int, dict[str, JSONObject]]] = {}
    for tid, channel, value in writes:
        if channel != CLAIM_CHANNEL or not tid.startswith(prefix) or not isinstance(value, dict):
            continue
        match = _CLAIM_TAIL.fullmatch(tid.removeprefix(prefix))
        if match is None:
            continue  # another call's, whose id starts with this one's and a ":"
        by_attempt = claims.setdefault(int(match[1]), {})
        by_attempt.setdefault(int(match[2]), {})[str(value.get("state"))] = value
    return claims


_CLAIM_TAIL: Final = re.compile(r"(\d+):(\d+)(?::(?:done|closed))?")
"""What follows the call id in a claim's task id: the answer, the attempt, the end mark."""


def _items(value: UserPayload) -> list[UserPayload]:
    """The interrupts of a task's ``__interrupt__`` write (or of a ``GraphInterrupt``)."""
    return list(value) if isinstance(value, list | tuple) else [value]


def _pauses_call(value: UserPayload, call_id: str) -> bool:
    for item in _items(value):
        call = interrupt_fields(item).tool_call
        if call is not None and call.get("id") == call_id:
            return True
    return False


def _claim_write(
    state: str, task_id: str, token: str, **more: object
) -> list[tuple[str, JSONObject]]:
    attempt = int(task_id.rsplit(":", 1)[1])
    mark: JSONObject = {
        "state": state,
        "attempt": attempt,
        "owner": token,
        "at": time.time(),
        **more,
    }
    return [(CLAIM_CHANNEL, mark)]


def _won(tup: CheckpointTuple | None, task_id: str, token: str) -> bool:
    return any(
        tid == task_id and ch == CLAIM_CHANNEL and isinstance(v, dict) and v.get("owner") == token
        for tid, ch, v in (tup.pending_writes if tup is not None else None) or []
    )


class _Claim:
    """A claim to write: opened on the checkpoint the run resumes, then marked finished (or
    closed by a new pause) when the call ends. The sync and async doors below add only the
    saver calls (the lock, the reads and the writes)."""

    def __init__(self, target: _Target, plan: _Plan, call: ToolCallRef) -> None:
        assert plan.task_id is not None
        self.target = target
        self.call = call
        self.task_id = plan.task_id
        self.pauses = plan.pauses
        self.token = uuid.uuid4().hex

    def opening(self) -> tuple[list[tuple[str, JSONObject]], str]:
        """The write that opens the claim (``put_writes``' writes and task id)."""
        return _claim_write("open", self.task_id, self.token), self.task_id

    def check_won(self, tup: CheckpointTuple | None) -> None:
        """Raise ``ConcurrentResumeError`` unless the opening write read back is this one."""
        if not _won(tup, self.task_id, self.token):
            raise _refused(self.target.thread_id, self.call, _BUSY)

    def finished(self) -> tuple[list[tuple[str, JSONObject]], str]:
        """The write that ends the claim after the call returned: ``done``."""
        return _claim_write("done", self.task_id, self.token), f"{self.task_id}:done"

    def ending(self, error: BaseException) -> tuple[list[tuple[str, JSONObject]], str] | None:
        """The write that ends the claim when the call raised ``error``: ``closed`` when it
        paused again (``asked_again``: on a new pause, so it applied this run's answer); none
        when it failed (in doubt: the next resume runs it again)."""
        if not isinstance(error, GraphInterrupt):
            return None
        raised = {
            str(i.id) for i in _items(error.args[0] if error.args else ()) if hasattr(i, "id")
        }
        again = bool(raised - self.pauses) and bool(self.pauses)
        write = _claim_write("closed", self.task_id, self.token, asked_again=again)
        return write, f"{self.task_id}:closed"


def _claim(
    tup: CheckpointTuple | None,
    target: _Target,
    data: RunData,
    call: ToolCallRef,
    stack: ExitStack | AsyncExitStack,
) -> _Claim | None:
    """The claim the thread's latest checkpoint ``tup`` calls for, its refusal raised; the
    call's open pauses entered on ``stack`` (``None``: the call has nothing to claim)."""
    plan = _plan(tup, target, call["id"], data.answers)
    if plan.refusal is not None:
        raise _refused(target.thread_id, call, plan.refusal)
    stack.enter_context(open_pauses(plan.nodes, plan.recorded))
    return None if plan.task_id is None else _Claim(target, plan, call)


@contextmanager
def claimed(data: RunData, call: ToolCallRef) -> Iterator[None]:
    """Around one tool call in the tool node: the claim of a resumed call (nothing for any
    other call). Raises ``ConcurrentResumeError`` before the tool runs if it lost."""
    target = _target(data)
    if target is None:
        yield
        return
    saver, key = target.saver, _lock_key(target.thread_id, call["id"])
    with ExitStack() as stack:
        try:
            exclusive = stack.enter_context(resume_lock(saver, key))
        except ConcurrentResumeError as busy:
            raise _refused(target.thread_id, call, _held(busy)) from None
        claim = _claim(saver.get_tuple(target.latest), target, data, call, stack)
        if claim is None:
            yield
            return
        saver.put_writes(target.base, *claim.opening())
        if not exclusive:
            claim.check_won(saver.get_tuple(target.base))
        try:
            yield
        except BaseException as error:
            if (end := claim.ending(error)) is not None:
                saver.put_writes(target.base, *end)
            raise
        saver.put_writes(target.base, *claim.finished())


@asynccontextmanager
async def aclaimed(data: RunData, call: ToolCallRef) -> AsyncIterator[None]:
    """Async twin of :func:`claimed`."""
    target = _target(data)
    if target is None:
        yield
        return
    saver, key = target.saver, _lock_key(target.thread_id, call["id"])
    async with AsyncExitStack() as stack:
        try:
            exclusive = await stack.enter_async_context(aresume_lock(saver, key))
        except ConcurrentResumeError as busy:
            raise _refused(target.thread_id, call, _held(busy)) from None
        claim = _claim(await saver.aget_tuple(target.latest), target, data, call, stack)
        if claim is None:
            yield
            return
        await saver.aput_writes(target.base, *claim.opening())
        if not exclusive:
            claim.check_won(await saver.aget_tuple(target.base))
        try:
            yield
        except BaseException as error:
            if (end := claim.ending(error)) is not None:
                await saver.aput_writes(target.base, *end)
            raise
        await saver.aput_writes(target.base, *claim.finished())
