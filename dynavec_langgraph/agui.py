"""Serve an agent over AG-UI 1.0: an ASGI app a user mounts in FastAPI / Starlette, or serves
as a LangGraph server custom route (``langgraph.json``'s ``"http": {"app": ...}``).

:func:`create_agui_app` takes a compiled graph the package builds (``create_react_agent``,
``create_agent``, or a graph holding one as a node) and answers AG-UI's ``RunAgentInput`` with
the protocol's event stream (``ag_ui.core`` types, ``ag_ui.encoder.EventEncoder``):
``RUN_STARTED``, ``TEXT_MESSAGE_*`` deltas, ``TOOL_CALL_*`` events, ``TOOL_CALL_RESULT``,
``STATE_SNAPSHOT`` / ``MESSAGES_SNAPSHOT``, and ``RUN_FINISHED`` whose ``outcome`` is
``{"type": "interrupt", "interrupts": [...]}`` when the run paused (every pause of the
package: :func:`~dynavec_langgraph.interrupt`, ``require_approval``, in-doubt calls, expiring
and multi-approver approvals, parallel calls, a subagent's, with its nested path).

A resume (``RunAgentInput.resume``: ``[{interruptId, status, payload}]``, several at once) goes
through the package's guarded resume (:mod:`dynavec_langgraph._resuming`: the thread's lock,
the checks under it, each decision bound to the review digest of the pause it answers):
an unknown, stale or second answer, an expired approval, a decision the pause does not offer
or edited arguments the tool's schema refuses end with ``RUN_ERROR`` and nothing runs.

Needs the ``agui`` extra (``ag-ui-protocol``, ``starlette``). docs/approval-uis-agui.md.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal
from uuid import uuid4

from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.types import Interrupt, StateSnapshot
from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from dynavec_langgraph._decisions import explain_refusal
from dynavec_langgraph._digest import bind_decision, review_digest
from dynavec_langgraph._errors import (
    DynavecError,
    InvalidDecisionError,
    InvalidInputError,
    InvalidOptionError,
)
from dynavec_langgraph._exactly_once import in_doubt_pauses
from dynavec_langgraph._extras import missing_extra
from dynavec_langgraph._pause_value import ALL_DECISIONS, interrupt_fields
from dynavec_langgraph._persistence.locks import aresume_lock
from dynavec_langgraph._resuming.answers import Answer, refuse_if_paused
from dynavec_langgraph._resuming.guarded import aresuming
from dynavec_langgraph.savers import resolve_checkpointer

try:
    from ag_ui.core import (
        AssistantMessage,
        FunctionCall,
        Message,
        MessagesSnapshotEvent,
        ResumeEntry,
        RunAgentInput,
        RunErrorEvent,
        RunFinishedEvent,
        RunFinishedInterruptOutcome,
        RunFinishedSuccessOutcome,
        RunStartedEvent,
        StateSnapshotEvent,
        TextMessageContentEvent,
        TextMessageEndEvent,
        TextMessageStartEvent,
        ToolCall,
        ToolCallArgsEvent,
        ToolCallEndEvent,
        ToolCallResultEvent,
        ToolCallStartEvent,
    )
    from ag_ui.core import Interrupt as AguiInterrupt
    from ag_ui.core import SystemMessage as AguiSystemMessage
    from ag_ui.core import ToolMessage as AguiToolMessage
    from ag_ui.core import UserMessage as AguiUserMessage
    from ag_ui.core.events import BaseEvent
    from ag_ui.encoder import EventEncoder
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response, StreamingResponse
    from starlette.routing import Route
except ImportError as error:  # pragma: no cover - exercised by tests/test_release.py
    raise missing_extra("dynavec_langgraph.agui", error.name or "ag-ui-protocol", "agui") from error

__all__ = [
    "AGUI_PROTOCOL_VERSION",
    "Approver",
    "approver_from_metadata",
    "create_agui_app",
    "interrupt_outcome",
    "stream_run",
]

MESSAGES_KEY = "messages"

AGUI_PROTOCOL_VERSION = "1.0"
"""The AG-UI protocol version this module speaks (``RUN_STARTED.protocolVersion``)."""

Approver = Callable[[Request, ResumeEntry], Any]
"""Who answers a resume entry, for approvals with approvers or M-of-N (a name, or ``{"name",
"roles"}``; ``None``: nobody named): called with the HTTP request, so it reads your sign-in."""

Reason = Literal["tool_call", "input_required", "confirmation"]


def approver_from_metadata(request: Request, entry: ResumeEntry) -> Any:
    """The approver a resume entry names in its ``metadata.approver`` (trusts the client: for
    demos and tests, or behind a proxy that sets it; read your sign-in otherwise).

    Example:
        >>> entry = ResumeEntry(interrupt_id="i", status="resolved", metadata={"approver": "ann"})
        >>> approver_from_metadata(None, entry)  # type: ignore[arg-type]
        'ann'
    """
    meta = entry.metadata if isinstance(entry.metadata, Mapping) else {}
    return meta.get("approver")


# --- the interrupt outcome --------------------------------------------------------------------


def _json_type(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"type": "boolean"}
    if isinstance(value, int):
        return {"type": "integer"}
    if isinstance(value, float):
        return {"type": "number"}
    if isinstance(value, str):
        return {"type": "string"}
    if isinstance(value, list):
        return {"type": "array"}
    if isinstance(value, dict):
        return {"type": "object"}
    return {}


def _args_schema(tool: BaseTool | None, args: Mapping[str, Any]) -> dict[str, Any]:
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


def _response_schema(
    allowed: Sequence[str], args_schema: dict[str, Any], plain: bool
) -> dict[str, Any]:
    """The ``responseSchema`` of a pause: one object per decision it offers."""
    one: dict[str, dict[str, Any]] = {
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


def _reason(value: Mapping[str, Any], call: Mapping[str, Any] | None) -> Reason:
    payload = value.get("payload")
    if isinstance(payload, Mapping) and payload.get("in_doubt") is True:
        return "confirmation"  # a call that may have run: confirm running it again
    if call is not None and value.get("name") == call.get("name"):
        return "tool_call"  # require_approval: the call itself is under review
    if call is not None:
        return "confirmation"  # a plain interrupt() inside a tool
    return "input_required"


@dataclass
class _Pause:
    """One pending pause as the app reads it (see :func:`interrupt_outcome`)."""

    interrupt: Interrupt
    value: Mapping[str, Any]
    allowed: tuple[str, ...]
    tool: BaseTool | None
    args: Mapping[str, Any]
    expires_at: str | None
    path: list[str] = field(default_factory=list)

    @property
    def plain(self) -> bool:
        return "approval" not in self.value and self.value.get("name") == self.value.get("node_id")


def _pause(interrupt: Interrupt, tools: Mapping[str, BaseTool], path: list[str]) -> _Pause:
    fields = interrupt_fields(interrupt)
    value: Mapping[str, Any] = fields.raw if fields.ours else {}
    allowed = tuple(value.get("allowed_decisions") or ())
    args = value.get("args") if isinstance(value.get("args"), dict) else {}
    name = str(value.get("name") or "")
    call = fields.tool_call
    tool = tools.get(name) if call is not None and call.get("name") == name else None
    expires = value.get("expires_at")
    return _Pause(interrupt, value, allowed, tool, args or {}, expires, path)


def _to_interrupt(pause: _Pause) -> AguiInterrupt:
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
            metadata={"value": _jsonable(fields.raw), "path": pause.path},
        )
    approval = value.get("approval") if isinstance(value.get("approval"), dict) else None
    metadata: dict[str, Any] = {
        "nodeId": value.get("node_id"),
        "name": value.get("name"),
        "args": _jsonable(pause.args),
        "payload": _jsonable(value.get("payload")),
        "allowedDecisions": list(pause.allowed),
        "reviewDigest": value.get("review_digest"),
        "path": pause.path,
        "error": value.get("error"),
    }
    if approval is not None:
        metadata["approval"] = _jsonable(approval)
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


async def _pending(
    graph: Any, config: RunnableConfig, tools: Mapping[str, BaseTool]
) -> list[_Pause]:
    snapshot = await graph.aget_state(config, subgraphs=True)
    paths: dict[str, list[str]] = {}
    _paths(snapshot, [], paths)
    return [_pause(i, tools, paths.get(i.id, [])) for i in snapshot.interrupts]


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
        interrupts=[_to_interrupt(_pause(i, by_name, [])) for i in interrupts]
    )


# --- the resume ------------------------------------------------------------------------------


class _Refused(InvalidDecisionError):
    """A resume entry refused before anything runs (unknown, stale, repeated, expired
    interrupt; a decision not offered; edited arguments the tool refuses; no approver named).
    An ``InvalidDecisionError``; ``code`` is the ``RUN_ERROR`` code."""

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.code = code


def _edit_model(pause: _Pause) -> type[BaseModel]:
    """The model edited arguments must fit: the tool's argument model (``tools=``), else the
    paused call's keys, each of its value's type."""
    schema = pause.tool.tool_call_schema if pause.tool is not None else None
    if isinstance(schema, type) and issubclass(schema, BaseModel) and schema.model_fields:
        return schema
    fields: dict[str, Any] = {
        k: (type(v) if v is not None else Any, ...) for k, v in pause.args.items()
    }
    return create_model(
        "EditedArguments", __config__=ConfigDict(extra="forbid", strict=True), **fields
    )


def _decision(entry: ResumeEntry, pause: _Pause, now: datetime) -> Any:
    """The package's decision for one resume entry (checked before anything runs)."""
    iid = entry.interrupt_id
    expired = pause.expires_at and datetime.fromisoformat(pause.expires_at) <= now
    if expired and entry.status == "resolved":
        raise _Refused(
            f"interrupt {iid} expired at {pause.expires_at}; nothing ran. Send "
            "status 'cancelled' to close it, or ask again in a new run",
            "INTERRUPT_EXPIRED",
        )
    payload = entry.payload
    if entry.status == "cancelled":
        message = payload.get("message") if isinstance(payload, dict) else payload
        text = message if isinstance(message, str) and message else "cancelled by the user"
        kind, decision = "reject", {"type": "reject", "message": text}
    elif isinstance(payload, dict) and payload.get("type") in ALL_DECISIONS:
        kind = str(payload["type"])
        decision = _typed_decision(kind, payload, pause, iid)
    elif pause.plain or not interrupt_fields(pause.interrupt).ours:
        if payload is None:
            raise _Refused(
                f"the resume entry for {iid} has no payload: send a decision "
                "(its responseSchema) or any JSON value but null",
                "INVALID_DECISION",
            )
        return payload  # a plain interrupt(): the value reaches the tool as it is
    else:
        raise _Refused(
            f"the payload for {iid} is no decision: send {{'type': one of "
            f"{list(pause.allowed)}, ...}} (its responseSchema)",
            "INVALID_DECISION",
        )
    if pause.allowed and kind not in pause.allowed:
        raise _Refused(
            f"{kind!r} is not offered on interrupt {iid}: it offers {list(pause.allowed)}",
            "DECISION_NOT_ALLOWED",
        )
    return decision


