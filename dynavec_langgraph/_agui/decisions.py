"""A resume's entries as the package's decisions, each checked before anything runs."""

from __future__ import annotations

import dynavec_langgraph._agui.extra  # noqa: F401  (first: names the extra)

# isort: split

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ag_ui.core import ResumeEntry
from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from dynavec_langgraph._agui.pauses import Pause
from dynavec_langgraph._errors import InvalidDecisionError
from dynavec_langgraph._pauses.decisions import explain_refusal
from dynavec_langgraph._pauses.digest import bind_decision, review_digest
from dynavec_langgraph._pauses.value import ALL_DECISIONS, interrupt_fields
from dynavec_langgraph._types import JSONMapping, JSONObject

if TYPE_CHECKING:
    from dynavec_langgraph._types import Approver


class Refused(InvalidDecisionError):
    """A resume entry refused before anything runs (unknown, stale, repeated, expired
    interrupt; a decision not offered; edited arguments the tool refuses; no approver named).
    An ``InvalidDecisionError``; ``code`` is the ``RUN_ERROR`` code."""

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.code = code


def _edit_model(pause: Pause) -> type[BaseModel]:
    """The model edited arguments must fit: the tool's argument model (``tools=``), else the
    paused call's keys, each of its value's type."""
    schema = pause.tool.tool_call_schema if pause.tool is not None else None
    if isinstance(schema, type) and issubclass(schema, BaseModel) and schema.model_fields:
        return schema
    fields: JSONObject = {
        k: (type(v) if v is not None else Any, ...) for k, v in pause.args.items()
    }
    return create_model(
        "EditedArguments", __config__=ConfigDict(extra="forbid", strict=True), **fields
    )


def _decision(entry: ResumeEntry, pause: Pause, now: datetime) -> Any:
    """The package's decision for one resume entry (checked before anything runs)."""
    iid = entry.interrupt_id
    expired = pause.expires_at and datetime.fromisoformat(pause.expires_at) <= now
    if expired and entry.status == "resolved":
        raise Refused(
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
            raise Refused(
                f"the resume entry for {iid} has no payload: send a decision "
                "(its responseSchema) or any JSON value but null",
                "INVALID_DECISION",
            )
        return payload  # a plain interrupt(): the value reaches the tool as it is
    else:
        raise Refused(
            f"the payload for {iid} is no decision: send {{'type': one of "
            f"{list(pause.allowed)}, ...}} (its responseSchema)",
            "INVALID_DECISION",
        )
    if pause.allowed and kind not in pause.allowed:
        raise Refused(
            f"{kind!r} is not offered on interrupt {iid}: it offers {list(pause.allowed)}",
            "DECISION_NOT_ALLOWED",
        )
    return decision


def _typed_decision(kind: str, payload: JSONMapping, pause: Pause, iid: str) -> Any:
    if kind == "edit":
        args = payload.get("args")
        if not isinstance(args, dict):
            raise Refused(
                f"an edit of {iid} needs 'args', the edited arguments (an object)",
                "INVALID_DECISION",
            )
        try:
            _edit_model(pause).model_validate(args)
        except ValidationError as refused:
            raise Refused(
                f"the edited arguments of {iid} do not fit {pause.value.get('name')!r}: "
                f"{explain_refusal(refused)}; nothing ran",
                "INVALID_ARGUMENTS",
            ) from refused
        edited = {"name": pause.value.get("name"), "args": args}
        return {"type": "edit", "edited_action": edited}
    if kind == "respond":
        message = payload.get("message")
        if not isinstance(message, str):
            raise Refused(f"a respond on {iid} needs 'message' (a string)", "INVALID_DECISION")
        return {"type": "respond", "message": message}
    if kind == "reject":
        message = payload.get("message")
        return {"type": "reject", "message": message if isinstance(message, str) else None}
    return {"type": "approve"}


def _check_approver(entry: ResumeEntry, pause: Pause, approver: Approver) -> None:
    """An approval with approvers or several approvals needs a named approver: refused before
    anything runs (the package would ask again under a new interrupt id)."""
    approval = pause.value.get("approval")
    if approver is not None or entry.status == "cancelled" or not isinstance(approval, dict):
        return
    if approval.get("approvers") or (approval.get("approvals_required") or 1) > 1:
        raise Refused(
            f"interrupt {entry.interrupt_id} needs a named approver "
            f"({approval.get('approvals_required')} approvals required, approvers "
            f"{approval.get('approvers')}); the server's approver= named nobody for this "
            "request. Nothing ran",
            "APPROVER_REQUIRED",
        )


def resume_decisions(
    entries: Sequence[ResumeEntry],
    pending: Sequence[Pause],
    now: datetime,
    approver: Approver = None,
) -> JSONObject:
    """``{interrupt_id: decision}``, each bound to its pause's review digest.

    Raises:
        Refused: an entry answers no pending interrupt (unknown, already answered, or
            asked again since), two entries answer one; a decision that cannot be applied.
    """
    by_id = {p.interrupt.id: p for p in pending}
    listed = ", ".join(by_id) or "nothing"
    decisions: JSONObject = {}
    for entry in entries:
        iid = entry.interrupt_id
        if iid in decisions:
            raise Refused(
                f"two resume entries answer interrupt {iid}; send one", "DUPLICATE_RESUME"
            )
        pause = by_id.get(iid)
        if pause is None:
            raise Refused(
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
