"""``require_approval(tool)``: the wrapper that pauses each call of a tool for a person's
decision (the formats it reads are listed in :mod:`dynavec_langgraph.approval`, its public face).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Literal, Union

from pydantic import TypeAdapter

from dynavec_langgraph._errors import (
    InvalidDecisionError,
    InvalidOptionError,
    option_text,
)
from dynavec_langgraph._names import APPROVAL_POINT_KEY
from dynavec_langgraph._pauses.ask import ask, current_tool_call
from dynavec_langgraph._pauses.decisions import (
    Decision,
    allowed_decision,
    decision_schema,
    explain_refusal,
    read_answer,
)
from dynavec_langgraph._pauses.policy.ask import rules_for
from dynavec_langgraph._pauses.policy.scope import ApprovalPoint, checked_options, policy_for
from dynavec_langgraph._pauses.policy.spec import EXPIRE, ApprovalPolicy
from dynavec_langgraph._pauses.signed_in import needs_worker_thread
from dynavec_langgraph._pauses.value import ALL_DECISIONS, DecisionKind, InterruptValue, pause_value
from dynavec_langgraph._tools.adapters import as_tools
from dynavec_langgraph._tools.agent_tool import AgentTool
from dynavec_langgraph._types import JSONObject, UserPayload

if TYPE_CHECKING:
    from dynavec_langgraph._types import ApproversOption, ToolOption

__all__ = [
    "EDIT_NOTICE",
    "ApprovalDecision",
    "DecisionType",
    "edit_notice",
    "normalize_decision",
    "require_approval",
]

DecisionType = DecisionKind
"""LangChain's name for :data:`~dynavec_langgraph._pauses.value.DecisionKind`."""
ApprovalDecision = decision_schema(ALL_DECISIONS)
"""Every decision shape :func:`require_approval` accepts (beside ``"approved"``/``"rejected"``)."""

_PLAIN: dict[str, DecisionKind] = {"approved": "approve", "rejected": "reject"}

EDIT_NOTICE = (
    "Note: a human reviewer replaced this tool call before it ran. The call recorded in "
    "your message is the one you produced, not the one that executed. This was "
    "intentional and authorized. Do not re-issue your original call."
)
"""What the model is told before the result of a call a reviewer edited: LangChain's
``HumanInTheLoopMiddleware`` default ``edit_notice`` (langchain 1.5.2), pinned by
tests/test_approval_ui_gaps.py."""


def edit_notice(name: str, args: JSONObject, result: str) -> str:
    """The result of an edited call as the model sees it: :data:`EDIT_NOTICE`, the call that
    ran, then the tool's answer.

    Mirrors ``HumanInTheLoopMiddleware._notice`` and ``_prepend_notice`` (string content) of
    langchain 1.5.2, so a model reads the same text from either; pinned by a test that runs
    the middleware.

    Example:
        >>> edit_notice("send", {"to": "b"}, "sent").splitlines()[-2:]
        ['Tool response:', 'sent']
    """
    notice = (
        f"{EDIT_NOTICE} Executed instead: {name} with arguments {json.dumps(args, default=str)}."
    )
    if not result:
        return notice
    return f"{notice}\n\nTool response:\n{result}"


def _check_edit(tool: AgentTool, args: JSONObject) -> None:
    """Refuse edited arguments the tool cannot take, so the same approval is asked again
    instead of the call failing with a tool error.

    An argument the tool does not take is refused too: the model's calls drop such keys
    (dynavec's binding rules), so the call would not run as the reviewer wrote it while the
    model is told it did.

    Raises:
        InvalidDecisionError: naming what is wrong (the tool's own argument check).
    """
    unknown = tool._unknown_arguments(args)
    if unknown:
        takes = ", ".join(_taken(tool)) or "no arguments"
        raise InvalidDecisionError(
            f"the edited arguments do not fit {tool.name!r}: it does not take "
            f"{', '.join(repr(k) for k in unknown)} (it takes {takes}); edit them again "
            "without it"
        )
    try:
        tool._prepare(args, None)
    except (ValueError, TypeError) as error:
        why = explain_refusal(error) if isinstance(error, ValueError) else str(error)
        raise InvalidDecisionError(
            f"the edited arguments do not fit {tool.name!r} ({why}); edit them again"
        ) from None


