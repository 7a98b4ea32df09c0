"""``interrupt(node_id, payload)``: dynavec's pause, on LangGraph's interrupt."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypedDict, TypeVar, overload

from langgraph.config import get_config
from langgraph.types import interrupt as lg_interrupt

__all__ = ["InterruptValue", "ToolCallRef", "interrupt"]

T = TypeVar("T")


class ToolCallRef(TypedDict):
    """The tool call that paused: its id, tool name and arguments."""

    id: str
    name: str
    args: dict[str, Any]


class InterruptValue(TypedDict):
    """The plain-JSON value of every interrupt this package raises."""

    node_id: str
    payload: Any
    tool_call: ToolCallRef | None


_current_call: ContextVar[ToolCallRef | None] = ContextVar("dynavec_current_call", default=None)


@contextmanager
def running_tool_call(call: ToolCallRef) -> Iterator[None]:
    """Mark ``call`` as the tool call running in this context (used by the tool node)."""
    token = _current_call.set(call)
    try:
        yield
    finally:
        _current_call.reset(token)


@overload
def interrupt(node_id: str, payload: Any = None, *, response_schema: type[T]) -> T: ...
@overload
def interrupt(node_id: str, payload: Any = None, *, response_schema: None = None) -> Any: ...
def interrupt(
    node_id: str, payload: Any = None, *, response_schema: type[Any] | None = None
) -> Any:
    """Pause the running tool call until a person decides; return the decision.

    The first call raises LangGraph's ``GraphInterrupt`` (never catch it): the run stops with
    an interrupt whose value is ``{"node_id", "payload", "tool_call": {"id", "name", "args"}}``.
    When the thread is resumed (``ReActAgent.resume(...)`` or ``Command(resume=decision)``)
    the tool runs again from its first line and this call returns the decision unchanged.

    Args:
        node_id: names the approval point, e.g. ``"approve_transfer"``.
        payload: what the person needs to decide; must be JSON (dicts, lists, strings,
            numbers, booleans, None).
        response_schema: a pydantic model, TypedDict or dataclass. The decision is validated
            against it and the validated object returned; an invalid decision raises
            ``pydantic.ValidationError`` and leaves the thread paused, answerable again.
            Studio renders it as a typed form.

    Raises:
        TypeError: ``payload`` cannot be stored as JSON (raised before anything is saved).
        RuntimeError: called outside a running agent or LangGraph node.
    """
    if not isinstance(node_id, str) or not node_id:
        raise TypeError(f"interrupt() needs a non-empty string node_id, got {node_id!r}")
    try:
        json.dumps(payload, allow_nan=False)
    except (TypeError, ValueError) as error:
        raise TypeError(
            f"interrupt({node_id!r}): the payload cannot be stored as JSON ({error}); "
            "pass dicts, lists, strings, numbers, booleans or None"
        ) from None
    try:
        get_config()
    except RuntimeError:
        raise RuntimeError(
            f"interrupt({node_id!r}) was called outside a running agent: call it inside a tool "
            "run by a dynavec_langgraph agent (or inside a LangGraph node)"
        ) from None
    value: InterruptValue = {
        "node_id": node_id,
        "payload": payload,
        "tool_call": _current_call.get(),
    }
    if response_schema is None:
        return lg_interrupt(value)
    return lg_interrupt(value, response_schema=response_schema)
