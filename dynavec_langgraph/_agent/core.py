"""The agent's construction and the cores its doors share: the options checked, the graph
built, the guard and lock around a call, the stream, the result."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator, Sequence
from contextlib import (
    AbstractAsyncContextManager,
    AbstractContextManager,
    asynccontextmanager,
    contextmanager,
    nullcontext,
)
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, ParamSpec, Self, TypeVar

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Durability, Interrupt, StateSnapshot

from dynavec_langgraph._audit.switch import check_audit
from dynavec_langgraph._dynavec.records import AgentResult, AgentState, Message
from dynavec_langgraph._dynavec.view import build_result
from dynavec_langgraph._errors import ApprovalPolicyError
from dynavec_langgraph._graph.factory import build_agent, with_bookkeeping
from dynavec_langgraph._graph.run_data import CompletedCall, durability
from dynavec_langgraph._graph.spec import AgentSpec, check_max_steps, prebuilt_options
from dynavec_langgraph._names import AGENT_NODE
from dynavec_langgraph._pauses.policy.doors import agent_clock
from dynavec_langgraph._persistence.adapter import DynavecCheckpointSaver
from dynavec_langgraph._persistence.locks import aresume_lock, resume_lock
from dynavec_langgraph._persistence.scratch import ScratchThreads
from dynavec_langgraph._resuming.reading import storage_guard
from dynavec_langgraph._storable import check_id

if TYPE_CHECKING:  # the audit trail, events and memory are imported where they are used
    from langgraph.checkpoint.base import CheckpointTuple

    from dynavec_langgraph._audit.entries import Notifier
    from dynavec_langgraph._audit.storage import Target
    from dynavec_langgraph._dynavec.memory import BaseMemory
    from dynavec_langgraph._dynavec.registry import ToolRegistry
    from dynavec_langgraph._persistence.records import CheckpointerOption
    from dynavec_langgraph._types import (
        CheckpointSaver,
        CompiledAgent,
        ModelOption,
        StateUpdate,
        ToolOption,
        UserPayload,
    )
    from dynavec_langgraph.events import AgentEvent, ResultEvent

from dynavec_langgraph.savers import (
    ConnectionSaver,
    resolve_checkpointer,
)

__all__ = [
    "DEFAULT_SYSTEM_PROMPT",
    "DURABILITY",
    "AgentCore",
    "AsyncCalls",
    "Calls",
    "Done",
    "drive",
    "exists",
]

DEFAULT_SYSTEM_PROMPT = (
    "You are a helpful and precise reasoning agent.\n"
    "Think step by step about what the task needs before you act.\n"
    "Call a tool when it helps, read its result, and repeat until you can answer.\n"
    "When you have the answer, reply with it directly without calling a tool."
)
"""The system prompt of a ``ReActAgent`` given no ``system_prompt=`` (dynavec's
``DEFAULT_REACT_SYSTEM_PROMPT``): four lines, the first dynavec's own; dynavec's other three
lines are not known here, so these are this package's (docs/compatibility.md A4)."""

DURABILITY: Durability = durability("agent")
"""The durability of every run of ``ReActAgent`` (:func:`._run_data.durability`)."""


# --- plain functions: inputs, checks, results -------------------------------------------


def _check_thread_id(thread_id: object) -> None:
    if thread_id is not None and (not isinstance(thread_id, str) or not thread_id.strip()):
        raise TypeError(
            f"thread_id={thread_id!r}: pass a non-empty string naming the thread, or None for "
            "a new thread"
        )


def exists(snapshot: StateSnapshot) -> bool:
    return snapshot.created_at is not None


@asynccontextmanager
async def _anull() -> AsyncIterator[None]:
    yield


def _is_memory(memory: object) -> bool:
    from dynavec_langgraph._dynavec.memory import BaseMemory  # imported for an agent given a memory

    return isinstance(memory, BaseMemory)


_P = ParamSpec("_P")
_T = TypeVar("_T")


class Calls:
    """The I/O calls a door's shared core makes (``async def`` cores, written once): here each
    is the blocking call, made in the calling thread, so a core given these never suspends and
    a sync door runs it with :func:`drive`. :class:`AsyncCalls` awaits each instead. (The
    "sans-I/O" shape: the planning and finishing live once, only the I/O line is twice.)"""

    __slots__ = ("graph", "saver")

    def __init__(self, graph: CompiledAgent, saver: CheckpointSaver) -> None:
        self.graph, self.saver = graph, saver

    async def get_state(self, config: RunnableConfig) -> StateSnapshot:
        return self.graph.get_state(config)

    async def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return self.saver.get_tuple(config)

    async def invoke(self, graph_input: UserPayload, config: RunnableConfig) -> UserPayload:
        return self.graph.invoke(graph_input, config, durability=DURABILITY)

    async def update_state(self, config: RunnableConfig, values: StateUpdate) -> None:
        self.graph.update_state(config, values, as_node=AGENT_NODE)

    async def offload(self, fn: Callable[_P, _T], *args: _P.args, **kwargs: _P.kwargs) -> _T:
        """``fn`` (blocking I/O of its own) called here; :class:`AsyncCalls` runs it in a
        worker thread."""
        return fn(*args, **kwargs)


