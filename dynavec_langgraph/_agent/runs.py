"""``ReActAgent``'s runs: ``run`` / ``stream`` and their async twins, the thread read, checked
and prepared under its lock (an expired approval settled, a dynavec thread or memory
continued)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from langchain_core.messages import BaseMessage, HumanMessage, RemoveMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.types import StateSnapshot

from dynavec_langgraph._agent.core import DURABILITY, AgentCore, Calls, Done, drive, exists
from dynavec_langgraph._dynavec.conversion import from_dynavec
from dynavec_langgraph._dynavec.records import AgentResult, AgentState, Message
from dynavec_langgraph._errors import CheckpointNotFoundError, ThreadPausedError
from dynavec_langgraph._exactly_once.shown import shown_first
from dynavec_langgraph._graph.conversation_view import pending_calls
from dynavec_langgraph._graph.run_data import CompletedCall, run_config
from dynavec_langgraph._names import AGENT_NODE
from dynavec_langgraph._pauses.policy.doors import expiry_command
from dynavec_langgraph._pauses.policy.events import raise_timeouts
from dynavec_langgraph._persistence.adapter import DynavecCheckpointSaver
from dynavec_langgraph._resuming.answers import check_state, refuse_if_paused
from dynavec_langgraph._resuming.checks import (
    may_be_paused_elsewhere,
    refuse_foreign_pause,
    refuse_if_damaged,
)
from dynavec_langgraph._resuming.guarded import asaved_on_cancel
from dynavec_langgraph._storable import check_id, check_text

if TYPE_CHECKING:
    from langgraph.checkpoint.base import CheckpointTuple

    from dynavec_langgraph._types import StateUpdate, UserPayload
    from dynavec_langgraph.events import AgentEvent

__all__ = ["Runs"]


def _check_goal(goal: object) -> None:
    if not isinstance(goal, str):
        raise TypeError(
            f"goal={goal!r:.80} ({type(goal).__name__}): pass the user's request as a string"
        )


@dataclass
class _RunCall:
    """What one run call was given."""

    goal: str
    thread_id: str | None
    resume_from: str | None
    state: AgentState | None
    model_kwargs: dict[str, UserPayload]


@dataclass
class _Plan:
    """What one run call sends to the graph."""

    config: RunnableConfig
    graph_input: UserPayload
    thread_id: str


class Runs(AgentCore):
    """``ReActAgent``'s ``run`` / ``arun`` / ``stream`` / ``astream``."""

    def run(
        self,
        goal: str,
        *,
        thread_id: str | None = None,
        resume_from: str | None = None,
        state: AgentState | None = None,
        **model_kwargs: UserPayload,
    ) -> AgentResult:
        """Run the agent on ``goal``; continue the thread's latest checkpoint if it has one.

        On a thread whose last run did not finish (its process was killed in the middle of
        a batch) ``run`` continues that run and does not add ``goal`` again, as dynavec does:
        the calls that finished do not run again, the one that was running runs once. On a
        finished thread ``goal`` is a follow-up message.

        Raises:
            ThreadPausedError: the thread waits for a decision; call :meth:`resume`.
            CheckpointNotFoundError: ``resume_from`` is not a checkpoint of the thread.
        """
        with self._running(_RunCall(goal, thread_id, resume_from, state, model_kwargs)) as plan:
            output = self.graph.invoke(plan.graph_input, plan.config, durability=DURABILITY)
        return self._finish(plan.thread_id, *self._split(output), state)

    async def arun(
        self,
        goal: str,
        *,
        thread_id: str | None = None,
        resume_from: str | None = None,
        state: AgentState | None = None,
        **model_kwargs: UserPayload,
    ) -> AgentResult:
        """Async twin of :meth:`run`."""
        async with self._arunning(
            _RunCall(goal, thread_id, resume_from, state, model_kwargs)
        ) as plan:
            output = await self.graph.ainvoke(plan.graph_input, plan.config, durability=DURABILITY)
        return self._finish(plan.thread_id, *self._split(output), state)

    def stream(
        self,
        goal: str,
        *,
        thread_id: str | None = None,
        resume_from: str | None = None,
        state: AgentState | None = None,
        **model_kwargs: UserPayload,
    ) -> Iterator[AgentEvent]:
        """Like :meth:`run`, yielding typed events as they happen; the last is a
        :class:`ResultEvent` holding the ``AgentResult``."""
        with self._running(_RunCall(goal, thread_id, resume_from, state, model_kwargs)) as plan:
            done = Done()
            yield from self._stream(plan.graph_input, plan.config, done)
            yield self._result_event(plan.thread_id, done, state)

    async def astream(
        self,
        goal: str,
        *,
        thread_id: str | None = None,
        resume_from: str | None = None,
        state: AgentState | None = None,
        **model_kwargs: UserPayload,
    ) -> AsyncIterator[AgentEvent]:
        """Async twin of :meth:`stream`."""
        async with self._arunning(
            _RunCall(goal, thread_id, resume_from, state, model_kwargs)
        ) as plan:
            done = Done()
            async for event in self._astream(plan.graph_input, plan.config, done):
                yield event
            yield self._result_event(plan.thread_id, done, state)

    @contextmanager
    def _running(self, call: _RunCall) -> Iterator[_Plan]:
        """Around one run or stream: the call guarded (:meth:`_guarded`), the thread's lock
        held, the thread prepared (:meth:`_prepare`); yields what to send to the graph."""
        with self._guarded(call.thread_id) as record:
            plan = self._run_plan(call, record)
            with self._locked(call.thread_id):
                drive(self._prepare(self._calls(), plan, call))
                yield plan

    @asynccontextmanager
    async def _arunning(self, call: _RunCall) -> AsyncIterator[_Plan]:
        """Async twin of :meth:`_running`; the calls that ran are saved if the caller is
        cancelled (:func:`~dynavec_langgraph._resuming.guarded.asaved_on_cancel`)."""
        with self._guarded(call.thread_id) as record:
            plan = self._run_plan(call, record)
            async with (
                self._alocked(call.thread_id),
                asaved_on_cancel(self.graph, plan.config, record),
            ):
                await self._prepare(self._acalls(), plan, call)
                yield plan

    async def _prepare(self, io: Calls, plan: _Plan, call: _RunCall) -> None:
        """Before a run or stream (the thread's lock held): an expired approval settled, the
        thread checked, a dynavec run the thread left unfinished continued (its I/O off the
        event loop for an async door)."""
        snapshot, stored = await self._read(io, plan)
        settle = expiry_command(snapshot.interrupts, self._approval_now())
        if settle is not None:  # an expired approval: settled before anything else
            with raise_timeouts(plan.thread_id):
                await io.invoke(settle, plan.config)
            snapshot, stored = await self._read(io, plan)
        self._check_run(plan, snapshot, stored, call.resume_from)
        if self._maybe_dynavec(plan, snapshot, call):
            await io.offload(self._continue_dynavec, plan, snapshot, call)

    async def _read(self, io: Calls, plan: _Plan) -> tuple[StateSnapshot, CheckpointTuple | None]:
        """The thread before a run, as a door that reads shows it (a pause a crash made
        stale as its in-doubt question: :func:`shown_first`), and its raw checkpoint when it
        is paused or another graph may have paused it (see :meth:`_check_run`)."""
        snapshot = await io.get_state(plan.config)
        if not snapshot.interrupts and not may_be_paused_elsewhere(snapshot):
            return snapshot, None
        stored = await io.get_tuple(plan.config)
        return shown_first(snapshot, stored), stored

    def _run_plan(self, call: _RunCall, record: dict[str, CompletedCall]) -> _Plan:
        goal, resume_from, state = call.goal, call.resume_from, call.state
        _check_goal(goal)
        check_text(goal, "goal")
        if resume_from is not None:
            check_id(resume_from, "resume_from")
        if state is not None:
            check_state(self.checkpointer, state.data)
        tid = call.thread_id or self._scratch_thread()
        graph_input: StateUpdate = {"messages": [HumanMessage(content=goal)]}
        if state is not None:
            graph_input["shared"] = dict(state.data)
        config = run_config(tid, call.model_kwargs, checkpoint_id=resume_from, completed=record)
        return _Plan(config, graph_input, tid)

    def _check_run(
        self,
        plan: _Plan,
        snapshot: StateSnapshot,
        stored: CheckpointTuple | None,
        resume_from: str | None,
    ) -> None:
        """Refuse a paused thread (also one paused by another graph: ``stored`` is its raw
        checkpoint, read when :func:`may_be_paused_elsewhere`); continue a thread whose last
        run did not finish, as dynavec's ``run()`` continues from the latest checkpoint,
        instead of adding the goal again (which would handle it, and its calls, twice)."""
        if resume_from and not exists(snapshot):
            raise CheckpointNotFoundError(
                f"thread {plan.thread_id!r} has no checkpoint {resume_from!r}; "
                "list_checkpoints(thread_id) shows the ones it has"
            )
        refuse_if_damaged(snapshot, plan.thread_id)
        refuse_if_paused(plan.thread_id, snapshot.interrupts)
        refuse_foreign_pause(self.graph, stored, snapshot, plan.thread_id)
        if self._from_memory(plan, snapshot, resume_from):
            return
        if resume_from:
            return
        values = snapshot.values or {}
        if snapshot.next or snapshot.tasks:
            # its process died in the middle of a batch: finish the batch, then go on
            plan.graph_input = None
        elif values.get("termination_reason") == "max_steps_reached" and values.get("messages"):
            # it ran out of steps: another max_steps model calls on the same conversation,
            # counted from its last message (graph.steps_in_run)
            shared = plan.graph_input.get("shared")
            plan.graph_input = {
                "continued_at": values["messages"][-1].id,
                "termination_reason": None,
            }
            if shared is not None:
                plan.graph_input["shared"] = shared
        elif values.get("continued_at"):
            plan.graph_input["continued_at"] = None  # a new user message starts a new run

    def _from_memory(self, plan: _Plan, snapshot: StateSnapshot, resume_from: str | None) -> bool:
        """dynavec's memory load: a run with a ``thread_id`` whose messages no checkpoint of
        the given checkpointer supplies starts from the memory's history (the system prompt
        stored first, then the goal appended). The agent's own in-process saver is no
        checkpointer in dynavec's sense: there the thread's messages are replaced by the
        memory's. The stored first system message is not sent twice: the agent adds its
        system prompt at each model call."""
        memory = self.memory
        if memory is None or plan.thread_id in self._memory_scratch:
            return False
        had_messages = bool((snapshot.values or {}).get("messages"))
        if resume_from or (self._given_saver and had_messages):
            return False  # restored checkpoint messages win and skip memory
        goal = plan.graph_input["messages"][0].content
        tid = plan.thread_id
        if not memory.get_messages(tid) and self.system_prompt:
            memory.append(tid, Message("system", self.system_prompt))
        memory.append(tid, Message("user", goal))
        history = [from_dynavec(m) for m in memory.get_messages(tid)]
        if history and isinstance(history[0], SystemMessage):
            history.pop(0)
        reset: list[BaseMessage] = [RemoveMessage(id=REMOVE_ALL_MESSAGES)] if had_messages else []
        plan.graph_input = {
            **plan.graph_input,
            "messages": [*reset, *history],
            "termination_reason": None,
            "continued_at": None,
        }
        return True

    def _maybe_dynavec(self, plan: _Plan, snapshot: StateSnapshot, call: _RunCall) -> bool:
        """Whether a run may be on a thread dynavec wrote (no request made: a dynavec
        checkpointer, a named thread with no LangGraph state, a new goal)."""
        return (
            call.thread_id is not None
            and not call.resume_from
            and plan.graph_input is not None
            and not snapshot.values
            and isinstance(self.checkpointer, DynavecCheckpointSaver)
        )

    def _continue_dynavec(self, plan: _Plan, snapshot: StateSnapshot, call: _RunCall) -> None:
        """``run()`` on a thread whose latest record dynavec itself wrote (docs/compatibility.md
        D8): refuse it while paused there; else continue its conversation (a finished one
        gets the goal as a follow-up, one stopped in a batch finishes the batch first)."""
        saver, thread_id = self.checkpointer, call.thread_id
        if thread_id is None or not self._maybe_dynavec(plan, snapshot, call):
            return
        assert isinstance(saver, DynavecCheckpointSaver)
        record = saver.dynavec_record(thread_id)
        if record is None:
            return
        interrupted = record.state.get("interrupted")
        if interrupted:
            node = interrupted.get("node_id") if isinstance(interrupted, dict) else None
            raise ThreadPausedError(thread_id, [str(node or "interrupted")])
        stored = record.state.get("messages")
        earlier = [from_dynavec(m) for m in stored] if isinstance(stored, list) else []
        while earlier and isinstance(earlier[0], SystemMessage):
            earlier.pop(0)
        if not earlier:
            return
        if pending_calls(earlier):
            self.graph.update_state(plan.config, {"messages": earlier}, as_node=AGENT_NODE)
            plan.graph_input = None
        else:
            plan.graph_input["messages"] = [*earlier, *plan.graph_input["messages"]]
