"""Task planning: which pending tool call the tool node runs next (sequential mode), every
pending call as its own ``Send`` (parallel mode), and a call another agent's graph sent before
its thread paused. Plain functions of the state."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NotRequired, TypedDict

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langchain_core.messages.tool import ToolCall as LCToolCall
from langgraph.types import Send

from dynavec_langgraph._dynavec.records import TerminationReason
from dynavec_langgraph._errors import DamagedThreadError, damaged_text
from dynavec_langgraph._graph.call_ids import calls_of
from dynavec_langgraph._graph.conversation_view import pending_calls
from dynavec_langgraph._graph.run_data import current_run
from dynavec_langgraph._graph.state import ReActState, steps_in_run
from dynavec_langgraph._names import TOOLS_NODE

__all__ = ["ToolTask", "all_tasks", "foreign_task", "next_task", "turn_of"]


def invalid_arguments(messages: Sequence[AnyMessage], call: LCToolCall) -> str | None:
    """The observation for a call whose arguments were not valid JSON, else None."""
    for m in reversed(messages):
        if not isinstance(m, AIMessage):
            continue
        for bad in m.invalid_tool_calls:
            if bad.get("id") == call["id"]:
                return (
                    f"Error executing tool '{call['name']}': the arguments are not "
                    f"valid JSON ({bad.get('error') or bad.get('args')})"
                )
        if any(c["id"] == call["id"] for c in m.tool_calls):
            return None
    return None


class ToolTask(TypedDict):
    """What one tool task gets (the ``Send`` argument in parallel mode)."""

    call: LCToolCall
    shared: dict[str, Any]
    invalid: str | None
    ends_run: bool
    """True when answering this call ends the run at ``max_steps``."""
    hold: NotRequired[bool]
    """Parallel mode: reaching a pause holds the call until the other tasks' results are
    saved (its first run in a turn of several calls)."""
    closes: NotRequired[TerminationReason | None]
    """The ``termination_reason`` answering this call sets (the run ends after the batch)."""
    state: NotRequired[Mapping[str, Any] | None]
    """The graph state LangChain injects (``InjectedState``, ``ToolRuntime.state``)."""
    rest: NotRequired[list[LCToolCall]]
    """Sequential mode: the calls of the batch after this one."""
    resent: NotRequired[bool]
    """Parallel mode: the call was held in an earlier step of its turn and is sent again (its
    crash marks from that step are read too, :mod:`dynavec_langgraph._exactly_once`)."""
    turn: NotRequired[str]
    """Parallel mode: the id of the assistant message that made the call (its idempotency
    key's part, :mod:`dynavec_langgraph._exactly_once`), when the task carries no state."""


def _turn(messages: Sequence[AnyMessage], call_id: str | None) -> tuple[list[LCToolCall], bool]:
    """The calls of the assistant turn that holds ``call_id``, and whether a user message
    came after it (new input: the run goes on to the model whatever the tools say)."""
    human_after = False
    for m in reversed(messages):
        if isinstance(m, AIMessage):
            calls = calls_of(m)
            if any(c["id"] == call_id for c in calls):
                return calls, human_after
        elif isinstance(m, HumanMessage):
            human_after = True
    return [], human_after


def _closes(
    messages: Sequence[AnyMessage], call: LCToolCall, direct: frozenset[str], ends: bool
) -> TerminationReason | None:
    """``"completed"`` when the turn has a ``return_direct`` tool (the run ends on the tools'
    answers, as in LangGraph's prebuilt agent), ``"max_steps_reached"`` when the step budget
    is spent, else ``None``."""
    if direct:
        calls, human_after = _turn(messages, call["id"])
        if not human_after and any(c["name"] in direct for c in calls):
            return "completed"
    return "max_steps_reached" if ends else None


def next_task(state: ReActState, max_steps: int, direct: frozenset[str] = frozenset()) -> ToolTask:
    """Sequential mode: the first pending call of the turn."""
    messages = state["messages"]
    pending = pending_calls(messages)
    if not pending:  # only a damaged thread gets here (the graph's routes never do)
        run = current_run()
        thread = str(None if run is None else run.thread_id)
        raise DamagedThreadError(
            damaged_text(thread, "its tool node ran with no unanswered tool call"), thread, []
        )
    last = len(pending) == 1
    ends = last and steps_in_run(state) >= max_steps
    return {
        "call": pending[0],
        "shared": dict(state.get("shared") or {}),
        "invalid": invalid_arguments(messages, pending[0]),
        "ends_run": ends,
        "closes": _closes(messages, pending[0], direct, ends) if last else None,
        "state": state,
        "rest": pending[1:],
    }


def foreign_task(payload: Any) -> ToolTask | None:
    """The task of a tool call that LangGraph's prebuilt agent or LangChain's ``create_agent``
    sent to its ``tools`` node before its thread paused, when this graph resumes the thread.

    Mirrors the ``Send`` arguments of ``langgraph.prebuilt.chat_agent_executor``'s
    ``should_continue`` (version "v2": ``ToolCallWithContext``, langgraph-prebuilt 1.1) and of
    ``langchain.agents.factory``'s model router (``[tool_call]``, langchain 1.5); pinned by
    tests/test_adversarial_2.py. ``None`` for anything else.
    """
    state: Mapping[str, Any] | None = None
    if isinstance(payload, dict) and payload.get("__type") == "tool_call_with_context":
        call, state = payload.get("tool_call"), payload.get("state")
    elif isinstance(payload, list) and len(payload) == 1:
        call = payload[0]
    else:
        return None
    if not isinstance(call, dict) or not isinstance(call.get("name"), str):
        return None
    state = state if isinstance(state, Mapping) else None
    return {
        "call": {"name": call["name"], "args": dict(call.get("args") or {}), "id": call.get("id")},
        "shared": dict((state or {}).get("shared") or {}),
        "invalid": None,
        "ends_run": False,
        "closes": None,
        "state": state,
        "rest": [],
    }


def all_tasks(
    state: Mapping[str, Any],
    max_steps: int,
    direct: frozenset[str] = frozenset(),
    stateless: frozenset[str] = frozenset(),
) -> list[Send]:
    """Parallel mode: every pending call as its own task. A task carries the graph state only
    when its tool may have it injected (``stateless`` tools never do)."""
    messages = state["messages"]
    ends = steps_in_run(state) >= max_steps
    shared = dict(state.get("shared") or {})
    pending = pending_calls(messages)
    held = set(state.get("held") or ())
    turn = turn_of(messages, pending[0]["id"]) if pending else ""
    return [
        Send(
            TOOLS_NODE,
            ToolTask(
                call=c,
                shared=shared,
                invalid=invalid_arguments(messages, c),
                ends_run=ends,
                closes=_closes(messages, c, direct, ends),
                state=None if c["name"] in stateless else dict(state),
                hold=len(pending) > 1 and c["id"] not in held,
                resent=c["id"] in held,
                turn=turn,
            ),
        )
        for c in pending
    ]


def turn_of(messages: Sequence[AnyMessage], call_id: str | None) -> str:
    """The assistant message that made call ``call_id``: its id, else ``"#<position>"``."""
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if isinstance(m, AIMessage) and any(c["id"] == call_id for c in calls_of(m)):
            return m.id or f"#{i}"
    return ""