class AsyncCalls(Calls):
    """:class:`Calls` awaited: an async door awaits the core given these."""

    __slots__ = ()

    async def get_state(self, config: RunnableConfig) -> StateSnapshot:
        return await self.graph.aget_state(config)

    async def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return await self.saver.aget_tuple(config)

    async def invoke(self, graph_input: UserPayload, config: RunnableConfig) -> UserPayload:
        return await self.graph.ainvoke(graph_input, config, durability=DURABILITY)

    async def update_state(self, config: RunnableConfig, values: StateUpdate) -> None:
        await self.graph.aupdate_state(config, values, as_node=AGENT_NODE)

    async def offload(self, fn: Callable[_P, _T], *args: _P.args, **kwargs: _P.kwargs) -> _T:
        return await asyncio.to_thread(fn, *args, **kwargs)


def drive(core: Coroutine[object, object, _T]) -> _T:
    """The result of ``core``, a core given :class:`Calls`: its awaits do not suspend, so it
    ends at its first step (a sync door's way to run the core its async twin awaits)."""
    try:
        core.send(None)
    except StopIteration as finished:
        result: _T = finished.value
        return result
    core.close()
    raise RuntimeError("a door's core suspended on blocking Calls (an await of its own)")


@dataclass
class Done:
    """The end of a streamed run: the thread's state afterwards, set when the stream ends."""

    snapshot: StateSnapshot | None = None

    def final(self) -> StateSnapshot:
        """The thread's state after the stream (which has ended)."""
        assert self.snapshot is not None
        return self.snapshot


