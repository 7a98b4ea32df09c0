"""``ReActAgent``: dynavec's run / resume API on the package's compiled LangGraph graph."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextlib import (
    AbstractAsyncContextManager,
    AbstractContextManager,
    asynccontextmanager,
    contextmanager,
    nullcontext,
)
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.errors import is_invalid_resume
from langgraph.types import Command, Durability, Interrupt, StateSnapshot

from dynavec_langgraph.checkpoint import Checkpoint, dynavec_view, is_step_boundary
from dynavec_langgraph.conversion import from_dynavec
from dynavec_langgraph.errors import (
    CheckpointNotFoundError,
    DynavecError,
    InvalidDecisionError,
    NothingToResumeError,
    StorageError,
    ThreadPausedError,
)
from dynavec_langgraph.events import STREAM_MODES, AgentEvent, ResultEvent, events_from_chunk
from dynavec_langgraph.graph import (
    AGENT_NODE,
    COMPLETED_CALLS_KEY,
    MODEL_KWARGS_KEY,
    CompletedCall,
    check_max_steps,
    create_react_agent,
)
from dynavec_langgraph.interrupt import (
    describe_pending,
    interrupt_fields,
    refusal,
    resume_command,
)
from dynavec_langgraph.locks import aresume_lock, resume_lock
from dynavec_langgraph.messages import pending_calls
from dynavec_langgraph.records import AgentResult, AgentState, Message
from dynavec_langgraph.savers import (
    ConnectionSaver,
    describe_storage,
    is_storage_error,
    resolve_checkpointer,
)
from dynavec_langgraph.scratch import ScratchThreads
from dynavec_langgraph.view import build_result

__all__ = ["DEFAULT_SYSTEM_PROMPT", "ReActAgent"]

DEFAULT_SYSTEM_PROMPT = (
    "You are a helpful assistant that solves tasks step by step. Think about what to do, call "
    "a tool when it helps, read its result, and repeat until you can give the final answer. "
    "When you have the answer, reply with it directly without calling a tool."
)
"""The system prompt of a ``ReActAgent`` given no ``system_prompt=``."""

_MISSING: Any = object()
_DURABILITY: Durability = "sync"
"""Each step's checkpoint is written before the next step starts: a process killed right after a
tool call finished does not run that call again when the thread is resumed (with LangGraph's
default, "async", the last finished call is lost about half the time)."""
MessagesIn = Sequence[Message | BaseMessage | dict[str, Any]]


# --- plain functions: inputs, checks, results -------------------------------------------


def _config(
    thread_id: str, model_kwargs: dict[str, Any], checkpoint_id: str | None = None
) -> RunnableConfig:
    configurable: dict[str, Any] = {"thread_id": thread_id, MODEL_KWARGS_KEY: model_kwargs}
    if checkpoint_id:
        configurable["checkpoint_id"] = checkpoint_id
    return {"configurable": configurable}


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


def _looks_like_id_map(decision: Any) -> bool:
    """LangGraph reads a dict whose keys all look like interrupt ids (32 hex digits; ``{}``
    too) as ``{interrupt_id: decision}``, not as a decision."""
    return isinstance(decision, dict) and all(
        isinstance(k, str) and len(k) == 32 and all(c in "0123456789abcdef" for c in k)
        for k in decision
    )


def _brief(value: Any, limit: int = 160) -> str:
    """``repr(value)`` for a message: shortened, and safe for values nested too deeply."""
    try:
        text = repr(value)
    except RecursionError:
        return "<a value nested too deeply to show>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _check_storable(saver: Any, decision: Any) -> None:
    """Refuse, before anything runs, a decision the thread's saver cannot store (the approved
    tool would run and then the write fail, leaving the pause open to be approved again)."""
    try:
        saver.serde.dumps_typed(decision)
    except Exception as error:
        if isinstance(error, RecursionError) or "recursion" in str(error).lower():
            raise InvalidDecisionError(
                "the decision is nested too deeply to be stored; nothing ran and the thread is "
                "still paused: send a flatter value"
            ) from None
        raise InvalidDecisionError(
            f"the decision {_brief(decision)} cannot be stored by the checkpointer ({error}); "
            "nothing ran and the thread is still paused: decide with JSON-like values (str, "
            "number, bool, list, dict) or a pydantic model"
        ) from None


def _exists(snapshot: StateSnapshot) -> bool:
    return snapshot.created_at is not None


def _node_ids(interrupts: Sequence[Interrupt]) -> list[str]:
    return [interrupt_fields(i).label() for i in interrupts]


def _refuse_if_paused(thread_id: str, snapshot: StateSnapshot) -> None:
    if snapshot.interrupts:
        raise ThreadPausedError(thread_id, _node_ids(snapshot.interrupts))


def _storage_error(
    saver: Any,
    error: BaseException,
    thread_id: str | None,
    record: dict[str, CompletedCall],
    decision: Any,
) -> StorageError:
    where = describe_storage(saver)
    thread = f"thread {thread_id!r}" if thread_id else "the thread"
    if not record:
        return StorageError(
            f"{where} failed ({type(error).__name__}: {error}). No tool ran and {thread} is "
            "unchanged: try again once the storage works",
            thread_id,
            [],
        )
    ran = [c.describe() for c in record.values()]
    decided = f" with the decision {_brief(decision)}" if decision is not _MISSING else ""
    return StorageError(
        f"{where} failed ({type(error).__name__}: {error}) after these tool calls ran"
        f"{decided}: {'; '.join(ran)}. Their results were not saved, so {thread} still shows "
        "them as not done. This agent remembers the results: call the same method on it again "
        "once the storage works and they will not run again (another agent or process would "
        "run them again)",
        thread_id,
        ran,
    )


@contextmanager
def _checked_decision(seen: StateSnapshot | None) -> Iterator[None]:
    """A decision rejected by the pause's ``response_schema`` -> InvalidDecisionError."""
    try:
        yield
    except ValueError as error:
        if seen is None or not is_invalid_resume(error):
            raise
        raise InvalidDecisionError(
            f"the decision for {', '.join(_node_ids(seen.interrupts))} does not match its "
            f"response_schema ({error}). Nothing was saved and the thread is still paused: "
            "resume it again with a valid decision"
        ) from error