def _taken(tool: AgentTool) -> list[str]:
    """The arguments ``tool`` takes, as its schema names them."""
    properties = tool.parameters.get("properties")
    return [str(k) for k in properties] if isinstance(properties, dict) else []


def _read(raw: UserPayload, tool_name: str, allowed: Sequence[DecisionKind]) -> Decision:
    what = (
        f"decision on {tool_name!r}: answer 'approved' / 'rejected' or an approval UI's "
        "decision (approve, edit, reject, respond)"
    )
    decision = read_answer(raw, tool_name, _PLAIN, what)
    return allowed_decision(decision, raw, allowed, repr(tool_name))


@dataclass(frozen=True)
class _Expired(Decision):
    """The decision an expired approval settles to (its ``message`` says when it expired)."""


def _check_on_expire(value: UserPayload, tool_name: str) -> None:
    """``on_expire`` of a ``require_approval`` tool: ``"raise"`` or a decision on the call.

    Raises:
        InvalidOptionError: a value that is no decision (``"maybe"``).
    """
    if value == EXPIRE:
        return
    try:
        _read(value, tool_name, ALL_DECISIONS)
    except ValueError:  # InvalidDecisionError, or a UI decision whose fields do not fit
        raise InvalidOptionError(
            option_text(
                "on_expire",
                value,
                f"an expired approval of {tool_name!r} needs a decision: pass 'rejected' (the "
                "default), 'approved', an approval UI's decision such as {'type': 'reject', "
                "'message': '...'}, or 'raise' (rejected, and the doors raise "
                "ApprovalTimeoutError)",
            ),
            "on_expire",
        ) from None


