"""Decisions, in each approval UI's format: LangChain 1.0's ``{"decisions": [...]}``, a
LangChain per-call decision ``{"type": "approve" | "edit" | "reject" | "respond", ...}``, Agent
Inbox's ``[{"type": "accept" | "edit" | "ignore" | "response", "args": ...}]``.

:func:`read_decision` reads one (anything else is a plain value), :func:`plain_decision` turns
it into what a dynavec tool receives, :func:`decision_schema` is the JSON Schema type of them,
:func:`resume_command` answers several pauses at once and :func:`refusal` says what a caller
whose decision was refused is told. :class:`Rejected` and :func:`resume_command` are public
through :mod:`dynavec_langgraph.interrupt`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Annotated, Any, Literal, NotRequired, Union

from langgraph.types import Command, Interrupt
from pydantic import Discriminator, TypeAdapter, ValidationError
from typing_extensions import TypedDict

from dynavec_langgraph._errors import InvalidDecisionError
from dynavec_langgraph._pauses.digest import bind_decision, review_digest
from dynavec_langgraph._pauses.value import (
    DecisionKind,
    InboxAction,
    describe_pending,
    interrupt_fields,
)
from dynavec_langgraph._types import JSONMapping, JSONSchema, ToolArgs, TypeAnnotation, UserPayload

__all__ = [
    "Decision",
    "Rejected",
    "any_decision_schema",
    "decision_schema",
    "explain_refusal",
    "offered",
    "plain_decision",
    "read_decision",
    "refusal",
    "refused_decisions",
    "resume_command",
    "short_repr",
]


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
    args: ToolArgs


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
    args: NotRequired[UserPayload]


class _InboxEdit(TypedDict):
    type: Literal["edit"]
    args: InboxAction


class _InboxIgnore(TypedDict):
    type: Literal["ignore"]
    args: NotRequired[UserPayload]


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


def decision_schema(allowed: Sequence[DecisionKind]) -> TypeAnnotation:
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
    args: ToolArgs | None = None
    message: str | None = None


def short_repr(value: object, limit: int = 200) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _one(raw: JSONMapping, action: str) -> Decision:
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


def _typed(items: object) -> bool:
    """A non-empty list of dicts with a ``type`` (the shape of the UIs' decision lists)."""
    return (
        isinstance(items, list)
        and bool(items)
        and all(isinstance(i, Mapping) and "type" in i for i in items)
    )


def read_decision(raw: UserPayload, action: str) -> Decision | None:
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


def offered(decision: Decision, raw: UserPayload, allowed: Sequence[DecisionKind]) -> Decision:
    """``decision`` as the pause that offers ``allowed`` takes it: the current Agent Inbox
    shows no Ignore (it sets ``allow_ignore: false``) and offers its Respond button wherever
    reject is allowed, so its ``response`` to a pause that allows reject but not respond is a
    reject whose reason is the text. Anything else is ``decision`` unchanged.

    Example:
        >>> d = read_decision([{"type": "response", "args": "too much"}], "pay")
        >>> offered(d, [{"type": "response", "args": "too much"}], ["approve", "reject"])
        Decision(kind='reject', args=None, message='too much')
    """
    if decision.kind != "respond" or "respond" in allowed or "reject" not in allowed:
        return decision
    items = raw.get("decisions") if isinstance(raw, Mapping) else raw
    one = items[0] if isinstance(items, list) and len(items) == 1 else items
    if isinstance(one, Mapping) and one.get("type") == "response":  # Agent Inbox's format only
        return Decision("reject", message=decision.message)
    return decision


def read_answer(
    raw: UserPayload, action: str, plain: Mapping[str, DecisionKind], what: str
) -> Decision:
    """``raw`` as a decision on ``action``: an approval UI's (:func:`read_decision`) or one of
    the ``plain`` words (``{"approved": "approve", ...}``).

    Raises:
        InvalidDecisionError: neither; the message says ``raw`` is no ``what``.
    """
    decision = read_decision(raw, action)
    if decision is not None:
        return decision
    kind = plain.get(raw) if isinstance(raw, str) else None
    if kind is None:
        raise InvalidDecisionError(f"{raw!r} is no {what}")
    return Decision(kind)


def allowed_decision(
    decision: Decision, raw: UserPayload, allowed: Sequence[DecisionKind], where: str
) -> Decision:
    """``decision`` (read from ``raw``) as the pause offering ``allowed`` takes it
    (:func:`offered`).

    Raises:
        InvalidDecisionError: a decision not in ``allowed`` (``where``: what is asked).
    """
    decision = offered(decision, raw, allowed)
    if decision.kind not in allowed:
        raise InvalidDecisionError(
            f"{decision.kind!r} is not allowed for {where}; allowed: {', '.join(allowed)}"
        )
    return decision


def explain_refusal(error: ValueError) -> str:
    """A short text for a refused decision: pydantic's errors on one line each."""
    if isinstance(error, ValidationError):
        parts = []
        for e in error.errors(include_url=False)[:5]:
            where = ".".join(str(p) for p in e["loc"])
            parts.append(f"{where}: {e['msg']}" if where else str(e["msg"]))
        return "; ".join(parts)
    return str(error)


def plain_decision(decision: Decision, wrapped: bool) -> UserPayload:
    """A UI's decision as a dynavec tool reads it (the table of docs/approval-uis.md)."""
    if decision.kind == "approve":
        return "approved"
    if decision.kind == "reject":
        return Rejected(decision.message)
    if decision.kind == "respond":
        return decision.message
    args = decision.args or {}
    return args.get("payload") if wrapped else args


def any_decision_schema(node_id: str) -> JSONSchema:
    return {
        "title": f"Decision for {node_id}",
        "description": (
            "Any JSON value but null; 'approved' / 'rejected', or an approval UI's decision "
            "(LangChain 1.0, Agent Inbox), which the tool receives as documented"
        ),
        "examples": ["approved", "rejected"],
    }


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


def resume_command(
    interrupts: Sequence[Interrupt], decisions: Mapping[str, UserPayload], *, bind: bool = False
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
        node = interrupt_fields(i).node_id
        if node is not None:
            by_node.setdefault(node, []).append(i)
    resume: dict[str, UserPayload] = {}
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


# The public home of Rejected (docs, reprs, pickles) is dynavec_langgraph.interrupt.
Rejected.__module__ = "dynavec_langgraph.interrupt"
