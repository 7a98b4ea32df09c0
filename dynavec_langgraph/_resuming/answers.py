"""A person's answer to a paused thread (``Answer``), the command it becomes, and what the
pauses pending after the run say of it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Protocol

from langchain_core.runnables import RunnableConfig
from langgraph.types import Command, Interrupt, StateSnapshot

from dynavec_langgraph._errors import (
    InvalidDecisionError,
    InvalidInputError,
    StaleDecisionError,
    ThreadPausedError,
    not_storable_text,
)
from dynavec_langgraph._exactly_once.shown import superseded
from dynavec_langgraph._pauses.decisions import refusal, resume_command
from dynavec_langgraph._pauses.digest import stale_refusal
from dynavec_langgraph._pauses.policy.doors import (
    approval_recorded,
    approver_required,
    refuse_approver,
    sign_resume,
)
from dynavec_langgraph._pauses.policy.spec import Approver
from dynavec_langgraph._pauses.value import InterruptValue, describe_pending, interrupt_fields
from dynavec_langgraph._storable import brief, check_text
from dynavec_langgraph._types import UserPayload

if TYPE_CHECKING:
    from dynavec_langgraph._types import CheckpointSaver, GraphCommand

__all__ = [
    "MISSING",
    "Answer",
    "Pending",
    "Resume",
    "check_state",
    "check_storable",
    "in_doubt_first",
    "refuse_if_asked_again",
    "refuse_if_paused",
    "schema_refusal",
]


MISSING: Final[object] = object()
"""No decision given (``None`` is a value LangGraph cannot resume with, so it is refused)."""


def check_state(
    saver: CheckpointSaver, data: Mapping[str, object], field: str = "state.data"
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
    saver: CheckpointSaver, decision: UserPayload, field: str = "the decision"
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
            a pause with an approval policy
            (:func:`dynavec_langgraph._pauses.policy.doors.sign_resume`).
    """

    decision: UserPayload = MISSING
    decisions: Mapping[str, UserPayload] | None = None
    node: str | None = None
    several: str = "answer them with resume(thread_id=..., decisions={node_id: decision, ...})"
    approver: Approver | None = None

    @property
    def given(self) -> UserPayload:
        """What the caller decided, for messages (``MISSING`` when nothing was)."""
        return self.decisions if self.decisions is not None else self.decision

    def value(self, interrupts: Sequence[Interrupt]) -> UserPayload:
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
        self, interrupts: Sequence[Interrupt], saver: CheckpointSaver | None
    ) -> GraphCommand:
        """:meth:`_command`, each decision signed by ``approver`` (checked against the
        pauses' approver names before anything runs: ``ApproverRefusedError``)."""
        command = self._command(interrupts, saver)
        if self.approver is None or not isinstance(command.resume, dict) or not interrupts:
            return command
        return Command(resume=sign_resume(interrupts, command.resume, self.approver))

    def _command(
        self, interrupts: Sequence[Interrupt], saver: CheckpointSaver | None
    ) -> GraphCommand:
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
    graph_input: UserPayload
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
            (:func:`~dynavec_langgraph._exactly_once.shown.superseded`); nothing ran.
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


class Pending(Protocol):
    """What :func:`in_doubt_first` reads of a thread: its pending ``Interrupt``s (a
    ``StateSnapshot``, or ``RemoteReActAgent``'s view of a server's thread)."""

    @property
    def interrupts(self) -> Sequence[Interrupt]: ...


def in_doubt_first(
    answer: Answer,
    thread_id: str,
    before: Pending,
    stale: Mapping[str, InterruptValue],
    after: Pending,
) -> None:
    """After a door surfaced the in-doubt question of a call whose approved run died
    (:func:`~dynavec_langgraph._exactly_once.shown.in_doubt_pauses`): an answer that names that
    question (its node id, or its interrupt id unless that is the id of a pause the thread
    showed before: LangGraph may give the question the approval's id) goes on to it; any other
    was meant for the pause the thread showed before.

    Raises:
        StaleDecisionError: the answer does not name the in-doubt question; nothing was
            applied and nothing ran, the question is pending now.
    """
    shown_ids = {p.id for p in before.interrupts}
    asked = [i for i in after.interrupts if i.id not in shown_ids]
    asked += [i for i in after.interrupts if isinstance(i.value, Mapping)
              and i.value.get("node_id") in {v["node_id"] for v in stale.values()}]  # fmt: skip
    # LangGraph keys an interrupt's id by the answers its task stored (langgraph 1.2
    # types._interrupt_id); the approval's answer, sent by id, died with the run, so the
    # question can get the approval's id: that id was the old pause's, it names nothing new
    names = {i.id for i in asked if i.id not in shown_ids} | {
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
