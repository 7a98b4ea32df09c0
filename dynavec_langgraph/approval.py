"""Approve / edit / reject / respond to a tool call, from the approval UIs people use.

``require_approval(tool)`` wraps a tool so that every call pauses first. The pause is the
package's one :class:`~dynavec_langgraph.interrupt.InterruptValue` (LangChain 1.0's HITL
request, LangChain's per-call ``tool_approval`` keys, Agent Inbox's ``action_request`` /
``config`` / ``description``, dynavec's ``node_id`` / ``payload`` / ``tool_call``) with a
``response_schema`` listing the decisions allowed.

Decisions accepted (read by :func:`~dynavec_langgraph.interrupt.read_decision`): LangChain 1.0's
``{"decisions": [one decision]}``, one per-call decision, Agent Inbox's ``HumanResponse`` list,
and the plain values ``"approved"`` / ``"rejected"``:

================================  ==========================================================
``{"type": "approve"}``           run the call as the model asked (Inbox: ``accept``;
                                  plain: ``"approved"``)
``{"type": "edit", ...}``         run it with the edited arguments (LangChain:
                                  ``edited_action={"name", "args"}``; Inbox:
                                  ``args={"action", "args"}``)
``{"type": "reject", ...}``       do not run it; the model is told, with ``message`` if given
                                  (Inbox: ``ignore``; plain: ``"rejected"``)
``{"type": "respond", ...}``      do not run it; ``message`` is the tool's result
                                  (Inbox: ``response`` with ``args`` the text)
================================  ==========================================================

Anything else, or a decision not in ``allowed``, asks the same approval again with the reason in
the new interrupt's ``error``; the call does not run.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, Union

from pydantic import TypeAdapter

from dynavec_langgraph._errors import InvalidDecisionError
from dynavec_langgraph._tools import AgentTool, as_tools
from dynavec_langgraph.interrupt import (
    ALL_DECISIONS,
    Decision,
    DecisionKind,
    InterruptValue,
    ask,
    current_tool_call,
    decision_schema,
    pause_value,
    read_decision,
)

__all__ = ["ApprovalDecision", "DecisionType", "normalize_decision", "require_approval"]

DecisionType = DecisionKind
"""LangChain's name for :data:`~dynavec_langgraph.interrupt.DecisionKind`."""
ApprovalDecision = decision_schema(ALL_DECISIONS)
"""Every decision shape :func:`require_approval` accepts (beside ``"approved"``/``"rejected"``)."""

_PLAIN: dict[Any, DecisionKind] = {"approved": "approve", "rejected": "reject"}


def _read(raw: Any, tool_name: str, allowed: Sequence[DecisionKind]) -> Decision:
    decision = read_decision(raw, tool_name)
    if decision is None:
        kind = _PLAIN.get(raw) if isinstance(raw, str) else None
        if kind is None:
            raise InvalidDecisionError(
                f"{raw!r} is no decision on {tool_name!r}: answer 'approved' / 'rejected' or "
                "an approval UI's decision (approve, edit, reject, respond)"
            )
        decision = Decision(kind)
    if decision.kind not in allowed:
        raise InvalidDecisionError(
            f"{decision.kind!r} is not allowed for {tool_name!r}; allowed: {', '.join(allowed)}"
        )
    return decision


def normalize_decision(decision: Any, tool_name: str) -> tuple[DecisionType, Any]:
    """``(kind, detail)``: the edited args for ``edit``, the message for ``reject``/``respond``.

    Raises:
        InvalidDecisionError: not a decision (a ``ValueError``).
        pydantic.ValidationError: a UI decision whose fields do not fit its format.

    Example:
        >>> normalize_decision([{"type": "response", "args": "no"}], "send")
        ('respond', 'no')
    """
    read = _read(decision, tool_name, ALL_DECISIONS)
    return read.kind, read.args if read.kind == "edit" else read.message


def require_approval(
    tool: Any,
    *,
    allowed: Sequence[DecisionType] = ALL_DECISIONS,
    description: str | None = None,
    node_id: str | None = None,
) -> AgentTool:
    """Wrap ``tool`` so each call waits for a person to approve, edit, reject or respond.

    Args:
        tool: an ``@tool``, a function, a LangChain tool or a dynavec-style tool.
        allowed: the decisions the reviewer may give; others ask the same approval again
            (the thread stays paused, the call does not run).
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
    unknown = set(allowed) - set(ALL_DECISIONS)
    if unknown or not allowed:
        raise ValueError(f"allowed={allowed!r}: use some of approve, edit, reject, respond")
    kinds = [k for k in ALL_DECISIONS if k in allowed]
    point = node_id or f"approve_{inner.name}"
    plain = tuple(word for word, kind in _PLAIN.items() if kind in kinds)
    shapes: Any = decision_schema(kinds)
    if plain:
        shapes = Union[shapes, Literal[plain]]  # noqa: UP007
    schema = TypeAdapter[Any](shapes).json_schema()

    def _decide(args: dict[str, Any]) -> Decision:
        text = description or f"{inner.name}({', '.join(f'{k}={v!r}' for k, v in args.items())})"
        call = current_tool_call() or {"id": "", "name": inner.name, "args": args}

        def build(error: str | None) -> InterruptValue:
            payload = {"name": inner.name, "args": args, "description": text}
            return pause_value(
                point,
                payload,
                tool_call=call,
                name=inner.name,
                args=args,
                description=text,
                allowed=kinds,
                error=error,
            )

        return ask(build, schema, lambda raw: _read(raw, inner.name, kinds))

    def _outcome(decision: Decision) -> str:
        if decision.kind == "respond":
            return str(decision.message)
        if decision.message:
            return f"User rejected the tool call for `{inner.name}` with reason: {decision.message}"
        return (
            f"User rejected the tool call for `{inner.name}`. The tool was not executed. "
            "Do not retry this tool call unless the user explicitly requests it."
        )

    def gated(**kwargs: Any) -> str:
        decision = _decide(kwargs)
        if decision.kind in ("approve", "edit"):
            return inner.execute(decision.args if decision.args is not None else kwargs)
        return _outcome(decision)

    async def agated(**kwargs: Any) -> str:
        decision = _decide(kwargs)
        if decision.kind in ("approve", "edit"):
            return await inner.aexecute(decision.args if decision.args is not None else kwargs)
        return _outcome(decision)

    return AgentTool(
        name=inner.name,
        description=inner.description,
        parameters=inner.parameters,
        func=gated,
        coroutine=agated,
        tags=inner.tags,
        metadata=inner.metadata,  # its on_crash policy (docs/exactly-once.md)
    )
