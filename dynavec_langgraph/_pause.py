"""The pause itself: the package's one call of LangGraph's ``interrupt`` (:func:`answer_slot`),
the ask loop every approval runs (:func:`ask`: pause, read the answer, ask again when it is
refused) and the tool call running in this context, under
:mod:`dynavec_langgraph.interrupt`; the approval policies (:mod:`dynavec_langgraph._policy`) and
the tool node build on it, so it imports neither.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

from langgraph.errors import GraphInterrupt
from langgraph.types import interrupt as lg_interrupt

from dynavec_langgraph._audit.hooks import recorder
from dynavec_langgraph._decisions import explain_refusal, short_repr
from dynavec_langgraph._digest import check_bound, counting_slots, next_slot, pause_digest
from dynavec_langgraph._errors import InvalidLinkError, StaleDecisionError
from dynavec_langgraph._links import answer_of_link, link_of, redacted
from dynavec_langgraph._pause_value import InterruptValue, ToolCallRef

__all__ = [
    "answer_slot",
    "answers_read",
    "ask",
    "current_tool_call",
    "open_pauses",
    "recorded_answer_of",
    "running_tool_call",
]

T = TypeVar("T")


def answer_slot(value: Any, schema: dict[str, Any] | type | Any = None) -> Any:
    """LangGraph's ``interrupt(value)``: the stored answer of this task's next interrupt slot,
    or the pause (``GraphInterrupt``, raised on). The package's one call of it: :func:`ask`,
    the approval-policy loop (``dynavec_langgraph._policy.ask.ask_with_policy``) and the in-doubt
    replay (``dynavec_langgraph._exactly_once``, which reads earlier answers with
    ``answer_slot(None)``) and the per-call review of a redirected edit
    (``dynavec_langgraph._middleware.per_call_review``, whose ``schema`` is a type, as
    LangChain's) all pause through it."""
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


def ask(
    build: Callable[[str | None], InterruptValue],
    schema: dict[str, Any],
    accept: Callable[[Any], T],
) -> T:
    """Pause with ``build(None)`` until ``accept`` takes a decision; return what it returns.

    A decision ``accept`` refuses (``ValueError``, e.g. ``pydantic.ValidationError`` or
    :class:`~dynavec_langgraph._errors.InvalidDecisionError`) pauses again with
    ``build(reason)``: the thread stays interrupted at the same approval, nothing after the
    pause runs. On every re-run the stored answers are read again in order, so the refused
    ones are refused again and the accepted one is accepted again (validated afresh).

    Each pause carries its ``review_digest`` (which counts the refused decisions: a re-ask is
    another pause); a decision bound to another pause's digest is refused before ``accept``
    sees it, and asked again under the same digest (see :mod:`dynavec_langgraph._digest`).
    """
    _audit = recorder()  # the audit trail and outbox: hooks that do nothing unless on

    error: str | None = None
    index = 0  # the answers read so far: LangGraph's interrupt index of the next ask
    asks = 0  # the decisions refused so far: a re-ask is a new review (a new digest)
    slot = next_slot()  # which approval of the tool call: a second one is another review
    while True:
        value = build(error)
        value["review_digest"] = pause_digest(value, asks, slot)
        try:
            raw = answer_slot(value, schema)
        except GraphInterrupt as paused:  # recorded, then raised on: never swallowed
            _audit.on_pause(value, paused.args[0] if paused.args else (), error is not None)
            raise
        link = link_of(raw)
        who: dict[str, Any] | None = None
        if link is not None:  # a signed approval link: checked, never recorded as given
            try:
                who, raw, recorded = answer_of_link(link, value, index + 1, None)
            except InvalidLinkError as bad:  # the pause stays under the same digest
                error = str(bad)
                _audit.on_decision(value, redacted(link), index, error)
                index += 1
                continue
        try:
            accepted = accept(check_bound(raw, value))
        except StaleDecisionError as stale:  # the pause stays: the same digest is asked again
            error = str(stale)
            _audit.on_decision(value, raw, index, error)
            index += 1
            continue
        except ValueError as refused:  # never GraphInterrupt: it is no ValueError
            error = f"the decision {short_repr(raw)} was refused: {explain_refusal(refused)}"
            _audit.on_decision(value, raw, index, error)
            index += 1
            asks += 1
            continue
        if who is not None:
            by = who["authenticated_by"]
            _audit.on_decision(value, recorded, index, None, who=who["name"], authenticated_by=by)
        else:
            _audit.on_decision(value, raw, index, None)
        return accepted


_open: ContextVar[tuple[frozenset[str], int] | None] = ContextVar(
    "dynavec_open_pauses", default=None
)


@contextmanager
def open_pauses(nodes: frozenset[str], recorded: int) -> Iterator[None]:
    """While a resumed call runs: the node ids of its pauses open on the checkpoint it runs
    from, and how many answers its task had recorded there before this run (read by the claim
    of the call, ``dynavec_langgraph._claims``)."""
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