def _refuse_if_asked_again(seen: StateSnapshot | None, now: Sequence[Interrupt]) -> None:
    """A decision the paused tool refused: the thread is paused at the same approval again."""
    message = refusal(seen.interrupts if seen else [], now)
    if message:
        raise InvalidDecisionError(message)


def _resume_value(decision: Any, interrupts: Sequence[Interrupt]) -> Any:
    """``Command(resume=...)`` for one decision; several pending pauses need ``decisions=``."""
    if decision is _MISSING or decision is None:
        raise InvalidDecisionError(
            "resume() needs human_decision= (any JSON value but None, e.g. 'approved')"
        )
    if len(interrupts) > 1:
        raise InvalidDecisionError(
            f"{len(interrupts)} decisions are pending ({describe_pending(interrupts)}); "
            "answer them with resume(thread_id=..., decisions={node_id: decision, ...})"
        )
    # addressed by id, so every decision reaches the tool as it is (a dict like {} would
    # otherwise be read as a map of interrupt ids and dropped)
    return {interrupts[0].id: decision} if interrupts else decision


@asynccontextmanager
async def _anull() -> AsyncIterator[None]:
    yield


@dataclass
class _Plan:
    """What one run/resume call sends to the graph."""

    config: RunnableConfig
    graph_input: Any
    thread_id: str

    def with_record(self, record: dict[str, CompletedCall]) -> RunnableConfig:
        """The config, with the caller's record of finished calls (see ``graph``)."""
        self.config.setdefault("configurable", {})[COMPLETED_CALLS_KEY] = record
        return self.config


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
        parallel_tool_calls: run the calls of a turn concurrently (several approvals can be
            pending at once; answer them with ``resume(thread_id=..., decisions={...})``).

    Example:
        >>> from dynavec_langgraph.testing import ScriptedChatModel
        >>> agent = ReActAgent(ScriptedChatModel(turns=["4"]))
        >>> agent.run("2 + 2?").output
        '4'
    """

    def __init__(
        self,
        model: Any,
        tools: Sequence[Any] | None = None,
        system_prompt: str | None = None,
        max_steps: int = 10,
        checkpointer: Any = None,
        *,
        parallel_tool_calls: bool = False,
        **options: Any,
    ) -> None:
        self.system_prompt = DEFAULT_SYSTEM_PROMPT if system_prompt is None else system_prompt
        self.max_steps = check_max_steps(max_steps)
        self._completed: dict[str, dict[str, CompletedCall]] = {}
        saver = resolve_checkpointer(checkpointer)
        self.checkpointer = saver if saver is not None else InMemorySaver()
        self._owned_saver = saver if isinstance(saver, ConnectionSaver) else None
        # runs without a thread_id never reach a given checkpointer (scratch.py)
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

    # --- planning (no I/O) --------------------------------------------------------------

    def _scratch_thread(self) -> str:
        """A new thread id for a call without ``thread_id``; it stays in this process."""
        tid = uuid.uuid4().hex
        if isinstance(self._saver, ScratchThreads):
            self._saver.mark(tid)
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
        tid = thread_id or self._scratch_thread()
        graph_input: dict[str, Any] = {"messages": [HumanMessage(content=goal)]}
        if state is not None:
            graph_input["shared"] = dict(state.data)
        plan = _Plan(_config(tid, model_kwargs, resume_from), graph_input, tid)
        plan.with_record(record)
        return plan

    def _check_run(self, plan: _Plan, snapshot: StateSnapshot, resume_from: str | None) -> None:
        if resume_from and not _exists(snapshot):
            raise CheckpointNotFoundError(
                f"thread {plan.thread_id!r} has no checkpoint {resume_from!r}; "
                "list_checkpoints(thread_id) shows the ones it has"
            )
        _refuse_if_paused(plan.thread_id, snapshot)
        if not resume_from and (snapshot.next or snapshot.tasks):
            # the thread's last run did not finish (its process died in the middle of a
            # batch): continue it, as dynavec's run() continues from the latest checkpoint,
            # instead of adding the goal again (which would handle it, and its calls, twice)
            plan.graph_input = None

    def _resume_thread_plan(
        self,
        thread_id: str,
        snapshot: StateSnapshot,
        decision: Any,
        model_kwargs: dict[str, Any],
        decisions: Mapping[str, Any] | None = None,
    ) -> _Plan:
        if not _exists(snapshot):
            raise NothingToResumeError(
                f"unknown thread {thread_id!r}: nothing to resume (check the thread id and that "
                "this agent uses the checkpointer the paused run used)"
            )
        if not snapshot.interrupts:
            # a run stopped by a crash: finish its pending calls. When the crash came after
            # a task's result was saved but before the next checkpoint, get_state applies the
            # saved result and shows no `next`, only the task.
            if snapshot.next or snapshot.tasks:
                return _Plan(_config(thread_id, model_kwargs), None, thread_id)
            raise NothingToResumeError(
                f"thread {thread_id!r} is not paused: nothing to resume; call run() to continue it"
            )
        if decisions is not None:
            if decision is not _MISSING:
                raise InvalidDecisionError("pass human_decision= or decisions=, not both")
            if not isinstance(decisions, Mapping):
                raise InvalidDecisionError(
                    f"decisions={decisions!r:.80} ({type(decisions).__name__}): pass a mapping "
                    f"{{node_id or interrupt_id: decision}}; pending: "
                    f"{describe_pending(snapshot.interrupts)}"
                )
            for value in decisions.values():
                _check_storable(self.checkpointer, value)
            command = resume_command(snapshot.interrupts, decisions)
        else:
            resume = _resume_value(decision, snapshot.interrupts)
            _check_storable(self.checkpointer, decision)
            command = Command(resume=resume)
        return _Plan(_config(thread_id, model_kwargs), command, thread_id)

    def _resume_messages(self, messages: MessagesIn) -> list[BaseMessage]:
        converted = [from_dynavec(m) for m in messages]
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
        plan: _Plan,
        values: dict[str, Any],
        interrupts: Sequence[Interrupt],
        state: AgentState | None,
    ) -> AgentResult:
        if state is not None and "shared" in values:
            state.data.clear()
            state.data.update(values["shared"])
        return build_result(
            values,
            interrupts,
            thread_id=plan.thread_id,
            max_steps=self.max_steps,
            system_prompt=self.system_prompt,
        )

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
                self._check_run(plan, self.graph.get_state(plan.config), resume_from)
                output = self.graph.invoke(plan.graph_input, plan.config, durability=_DURABILITY)
        return self._finish(plan, *self._split(output), state)

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
            async with self._alocked(thread_id):
                self._check_run(plan, await self.graph.aget_state(plan.config), resume_from)
                output = await self.graph.ainvoke(
                    plan.graph_input, plan.config, durability=_DURABILITY
                )
        return self._finish(plan, *self._split(output), state)

    # --- resume -----------------------------------------------------------------------

    def resume(
        self,
        messages: MessagesIn | None = None,
        human_decision: Any = _MISSING,
        *,
        thread_id: str | None = None,
        start_step: int | None = None,
        state: AgentState | None = None,
        decisions: Mapping[str, Any] | None = None,
        **model_kwargs: Any,
    ) -> AgentResult:
        """Answer a pause: re-run the paused tool call with ``human_decision``, then go on.

        Pass ``thread_id`` (a paused thread of this agent's checkpointer) or ``messages``
        (``paused.interrupt_payload["messages"]``; works in a fresh agent, no checkpointer
        needed). ``start_step`` is accepted for older callers and not needed. With several
        pauses pending (``parallel_tool_calls=True``) pass ``decisions={node_id or
        interrupt_id: decision}`` instead of ``human_decision``.

        Raises:
            NothingToResumeError: no messages and no thread, an unknown thread, a thread that
                is not paused, or messages without an unanswered tool call.
            InvalidDecisionError: no decision, several pending for one decision,
                ``decisions`` that name what is not pending, or a decision that does not
                match the pause's ``response_schema`` (nothing saved, still paused).
            ConcurrentResumeError: another caller is resuming (or just resumed) the thread.
        """
        del start_step
        with (
            self._guarded(thread_id, human_decision, decisions) as record,
            self._locked(thread_id),
        ):
            plan, seen = self._prepare_resume(
                messages, human_decision, thread_id, state, decisions, model_kwargs
            )
            with _checked_decision(seen):
                output = self.graph.invoke(
                    plan.graph_input, plan.with_record(record), durability=_DURABILITY
                )
            _refuse_if_asked_again(seen, self._split(output)[1])
        return self._finish(plan, *self._split(output), state)

    async def aresume(
        self,
        messages: MessagesIn | None = None,
        human_decision: Any = _MISSING,
        *,
        thread_id: str | None = None,
        start_step: int | None = None,
        state: AgentState | None = None,
        decisions: Mapping[str, Any] | None = None,
        **model_kwargs: Any,
    ) -> AgentResult:
        """Async twin of :meth:`resume`."""
        del start_step
        with self._guarded(thread_id, human_decision, decisions) as record:
            async with self._alocked(thread_id):
                plan, seen = await self._aprepare_resume(
                    messages, human_decision, thread_id, state, decisions, model_kwargs
                )
                with _checked_decision(seen):
                    output = await self.graph.ainvoke(
                        plan.graph_input, plan.with_record(record), durability=_DURABILITY
                    )
                _refuse_if_asked_again(seen, self._split(output)[1])
        return self._finish(plan, *self._split(output), state)

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
                self._check_run(plan, self.graph.get_state(plan.config), resume_from)
                yield from self._stream(plan, state)

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
            async with self._alocked(thread_id):
                self._check_run(plan, await self.graph.aget_state(plan.config), resume_from)
                async for event in self._astream(plan, state):
                    yield event

    def stream_resume(
        self,
        messages: MessagesIn | None = None,
        human_decision: Any = _MISSING,
        *,
        thread_id: str | None = None,
        start_step: int | None = None,
        state: AgentState | None = None,
        decisions: Mapping[str, Any] | None = None,
        **model_kwargs: Any,
    ) -> Iterator[AgentEvent]:
        """Like :meth:`resume`, yielding typed events as they happen."""
        del start_step
        with (
            self._guarded(thread_id, human_decision, decisions) as record,
            self._locked(thread_id),
        ):
            plan, seen = self._prepare_resume(
                messages, human_decision, thread_id, state, decisions, model_kwargs
            )
            plan.with_record(record)
            with _checked_decision(seen):
                yield from self._stream(plan, state)
            _refuse_if_asked_again(seen, self.graph.get_state(plan.config).interrupts)

    async def astream_resume(
        self,
        messages: MessagesIn | None = None,
        human_decision: Any = _MISSING,
        *,
        thread_id: str | None = None,
        start_step: int | None = None,
        state: AgentState | None = None,
        decisions: Mapping[str, Any] | None = None,
        **model_kwargs: Any,
    ) -> AsyncIterator[AgentEvent]:
        """Async twin of :meth:`stream_resume`."""
        del start_step
        with self._guarded(thread_id, human_decision, decisions) as record:
            async with self._alocked(thread_id):
                plan, seen = await self._aprepare_resume(
                    messages, human_decision, thread_id, state, decisions, model_kwargs
                )
                plan.with_record(record)
                with _checked_decision(seen):
                    async for event in self._astream(plan, state):
                        yield event
                _refuse_if_asked_again(seen, (await self.graph.aget_state(plan.config)).interrupts)

    @contextmanager
    def _guarded(
        self,
        thread_id: str | None,
        decision: Any = _MISSING,
        decisions: Mapping[str, Any] | None = None,
    ) -> Iterator[dict[str, CompletedCall]]:
        """Around a public call: checks ``thread_id``; yields the record of the thread's tool
        calls that ran but were not saved yet; turns a storage failure into a
        :class:`StorageError` that says what ran (kept for the next call on the thread)."""
        _check_thread_id(thread_id)
        record = self._completed.setdefault(thread_id, {}) if thread_id else {}
        try:
            yield record
        except Exception as error:
            if isinstance(error, DynavecError) or not is_storage_error(error):
                raise
            answer = decisions if decisions is not None else decision
            raise _storage_error(self.checkpointer, error, thread_id, record, answer) from error
        if thread_id:
            self._completed.pop(thread_id, None)

    def _locked(self, thread_id: str | None) -> AbstractContextManager[None]:
        """The lock of a thread someone could name, held while a run or resume reads and
        advances it: a resume (or another run) of the same thread cannot start while this one
        is inside a tool, and what this caller read stays true until it is done. A call on a
        new, random thread needs none (nobody else knows its id yet)."""
        return resume_lock(self.checkpointer, thread_id) if thread_id else nullcontext()

    def _alocked(self, thread_id: str | None) -> AbstractAsyncContextManager[None]:
        """Async twin of :meth:`_locked`."""
        return aresume_lock(self.checkpointer, thread_id) if thread_id else _anull()

    def _stream(self, plan: _Plan, state: AgentState | None) -> Iterator[AgentEvent]:
        for mode, chunk in self.graph.stream(
            plan.graph_input, plan.config, stream_mode=STREAM_MODES, durability=_DURABILITY
        ):
            yield from events_from_chunk(mode, chunk)
        snapshot = self.graph.get_state(plan.config)
        yield ResultEvent(self._finish(plan, dict(snapshot.values), snapshot.interrupts, state))

    async def _astream(self, plan: _Plan, state: AgentState | None) -> AsyncIterator[AgentEvent]:
        async for mode, chunk in self.graph.astream(
            plan.graph_input, plan.config, stream_mode=STREAM_MODES, durability=_DURABILITY
        ):
            for event in events_from_chunk(mode, chunk):
                yield event
        snapshot = await self.graph.aget_state(plan.config)
        yield ResultEvent(self._finish(plan, dict(snapshot.values), snapshot.interrupts, state))

    # --- resume planning (the I/O lines differ between the twins) ----------------------

    def _prepare_resume(
        self,
        messages: MessagesIn | None,
        decision: Any,
        thread_id: str | None,
        state: AgentState | None,
        decisions: Mapping[str, Any] | None,
        model_kwargs: dict[str, Any],
    ) -> tuple[_Plan, StateSnapshot | None]:
        """The plan, and the thread state it was made from (None for a messages resume)."""
        if thread_id is not None:
            snapshot = self.graph.get_state(_config(thread_id, model_kwargs))
            if messages is None or snapshot.interrupts:
                plan = self._resume_thread_plan(
                    thread_id, snapshot, decision, model_kwargs, decisions
                )
                return plan, snapshot
        plan, seed = self._seed(messages, thread_id, state, decision, model_kwargs)
        self.graph.update_state(plan.config, seed, as_node=AGENT_NODE)
        if _looks_like_id_map(decision):  # reach the pause first, then answer it by its id
            paused = self._split(self.graph.invoke(None, plan.config, durability=_DURABILITY))[1]
            plan.graph_input = Command(resume=_resume_value(decision, paused))
        return plan, None

    async def _aprepare_resume(
        self,
        messages: MessagesIn | None,
        decision: Any,
        thread_id: str | None,
        state: AgentState | None,
        decisions: Mapping[str, Any] | None,
        model_kwargs: dict[str, Any],
    ) -> tuple[_Plan, StateSnapshot | None]:
        if thread_id is not None:
            snapshot = await self.graph.aget_state(_config(thread_id, model_kwargs))
            if messages is None or snapshot.interrupts:
                plan = self._resume_thread_plan(
                    thread_id, snapshot, decision, model_kwargs, decisions
                )
                return plan, snapshot
        plan, seed = self._seed(messages, thread_id, state, decision, model_kwargs)
        await self.graph.aupdate_state(plan.config, seed, as_node=AGENT_NODE)
        if _looks_like_id_map(decision):  # reach the pause first, then answer it by its id
            output = await self.graph.ainvoke(None, plan.config, durability=_DURABILITY)
            plan.graph_input = Command(resume=_resume_value(decision, self._split(output)[1]))
        return plan, None

    # --- checkpoints ------------------------------------------------------------------

    def _view(self, thread_id: str, snapshot: StateSnapshot) -> Checkpoint:
        return dynavec_view(snapshot, thread_id=thread_id, system_prompt=self.system_prompt)

    def get_checkpoint(self, thread_id: str, checkpoint_id: str | None = None) -> Checkpoint | None:
        """The thread's latest checkpoint (or ``checkpoint_id``) as a dynavec record.

        Works with every saver; the layout is docs/compatibility.md §5's (node ids ``init``,
        ``step_i``, ``interrupted``, ``max_steps_reached``), ``checkpoint_id`` is LangGraph's
        (pass it as ``run(..., resume_from=...)``). ``None`` for an unknown thread or id.
        """
        snapshot = self.graph.get_state(_config(thread_id, {}, checkpoint_id))
        return self._view(thread_id, snapshot) if _exists(snapshot) else None

    async def aget_checkpoint(
        self, thread_id: str, checkpoint_id: str | None = None
    ) -> Checkpoint | None:
        """Async twin of :meth:`get_checkpoint`."""
        snapshot = await self.graph.aget_state(_config(thread_id, {}, checkpoint_id))
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
        history = list(self.graph.get_state_history(_config(thread_id, {})))
        return self._boundaries(thread_id, history, limit)

    async def alist_checkpoints(self, thread_id: str, limit: int | None = None) -> list[Checkpoint]:
        """Async twin of :meth:`list_checkpoints`."""
        history = [s async for s in self.graph.aget_state_history(_config(thread_id, {}))]
        return self._boundaries(thread_id, history, limit)

    def close(self) -> None:
        """Close the connection the agent opened from a ``checkpointer=`` string (if any)."""
        if self._owned_saver is not None:
            self._owned_saver.close()

    def __enter__(self) -> ReActAgent:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _seed(
        self,
        messages: MessagesIn | None,
        thread_id: str | None,
        state: AgentState | None,
        decision: Any,
        model_kwargs: dict[str, Any],
    ) -> tuple[_Plan, dict[str, Any]]:
        """Resume from messages alone: a new thread holding them, paused before the call."""
        if messages is None:
            raise NothingToResumeError(
                "nothing to resume: pass the paused messages or thread_id= of a paused thread"
            )
        converted = self._resume_messages(messages)
        _resume_value(decision, [])
        _check_storable(self.checkpointer, decision)
        tid = thread_id or self._scratch_thread()
        seed: dict[str, Any] = {"messages": converted}
        if state is not None:
            seed["shared"] = dict(state.data)
        return _Plan(_config(tid, model_kwargs), Command(resume=decision), tid), seed


__all__ += ["build_result"]  # its home is dynavec_langgraph.view
