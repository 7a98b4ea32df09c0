"""Each pending pause as an AG-UI interrupt: its reason, its response schema, its nested path."""

from __future__ import annotations

import dynavec_langgraph._agui.extra  # noqa: F401  (first: names the extra)

# isort: split

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ag_ui.core import Interrupt as AguiInterrupt
from ag_ui.core import RunFinishedInterruptOutcome
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.types import Interrupt, StateSnapshot
from pydantic import BaseModel

from dynavec_langgraph._agui.events import jsonable
from dynavec_langgraph._errors import InvalidInputError
from dynavec_langgraph._pauses.value import ALL_DECISIONS, interrupt_fields
from dynavec_langgraph._types import JSONMapping, JSONObject, UserPayload

Reason = Literal["tool_call", "input_required", "confirmation"]


_JSON_TYPES: tuple[tuple[type, str], ...] = (
    (bool, "boolean"),  # before int: a bool is an int
    (int, "integer"),
    (float, "number"),
    (str, "string"),
    (list, "array"),
    (dict, "object"),
)
"""Each Python type of a paused call's argument and its JSON Schema type, checked in order."""


def _json_type(value: UserPayload) -> JSONObject:
    """The JSON Schema of ``value``'s JSON type (``{}`` for any other value)."""
    for kind, name in _JSON_TYPES:
        if isinstance(value, kind):
            return {"type": name}
    return {}


def _args_schema(tool: BaseTool | None, args: JSONMapping) -> JSONObject:
    """The JSON Schema of the arguments an edit may send: the tool's own (``tools=``), else one
    drawn from the paused call's arguments (each key, of its value's JSON type)."""
    if tool is not None:
        schema = tool.tool_call_schema
        if isinstance(schema, dict):
            return dict(schema)
        if isinstance(schema, type) and issubclass(schema, BaseModel):
            return schema.model_json_schema()
    return {
        "type": "object",
        "properties": {k: _json_type(v) for k, v in args.items()},
        "required": sorted(args),
        "additionalProperties": False,
    }


def _response_schema(allowed: Sequence[str], args_schema: JSONObject, plain: bool) -> JSONObject:
    """The ``responseSchema`` of a pause: one object per decision it offers."""
    one: dict[str, JSONObject] = {
        "approve": {"properties": {"type": {"const": "approve"}}},
        "edit": {
            "properties": {"type": {"const": "edit"}, "args": args_schema},
            "required": ["type", "args"],
        },
        "reject": {"properties": {"type": {"const": "reject"}, "message": {"type": "string"}}},
        "respond": {
            "properties": {"type": {"const": "respond"}, "message": {"type": "string"}},
            "required": ["type", "message"],
        },
    }
    options = [
        {"title": kind, "type": "object", "required": ["type"], **one[kind]}
        for kind in ALL_DECISIONS
        if kind in allowed
    ]
    if plain:  # a plain interrupt() takes any JSON value too, as it reaches the tool
        options.append({"title": "value", "not": {"type": "null"}})
    return {"title": "Decision", "oneOf": options}


def _reason(value: JSONMapping, call: JSONMapping | None) -> Reason:
    payload = value.get("payload")
    if isinstance(payload, Mapping) and payload.get("in_doubt") is True:
        return "confirmation"  # a call that may have run: confirm running it again
    if call is not None and value.get("name") == call.get("name"):
        return "tool_call"  # require_approval: the call itself is under review
    if call is not None:
        return "confirmation"  # a plain interrupt() inside a tool
    return "input_required"


@dataclass
class Pause:
    """One pending pause as the app reads it (see :func:`interrupt_outcome`)."""

    interrupt: Interrupt
    value: JSONMapping
    allowed: tuple[str, ...]
    tool: BaseTool | None
    args: JSONMapping
    expires_at: str | None
    path: list[str] = field(default_factory=list)

    @property
    def plain(self) -> bool:
        return "approval" not in self.value and self.value.get("name") == self.value.get("node_id")


