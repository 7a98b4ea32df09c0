"""``ReActAgent``'s resumes: ``resume`` / ``stream_resume`` and their async twins, each through
the guarded resume (:mod:`dynavec_langgraph._resuming`), seeded from messages or from a pause
dynavec recorded."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Coroutine, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, asynccontextmanager, contextmanager
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, TypeVar

from langchain_core.messages import BaseMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langgraph.types import Command, StateSnapshot

from dynavec_langgraph._agent.core import DURABILITY, AgentCore, Calls, Done, drive
from dynavec_langgraph._dynavec.conversion import from_dynavec
from dynavec_langgraph._dynavec.records import AgentResult, AgentState, Message
from dynavec_langgraph._errors import (
    NOTHING_TO_RESUME_TEXT,
    ApproverRefusedError,
    ConcurrentResumeError,
    InvalidInputError,
    NothingToResumeError,
    not_a_message_text,
)
from dynavec_langgraph._graph.conversation_view import pending_calls
from dynavec_langgraph._graph.run_data import CompletedCall, run_config
from dynavec_langgraph._pauses.policy.events import raise_timeouts
from dynavec_langgraph._persistence.adapter import DynavecCheckpointSaver
from dynavec_langgraph._resuming.answers import MISSING, Answer, Resume, check_state, check_storable
from dynavec_langgraph._resuming.guarded import GuardedResume, aresuming, resuming
from dynavec_langgraph._storable import brief, check_text
from dynavec_langgraph._types import JSONObject

if TYPE_CHECKING:
    from dynavec_langgraph._audit.storage import Target
    from dynavec_langgraph._types import (
        Approver,
        CompiledAgent,
        StateUpdate,
        UserPayload,
    )
    from dynavec_langgraph.events import AgentEvent

__all__ = ["MessagesIn", "Resumes"]

MessagesIn = Sequence[Message | BaseMessage | JSONObject]


def _message(index: int, message: Message | BaseMessage | JSONObject) -> BaseMessage:
    """``messages[index]`` of a resume from messages, as LangChain's."""
    try:
        return from_dynavec(message)
    except (TypeError, ValueError, KeyError, AttributeError) as error:
        field = f"messages[{index}]"
        raise InvalidInputError(
            not_a_message_text(field, brief(message, 80), f"{type(error).__name__}: {error}"),
            field,
        ) from None


def _looks_like_id_map(decision: UserPayload) -> bool:
    """LangGraph reads a dict whose keys all look like interrupt ids (32 hex digits; ``{}``
    too) as ``{interrupt_id: decision}``, not as a decision."""
    return isinstance(decision, dict) and all(
        isinstance(k, str) and len(k) == 32 and all(c in "0123456789abcdef" for c in k)
        for k in decision
    )


@contextmanager
def _audit_refusals(
    graph: CompiledAgent, target: Target, thread_id: str | None, decision: UserPayload
) -> Iterator[None]:
    """:func:`dynavec_langgraph._audit.trail.audit_refusals` of a door's resume (surface ``"api"``),
    whose module is imported only when a refusal is raised (it records nothing otherwise)."""
    try:
        yield
    except (ApproverRefusedError, ConcurrentResumeError):
        from dynavec_langgraph._audit.trail import audit_refusals

        with audit_refusals(graph, target, thread_id, decision, "api"):
            raise


@dataclass
class _Reply:
    """What one resume call was given: the reply to a pause, and where it goes."""

    messages: MessagesIn | None
    decision: UserPayload
    decisions: Mapping[str, UserPayload] | None
    thread_id: str | None
    state: AgentState | None
    model_kwargs: dict[str, UserPayload]
    approver: Approver = None

    def answer(self) -> Answer:
        return Answer(self.decision, self.decisions, approver=self.approver)


@dataclass(frozen=True)
class _Seeding:
    """What a seed writes and sends: the thread's config, the caller's ``state``, the answer."""

    config: RunnableConfig
    state: AgentState | None
    answer: Answer