def _typed_decision(kind: str, payload: Mapping[str, Any], pause: _Pause, iid: str) -> Any:
    if kind == "edit":
        args = payload.get("args")
        if not isinstance(args, dict):
            raise _Refused(
                f"an edit of {iid} needs 'args', the edited arguments (an object)",
                "INVALID_DECISION",
            )
        try:
            _edit_model(pause).model_validate(args)
        except ValidationError as refused:
            raise _Refused(
                f"the edited arguments of {iid} do not fit {pause.value.get('name')!r}: "
                f"{explain_refusal(refused)}; nothing ran",
                "INVALID_ARGUMENTS",
            ) from refused
        edited = {"name": pause.value.get("name"), "args": args}
        return {"type": "edit", "edited_action": edited}
    if kind == "respond":
        message = payload.get("message")
        if not isinstance(message, str):
            raise _Refused(f"a respond on {iid} needs 'message' (a string)", "INVALID_DECISION")
        return {"type": "respond", "message": message}
    if kind == "reject":
        message = payload.get("message")
        return {"type": "reject", "message": message if isinstance(message, str) else None}
    return {"type": "approve"}


def _check_approver(entry: ResumeEntry, pause: _Pause, approver: Any) -> None:
    """An approval with approvers or several approvals needs a named approver: refused before
    anything runs (the package would ask again under a new interrupt id)."""
    approval = pause.value.get("approval")
    if approver is not None or entry.status == "cancelled" or not isinstance(approval, dict):
        return
    if approval.get("approvers") or (approval.get("approvals_required") or 1) > 1:
        raise _Refused(
            f"interrupt {entry.interrupt_id} needs a named approver "
            f"({approval.get('approvals_required')} approvals required, approvers "
            f"{approval.get('approvers')}); the server's approver= named nobody for this "
            "request. Nothing ran",
            "APPROVER_REQUIRED",
        )


