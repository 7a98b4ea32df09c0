"""The agent's state: its keys and their pure reducers, the graph's node names, and the plain
functions that read a state (the steps of the current run)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Final, Literal, NotRequired, Required, TypedDict

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage

from dynavec_langgraph._dynavec.records import TerminationReason
from dynavec_langgraph._graph.conversation_view import run_steps
from dynavec_langgraph._graph.messages import ConversationChannel, add_conversation

__all__ = [
    "BOOKKEEPING",
    "FullReActState",
    "MessageStorage",
    "ReActState",
    "shared_change",
    "steps_in_run",
]


MessageStorage = Literal["delta", "full"]
"""How checkpoints store ``messages``: ``"delta"`` stores each step's new messages
(LangGraph's ``DeltaChannel``; storage grows linearly), ``"full"`` the whole list each step."""


def _last(_old: Any, new: Any) -> Any:
    return new


_SET, _DELETE = "dynavec_set", "dynavec_delete"


def _apply_shared(old: dict[str, Any] | None, new: dict[str, Any]) -> dict[str, Any]:
    """``shared`` reducer: a plain dict replaces; a tool's change set updates key by key, so
    tools running in parallel never overwrite each other's writes."""
    if set(new) == {_SET, _DELETE}:
        merged = dict(old or {})
        merged.update(new[_SET])
        for key in new[_DELETE]:
            merged.pop(key, None)
        return merged
    return dict(new)


def shared_change(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any] | None:
    changed = {k: v for k, v in after.items() if k not in before or before[k] != v}
    deleted = [k for k in before if k not in after]
    return {_SET: changed, _DELETE: deleted} if changed or deleted else None


def _hold(old: list[str] | None, new: list[str] | None) -> list[str]:
    """``held`` reducer: ids added by tool tasks; ``None`` (a model call) clears."""
    return [] if new is None else [*(old or []), *new]


class ReActState(TypedDict, total=False):
    """The agent's state: messages first, so it fits any parent graph with ``messages``.
    Every key but ``messages`` is bookkeeping: in the thread state (``get_state``), not in
    ``invoke()`` / ``stream()`` output unless asked for (``output_keys=``).

    Attributes:
        messages: the conversation (no system prompt; it is added at each model call).
        step: model calls made in the current run (since the last user message).
        termination_reason: ``"completed"`` or ``"max_steps_reached"`` once the run ended,
            ``None`` while it runs. A pause shows as the graph's interrupt instead.
        shared: the data of the ``AgentState`` shared with tools.
        held: parallel mode: ids of the turn's calls that reached a pause while others ran
            (they pause for good in the next step, once the finished results are saved).
        continued_at: the id of the last message when ``ReActAgent.run`` continued a run
            that stopped at ``max_steps`` (dynavec's ``run()`` on an unfinished thread, no new
            user message): the run's steps count from there. Absent or ``None`` otherwise.
    """

    messages: Required[Annotated[list[AnyMessage], ConversationChannel()]]
    step: NotRequired[Annotated[int, _last]]
    termination_reason: NotRequired[Annotated[TerminationReason | None, _last]]
    shared: NotRequired[Annotated[dict[str, Any], _apply_shared]]
    held: NotRequired[Annotated[list[str], _hold]]
    continued_at: NotRequired[Annotated[str | None, _last]]


class FullReActState(TypedDict, total=False):
    messages: Required[Annotated[list[AnyMessage], add_conversation]]
    step: NotRequired[Annotated[int, _last]]
    termination_reason: NotRequired[Annotated[TerminationReason | None, _last]]
    shared: NotRequired[Annotated[dict[str, Any], _apply_shared]]
    held: NotRequired[Annotated[list[str], _hold]]
    continued_at: NotRequired[Annotated[str | None, _last]]


def steps_in_run(state: Mapping[str, Any]) -> int:
    """Model calls made in the current run: since the last user message, or since the
    message where a run stopped at ``max_steps`` was continued (``continued_at``)."""
    messages = state["messages"]
    mark = state.get("continued_at")
    if not mark:
        return run_steps(messages)
    count = 0
    for m in reversed(messages):
        if m.id == mark or isinstance(m, HumanMessage):
            break
        if isinstance(m, AIMessage):
            count += 1
    return count


BOOKKEEPING: Final = frozenset(
    {"step", "termination_reason", "shared", "held", "continued_at", "dynavec_reviewed"}
)
"""The state keys this package keeps for itself: in the thread state (``get_state``), not in
``invoke()`` / ``stream()`` output unless asked for (:func:`with_bookkeeping`)."""