class AgentCore:
    """``ReActAgent``'s construction and what its doors share (the base of its parts)."""

    def __init__(
        self,
        model: ModelOption,
        tools: Sequence[ToolOption] | ToolRegistry | None = None,
        system_prompt: str | None = None,
        max_steps: int = 10,
        checkpointer: CheckpointerOption = None,
        memory: BaseMemory | None = None,
        *,
        parallel_tool_calls: bool = False,
        audit: bool = False,
        notify: Notifier | None = None,
        **options: UserPayload,
    ) -> None:
        check_audit(audit)
        if memory is not None and not _is_memory(memory):
            raise TypeError(
                f"memory={memory!r:.80}: pass a dynavec_langgraph.memory.BaseMemory "
                "(InMemoryMemoryStore, DynamoDBMemoryStore) or None"
            )
        self.memory = memory
        self._memory_scratch: set[str] = set()  # threads without a thread_id: no memory
        self.system_prompt = DEFAULT_SYSTEM_PROMPT if system_prompt is None else system_prompt
        self.max_steps = check_max_steps(max_steps)
        self._completed: dict[str, dict[str, CompletedCall]] = {}
        saver = resolve_checkpointer(checkpointer)
        if isinstance(saver, DynavecCheckpointSaver) and saver is not checkpointer:
            saver.system_prompt = self.system_prompt or None  # dynavec's records start with it
        self._given_saver = saver is not None
        self.checkpointer = saver if saver is not None else InMemorySaver()
        self._owned_saver = saver if isinstance(saver, ConnectionSaver) else None
        # runs without a thread_id never reach a given checkpointer (_scratch.py)
        self._saver = ScratchThreads(saver) if saver is not None else self.checkpointer
        options = prebuilt_options(options, stacklevel=2)  # as create_react_agent checks them
        spec = AgentSpec(
            model=model,
            tools=tools,
            system_prompt=self.system_prompt or None,
            max_steps=self.max_steps,
            checkpointer=self._saver,
            name="dynavec_react_agent",
            parallel_tool_calls=parallel_tool_calls,
            **options,  # create_react_agent's other options (response_format, middleware, ...)
        )
        # the runs' output carries the bookkeeping (termination_reason, shared, ...)
        self.graph = with_bookkeeping(build_agent(spec))
        if audit or notify is not None:  # the audit trail's module only for an agent that has one
            from dynavec_langgraph._audit.trail import with_audit

            self.graph = with_audit(self.graph, audit=audit, notify=notify, surface="api")
        self._notify = notify
        self._approval_clock = agent_clock(spec.approval_policy)

    def _approval_now(self) -> datetime:
        """The time the doors compare deadlines with (the approval policy's clock).

        Raises:
            ApprovalPolicyError: the clock raised (nothing was sent: the pause stays).
        """
        clock = self._approval_clock
        if clock is None:
            return datetime.now(UTC)
        try:
            return clock()
        except Exception as error:
            raise ApprovalPolicyError(None, "clock", error) from error

    def _scratch_thread(self) -> str:
        """A new thread id for a call without ``thread_id``; it stays in this process."""
        tid = uuid.uuid4().hex
        if isinstance(self._saver, ScratchThreads):
            self._saver.mark(tid)
        if self.memory is not None:
            self._memory_scratch.add(tid)
        return tid

    def _remember(self, thread_id: str, result: AgentResult) -> None:
        """dynavec's memory save: a completed run (or one out of steps) appends its answer;
        a paused one appends nothing (the resume that completes it does)."""
        if self.memory is None or result.termination_reason == "interrupted":
            return
        if thread_id in self._memory_scratch:
            self._memory_scratch.discard(thread_id)
            return
        self.memory.append(thread_id, Message("assistant", result.output or ""))

    def _finish(
        self,
        thread_id: str,
        values: StateUpdate,
        interrupts: Sequence[Interrupt],
        state: AgentState | None,
    ) -> AgentResult:
        if state is not None and "shared" in values:
            state.data.clear()
            state.data.update(values["shared"])
        result = build_result(
            values,
            interrupts,
            thread_id=thread_id,
            max_steps=self.max_steps,
            system_prompt=self.system_prompt,
        )
        self._remember(thread_id, result)
        return result

    @staticmethod
    def _split(output: UserPayload) -> tuple[StateUpdate, list[Interrupt]]:
        values = dict(output)
        return values, list(values.pop("__interrupt__", []))

    @contextmanager
    def _guarded(self, thread_id: str | None) -> Iterator[dict[str, CompletedCall]]:
        """Around a public call: checks ``thread_id``; yields the record of the thread's tool
        calls that ran but were not saved yet (kept for the next call on the thread until one
        succeeds); turns a storage failure into a :class:`StorageError` that says what ran."""
        _check_thread_id(thread_id)
        if thread_id is not None:
            check_id(thread_id, "thread_id")
        record = self._completed.setdefault(thread_id, {}) if thread_id else {}
        with storage_guard(self.checkpointer, thread_id, record):
            yield record
        if thread_id:
            self._completed.pop(thread_id, None)

    def _locked(self, thread_id: str | None) -> AbstractContextManager[object]:
        """The lock of a thread someone could name, held while a run or resume reads and
        advances it: a resume (or another run) of the same thread cannot start while this one
        is inside a tool, and what this caller read stays true until it is done. A call on a
        new, random thread needs none (nobody else knows its id yet)."""
        return resume_lock(self.checkpointer, thread_id) if thread_id else nullcontext()

    def _alocked(self, thread_id: str | None) -> AbstractAsyncContextManager[object]:
        """Async twin of :meth:`_locked`."""
        return aresume_lock(self.checkpointer, thread_id) if thread_id else _anull()

    def _stream(
        self, graph_input: UserPayload, config: RunnableConfig, done: Done
    ) -> Iterator[AgentEvent]:
        """The run's events; then ``done`` holds the thread's state afterwards."""
        from dynavec_langgraph.events import STREAM_MODES, events_from_chunk

        for mode, chunk in self.graph.stream(
            graph_input, config, stream_mode=STREAM_MODES, durability=DURABILITY
        ):
            yield from events_from_chunk(mode, chunk)
        done.snapshot = self.graph.get_state(config)

    async def _astream(
        self, graph_input: UserPayload, config: RunnableConfig, done: Done
    ) -> AsyncIterator[AgentEvent]:
        """Async twin of :meth:`_stream`."""
        from dynavec_langgraph.events import STREAM_MODES, events_from_chunk

        async for mode, chunk in self.graph.astream(
            graph_input, config, stream_mode=STREAM_MODES, durability=DURABILITY
        ):
            for event in events_from_chunk(mode, chunk):
                yield event
        done.snapshot = await self.graph.aget_state(config)

    def _result_event(self, thread_id: str, done: Done, state: AgentState | None) -> ResultEvent:
        from dynavec_langgraph.events import ResultEvent

        snapshot = done.final()
        return ResultEvent(
            self._finish(thread_id, dict(snapshot.values), snapshot.interrupts, state)
        )

    def _audit_target(self) -> Target:
        """Where the graph records: its store when it has one (``store=``), else the saver."""
        store = getattr(self.graph, "store", None)
        return store if store is not None else self._saver

    def _calls(self) -> Calls:
        """The blocking I/O calls of a sync door's core."""
        return Calls(self.graph, self.checkpointer)

    def _acalls(self) -> AsyncCalls:
        """The awaited I/O calls of an async door's core."""
        return AsyncCalls(self.graph, self.checkpointer)

    def close(self) -> None:
        """Close the connection the agent opened from a ``checkpointer=`` string (if any)."""
        if self._owned_saver is not None:
            self._owned_saver.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
