"""``ReActAgent``: dynavec's run / resume API on the package's compiled LangGraph graph."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import (
    AbstractAsyncContextManager,
    AbstractContextManager,
    asynccontextmanager,
    contextmanager,
    nullcontext,
)
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from langchain_core.messages import BaseMessage, HumanMessage, RemoveMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.types import Command, Durability, Interrupt, StateSnapshot

from dynavec_langgraph._audit_switch import check_audit
from dynavec_langgraph._conversation_view import pending_calls
from dynavec_langgraph._conversion import from_dynavec
from dynavec_langgraph._errors import (
    NOTHING_TO_RESUME_TEXT,
    ApprovalPolicyError,
    ApproverRefusedError,
    CheckpointNotFoundError,
    ConcurrentResumeError,
    InvalidInputError,
    NothingToResumeError,
    ThreadPausedError,
    not_a_message_text,
)
from dynavec_langgraph._exactly_once import shown_first
from dynavec_langgraph._factory import check_max_steps, create_react_agent, with_bookkeeping
from dynavec_langgraph._persistence.adapter import DynavecCheckpointSaver
from dynavec_langgraph._persistence.locks import aresume_lock, resume_lock
from dynavec_langgraph._persistence.scratch import ScratchThreads
from dynavec_langgraph._policy.doors import agent_clock, expiry_command
from dynavec_langgraph._policy.events import raise_timeouts
from dynavec_langgraph._resuming.answers import (
    MISSING,
    Answer,
    Resume,
    check_state,
    check_storable,
    refuse_if_paused,
)
from dynavec_langgraph._resuming.checks import (
    may_be_paused_elsewhere,
    refuse_foreign_pause,
    refuse_if_damaged,
)
from dynavec_langgraph._resuming.guarded import aresuming, asaved_on_cancel, resuming
from dynavec_langgraph._resuming.reading import storage_guard
from dynavec_langgraph._run_data import CompletedCall, durability, run_config
from dynavec_langgraph._state import AGENT_NODE
from dynavec_langgraph._storable import brief, check_id, check_text
from dynavec_langgraph._view import build_result
from dynavec_langgraph.checkpoint import Checkpoint, dynavec_view, is_step_boundary
from dynavec_langgraph.records import AgentResult, AgentState, Message

if TYPE_CHECKING:  # the audit trail, events and memory are imported where they are used
    from dynavec_langgraph._audit import AuditEvent, Notifier
    from dynavec_langgraph._persistence.records import CheckpointerOption
    from dynavec_langgraph._types import Approver, ModelOption, ToolOption
    from dynavec_langgraph.events import AgentEvent, ResultEvent
    from dynavec_langgraph.memory import BaseMemory
    from dynavec_langgraph.registry import ToolRegistry

from dynavec_langgraph.savers import (
    ConnectionSaver,
    resolve_checkpointer,
)

__all__ = ["DEFAULT_SYSTEM_PROMPT", "ReActAgent"]

DEFAULT_SYSTEM_PROMPT = (
    "You are a helpful and precise reasoning agent.\n"
    "Think step by step about what the task needs before you act.\n"
    "Call a tool when it helps, read its result, and repeat until you can answer.\n"
    "When you have the answer, reply with it directly without calling a tool."
)
"""The system prompt of a ``ReActAgent`` given no ``system_prompt=`` (dynavec's
``DEFAULT_REACT_SYSTEM_PROMPT``): four lines, the first dynavec's own; dynavec's other three
lines are not known here, so these are this package's (docs/compatibility.md A4)."""

_DURABILITY: Durability = durability("agent")
"""The durability of every run of ``ReActAgent`` (:func:`._run_data.durability`)."""
MessagesIn = Sequence[Message | BaseMessage | dict[str, Any]]


# --- plain functions: inputs, checks, results -------------------------------------------


def _config(
    thread_id: str,
    model_kwargs: dict[str, Any],
    checkpoint_id: str | None = None,
    completed: dict[str, CompletedCall] | None = None,
) -> RunnableConfig:
    check_id(thread_id, "thread_id")  # also for the reads (get_checkpoint, ...)
    if checkpoint_id:
        check_id(checkpoint_id, "checkpoint_id")
    return run_config(thread_id, model_kwargs, checkpoint_id=checkpoint_id, completed=completed)


def _check_thread_id(thread_id: Any) -> None:
    if thread_id is not None and (not isinstance(thread_id, str) or not thread_id.strip()):
        raise TypeError(
            f"thread_id={thread_id!r}: pass a non-empty string naming the thread, or None for "
            "a new thread"
        )


