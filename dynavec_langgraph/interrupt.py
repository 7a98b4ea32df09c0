"""``interrupt(node_id, payload)``: dynavec's pause, on LangGraph's interrupt, answerable from the
approval UIs people run.

Every pause this package raises (:func:`interrupt` and
:func:`~dynavec_langgraph.approval.require_approval`) has one value, built by
:func:`pause_value`: dynavec's ``node_id`` / ``payload`` / ``tool_call``, LangChain 1.0's HITL
request (``action_requests``, ``review_configs``), LangChain's per-call ``tool_approval`` keys,
Agent Inbox's ``action_request`` / ``config`` / ``description``, and ``error`` (why the last
decision was refused, else ``None``) and ``review_digest`` (what is reviewed and which ask it
is: a decision bound to it with :func:`bind_decision` is refused by any other pause, see
docs/approval-uis.md). The interrupt's ``response_schema`` (JSON Schema) is what Studio draws a
form from.

Decisions are read by :func:`read_decision`: LangChain 1.0's ``{"decisions": [...]}``, a
LangChain per-call decision ``{"type": "approve" | "edit" | "reject" | "respond", ...}``, Agent
Inbox's ``[{"type": "accept" | "edit" | "ignore" | "response", "args": ...}]``; anything else is a
plain value. A decision that cannot be read, or that the ``response_schema`` refuses, never fails
the run: the same approval is asked again (a new interrupt, with ``error`` set) and nothing runs.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import cache
from typing import Annotated, Any, Literal, NotRequired, TypeVar, Union, overload

from langgraph.config import get_config
from langgraph.errors import GraphInterrupt
from langgraph.types import Command, Interrupt
from langgraph.types import interrupt as lg_interrupt
from pydantic import Discriminator, TypeAdapter, ValidationError
from typing_extensions import TypedDict

from dynavec_langgraph._audit_hooks import recorder
from dynavec_langgraph._digest import (
    bind_decision,
    check_bound,
    compute_review_digest,
    decision_digest,
    pause_digest,
    review_digest,
)
from dynavec_langgraph._errors import (
    InterruptCallError,
    InvalidDecisionError,
    StaleDecisionError,
    interrupt_call_text,
)
from dynavec_langgraph._policy import EXPIRE, ApprovalPolicy, ask_with_policy, policy_for

__all__ = [
    "ALL_DECISIONS",
    "Decision",
    "DecisionKind",
    "InterruptFields",
    "InterruptValue",
    "Rejected",
    "ToolCallRef",
    "ask",
    "bind_decision",
    "compute_review_digest",
    "current_tool_call",
    "decision_digest",
    "decision_schema",
    "describe_pending",
    "first_asked",
    "interrupt",
    "interrupt_fields",
    "pause_value",
    "read_decision",
    "refusal",
    "refusal_note",
    "refused_decisions",
    "resume_command",
    "review_digest",
]

T = TypeVar("T")

DecisionKind = Literal["approve", "edit", "reject", "respond"]
"""What a reviewer decided, whichever UI sent it (Agent Inbox's accept / ignore / response are
approve / reject / respond)."""
ALL_DECISIONS: tuple[DecisionKind, ...] = ("approve", "edit", "reject", "respond")
"""Every decision kind, in the order the UIs offer them."""


class ToolCallRef(TypedDict):
    """The tool call that paused: its id, tool name and arguments."""

    id: str
    name: str
    args: dict[str, Any]


class ActionRequest(TypedDict):
    """LangChain 1.0 HITL: one action to review.

    ``arguments`` repeats ``args`` for the readers that look there (Agent Inbox reads an
    action request's arguments under that key; docs/approval-uis.md).
    """

    name: str
    args: dict[str, Any]
    arguments: dict[str, Any]
    description: str


class ReviewConfig(TypedDict):
    """LangChain 1.0 HITL: what the reviewer may decide on the action ``action_name``."""

    action_name: str
    allowed_decisions: list[DecisionKind]


class InboxAction(TypedDict):
    """Agent Inbox's ``action_request``."""

    action: str
    args: dict[str, Any]


class InboxConfig(TypedDict):
    """Agent Inbox's ``config``: which buttons it shows."""

    allow_accept: bool
    allow_edit: bool
    allow_ignore: bool
    allow_respond: bool


class InterruptValue(TypedDict):
    """The plain-JSON value of every interrupt this package raises (see the module doc)."""

    node_id: str
    payload: Any
    tool_call: ToolCallRef | None
    description: str
    action_requests: list[ActionRequest]
    review_configs: list[ReviewConfig]
    type: Literal["tool_approval"]
    tool_call_id: str
    name: str
    args: dict[str, Any]
    allowed_decisions: list[DecisionKind]
    action_request: InboxAction
    config: InboxConfig
    error: str | None
    expires_at: NotRequired[str | None]
    approval: NotRequired[dict[str, Any]]
    review_digest: str


@dataclass(frozen=True)
class InterruptFields:
    """What every reader takes from a pause: ``node_id``, ``payload`` and ``tool_call``.

    For a pause of LangChain's ``HumanInTheLoopMiddleware`` (a HITL request) ``node_id`` is
    the name of its first action (the tool under review), the ``payload`` is the whole request
    and ``tool_call`` holds that action's name and args (the request carries no call id).
    ``node_id`` is ``None`` for any other plain LangGraph interrupt (a value not built by
    :func:`pause_value`); its whole value is then the ``payload``. ``raw`` is the value as
    stored (``Interrupt.value``).
    """

    node_id: str | None
    payload: Any
    tool_call: dict[str, Any] | None
    raw: Any

    @property
    def ours(self) -> bool:
        """Whether the value is this package's :class:`InterruptValue`."""
        return isinstance(self.raw, dict) and "node_id" in self.raw

    @property
    def tool_call_id(self) -> str | None:
        """The paused tool call's id, if any."""
        return self.tool_call.get("id") if self.tool_call else None

    def label(self) -> str:
        """The node id, or the value's ``repr`` for a plain LangGraph interrupt."""
        return self.node_id if self.node_id is not None else repr(self.raw)


def interrupt_fields(item: Any) -> InterruptFields:
    """Read one pause: an ``Interrupt``, or its value (a dict as a remote server sends it).

    The only place that unpacks an :class:`InterruptValue`; tolerant of plain LangGraph values.

    Example:
        >>> interrupt_fields(Interrupt({"node_id": "a", "payload": 1}, id="1" * 32)).node_id
        'a'
        >>> interrupt_fields(Interrupt("why?", id="1" * 32)).payload
        'why?'
    """
    value = item.value if isinstance(item, Interrupt) else item
    if isinstance(value, dict) and "node_id" in value:
        call = value.get("tool_call")
        return InterruptFields(
            str(value["node_id"]),
            value.get("payload"),
            call if isinstance(call, dict) else None,
            value,
        )
    action = _first_action(value)
    if action is not None:  # LangChain's HumanInTheLoopMiddleware: its request is the payload
        call = {"name": action["name"], "args": action.get("args")}
        return InterruptFields(str(action["name"]), value, call, value)
    return InterruptFields(None, value, None, value)


def _first_action(value: Any) -> dict[str, Any] | None:
    """The first action of a LangChain 1.0 HITL request (``{"action_requests": [{"name",
    "args", "description"}], "review_configs": [...]}``), or ``None``."""
    if not isinstance(value, dict) or "review_configs" not in value:
        return None
    actions = value.get("action_requests")
    first = actions[0] if isinstance(actions, list) and actions else None
    return first if isinstance(first, dict) and isinstance(first.get("name"), str) else None


def pause_value(
    node_id: str,
    payload: Any,
    *,
    tool_call: ToolCallRef | None,
    name: str,
    args: dict[str, Any],
    description: str,
    allowed: Sequence[DecisionKind] = ALL_DECISIONS,
    error: str | None = None,
) -> InterruptValue:
    """The value of a pause: what every approval UI reads, in each one's format.

    Args:
        node_id: dynavec's approval point.
        payload: dynavec's payload (what the person decides on).
        tool_call: the paused tool call, if any.
        name: the action under review (the tool's name, or ``node_id``).
        args: the action's arguments, shown and editable in the UIs.
        description: the text the UIs show.
        allowed: the decisions offered.
        error: why the previous decision was refused (``None`` on the first ask); also
            appended to both descriptions (:func:`refusal_note`), the text every UI shows.

    Example:
        >>> v = pause_value("approve_x", {"n": 1}, tool_call=None, name="approve_x",
        ...                 args={"n": 1}, description="ok?", allowed=("approve", "reject"))
        >>> v["review_configs"], v["config"]["allow_edit"]
        ([{'action_name': 'approve_x', 'allowed_decisions': ['approve', 'reject']}], False)
    """
    kinds = [k for k in ALL_DECISIONS if k in allowed]
    shown = description if error is None else description + refusal_note(error)
    value: InterruptValue = {
        "node_id": node_id,
        "payload": payload,
        "tool_call": tool_call,
        "description": shown,
        "action_requests": [{"name": name, "args": args, "arguments": args, "description": shown}],
        "review_configs": [{"action_name": name, "allowed_decisions": kinds}],
        "type": "tool_approval",
        "tool_call_id": tool_call["id"] if tool_call else "",
        "name": name,
        "args": args,
        "allowed_decisions": kinds,
        "action_request": {"action": name, "args": args},
        "config": {
            "allow_accept": "approve" in kinds,
            "allow_edit": "edit" in kinds,
            "allow_ignore": "reject" in kinds,
            "allow_respond": "respond" in kinds,
        },
        "error": error,
        "review_digest": "",
    }
    value["review_digest"] = pause_digest(value)  # the first ask; ask() sets which ask it is
    return value


def refusal_note(error: str) -> str:
    """What a re-asked pause adds to its ``description`` (the text the UIs show): why the last
    decision was refused.

    Example:
        >>> refusal_note("the decision 'maybe' was refused: say yes or no").strip()
        "Asked again: the decision 'maybe' was refused: say yes or no. Nothing ran; decide again."
    """
    return f"\n\nAsked again: {error}. Nothing ran; decide again."


def first_asked(value: Mapping[str, Any]) -> dict[str, Any]:
    """A re-asked pause's value as it was first asked: ``error`` ``None`` and the descriptions
    without their :func:`refusal_note` (to check that the same approval is asked again)."""
    error = value.get("error")
    if not error:
        return dict(value)
    note = refusal_note(error)

    def plain(text: Any) -> Any:
        return text[: -len(note)] if isinstance(text, str) and text.endswith(note) else text

    actions = [
        {**a, "description": plain(a.get("description"))} if isinstance(a, dict) else a
        for a in value.get("action_requests") or []
    ]
    return {
        **value,
        "error": None,
        "description": plain(value.get("description")),
        "action_requests": actions,
    }


class Rejected(str):
    """What a plain :func:`interrupt` returns for a reject: ``"rejected"`` (it compares, hashes
    and serialises as that string), with the reviewer's reason as ``message`` (``None`` when
    none was given: Agent Inbox's ignore, a reject without a message).

    Example:
        >>> r = Rejected("too much")
        >>> r == "rejected", r.message
        (True, 'too much')
    """

    message: str | None

    def __new__(cls, message: str | None = None) -> Rejected:
        self = super().__new__(cls, "rejected")
        self.message = message
        return self

    def __getnewargs__(self) -> tuple[str | None]:  # type: ignore[override]
        return (self.message,)


# --- decisions, in each UI's format ---------------------------------------------------------


class _EditedAction(TypedDict):
    name: str
    args: dict[str, Any]


class _Approve(TypedDict):
    type: Literal["approve"]


class _Edit(TypedDict):
    type: Literal["edit"]
    edited_action: _EditedAction


class _Reject(TypedDict):
    type: Literal["reject"]
    message: NotRequired[str | None]


class _Respond(TypedDict):
    type: Literal["respond"]
    message: str


class _InboxAccept(TypedDict):
    type: Literal["accept"]
    args: NotRequired[Any]


class _InboxEdit(TypedDict):
    type: Literal["edit"]
    args: InboxAction


class _InboxIgnore(TypedDict):
    type: Literal["ignore"]
    args: NotRequired[Any]


class _InboxResponse(TypedDict):
    type: Literal["response"]
    args: str


_LANGCHAIN = {"approve": _Approve, "edit": _Edit, "reject": _Reject, "respond": _Respond}
_INBOX = {"approve": _InboxAccept, "edit": _InboxEdit, "reject": _InboxIgnore}
_INBOX["respond"] = _InboxResponse
_INBOX_KIND: dict[str, DecisionKind] = {
    "accept": "approve",
    "ignore": "reject",
    "response": "respond",
}
_TYPES = {"approve", "edit", "reject", "respond", "accept", "ignore", "response"}


@cache
def _adapter(inbox: bool) -> TypeAdapter[Any]:
    """The validator of one UI decision (LangChain's shape, or Agent Inbox's): built on first
    use, not when the package is imported (a pydantic schema build)."""
    if inbox:
        return TypeAdapter(Union[_InboxAccept, _InboxIgnore, _InboxResponse, _InboxEdit])  # noqa: UP007
    return TypeAdapter(
        Annotated[Union[_Approve, _Reject, _Respond, _Edit], Discriminator("type")]  # noqa: UP007
    )


def decision_schema(allowed: Sequence[DecisionKind]) -> Any:
    """The Python type of every UI decision offering ``allowed`` (for JSON Schema)."""
    ours = tuple(_LANGCHAIN[k] for k in allowed)
    inbox = tuple(_INBOX[k] for k in allowed)
    one = Union[ours]  # type: ignore[valid-type]  # noqa: UP007
    LangChainDecisions = TypedDict("LangChainDecisions", {"decisions": list[one]})  # noqa: UP013
    return Union[(LangChainDecisions, *ours, list[Union[inbox]], *inbox)]  # type: ignore[valid-type]  # noqa: UP007


@dataclass(frozen=True)
class Decision:
    """A reviewer's decision read from any UI format.

    ``args`` are the edited arguments (``edit``); ``message`` the reviewer's text (``reject``
    reason or ``respond`` answer).
    """

    kind: DecisionKind
    args: dict[str, Any] | None = None
    message: str | None = None


def _short(value: Any, limit: int = 200) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _one(raw: Mapping[str, Any], action: str) -> Decision:
    kind = raw["type"]
    adapter = _adapter(kind in _INBOX_KIND or (kind == "edit" and "args" in raw))
    data = adapter.validate_python(raw)
    if data["type"] in _INBOX_KIND:
        kind = _INBOX_KIND[data["type"]]
        if kind == "respond":
            return Decision("respond", message=data["args"])
        return Decision(kind)
    if kind == "edit":
        edited = data.get("edited_action") or {
            "name": data["args"]["action"],
            "args": data["args"]["args"],
        }
        if edited["name"] != action:
            raise InvalidDecisionError(
                f"an edit may change the arguments of {action!r}, not name another action "
                f"({edited['name']!r})"
            )
        return Decision("edit", args=dict(edited["args"]))
    return Decision(kind, message=data.get("message"))


def _typed(items: Any) -> bool:
    """A non-empty list of dicts with a ``type`` (the shape of the UIs' decision lists)."""
    return (
        isinstance(items, list)
        and bool(items)
        and all(isinstance(i, Mapping) and "type" in i for i in items)
    )


def read_decision(raw: Any, action: str) -> Decision | None:
    """Read ``raw`` as an approval UI's decision on ``action``; ``None``: a plain value.

    A value counts as a UI decision only by its shape: ``{"decisions": [{"type": ...}]}``, a
    list of ``{"type": <a UI decision type>, ...}``, or one such dict; anything else is plain.

    Raises:
        InvalidDecisionError: it is a UI decision but malformed (e.g. two decisions for one
            action, an edit naming another action).
        pydantic.ValidationError: its fields do not fit the format.

    Example:
        >>> read_decision({"decisions": [{"type": "approve"}]}, "pay")
        Decision(kind='approve', args=None, message=None)
        >>> read_decision([{"type": "response", "args": "later"}], "pay")
        Decision(kind='respond', args=None, message='later')
        >>> read_decision("approved", "pay") is None
        True
    """
    if isinstance(raw, Mapping) and set(raw) == {"decisions"} and _typed(raw["decisions"]):
        items = raw["decisions"]
        if len(items) != 1:
            raise InvalidDecisionError(
                f"expected one decision in 'decisions' for {action!r} (one action is under "
                f"review), got {len(items)}"
            )
        if items[0]["type"] not in _TYPES:
            raise InvalidDecisionError(
                f"unknown decision type {items[0]['type']!r}: use approve, edit, reject or respond"
            )
        return _one(items[0], action)
    if _typed(raw) and all(r["type"] in _TYPES for r in raw):
        if len(raw) != 1:
            raise InvalidDecisionError(
                f"expected one Agent Inbox response for {action!r}, got {len(raw)}"
            )
        return _one(raw[0], action)
    if isinstance(raw, Mapping) and raw.get("type") in _TYPES:
        return _one(raw, action)
    return None


def explain_refusal(error: ValueError) -> str:
    """A short text for a refused decision: pydantic's errors on one line each."""
    if isinstance(error, ValidationError):
        parts = []
        for e in error.errors(include_url=False)[:5]:
            where = ".".join(str(p) for p in e["loc"])
            parts.append(f"{where}: {e['msg']}" if where else str(e["msg"]))
        return "; ".join(parts)
    return str(error)


def answer_slot(value: Any, schema: dict[str, Any] | type | Any = None) -> Any:
    """LangGraph's ``interrupt(value)``: the stored answer of this task's next interrupt slot,
    or the pause (``GraphInterrupt``, raised on). The package's one call of it: :func:`ask`,
    the approval-policy loop (``dynavec_langgraph._policy.ask_with_policy``) and the in-doubt
    replay (``dynavec_langgraph._exactly_once``, which reads earlier answers with
    ``answer_slot(None)``) and the per-call review of a redirected edit
    (``dynavec_langgraph._middleware.per_call_review``, whose ``schema`` is a type, as
    LangChain's) all pause through it."""
    if schema is None:
        return lg_interrupt(value)
    return lg_interrupt(value, response_schema=schema)


def ask(
    build: Callable[[str | None], InterruptValue],
    schema: dict[str, Any],
    accept: Callable[[Any], T],
) -> T:
    """Pause with ``build(None)`` until ``accept`` takes a decision; return what it returns.

    A decision ``accept`` refuses (``ValueError``, e.g. ``pydantic.ValidationError`` or
    :class:`~dynavec_langgraph._errors.InvalidDecisionError`) pauses again with
    ``build(reason)``: the thread stays interrupted at the same approval, nothing after the
    pause runs. On every re-run the stored answers are read again in order, so the refused
    ones are refused again and the accepted one is accepted again (validated afresh).

    Each pause carries its ``review_digest`` (which counts the refused decisions: a re-ask is
    another pause); a decision bound to another pause's digest is refused before ``accept``
    sees it, and asked again under the same digest (see :mod:`dynavec_langgraph._digest`).
    """
    _audit = recorder()  # the audit trail and outbox: hooks that do nothing unless on

    error: str | None = None
    index = 0  # the answers read so far: LangGraph's interrupt index of the next ask
    asks = 0  # the decisions refused so far: a re-ask is a new review (a new digest)
    while True:
        value = build(error)
        value["review_digest"] = pause_digest(value, asks)
        try:
            raw = answer_slot(value, schema)
        except GraphInterrupt as paused:  # recorded, then raised on: never swallowed
            _audit.on_pause(value, paused.args[0] if paused.args else (), error is not None)
            raise
        try:
            accepted = accept(check_bound(raw, value))
        except StaleDecisionError as stale:  # the pause stays: the same digest is asked again
            error = str(stale)
            _audit.on_decision(value, raw, index, error)
            index += 1
            continue
        except ValueError as refused:  # never GraphInterrupt: it is no ValueError
            error = f"the decision {_short(raw)} was refused: {explain_refusal(refused)}"
            _audit.on_decision(value, raw, index, error)
            index += 1
            asks += 1
            continue
        _audit.on_decision(value, raw, index, None)
        return accepted


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


def _plain(decision: Decision, wrapped: bool) -> Any:
    """A UI's decision as a dynavec tool reads it (the table of docs/approval-uis.md)."""
    if decision.kind == "approve":
        return "approved"
    if decision.kind == "reject":
        return Rejected(decision.message)
    if decision.kind == "respond":
        return decision.message
    args = decision.args or {}
    return args.get("payload") if wrapped else args


def _any_decision_schema(node_id: str) -> dict[str, Any]:
    return {
        "title": f"Decision for {node_id}",
        "description": (
            "Any JSON value but null; 'approved' / 'rejected', or an approval UI's decision "
            "(LangChain 1.0, Agent Inbox), which the tool receives as documented"
        ),
        "examples": ["approved", "rejected"],
    }


def _check_call(node_id: Any, payload: Any) -> None:
    """Refuse a node id or payload that cannot be stored, before anything is saved.

    Raises:
        InterruptCallError: naming what is wrong (also a ``TypeError``).
    """
    from dynavec_langgraph._resuming import lone_surrogate  # imports this module

    if not isinstance(node_id, str) or not node_id:
        raise InterruptCallError(
            interrupt_call_text(
                str(node_id), f"node_id must be a non-empty string, got {node_id!r}"
            ),
            "node_id",
        )
    for field, value in (("node_id", node_id), ("payload", payload)):
        found = lone_surrogate(value)
        if found is not None:
            place, index, char = found
            detail = (
                f"{field}{place}: character {index} ({char!r}) is a lone surrogate (half of a "
                "UTF-16 pair), which no checkpointer stores as it is"
            )
            raise InterruptCallError(interrupt_call_text(node_id, detail), field + place)
    try:
        json.dumps(payload, allow_nan=False)
    except RecursionError:
        detail = "the payload is nested too deeply to be stored; send a flatter value"
        raise InterruptCallError(interrupt_call_text(node_id, detail), "payload") from None
    except (TypeError, ValueError) as error:
        detail = (
            f"the payload cannot be stored as JSON ({error}); pass dicts, lists, strings, "
            "numbers, booleans or None"
        )
        raise InterruptCallError(interrupt_call_text(node_id, detail), "payload") from None


@overload
def interrupt(
    node_id: str,
    payload: Any = None,
    *,
    response_schema: type[T],
    allowed: Sequence[DecisionKind] = ...,
    policy: ApprovalPolicy | None = ...,
    expires_in: timedelta | float | None = ...,
    expires_at: datetime | str | None = ...,
    on_expire: Any = ...,
    approvers: Any = ...,
    approvals_required: int | None = ...,
) -> T: ...
@overload
def interrupt(
    node_id: str,
    payload: Any = None,
    *,
    response_schema: None = None,
    allowed: Sequence[DecisionKind] = ...,
    policy: ApprovalPolicy | None = ...,
    expires_in: timedelta | float | None = ...,
    expires_at: datetime | str | None = ...,
    on_expire: Any = ...,
    approvers: Any = ...,
    approvals_required: int | None = ...,
) -> Any: ...
@overload
def interrupt(thread_id: str, node_id: str, payload: Any, /) -> Any: ...
def interrupt(
    node_id: str,
    payload: Any = None,
    *v1: Any,
    response_schema: type[Any] | None = None,
    allowed: Sequence[DecisionKind] = ALL_DECISIONS,
    policy: ApprovalPolicy | None = None,
    expires_in: timedelta | float | None = None,
    expires_at: datetime | str | None = None,
    on_expire: Any = None,
    approvers: Any = None,
    approvals_required: int | None = None,
) -> Any:
    """Pause the running tool call until a person decides; return the decision.

    The first call raises LangGraph's ``GraphInterrupt`` (never catch it): the run stops with
    an interrupt whose value is :class:`InterruptValue` (``node_id``, ``payload``,
    ``tool_call`` and what the approval UIs read). When the thread is resumed
    (``ReActAgent.resume(...)`` or ``Command(resume=decision)``) the tool runs again from its
    first line and this call returns the decision: a plain value unchanged; an approval UI's
    decision as ``"approved"`` (approve / accept), ``"rejected"`` (reject / ignore: a
    :class:`Rejected`, which equals ``"rejected"`` and carries the reason as ``message``), the
    edited arguments (edit: the edited ``payload`` dict, or the edited value when the payload is no
    dict) or the reviewer's text (respond / response).

    Args:
        node_id: names the approval point, e.g. ``"approve_transfer"``.
        payload: what the person needs to decide; must be JSON (dicts, lists, strings,
            numbers, booleans, None).
        response_schema: a pydantic model, TypedDict or dataclass. The decision is validated
            against it (after the UI formats are read) and the validated object returned, on
            every re-run. A decision it refuses asks the same approval again, with ``error``
            set in the new interrupt value; nothing after the pause runs. Studio renders it as
            a typed form.
        allowed: the approval UIs' decisions offered (their buttons); another one asks again.
            Plain values are always accepted.
        policy: an :class:`~dynavec_langgraph.approval.ApprovalPolicy` (expiry, who may
            approve, several approvers; docs/approvals-in-production.md). The options below
            override its fields (and the agent's ``approval_policy=``).
        expires_in: a duration (``timedelta`` or seconds) after which the pause is expired.
        expires_at: a deadline (aware ``datetime`` or ISO 8601).
        on_expire: what an expired pause returns (default ``"rejected"``), or ``"raise"``
            (the package's doors raise ``ApprovalTimeoutError``; the tool gets ``"rejected"``).
        approvers: names / ``"role:NAME"`` entries, or ``rule(approver, pause_value)``.
        approvals_required: distinct approvers needed; the call returns ``"approved"`` only
            after that many approved; any other answer is returned at once.

    HITL v1's three-argument form ``interrupt(thread_id, node_id, payload)`` is accepted too;
    the thread id is not needed (the running agent knows its thread) and only reaches
    ``NodeInterrupt`` (docs/compatibility.md).

    Raises:
        InterruptCallError: an empty or non-string ``node_id``, or a ``payload`` that cannot
            be stored as JSON (or holds a lone surrogate); a ``TypeError``, raised before
            anything is saved. Inside an agent it is raised to the caller of ``run`` /
            ``invoke``, not shown to the model as an error observation (docs/errors.md).
        NodeInterrupt: called outside a running agent or LangGraph node (a ``RuntimeError``;
            ``AgentTool.execute()`` lets it through, as HITL v1 did).
    """
    thread_id: str | None = None
    if v1:
        if len(v1) != 1:
            raise TypeError("interrupt() takes (node_id, payload) or (thread_id, node_id, payload)")
        thread_id, node_id, payload = str(node_id), payload, v1[0]
    _check_call(node_id, payload)
    kinds = [k for k in ALL_DECISIONS if k in allowed]
    if not kinds or set(allowed) - set(kinds):
        raise ValueError(f"allowed={allowed!r}: use some of {', '.join(ALL_DECISIONS)}")
    try:
        get_config()
    except RuntimeError:
        from dynavec_langgraph.exceptions import NodeInterrupt  # imports errors, as we do

        raise NodeInterrupt(thread_id, node_id, payload) from None
    call = current_tool_call()
    wrapped = not isinstance(payload, dict)
    args: dict[str, Any] = {"payload": payload} if wrapped else dict(payload)
    where = f" in {call['name']}" if call else ""
    description = f"{node_id}{where}: {json.dumps(payload, ensure_ascii=False)}"
    adapter: TypeAdapter[Any] | None = None
    schema = _any_decision_schema(node_id)
    if response_schema is not None:
        adapter = TypeAdapter(response_schema)
        schema = adapter.json_schema()

    def build(error: str | None) -> InterruptValue:
        return pause_value(
            node_id,
            payload,
            tool_call=call,
            name=node_id,
            args=args,
            description=description,
            allowed=kinds,
            error=error,
        )

    def accept(raw: Any) -> Any:
        decision = read_decision(raw, node_id)
        if decision is not None and decision.kind not in kinds:
            raise InvalidDecisionError(
                f"{decision.kind!r} is not allowed for {node_id!r}; allowed: {', '.join(kinds)}"
            )
        value = raw if decision is None else _plain(decision, wrapped)
        if value is None:
            raise InvalidDecisionError("None is no decision: answer with a value")
        return value if adapter is None else adapter.validate_python(value)

    given = {"expires_in": expires_in, "expires_at": expires_at, "on_expire": on_expire}
    given.update(approvers=approvers, approvals_required=approvals_required)
    chosen = policy_for(node_id, given, policy)
    if chosen is None:
        return ask(build, schema, accept)

    def expired(_: str) -> Any:
        value = "rejected" if chosen.on_expire == EXPIRE else chosen.on_expire
        try:
            return accept(value)
        except ValueError:
            return value

    return ask_with_policy(
        build,
        schema,
        accept,
        chosen,
        node_id,
        is_approval=lambda value: bool(value == "approved"),
        on_expired=expired,
        tool_call_id=call["id"] if call else None,
        explain=lambda _, error: explain_refusal(error),
    )


def refused_decisions(before: Sequence[Interrupt], after: Sequence[Interrupt]) -> list[str]:
    """The errors of the pauses in ``after`` that re-ask a decision given since ``before``.

    A refused decision leaves the thread paused at the same approval under a new interrupt id,
    whose value carries ``error``; callers that resumed use this to report the refusal.
    """
    seen = {i.id for i in before}
    return [
        f"{i.value.get('node_id')!r}: {i.value['error']}"
        for i in after
        if i.id not in seen and isinstance(i.value, dict) and i.value.get("error")
    ]


def refusal(before: Sequence[Interrupt], after: Sequence[Interrupt]) -> str | None:
    """What to tell a caller whose decision was refused (see :func:`refused_decisions`), or
    ``None`` when none was."""
    refused = refused_decisions(before, after)
    if not refused:
        return None
    return (
        f"{'; '.join(refused)}. Nothing ran and the thread is still paused at the same "
        "approval (asked again, with this error in its interrupt value): resume it again "
        "with a valid decision"
    )


def _node_id(pending: Interrupt) -> str | None:
    return interrupt_fields(pending).node_id


def describe_pending(interrupts: Sequence[Interrupt]) -> str:
    """``"'approve_a' (id 1f2e…), 'approve_b' (id 9c0d…)"``: what is pending, for messages."""
    return ", ".join(f"{_node_id(i)!r} (interrupt id {i.id})" for i in interrupts) or "nothing"


def resume_command(
    interrupts: Sequence[Interrupt], decisions: Mapping[str, Any], *, bind: bool = False
) -> Command[Any]:
    """The ``Command(resume={interrupt_id: decision})`` that answers several pauses at once.

    Args:
        interrupts: what is pending, e.g. ``graph.get_state(config).interrupts``.
        decisions: ``{node_id or interrupt_id: decision}``.
        bind: bind each decision to the review digest of the pause in ``interrupts`` it
            answers (:func:`bind_decision`): if the thread has moved on since ``interrupts``
            were read (asked again, another call), the paused tool refuses it. Pauses without
            a digest (plain LangGraph interrupts) get the decision as it is.

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
        if bind and review_digest(by_id[target]) is not None:
            decision = bind_decision(decision, by_id[target])
        resume[target] = decision
    return Command(resume=resume)