def normalize_decision(decision: UserPayload, tool_name: str) -> tuple[DecisionType, Any]:
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
    tool: ToolOption,
    *,
    allowed: Sequence[DecisionType] = ALL_DECISIONS,
    description: str | None = None,
    node_id: str | None = None,
    policy: ApprovalPolicy | None = None,
    expires_in: timedelta | float | None = None,
    expires_at: datetime | str | None = None,
    on_expire: Any = None,
    approvers: ApproversOption = None,
    approvals_required: int | None = None,
) -> AgentTool:
    """Wrap ``tool`` so each call waits for a person to approve, edit, reject or respond.

    Args:
        tool: an ``@tool``, a function, a LangChain tool or a dynavec-style tool.
        allowed: the decisions the reviewer may give; others ask the same approval again
            (the thread stays paused, the call does not run).
        description: shown to the reviewer; defaults to the tool name and arguments.
        node_id: the interrupt's node id; defaults to ``"approve_<tool name>"``.
        policy: an :class:`ApprovalPolicy`; the options below override its fields (and the
            agent's ``approval_policy=``); see docs/approvals-in-production.md.
        expires_in: a duration (``timedelta`` or seconds): after it the call is not run.
        expires_at: a deadline (aware ``datetime`` or ISO 8601).
        on_expire: the decision an expired approval means (default a rejection), or
            ``"raise"`` (rejected, and the package's doors raise ``ApprovalTimeoutError``).
        approvers: who may approve: names / ``"role:NAME"`` / ``"permission:NAME"`` entries
            or ``rule(approver, pause_value) -> bool``. On a LangGraph API server with auth
            the signed-in user is the approver (docs/approvals-in-production.md).
        approvals_required: distinct approvers needed before the call runs; any rejection
            rejects (an edit is refused when more than one is needed).

    Raises:
        InvalidOptionError: an option that cannot be used, refused here rather than when the
            call pauses: ``expires_in`` that is no positive duration of at most 100 years,
            ``expires_at`` that is no aware time, ``on_expire`` that is no decision,
            ``approvals_required`` that is no whole number >= 1 or above the approvers named,
            ``approvers`` that is no list of names / ``"role:NAME"`` entries nor a callable
            (docs/errors.md). The agent's ``approval_policy=`` for this tool is checked with
            these options when the agent is built.

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
    given = {"expires_in": expires_in, "expires_at": expires_at, "on_expire": on_expire}
    given.update(approvers=approvers, approvals_required=approvals_required)
    _check_on_expire(checked_options(given, policy).on_expire, inner.name)  # checked now

    def check_agent_policy(agent_policy: ApprovalPolicy) -> None:
        """The agent's ``approval_policy=`` for this point, under this tool's options."""
        if policy is not None:  # the tool's own policy= wins over the agent's (policy_for)
            return
        _check_on_expire(checked_options(given, agent_policy).on_expire, inner.name)

    plain = tuple(word for word, kind in _PLAIN.items() if kind in kinds)
    shapes: Any = decision_schema(kinds)
    if plain:
        shapes = Union[shapes, Literal[plain]]  # noqa: UP007
    schema = TypeAdapter[Any](shapes).json_schema()

    def _decide(args: JSONObject) -> Decision:
        text = description or f"{inner.name}({', '.join(f'{k}={v!r}' for k, v in args.items())})"
        call = current_tool_call() or {"id": "", "name": inner.name, "args": args}
        chosen = policy_for(point, given, policy)
        several = 1 if chosen is None else chosen.approvals_required  # approvals needed
        # an edit is refused when several approve: no Edit button (the UIs read the
        # allowed decisions from the value)
        offered = [k for k in kinds if k != "edit"] if several > 1 and len(kinds) > 1 else kinds

        def build(error: str | None) -> InterruptValue:
            payload = {"name": inner.name, "args": args, "description": text}
            return pause_value(
                point,
                payload,
                tool_call=call,
                name=inner.name,
                args=args,
                description=text,
                allowed=offered,
                error=error,
            )

        def accept(raw: UserPayload) -> Decision:
            decision = _read(raw, inner.name, kinds)
            if decision.kind == "edit" and decision.args is not None:
                _check_edit(inner, decision.args)
            if decision.kind == "edit" and several > 1:
                raise InvalidDecisionError(
                    f"an edit cannot be approved by {several} approvers: "
                    "approve or reject the call as it is"
                )
            return decision

        def expired(chosen: ApprovalPolicy, reason: str) -> Decision:
            if chosen.on_expire in (EXPIRE, "rejected"):
                return _Expired("reject", message=reason)
            return _read(chosen.on_expire, inner.name, ALL_DECISIONS)

        rules = rules_for(
            chosen,
            point,
            is_approval=lambda decision: decision.kind == "approve",
            on_expired=expired,
            tool_call_id=call["id"] or None,
        )
        return ask(build, schema, accept, rules)

    def _outcome(decision: Decision) -> str:
        if isinstance(decision, _Expired):
            return (
                f"The approval of the tool call for `{inner.name}` expired: {decision.message} "
                "(no decision in time). The tool was not executed."
            )
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
        if decision.kind == "edit" and decision.args is not None:
            return edit_notice(inner.name, decision.args, inner.execute(decision.args))
        if decision.kind in ("approve", "edit"):
            return inner.execute(kwargs)
        return _outcome(decision)

    async def agated(**kwargs: Any) -> str:
        if needs_worker_thread():  # the signed-in user is bound in the store, read in a thread
            decision = await asyncio.to_thread(_decide, kwargs)
        else:
            decision = _decide(kwargs)
        if decision.kind == "edit" and decision.args is not None:
            result = await inner.aexecute(decision.args)
            return edit_notice(inner.name, decision.args, result)
        if decision.kind in ("approve", "edit"):
            return await inner.aexecute(kwargs)
        return _outcome(decision)

    return AgentTool(
        name=inner.name,
        description=inner.description,
        parameters=inner.parameters,
        func=gated,
        coroutine=agated,
        tags=inner.tags,
        metadata={  # its on_crash policy (docs/exactly-once.md), and what it asks
            **(inner.metadata or {}),
            APPROVAL_POINT_KEY: ApprovalPoint(point, check_agent_policy),
        },
    )
