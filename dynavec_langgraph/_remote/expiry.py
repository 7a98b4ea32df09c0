"""Expired approvals whose policy says ``on_expire="raise"``, as a remote agent tells them.

The paused tool settles an expiry on the server, which does not tell the client what the
policy chose; the pause value does (``approval.on_expire``, ``expires_at``, ``expires_in``).
The client knows a pause was settled as expired when it answered it with the expiry answer
(``run()``, and ``resume()`` when its clock says the deadline passed: the tool accepts that
answer only after its deadline, else asks again) and the pause is gone; or, for a decision
the tool received after its deadline, when the call's tool answer gives the expiry reason
(``require_approval``'s answer does)."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from datetime import datetime
from typing import Any

from langgraph.types import Interrupt

from dynavec_langgraph._pauses.policy.answers import expiry_answer
from dynavec_langgraph._pauses.policy.doors import expired_pauses
from dynavec_langgraph._pauses.policy.spec import EXPIRE
from dynavec_langgraph._remote.threads import Seen, messages_of
from dynavec_langgraph._types import JSONMapping, JSONObject
from dynavec_langgraph.exceptions import ApprovalTimeoutError


def _raising(item: Interrupt) -> JSONMapping | None:
    """The approval state of a pause whose policy says ``on_expire="raise"``, else None."""
    value = item.value
    state = value.get("approval") if isinstance(value, Mapping) else None
    if isinstance(state, Mapping) and state.get("on_expire") == EXPIRE and state.get("expires_at"):
        return state
    return None


def _call_id(item: Interrupt) -> Any:
    call = item.value.get("tool_call") if isinstance(item.value, Mapping) else None
    return call.get("id") if isinstance(call, Mapping) else None


def _still_asked(item: Interrupt, after: Seen) -> bool:
    """Whether ``item`` is pending in ``after``, or asked again (same node and call)."""
    node = item.value.get("node_id")
    return any(
        i.id == item.id
        or (
            isinstance(i.value, Mapping)
            and i.value.get("node_id") == node
            and _call_id(i) == _call_id(item)
        )
        for i in after.interrupts
    )


def _expiry_told(item: Interrupt, state: JSONMapping, after: Seen) -> bool:
    """Whether the tool answer of ``item``'s call gives its expiry reason (the ask loop under a
    policy settles with ``the approval of NODE expired at DEADLINE``)."""
    reason = f"the approval of {item.value.get('node_id')!r} expired at {state['expires_at']}"
    call = _call_id(item)
    return call is not None and any(
        getattr(m, "tool_call_id", None) == call and reason in str(m.content)
        for m in messages_of(after.values)
    )


def approval_timeout(
    thread_id: str, answered: Sequence[Interrupt], settled: Collection[str], after: Seen
) -> ApprovalTimeoutError | None:
    """dynavec's ``ApprovalTimeoutError`` for the first pause of ``answered`` whose policy
    says ``on_expire="raise"`` and that the run settled as expired (``settled``: the ids
    answered with the expiry answer), as ``ReActAgent`` raises it; else None."""
    for item in answered:
        state = _raising(item)
        if state is None or _still_asked(item, after):
            continue
        if item.id in settled or _expiry_told(item, state, after):
            return ApprovalTimeoutError(
                thread_id, item.value.get("node_id"), state.get("expires_in")
            )
    return None


def settling(seen: Seen, resume: JSONMapping, now: datetime) -> tuple[JSONObject, list[str]]:
    """``resume`` with the decision for each answered pause that expired by ``now`` and whose
    policy raises replaced by the expiry answer (the tool settles it as ``ReActAgent``'s
    door raises for it); and the ids replaced."""
    due = [i.id for i in expired_pauses(seen.interrupts, now) if i.id in resume and _raising(i)]
    return {k: expiry_answer() if k in due else v for k, v in resume.items()}, due


def not_yet(
    seen: Seen, due: Sequence[str], decided: JSONMapping, after: Seen
) -> tuple[JSONObject, list[str]]:
    """After a resume that answered the pauses ``due`` with the expiry answer: the decisions
    to send again (a pause the tool asked again, its own clock saying the deadline has not
    passed, gets the decision ``decided`` gave it, under its new interrupt id) and the ids of
    ``due`` the tool did settle."""
    again: JSONObject = {}
    settled: list[str] = []
    for item in seen.interrupts:
        if item.id not in due:
            continue
        node = item.value.get("node_id")
        asked = [
            new.id
            for new in after.interrupts
            if new.id != item.id
            and isinstance(new.value, Mapping)
            and new.value.get("node_id") == node
            and _call_id(new) == _call_id(item)
        ]
        if asked:
            again[asked[0]] = decided[item.id]
        elif not _still_asked(item, after):
            settled.append(item.id)
    return again, settled
