"""The dynavec record layout of a ReAct graph state: the one place it is defined.

Steps, results, the ``"interrupted"`` marker and the ``(node_id, step, state)`` view of a
checkpoint (docs/compatibility.md §5) are built here; ``ReActAgent`` (results),
:func:`~dynavec_langgraph.checkpoint.dynavec_view` and
:class:`~dynavec_langgraph._persistence.adapter.DynavecCheckpointSaver` (records) call it. The
interrupt value is read with :func:`~dynavec_langgraph._pauses.value.interrupt_fields`.
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.types import Interrupt

from dynavec_langgraph._dynavec.conversion import to_dynavec
from dynavec_langgraph._dynavec.records import AgentResult, AgentStep, Message, ToolCall
from dynavec_langgraph._graph.call_ids import calls_of
from dynavec_langgraph._graph.conversation_view import converted, pending_calls
from dynavec_langgraph._pauses.digest import review_digest
from dynavec_langgraph._pauses.value import interrupt_fields
from dynavec_langgraph._types import ForeignObject, JSONMapping, JSONObject, UserValues

__all__ = [
    "build_result",
    "dynavec_messages",
    "interrupted_marker",
    "interrupted_output",
    "json_metadata",
    "state_view",
    "step_records",
]


def step_records(messages: Sequence[BaseMessage]) -> list[AgentStep]:
    """The steps of the current run: each assistant message with its observations."""
    start = 0
    for i in range(len(messages) - 1, -1, -1):
        if isinstance(messages[i], HumanMessage):
            start = i + 1
            break
    answers = {m.tool_call_id: m for m in messages[start:] if isinstance(m, ToolMessage)}
    steps: list[AgentStep] = []
    for m in messages[start:]:
        if not isinstance(m, AIMessage):
            continue
        record = to_dynavec(m)
        observations = [
            str(to_dynavec(answers[c["id"]]).content) for c in calls_of(m) if c["id"] in answers
        ]
        steps.append(AgentStep(len(steps) + 1, record.content, record.tool_calls, observations))
    return steps


_new = object.__new__


def own_copies(records: Sequence[Message]) -> list[Message]:
    """Copies of kept records, each the caller's to change (new messages, new tool-call
    lists, new tool calls; the field values, strings, are shared).

    Built without the dataclass ``__init__`` and without an instance ``__dict__`` (each
    field set on a bare instance, so CPython keeps the values inline): a pause late in a long
    thread copies every message of the conversation, and this copy costs about half of
    constructing each one and three quarters of copying its ``__dict__`` (docs/benchmarks.md,
    "The long thread of ReActAgent"). It sets the fields of :class:`Message` and
    :class:`ToolCall` by name: ``tests/test_long_threads.py`` pins that list."""
    out: list[Message] = []
    append = out.append
    for record in records:
        calls: list[ToolCall] = []
        for c in record.tool_calls:
            call: ToolCall = _new(ToolCall)
            call.id = c.id
            call.name = c.name
            call.arguments = c.arguments
            calls.append(call)
        copy: Message = _new(Message)  # the fields in the dataclass's order, as __init__ sets them
        copy.role = record.role
        copy.content = record.content
        copy.tool_calls = calls
        copy.tool_call_id = record.tool_call_id
        append(copy)
    return out


def dynavec_messages(prompt: str | None, messages: Sequence[BaseMessage]) -> list[Message]:
    """dynavec's messages of a conversation, the system prompt first when there is one.

    Each message of a thread's conversation is converted once (:func:`converted`); every
    result gets its own copies (:func:`own_copies`), so a pause late in a long thread costs
    a copy per message, not a conversion."""
    head = [Message("system", prompt)] if prompt else []
    return head + own_copies(converted(messages, to_dynavec))


def build_result(
    values: UserValues,
    interrupts: Sequence[Interrupt],
    *,
    thread_id: str,
    max_steps: int,
    system_prompt: str | None,
) -> AgentResult:
    """The dynavec ``AgentResult`` of a graph state (after ``invoke`` or ``get_state``)."""
    conversation: Sequence[BaseMessage] = values.get("messages") or []
    messages: list[BaseMessage] = list(conversation)
    steps = step_records(messages)
    count = sum(len(s.tool_calls) for s in steps)
    last_thought = steps[-1].thought if steps else None
    if interrupts:
        first = interrupts[0]
        fields = interrupt_fields(first)
        payload = {
            "thread_id": thread_id,
            "node_id": fields.node_id,
            "payload": fields.payload,
            "messages": dynavec_messages(system_prompt, conversation),
            "start_step": len(steps),
            "tool_call_id": fields.tool_call_id,
            "interrupt_id": first.id,
            "review_digest": review_digest(first),
            "pending": [
                {"interrupt_id": i.id, **(i.value if isinstance(i.value, dict) else {})}
                for i in interrupts
            ],
        }
        return AgentResult(
            interrupted_output(fields.node_id),
            steps,
            False,
            "interrupted",
            len(steps),
            count,
            payload,
        )
    if values.get("termination_reason") == "max_steps_reached":
        last_obs = steps[-1].observations[-1] if steps and steps[-1].observations else ""
        return AgentResult(
            last_thought or last_obs, steps, False, "max_steps_reached", max_steps, count
        )
    return AgentResult(
        last_thought or "",
        steps,
        True,
        "completed",
        len(steps),
        count,
        structured_response=values.get("structured_response"),
    )


def _goal(messages: Sequence[BaseMessage]) -> str | None:
    for m in reversed(messages):
        if isinstance(m, HumanMessage):
            return str(to_dynavec(m).content or "")
    return None


def interrupted_output(node_id: str | None) -> str:
    """``AgentResult.output`` of a paused run: HITL v1's text (docs/compatibility.md, E5)."""
    return f"Execution interrupted at node {node_id!r}"