def pause_of(interrupt: Interrupt, tools: Mapping[str, BaseTool], path: list[str]) -> Pause:
    fields = interrupt_fields(interrupt)
    value: JSONMapping = fields.raw if fields.ours else {}
    allowed = tuple(value.get("allowed_decisions") or ())
    args = value.get("args") if isinstance(value.get("args"), dict) else {}
    name = str(value.get("name") or "")
    call = fields.tool_call
    tool = tools.get(name) if call is not None and call.get("name") == name else None
    expires = value.get("expires_at")
    return Pause(interrupt, value, allowed, tool, args or {}, expires, path)


def to_interrupt(pause: Pause) -> AguiInterrupt:
    value = pause.value
    fields = interrupt_fields(pause.interrupt)
    if not fields.ours:  # a plain LangGraph interrupt (not built by this package)
        return AguiInterrupt(
            id=pause.interrupt.id,
            reason="input_required",
            message=fields.payload if isinstance(fields.payload, str) else None,
            response_schema=pause.interrupt.response_schema
            if isinstance(pause.interrupt.response_schema, dict)
            else None,
            metadata={"value": jsonable(fields.raw), "path": pause.path},
        )
    approval = value.get("approval") if isinstance(value.get("approval"), dict) else None
    metadata: JSONObject = {
        "nodeId": value.get("node_id"),
        "name": value.get("name"),
        "args": jsonable(pause.args),
        "payload": jsonable(value.get("payload")),
        "allowedDecisions": list(pause.allowed),
        "reviewDigest": value.get("review_digest"),
        "path": pause.path,
        "error": value.get("error"),
    }
    if approval is not None:
        metadata["approval"] = jsonable(approval)
    return AguiInterrupt(
        id=pause.interrupt.id,
        reason=_reason(value, fields.tool_call),
        message=str(value.get("description") or ""),
        tool_call_id=fields.tool_call_id or None,
        response_schema=_response_schema(
            pause.allowed, _args_schema(pause.tool, pause.args), pause.plain
        ),
        expires_at=pause.expires_at,
        metadata=metadata,
    )


def _paths(snapshot: StateSnapshot, prefix: list[str], into: dict[str, list[str]]) -> None:
    """Each pending interrupt's path of nodes, outermost first (the deepest one found)."""
    for task in snapshot.tasks:
        here = [*prefix, task.name]
        for item in task.interrupts:
            if len(here) >= len(into.get(item.id, [])):
                into[item.id] = here
        if isinstance(task.state, StateSnapshot):
            _paths(task.state, here, into)


async def pending_pauses(
    graph: Any, config: RunnableConfig, tools: Mapping[str, BaseTool]
) -> list[Pause]:
    snapshot = await graph.aget_state(config, subgraphs=True)
    paths: dict[str, list[str]] = {}
    _paths(snapshot, [], paths)
    return [pause_of(i, tools, paths.get(i.id, [])) for i in snapshot.interrupts]


def interrupt_outcome(
    interrupts: Sequence[Interrupt], tools: Sequence[BaseTool] = ()
) -> RunFinishedInterruptOutcome:
    """The AG-UI interrupt outcome of ``interrupts`` (e.g. ``graph.get_state(cfg).interrupts``).

    Each becomes ``{id, reason, message, toolCallId, responseSchema, expiresAt, metadata}``:
    ``id`` the LangGraph interrupt id (what a resume entry answers), ``reason`` ``tool_call``
    (``require_approval``: the call is under review), ``confirmation`` (a plain
    ``interrupt()`` in a tool) or ``input_required``; ``responseSchema`` one object per
    decision offered (an ``edit`` carries ``args`` of the tool's schema, from ``tools``, else
    of the paused arguments' types); ``expiresAt`` the approval's deadline; ``metadata`` the
    node id, arguments, payload, allowed decisions, review digest, approval state (approvers,
    approvals in) and the nested ``path`` (empty here: :func:`create_agui_app` fills it).

    Raises:
        InvalidInputError: ``interrupts`` is empty (nothing to answer).
    """
    if not interrupts:
        raise InvalidInputError(
            "no interrupts: a run that did not pause finishes with success", "interrupts"
        )
    by_name = {t.name: t for t in tools}
    return RunFinishedInterruptOutcome(
        interrupts=[to_interrupt(pause_of(i, by_name, [])) for i in interrupts]
    )
