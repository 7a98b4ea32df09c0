"""The guarded resume (``resuming`` and its async twin): the lock, the thread read under it, the
checks and the command, in that order."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import AsyncExitStack, ExitStack, asynccontextmanager, contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import CheckpointTuple
from langgraph.errors import is_invalid_resume
from langgraph.types import StateSnapshot

from dynavec_langgraph._errors import NOTHING_TO_RESUME_TEXT, NothingToResumeError
from dynavec_langgraph._exactly_once.shown import ain_nested, in_doubt_pauses, in_nested
from dynavec_langgraph._graph.conversation_view import pending_calls
from dynavec_langgraph._graph.nodes import until_done
from dynavec_langgraph._graph.tool_call import CompletedCall
from dynavec_langgraph._names import TOOLS_NODE
from dynavec_langgraph._persistence.locks import aresume_lock, resume_lock
from dynavec_langgraph._resuming.answers import Answer, Resume, in_doubt_first, schema_refusal
from dynavec_langgraph._resuming.checks import (
    Crashed,
    may_be_paused_elsewhere,
    plan_resume,
    refuse_foreign_pause,
)
from dynavec_langgraph._resuming.reading import (
    aread_thread,
    aread_thread_once,
    read_thread,
    read_thread_once,
    storage_guard,
)
from dynavec_langgraph._storable import check_id

if TYPE_CHECKING:
    from dynavec_langgraph._pauses.value import InterruptValue
    from dynavec_langgraph._types import CheckpointSaver, UserGraph

__all__ = [
    "ASeed",
    "GuardedResume",
    "Seed",
    "aresuming",
    "asaved_on_cancel",
    "resuming",
]


@contextmanager
def _decision_guard(seen: StateSnapshot | None) -> Iterator[None]:
    """A decision rejected by the pause's ``response_schema`` -> InvalidDecisionError."""
    try:
        yield
    except ValueError as error:
        if seen is None or not is_invalid_resume(error):
            raise
        raise schema_refusal(seen.interrupts, str(error)) from error


Seed = Callable[[StateSnapshot | None], Resume | None]
"""Plan a resume from messages (``ReActAgent.resume(messages, ...)``) when the thread is not
paused; it runs under the lock and may write the thread (it is given the thread as read).
``None``: nothing to seed from, plan the resume as for any thread."""


ASeed = Callable[[StateSnapshot | None], Awaitable[Resume | None]]
"""Async twin of :data:`Seed`."""


def _seeds(snapshot: StateSnapshot | None) -> bool:
    """A resume from messages plans itself: on a new thread, or one that is not paused."""
    return snapshot is None or not snapshot.interrupts


@dataclass(frozen=True)
class GuardedResume:
    """What one guarded resume answers, for either twin (:func:`resuming`,
    :func:`aresuming`): the graph and the saver it locks and reads, the thread (``None``: a
    resume from messages on a new thread nobody else knows, which takes no lock and reads
    nothing), the answer, the run's config, the caller's record of finished calls, and what
    a call whose run died does (``crashed``)."""

    graph: UserGraph
    saver: CheckpointSaver
    thread_id: str | None
    answer: Answer
    config: RunnableConfig
    record: Mapping[str, CompletedCall] | None = None
    crashed: Crashed = "continue"

    def planned(self, snapshot: StateSnapshot | None) -> Resume:
        """The resume planned from the thread as read (``snapshot``; ``None``: nothing
        to resume)."""
        if snapshot is None or self.thread_id is None:
            raise NothingToResumeError(NOTHING_TO_RESUME_TEXT)
        graph, saver, thread_id = self.graph, self.saver, self.thread_id
        return plan_resume(
            graph, snapshot, thread_id, self.answer, saver, self.config, crashed=self.crashed
        )


def _stale_pauses(
    graph: UserGraph,
    snapshot: StateSnapshot,
    stored: CheckpointTuple | None,
    thread_id: str,
    nested: Sequence[CheckpointTuple | None],
) -> dict[str, InterruptValue]:
    """The thread as read under its lock, checked: a pause another process may own is refused
    (:func:`refuse_foreign_pause`); the pauses whose approved call's run died (their in-doubt
    question comes first; ``nested``: the checkpoints of its pending subgraphs, where an agent
    nested in a parent graph keeps its marks)."""
    if may_be_paused_elsewhere(snapshot):
        refuse_foreign_pause(graph, stored, snapshot, thread_id)
    return in_doubt_pauses(stored, snapshot.interrupts, nested)


