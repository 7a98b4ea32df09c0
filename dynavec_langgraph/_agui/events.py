"""The AG-UI events of a run: the messages translated both ways, each drawn once, and the state
snapshot."""

from __future__ import annotations

import dynavec_langgraph._agui.extra  # noqa: F401  (first: names the extra)

# isort: split

import json
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any
from uuid import uuid4

from ag_ui.core import (
    AssistantMessage,
    FunctionCall,
    Message,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCall,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)
from ag_ui.core import SystemMessage as AguiSystemMessage
from ag_ui.core import ToolMessage as AguiToolMessage
from ag_ui.core import UserMessage as AguiUserMessage
from ag_ui.core.events import BaseEvent
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.runnables import RunnableConfig
from langgraph.types import StateSnapshot

from dynavec_langgraph._types import JSONObject, UserPayload

MESSAGES_KEY = "messages"


def jsonable(value: UserPayload) -> Any:
    return json.loads(json.dumps(value, default=str))


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p if isinstance(p, str) else p.get("text", "") for p in content]
        return "".join(p for p in parts if isinstance(p, str))
    return ""


def to_langchain(message: Message) -> BaseMessage | None:
    role = message.role
    if role == "user":
        content = message.content
        text = (
            content
            if isinstance(content, str)
            else "".join(getattr(p, "text", "") or "" for p in content or [])
        )
        return HumanMessage(text, id=message.id)
    if role == "system":
        return SystemMessage(str(message.content), id=message.id)
    return None  # assistant and tool messages come from the thread, not from the client


def to_agui(message: BaseMessage) -> Message | None:
    mid = message.id or str(uuid4())
    if isinstance(message, HumanMessage):
        return AguiUserMessage(id=mid, content=_text(message.content))
    if isinstance(message, SystemMessage):
        return AguiSystemMessage(id=mid, content=_text(message.content))
    if isinstance(message, ToolMessage):
        return AguiToolMessage(
            id=mid, content=_text(message.content), tool_call_id=message.tool_call_id
        )
    if isinstance(message, AIMessage):
        calls = [
            ToolCall(
                id=c["id"] or "",
                function=FunctionCall(name=c["name"], arguments=json.dumps(c["args"])),
            )
            for c in message.tool_calls
        ]
        return AssistantMessage(
            id=mid, content=_text(message.content) or None, tool_calls=calls or None
        )
    return None


@dataclass
class _Drawn:
    """What the stream has sent so far, so each message and call is drawn once."""

    texts: set[str] = field(default_factory=set)
    open_texts: set[str] = field(default_factory=set)
    calls: set[str] = field(default_factory=set)
    results: set[str] = field(default_factory=set)


def _message_events(message: BaseMessage, drawn: _Drawn) -> list[BaseEvent]:
    """The events of a finished message (an update of the graph)."""
    events: list[BaseEvent] = []
    mid = message.id or ""
    if isinstance(message, AIMessage):
        text = _text(message.content)
        if text and mid not in drawn.texts:
            drawn.texts.add(mid)
            events += [
                TextMessageStartEvent(message_id=mid, role="assistant"),
                TextMessageContentEvent(message_id=mid, delta=text),
            ]
            drawn.open_texts.add(mid)
        if mid in drawn.open_texts:
            drawn.open_texts.discard(mid)
            events.append(TextMessageEndEvent(message_id=mid))
        for call in message.tool_calls:
            cid = call["id"] or ""
            if cid in drawn.calls:
                continue
            drawn.calls.add(cid)
            events += [
                ToolCallStartEvent(
                    tool_call_id=cid, tool_call_name=call["name"], parent_message_id=mid
                ),
                ToolCallArgsEvent(tool_call_id=cid, delta=json.dumps(call["args"])),
                ToolCallEndEvent(tool_call_id=cid),
            ]
    elif isinstance(message, ToolMessage) and mid not in drawn.results:
        drawn.results.add(mid)
        events.append(
            ToolCallResultEvent(
                message_id=mid or str(uuid4()),
                tool_call_id=message.tool_call_id,
                content=_text(message.content),
                role="tool",
            )
        )
    return events


def _chunk_events(chunk: Any, drawn: _Drawn) -> list[BaseEvent]:
    """The text deltas of a model's streamed chunk (``stream_mode="messages"``)."""
    if not isinstance(chunk, AIMessageChunk | AIMessage) or not chunk.id:
        return []
    delta = _text(chunk.content)
    if not delta or (chunk.id in drawn.texts and chunk.id not in drawn.open_texts):
        return []
    events: list[BaseEvent] = []
    if chunk.id not in drawn.texts:
        drawn.texts.add(chunk.id)
        drawn.open_texts.add(chunk.id)
        events.append(TextMessageStartEvent(message_id=chunk.id, role="assistant"))
    events.append(TextMessageContentEvent(message_id=chunk.id, delta=delta))
    return events


def _update_messages(update: Any) -> list[BaseMessage]:
    found: list[BaseMessage] = []
    if not isinstance(update, Mapping):
        return found
    for node_update in update.values():
        messages = node_update.get(MESSAGES_KEY) if isinstance(node_update, Mapping) else None
        if isinstance(messages, BaseMessage):
            messages = [messages]
        if isinstance(messages, list):
            found += [m for m in messages if isinstance(m, BaseMessage)]
    return found


def _thread_messages(snapshot: StateSnapshot) -> list[BaseMessage]:
    """The messages of a thread and of its paused subgraphs (a subagent's)."""
    values = snapshot.values if isinstance(snapshot.values, Mapping) else {}
    found = [m for m in values.get(MESSAGES_KEY) or [] if isinstance(m, BaseMessage)]
    for task in snapshot.tasks:
        if isinstance(task.state, StateSnapshot):
            found += _thread_messages(task.state)
    return found


async def graph_events(
    graph: Any, graph_input: Any, config: RunnableConfig
) -> AsyncIterator[BaseEvent]:
    """The events of one run of the graph: each message the run adds, drawn once (a
    subagent's messages reach its parent's update again; the thread's earlier ones are not
    drawn)."""
    drawn = _Drawn()
    for message in _thread_messages(await graph.aget_state(config, subgraphs=True)):
        _message_events(message, drawn)
    async for _ns, mode, chunk in graph.astream(
        graph_input, config, stream_mode=["messages", "updates"], subgraphs=True
    ):
        if mode == "messages":
            for event in _chunk_events(chunk[0], drawn):
                yield event
        else:
            for message in _update_messages(chunk):
                for event in _message_events(message, drawn):
                    yield event
    for mid in sorted(drawn.open_texts):
        yield TextMessageEndEvent(message_id=mid)


def state_snapshot(values: Any) -> JSONObject:
    if not isinstance(values, Mapping):
        return {}
    return {
        k: jsonable(v) for k, v in values.items() if k != MESSAGES_KEY and not k.startswith("_")
    }
