"""The answers to a pause with a policy: the approver's envelope, the expiry answer, and who
may approve."""

from __future__ import annotations

from collections.abc import Mapping

from dynavec_langgraph._errors import (
    InvalidDecisionError,
    InvalidOptionError,
    mismatch_text,
    option_text,
)
from dynavec_langgraph._graph.run_data import current_run
from dynavec_langgraph._names import EXPIRED_KEY
from dynavec_langgraph._pauses.policy.spec import PERMISSION, ROLE, ApprovalPolicy, Approver
from dynavec_langgraph._pauses.signed_in import Answerer
from dynavec_langgraph._types import ApproverRule, JSONMapping, JSONObject, UserPayload

__all__ = [
    "approver_decision",
    "expiry_answer",
    "is_expiry",
    "may_approve",
    "named_approver",
    "signed_answer",
    "unwrap",
]


def approver_decision(decision: UserPayload, approver: Approver) -> JSONObject:
    """The resume value of ``decision`` given by ``approver``: what the doors send, and
    what a raw-graph caller sends (``Command(resume=approver_decision("approved", "alice"))``)."""
    return {"approver": approver, "decision": decision}


def expiry_answer() -> JSONObject:
    """The resume value that settles an expired pause (the tool checks the deadline itself:
    before it, this answer is refused and the pause stays)."""
    return {EXPIRED_KEY: True}


def is_expiry(raw: UserPayload) -> bool:
    return isinstance(raw, dict) and set(raw) == {EXPIRED_KEY}


def unwrap(raw: UserPayload, from_config: bool) -> tuple[JSONObject | None, UserPayload]:
    """``(approver, decision)`` of an answer (the envelope, else the config's approver when
    ``from_config``: not with several approvers, whose earlier answers are replayed under the
    config of the latest run)."""
    if isinstance(raw, dict) and set(raw) == {"approver", "decision"}:
        return named_approver(raw["approver"]), raw["decision"]
    if not from_config:
        return None, raw
    run = current_run()
    configured = None if run is None else run.approver
    return (named_approver(configured) if configured is not None else None), raw


def named_approver(value: UserPayload) -> JSONObject:
    """An approver the answer names (explicit: no permissions; the name is not proven)."""
    if isinstance(value, str) and value:
        return {"name": value, "roles": [], "permissions": [], "authenticated_by": "explicit"}
    if isinstance(value, Mapping) and isinstance(value.get("name"), str) and value["name"]:
        roles = value.get("roles") or []
        if isinstance(roles, list | tuple) and all(isinstance(r, str) for r in roles):
            return {
                "name": value["name"],
                "roles": list(roles),
                "permissions": [],
                "authenticated_by": "explicit",
            }
    raise InvalidDecisionError(
        f"approver={value!r:.80}: pass a name or {{'name': ..., 'roles': [...]}}"
    )


def may_approve(rule: ApproverRule | None, who: JSONMapping, pause: JSONMapping) -> bool:
    if rule is None:
        return True
    if callable(rule):
        allowed = rule(who, pause)
        if not isinstance(allowed, bool):  # "no" is truthy: it would approve
            raise InvalidOptionError(
                option_text(
                    "approvers",
                    rule,
                    f"the rule returned {allowed!r:.40} for approver {who['name']!r}, not True "
                    "or False; make it return a bool. Nothing ran and the pause stays",
                ),
                "approvers",
            )
        return allowed
    names = {r for r in rule if not r.startswith((ROLE, PERMISSION))}
    roles = {r.removeprefix(ROLE) for r in rule if r.startswith(ROLE)}
    permissions = {r.removeprefix(PERMISSION) for r in rule if r.startswith(PERMISSION)}
    return (
        who["name"] in names
        or bool(roles & set(who.get("roles") or []))
        or bool(permissions & set(who.get("permissions") or []))
    )


def signed_answer(
    answerer: Answerer, raw: UserPayload, policy: ApprovalPolicy
) -> tuple[JSONObject, UserPayload, str | None, str | None]:
    """An answer given on a server with auth: ``(approver, decision, claimed, error)``.

    The signed-in user is the approver; the name the answer claims (its envelope, else the
    config's ``approver`` of the run that gave it) must be that user's, else ``claimed`` is
    that name and ``error`` says why it is refused. Roles an envelope claims are not read
    (the server's user has its own). A user the server let in unauthenticated (Studio's local
    user) cannot approve a pause that needs a named approver (``error``)."""
    claim, decision = unwrap(raw, False)
    if claim is None and answerer.configured is not None:
        claim = named_approver(answerer.configured)
    who = answerer.approver()
    if claim is not None and claim["name"] != who["name"]:
        return who, decision, str(claim["name"]), mismatch_text(who["name"], claim["name"])
    if not answerer.user.authenticated and (
        policy.approvers is not None or policy.approvals_required > 1
    ):
        why = (
            f"{who['name']!r} is not authenticated (the server let it in without its auth "
            "handler, as langgraph dev does for Studio): only a user the server's auth "
            "signed in can approve here"
        )
        return who, decision, None, why
    return who, decision, None, None