def _check_goal(goal: Any) -> None:
    if not isinstance(goal, str):
        raise TypeError(
            f"goal={goal!r:.80} ({type(goal).__name__}): pass the user's request as a string"
        )


def _message(index: int, message: Any) -> BaseMessage:
    """``messages[index]`` of a resume from messages, as LangChain's."""
    try:
        return from_dynavec(message)
    except (TypeError, ValueError, KeyError, AttributeError) as error:
        field = f"messages[{index}]"
        raise InvalidInputError(
            not_a_message_text(field, brief(message, 80), f"{type(error).__name__}: {error}"),
            field,
        ) from None


def _looks_like_id_map(decision: Any) -> bool:
    """LangGraph reads a dict whose keys all look like interrupt ids (32 hex digits; ``{}``
    too) as ``{interrupt_id: decision}``, not as a decision."""
    return isinstance(decision, dict) and all(
        isinstance(k, str) and len(k) == 32 and all(c in "0123456789abcdef" for c in k)
        for k in decision
    )


def _exists(snapshot: StateSnapshot) -> bool:
    return snapshot.created_at is not None


@asynccontextmanager
async def _anull() -> AsyncIterator[None]:
    yield


def _is_memory(memory: Any) -> bool:
    from dynavec_langgraph.memory import BaseMemory  # imported for an agent given a memory

    return isinstance(memory, BaseMemory)


@contextmanager
def _audit_refusals(
    graph: Any, target: Any, thread_id: str | None, decision: Any
) -> Iterator[None]:
    """:func:`dynavec_langgraph._audit.audit_refusals` of a door's resume (surface ``"api"``),
    whose module is imported only when a refusal is raised (it records nothing otherwise)."""
    try:
        yield
    except (ApproverRefusedError, ConcurrentResumeError):
        from dynavec_langgraph._audit import audit_refusals

        with audit_refusals(graph, target, thread_id, decision, "api"):
            raise


@dataclass
class _Plan:
    """What one run call sends to the graph."""

    config: RunnableConfig
    graph_input: Any
    thread_id: str


@dataclass
class _Done:
    """The end of a streamed run: the thread's state afterwards."""

    snapshot: StateSnapshot


