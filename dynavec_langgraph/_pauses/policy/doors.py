"""What the doors check before and after resuming a pause with a policy: the approver they send,
the refusals, the expired pauses."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from langgraph.types import Interrupt

from dynavec_langgraph._errors import (
    ApproverMismatchError,
    ApproverRefusedError,
    ApproverRequiredError,
)
from dynavec_langgraph._pauses.policy.answers import (
    approver_decision,
    expiry_answer,
    may_approve,
    named_approver,
)
from dynavec_langgraph._pauses.policy.spec import PERMISSION, ApprovalPolicy, Approver

__all__ = [
    "agent_clock",
    "approval_recorded",
    "approver_required",
    "expired_pauses",
    "expiry_command",
    "refuse_approver",
    "sign_resume",
]


def _approval(item: Any) -> Mapping[str, Any] | None:
    value = item.value if isinstance(item, Interrupt) else item
    state = value.get("approval") if isinstance(value, Mapping) else None
    return state if isinstance(state, Mapping) else None


def sign_resume(
    interrupts: Sequence[Interrupt], resume: Mapping[str, Any], approver: Approver | None
) -> dict[str, Any]:
    """``{interrupt_id: decision}`` with each decision for a pause with a policy wrapped with
    ``approver`` (:func:`approver_decision`); a name list the pause shows is checked first.

    Raises:
        ApproverRefusedError: ``approver`` is not among the pause's approvers, or already
            approved it; nothing was sent.
    """
    if approver is None:
        return dict(resume)
    who = named_approver(approver)
    by_id = {i.id: i for i in interrupts}
    out: dict[str, Any] = {}
    for key, decision in resume.items():
        pending = by_id.get(key)
        state = _approval(pending) if pending is not None else None
        if state is None or pending is None:
            out[key] = decision
            continue
        node = pending.value.get("node_id")
        rule = state.get("approvers")
        if (
            isinstance(rule, list)
            and not any(str(r).startswith(PERMISSION) for r in rule)  # the server knows them
            and not may_approve(rule, who, pending.value)
        ):
            raise ApproverRefusedError(node, who["name"], "is not among its approvers")
        if who["name"] in (state.get("approved_by") or []):
            raise ApproverRefusedError(node, who["name"], "already approved it")
        out[key] = approver_decision(decision, approver)
    return out


def refuse_approver(before: Sequence[Interrupt], after: Sequence[Interrupt]) -> None:
    """After a resume: a pause asked again because the approver was refused.

    Raises:
        ApproverRefusedError: nothing ran; the thread is still paused at the same approval.
    """
    seen = {i.id for i in before}
    for item in after:
        state = _approval(item)
        if item.id not in seen and state is not None and state.get("refused_approver"):
            node, name = item.value.get("node_id"), str(state["refused_approver"])
            if state.get("claimed_approver"):  # a signed-in user answering as another
                raise ApproverMismatchError(node, name, str(state["claimed_approver"]))
            error = ApproverRefusedError(node, name, str(item.value["error"]))
            error.recorded = True  # the paused tool refused it: its audit trail has it
            raise error


def approver_required(
    before: Sequence[Interrupt], after: Sequence[Interrupt]
) -> ApproverRequiredError | None:
    """After a resume: the error of a pause asked again because the answer named no approver
    and its policy needs one (``approval.approver_required``), or ``None``. Read after
    :func:`approval_recorded` (a replayed answer's refusal is no refusal of this one)."""
    seen = {i.id for i in before}
    for item in after:
        state = _approval(item)
        if item.id not in seen and state is not None and state.get("approver_required"):
            return ApproverRequiredError(item.value.get("node_id"), str(item.value["error"]))
    return None


def approval_recorded(before: Sequence[Interrupt], after: Sequence[Interrupt]) -> bool:
    """After a resume: a pause with a policy whose ``approval.approved_by`` grew, i.e. the
    answer was counted as one approval of several.

    An ``error`` on that re-asked pause then comes from an older answer LangGraph replayed, not
    from this one: an unkeyed resume (``Command(resume=value)``, what the Agent Chat UI template
    sends) stays in the checkpoint's pending writes until the step ends, and each later run
    hands it to the tool's next unanswered ask (measured with langgraph 1.2 through
    ``langgraph dev``, pinned by tests/test_approval_ui_policies.py).
    """

    def counts(items: Sequence[Interrupt]) -> dict[tuple[Any, Any], int]:
        out: dict[tuple[Any, Any], int] = {}
        for item in items:
            state = _approval(item)
            if state is not None and isinstance(item.value, Mapping):
                call = item.value.get("tool_call") or {}
                key = (
                    item.value.get("node_id"),
                    call.get("id") if isinstance(call, Mapping) else None,
                )
                out[key] = len(state.get("approved_by") or [])
        return out

    was = counts(before)
    return any(n > was.get(key, n) for key, n in counts(after).items())


def expired_pauses(interrupts: Sequence[Interrupt], now: datetime | None = None) -> list[Interrupt]:
    """The pending pauses whose ``expires_at`` has passed (``now``: default the real time)."""
    moment = now or datetime.now(UTC)
    out = []
    for item in interrupts:
        state = _approval(item)
        deadline = state.get("expires_at") if state is not None else None
        try:
            due = datetime.fromisoformat(deadline) if isinstance(deadline, str) else None
        except ValueError:  # not a value this package wrote: the tool decides when answered
            due = None
        if due is not None and due <= moment:
            out.append(item)
    return out


def expiry_command(interrupts: Sequence[Interrupt], now: datetime | None = None) -> Any:
    """``Command(resume={id: expiry_answer()})`` for the expired pauses, else ``None``."""
    from langgraph.types import Command

    expired = expired_pauses(interrupts, now)
    if not expired:
        return None
    return Command(resume={i.id: expiry_answer() for i in expired})


def agent_clock(policy: Any) -> Callable[[], datetime] | None:
    """The clock of an agent's ``approval_policy=`` (one policy, or the first of a map that
    has one), for the doors' expiry checks."""
    policies = list(policy.values()) if isinstance(policy, Mapping) else [policy]
    for p in policies:
        if isinstance(p, ApprovalPolicy) and p.clock is not None:
            return p.clock
    return None