def _decisions(
    entries: Sequence[ResumeEntry],
    pending: Sequence[_Pause],
    now: datetime,
    approver: Any = None,
) -> dict[str, Any]:
    """``{interrupt_id: decision}``, each bound to its pause's review digest.

    Raises:
        _Refused: an entry answers no pending interrupt (unknown, already answered, or
            asked again since), two entries answer one; a decision that cannot be applied.
    """
    by_id = {p.interrupt.id: p for p in pending}
    listed = ", ".join(by_id) or "nothing"
    decisions: dict[str, Any] = {}
    for entry in entries:
        iid = entry.interrupt_id
        if iid in decisions:
            raise _Refused(
                f"two resume entries answer interrupt {iid}; send one", "DUPLICATE_RESUME"
            )
        pause = by_id.get(iid)
        if pause is None:
            raise _Refused(
                f"interrupt {iid} is not pending on this thread (unknown, already answered, "
                f"or asked again under a new id); nothing ran. Pending: {listed}",
                "STALE_INTERRUPT",
            )
        decision = _decision(entry, pause, now)
        _check_approver(entry, pause, approver)
        if review_digest(pause.interrupt) is not None:
            decision = bind_decision(decision, pause.interrupt)
        decisions[iid] = decision
    return decisions


# --- the event stream ----------------------------------------------------------------------


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p if isinstance(p, str) else p.get("text", "") for p in content]
        return "".join(p for p in parts if isinstance(p, str))
    return ""


