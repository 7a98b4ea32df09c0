"""The checks of a thread before a decision reaches it: a pause of another graph, damaged
records, and what to send (``plan_resume``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, Literal

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import CheckpointTuple
from langgraph.types import StateSnapshot

from dynavec_langgraph._errors import (
    DamagedThreadError,
    IncompatibleThreadError,
    NothingToResumeError,
    damaged_text,
    foreign_node_text,
    foreign_tool_text,
    no_pause_record_text,
    not_paused_text,
)
from dynavec_langgraph._graph.conversation_view import pending_calls
from dynavec_langgraph._lg_names import INTERRUPT_WRITE
from dynavec_langgraph._names import TOOLS_METADATA_KEY, TOOLS_NODE
from dynavec_langgraph._pauses.digest import refuse_stale
from dynavec_langgraph._pauses.value import describe_pending, interrupt_fields
from dynavec_langgraph._resuming.answers import MISSING, Answer, Resume

if TYPE_CHECKING:
    from dynavec_langgraph._types import CheckpointSaver

__all__ = [
    "Crashed",
    "damage",
    "foreign_pause",
    "may_be_paused_elsewhere",
    "plan_resume",
    "refuse_foreign_pause",
    "refuse_if_damaged",
]


Crashed = Literal["continue", "refuse"]
"""What to do with a thread whose run stopped without a pause (its process died, or a
breakpoint): finish it (``ReActAgent``), or refuse (the inbox: there is nothing to answer)."""


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
    saver: CheckpointSaver,
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


def may_be_paused_elsewhere(snapshot: StateSnapshot) -> bool:
    """A thread that shows no pause but has unanswered tool calls: one read of its raw
    checkpoint tells whether another graph paused it (:func:`refuse_foreign_pause`)."""
    if snapshot.created_at is None or snapshot.interrupts:
        return False
    messages = (snapshot.values or {}).get("messages")
    return isinstance(messages, list) and bool(messages) and bool(pending_calls(messages))
