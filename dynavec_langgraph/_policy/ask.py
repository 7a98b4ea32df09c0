"""The ask loop of a pause with a policy (``ask_with_policy``): the approval fields of the pause
value, and each stored answer read in order."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, Final, TypeVar

from langgraph.errors import GraphBubbleUp, GraphInterrupt

from dynavec_langgraph._audit.hooks import recorder
from dynavec_langgraph._digest import check_bound, next_slot, pause_digest
from dynavec_langgraph._errors import (
    ApprovalPolicyError,
    InvalidDecisionError,
    InvalidLinkError,
    InvalidOptionError,
)
from dynavec_langgraph._links import answer_of_link, link_of, redacted
from dynavec_langgraph._pause_value import with_notes
from dynavec_langgraph._policy.answers import is_expiry, may_approve, signed_answer, unwrap
from dynavec_langgraph._policy.events import ApprovalEvent, emit
from dynavec_langgraph._policy.spec import EXPIRE, ApprovalPolicy
from dynavec_langgraph._run_data import current_run
from dynavec_langgraph._signed_in import answered_by

__all__ = [
    "ask_with_policy",
    "policy_notes",
]


T = TypeVar("T")


def _iso(value: datetime | None) -> str | None:
    return value.astimezone(UTC).isoformat() if value is not None else None


def _given_seconds(policy: ApprovalPolicy) -> Any:
    """``expires_in`` as given (dynavec's timeout message shows the number so), in seconds;
    ``None`` for a deadline (``expires_at``) or no expiry."""
    if isinstance(policy.expires_in, timedelta):
        return policy.expires_in.total_seconds()
    return policy.expires_in


def _decorate(
    value: Mapping[str, Any],
    policy: ApprovalPolicy,
    deadline: datetime | None,
    approved: Sequence[str],
    refused: str | None,
    nameless: bool = False,
    claimed: str | None = None,
) -> dict[str, Any]:
    """The pause value with the policy's fields: ``expires_at`` (ISO 8601) and ``approval``
    (``nameless``: asked again because the last answer named no approver)."""
    rule = policy.approvers
    on_expire = "raise" if policy.on_expire == EXPIRE else policy.on_expire
    state = {
        "expires_at": _iso(deadline),
        "expires_in": _given_seconds(policy),  # ApprovalTimeoutError's seconds, for clients
        "approvals_required": policy.approvals_required,
        "approved_by": list(approved),
        "approvers": None if rule is None else ("callable" if callable(rule) else list(rule)),
        "on_expire": on_expire,
        "refused_approver": refused,
        "approver_required": nameless,
    }
    if claimed is not None:  # only then: the value (and its digest) is otherwise as before
        state["claimed_approver"] = claimed  # the name a refused answer claimed
    out = dict(value)
    out["expires_at"] = state["expires_at"]
    out["approval"] = state
    return with_notes(out, policy_notes(policy, deadline, approved))


def policy_notes(
    policy: ApprovalPolicy, deadline: datetime | None, approved: Sequence[str]
) -> list[str]:
    """The lines a pause's description starts with (what the approval UIs show): its
    deadline (or that it has expired), how many approvals are in and who may approve."""
    notes = []
    expire = policy.on_expire
    settled = "rejected" if expire in (EXPIRE, "rejected") else f"{expire!r:.80}"
    if deadline is not None:
        when = deadline.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
        if policy.now() >= deadline:
            notes.append(
                f"Expired at {when}: it can no longer be approved; any answer closes it as "
                f"{settled}."
            )
        else:
            notes.append(
                f"Expires at {when}: after that it can no longer be approved, and any answer "
                f"closes it as {settled}."
            )
    rule = policy.approvers
    if policy.approvals_required > 1:
        given = f" ({', '.join(approved)})" if approved else ""
        notes.append(
            f"Needs {policy.approvals_required} approvals by different approvers: "
            f"{len(approved)} of {policy.approvals_required} approvals in{given}."
        )
    if rule is not None or policy.approvals_required > 1:
        if rule is None:
            who = "any named approver"
        elif callable(rule):
            who = "whoever the approval's rule allows"
        else:
            who = ", ".join(rule)
        notes.append(
            f"Who may approve: {who}. Each answers with their name (dynavec-langgraph inbox "
            "answer --as NAME) or signed in to a server with auth; an answer without a name "
            "is asked again."
        )
    return notes


def _thread() -> str | None:
    run = current_run()
    return None if run is None else run.thread_id


def _note(
    value: Any,
    raw: Any,
    index: int,
    who: Mapping[str, Any] | None,
    refusal: str | None,
    kind: str | None = None,
    outcome: str | None = None,
) -> None:
    """Record the answer ``raw`` to the ``index``-th ask in the audit trail (a no-op unless
    recording is on: ``dynavec_langgraph._audit.in_graph``); ``authenticated_by`` says how
    ``who`` was identified (``"server"``: the user the server signed in; ``"explicit"``: named
    in the answer or the run's config)."""
    name = str(who["name"]) if who is not None else None
    by = who.get("authenticated_by") if who is not None else None
    recorder().on_decision(
        value, raw, index - 1, refusal, kind=kind, outcome=outcome, who=name, authenticated_by=by
    )


def _run_policy(node_id: str, part: str, call: Callable[..., T], *args: Any) -> T:
    """``call(*args)``, a callable of the policy (``part``: ``"clock"`` or ``"approvers"``).

    Raises:
        ApprovalPolicyError: it raised; its exception is the cause. Raised out of the tool
            (the tool node re-raises it, never an answer to the model), so the run fails with
            the pause still pending and the answer being checked not applied.
        InvalidOptionError: a clock of the wrong kind (the developer's option, as before).
    """
    try:
        return call(*args)
    except (GraphBubbleUp, InvalidOptionError):  # never swallowed; the option's own error
        raise
    except Exception as error:
        raise ApprovalPolicyError(node_id, part, error) from error


_RECHECKED: Final = "approval, held: a newer answer to this pause decides"
"""The audit outcome of a stored approval that meets the policy only as it is now."""


def _answered_since(node_id: str) -> bool:
    """Whether the approval just read meets the policy only as it is now: it was recorded
    before this run, while the thread waited at this very pause, which therefore asked again
    after it (it did not meet the policy then) and holds a newer answer (this run's, if any).

    That happens when the policy changed while the thread waited: a stored approval that was
    one of several then meets a lowered ``approvals_required``, but the newer answer (a
    rejection, too) was given to the pause asked after it. The loop reads it rather than ending
    at the stored approval: any rejection still rejects, and with no newer answer the pause is
    asked again. With the policy unchanged the approval that meets it is this run's answer.
    """
    from dynavec_langgraph._pause import recorded_answer_of

    return recorded_answer_of(node_id)


def ask_with_policy(
    build: Callable[[str | None], Mapping[str, Any]],
    schema: dict[str, Any],
    accept: Callable[[Any], T],
    policy: ApprovalPolicy,
    node_id: str,
    *,
    is_approval: Callable[[T], bool],
    on_expired: Callable[[str], T],
    tool_call_id: str | None,
    explain: Callable[[Any, ValueError], str],
) -> T:
    """The ``ask`` loop of :func:`~dynavec_langgraph.interrupt.ask` with ``policy``.

    Each stored answer is read in order: after the deadline any answer settles the pause as
    expired (``on_expired(reason)``); an approver the policy does not allow, or one who already
    approved, asks again with ``error`` set; an approval of several re-asks with the
    approvals so far in the value; anything that is no approval (a rejection) ends it.
    """
    if policy.clock is not None:  # a clock of the wrong kind is refused before the pause
        _run_policy(node_id, "clock", policy.now)
    deadline = _run_policy(node_id, "clock", policy.deadline)
    approved: list[str] = []
    error: str | None = None
    refused: str | None = None
    nameless = False  # the last answer named no approver
    claimed: str | None = None
    held: ApprovalEvent | None = None  # emitted only when this answer was the newest
    index = 0
    asks = 0  # the decisions refused so far: part of the review digest, as in ``ask``
    slot = next_slot()  # which approval of the tool call, as in ``ask``
    thread_id = _thread()

    def event(kind: Any, who: str | None, detail: str) -> ApprovalEvent:
        seconds = _given_seconds(policy)
        return ApprovalEvent(
            kind,
            thread_id,
            node_id,
            tool_call_id,
            who,
            _iso(_run_policy(node_id, "clock", policy.now)) or "",
            detail,
            tuple(approved),
            f"{thread_id}:{tool_call_id}:{node_id}:{index}",
            policy.on_expire,
            seconds,
        )

    _audit = recorder()  # the audit trail and outbox: hooks that do nothing unless on
    from dynavec_langgraph._pause import answer_slot  # the one call of LangGraph's interrupt

    while True:
        value = _decorate(build(error), policy, deadline, approved, refused, nameless, claimed)
        value["review_digest"] = pause_digest(value, asks, slot)
        try:
            raw = answer_slot(value, schema)
        except GraphBubbleUp as paused:  # re-raised: the run pauses; the answer before was newest
            if held is not None:
                emit(held)
            if isinstance(paused, GraphInterrupt):  # recorded, then raised on: never swallowed
                _audit.on_pause(value, paused.args[0] if paused.args else (), error is not None)
            raise
        index += 1
        held, error, refused, nameless, claimed = None, None, None, False, None
        who: dict[str, Any] | None = None

        if deadline is not None and _run_policy(node_id, "clock", policy.now) >= deadline:
            reason = f"the approval of {node_id!r} expired at {_iso(deadline)}"
            emit(event("expired", None, reason))
            _note(value, raw, index, who, None, "expired", reason)
            return on_expired(reason)
        if is_expiry(raw):
            error = f"the approval of {node_id!r} has not expired"
            error += f" (it expires at {_iso(deadline)})" if deadline else " (it has no deadline)"
            _note(value, raw, index, who, error)
            continue
        named = policy.approvers is not None or policy.approvals_required > 1
        link = link_of(raw)
        if link is not None:  # a signed link: its signature names the approver
            try:
                who, inner, raw = answer_of_link(link, value, index, policy.link_keys)
            except InvalidLinkError as bad:  # the same digest again: the real link still works
                error = str(bad)
                _note(value, redacted(link), index, None, error)
                continue
        else:
            try:  # on a server with auth: the signed-in user who gave it
                answerer = answered_by(index, raw)
            except InvalidDecisionError as unbound:  # no store to bind it in
                if named:  # a new refusal: who answered decides
                    error = str(unbound)
                    asks += 1
                    _note(value, raw, index, who, error)
                    continue
                answerer = None  # anyone may answer it: as without auth
            try:  # a review digest outside an approver's envelope or inside it (check_bound)
                if answerer is None:
                    who, inner = unwrap(check_bound(raw, value), policy.approvals_required == 1)
                else:
                    who, inner, claimed, error = signed_answer(
                        answerer, check_bound(raw, value), policy
                    )
                inner = check_bound(inner, value)
            except InvalidDecisionError as bad:  # StaleDecisionError too: the same digest again
                error, claimed = str(bad), None
                _note(value, raw, index, who, error)
                continue
        if error is not None:  # a signed-in user answering as another, or unauthenticated
            assert who is not None
            refused = who["name"]
            held = event("refused", who["name"], error)
            _note(value, raw, index, who, error)
            continue
        if who is None and named:
            error = (
                f"{node_id!r} needs a named approver, and this answer names none (the Agent "
                "Chat UI, Agent Inbox and Studio send no name): answer with `dynavec-langgraph "
                "inbox answer --server URL --assistant GRAPH_ID --thread ID --approve --as "
                "NAME` or RemoteReActAgent.resume(..., approver=NAME); in Python, resume with "
                "approver= (or approver_decision(decision, name); with one approval needed, "
                "config['configurable']['approver'] works too)"
            )
            nameless = True
            _note(value, raw, index, who, error)
            continue
        if who is not None and not _run_policy(
            node_id, "approvers", may_approve, policy.approvers, who, value
        ):
            refused = who["name"]
            error = f"approver {who['name']!r} may not approve {node_id!r}"
            held = event("refused", who["name"], error)
            _note(value, raw, index, who, error)
            continue
        try:
            result = accept(inner)
        except ValueError as bad:
            error = f"the decision {inner!r:.200} was refused: {explain(inner, bad)}"
            asks += 1
            _note(value, raw, index, who, error)
            continue
        if policy.approvals_required == 1 or not is_approval(result):
            if is_approval(result) and _answered_since(node_id):
                if who is not None and who["name"] not in approved:
                    approved.append(who["name"])
                _note(value, raw, index, who, None, outcome=_RECHECKED)
                continue
            _note(value, raw, index, who, None)
            return result
        assert who is not None
        if who["name"] in approved:
            refused = who["name"]
            error = f"{who['name']!r} already approved {node_id!r}: another approver is needed"
            held = event("refused", who["name"], error)
            _note(value, raw, index, who, error)
            continue
        approved.append(who["name"])
        count = f"approval {len(approved)} of {policy.approvals_required}"
        _note(value, raw, index, who, None, outcome=count)
        if len(approved) >= policy.approvals_required and not _answered_since(node_id):
            return result
        held = event("approved", who["name"], count)
