"""What a tool call takes and gives: its arguments by dynavec's rules, its observations."""

from __future__ import annotations

import json
from collections.abc import Callable

from langchain_core.messages.tool import ToolCall as LCToolCall
from pydantic import ValidationError

from dynavec_langgraph._types import ToolArgs, UserPayload

__all__ = [
    "ToolArguments",
    "ToolFunc",
    "ToolInput",
    "async_in_loop_observation",
    "describe",
    "format_tool_error",
    "parse_arguments",
    "stringify",
    "unknown_tool_observation",
]

ToolFunc = Callable[..., UserPayload]

ToolArguments = ToolArgs | str | bytes | bytearray | int | float | list[UserPayload] | None
"""What ``AgentTool.execute(arguments)`` takes (dynavec's rules): a dict of arguments, a JSON
string (an object gives the arguments, another JSON value is passed as ``"input"``), plain
text (passed as ``"input"``), blank or ``None`` (no arguments), or another JSON value (a
number, a list: passed as ``"input"``)."""

ToolInput = str | ToolArgs | LCToolCall
"""What LangChain's ``BaseTool.invoke`` takes: text, a dict of arguments or a tool call."""


def format_tool_error(name: str, error: BaseException) -> str:
    """The observation dynavec gives the model when tool ``name`` raised ``error``."""
    return f"Error executing tool '{name}': {error}"


def unknown_tool_observation(name: str) -> str:
    """The observation dynavec gives the model for a call to a tool it does not have."""
    return f"Error: Tool '{name}' is not registered in available tools."


def async_in_loop_observation(name: str) -> str:
    """What ``execute()`` of an async tool returns when called inside a running event loop."""
    return f"Error: Cannot execute async tool '{name}' synchronously in a running event loop."


def parse_arguments(arguments: ToolArguments) -> ToolArgs:
    """dynavec's argument rules: dict, JSON object, other JSON, plain text, blank or None."""
    if arguments is None:
        return {}
    if isinstance(arguments, dict):
        return dict(arguments)
    if isinstance(arguments, (bytes, bytearray)):
        arguments = arguments.decode()
    if isinstance(arguments, str):
        if not arguments.strip():
            return {}
        try:
            value = json.loads(arguments)
        except ValueError:
            return {"input": arguments}
        return dict(value) if isinstance(value, dict) else {"input": value}
    return {"input": arguments}


def describe(error: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}" for e in error.errors()
    )


def stringify(result: object) -> str:
    return (
        result if isinstance(result, str) else json.dumps(result, ensure_ascii=False, default=str)
    )
