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

Decisions are read in each approval UI's format: LangChain 1.0's ``{"decisions": [...]}``, a
LangChain per-call decision ``{"type": "approve" | "edit" | "reject" | "respond", ...}``, Agent
Inbox's ``[{"type": "accept" | "edit" | "ignore" | "response", "args": ...}]``; anything else is a
plain value. A decision that cannot be read, or that the ``response_schema`` refuses, never fails
the run: the same approval is asked again (a new interrupt, with ``error`` set) and nothing runs.

A ``Command(resume=...)`` that reaches a thread of this package's graph with nothing to answer
(a late answer) warns :class:`UnappliedResumeWarning`, or raises LangGraph's
``UnknownInterruptError`` under strict resume (docs/human-in-the-loop.md).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, overload

from langgraph.config import get_config
from pydantic import TypeAdapter
from typing_extensions import TypeVar

from dynavec_langgraph._errors import (
    InterruptCallError,
    InvalidDecisionError,
    InvalidOptionError,
    UnappliedResumeWarning,
    interrupt_call_text,
)
from dynavec_langgraph._pauses.ask import ask, current_tool_call
from dynavec_langgraph._pauses.decisions import (
    Rejected,
    allowed_decision,
    any_decision_schema,
    plain_decision,
    read_decision,
    resume_command,
)
from dynavec_langgraph._pauses.digest import (
    bind_decision,
    compute_review_digest,
    decision_digest,
    review_digest,
)
from dynavec_langgraph._pauses.policy.ask import rules_for
from dynavec_langgraph._pauses.policy.scope import check_declared, checked_options, policy_for
from dynavec_langgraph._pauses.policy.spec import EXPIRE, ApprovalPolicy
from dynavec_langgraph._pauses.value import (
    ALL_DECISIONS,
    DecisionKind,
    InterruptValue,
    ToolCallRef,
    describe_pending,
    first_asked,
    pause_value,
    refusal_note,
)
from dynavec_langgraph._storable import lone_surrogate
from dynavec_langgraph._types import ToolArgs, TypeAnnotation, UserPayload

if TYPE_CHECKING:
    from dynavec_langgraph._types import ApproversOption

__all__ = [
    "InterruptValue",
    "Rejected",
    "ToolCallRef",
    "UnappliedResumeWarning",
    "bind_decision",
    "compute_review_digest",
    "decision_digest",
    "describe_pending",
    "first_asked",
    "interrupt",
    "pause_value",
    "refusal_note",
    "resume_command",
    "review_digest",
]

T = TypeVar("T", default=UserPayload)
"""What ``interrupt`` returns: the ``response_schema``'s type, else the decision as given."""


def _check_call(node_id: object, payload: object) -> None:
    """Refuse a node id or payload that cannot be stored, before anything is saved.

    Raises:
        InterruptCallError: naming what is wrong (also a ``TypeError``).
    """
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


@contextmanager
def _options_of(node_id: str) -> Iterator[None]:
    """An option of ``interrupt(node_id, ...)`` that cannot be used: an error in the tool,
    raised to the developer with what happened to the run (:func:`interrupt_call_text`).

    Raises:
        InvalidOptionError: naming the option.
    """
    try:
        yield
    except InvalidOptionError as error:
        raise InvalidOptionError(interrupt_call_text(node_id, str(error)), error.option) from None


@overload
def interrupt(
    node_id: str,
    payload: UserPayload = None,
    *,
    response_schema: type[T] | None = None,
    allowed: Sequence[DecisionKind] = ...,
    policy: ApprovalPolicy | None = ...,
    expires_in: timedelta | float | None = ...,
    expires_at: datetime | str | None = ...,
    on_expire: UserPayload = ...,
    approvers: ApproversOption = ...,
    approvals_required: int | None = ...,
) -> T: ...
@overload
def interrupt(thread_id: str, node_id: str, payload: UserPayload, /) -> UserPayload: ...
def interrupt(
    node_id: str,
    payload: UserPayload = None,
    *v1: UserPayload,
    response_schema: TypeAnnotation | None = None,
    allowed: Sequence[DecisionKind] = ALL_DECISIONS,
    policy: ApprovalPolicy | None = None,
    expires_in: timedelta | float | None = None,
    expires_at: datetime | str | None = None,
    on_expire: UserPayload = None,
    approvers: ApproversOption = None,
    approvals_required: int | None = None,
) -> UserPayload:
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
        approvers: names / ``"role:NAME"`` / ``"permission:NAME"`` entries, or
            ``rule(approver, pause_value)``.
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
        InvalidOptionError: an approval option that cannot be used (``expires_in="soon"``,
            ``approvals_required=0``, ``approvers=[]``, ...; alone or with the agent's
            ``approval_policy=`` for ``node_id``), or a ``node_id`` that a tool declaring
            ``asks=`` did not declare: raised to the caller as ``InterruptCallError`` is,
            before the pause (docs/errors.md).
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
    given = {"expires_in": expires_in, "expires_at": expires_at, "on_expire": on_expire}
    given.update(approvers=approvers, approvals_required=approvals_required)
    with _options_of(node_id):
        check_declared(node_id)  # a tool that declares asks= asks only those
        checked_options(given, policy)  # before the pause: the agent's policy comes below
    try:
        get_config()
    except RuntimeError:
        from dynavec_langgraph.exceptions import NodeInterrupt  # imports errors, as we do

        raise NodeInterrupt(thread_id, node_id, payload) from None
    call = current_tool_call()
    wrapped = not isinstance(payload, dict)
    args: ToolArgs = {"payload": payload} if wrapped else dict(payload)
    where = f" in {call['name']}" if call else ""
    description = f"{node_id}{where}: {json.dumps(payload, ensure_ascii=False)}"
    adapter: TypeAdapter[UserPayload] | None = None
    schema = any_decision_schema(node_id)
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

    def accept(raw: UserPayload) -> UserPayload:
        decision = read_decision(raw, node_id)
        if decision is not None:
            decision = allowed_decision(decision, raw, kinds, repr(node_id))
        value = raw if decision is None else plain_decision(decision, wrapped)
        if value is None:
            raise InvalidDecisionError("None is no decision: answer with a value")
        return value if adapter is None else adapter.validate_python(value)

    with _options_of(node_id):  # with the agent's approval_policy= for this node
        chosen = policy_for(node_id, given, policy)
        if chosen is not None and chosen.clock is not None:
            chosen.now()  # its clock returns an aware time

    def expired(chosen: ApprovalPolicy, _: str) -> UserPayload:
        value = "rejected" if chosen.on_expire == EXPIRE else chosen.on_expire
        try:
            return accept(value)
        except ValueError:
            return value

    rules = rules_for(
        chosen,
        node_id,
        is_approval=lambda value: bool(value == "approved"),
        on_expired=expired,
        tool_call_id=call["id"] if call else None,
    )
    return ask(build, schema, accept, rules)
