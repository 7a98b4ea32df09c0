"""Approve / edit / reject / respond to a tool call, in the formats approval UIs already use.

``require_approval(tool)`` wraps a tool so that every call pauses first. The interrupt value
is LangChain's per-call ``tool_approval`` request (``type``, ``tool_call_id``, ``name``,
``args``, ``description``) with a ``response_schema`` listing the allowed decisions, plus
Agent Inbox's ``action_request`` / ``config`` and this package's ``node_id`` / ``payload`` /
``tool_call`` keys, so LangChain clients, Agent Inbox, Studio and ``ReActAgent`` all read it.

Decisions accepted (LangChain's, then Agent Inbox's ``HumanResponse``, alone or in a list):

================================  ==========================================================
``{"type": "approve"}``           run the call as the model asked (Inbox: ``accept``)
``{"type": "edit", ...}``         run it with the edited arguments (LangChain:
                                  ``edited_action={"name", "args"}``; Inbox:
                                  ``args={"action", "args"}``)
``{"type": "reject", ...}``       do not run it; the model is told, with ``message`` if given
                                  (Inbox: ``ignore``)
``{"type": "respond", ...}``      do not run it; ``message`` is the tool's result
                                  (Inbox: ``response`` with ``args`` the text)
================================  ==========================================================
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Literal, NotRequired, Union, cast

from langgraph.types import interrupt as lg_interrupt
from pydantic import Discriminator, TypeAdapter
from typing_extensions import TypedDict

from dynavec_langgraph.interrupt import current_tool_call
from dynavec_langgraph.tools import AgentTool, as_tools

__all__ = ["ApprovalDecision", "DecisionType", "normalize_decision", "require_approval"]

DecisionType = Literal["approve", "edit", "reject", "respond"]
_INBOX = {"accept": "approve", "edit": "edit", "ignore": "reject", "response": "respond"}


class _Approve(TypedDict):
    type: Literal["approve"]


class _EditedAction(TypedDict):
    name: str
    args: dict[str, Any]


class _Edit(TypedDict):
    type: Literal["edit"]
    edited_action: _EditedAction


class _Reject(TypedDict):
    type: Literal["reject"]
    message: NotRequired[str]


class _Respond(TypedDict):
    type: Literal["respond"]
    message: str


class _InboxAction(TypedDict):
    action: str
    args: dict[str, Any]


class _InboxAccept(TypedDict):
    type: Literal["accept"]
    args: NotRequired[Any]


class _InboxIgnore(TypedDict):
    type: Literal["ignore"]
    args: NotRequired[Any]


class _InboxEdit(TypedDict):
    type: Literal["edit"]
    args: _InboxAction


class _InboxResponse(TypedDict):
    type: Literal["response"]
    args: str


_LangChainDecision = Annotated[
    Union[_Approve, _Edit, _Reject, _Respond], Discriminator("type")  # noqa: UP007
]
_InboxDecision = Union[_InboxAccept, _InboxIgnore, _InboxEdit, _InboxResponse]  # noqa: UP007
ApprovalDecision = Union[_LangChainDecision, _InboxDecision, list[_InboxDecision]]  # noqa: UP007
"""Every decision shape :func:`require_approval` accepts (its interrupt's response_schema)."""


_BY_KIND: dict[str, tuple[Any, Any]] = {
    "approve": (_Approve, _InboxAccept),
    "edit": (_Edit, _InboxEdit),
    "reject": (_Reject, _InboxIgnore),
    "respond": (_Respond, _InboxResponse),
}


def _schema(allowed: Sequence[DecisionType]) -> Any:
    """The response_schema for ``allowed``: LangGraph refuses anything else before saving."""
    ours = tuple(_BY_KIND[k][0] for k in allowed)
    inbox = tuple(_BY_KIND[k][1] for k in allowed)
    return Union[(*ours, *inbox, list[Union[inbox]])]  # type: ignore[valid-type]  # noqa: UP007


def normalize_decision(decision: Any, tool_name: str) -> tuple[DecisionType, Any]:
    """``(kind, detail)``: the edited args for ``edit``, the message for ``reject``/``respond``.

    Raises:
        ValueError: an Agent Inbox list that is not exactly one response, or an edit naming
            another tool.
    """
    if isinstance(decision, list):
        if len(decision) != 1:
            raise ValueError(f"expected one Agent Inbox response, got {len(decision)}")
        decision = decision[0]
    kind = decision["type"]
    if "edited_action" in decision or (kind == "edit" and "action" in decision.get("args", {})):
        action = decision.get("edited_action") or {
            "name": decision["args"]["action"],
            "args": decision["args"]["args"],
        }
        if action["name"] != tool_name:
            raise ValueError(f"an edit may change {tool_name!r}'s arguments, not the tool")
        return "edit", dict(action["args"])
    if kind in ("approve", "accept"):
        return "approve", None
    if kind == "respond":
        return "respond", decision["message"]
    if kind == "response":
        return "respond", decision["args"]
    if kind == "ignore":
        return "reject", None
    return "reject", decision.get("message")


def _request(
    tool: AgentTool,
    args: dict[str, Any],
    allowed: Sequence[DecisionType],
    description: str,
    node_id: str,
) -> dict[str, Any]:
    call = current_tool_call() or {"id": "", "name": tool.name, "args": args}
    return {
        "type": "tool_approval",
        "tool_call_id": call["id"],
        "name": tool.name,
        "args": args,
        "description": description,
        "allowed_decisions": list(allowed),
        "action_request": {"action": tool.name, "args": args},
        "config": {
            "allow_accept": "approve" in allowed,
            "allow_edit": "edit" in allowed,
            "allow_ignore": "reject" in allowed,
            "allow_respond": "respond" in allowed,
        },
        "node_id": node_id,
        "payload": {"name": tool.name, "args": args, "description": description},
        "tool_call": call,
    }


def require_approval(
    tool: Any,
    *,
    allowed: Sequence[DecisionType] = ("approve", "edit", "reject", "respond"),
    description: str | None = None,
    node_id: str | None = None,
) -> AgentTool:
    """Wrap ``tool`` so each call waits for a person to approve, edit, reject or respond.

    Args:
        tool: an ``@tool``, a function, a LangChain tool or a dynavec-style tool.
        allowed: the decisions the reviewer may give; others are refused (the thread stays
            paused and can be answered again).
        description: shown to the reviewer; defaults to the tool name and arguments.
        node_id: the interrupt's node id; defaults to ``"approve_<tool name>"``.

    Example:
        >>> from dynavec_langgraph import tool
        >>> @tool
        ... def send_email(to: str, body: str) -> str:
        ...     return f"sent to {to}"
        >>> gated = require_approval(send_email, allowed=("approve", "reject"))
        >>> gated.name
        'send_email'
    """
    (inner,) = as_tools([tool])
    unknown = set(allowed) - {"approve", "edit", "reject", "respond"}
    if unknown or not allowed:
        raise ValueError(f"allowed={allowed!r}: use some of approve, edit, reject, respond")
    point = node_id or f"approve_{inner.name}"
    schema = _schema(allowed)
    adapter: TypeAdapter[Any] = TypeAdapter(schema)

    def _decide(args: dict[str, Any]) -> tuple[DecisionType, Any]:
        text = description or f"{inner.name}({', '.join(f'{k}={v!r}' for k, v in args.items())})"
        answer = lg_interrupt(
            _request(inner, args, allowed, text, point),
            response_schema=cast(type[Any], schema),
        )
        kind, detail = normalize_decision(adapter.validate_python(answer), inner.name)
        return kind, detail

    def _outcome(kind: DecisionType, detail: Any) -> str:
        if kind == "respond":
            return str(detail)
        if detail:
            return f"User rejected the tool call for `{inner.name}` with reason: {detail}"
        return (
            f"User rejected the tool call for `{inner.name}`. The tool was not executed. "
            "Do not retry this tool call unless the user explicitly requests it."
        )

    def gated(**kwargs: Any) -> str:
        kind, detail = _decide(kwargs)
        if kind in ("approve", "edit"):
            return inner.execute(detail if kind == "edit" else kwargs)
        return _outcome(kind, detail)

    async def agated(**kwargs: Any) -> str:
        kind, detail = _decide(kwargs)
        if kind in ("approve", "edit"):
            return await inner.aexecute(detail if kind == "edit" else kwargs)
        return _outcome(kind, detail)

    return AgentTool(
        name=inner.name,
        description=inner.description,
        parameters=inner.parameters,
        func=gated,
        coroutine=agated,
        tags=inner.tags,
    )
