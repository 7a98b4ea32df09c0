"""dynavec <-> LangChain messages: :func:`to_dynavec` and :func:`from_dynavec`.

The conversation rules (the reducer, pending calls, run steps) live in
:mod:`dynavec_langgraph._graph.messages`; this module only converts one message at a time.
"""

from __future__ import annotations

import json
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    convert_to_messages,
)
from langchain_core.messages.tool import ToolCall as LCToolCall

from dynavec_langgraph._dynavec.records import Message, ToolCall

__all__ = ["from_dynavec", "to_dynavec"]


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for block in content or []:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict) and block.get("type") == "text":
            parts.append(str(block.get("text", "")))
    return "".join(parts)


def _call_args(arguments: Any) -> dict[str, Any]:
    """A dynavec tool call's arguments as LangChain ``args``: a JSON string is parsed, a dict
    (what some dynavec models return despite the ``str`` annotation) is already parsed
    (docs/compatibility.md, F1); anything else becomes ``{"input": value}``."""
    if isinstance(arguments, dict):
        return dict(arguments)
    if arguments is None:
        return {}
    if isinstance(arguments, bytes | bytearray):
        arguments = arguments.decode()
    if not isinstance(arguments, str):
        return {"input": arguments}
    try:
        args = json.loads(arguments) if arguments.strip() else {}
    except ValueError:
        return {"input": arguments}
    return args if isinstance(args, dict) else {"input": args}


def to_dynavec(message: BaseMessage) -> Message:
    """A LangChain message as a dynavec :class:`Message`."""
    if isinstance(message, AIMessage):
        calls = [
            ToolCall(c["id"] or "", c["name"], json.dumps(c["args"], ensure_ascii=False))
            for c in message.tool_calls
        ] + [
            ToolCall(c.get("id") or "", c.get("name") or "", c.get("args") or "")
            for c in message.invalid_tool_calls
        ]
        return Message("assistant", _text(message.content) or None, calls)
    if isinstance(message, ToolMessage):
        return Message("tool", _text(message.content), tool_call_id=message.tool_call_id)
    if isinstance(message, SystemMessage):
        return Message("system", _text(message.content))
    return Message("user", _text(message.content))


def from_dynavec(message: Message | BaseMessage | dict[str, Any]) -> BaseMessage:
    """A dynavec :class:`Message`, its dict form, or a LangChain message, as LangChain's."""
    if isinstance(message, BaseMessage):
        return message
    if isinstance(message, dict):
        if "role" not in message or (
            message.get("tool_calls") and "function" in (message["tool_calls"][0] or {})
        ):
            return convert_to_messages([message])[0]
        message = Message.from_dict(message)
    if not isinstance(message, Message):
        raise TypeError(f"not a message: {message!r}")
    content = message.content or ""
    if message.role == "assistant":
        calls: list[LCToolCall] = []
        for c in message.tool_calls:
            calls.append(
                {"name": c.name, "args": _call_args(c.arguments), "id": c.id, "type": "tool_call"}
            )
        return AIMessage(content=content, tool_calls=calls)
    if message.role == "tool":
        return ToolMessage(content=content, tool_call_id=message.tool_call_id or "")
    if message.role == "system":
        return SystemMessage(content=content)
    if message.role == "user":
        return HumanMessage(content=content)
    raise ValueError(f"unknown message role {message.role!r}: use system, user, assistant or tool")
