"""An approval policy's checks in the one ask loop (``PolicyRules``, plugged into
:func:`dynavec_langgraph._pauses.ask.ask`): the approval fields of the pause value, and each stored
answer read in order against the policy's expiry, approvers and approvals required."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Final, ParamSpec, TypeVar

from langgraph.errors import GraphBubbleUp

from dynavec_langgraph._errors import ApprovalPolicyError, InvalidDecisionError, InvalidOptionError
from dynavec_langgraph._graph.run_data import current_run
from dynavec_langgraph._pauses.ask import Answer, AskRules, Refusal, recorded_answer_of
from dynavec_langgraph._pauses.digest import check_bound
from dynavec_langgraph._pauses.policy.answers import is_expiry, may_approve, signed_answer, unwrap
from dynavec_langgraph._pauses.policy.events import ApprovalEvent, EventKind, emit
from dynavec_langgraph._pauses.policy.spec import EXPIRE, ApprovalPolicy
from dynavec_langgraph._pauses.signed_in import answered_by
from dynavec_langgraph._pauses.value import InterruptValue, with_notes
from dynavec_langgraph._types import JSONObject

__all__ = [
    "PolicyRules",
    "policy_notes",
    "rules_for",
]


T = TypeVar("T")
P = ParamSpec("P")


def _iso(value: datetime | None) -> str | None:
    return value.astimezone(UTC).isoformat() if value is not None else None


def _given_seconds(policy: ApprovalPolicy) -> float | None:
    """``expires_in`` as given (dynavec's timeout message shows the number so), in seconds;
    ``None`` for a deadline (``expires_at``) or no expiry."""
    if isinstance(policy.expires_in, timedelta):
        return policy.expires_in.total_seconds()
    return policy.expires_in


def _decorate(
    value: InterruptValue,
    policy: ApprovalPolicy,
    deadline: datetime | None,
    approved: Sequence[str],
    refused: str | None,
    nameless: bool = False,
    claimed: str | None = None,
) -> InterruptValue:
    """The pause value with the policy's fields: ``expires_at`` (ISO 8601) and ``approval``
    (``nameless``: asked again because the last answer named no approver)."""
    rule = policy.approvers
    on_expire = "raise" if policy.on_expire == EXPIRE else policy.on_expire
    state: JSONObject = {
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
    out = value.copy()
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


def _run_policy(node_id: str, part: str, call: Callable[P, T], *args: P.args, **kw: P.kwargs) -> T:
    """``call(*args)``, a callable of the policy (``part``: ``"clock"`` or ``"approvers"``).

    Raises:
        ApprovalPolicyError: it raised; its exception is the cause. Raised out of the tool
            (the tool node re-raises it, never an answer to the model), so the run fails with
            the pause still pending and the answer being checked not applied.
        InvalidOptionError: a clock of the wrong kind (the developer's option, as before).
    """
    try:
        return call(*args, **kw)
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
    return recorded_answer_of(node_id)


class PolicyRules(AskRules[T]):
    """The checks of ``policy`` in the one ask loop (:func:`~dynavec_langgraph._pauses.ask.ask`).

    Each stored answer is read in order: after the deadline any answer settles the pause as
    expired (``on_expired(policy, reason)``); an approver the policy does not allow, or one who
    already approved, asks again with ``error`` set; an approval of several re-asks with the
    approvals so far in the value; anything that is no approval (a rejection) ends it.
    """

    def __init__(
        self,
        policy: ApprovalPolicy,
        node_id: str,
        *,
        is_approval: Callable[[T], bool],
        on_expired: Callable[[ApprovalPolicy, str], T],
        tool_call_id: str | None,
    ) -> None:
        if policy.clock is not None:  # a clock of the wrong kind is refused before the pause
            _run_policy(node_id, "clock", policy.now)
        self.policy, self.node_id, self.tool_call_id = policy, node_id, tool_call_id
        self.is_approval, self.on_expired = is_approval, on_expired
        self.link_keys = policy.link_keys
        self.deadline = _run_policy(node_id, "clock", policy.deadline)
        self.thread_id = _thread()
        self.approved: list[str] = []
        self.refused: str | None = None  # the approver the last answer was refused
        self.nameless = False  # the last answer named no approver
        self.claimed: str | None = None  # the name a refused answer claimed
        self.mismatch: str | None = None  # a signed-in user answering as another
        self.held: ApprovalEvent | None = None  # emitted only when this answer was the newest
        self.index = 0

    def _now(self) -> datetime:
        return _run_policy(self.node_id, "clock", self.policy.now)

    def _event(self, kind: EventKind, who: str | None, detail: str) -> ApprovalEvent:
        policy, thread_id = self.policy, self.thread_id
        return ApprovalEvent(
            kind,
            thread_id,
            self.node_id,
            self.tool_call_id,
            who,
            _iso(self._now()) or "",
            detail,
            tuple(self.approved),
            f"{thread_id}:{self.tool_call_id}:{self.node_id}:{self.index}",
            policy.on_expire,
            _given_seconds(policy),
        )

    def _refuse(self, who: str, error: str) -> Refusal:
        """Refuse the approver ``who``: the pause names them; its event, if it stays newest."""
        self.refused = who
        self.held = self._event("refused", who, error)
        return Refusal(error)

    def shown(self, value: InterruptValue) -> InterruptValue:
        policy, state = self.policy, (self.refused, self.nameless, self.claimed)
        return _decorate(value, policy, self.deadline, self.approved, *state)

    def pausing(self) -> None:
        if self.held is not None:
            emit(self.held)

    def expired(self, answer: Answer) -> tuple[T, str] | None:
        self.index = answer.index
        self.held, self.refused, self.claimed, self.mismatch = None, None, None, None
        self.nameless = False
        node_id, deadline = self.node_id, self.deadline
        if deadline is not None and self._now() >= deadline:
            reason = f"the approval of {node_id!r} expired at {_iso(deadline)}"
            emit(self._event("expired", None, reason))
            return self.on_expired(self.policy, reason), reason
        if is_expiry(answer.raw):
            error = f"the approval of {node_id!r} has not expired"
            error += f" (it expires at {_iso(deadline)})" if deadline else " (it has no deadline)"
            raise Refusal(error)
        return None

    def _named(self) -> bool:
        return self.policy.approvers is not None or self.policy.approvals_required > 1

    def identify(self, answer: Answer) -> None:
        policy, value = self.policy, answer.value
        try:  # on a server with auth: the signed-in user who gave it
            answerer = answered_by(answer.index, answer.raw)
        except InvalidDecisionError as unbound:  # no store to bind it in
            if self._named():  # a new refusal: who answered decides
                raise Refusal(str(unbound), new_review=True) from None
            answerer = None  # anyone may answer it: as without auth
        # a review digest outside an approver's envelope or inside it (check_bound)
        bound = check_bound(answer.raw, value)
        if answerer is None:
            answer.who, inner = unwrap(bound, policy.approvals_required == 1)
            claimed = mismatch = None
        else:
            answer.who, inner, claimed, mismatch = signed_answer(answerer, bound, policy)
        answer.decision = check_bound(inner, value)
        self.claimed, self.mismatch = claimed, mismatch

    def admit(self, answer: Answer) -> None:
        who, node_id = answer.who, self.node_id
        if self.mismatch is not None:  # a signed-in user answering as another, or unauthenticated
            assert who is not None
            raise self._refuse(who["name"], self.mismatch)
        if who is None and self._named():
            self.nameless = True
            raise Refusal(
                f"{node_id!r} needs a named approver, and this answer names none (the Agent "
                "Chat UI, Agent Inbox and Studio send no name): answer with `dynavec-langgraph "
                "inbox answer --server URL --assistant GRAPH_ID --thread ID --approve --as "
                "NAME` or RemoteReActAgent.resume(..., approver=NAME); in Python, resume with "
                "approver= (or approver_decision(decision, name); with one approval needed, "
                "config['configurable']['approver'] works too)"
            )
        if who is not None and not _run_policy(
            node_id, "approvers", may_approve, self.policy.approvers, who, answer.value
        ):
            raise self._refuse(who["name"], f"approver {who['name']!r} may not approve {node_id!r}")

    def finished(self, result: T, answer: Answer) -> tuple[bool, str | None]:
        who, approved, required = answer.who, self.approved, self.policy.approvals_required
        if required == 1 or not self.is_approval(result):
            if self.is_approval(result) and _answered_since(self.node_id):
                if who is not None and who["name"] not in approved:
                    approved.append(who["name"])
                return False, _RECHECKED
            return True, None
        assert who is not None
        if who["name"] in approved:
            error = f"{who['name']!r} already approved {self.node_id!r}: another approver is needed"
            raise self._refuse(who["name"], error)
        approved.append(who["name"])
        count = f"approval {len(approved)} of {required}"
        if len(approved) >= required and not _answered_since(self.node_id):
            return True, count
        self.held = self._event("approved", who["name"], count)
        return False, count


def rules_for(
    policy: ApprovalPolicy | None,
    node_id: str,
    *,
    is_approval: Callable[[T], bool],
    on_expired: Callable[[ApprovalPolicy, str], T],
    tool_call_id: str | None,
) -> PolicyRules[T] | None:
    """The checks of ``policy`` for the pause ``node_id`` (``None``: the plain ask, which pays
    nothing), as :func:`~dynavec_langgraph.interrupt.interrupt` and ``require_approval`` plug
    them into the one ask loop."""
    if policy is None:
        return None
    return PolicyRules(
        policy, node_id, is_approval=is_approval, on_expired=on_expired, tool_call_id=tool_call_id
    )