_SeedCore = Callable[[Calls, StateSnapshot | None], Coroutine[object, object, Resume | None]]
"""A seed of the guarded resume (:data:`~dynavec_langgraph._resuming.guarded.Seed`) written
once: given the I/O calls of the door (:class:`Calls` or :class:`AsyncCalls`) and the thread
as read."""

_Ran = TypeVar("_Ran")


@dataclass
class _ResumeCall:
    """What one resume call hands the guarded resume, for either door."""

    tid: str
    resuming: GuardedResume
    seed: _SeedCore | None

    def seeder(
        self,
        run: Callable[[Coroutine[object, object, Resume | None]], _Ran],
        io: Calls,
    ) -> Callable[[StateSnapshot | None], _Ran] | None:
        """The seed for a door: its core on the door's I/O ``io``, run by ``run`` (driven
        to its end for a sync door, returned to be awaited for an async one)."""
        seed = self.seed
        return None if seed is None else lambda snapshot: run(seed(io, snapshot))


class Resumes(AgentCore):
    """``ReActAgent``'s ``resume`` / ``aresume`` / ``stream_resume`` / ``astream_resume``."""

    def resume(
        self,
        messages: MessagesIn | None = None,
        human_decision: UserPayload = MISSING,
        *,
        thread_id: str | None = None,
        start_step: int | None = None,
        state: AgentState | None = None,
        decisions: Mapping[str, UserPayload] | None = None,
        approver: Approver = None,
        **model_kwargs: UserPayload,
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
        with self._resuming(
            _Reply(messages, human_decision, decisions, thread_id, state, model_kwargs, approver)
        ) as (tid, plan):
            output = self.graph.invoke(plan.graph_input, plan.config, durability=DURABILITY)
            plan.settle(self._split(output)[1])
        return self._finish(tid, *self._split(output), state)

    async def aresume(
        self,
        messages: MessagesIn | None = None,
        human_decision: UserPayload = MISSING,
        *,
        thread_id: str | None = None,
        start_step: int | None = None,
        state: AgentState | None = None,
        decisions: Mapping[str, UserPayload] | None = None,
        approver: Approver = None,
        **model_kwargs: UserPayload,
    ) -> AgentResult:
        """Async twin of :meth:`resume`."""
        del start_step
        async with self._aresuming(
            _Reply(messages, human_decision, decisions, thread_id, state, model_kwargs, approver)
        ) as (tid, plan):
            output = await self.graph.ainvoke(plan.graph_input, plan.config, durability=DURABILITY)
            plan.settle(self._split(output)[1])
        return self._finish(tid, *self._split(output), state)

    def stream_resume(
        self,
        messages: MessagesIn | None = None,
        human_decision: UserPayload = MISSING,
        *,
        thread_id: str | None = None,
        start_step: int | None = None,
        state: AgentState | None = None,
        decisions: Mapping[str, UserPayload] | None = None,
        approver: Approver = None,
        **model_kwargs: UserPayload,
    ) -> Iterator[AgentEvent]:
        """Like :meth:`resume`, yielding typed events as they happen."""
        del start_step
        with self._resuming(
            _Reply(messages, human_decision, decisions, thread_id, state, model_kwargs, approver)
        ) as (tid, plan):
            done = Done()
            yield from self._stream(plan.graph_input, plan.config, done)
            plan.settle(done.final().interrupts)
        yield self._result_event(tid, done, state)

    async def astream_resume(
        self,
        messages: MessagesIn | None = None,
        human_decision: UserPayload = MISSING,
        *,
        thread_id: str | None = None,
        start_step: int | None = None,
        state: AgentState | None = None,
        decisions: Mapping[str, UserPayload] | None = None,
        approver: Approver = None,
        **model_kwargs: UserPayload,
    ) -> AsyncIterator[AgentEvent]:
        """Async twin of :meth:`stream_resume`."""
        del start_step
        async with self._aresuming(
            _Reply(messages, human_decision, decisions, thread_id, state, model_kwargs, approver)
        ) as (tid, plan):
            done = Done()
            async for event in self._astream(plan.graph_input, plan.config, done):
                yield event
            plan.settle(done.final().interrupts)
        yield self._result_event(tid, done, state)

    @contextmanager
    def _resuming(self, reply: _Reply) -> Iterator[tuple[str, Resume]]:
        """The guarded resume of one call
        (:func:`~dynavec_langgraph._resuming.guarded.resuming`) with this agent's record of
        finished calls; yields the thread id and the plan. An expired pause whose policy says
        ``on_expire="raise"`` raises once the run is done."""
        with self._guarded(reply.thread_id) as record:
            call = self._resume_call(reply, record)
            seed = call.seeder(drive, self._calls())
            with (
                self._refusals(reply),
                resuming(call.resuming, seed) as plan,
                raise_timeouts(call.tid),
            ):
                yield call.tid, plan

    @asynccontextmanager
    async def _aresuming(self, reply: _Reply) -> AsyncIterator[tuple[str, Resume]]:
        """Async twin of :meth:`_resuming`."""
        with self._guarded(reply.thread_id) as record:
            call = self._resume_call(reply, record)
            aseed = call.seeder(lambda core: core, self._acalls())
            with self._refusals(reply):
                async with aresuming(call.resuming, aseed) as plan:
                    with raise_timeouts(call.tid):
                        yield call.tid, plan

    def _refusals(self, reply: _Reply) -> AbstractContextManager[None]:
        return _audit_refusals(self.graph, self._audit_target(), reply.thread_id, reply.decision)

    def _resume_call(self, reply: _Reply, record: dict[str, CompletedCall]) -> _ResumeCall:
        """What a resume call hands the guarded resume: the thread (a new one for messages
        without ``thread_id``), its config carrying the record of finished calls (see
        ``graph``), the answer, and what seeds the thread when it is not paused."""
        messages, thread_id = reply.messages, reply.thread_id
        if thread_id is None and messages is None:
            raise NothingToResumeError(NOTHING_TO_RESUME_TEXT)
        tid = thread_id if thread_id is not None else self._scratch_thread()
        config = run_config(tid, reply.model_kwargs, completed=record)
        given = _Seeding(config, reply.state, reply.answer())
        if messages is not None:
            seed: _SeedCore | None = partial(self._seed, given, messages)
        elif thread_id is not None and isinstance(self.checkpointer, DynavecCheckpointSaver):
            seed = partial(self._dynavec_seed, given, thread_id)
        else:
            seed = None
        guarded = GuardedResume(
            self.graph, self.checkpointer, thread_id, given.answer, config, record=record
        )
        return _ResumeCall(tid, guarded, seed)

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

    def _seed_values(
        self, messages: MessagesIn, state: AgentState | None, answer: Answer
    ) -> StateUpdate:
        """Resume from messages alone: the values of a thread holding them, paused before
        the unanswered call (checked first: nothing is written for a bad answer)."""
        converted = self._resume_messages(messages)
        answer.value([])
        check_storable(self.checkpointer, answer.decision, "human_decision")
        values: StateUpdate = {"messages": converted}
        if state is not None:
            check_state(self.checkpointer, state.data)
            values["shared"] = dict(state.data)
        return values

    async def _seed(
        self, given: _Seeding, messages: MessagesIn, io: Calls, _: StateSnapshot | None
    ) -> Resume:
        """Seed the thread with ``messages`` paused before their unanswered call; the resume
        that answers it."""
        config, answer = given.config, given.answer
        await io.update_state(config, self._seed_values(messages, given.state, answer))
        resume = Resume(config, Command(resume=answer.decision))
        if _looks_like_id_map(answer.decision):  # reach the pause, answer it by its id
            output = await io.invoke(None, config)
            resume.graph_input = Command(resume=answer.value(self._split(output)[1]))
        return resume

    def _dynavec_paused(
        self, thread_id: str, snapshot: StateSnapshot | None
    ) -> list[JSONObject] | None:
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

    async def _dynavec_seed(
        self, given: _Seeding, thread_id: str, io: Calls, snapshot: StateSnapshot | None
    ) -> Resume | None:
        """Resume a pause recorded by dynavec (docs/compatibility.md D8) from its messages."""
        paused = await io.offload(self._dynavec_paused, thread_id, snapshot)
        if paused is None:
            return None
        return await self._seed(given, paused, io, snapshot)
