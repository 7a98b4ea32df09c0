"""The pause itself: the package's one call of LangGraph's ``interrupt`` (:func:`answer_slot`),
the ask loop every approval runs (:func:`ask`: pause, read the answer, ask again when it is
refused) and the tool call running in this context, under
:mod:`dynavec_langgraph.interrupt`; the approval policies (:mod:`dynavec_langgraph._pauses.policy`)
and the tool node build on it, so it imports neither.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Generic, TypeVar

from langgraph.errors import GraphBubbleUp, GraphInterrupt
from langgraph.types import interrupt as lg_interrupt

from dynavec_langgraph._approvals.links import LinkKeys, answer_of_link, link_of, redacted
from dynavec_langgraph._audit.hooks import recorder
from dynavec_langgraph._errors import InvalidDecisionError, InvalidLinkError
from dynavec_langgraph._graph.run_data import drop_left_over_answer
from dynavec_langgraph._pauses.decisions import explain_refusal, short_repr
from dynavec_langgraph._pauses.digest import check_bound, counting_slots, next_slot, pause_digest
from dynavec_langgraph._pauses.value import InterruptValue, ToolCallRef
from dynavec_langgraph._types import JSONObject, JSONSchema, UserPayload

__all__ = [
    "Answer",
    "AskRules",
    "Refusal",
    "answer_slot",
    "answers_read",
    "ask",
    "current_tool_call",
    "open_pauses",
    "recorded_answer_of",
    "running_tool_call",
]

T = TypeVar("T")


def answer_slot(value: object, schema: JSONSchema | type | None = None) -> UserPayload:
    """LangGraph's ``interrupt(value)``: the stored answer of this task's next interrupt slot,
    or the pause (``GraphInterrupt``, raised on). The package's one call of it: :func:`ask`
    (the one ask loop, with or without an approval policy's checks), the in-doubt replay
    (``dynavec_langgraph._exactly_once``, which reads earlier answers with
    ``answer_slot(None)``) and the per-call review of a redirected edit
    (``dynavec_langgraph._middleware.per_call_review``, whose ``schema`` is a type, as
    LangChain's) all pause through it."""
    drop_left_over_answer()  # a decision an earlier run gave without an id answers nothing here
    answer = lg_interrupt(value) if schema is None else lg_interrupt(value, response_schema=schema)
    read = _answers_read.get()
    if read is not None:
        read[0] += 1
    return answer


_answers_read: ContextVar[list[int] | None] = ContextVar("dynavec_answers_read", default=None)


def answers_read() -> int | None:
    """How many answers the running tool call has read so far (LangGraph's interrupt index of
    its next ask), ``None`` outside a call the package runs. Counts the asks made through
    :func:`answer_slot` only (the package's one call of LangGraph's ``interrupt``)."""
    read = _answers_read.get()
    return None if read is None else read[0]


@dataclass
class Answer:
    """An answer the ask loop read: the pause ``value`` it answers, what the audit trail
    records of it (``raw``: the answer as given, a signed link's stand-in), its place
    (``index``, 1 for the first), who gave it (the approver as a rule sees it, when known) and
    the decision in it (what ``accept`` reads)."""

    value: InterruptValue
    raw: UserPayload
    index: int
    who: JSONObject | None = None
    decision: UserPayload = None


class Refusal(Exception):
    """An answer the ask loop does not take: the pause is asked again with ``error`` set,
    under a new review digest when ``new_review`` (a refused decision is another review)."""

    def __init__(self, error: str, *, new_review: bool = False) -> None:
        super().__init__(error)
        self.error = error
        self.new_review = new_review


class AskRules(Generic[T]):
    """What :func:`ask` checks beyond reading a decision, step by step: nothing for a pause
    without a policy (this class); an approval policy's expiry, approvers and several
    approvals (``dynavec_langgraph._pauses.policy.ask.PolicyRules``) override the steps. A step
    refuses an answer by raising :class:`Refusal`."""

    link_keys: LinkKeys | None = None
    """The keys a signed approval link is checked with (``None``: the environment's)."""

    def shown(self, value: InterruptValue) -> InterruptValue:
        """The pause value as asked (before its review digest)."""
        return value

    def pausing(self) -> None:
        """The run pauses at this ask (the answer read before it was the newest)."""

    def expired(self, answer: Answer) -> tuple[T, str] | None:
        """An answer read, first: ``(result, reason)`` when the pause has expired, which any
        answer settles (``reason``: the audit trail's outcome); else ``None``, read on."""
        return None

    def identify(self, answer: Answer) -> None:
        """An answer that is no signed link: set who gave it and the decision in it."""
        answer.decision = answer.raw

    def admit(self, answer: Answer) -> None:
        """Refuse an answer whose approver may not decide (before ``accept`` reads it)."""

    def finished(self, result: T, answer: Answer) -> tuple[bool, str | None]:
        """``accept`` took the answer: whether the ask ends with ``result``, and the outcome
        the audit trail records (``None``: the decision itself)."""
        return True, None


def _decision_of(answer: Answer, rules: AskRules[T]) -> None:
    """Who gave ``answer`` and the decision in it, bound to the pause it answers: a signed
    link's signature names its approver (the audit trail records the link's stand-in).

    Raises:
        Refusal: a link that cannot be used, a decision bound to another pause (the same
            digest is asked again), or what ``rules.identify`` refuses.
    """
    link = link_of(answer.raw)
    try:
        if link is None:
            rules.identify(answer)
        else:
            try:
                answer.who, answer.decision, answer.raw = answer_of_link(
                    link, answer.value, answer.index, rules.link_keys
                )
            except InvalidLinkError:  # the same digest again: the real link still works
                answer.raw = redacted(link)
                raise
        answer.decision = check_bound(answer.decision, answer.value)
    except InvalidDecisionError as bad:  # StaleDecisionError too: the pause stays as it is
        raise Refusal(str(bad)) from None


def ask(
    build: Callable[[str | None], InterruptValue],
    schema: JSONSchema,
    accept: Callable[[UserPayload], T],
    rules: AskRules[T] | None = None,
) -> T:
    """Pause with ``build(None)`` until ``accept`` takes a decision; return what it returns.

    The package's one ask loop: :func:`~dynavec_langgraph.interrupt.interrupt`,
    ``require_approval`` and the in-doubt question ask through it, an approval policy's checks
    plugged in as ``rules`` (:class:`AskRules`). A decision ``accept`` refuses (``ValueError``,
    e.g. ``pydantic.ValidationError`` or
    :class:`~dynavec_langgraph._errors.InvalidDecisionError`), or an answer ``rules`` refuses,
    pauses again with ``build(reason)``: the thread stays interrupted at the same approval,
    nothing after the pause runs. On every re-run the stored answers are read again in order,
    so the refused ones are refused again and the accepted one is accepted again (validated
    afresh).

    Each pause carries its ``review_digest`` (which counts the refused decisions: a re-ask is
    another pause); a decision bound to another pause's digest is refused before ``accept``
    sees it, and asked again under the same digest (see :mod:`dynavec_langgraph._pauses.digest`).
    """
    rules = AskRules() if rules is None else rules
    _audit = recorder()  # the audit trail and outbox: hooks that do nothing unless on

    error: str | None = None
    index = 0  # the answers read so far: LangGraph's interrupt index of the next ask
    asks = 0  # the decisions refused so far: a re-ask is a new review (a new digest)
    slot = next_slot()  # which approval of the tool call: a second one is another review
    while True:
        value = rules.shown(build(error))
        value["review_digest"] = pause_digest(value, asks, slot)
        try:
            raw = answer_slot(value, schema)
        except GraphBubbleUp as paused:  # re-raised: the run pauses
            rules.pausing()
            if isinstance(paused, GraphInterrupt):  # recorded, then raised on: never swallowed
                _audit.on_pause(value, paused.args[0] if paused.args else (), error is not None)
            raise
        index += 1
        answer = Answer(value, raw, index)
        kind: str | None = None
        outcome: str | None
        try:
            expired = rules.expired(answer)
            if expired is not None:
                (result, outcome), kind, done = expired, "expired", True
            else:
                _decision_of(answer, rules)
                rules.admit(answer)
                try:
                    result = accept(answer.decision)
                except ValueError as bad:  # never GraphInterrupt: it is no ValueError
                    why = f"{short_repr(answer.decision)} was refused: {explain_refusal(bad)}"
                    raise Refusal(f"the decision {why}", new_review=True) from None
                done, outcome = rules.finished(result, answer)
            error = None
        except Refusal as refused:
            error, outcome, done = refused.error, None, False
            asks += refused.new_review
        who = answer.who
        _audit.on_decision(
            value,
            answer.raw,
            index - 1,
            error,
            kind=kind,
            outcome=outcome,
            who=None if who is None else str(who["name"]),
            authenticated_by=None if who is None else who.get("authenticated_by"),
        )
        if done:
            return result


_open: ContextVar[tuple[frozenset[str], int] | None] = ContextVar(
    "dynavec_open_pauses", default=None
)


@contextmanager
def open_pauses(nodes: frozenset[str], recorded: int) -> Iterator[None]:
    """While a resumed call runs: the node ids of its pauses open on the checkpoint it runs
    from, and how many answers its task had recorded there before this run (read by the claim
    of the call, ``dynavec_langgraph._exactly_once.claims``)."""
    token = _open.set((nodes, recorded))
    try:
        yield
    finally:
        _open.reset(token)


def recorded_answer_of(node_id: str) -> bool:
    """Whether the answer the running call read last was recorded before this run, while the
    thread waited at the pause ``node_id`` of this call (it was given to an earlier ask of
    that pause, not this run's). ``False`` when unknown (a run that resumed nothing)."""
    state, read = _open.get(), answers_read()
    if state is None or read is None or node_id not in state[0]:
        return False
    return read <= state[1]


_current_call: ContextVar[ToolCallRef | None] = ContextVar("dynavec_current_call", default=None)


def current_tool_call() -> ToolCallRef | None:
    """The tool call running in this context, if a dynavec agent (or ``AgentTool``) runs one."""
    return _current_call.get()


@contextmanager
def running_tool_call(call: ToolCallRef) -> Iterator[None]:
    """Mark ``call`` as the tool call running in this context (used by the tool node), and
    number the approvals it asks (their review digests differ by position)."""
    token = _current_call.set(call)
    # counted from the outermost mark of the call: the tool node marks it, then the tool's own
    # invoke marks it again, and the in-doubt replay reads answers between the two
    read = _answers_read.set([0]) if _answers_read.get() is None else None
    try:
        with counting_slots():
            yield
    finally:
        _current_call.reset(token)
        if read is not None:
            _answers_read.reset(read)