def _to_langchain(message: Message) -> BaseMessage | None:
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


def _to_agui(message: BaseMessage) -> Message | None:
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


async def _graph_events(
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


def _state_snapshot(values: Any) -> dict[str, Any]:
    if not isinstance(values, Mapping):
        return {}
    return {
        k: _jsonable(v) for k, v in values.items() if k != MESSAGES_KEY and not k.startswith("_")
    }


def _new_messages(given: Sequence[Message], stored: Sequence[BaseMessage]) -> list[BaseMessage]:
    known = {m.id for m in stored}
    new = [_to_langchain(m) for m in given if m.id not in known]
    return [m for m in new if m is not None]


async def _ask_in_doubt(graph: Any, config: RunnableConfig, thread_id: str) -> None:
    """A pause whose approved call's run died (the call may have run): ask the call's
    in-doubt question now, under the thread's lock (nothing runs), as the guarded resume does
    before applying an answer (:func:`~dynavec_langgraph._resuming.aresuming`)."""
    saver = graph.checkpointer
    async with aresume_lock(saver, thread_id):
        snapshot = await graph.aget_state(config)
        if snapshot.interrupts and in_doubt_pauses(
            await saver.aget_tuple(config), snapshot.interrupts
        ):
            await graph.ainvoke(None, config)


async def _new_turn(
    graph: Any, run: RunAgentInput, config: RunnableConfig
) -> AsyncIterator[BaseEvent]:
    """A run without resume entries: a paused thread shows its pauses again (the in-doubt
    question first where a crash made one stale; a new message is refused); a thread whose
    run stopped without a pause (a crash) is continued first (a call with ``on_crash="ask"``
    pauses in doubt); then the new user messages run."""
    before = await graph.aget_state(config)
    if before.interrupts:
        await _ask_in_doubt(graph, config, run.thread_id)
        before = await graph.aget_state(config)
    stored = (before.values or {}).get(MESSAGES_KEY) or []
    new = _new_messages(run.messages, stored)
    if before.interrupts:
        if new:
            refuse_if_paused(run.thread_id, before.interrupts)
        return  # no new message: the run ends with the pending pauses' outcome
    if before.next or before.tasks:  # a run that stopped without a pause: continue it first
        async with aresuming(
            graph, graph.checkpointer, run.thread_id, Answer(), config, crashed="continue"
        ) as plan:
            async for event in _graph_events(graph, plan.graph_input, config):
                yield event
            after = await graph.aget_state(config)
            plan.settle(after.interrupts)
        if after.interrupts:
            return  # the new messages wait: the client sends them again with its next run
    elif not new:
        raise InvalidInputError(
            "the run has no new user message and no resume entries: send a message, "
            "or answer the pending interrupts in 'resume'",
            "messages",
        )
    if new:
        async for event in _graph_events(graph, {MESSAGES_KEY: new}, config):
            yield event


async def stream_run(
    graph: Any,
    run: RunAgentInput,
    *,
    tools: Sequence[BaseTool] = (),
    approver: Any = None,
    now: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> AsyncIterator[BaseEvent]:
    """The AG-UI events of one run of ``graph`` (compiled with a checkpointer) on
    ``run.thread_id``: a new turn from ``run.messages``, or the answers of ``run.resume``.

    Ends with ``RUN_FINISHED`` (``outcome`` ``interrupt`` with every pending pause, or
    ``success``) or ``RUN_ERROR`` (``code``: ``STALE_INTERRUPT``, ``DUPLICATE_RESUME``,
    ``INTERRUPT_EXPIRED``, ``INVALID_DECISION``, ``DECISION_NOT_ALLOWED``,
    ``INVALID_ARGUMENTS``, or the package error's class name: ``ConcurrentResumeError``,
    ``ThreadPausedError``, ...). An error before the graph runs leaves the thread as it was.
    """
    yield RunStartedEvent(
        thread_id=run.thread_id, run_id=run.run_id, protocol_version=AGUI_PROTOCOL_VERSION
    )
    by_name = {t.name: t for t in tools}
    config: RunnableConfig = {"configurable": {"thread_id": run.thread_id}}
    try:
        if run.resume:
            pending = await _pending(graph, config, by_name)
            decisions = _decisions(run.resume, pending, now(), approver)
            answer = Answer(decisions=decisions, approver=approver)
            async with aresuming(
                graph, graph.checkpointer, run.thread_id, answer, config, crashed="refuse"
            ) as plan:
                async for event in _graph_events(graph, plan.graph_input, config):
                    yield event
                after = await graph.aget_state(config)
                plan.settle(after.interrupts)
        else:
            async for event in _new_turn(graph, run, config):
                yield event
    except DynavecError as error:
        code = error.code if isinstance(error, _Refused) else type(error).__name__
        yield RunErrorEvent(message=str(error), code=code)
        return
    state = await graph.aget_state(config)
    messages = [m for m in map(_to_agui, (state.values or {}).get(MESSAGES_KEY) or []) if m]
    yield MessagesSnapshotEvent(messages=messages)
    yield StateSnapshotEvent(snapshot=_state_snapshot(state.values))
    pending = await _pending(graph, config, by_name)
    if pending:
        outcome: Any = RunFinishedInterruptOutcome(interrupts=[_to_interrupt(p) for p in pending])
    else:
        outcome = RunFinishedSuccessOutcome()
    yield RunFinishedEvent(thread_id=run.thread_id, run_id=run.run_id, outcome=outcome)


# --- the app ----------------------------------------------------------------------------------


def create_agui_app(
    graph: Any,
    *,
    checkpointer: Any = None,
    tools: Sequence[BaseTool] = (),
    approver: Approver | None = None,
    path: str = "/",
) -> Starlette:
    """An ASGI app serving ``graph`` over AG-UI 1.0 at ``POST path`` (an AG-UI ``HttpAgent``'s
    ``url``): mount it in FastAPI / Starlette (``app.mount("/agui", create_agui_app(graph))``)
    or name it in ``langgraph.json``'s ``"http": {"app": "./server.py:app"}``.

    Args:
        graph: a compiled graph of the package (``create_react_agent``, ``create_agent``, or a
            graph holding one), compiled with a checkpointer, or give ``checkpointer``.
        checkpointer: the saver (anything ``checkpointer=`` takes: a saver,
            ``"sqlite:///file.db"``, ``"postgresql://..."``), when ``graph`` has none.
        tools: the agent's tools: an edit's ``args`` in a ``responseSchema`` is the tool's
            schema and edited arguments are validated by it before anything runs (without
            them: by the paused arguments' keys and JSON types).
        approver: who answers, for approvals with approvers or M-of-N (called with the
            request and the resume entry; see :func:`approver_from_metadata`).
        path: where the endpoint is, in the app.

    Raises:
        InvalidOptionError: ``graph`` has no checkpointer and none is given (a pause could
            not be resumed), or is no compiled graph.
    """
    if not hasattr(graph, "astream") or not hasattr(graph, "aget_state"):
        raise InvalidOptionError(
            f"create_agui_app() takes a compiled graph (create_react_agent(...)), got "
            f"{graph!r:.80}",
            "graph",
        )
    if checkpointer is not None:
        graph = graph.copy(update={"checkpointer": resolve_checkpointer(checkpointer)})
    if graph.checkpointer is None or isinstance(graph.checkpointer, bool):
        raise InvalidOptionError(
            "the graph has no checkpointer, so a pause could not be resumed: compile it with "
            "one or pass create_agui_app(graph, checkpointer='sqlite:///agui.db')",
            "checkpointer",
        )
    encoder = EventEncoder()

    async def endpoint(request: Request) -> Response:
        try:
            run = RunAgentInput.model_validate(await request.json())
        except (ValueError, ValidationError) as error:
            text = explain_refusal(error) if isinstance(error, ValidationError) else str(error)
            return JSONResponse(
                {"error": f"the body is no AG-UI RunAgentInput: {text}"}, status_code=422
            )
        who = None
        if approver is not None and run.resume:
            who = approver(request, run.resume[0])

        async def body() -> AsyncIterator[str]:
            async for event in stream_run(graph, run, tools=tools, approver=who):
                yield encoder.encode(event)

        return StreamingResponse(body(), media_type=encoder.get_content_type())

    return Starlette(routes=[Route(path, endpoint, methods=["POST"])])
