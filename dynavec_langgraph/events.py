"""Typed events of ``ReActAgent.stream`` / ``astream``, read from the graph's own stream modes.

The raw graph streams the same way in any LangGraph app:
``graph.stream(input, config, stream_mode=STREAM_MODES)`` yields ``(mode, chunk)`` pairs, and
:func:`events_from_chunk` turns each into these events.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from langchain_core.messages import AIMessage, AIMessageChunk, ToolMessage
from langgraph.types import StreamMode

from dynavec_langgraph._dynavec.conversion import to_dynavec
from dynavec_langgraph._dynavec.records import AgentResult, ToolCall
from dynavec_langgraph._names import AGENT_NODE, TOOLS_NODE
from dynavec_langgraph._pauses.value import interrupt_fields

__all__ = [
    "STREAM_MODES",
    "AgentEvent",
    "InterruptEvent",
    "ResultEvent",
    "TokenEvent",
    "ToolCallEvent",
    "ToolResultEvent",
    "events_from_chunk",
]

STREAM_MODES: Final[list[StreamMode]] = ["messages", "updates"]
"""The LangGraph stream modes :func:`events_from_chunk` reads."""


@dataclass(frozen=True)
class TokenEvent:
    """A piece of the model's answer text, as the provider streams it."""

    text: str


@dataclass(frozen=True)
class ToolCallEvent:
    """The model asked for a tool call (emitted when its turn is complete)."""

    call: ToolCall


@dataclass(frozen=True)
class ToolResultEvent:
    """A tool call finished; ``content`` is its observation."""

    tool_call_id: str
    name: str
    content: str


@dataclass(frozen=True)
class InterruptEvent:
    """The run paused at ``interrupt(node_id, payload)``; answer it with resume."""

    node_id: str | None
    payload: Any
    interrupt_id: str
    tool_call: dict[str, Any] | None


@dataclass(frozen=True)
class ResultEvent:
    """The last event: the same ``AgentResult`` that run / resume return."""

    result: AgentResult


AgentEvent = TokenEvent | ToolCallEvent | ToolResultEvent | InterruptEvent | ResultEvent
"""One event of ``ReActAgent.stream`` / ``astream``."""


def events_from_chunk(mode: str, chunk: Any) -> list[AgentEvent]:
    """The events of one ``(mode, chunk)`` pair of ``graph.stream(stream_mode=STREAM_MODES)``."""
    if mode == "messages":
        message, metadata = chunk
        if (
            isinstance(message, AIMessageChunk | AIMessage)
            and (metadata or {}).get("langgraph_node") == AGENT_NODE
            and isinstance(message.content, str)
            and message.content
        ):
            return [TokenEvent(message.content)]
        return []
    if mode != "updates" or not isinstance(chunk, dict):
        return []
    if (chunk.get("__metadata__") or {}).get("cached"):
        return []  # a finished task's result replayed on resume: it did not run again
    events: list[AgentEvent] = []
    for node, update in chunk.items():
        if node == "__interrupt__":
            for pending in update:
                fields = interrupt_fields(pending)
                events.append(
                    InterruptEvent(fields.node_id, fields.payload, pending.id, fields.tool_call)
                )
            continue
        for message in (update or {}).get("messages", []) if isinstance(update, dict) else []:
            if node == AGENT_NODE and isinstance(message, AIMessage):
                record = to_dynavec(message)
                events.extend(ToolCallEvent(c) for c in record.tool_calls)
            elif node == TOOLS_NODE and isinstance(message, ToolMessage):
                events.append(
                    ToolResultEvent(message.tool_call_id, message.name or "", str(message.content))
                )
    return events