def interrupted_marker(first: ForeignObject, step: int, thread_id: str) -> JSONObject:
    """``state["interrupted"]`` of a record paused at ``first`` (an ``Interrupt`` or its value)."""
    fields = interrupt_fields(first)
    return {
        "node_id": fields.node_id,
        "payload": fields.payload,
        "tool_call_id": fields.tool_call_id,
        "step": step,
        "thread_id": thread_id,
    }


def state_view(
    values: JSONMapping,
    interrupts: Sequence[ForeignObject],
    thread_id: str,
    system_prompt: str | None = None,
) -> tuple[str, int, JSONObject]:
    """``(node_id, step, state)`` of a ReAct graph state, in docs/compatibility.md §5's layout."""
    messages: list[BaseMessage] = [
        m for m in values.get("messages") or [] if isinstance(m, BaseMessage)
    ]
    result = build_result(
        {"messages": messages}, [], thread_id=thread_id, max_steps=0, system_prompt=None
    )
    steps = result.steps
    head: list[JSONObject] = (
        [{"role": "system", "content": system_prompt, "tool_call_id": None, "tool_calls": []}]
        if system_prompt
        else []
    )
    state: JSONObject = {
        "goal": _goal(messages),
        "messages": head + [to_dynavec(m).to_dict() for m in messages],
        "steps": [s.to_dict() for s in steps],
        "total_tool_calls": result.tool_calls_count,
        "finished": False,
    }
    last = messages[-1] if messages else None
    at_rest = not pending_calls(messages)
    if interrupts:
        state["interrupted"] = interrupted_marker(interrupts[0], len(steps), thread_id)
        return "interrupted", len(steps), state
    if not steps:
        return "init", 0, state
    if values.get("termination_reason") == "max_steps_reached" and at_rest:
        state["output"] = steps[-1].thought or (
            steps[-1].observations[-1] if steps[-1].observations else ""
        )
        return "max_steps_reached", len(steps), state
    if isinstance(last, AIMessage) and not calls_of(last):
        state["output"] = steps[-1].thought or ""
        state["finished"] = True
    return f"step_{len(steps)}", len(steps), state


def json_metadata(metadata: JSONMapping) -> JSONObject:
    """The JSON-safe part of LangGraph's checkpoint metadata, as dynavec records keep it."""
    out: JSONObject = {}
    for key, value in metadata.items():
        if isinstance(value, str | int | float | bool) or value is None:
            out[key] = value
        elif key == "parents" and isinstance(value, dict):
            out[key] = {str(k): str(v) for k, v in value.items()}
    return out
