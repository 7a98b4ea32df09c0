"""``interrupt(node_id, payload)``: dynavec's pause, on LangGraph's interrupt."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypedDict, TypeVar, overload

from langgraph.config import get_config
from langgraph.types import Command, Interrupt
from langgraph.types import interrupt as lg_interrupt

from dynavec_langgraph.errors import InvalidDecisionError

__all__ = [
    "InterruptValue",
    "ToolCallRef",
    "current_tool_call",
    "describe_pending",
    "interrupt",
    "resume_command",
]

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


def current_tool_call() -> ToolCallRef | None:
    """The tool call running in this context, if a dynavec agent (or ``AgentTool``) runs one."""
    return _current_call.get()


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
@overload
def interrupt(thread_id: str, node_id: str, payload: Any, /) -> Any: ...
def interrupt(
    node_id: str, payload: Any = None, *v1: Any, response_schema: type[Any] | None = None
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

    HITL v1's three-argument form ``interrupt(thread_id, node_id, payload)`` is accepted too;
    the thread id is not needed (the running agent knows its thread) and only reaches
    ``NodeInterrupt`` (docs/compatibility.md).

    Raises:
        TypeError: ``payload`` cannot be stored as JSON (raised before anything is saved).
        NodeInterrupt: called outside a running agent or LangGraph node (a ``RuntimeError``;
            ``AgentTool.execute()`` lets it through, as HITL v1 did).
    """
    thread_id: str | None = None
    if v1:
        if len(v1) != 1:
            raise TypeError("interrupt() takes (node_id, payload) or (thread_id, node_id, payload)")
        thread_id, node_id, payload = str(node_id), payload, v1[0]
    if not isinstance(node_id, str) or not node_id:
        raise TypeError(f"interrupt() needs a non-empty string node_id, got {node_id!r}")
    try:
        json.dumps(payload, allow_nan=False)
    except RecursionError:
        raise TypeError(
            f"interrupt({node_id!r}): the payload is nested too deeply to be stored; "
            "send a flatter value"
        ) from None
    except (TypeError, ValueError) as error:
        raise TypeError(
            f"interrupt({node_id!r}): the payload cannot be stored as JSON ({error}); "
            "pass dicts, lists, strings, numbers, booleans or None"
        ) from None
    try:
        get_config()
    except RuntimeError:
        from dynavec_langgraph.exceptions import NodeInterrupt  # imports errors, as we do

        raise NodeInterrupt(node_id, payload, thread_id) from None
    value: InterruptValue = {
        "node_id": node_id,
        "payload": payload,
        "tool_call": current_tool_call(),
    }
    if response_schema is None:
        return lg_interrupt(value)
    return lg_interrupt(value, response_schema=response_schema)


def _node_id(pending: Interrupt) -> str | None:
    value = pending.value
    return str(value["node_id"]) if isinstance(value, dict) and "node_id" in value else None


def describe_pending(interrupts: Sequence[Interrupt]) -> str:
    """``"'approve_a' (id 1f2e…), 'approve_b' (id 9c0d…)"``: what is pending, for messages."""
    return ", ".join(f"{_node_id(i)!r} (interrupt id {i.id})" for i in interrupts) or "nothing"


def resume_command(interrupts: Sequence[Interrupt], decisions: Mapping[str, Any]) -> Command[Any]:
    """The ``Command(resume={interrupt_id: decision})`` that answers several pauses at once.

    Args:
        interrupts: what is pending, e.g. ``graph.get_state(config).interrupts``.
        decisions: ``{node_id or interrupt_id: decision}``.

    Raises:
        InvalidDecisionError: an unknown key, a node id pending more than once (use the
            interrupt ids then), a ``None`` decision, or no decisions; nothing is applied.

    Example:
        >>> from langgraph.types import Interrupt
        >>> pending = [Interrupt({"node_id": "approve_a"}, id="1" * 32),
        ...            Interrupt({"node_id": "approve_b"}, id="2" * 32)]
        >>> resume_command(pending, {"approve_a": "yes", "2" * 32: "no"}).resume
        {'11111111111111111111111111111111': 'yes', '22222222222222222222222222222222': 'no'}

        With a graph: ``graph.invoke(resume_command(graph.get_state(cfg).interrupts, {...}), cfg)``.
    """
    if not decisions:
        raise InvalidDecisionError(f"no decisions given; pending: {describe_pending(interrupts)}")
    by_id = {i.id: i for i in interrupts}
    by_node: dict[str, list[Interrupt]] = {}
    for i in interrupts:
        node = _node_id(i)
        if node is not None:
            by_node.setdefault(node, []).append(i)
    resume: dict[str, Any] = {}
    for key, decision in decisions.items():
        if decision is None:
            raise InvalidDecisionError(
                f"the decision for {key!r} is None; None cannot resume. "
                f"Pending: {describe_pending(interrupts)}"
            )
        if key in by_id:
            target = key
        elif key in by_node and len(by_node[key]) == 1:
            target = by_node[key][0].id
        elif key in by_node:
            raise InvalidDecisionError(
                f"node id {key!r} is pending {len(by_node[key])} times; key the decisions by "
                f"interrupt id instead. Pending: {describe_pending(interrupts)}"
            )
        else:
            raise InvalidDecisionError(
                f"{key!r} is not pending; pending: {describe_pending(interrupts)}"
            )
        if target in resume:
            raise InvalidDecisionError(
                f"two decisions given for interrupt {target}; pending: "
                f"{describe_pending(interrupts)}"
            )
        resume[target] = decision
    return Command(resume=resume)