@contextmanager
def resuming(resume: GuardedResume, seed: Seed | None = None) -> Iterator[Resume]:
    """The guarded resume (see the module's docstring): yields what to send to the graph.

    The caller runs the graph inside the ``with`` block and passes the pauses pending after
    it to :meth:`Resume.settle`. A resume without a thread (``resume.thread_id=None``) takes
    no lock and reads nothing: ``seed`` plans it.

    Example::

        with resuming(GuardedResume(graph, saver, "t1", Answer("approved"), config)) as plan:
            output = graph.invoke(plan.graph_input, plan.config)
            plan.settle(output.get("__interrupt__", []))
    """
    graph, config, thread_id, answer = resume.graph, resume.config, resume.thread_id, resume.answer
    with ExitStack() as stack:
        stack.enter_context(storage_guard(resume.saver, thread_id, resume.record, answer.given))
        snapshot: StateSnapshot | None = None
        if thread_id is not None:
            check_id(thread_id, "thread_id")
            stack.enter_context(resume_lock(resume.saver, thread_id))
            snapshot, stored = read_thread_once(graph, resume.saver, config, thread_id)
            nested = in_nested(graph, resume.saver, config, snapshot)
            stale = _stale_pauses(graph, snapshot, stored, thread_id, nested)
            if stale:  # the approved call's run died: its in-doubt question comes first
                graph.invoke(None, config)  # asks it (nothing runs), under the lock
                after = read_thread(graph, config, thread_id)
                in_doubt_first(answer, thread_id, snapshot, stale, after)
                snapshot = after
        seeded = seed(snapshot) if seed is not None and _seeds(snapshot) else None
        plan = seeded or resume.planned(snapshot)
        with _decision_guard(plan.seen):
            yield plan


@asynccontextmanager
async def aresuming(resume: GuardedResume, seed: ASeed | None = None) -> AsyncIterator[Resume]:
    """Async twin of :func:`resuming`."""
    graph, config, thread_id, answer = resume.graph, resume.config, resume.thread_id, resume.answer
    async with AsyncExitStack() as stack:
        stack.enter_context(storage_guard(resume.saver, thread_id, resume.record, answer.given))
        snapshot: StateSnapshot | None = None
        if thread_id is not None:
            check_id(thread_id, "thread_id")
            await stack.enter_async_context(aresume_lock(resume.saver, thread_id))
            await stack.enter_async_context(asaved_on_cancel(graph, config, resume.record))
            snapshot, stored = await aread_thread_once(graph, resume.saver, config, thread_id)
            nested = await ain_nested(graph, resume.saver, config, snapshot)
            stale = _stale_pauses(graph, snapshot, stored, thread_id, nested)
            if stale:  # as in resuming()
                await graph.ainvoke(None, config)
                after = await aread_thread(graph, config, thread_id)
                in_doubt_first(answer, thread_id, snapshot, stale, after)
                snapshot = after
        seeded = await seed(snapshot) if seed is not None and _seeds(snapshot) else None
        plan = seeded or resume.planned(snapshot)
        with _decision_guard(plan.seen):
            yield plan


@asynccontextmanager
async def asaved_on_cancel(
    graph: UserGraph, config: RunnableConfig, record: Mapping[str, CompletedCall] | None
) -> AsyncIterator[None]:
    """Entered under the thread's lock: when the caller is cancelled (an ``asyncio`` timeout,
    a dropped web request), the tool calls that still ran to their end (a sync tool, which
    the cancellation cannot stop: the tool node waits for it, ``_nodes.until_done``) are
    saved to the thread before the lock is released, as if their step had finished. A retry,
    from this process or another, then continues after them instead of running them again.

    Only the thread's next pending calls are saved, in order, and only updates LangGraph can
    apply as the tool node's (``graph.aupdate_state(..., as_node="tools")``); anything else
    (a tool's ``Command``, parallel mode's held calls) stays in ``record``, which this agent
    object consults on its next call of the thread.
    """
    try:
        yield
    except asyncio.CancelledError:
        if record:
            await until_done(_asave_finished(graph, config, record))
        raise


async def _asave_finished(
    graph: UserGraph, config: RunnableConfig, record: Mapping[str, CompletedCall]
) -> None:
    if TOOLS_NODE not in graph.nodes:
        return
    while True:
        snapshot = await graph.aget_state(config)
        if TOOLS_NODE not in snapshot.next:
            return
        pending = pending_calls((snapshot.values or {}).get("messages") or [])
        call_id = pending[0]["id"] if pending else None
        done = record.get(call_id) if call_id else None
        if done is None or not isinstance(done.update, dict) or "held" in done.update:
            return
        await graph.aupdate_state(config, done.update, as_node=TOOLS_NODE)
