"""The tool call behind a nested agent, for ``create_agent``'s v3 ``subagents`` projection.

``stream_events(version="v3")`` on ``create_agent`` surfaces every nested named agent on
``run.subagents`` with a ``cause``: ``{"type": "toolCall", "tool_call_id": ...}``, the tool call
whose tool started it. LangChain's ``SubagentTransformer`` (``langchain.agents.factory``, on
LangGraph's ``_TasksLifecycleBase`` of ``langgraph.stream.transformers``) finds it in the
``tasks`` stream: a tool task's start event carries the call in its ``input`` (``create_agent``
sends each call to its tool node as a ``Send`` whose input has ``"tool_call"``), and the nested
run's namespace segment ``tools:<task id>`` joins it to that task.

This package's tool node is an ordinary node of the graph (``create_agent``'s face runs the
calls of a turn one at a time): its input is the state and it runs the first unanswered call
(one call per checkpointed step, so a paused call resumes as a node of the graph).
:class:`ToolCallCause` runs just before ``SubagentTransformer`` and gives such a task's start
event the call it runs, under ``"tool_call"`` in a copy of the event's input: the shape
``SubagentTransformer`` reads. The node's own input is not touched,
and LangGraph's built-in transformers (registered before the graph's) see the event as it was.

Mirrors ``_TasksLifecycleBase._record_pending_tool_calls`` (langgraph 1.2.24: a task's
``input["tool_call"]["id"]``); tests/test_subagent_cause.py pins it (and the reference suite's
``test_subagent_transformer.py`` runs through it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.messages import BaseMessage
from langgraph.stream import ProtocolEvent, StreamTransformer

from dynavec_langgraph._graph.conversation_view import pending_calls
from dynavec_langgraph._names import TOOLS_NODE

__all__ = ["ToolCallCause", "with_tool_call_cause"]


def _call_of(task_input: Any) -> dict[str, Any] | None:
    """The tool call this package's tool node runs for that input, or ``None``."""
    if not isinstance(task_input, Mapping) or "tool_call" in task_input:
        return None  # not ours, or already in create_agent's shape
    messages = task_input.get("messages")  # the first unanswered call, as the node runs it
    if not isinstance(messages, list) or not all(isinstance(m, BaseMessage) for m in messages):
        return None
    pending = pending_calls(messages)
    if pending and isinstance(pending[0].get("id"), str):
        return dict(pending[0])
    return None


class ToolCallCause(StreamTransformer):
    """Gives a start event of this package's tool node the call it runs (module docstring)."""

    required_stream_modes = ("tasks",)

    def init(self) -> dict[str, Any]:
        return {}

    def process(self, event: ProtocolEvent) -> bool:
        if event.get("method") != "tasks":
            return True
        params = event["params"]
        data = params.get("data")
        if (
            tuple(params.get("namespace") or ()) != self.scope
            or not isinstance(data, Mapping)
            or data.get("name") != TOOLS_NODE
            or "result" in data
        ):
            return True
        call = _call_of(data.get("input"))
        if call is not None:
            # copies: the node's own input, and what earlier transformers kept, stay as they were
            shown = {**data, "input": {**data["input"], "tool_call": call}}
            event["params"] = {**params, "data": shown}
        return True


def with_tool_call_cause(transformers: list[Any]) -> list[Any]:
    """``transformers`` with :class:`ToolCallCause` just before ``create_agent``'s
    ``SubagentTransformer`` (at the front when it is not there)."""
    names = [getattr(t, "__name__", None) for t in transformers]
    at = names.index("SubagentTransformer") if "SubagentTransformer" in names else 0
    return [*transformers[:at], ToolCallCause, *transformers[at:]]
