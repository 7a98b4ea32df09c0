"""The value of every pause this package raises, and the one reader of it.

:func:`pause_value` builds an :class:`InterruptValue` (dynavec's ``node_id`` / ``payload`` /
``tool_call`` and what each approval UI reads, in its format: see
:mod:`dynavec_langgraph.interrupt`); :func:`interrupt_fields` is the only place that unpacks
one (tolerant of plain LangGraph values and of LangChain's HITL requests). The value's type,
:func:`pause_value`, :func:`first_asked`, :func:`refusal_note` and :func:`describe_pending` are
public through :mod:`dynavec_langgraph.interrupt`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, NotRequired

from langgraph.types import Interrupt
from typing_extensions import TypedDict

from dynavec_langgraph._graph.call_ids import ToolCallRef
from dynavec_langgraph._pauses.digest import pause_digest
from dynavec_langgraph._types import JSONMapping, JSONObject, ToolArgs, UserPayload

__all__ = [
    "ALL_DECISIONS",
    "ActionRequest",
    "DecisionKind",
    "InboxAction",
    "InboxConfig",
    "InterruptFields",
    "InterruptValue",
    "ReviewConfig",
    "ToolCallRef",
    "describe_pending",
    "first_asked",
    "interrupt_fields",
    "pause_value",
    "refusal_note",
    "short_reason",
    "with_notes",
]

DecisionKind = Literal["approve", "edit", "reject", "respond"]
"""What a reviewer decided, whichever UI sent it (Agent Inbox's accept / ignore / response are
approve / reject / respond)."""
ALL_DECISIONS: tuple[DecisionKind, ...] = ("approve", "edit", "reject", "respond")
"""Every decision kind, in the order the UIs offer them."""


class ActionRequest(TypedDict):
    """LangChain 1.0 HITL: one action to review.

    ``arguments`` repeats ``args`` for the readers that look there (Agent Inbox reads an
    action request's arguments under that key; docs/approval-uis.md).
    """

    name: str
    args: ToolArgs
    arguments: ToolArgs
    description: str


class ReviewConfig(TypedDict):
    """LangChain 1.0 HITL: what the reviewer may decide on the action ``action_name``."""

    action_name: str
    allowed_decisions: list[DecisionKind]


class InboxAction(TypedDict):
    """Agent Inbox's ``action_request``."""

    action: str
    args: ToolArgs


class InboxConfig(TypedDict):
    """Agent Inbox's ``config``: which buttons it shows."""

    allow_accept: bool
    allow_edit: bool
    allow_ignore: bool
    allow_respond: bool


class InterruptValue(TypedDict):
    """The plain-JSON value of every interrupt this package raises (see the module doc)."""

    node_id: str
    payload: UserPayload
    tool_call: ToolCallRef | None
    description: str
    action_requests: list[ActionRequest]
    review_configs: list[ReviewConfig]
    type: Literal["tool_approval"]
    tool_call_id: str
    name: str
    args: ToolArgs
    allowed_decisions: list[DecisionKind]
    action_request: InboxAction
    config: InboxConfig
    error: str | None
    expires_at: NotRequired[str | None]
    approval: NotRequired[JSONObject]
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
    payload: UserPayload
    tool_call: JSONObject | None
    raw: UserPayload

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


def interrupt_fields(item: object) -> InterruptFields:
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


def _first_action(value: object) -> JSONObject | None:
    """The first action of a LangChain 1.0 HITL request (``{"action_requests": [{"name",
    "args", "description"}], "review_configs": [...]}``), or ``None``."""
    if not isinstance(value, dict) or "review_configs" not in value:
        return None
    actions = value.get("action_requests")
    first = actions[0] if isinstance(actions, list) and actions else None
    return first if isinstance(first, dict) and isinstance(first.get("name"), str) else None


def pause_value(
    node_id: str,
    payload: UserPayload,
    *,
    tool_call: ToolCallRef | None,
    name: str,
    args: ToolArgs,
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
        error: why the previous decision was refused (``None`` on the first ask); its short
            reason is also the first line of both descriptions (:func:`refusal_note`), the
            text every UI shows.

    Example:
        >>> v = pause_value("approve_x", {"n": 1}, tool_call=None, name="approve_x",
        ...                 args={"n": 1}, description="ok?", allowed=("approve", "reject"))
        >>> v["review_configs"], v["config"]["allow_edit"]
        ([{'action_name': 'approve_x', 'allowed_decisions': ['approve', 'reject']}], False)
    """
    kinds = [k for k in ALL_DECISIONS if k in allowed]
    shown = description if error is None else f"{refusal_note(error)}\n\n{description}"
    # paragraphs (a blank line between): the UIs render the description as Markdown
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


_REFUSED = re.compile(r"the decision .*? was refused: ", re.DOTALL)
_NOTE_START = "Asked again: "


def short_reason(error: str) -> str:
    """The human part of a refusal ``error``, on one line: without the decision's Python
    ``repr`` that ``error`` starts with when a decision was refused (``the decision {...} was
    refused: WHY``).

    Example:
        >>> short_reason("the decision {'type': 'maybe'} was refused: say  yes or no")
        'say yes or no'
    """
    found = _REFUSED.match(error)
    return " ".join((error[found.end() :] if found else error).split())


def refusal_note(error: str) -> str:
    """The first line of a re-asked pause's ``description`` (the text the UIs show): why the
    last decision was refused, in short (:func:`short_reason`; ``error`` keeps it whole).

    Example:
        >>> refusal_note("the decision 'maybe' was refused: say yes or no")
        'Asked again: say yes or no. Nothing ran; decide again.'
    """
    return f"{_NOTE_START}{short_reason(error).rstrip('.')}. Nothing ran; decide again."


def _split(text: str, refused: bool) -> tuple[list[str], str]:
    """``(first lines, the rest)`` of a description: the refusal note's line when ``refused``
    (and the description starts with it), and the text after the blank line that follows."""
    if refused and text.startswith(_NOTE_START):
        first, _, rest = text.partition("\n\n")
        return [first], rest
    return [], text


def with_notes(value: InterruptValue, notes: Sequence[str]) -> InterruptValue:
    """``value`` with ``notes`` (an approval policy's state: its deadline, who may approve,
    the approvals in) as the first paragraphs of both descriptions, after the refusal note if
    any, so a UI that shows only the description's start shows them.

    Example:
        >>> v = pause_value("ok", {}, tool_call=None, name="ok", args={}, description="Pay?")
        >>> with_notes(v, ["Expires at 10:00 UTC."])["description"]
        'Expires at 10:00 UTC.\\n\\nPay?'
    """
    out = value.copy()
    if not notes:
        return out
    refused = bool(value["error"])

    def noted(text: str) -> str:
        first, rest = _split(text, refused)
        return "\n\n".join([*first, *notes, rest])  # paragraphs: the UIs render Markdown

    out["description"] = noted(value["description"])
    out["action_requests"] = [
        a | {"description": noted(a["description"])} for a in value["action_requests"]
    ]
    return out


def first_asked(value: JSONMapping) -> JSONObject:
    """A re-asked pause's value as it was first asked: ``error`` ``None`` and the descriptions
    without their :func:`refusal_note` (to check that the same approval is asked again)."""
    if not value.get("error"):
        return dict(value)

    def plain(text: object) -> object:
        if not isinstance(text, str):
            return text
        first, rest = _split(text, True)
        return rest if first else text

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


def _node_id(pending: Interrupt) -> str | None:
    return interrupt_fields(pending).node_id


def describe_pending(interrupts: Sequence[Interrupt]) -> str:
    """``"'approve_a' (id 1f2e…), 'approve_b' (id 9c0d…)"``: what is pending, for messages."""
    return ", ".join(f"{_node_id(i)!r} (interrupt id {i.id})" for i in interrupts) or "nothing"