class ReActAgent:
    """dynavec's ReAct agent, running on the package's LangGraph graph (``agent.graph``).

    Code written against ``dynavec.agents`` runs after
    ``from dynavec_langgraph import ReActAgent, interrupt, tool``.

    Args:
        model: a LangChain chat model, a ``"provider:model"`` string or a dynavec-style model.
        tools: tools (see :func:`dynavec_langgraph.create_react_agent`).
        system_prompt: ``None`` for dynavec's default ReAct prompt, ``""`` for none.
        max_steps: model calls per run; below 1 counts as 1.
        checkpointer: a LangGraph saver. Without one the agent keeps an in-process saver so
            that ``resume(thread_id=...)`` works on this agent.
        memory: a :class:`~dynavec_langgraph.memory.BaseMemory`: runs with a ``thread_id``
            that continue no checkpoint start from its history, and store their answers
            (docs/memory.md).
        parallel_tool_calls: run the calls of a turn concurrently (several approvals can be
            pending at once; answer them with ``resume(thread_id=..., decisions={...})``).
        audit: ``True`` records every pause, decision and refusal of the agent's threads
            beside their checkpoints; read them with :meth:`audit`
            (docs/audit-and-notifications.md).
        notify: a webhook URL or a callable, called (at least once, from a durable outbox)
            for every new pause and re-ask with what an approver needs; implies ``audit``.

    Raises:
        InvalidOptionError: an option that cannot be used (``audit`` that is no bool,
            an ``approval_policy=`` that is no policy, unused or unsatisfiable for a tool:
            docs/errors.md).

    Example:
        >>> from dynavec_langgraph.testing import ScriptedChatModel
        >>> agent = ReActAgent(ScriptedChatModel(turns=["4"]))
        >>> agent.run("2 + 2?").output
        '4'
    """

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
        **options: Any,
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
        self.graph = create_react_agent(
            model,
            tools,
            system_prompt=self.system_prompt or None,
            max_steps=self.max_steps,
            checkpointer=self._saver,
            name="dynavec_react_agent",
            parallel_tool_calls=parallel_tool_calls,
            **options,  # create_react_agent's other options (response_format, middleware, ...)
        )
        # the runs' output carries the bookkeeping (termination_reason, shared, ...)
        self.graph = with_bookkeeping(self.graph)
        if audit or notify is not None:  # the audit trail's module only for an agent that has one
            from dynavec_langgraph._audit import with_audit

            self.graph = with_audit(self.graph, audit=audit, notify=notify, surface="api")
        self._notify = notify
        self._approval_clock = agent_clock(options.get("approval_policy"))

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

    # --- planning (no I/O) --------------------------------------------------------------

    def _scratch_thread(self) -> str:
        """A new thread id for a call without ``thread_id``; it stays in this process."""
        tid = uuid.uuid4().hex
        if isinstance(self._saver, ScratchThreads):
            self._saver.mark(tid)
        if self.memory is not None:
            self._memory_scratch.add(tid)
        return tid

    def _run_plan(
        self,
        goal: str,
        thread_id: str | None,
        resume_from: str | None,
        state: AgentState | None,
        model_kwargs: dict[str, Any],
        record: dict[str, CompletedCall],
    ) -> _Plan:
        _check_goal(goal)
        check_text(goal, "goal")
        if resume_from is not None:
            check_id(resume_from, "resume_from")
        if state is not None:
            check_state(self.checkpointer, state.data)
        tid = thread_id or self._scratch_thread()
        graph_input: dict[str, Any] = {"messages": [HumanMessage(content=goal)]}
        if state is not None:
            graph_input["shared"] = dict(state.data)
        config = _config(tid, model_kwargs, resume_from, record)
        return _Plan(config, graph_input, tid)

    def _check_run(
        self, plan: _Plan, snapshot: StateSnapshot, stored: Any, resume_from: str | None
    ) -> None:
        """Refuse a paused thread (also one paused by another graph: ``stored`` is its raw
        checkpoint, read when :func:`may_be_paused_elsewhere`); continue a thread whose last
        run did not finish, as dynavec's ``run()`` continues from the latest checkpoint,
        instead of adding the goal again (which would handle it, and its calls, twice)."""
        if resume_from and not _exists(snapshot):
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

    def _remember(self, thread_id: str, result: AgentResult) -> None:
        """dynavec's memory save: a completed run (or one out of steps) appends its answer;
        a paused one appends nothing (the resume that completes it does)."""
        if self.memory is None or result.termination_reason == "interrupted":
            return
        if thread_id in self._memory_scratch:
            self._memory_scratch.discard(thread_id)
            return
        self.memory.append(thread_id, Message("assistant", result.output or ""))

    def _resume_messages(self, messages: MessagesIn) -> list[BaseMessage]:
        converted = [_message(i, m) for i, m in enumerate(messages)]
        check_text(converted, "messages")
        while converted and isinstance(converted[0], SystemMessage):
            converted.pop(0)
        if not pending_calls(converted):
            raise NothingToResumeError(
                "the messages have no unanswered tool call: nothing to resume (pass "
                "paused.interrupt_payload['messages'] of a paused run)"
            )
        return converted

    def _finish(
        self,
        thread_id: str,
        values: dict[str, Any],
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

    def _read(self, plan: _Plan) -> tuple[StateSnapshot, Any]:
        """The thread before a run, as a door that reads shows it (a pause a crash made
        stale as its in-doubt question: :func:`shown_first`), and its raw checkpoint when it
        is paused or another graph may have paused it (see :meth:`_check_run`)."""
        snapshot = self.graph.get_state(plan.config)
        if not snapshot.interrupts and not may_be_paused_elsewhere(snapshot):
            return snapshot, None
        stored = self.checkpointer.get_tuple(plan.config)
        return shown_first(snapshot, stored), stored

    async def _aread(self, plan: _Plan) -> tuple[StateSnapshot, Any]:
        """Async twin of :meth:`_read`."""
        snapshot = await self.graph.aget_state(plan.config)
        if not snapshot.interrupts and not may_be_paused_elsewhere(snapshot):
            return snapshot, None
        stored = await self.checkpointer.aget_tuple(plan.config)
        return shown_first(snapshot, stored), stored

    @staticmethod
    def _split(output: Any) -> tuple[dict[str, Any], list[Interrupt]]:
        values = dict(output)
        return values, list(values.pop("__interrupt__", []))

    # --- run --------------------------------------------------------------------------

    def run(
        self,
        goal: str,
        *,
        thread_id: str | None = None,
        resume_from: str | None = None,
        state: AgentState | None = None,
        **model_kwargs: Any,
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
        with self._guarded(thread_id) as record:
            plan = self._run_plan(goal, thread_id, resume_from, state, model_kwargs, record)
            with self._locked(thread_id):
                self._prepare(plan, thread_id, resume_from)
                output = self.graph.invoke(plan.graph_input, plan.config, durability=_DURABILITY)
        return self._finish(plan.thread_id, *self._split(output), state)

    async def arun(
        self,
        goal: str,
        *,
        thread_id: str | None = None,
        resume_from: str | None = None,
        state: AgentState | None = None,
        **model_kwargs: Any,
    ) -> AgentResult:
        """Async twin of :meth:`run`."""
        with self._guarded(thread_id) as record:
            plan = self._run_plan(goal, thread_id, resume_from, state, model_kwargs, record)
            async with (
                self._alocked(thread_id),
                asaved_on_cancel(self.graph, plan.config, record),
            ):
                await self._aprepare(plan, thread_id, resume_from)
                output = await self.graph.ainvoke(
                    plan.graph_input, plan.config, durability=_DURABILITY
                )
        return self._finish(plan.thread_id, *self._split(output), state)

    def _prepare(self, plan: _Plan, thread_id: str | None, resume_from: str | None) -> None:
        """Before a run or stream (the thread's lock held): an expired approval settled, the
        thread checked, a dynavec run the thread left unfinished continued."""
        snapshot, stored = self._read(plan)
        settle = expiry_command(snapshot.interrupts, self._approval_now())
        if settle is not None:  # an expired approval: settled before anything else
            with raise_timeouts(plan.thread_id):
                self.graph.invoke(settle, plan.config, durability=_DURABILITY)
            snapshot, stored = self._read(plan)
        self._check_run(plan, snapshot, stored, resume_from)
        self._continue_dynavec(plan, snapshot, thread_id, resume_from)

    async def _aprepare(self, plan: _Plan, thread_id: str | None, resume_from: str | None) -> None:
        """Async twin of :meth:`_prepare`."""
        snapshot, stored = await self._aread(plan)
        settle = expiry_command(snapshot.interrupts, self._approval_now())
        if settle is not None:  # an expired approval: settled before anything else
            with raise_timeouts(plan.thread_id):
                await self.graph.ainvoke(settle, plan.config, durability=_DURABILITY)
            snapshot, stored = await self._aread(plan)
        self._check_run(plan, snapshot, stored, resume_from)
        if self._maybe_dynavec(plan, snapshot, thread_id, resume_from):  # its I/O off the loop
            await asyncio.to_thread(self._continue_dynavec, plan, snapshot, thread_id, resume_from)

    # --- resume: every path goes through resuming.resuming / aresuming ----------------

    def resume(
        self,
        messages: MessagesIn | None = None,
        human_decision: Any = MISSING,
        *,
        thread_id: str | None = None,
        start_step: int | None = None,
        state: AgentState | None = None,
        decisions: Mapping[str, Any] | None = None,
        approver: Approver = None,
        **model_kwargs: Any,
    ) -> AgentResult:
        """Answer a pause: re-run the paused tool call with ``human_decision``, then go on.

        Pass ``thread_id`` (a paused thread of this agent's checkpointer) or ``messages``
        (``paused.interrupt_payload["messages"]``; works in a fresh agent, no checkpointer
        needed). ``start_step`` is accepted for older callers and not needed. With several
        pauses pending (``parallel_tool_calls=True``) pass ``decisions={node_id or
        interrupt_id: decision}`` instead of ``human_decision``. The checks, the lock and the
        errors are the guarded resume's (:mod:`dynavec_langgraph._resuming`), shared with the
        inbox and the command line.

        Raises:
            NothingToResumeError: no messages and no thread, an unknown thread, a thread that
                is not paused, or messages without an unanswered tool call.
            InvalidDecisionError: no decision, several pending for one decision,
                ``decisions`` that name what is not pending, a pending call of a tool this
                agent does not have, or a decision that does not match the pause's
                ``response_schema`` (nothing saved, still paused).
            ConcurrentResumeError: another caller is running or resuming the thread.
            ApproverRefusedError: ``approver`` may not answer the pause (its approval policy);
                nothing ran, the thread is still paused.
            ApprovalTimeoutError: the pause had expired and its policy says
                ``on_expire="raise"``; the pause is settled (the call did not run).

        ``approver`` (a name or ``{"name", "roles"}``) is who answers, sent with the decision
        to a pause with an approval policy (docs/approvals-in-production.md).
        """
        del start_step
        with (
            self._resuming(
                messages, human_decision, decisions, thread_id, state, model_kwargs, approver
            ) as (tid, plan),
            raise_timeouts(tid),
        ):
            output = self.graph.invoke(plan.graph_input, plan.config, durability=_DURABILITY)
            plan.settle(self._split(output)[1])
        return self._finish(tid, *self._split(output), state)

    async def aresume(
        self,
        messages: MessagesIn | None = None,
        human_decision: Any = MISSING,
        *,
        thread_id: str | None = None,
        start_step: int | None = None,
        state: AgentState | None = None,
        decisions: Mapping[str, Any] | None = None,
        approver: Approver = None,
        **model_kwargs: Any,
    ) -> AgentResult:
        """Async twin of :meth:`resume`."""
        del start_step
        async with self._aresuming(
            messages, human_decision, decisions, thread_id, state, model_kwargs, approver
        ) as (tid, plan):
            with raise_timeouts(tid):
                output = await self.graph.ainvoke(
                    plan.graph_input, plan.config, durability=_DURABILITY
                )
                plan.settle(self._split(output)[1])
        return self._finish(tid, *self._split(output), state)

    # --- streaming --------------------------------------------------------------------

    def stream(
        self,
        goal: str,
        *,
        thread_id: str | None = None,
        resume_from: str | None = None,
        state: AgentState | None = None,
        **model_kwargs: Any,
    ) -> Iterator[AgentEvent]:
        """Like :meth:`run`, yielding typed events as they happen; the last is a
        :class:`ResultEvent` holding the ``AgentResult``."""
        with self._guarded(thread_id) as record:
            plan = self._run_plan(goal, thread_id, resume_from, state, model_kwargs, record)
            with self._locked(thread_id):
                self._prepare(plan, thread_id, resume_from)
                for event in self._stream(plan.graph_input, plan.config):
                    if isinstance(event, _Done):
                        yield self._result_event(plan.thread_id, event, state)
                    else:
                        yield event

    async def astream(
        self,
        goal: str,
        *,
        thread_id: str | None = None,
        resume_from: str | None = None,
        state: AgentState | None = None,
        **model_kwargs: Any,
    ) -> AsyncIterator[AgentEvent]:
        """Async twin of :meth:`stream`."""
        with self._guarded(thread_id) as record:
            plan = self._run_plan(goal, thread_id, resume_from, state, model_kwargs, record)
            async with (
                self._alocked(thread_id),
                asaved_on_cancel(self.graph, plan.config, record),
            ):
                await self._aprepare(plan, thread_id, resume_from)
                async for event in self._astream(plan.graph_input, plan.config):
                    if isinstance(event, _Done):
                        yield self._result_event(plan.thread_id, event, state)
                    else:
                        yield event

    def stream_resume(
        self,
        messages: MessagesIn | None = None,
        human_decision: Any = MISSING,
        *,
        thread_id: str | None = None,
        start_step: int | None = None,
        state: AgentState | None = None,
        decisions: Mapping[str, Any] | None = None,
        approver: Approver = None,
        **model_kwargs: Any,
    ) -> Iterator[AgentEvent]:
        """Like :meth:`resume`, yielding typed events as they happen."""
        del start_step
        with (
            self._resuming(
                messages, human_decision, decisions, thread_id, state, model_kwargs, approver
            ) as (tid, plan),
            raise_timeouts(tid),
        ):
            snapshot = None
            for event in self._stream(plan.graph_input, plan.config):
                if isinstance(event, _Done):
                    snapshot = event.snapshot
                    break
                yield event
            assert snapshot is not None
            plan.settle(snapshot.interrupts)
        yield self._result_event(tid, _Done(snapshot), state)

    async def astream_resume(
        self,
        messages: MessagesIn | None = None,
        human_decision: Any = MISSING,
        *,
        thread_id: str | None = None,
        start_step: int | None = None,
        state: AgentState | None = None,
        decisions: Mapping[str, Any] | None = None,
        approver: Approver = None,
        **model_kwargs: Any,
    ) -> AsyncIterator[AgentEvent]:
        """Async twin of :meth:`stream_resume`."""
        del start_step
        async with self._aresuming(
            messages, human_decision, decisions, thread_id, state, model_kwargs, approver
        ) as (tid, plan):
            with raise_timeouts(tid):
                snapshot = None
                async for event in self._astream(plan.graph_input, plan.config):
                    if isinstance(event, _Done):
                        snapshot = event.snapshot
                        break
                    yield event
                assert snapshot is not None
                plan.settle(snapshot.interrupts)
        yield self._result_event(tid, _Done(snapshot), state)

    @contextmanager
    def _resuming(
        self,
        messages: MessagesIn | None,
        decision: Any,
        decisions: Mapping[str, Any] | None,
        thread_id: str | None,
        state: AgentState | None,
        model_kwargs: dict[str, Any],
        approver: Approver = None,
    ) -> Iterator[tuple[str, Resume]]:
        """The guarded resume of one call (:func:`~dynavec_langgraph._resuming.resuming`) with
        this agent's record of finished calls; yields the thread id and the plan."""
        answer = Answer(decision, decisions, approver=approver)
        with self._guarded(thread_id) as record:
            tid, config = self._resume_config(messages, thread_id, model_kwargs, record)
            seed = (
                self._seeder(messages, config, state, answer)
                if messages is not None
                else self._dynavec_seeder(thread_id, config, state, answer)
            )
            with (
                _audit_refusals(self.graph, self._audit_target(), thread_id, decision),
                resuming(
                    self.graph,
                    self.checkpointer,
                    thread_id,
                    answer,
                    config,
                    record=record,
                    seed=seed,
                ) as plan,
            ):
                yield tid, plan

    @asynccontextmanager
    async def _aresuming(
        self,
        messages: MessagesIn | None,
        decision: Any,
        decisions: Mapping[str, Any] | None,
        thread_id: str | None,
        state: AgentState | None,
        model_kwargs: dict[str, Any],
        approver: Approver = None,
    ) -> AsyncIterator[tuple[str, Resume]]:
        """Async twin of :meth:`_resuming`."""
        answer = Answer(decision, decisions, approver=approver)
        with self._guarded(thread_id) as record:
            tid, config = self._resume_config(messages, thread_id, model_kwargs, record)
            seed = (
                self._aseeder(messages, config, state, answer)
                if messages is not None
                else self._adynavec_seeder(thread_id, config, state, answer)
            )
            with _audit_refusals(self.graph, self._audit_target(), thread_id, decision):
                async with aresuming(
                    self.graph,
                    self.checkpointer,
                    thread_id,
                    answer,
                    config,
                    record=record,
                    seed=seed,
                ) as plan:
                    yield tid, plan

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

    def _stream(self, graph_input: Any, config: RunnableConfig) -> Iterator[AgentEvent | _Done]:
        """The run's events, then a :class:`_Done` with the thread's state afterwards."""
        from dynavec_langgraph.events import STREAM_MODES, events_from_chunk

        for mode, chunk in self.graph.stream(
            graph_input, config, stream_mode=STREAM_MODES, durability=_DURABILITY
        ):
            yield from events_from_chunk(mode, chunk)
        yield _Done(self.graph.get_state(config))

    async def _astream(
        self, graph_input: Any, config: RunnableConfig
    ) -> AsyncIterator[AgentEvent | _Done]:
        """Async twin of :meth:`_stream`."""
        from dynavec_langgraph.events import STREAM_MODES, events_from_chunk

        async for mode, chunk in self.graph.astream(
            graph_input, config, stream_mode=STREAM_MODES, durability=_DURABILITY
        ):
            for event in events_from_chunk(mode, chunk):
                yield event
        yield _Done(await self.graph.aget_state(config))

    def _result_event(self, thread_id: str, done: _Done, state: AgentState | None) -> ResultEvent:
        from dynavec_langgraph.events import ResultEvent

        snapshot = done.snapshot
        return ResultEvent(
            self._finish(thread_id, dict(snapshot.values), snapshot.interrupts, state)
        )

    # --- resume planning ------------------------------------------------------------------

    def _resume_config(
        self,
        messages: MessagesIn | None,
        thread_id: str | None,
        model_kwargs: dict[str, Any],
        record: dict[str, CompletedCall],
    ) -> tuple[str, RunnableConfig]:
        """The thread a resume works on (a new one for messages without ``thread_id``) and
        its config, carrying the record of finished calls (see ``graph``)."""
        if thread_id is None and messages is None:
            raise NothingToResumeError(NOTHING_TO_RESUME_TEXT)
        tid = thread_id if thread_id is not None else self._scratch_thread()
        config = _config(tid, model_kwargs, completed=record)
        return tid, config

    def _seed_values(
        self, messages: MessagesIn, state: AgentState | None, answer: Answer
    ) -> dict[str, Any]:
        """Resume from messages alone: the values of a thread holding them, paused before
        the unanswered call (checked first: nothing is written for a bad answer)."""
        converted = self._resume_messages(messages)
        answer.value([])
        check_storable(self.checkpointer, answer.decision, "human_decision")
        values: dict[str, Any] = {"messages": converted}
        if state is not None:
            check_state(self.checkpointer, state.data)
            values["shared"] = dict(state.data)
        return values

    def _seeder(
        self, messages: MessagesIn, config: RunnableConfig, state: AgentState | None, answer: Answer
    ) -> Callable[[StateSnapshot | None], Resume]:
        def seed(_: StateSnapshot | None) -> Resume:
            values = self._seed_values(messages, state, answer)
            self.graph.update_state(config, values, as_node=AGENT_NODE)
            resume = Resume(config, Command(resume=answer.decision))
            if _looks_like_id_map(answer.decision):  # reach the pause, answer it by its id
                output = self.graph.invoke(None, config, durability=_DURABILITY)
                resume.graph_input = Command(resume=answer.value(self._split(output)[1]))
            return resume

        return seed

    def _aseeder(
        self, messages: MessagesIn, config: RunnableConfig, state: AgentState | None, answer: Answer
    ) -> Callable[[StateSnapshot | None], Awaitable[Resume]]:
        async def seed(_: StateSnapshot | None) -> Resume:
            values = self._seed_values(messages, state, answer)
            await self.graph.aupdate_state(config, values, as_node=AGENT_NODE)
            resume = Resume(config, Command(resume=answer.decision))
            if _looks_like_id_map(answer.decision):  # reach the pause, answer it by its id
                output = await self.graph.ainvoke(None, config, durability=_DURABILITY)
                resume.graph_input = Command(resume=answer.value(self._split(output)[1]))
            return resume

        return seed

    def _maybe_dynavec(
        self,
        plan: _Plan,
        snapshot: StateSnapshot,
        thread_id: str | None,
        resume_from: str | None,
    ) -> bool:
        """Whether a run may be on a thread dynavec wrote (no request made: a dynavec
        checkpointer, a named thread with no LangGraph state, a new goal)."""
        return (
            thread_id is not None
            and not resume_from
            and plan.graph_input is not None
            and not snapshot.values
            and isinstance(self.checkpointer, DynavecCheckpointSaver)
        )

    def _continue_dynavec(
        self,
        plan: _Plan,
        snapshot: StateSnapshot,
        thread_id: str | None,
        resume_from: str | None,
    ) -> None:
        """``run()`` on a thread whose latest record dynavec itself wrote (docs/compatibility.md
        D8): refuse it while paused there; else continue its conversation (a finished one
        gets the goal as a follow-up, one stopped in a batch finishes the batch first)."""
        saver = self.checkpointer
        if thread_id is None or not self._maybe_dynavec(plan, snapshot, thread_id, resume_from):
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

    def _dynavec_paused(self, thread_id: str, snapshot: StateSnapshot | None) -> Any:
        """The messages of a pause that dynavec itself recorded on ``thread_id`` (a dynavec
        checkpointer whose latest record has no LangGraph data), else ``None``."""
        saver = self.checkpointer
        if not isinstance(saver, DynavecCheckpointSaver) or (snapshot and snapshot.values):
            return None
        record = saver.dynavec_record(thread_id)
        if record is None or not record.state.get("interrupted"):
            return None
        messages = record.state.get("messages")
        return list(messages) if isinstance(messages, list) and messages else None

    def _dynavec_seeder(
        self,
        thread_id: str | None,
        config: RunnableConfig,
        state: AgentState | None,
        answer: Answer,
    ) -> Callable[[StateSnapshot | None], Resume | None] | None:
        """Resume a pause recorded by dynavec (docs/compatibility.md D8) from its messages."""
        if thread_id is None or not isinstance(self.checkpointer, DynavecCheckpointSaver):
            return None

        def seed(snapshot: StateSnapshot | None) -> Resume | None:
            paused = self._dynavec_paused(thread_id, snapshot)
            if paused is None:
                return None
            return self._seeder(paused, config, state, answer)(snapshot)

        return seed

    def _adynavec_seeder(
        self,
        thread_id: str | None,
        config: RunnableConfig,
        state: AgentState | None,
        answer: Answer,
    ) -> Callable[[StateSnapshot | None], Awaitable[Resume | None]] | None:
        """Async twin of :meth:`_dynavec_seeder`."""
        if thread_id is None or not isinstance(self.checkpointer, DynavecCheckpointSaver):
            return None

        async def seed(snapshot: StateSnapshot | None) -> Resume | None:
            paused = await asyncio.to_thread(self._dynavec_paused, thread_id, snapshot)
            if paused is None:
                return None
            return await self._aseeder(paused, config, state, answer)(snapshot)

        return seed

    # --- checkpoints ------------------------------------------------------------------

    def _view(self, thread_id: str, snapshot: StateSnapshot) -> Checkpoint:
        return dynavec_view(snapshot, thread_id=thread_id, system_prompt=self.system_prompt)

    def get_checkpoint(self, thread_id: str, checkpoint_id: str | None = None) -> Checkpoint | None:
        """The thread's latest checkpoint (or ``checkpoint_id``) as a dynavec record.

        Works with every saver; the layout is docs/compatibility.md §5's (node ids ``init``,
        ``step_i``, ``interrupted``, ``max_steps_reached``), ``checkpoint_id`` is LangGraph's
        (pass it as ``run(..., resume_from=...)``). ``None`` for an unknown thread or id.
        """
        config = _config(thread_id, {}, checkpoint_id)
        snapshot = self.graph.get_state(config)
        if snapshot.interrupts:  # a pause a crash made stale: its in-doubt question
            snapshot = shown_first(snapshot, self.checkpointer.get_tuple(config))
        return self._view(thread_id, snapshot) if _exists(snapshot) else None

    async def aget_checkpoint(
        self, thread_id: str, checkpoint_id: str | None = None
    ) -> Checkpoint | None:
        """Async twin of :meth:`get_checkpoint`."""
        config = _config(thread_id, {}, checkpoint_id)
        snapshot = await self.graph.aget_state(config)
        if snapshot.interrupts:
            snapshot = shown_first(snapshot, await self.checkpointer.aget_tuple(config))
        return self._view(thread_id, snapshot) if _exists(snapshot) else None

    def _boundaries(
        self, thread_id: str, snapshots: Sequence[StateSnapshot], limit: int | None
    ) -> list[Checkpoint]:
        records = [self._view(thread_id, s) for s in reversed(snapshots) if is_step_boundary(s)]
        if limit is not None:
            records = records[-limit:] if limit > 0 else []
        return records

    def list_checkpoints(self, thread_id: str, limit: int | None = None) -> list[Checkpoint]:
        """The thread's checkpoints at dynavec's moments, oldest first (``limit``: newest N).

        dynavec's moments are a run's start, the end of each step, the answer, running out of
        steps and a pause; LangGraph's checkpoints in between (e.g. between two tool calls
        of a batch) are left out. :meth:`get_checkpoint` reads any of them by id.
        """
        config = _config(thread_id, {})
        history = list(self.graph.get_state_history(config))
        if history and history[0].interrupts:  # the latest: as get_checkpoint shows it
            history[0] = shown_first(history[0], self.checkpointer.get_tuple(config))
        return self._boundaries(thread_id, history, limit)

    async def alist_checkpoints(self, thread_id: str, limit: int | None = None) -> list[Checkpoint]:
        """Async twin of :meth:`list_checkpoints`."""
        config = _config(thread_id, {})
        history = [s async for s in self.graph.aget_state_history(config)]
        if history and history[0].interrupts:
            history[0] = shown_first(history[0], await self.checkpointer.aget_tuple(config))
        return self._boundaries(thread_id, history, limit)

    def audit(self, thread_id: str) -> list[AuditEvent]:
        """The audit trail of ``thread_id``, oldest first: its pauses, decisions, refusals
        (and the settlements other features record), as :class:`AuditEvent` entries.
        Empty unless the agent was made with ``audit=True`` or ``notify=...``."""
        check_id(thread_id, "thread_id")
        from dynavec_langgraph._audit import audit_trail

        return audit_trail(self._audit_target(), thread_id)

    def _audit_target(self) -> Any:
        """Where the graph records: its store when it has one (``store=``), else the saver."""
        store = getattr(self.graph, "store", None)
        return store if store is not None else self._saver

    async def aaudit(self, thread_id: str) -> list[AuditEvent]:
        """Async twin of :meth:`audit` (for async savers)."""
        check_id(thread_id, "thread_id")
        from dynavec_langgraph._audit import aaudit_trail

        return await aaudit_trail(self._audit_target(), thread_id)

    def close(self) -> None:
        """Close the connection the agent opened from a ``checkpointer=`` string (if any)."""
        if self._owned_saver is not None:
            self._owned_saver.close()

    def __enter__(self) -> ReActAgent:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ += ["build_result"]  # its home is dynavec_langgraph._view
