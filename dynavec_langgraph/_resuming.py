"""The guarded resume: the one way a decision reaches a paused thread.

``ReActAgent.resume`` and its async and streaming twins, the inbox (``inbox.resume_graph``,
``dynavec-langgraph inbox answer``) and the command line's ``resume`` all answer a pause
through :func:`resuming` (or its async twin :func:`aresuming`), which, in this order:

1. takes the thread's lock (:mod:`dynavec_langgraph._locks`) without waiting:
   :class:`~dynavec_langgraph._errors.ConcurrentResumeError` if another caller holds it;
2. reads the thread from the saver *under the lock*, so what it checks stays true until the
   caller is done (a record it cannot read: :class:`~dynavec_langgraph._errors.StorageError`);
3. checks the thread (:func:`plan_resume`): unknown or not paused →
   :class:`~dynavec_langgraph._errors.NothingToResumeError`; a pending call of a tool the graph
   does not have → :class:`~dynavec_langgraph._errors.InvalidDecisionError` (resumed with the
   wrong agent, the approval would be lost); a run that stopped without a pause (its process
   died) is finished, or refused, as the caller asks;
4. builds the ``Command(resume=...)`` from the answer (:meth:`Answer.command`): no decision,
   ``None``, one decision for several pauses, ``decisions`` that name what is not pending, a
   value the saver cannot store → ``InvalidDecisionError``, all before anything runs;
5. while the caller runs the graph: a decision the pause's ``response_schema`` refuses →
   ``InvalidDecisionError`` (nothing saved); a storage failure →
   :class:`~dynavec_langgraph._errors.StorageError` naming the tool calls that ran
   (:func:`storage_guard`);
6. :meth:`Resume.settle`: the same approval asked again (the paused tool refused the
   decision) → ``InvalidDecisionError``, the thread still paused.

Every error is a :class:`~dynavec_langgraph._errors.DynavecError` and is what it is for every
caller: the inbox and the command line print it, they do not re-wrap it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import AsyncExitStack, ExitStack, asynccontextmanager, contextmanager
from dataclasses import dataclass
from typing import Any, Final, Literal, Protocol

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple
from langgraph.errors import is_invalid_resume
from langgraph.pregel import Pregel
from langgraph.types import Command, Interrupt, StateSnapshot

from dynavec_langgraph._conversation_view import pending_calls
from dynavec_langgraph._decisions import refusal, resume_command
from dynavec_langgraph._digest import refuse_stale, stale_refusal
from dynavec_langgraph._errors import (
    NOTHING_TO_RESUME_TEXT,
    DamagedThreadError,
    DynavecError,
    IncompatibleThreadError,
    InvalidDecisionError,
    InvalidInputError,
    NothingToResumeError,
    StaleDecisionError,
    StorageError,
    ThreadPausedError,
    damaged_text,
    foreign_node_text,
    foreign_tool_text,
    no_pause_record_text,
    not_paused_text,
    not_storable_text,
)
from dynavec_langgraph._exactly_once import in_doubt_pauses, superseded
from dynavec_langgraph._lg_names import INTERRUPT_WRITE
from dynavec_langgraph._nodes import until_done
from dynavec_langgraph._pause_value import describe_pending, interrupt_fields
from dynavec_langgraph._persistence.base import DelegatingSaver
from dynavec_langgraph._persistence.connections import (
    is_schema_error,
    is_storage_error,
    schema_conflict,
)
from dynavec_langgraph._persistence.history import HistoryCache
from dynavec_langgraph._persistence.locks import aresume_lock, resume_lock
from dynavec_langgraph._policy import (
    Approver,
    approval_recorded,
    approver_required,
    refuse_approver,
    sign_resume,
)
from dynavec_langgraph._state import TOOLS_METADATA_KEY, TOOLS_NODE
from dynavec_langgraph._storable import brief, check_id, check_text, lone_surrogate
from dynavec_langgraph._tool_call import CompletedCall
from dynavec_langgraph.savers import describe_storage

__all__ = [
    "MISSING",
    "Answer",
    "Resume",
    "aread_thread",
    "aresuming",
    "asaved_on_cancel",
    "brief",
    "check_id",
    "check_state",
    "check_storable",
    "check_text",
    "damage",
    "foreign_pause",
    "lone_surrogate",
    "may_be_paused_elsewhere",
    "plan_resume",
    "read_thread",
    "refuse_foreign_pause",
    "refuse_if_asked_again",
    "refuse_if_damaged",
    "refuse_if_paused",
    "resuming",
    "schema_refusal",
    "storage_guard",
]

MISSING: Final[Any] = object()
"""No decision given (``None`` is a value LangGraph cannot resume with, so it is refused)."""

Crashed = Literal["continue", "refuse"]
"""What to do with a thread whose run stopped without a pause (its process died, or a
breakpoint): finish it (``ReActAgent``), or refuse (the inbox: there is nothing to answer)."""


def check_state(
    saver: BaseCheckpointSaver[Any], data: Mapping[str, Any], field: str = "state.data"
) -> None:
    """Refuse, before anything runs, ``AgentState`` data the saver cannot store or that holds
    a lone surrogate; the message names the key.

    Raises:
        InvalidInputError: naming ``field[key]``.
    """
    check_text(data, field)
    try:
        saver.serde.dumps_typed(dict(data))
    except Exception as error:
        for key, item in data.items():  # name the key that cannot be stored
            try:
                saver.serde.dumps_typed(item)
            except Exception as inner:
                where = f"{field}[{brief(key, 40)}]"
                raise InvalidInputError(not_storable_text(where, str(inner)), where) from None
        raise InvalidInputError(not_storable_text(field, str(error)), field) from None


def check_storable(
    saver: BaseCheckpointSaver[Any], decision: Any, field: str = "the decision"
) -> None:
    """Refuse, before anything runs, a decision the thread's saver cannot store (the approved
    tool would run and then the write fail, leaving the pause open to be approved again), or
    one holding a lone surrogate (it would be stored changed)."""
    check_text(decision, field, InvalidDecisionError)
    try:
        saver.serde.dumps_typed(decision)
    except Exception as error:
        if isinstance(error, RecursionError) or "recursion" in str(error).lower():
            raise InvalidDecisionError(
                "the decision is nested too deeply to be stored; nothing ran and the thread is "
                "still paused: send a flatter value"
            ) from None
        raise InvalidDecisionError(
            f"the decision {brief(decision)} cannot be stored by the checkpointer ({error}); "
            "nothing ran and the thread is still paused: decide with JSON-like values (str, "
            "number, bool, list, dict) or a pydantic model"
        ) from None


@dataclass(frozen=True)
class Answer:
    """A person's answer to a paused thread, as given (checked by :meth:`command`).

    Attributes:
        decision: the decision for the one pending pause (or for ``node``).
        decisions: ``{node_id or interrupt_id: decision}`` for several pending pauses.
        node: answer only this pending pause (a node id or an interrupt id) with ``decision``.
        several: what to tell a caller who gave one decision while several are pending.
        approver: who answers (a name or ``{"name", "roles"}``): sent with each decision for
            a pause with an approval policy (:func:`dynavec_langgraph._policy.sign_resume`).
    """

    decision: Any = MISSING
    decisions: Mapping[str, Any] | None = None
    node: str | None = None
    several: str = "answer them with resume(thread_id=..., decisions={node_id: decision, ...})"
    approver: Approver | None = None

    @property
    def given(self) -> Any:
        """What the caller decided, for messages (``MISSING`` when nothing was)."""
        return self.decisions if self.decisions is not None else self.decision

    def value(self, interrupts: Sequence[Interrupt]) -> Any:
        """``Command.resume`` for a single ``decision`` (``interrupts`` empty: the value
        itself, for a pause that is not reached yet)."""
        if self.decision is MISSING or self.decision is None:
            raise InvalidDecisionError(
                "resume() needs human_decision= (any JSON value but None, e.g. 'approved')"
            )
        if len(interrupts) > 1:
            raise InvalidDecisionError(
                f"{len(interrupts)} decisions are pending ({describe_pending(interrupts)}); "
                f"{self.several}"
            )
        # addressed by id, so every decision reaches the tool as it is (a dict like {} would
        # otherwise be read as a map of interrupt ids and dropped)
        return {interrupts[0].id: self.decision} if interrupts else self.decision

    def command(
        self, interrupts: Sequence[Interrupt], saver: BaseCheckpointSaver[Any] | None
    ) -> Command[Any]:
        """:meth:`_command`, each decision signed by ``approver`` (checked against the
        pauses' approver names before anything runs: ``ApproverRefusedError``)."""
        command = self._command(interrupts, saver)
        if self.approver is None or not isinstance(command.resume, dict) or not interrupts:
            return command
        return Command(resume=sign_resume(interrupts, command.resume, self.approver))

    def _command(
        self, interrupts: Sequence[Interrupt], saver: BaseCheckpointSaver[Any] | None
    ) -> Command[Any]:
        """The ``Command(resume=...)`` answering ``interrupts``, checked before anything runs
        (``saver=None``: the values are not checked against a saver, e.g. for a server).

        Raises:
            InvalidDecisionError: no decision or ``None``; ``decision`` and ``decisions``
                both; ``decisions`` not a mapping or naming what is not pending; one decision
                for several pauses; a value ``saver`` cannot store.
        """
        decisions = self.decisions
        if self.node is not None:
            if decisions is not None:
                raise InvalidDecisionError("pass node= with decision=, or decisions=, not both")
            decisions = {self.node: self.decision}
        if decisions is None:
            resume = self.value(interrupts)
            if saver is not None:
                check_storable(saver, self.decision, "human_decision")
            return Command(resume=resume)
        if self.decision is not MISSING and self.node is None:
            raise InvalidDecisionError("pass human_decision= or decisions=, not both")
        if not isinstance(decisions, Mapping):
            raise InvalidDecisionError(
                f"decisions={decisions!r:.80} ({type(decisions).__name__}): pass a mapping "
                f"{{node_id or interrupt_id: decision}}; pending: {describe_pending(interrupts)}"
            )
        if saver is not None:
            for key, value in decisions.items():
                check_storable(saver, value, f"decisions[{brief(key, 40)}]")
        return resume_command(interrupts, decisions)


@dataclass
class Resume:
    """What one guarded resume sends to the graph.

    Attributes:
        config: the thread's config.
        graph_input: the ``Command(resume=...)``; ``None`` to finish a run that stopped
            without a pause; a caller's own input for a resume from messages.
        seen: the thread as read under the lock (``None`` for a resume from messages).
    """

    config: RunnableConfig
    graph_input: Any
    seen: StateSnapshot | None = None

    def settle(self, after: Sequence[Interrupt]) -> None:
        """Check the pauses pending after the run: the same approval asked again means the
        paused tool refused the decision.

        Raises:
            InvalidDecisionError: the decision was refused; the thread is still paused.
        """
        refuse_approver(self.seen.interrupts if self.seen else [], after)
        refuse_if_asked_again(self.seen.interrupts if self.seen else [], after)


def refuse_if_paused(thread_id: str, interrupts: Sequence[Interrupt]) -> None:
    """Before a run: a thread waiting for a decision is not run again.

    Raises:
        ThreadPausedError: ``interrupts`` are pending; nothing was written.
    """
    if interrupts:
        raise ThreadPausedError(thread_id, [interrupt_fields(i).label() for i in interrupts])


def refuse_if_asked_again(before: Sequence[Interrupt], after: Sequence[Interrupt]) -> None:
    """After a resume: the same approval asked again means the paused tool refused the
    decision (also for ``RemoteReActAgent``, which reads both from the server).

    Raises:
        ApproverRequiredError: the answer named no approver and the pause's policy needs one;
            nothing ran, the pause stays.
        StaleDecisionError: the decision was bound to another pause (its review digest);
            nothing ran, the pause stays. Or it was for a pause shown before a crash while
            the call it led to ran: that call is in doubt and its question is pending now
            (:func:`~dynavec_langgraph._exactly_once.superseded`); nothing ran.
        InvalidDecisionError: the decision was refused; the thread is still paused.
    """
    moved = superseded(before, after)  # a crash while the approved call ran: in doubt now
    if moved:
        raise StaleDecisionError(moved)
    if approval_recorded(before, after):  # counted: a re-ask's error is a replayed answer's
        return
    required = approver_required(before, after)  # asked again under the same digest, too
    if required is not None:
        raise required
    stale = stale_refusal(before, after)
    if stale:
        raise StaleDecisionError(stale)
    message = refusal(before, after)
    if message:
        raise InvalidDecisionError(message)


def schema_refusal(pending: Sequence[Interrupt], detail: str) -> InvalidDecisionError:
    """The error for a decision the pause's ``response_schema`` refused (nothing saved)."""
    return InvalidDecisionError(
        f"the decision for {describe_pending(pending)} does not match its response_schema "
        f"({detail}). Nothing was saved and the thread is still paused: resume it again with "
        "a valid decision"
    )


def _graph_tools(graph: object) -> list[str] | None:
    names = ((getattr(graph, "config", None) or {}).get("metadata") or {}).get(TOOLS_METADATA_KEY)
    return [str(n) for n in names] if isinstance(names, list) else None


def _refuse_foreign_tools(graph: object, snapshot: StateSnapshot, thread_id: str) -> None:
    """A pause at a call of a tool ``graph`` lacks: the decision would be lost. The call is
    the interrupt's ``tool_call``; for a plain LangGraph interrupt (no ``tool_call``, e.g. in
    a thread of LangGraph's prebuilt agent) every unanswered call of the conversation."""
    tools = _graph_tools(graph)
    if tools is None:
        return
    for item in snapshot.interrupts:
        call = interrupt_fields(item).tool_call
        if call is None:
            messages = (snapshot.values or {}).get("messages")
            names = [c["name"] for c in pending_calls(messages)] if messages else []
        else:
            names = [call["name"]] if call.get("name") is not None else []
        for name in names:
            if name not in tools:
                raise IncompatibleThreadError(
                    foreign_tool_text(thread_id, name, describe_pending([item]), tools)
                )


_INTERRUPT_WRITE: Final = INTERRUPT_WRITE
"""The channel of a pause's pending write: mirrors ``langgraph._internal._constants.INTERRUPT``
(langgraph 1.2), which is not public; pinned by tests/test_adversarial_2.py."""
_BRANCH: Final = "branch:to:"
"""The channel that triggers a node of a ``StateGraph``: mirrors ``_CHANNEL_BRANCH_TO`` of
``langgraph.graph.state`` (langgraph 1.2); pinned by tests/test_adversarial_2.py."""


def foreign_pause(graph: object, stored: CheckpointTuple | None) -> list[str]:
    """The nodes, absent from ``graph``, that the thread's latest checkpoint (``stored``, a
    ``CheckpointTuple`` or ``None``) is paused in: a pause ``graph.get_state`` cannot see,
    because another graph wrote the thread (e.g. ``create_agent``'s HITL middleware node)."""
    if stored is None or not any(w[1] == _INTERRUPT_WRITE for w in stored.pending_writes or ()):
        return []
    ours = set(getattr(graph, "nodes", None) or ())
    triggered = stored.checkpoint.get("channel_values") or {}  # a trigger not consumed yet
    nodes = (c[len(_BRANCH) :] for c in triggered if c.startswith(_BRANCH))
    return sorted(n for n in nodes if n not in ours)


def refuse_foreign_pause(
    graph: object, stored: CheckpointTuple | None, snapshot: StateSnapshot | None, thread_id: str
) -> None:
    """Refuse a thread paused in a node ``graph`` does not have (see :func:`foreign_pause`).

    Raises:
        IncompatibleThreadError: naming the node(s) and ``graph``'s nodes; nothing changed.
    """
    if snapshot is None or snapshot.interrupts:
        return
    nodes = foreign_pause(graph, stored)
    if nodes:
        ours = [n for n in getattr(graph, "nodes", None) or () if not n.startswith("__")]
        raise IncompatibleThreadError(foreign_node_text(thread_id, nodes, ours))


def _unanswered(snapshot: StateSnapshot) -> bool:
    messages = (snapshot.values or {}).get("messages")
    return isinstance(messages, list) and bool(pending_calls(messages))


def damage(snapshot: StateSnapshot) -> str | None:
    """Why the thread's records contradict each other, or ``None``: the tool node is due but
    the conversation holds no unanswered call (a write of the model's turn deleted, or a
    checkpoint whose parent does not exist, so the stored messages cannot be replayed)."""
    if snapshot.created_at is None or TOOLS_NODE not in snapshot.next:
        return None
    if _unanswered(snapshot):
        return None
    held = len((snapshot.values or {}).get("messages") or [])
    return (
        f"its next step is the {TOOLS_NODE!r} node but its {held} stored message(s) hold no "
        "unanswered tool call: a record of the model's turn is missing, or a checkpoint "
        "points to a parent that does not exist"
    )


def refuse_if_damaged(snapshot: StateSnapshot, thread_id: str) -> None:
    """Before anything runs on a thread (run, resume, the inbox).

    Raises:
        DamagedThreadError: see :func:`damage`; nothing ran, no decision was applied.
    """
    why = damage(snapshot)
    if why is not None:
        raise DamagedThreadError(damaged_text(thread_id, why), thread_id, [])


def plan_resume(
    graph: object,
    snapshot: StateSnapshot,
    thread_id: str,
    answer: Answer,
    saver: BaseCheckpointSaver[Any],
    config: RunnableConfig,
    *,
    crashed: Crashed = "continue",
) -> Resume:
    """What to send to ``graph`` (with ``config``) to answer ``thread_id`` as read in
    ``snapshot`` (no I/O).

    Raises:
        NothingToResumeError: an unknown thread, or one that is not paused (and, with
            ``crashed="refuse"``, one that stopped without a pause).
        InvalidDecisionError: see :meth:`Answer.command`; or the pending call is of a tool
            ``graph`` does not have.
    """
    if snapshot.created_at is None:
        raise NothingToResumeError(
            f"unknown thread {thread_id!r}: nothing to resume (check the thread id and that "
            "the checkpointer is the one the paused run used)"
        )
    refuse_if_damaged(snapshot, thread_id)
    if not snapshot.interrupts:
        if snapshot.next or snapshot.tasks:
            # a run stopped by a crash (or a breakpoint): its pending calls are not done.
            # When the crash came after a task's result was saved but before the next
            # checkpoint, get_state applies the saved result and shows no `next`, only the task.
            if crashed == "continue" and answer.given is not MISSING and _unanswered(snapshot):
                # a decision with no pause to answer: never dropped without an error
                nodes = ", ".join(map(repr, snapshot.next)) or "a task"
                raise NothingToResumeError(no_pause_record_text(thread_id, nodes))
            if crashed == "continue":
                return Resume(config, None, snapshot)
            raise NothingToResumeError(
                f"thread {thread_id!r} stopped before {', '.join(snapshot.next) or 'a task'} "
                "(a breakpoint set with interrupt_before/interrupt_after, or a run that "
                "crashed), not at an interrupt() approval: there is no decision to give. "
                "Continue it with ReActAgent.resume(thread_id=...) or graph.invoke(None, "
                "config); nothing was changed"
            )
        raise NothingToResumeError(
            not_paused_text(thread_id, "; send it a new message (run()) to continue it")
        )
    _refuse_foreign_tools(graph, snapshot, thread_id)
    command = answer.command(snapshot.interrupts, saver)
    refuse_stale(thread_id, snapshot.interrupts, command.resume)
    return Resume(config, command, snapshot)


def _unreadable(thread_id: str, error: Exception) -> StorageError:
    return StorageError(
        f"thread {thread_id!r} cannot be read: {type(error).__name__}: {error}. Its records "
        "were written by another program or version, or were damaged; nothing was changed",
        thread_id,
        [],
    )


def read_thread(graph: Pregel[Any, Any], config: RunnableConfig, thread_id: str) -> StateSnapshot:
    """``graph.get_state(config)``; a record that cannot be read → ``StorageError`` (a storage
    failure passes through, for :func:`storage_guard`)."""
    try:
        return graph.get_state(config)
    except Exception as error:
        if isinstance(error, DynavecError) or is_storage_error(error):
            raise
        raise _unreadable(thread_id, error) from None


async def aread_thread(
    graph: Pregel[Any, Any], config: RunnableConfig, thread_id: str
) -> StateSnapshot:
    """Async twin of :func:`read_thread`."""
    try:
        return await graph.aget_state(config)
    except Exception as error:
        if isinstance(error, DynavecError) or is_storage_error(error):
            raise
        raise _unreadable(thread_id, error) from None


def _cache_of(
    graph: Pregel[Any, Any], saver: BaseCheckpointSaver[Any], config: RunnableConfig
) -> HistoryCache | None:
    """The graph's saver when it is the package's ``HistoryCache`` storing ``config``'s
    thread in ``saver`` (through the package's wrappers, each routing the thread), else
    None."""
    cache = getattr(graph, "checkpointer", None)
    if not isinstance(cache, HistoryCache):
        return None
    hop: BaseCheckpointSaver[Any] = cache
    for _ in range(8):  # the package's wrappers are a few deep
        if hop is saver:
            return cache
        if not isinstance(hop, DelegatingSaver):
            return None
        hop = hop.route(config)
    return None


def read_thread_once(
    graph: Pregel[Any, Any], saver: BaseCheckpointSaver[Any], config: RunnableConfig, thread_id: str
) -> tuple[StateSnapshot, CheckpointTuple | None]:
    """:func:`read_thread` and the stored checkpoint it shows (its pending writes: the crash
    marks), read once: the checkpoint read for the marks is handed to the snapshot's read of
    it (:meth:`HistoryCache.hand_over`; the caller holds the thread's lock, so nothing is
    written between). With another saver, the snapshot, then the checkpoint."""
    cache = _cache_of(graph, saver, config)
    if cache is None:
        snapshot = read_thread(graph, config, thread_id)
        return snapshot, saver.get_tuple(config)
    stored = _unless_unreadable(thread_id, lambda: cache.get_tuple(config))
    handle = None if stored is None else cache.hand_over(config, stored)
    try:
        return read_thread(graph, config, thread_id), stored
    finally:
        if handle is not None:
            cache.take_back(handle)


async def aread_thread_once(
    graph: Pregel[Any, Any], saver: BaseCheckpointSaver[Any], config: RunnableConfig, thread_id: str
) -> tuple[StateSnapshot, CheckpointTuple | None]:
    """Async twin of :func:`read_thread_once`."""
    cache = _cache_of(graph, saver, config)
    if cache is None:
        snapshot = await aread_thread(graph, config, thread_id)
        return snapshot, await saver.aget_tuple(config)
    try:
        stored = await cache.aget_tuple(config)
    except Exception as error:
        if isinstance(error, DynavecError) or is_storage_error(error):
            raise
        raise _unreadable(thread_id, error) from None
    handle = None if stored is None else cache.hand_over(config, stored)
    try:
        return await aread_thread(graph, config, thread_id), stored
    finally:
        if handle is not None:
            cache.take_back(handle)


def _unless_unreadable(thread_id: str, read: Callable[[], CheckpointTuple | None]) -> Any:
    """``read()``; a record that cannot be read -> ``StorageError``, as :func:`read_thread`."""
    try:
        return read()
    except Exception as error:
        if isinstance(error, DynavecError) or is_storage_error(error):
            raise
        raise _unreadable(thread_id, error) from None


def _storage_error(
    saver: BaseCheckpointSaver[Any],
    error: BaseException,
    thread_id: str | None,
    record: Mapping[str, CompletedCall] | None,
    decision: Any,
) -> StorageError:
    where = describe_storage(saver)
    thread = f"thread {thread_id!r}" if thread_id else "the thread"
    conflict = schema_conflict(saver, where) if is_schema_error(error) else None
    if conflict and not record:
        return StorageError(
            f"{conflict} ({type(error).__name__}: {error}); {thread} is unchanged",
            thread_id,
            [],
        )
    if not record:
        return StorageError(
            f"{where} failed ({type(error).__name__}: {error}). No tool ran and {thread} is "
            "unchanged: try again once the storage works",
            thread_id,
            [],
        )
    ran = [c.describe() for c in record.values()]
    decided = f" with the decision {brief(decision)}" if decision is not MISSING else ""
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
def storage_guard(
    saver: BaseCheckpointSaver[Any],
    thread_id: str | None,
    record: Mapping[str, CompletedCall] | None = None,
    decision: Any = MISSING,
) -> Iterator[None]:
    """A storage failure inside → :class:`StorageError` naming the storage and the tool calls
    in ``record`` (those that ran but were not saved); other errors pass through."""
    try:
        yield
    except Exception as error:
        if isinstance(error, DynavecError) or not is_storage_error(error):
            raise
        raise _storage_error(saver, error, thread_id, record, decision) from error


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


def may_be_paused_elsewhere(snapshot: StateSnapshot) -> bool:
    """A thread that shows no pause but has unanswered tool calls: one read of its raw
    checkpoint tells whether another graph paused it (:func:`refuse_foreign_pause`)."""
    if snapshot.created_at is None or snapshot.interrupts:
        return False
    messages = (snapshot.values or {}).get("messages")
    return isinstance(messages, list) and bool(messages) and bool(pending_calls(messages))


class Pending(Protocol):
    """What :func:`in_doubt_first` reads of a thread: its pending ``Interrupt``s (a
    ``StateSnapshot``, or ``RemoteReActAgent``'s view of a server's thread)."""

    @property
    def interrupts(self) -> Sequence[Interrupt]: ...


def in_doubt_first(
    answer: Answer,
    thread_id: str,
    before: Pending,
    stale: Mapping[str, Any],
    after: Pending,
) -> None:
    """After a door surfaced the in-doubt question of a call whose approved run died
    (:func:`~dynavec_langgraph._exactly_once.in_doubt_pauses`): an answer that names that
    question (its node id or interrupt id) goes on to it; any other was meant for the pause
    the thread showed before.

    Raises:
        StaleDecisionError: the answer does not name the in-doubt question; nothing was
            applied and nothing ran, the question is pending now.
    """
    asked = [i for i in after.interrupts if i.id not in {p.id for p in before.interrupts}]
    asked += [i for i in after.interrupts if isinstance(i.value, Mapping)
              and i.value.get("node_id") in {v["node_id"] for v in stale.values()}]  # fmt: skip
    names = {i.id for i in asked} | {
        i.value.get("node_id") for i in asked if isinstance(i.value, Mapping)
    }
    given = {answer.node} if answer.node is not None else set(answer.decisions or {})
    if given and given <= names | {i.id for i in after.interrupts} and given & names:
        return
    shown = ", ".join(sorted({repr(interrupt_fields(i).node_id) for i in before.interrupts}))
    for value in stale.values():
        payload = value.get("payload") or {}
        node = value["node_id"]
        raise StaleDecisionError(
            f"thread {thread_id!r}: the decision was not applied: the thread showed {shown}, "
            f"but the call of `{payload.get('name')}` was running after it was answered and "
            f"its process stopped, so it may or may not have run (idempotency key "
            f"{payload.get('idempotency_key')}). Nothing ran. The thread now asks {node!r}: "
            f"answer that, naming it (resume(..., decisions={{{node!r}: ...}}), inbox answer "
            f"--node {node}): approve runs it again with the same key, respond gives its "
            "result (it ran), reject skips it"
        )


def _seeds(snapshot: StateSnapshot | None) -> bool:
    """A resume from messages plans itself: on a new thread, or one that is not paused."""
    return snapshot is None or not snapshot.interrupts


def _planned(
    graph: object,
    snapshot: StateSnapshot | None,
    thread_id: str | None,
    answer: Answer,
    saver: BaseCheckpointSaver[Any],
    config: RunnableConfig,
    crashed: Crashed,
) -> Resume:
    if snapshot is None or thread_id is None:
        raise NothingToResumeError(NOTHING_TO_RESUME_TEXT)
    return plan_resume(graph, snapshot, thread_id, answer, saver, config, crashed=crashed)


@contextmanager
def resuming(
    graph: Pregel[Any, Any],
    saver: BaseCheckpointSaver[Any],
    thread_id: str | None,
    answer: Answer,
    config: RunnableConfig,
    *,
    record: Mapping[str, CompletedCall] | None = None,
    crashed: Crashed = "continue",
    seed: Seed | None = None,
) -> Iterator[Resume]:
    """The guarded resume (see the module's docstring): yields what to send to ``graph``.

    The caller runs the graph inside the ``with`` block and passes the pauses pending after
    it to :meth:`Resume.settle`. ``thread_id=None`` (a resume from messages on a new thread
    nobody else knows) takes no lock and reads nothing: ``seed`` plans it.

    Example::

        with resuming(graph, saver, "t1", Answer("approved"), config) as resume:
            output = graph.invoke(resume.graph_input, resume.config)
            resume.settle(output.get("__interrupt__", []))
    """
    with ExitStack() as stack:
        stack.enter_context(storage_guard(saver, thread_id, record, answer.given))
        snapshot: StateSnapshot | None = None
        if thread_id is not None:
            check_id(thread_id, "thread_id")
            stack.enter_context(resume_lock(saver, thread_id))
            snapshot, stored = read_thread_once(graph, saver, config, thread_id)
            if may_be_paused_elsewhere(snapshot):
                refuse_foreign_pause(graph, stored, snapshot, thread_id)
            stale = in_doubt_pauses(stored, snapshot.interrupts)
            if stale:  # the approved call's run died: its in-doubt question comes first
                graph.invoke(None, config)  # asks it (nothing runs), under the lock
                after = read_thread(graph, config, thread_id)
                in_doubt_first(answer, thread_id, snapshot, stale, after)
                snapshot = after
        resume = seed(snapshot) if seed is not None and _seeds(snapshot) else None
        if resume is None:
            resume = _planned(graph, snapshot, thread_id, answer, saver, config, crashed)
        with _decision_guard(resume.seen):
            yield resume


@asynccontextmanager
async def aresuming(
    graph: Pregel[Any, Any],
    saver: BaseCheckpointSaver[Any],
    thread_id: str | None,
    answer: Answer,
    config: RunnableConfig,
    *,
    record: Mapping[str, CompletedCall] | None = None,
    crashed: Crashed = "continue",
    seed: ASeed | None = None,
) -> AsyncIterator[Resume]:
    """Async twin of :func:`resuming`."""
    async with AsyncExitStack() as stack:
        stack.enter_context(storage_guard(saver, thread_id, record, answer.given))
        snapshot: StateSnapshot | None = None
        if thread_id is not None:
            check_id(thread_id, "thread_id")
            await stack.enter_async_context(aresume_lock(saver, thread_id))
            await stack.enter_async_context(asaved_on_cancel(graph, config, record))
            snapshot, stored = await aread_thread_once(graph, saver, config, thread_id)
            if may_be_paused_elsewhere(snapshot):
                refuse_foreign_pause(graph, stored, snapshot, thread_id)
            stale = in_doubt_pauses(stored, snapshot.interrupts)
            if stale:  # as in resuming()
                await graph.ainvoke(None, config)
                after = await aread_thread(graph, config, thread_id)
                in_doubt_first(answer, thread_id, snapshot, stale, after)
                snapshot = after
        resume = await seed(snapshot) if seed is not None and _seeds(snapshot) else None
        if resume is None:
            resume = _planned(graph, snapshot, thread_id, answer, saver, config, crashed)
        with _decision_guard(resume.seen):
            yield resume


@asynccontextmanager
async def asaved_on_cancel(
    graph: Pregel[Any, Any], config: RunnableConfig, record: Mapping[str, CompletedCall] | None
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
    graph: Pregel[Any, Any], config: RunnableConfig, record: Mapping[str, CompletedCall]
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
