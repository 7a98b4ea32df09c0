"""Approvals in production: expiry, who may approve, several approvers.

See docs/approvals-in-production.md.

An :class:`ApprovalPolicy` is given to :func:`~dynavec_langgraph.interrupt`,
:func:`~dynavec_langgraph.approval.require_approval` or the agent (``approval_policy=``, one
policy or ``{node_id: policy}``). It is enforced **inside the paused tool** (the ``ask`` loop
of :func:`ask_with_policy`), so the raw graph, a LangGraph server and every door of this package
enforce the same rules; the doors (``ReActAgent.resume``, the inbox and its command line,
``RemoteReActAgent``) also check names before anything runs and turn refusals into typed errors.

Everything durable lives in the checkpoint, as LangGraph stores an interrupted task's answers:
every answer given to a pause is replayed, in order, when the tool runs again. A partial
approval (``approvals_required`` > 1) re-asks the same pause with the approvals so far in its
value; a refused approver re-asks it with ``error`` set; nothing after the pause runs.

A pause without a policy pays nothing: :func:`policy_for` returns ``None`` and the plain
``ask`` loop runs as before.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Final, Literal, TypeVar

from langgraph.errors import GraphBubbleUp, GraphInterrupt
from langgraph.types import Interrupt

from dynavec_langgraph._audit.hooks import recorder
from dynavec_langgraph._digest import check_bound, next_slot, pause_digest
from dynavec_langgraph._errors import (
    ApprovalPolicyError,
    ApproverMismatchError,
    ApproverRefusedError,
    ApproverRequiredError,
    InvalidDecisionError,
    InvalidLinkError,
    InvalidOptionError,
    mismatch_text,
    option_text,
)
from dynavec_langgraph._links import LinkKeys, answer_of_link, link_of, redacted
from dynavec_langgraph._pause_value import with_notes
from dynavec_langgraph._run_data import APPROVER_KEY, current_run
from dynavec_langgraph._signed_in import Answerer, answered_by
from dynavec_langgraph._types import ApproverRule

__all__ = [
    "APPROVAL_POINT_KEY",
    "APPROVER_KEY",
    "ASKS_KEY",
    "EXPIRE",
    "MAX_EXPIRES_IN",
    "POLICY_KEY",
    "ApprovalEvent",
    "ApprovalPoint",
    "ApprovalPolicy",
    "ApprovalPolicyOption",
    "Approver",
    "add_approval_listener",
    "approval_recorded",
    "approver_decision",
    "approver_required",
    "ask_with_policy",
    "check_asks",
    "checked_options",
    "declared_asks",
    "expired_pauses",
    "expiry_answer",
    "policy_for",
    "policy_scope",
    "refuse_approver",
    "sign_resume",
]

T = TypeVar("T")

EXPIRE: Final = "raise"
"""``on_expire=EXPIRE``: the doors of this package raise dynavec's ``ApprovalTimeoutError``
after settling the pause (the tool is answered with a rejection)."""
_EXPIRED_KEY: Final = "dynavec_expired"
POLICY_KEY: Final = "dynavec_approval_policy"
"""``tool.metadata[POLICY_KEY]``: the approval policy the agent attached to an ``AgentTool``
(``approval_policy=``, :func:`~dynavec_langgraph._tools.attach_policy`), read by
:func:`policy_scope`."""
APPROVAL_POINT_KEY: Final = "dynavec_approval_point"
"""``tool.metadata[APPROVAL_POINT_KEY]``: the :class:`ApprovalPoint` of a
:func:`~dynavec_langgraph.approval.require_approval` tool, read by ``attach_policy`` to check
the agent's policy for it when the agent is built."""
ASKS_KEY: Final = "asks"
"""``tool.metadata[ASKS_KEY]``: the node ids a tool's body may pass to ``interrupt()``
(``@tool(asks=[...])``; a LangChain tool: ``metadata={"asks": [...]}``). A tool's body
chooses its node ids when it runs, so this is the only way the agent can know them when it
is built: ``attach_policy`` refuses a key of ``approval_policy={node_id: ...}`` that no
``require_approval`` tool and no declaration names, and ``interrupt()`` refuses a node id its
declaring tool did not declare (docs/approvals-in-production.md)."""
MAX_EXPIRES_IN: Final = timedelta(days=36525)
"""The longest ``expires_in``, a hundred years: a deadline further away is no deadline (and
one past the year 9999 fits in no ``datetime``)."""

Approver = str | Mapping[str, Any]
"""Who answers: a name, or ``{"name": ..., "roles": [...]}``."""
_ROLE: Final = "role:"
_PERMISSION: Final = "permission:"


@dataclass(frozen=True)
class ApprovalPolicy:
    """What an approval needs (every field optional; see docs/approvals-in-production.md).

    Attributes:
        expires_in: a duration (``timedelta`` or seconds), counted from the tool's step
            (the time of the checkpoint the paused tool runs from: stable across resumes).
        expires_at: a deadline (an aware ``datetime`` or an ISO 8601 string).
        on_expire: what an expired approval means: a decision value (default ``"rejected"``)
            or :data:`EXPIRE` (``"raise"``) for dynavec's ``ApprovalTimeoutError``.
        approvers: who may approve: names, ``"role:NAME"`` and ``"permission:NAME"`` entries
            (a permission the server's auth gave the signed-in user), or a callable
            ``rule(approver, pause_value) -> bool`` (``approver`` is ``{"name", "roles",
            "permissions", "authenticated_by"}``).
        approvals_required: distinct approvers needed before the tool gets the approval.
        clock: ``() -> aware datetime``, the time the deadline is compared with (default:
            ``datetime.now(UTC)``); inject one to control deadlines in tests.
        link_keys: the keys that verify signed approval links answering this pause
            (``dynavec_langgraph.links``; default: the ``DYNAVEC_LINK_KEYS`` environment
            variable where the graph runs).
    """

    expires_in: timedelta | float | None = None
    expires_at: datetime | str | None = None
    on_expire: Any = "rejected"
    approvers: ApproverRule | None = None
    approvals_required: int = 1
    clock: Callable[[], datetime] | None = field(default=None, compare=False)
    link_keys: LinkKeys | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if self.expires_in is not None and self.expires_at is not None:
            raise InvalidOptionError(
                "pass expires_in= (a duration) or expires_at= (a deadline), not both",
                "expires_in",
            )
        if self.expires_in is not None:
            _seconds(self.expires_in)
        if self.expires_at is not None:
            _deadline(self.expires_at)
        n = self.approvals_required
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            raise InvalidOptionError(
                option_text("approvals_required", n, "pass a whole number of approvers >= 1"),
                "approvals_required",
            )
        _check_approvers(self.approvers, n)
        if self.on_expire is None:
            raise InvalidOptionError(
                "on_expire=None: pass a decision value (e.g. 'rejected') or 'raise'", "on_expire"
            )
        if self.clock is not None and not callable(self.clock):
            raise InvalidOptionError(
                option_text(
                    "clock",
                    self.clock,
                    "pass a function returning an aware datetime, e.g. "
                    "lambda: datetime.now(UTC), or None for the real time",
                ),
                "clock",
            )
        if self.link_keys is not None and not isinstance(self.link_keys, LinkKeys):
            raise InvalidOptionError(
                option_text("link_keys", self.link_keys, "pass LinkKeys(...) or None"),
                "link_keys",
            )

    @property
    def expires(self) -> bool:
        return self.expires_in is not None or self.expires_at is not None

    def now(self) -> datetime:
        value = self.clock() if self.clock is not None else datetime.now(UTC)
        if not isinstance(value, datetime) or value.tzinfo is None:
            raise InvalidOptionError(
                f"clock: the approval clock returned {value!r:.80}; it must return an aware "
                "datetime (with a tzinfo), e.g. datetime.now(UTC)",
                "clock",
            )
        return value

    def deadline(self) -> datetime | None:
        """The deadline of a pause raised in the running task (``None``: none)."""
        if self.expires_at is not None:
            return _deadline(self.expires_at)
        if self.expires_in is None:
            return None
        return _step_time(self) + timedelta(seconds=_seconds(self.expires_in))

    def merged(self, **given: Any) -> ApprovalPolicy:
        """This policy with the explicitly ``given`` options (not ``None``) replacing its own."""
        options = {k: v for k, v in given.items() if v is not None}
        if not options:
            return self
        if "expires_in" in options or "expires_at" in options:
            base = {"expires_in": None, "expires_at": None}
        else:
            base = {}
        return ApprovalPolicy(
            **{
                **{f: getattr(self, f) for f in _FIELDS},
                **base,
                **options,
            }
        )


ApprovalPolicyOption = ApprovalPolicy | Mapping[str, ApprovalPolicy] | None
"""``approval_policy=``: one ``ApprovalPolicy`` for every pause, or one per node id."""

_FIELDS = (
    "expires_in",
    "expires_at",
    "on_expire",
    "approvers",
    "approvals_required",
    "clock",
    "link_keys",
)


def _seconds(value: timedelta | float) -> float:
    """``expires_in`` in seconds.

    Raises:
        InvalidOptionError: not a ``timedelta`` or a number; not positive and finite; longer
            than :data:`MAX_EXPIRES_IN`.
    """
    if isinstance(value, timedelta):
        seconds = value.total_seconds()
    elif isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidOptionError(
            option_text("expires_in", value, "pass a timedelta or a number of seconds"),
            "expires_in",
        )
    else:
        try:
            seconds = float(value)
        except OverflowError:  # an int too large for a float
            seconds = math.inf
    if not math.isfinite(seconds) or seconds <= 0:
        raise InvalidOptionError(
            option_text(
                "expires_in", value, "pass a positive duration (a timedelta or finite seconds)"
            ),
            "expires_in",
        )
    if seconds > MAX_EXPIRES_IN.total_seconds():
        raise InvalidOptionError(
            option_text(
                "expires_in",
                value,
                f"pass a duration of at most 100 years ({MAX_EXPIRES_IN.total_seconds():.0f} "
                "seconds); for an approval that never expires pass no expiry",
            ),
            "expires_in",
        )
    return seconds


def _deadline(value: datetime | str) -> datetime:
    """``expires_at`` as an aware UTC ``datetime``.

    Raises:
        InvalidOptionError: not ISO 8601, not aware, or past the last UTC time a ``datetime``
            holds.
    """
    given = value
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            raise InvalidOptionError(
                f"expires_at={value!r:.80}: pass an ISO 8601 time, e.g. "
                "'2026-01-31T17:00:00+00:00'",
                "expires_at",
            ) from None
    if not isinstance(value, datetime) or value.tzinfo is None:
        raise InvalidOptionError(
            option_text(
                "expires_at",
                given,
                "pass an aware datetime (with a tzinfo, e.g. UTC) or an ISO 8601 string with "
                "an offset",
            ),
            "expires_at",
        )
    try:
        return value.astimezone(UTC)
    except (OverflowError, ValueError):  # 9999-12-31T23:00-05:00 is past datetime.max in UTC
        raise InvalidOptionError(
            option_text(
                "expires_at",
                given,
                "the deadline is past 9999-12-31 in UTC, the last time a datetime holds: pass "
                "an earlier deadline, or no expiry",
            ),
            "expires_at",
        ) from None


def _check_approvers(rule: Any, required: int) -> None:
    """``approvers=``: a callable, or a list (or tuple) of names, ``"role:NAME"`` and
    ``"permission:NAME"`` entries that some answer can satisfy (``required`` distinct names when
    it names no role or permission: a group may hold any number of people).

    Raises:
        InvalidOptionError: anything else: a string, an iterator or generator (read once), a
            set or mapping, an entry that is no name, no entry at all, fewer distinct names
            than ``required`` and no role.
    """
    if rule is None or callable(rule):
        return
    what = (
        "pass a list of names (and 'role:NAME', 'permission:NAME' entries) or a callable "
        "rule(approver, pause_value) -> bool"
    )
    if isinstance(rule, str) or not isinstance(rule, list | tuple):
        how = ", as a list or tuple (an iterator is read only once; a set keeps no order)"
        raise InvalidOptionError(option_text("approvers", rule, what + how), "approvers")
    for entry in rule:
        if not isinstance(entry, str) or not entry or entry in (_ROLE, _PERMISSION):
            raise InvalidOptionError(
                option_text(
                    "approvers", rule, f"{entry!r:.40} is neither a name nor 'role:NAME': {what}"
                ),
                "approvers",
            )
    if not rule:
        raise InvalidOptionError(
            "approvers=[]: nobody could approve; name the approvers (or 'role:NAME' entries), "
            "or pass approvers=None to let anyone approve",
            "approvers",
        )
    groups = (_ROLE, _PERMISSION)
    names = {entry for entry in rule if not entry.startswith(groups)}
    roles = any(entry.startswith(groups) for entry in rule)
    if not roles and len(names) < required:  # a role may hold any number of people
        raise InvalidOptionError(
            f"approvals_required={required} but approvers= names only {len(names)} "
            f"({', '.join(sorted(names))}) and no role: no answer could ever approve it. "
            f"Name at least {required} approvers (or a 'role:NAME' entry), or lower "
            "approvals_required",
            "approvals_required",
        )


def _uuid_time(checkpoint_id: str) -> datetime | None:
    """The creation time of a LangGraph checkpoint id (a UUID version 6, time-ordered)."""
    try:
        u = uuid.UUID(checkpoint_id)
    except (TypeError, ValueError):
        return None
    if u.version != 6:
        return None
    h = u.hex
    ticks = int(h[:12] + h[13:16], 16)  # 100 ns since 1582-10-15 (RFC 9562, UUIDv6)
    return datetime(1582, 10, 15, tzinfo=UTC) + timedelta(microseconds=ticks // 10)


def _step_time(policy: ApprovalPolicy) -> datetime:
    """When the running tool's step began: the newest checkpoint of the task's graphs.

    Mirrors LangGraph's task config key ``checkpoint_map`` (``{namespace: checkpoint_id}``,
    set by ``langgraph.pregel._algo.prepare_single_task`` in langgraph 1.2, pinned by
    tests/test_approvals_production.py): the ids do not change when the task is resumed, so a
    duration counts from the same moment on every re-run. Without it (no checkpointer) the
    clock's time is used.
    """
    run = current_run()
    mapping = run.checkpoint_map if run is not None else {}
    times = [_uuid_time(str(v)) for v in mapping.values()]
    found = [t for t in times if t is not None]
    return max(found) if found else policy.now()


# --- the agent's policies: a context the tool node sets ---------------------------------

_scope: ContextVar[ApprovalPolicy | Mapping[str, ApprovalPolicy] | None] = ContextVar(
    "dynavec_approval_scope", default=None
)


_asked: ContextVar[tuple[str, tuple[str, ...]] | None] = ContextVar(
    "dynavec_declared_asks", default=None
)


@contextmanager
def policy_scope(tool: object) -> Iterator[None]:
    """Around one tool call of the agent: the policy the agent attached to ``tool``, and
    the node ids it declares (``asks``, checked by :func:`check_declared`)."""
    metadata = getattr(tool, "metadata", None)
    policy = metadata.get(POLICY_KEY) if isinstance(metadata, dict) else None
    asks = declared_asks(tool) if isinstance(metadata, dict) and ASKS_KEY in metadata else None
    if policy is None and asks is None:
        yield
        return
    token = None if policy is None else _scope.set(policy)
    declared = _asked.set(None if asks is None else (str(getattr(tool, "name", "")), asks))
    try:
        yield
    finally:
        _asked.reset(declared)
        if token is not None:
            _scope.reset(token)


def check_declared(node_id: str) -> None:
    """``interrupt(node_id, ...)`` in a tool that declares ``asks``: ``node_id`` is among
    them (else the agent's ``approval_policy=`` for the node ids it declared would silently
    not apply to this pause).

    Raises:
        InvalidOptionError: naming the tool, the node id and what it declared.
    """
    declared = _asked.get()
    if declared is None or node_id in declared[1]:
        return
    name, asks = declared
    raise InvalidOptionError(
        f"{name!r} declares asks={list(asks)!r} but asked {node_id!r}: add {node_id!r} to its "
        "asks= (a LangChain tool: metadata={'asks': [...]}), or pass a declared node id to "
        "interrupt()",
        "asks",
    )


def policy_for(
    node_id: str, given: Mapping[str, Any], policy: ApprovalPolicy | None = None
) -> ApprovalPolicy | None:
    """The policy of a pause at ``node_id``: ``policy`` (given to ``interrupt`` /
    ``require_approval``), else the agent's (for all nodes, or this node's), with the options
    ``given`` (not ``None``) on top; ``None`` when there is none (the plain pause, which pays
    nothing)."""
    _check_policy(policy)
    scoped = _scope.get()
    base = policy or (scoped.get(node_id) if isinstance(scoped, Mapping) else scoped)
    options = {k: v for k, v in given.items() if v is not None}
    if base is None and not options:
        return None
    return (base or ApprovalPolicy()).merged(**options)


def _check_policy(policy: Any) -> None:
    if policy is not None and not isinstance(policy, ApprovalPolicy):
        raise InvalidOptionError(
            option_text("policy", policy, "pass an ApprovalPolicy or None"), "policy"
        )


def checked_options(given: Mapping[str, Any], policy: ApprovalPolicy | None) -> ApprovalPolicy:
    """The options ``given`` to ``interrupt`` / ``require_approval`` (``None``: not given) on
    top of their ``policy=``, checked where they are given (the agent's policy, known only
    when the tool runs, is checked with them then, or by ``attach_policy`` for a
    ``require_approval`` tool).

    Raises:
        InvalidOptionError: an option of the wrong type or value, or options no answer can
            satisfy together (``approvals_required`` above the names of ``approvers``).
    """
    _check_policy(policy)
    return (policy or ApprovalPolicy()).merged(**given)


@dataclass(frozen=True)
class ApprovalPoint:
    """What a :func:`~dynavec_langgraph.approval.require_approval` tool asks, kept in its
    ``metadata[APPROVAL_POINT_KEY]``: its node id, and the check of an agent's policy for it
    (the tool's own options on top of it) that ``attach_policy`` runs when the agent is
    built."""

    node_id: str
    check: Callable[[ApprovalPolicy], None]
    """Raises :class:`InvalidOptionError` when the agent's policy cannot be used here."""


def check_asks(value: Any, tool_name: str) -> tuple[str, ...]:
    """``asks=`` of a tool (``@tool(asks=...)`` or ``metadata["asks"]``): the node ids, in
    the order given, without repeats.

    Raises:
        InvalidOptionError: anything but a list or tuple of non-empty strings.
    """
    what = (
        f"pass the node ids {tool_name!r} may pass to interrupt() as a list of non-empty "
        "strings, e.g. asks=['confirm_send'] (asks=[] for a tool that never pauses)"
    )
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) and v for v in value):
        raise InvalidOptionError(option_text("asks", value, what), "asks")
    return tuple(dict.fromkeys(value))


def declared_asks(tool: object) -> tuple[str, ...] | None:
    """The node ids ``tool`` asks when the agent is built: a ``require_approval`` tool's
    node id and the ``asks`` it declares; ``None`` when it declares none (its body may call
    ``interrupt()`` with any node id).

    Raises:
        InvalidOptionError: a ``metadata["asks"]`` that is no list of node ids.
    """
    metadata = getattr(tool, "metadata", None)
    if not isinstance(metadata, Mapping):
        return None
    point = metadata.get(APPROVAL_POINT_KEY)
    asks = metadata.get(ASKS_KEY)
    name = str(getattr(tool, "name", "the tool"))
    declared = None if asks is None else check_asks(asks, name)
    if isinstance(point, ApprovalPoint):
        return (point.node_id, *(d for d in declared or () if d != point.node_id))
    return declared


# --- events (wired to the audit trail by the lead) ------------------------------------


@dataclass(frozen=True)
class ApprovalEvent:
    """One thing that happened to a pause with a policy.

    ``kind``: ``"approved"`` (one approval of several, ``approved_by`` so far), ``"refused"``
    (an approver the policy does not allow, or one who already approved), ``"expired"``.
    ``key`` identifies the answer (thread, tool call, node, answer index): the same event
    seen twice (a tool re-run) has the same key.
    """

    kind: Literal["approved", "refused", "expired"]
    thread_id: str | None
    node_id: str
    tool_call_id: str | None
    approver: str | None
    at: str
    detail: str
    approved_by: tuple[str, ...]
    key: str
    on_expire: Any = None
    seconds: float | None = None


_listeners: list[Callable[[ApprovalEvent], None]] = []


def add_approval_listener(listener: Callable[[ApprovalEvent], None]) -> Callable[[], None]:
    """Call ``listener(event)`` for every :class:`ApprovalEvent`; returns a function that
    removes it. A failing listener never fails the run (its error is dropped)."""
    _listeners.append(listener)

    def remove() -> None:
        if listener in _listeners:
            _listeners.remove(listener)

    return remove


def _emit(event: ApprovalEvent) -> None:
    for listener in list(_listeners):
        try:
            listener(event)
        except Exception:  # a listener never fails the run (never GraphBubbleUp: not raised)
            continue


# --- answers ---------------------------------------------------------------------------


def approver_decision(decision: Any, approver: Approver) -> dict[str, Any]:
    """The resume value of ``decision`` given by ``approver``: what the doors send, and
    what a raw-graph caller sends (``Command(resume=approver_decision("approved", "alice"))``)."""
    return {"approver": approver, "decision": decision}


def expiry_answer() -> dict[str, Any]:
    """The resume value that settles an expired pause (the tool checks the deadline itself:
    before it, this answer is refused and the pause stays)."""
    return {_EXPIRED_KEY: True}


def _is_expiry(raw: Any) -> bool:
    return isinstance(raw, dict) and set(raw) == {_EXPIRED_KEY}


def _unwrap(raw: Any, from_config: bool) -> tuple[dict[str, Any] | None, Any]:
    """``(approver, decision)`` of an answer (the envelope, else the config's approver when
    ``from_config``: not with several approvers, whose earlier answers are replayed under the
    config of the latest run)."""
    if isinstance(raw, dict) and set(raw) == {"approver", "decision"}:
        return _approver(raw["approver"]), raw["decision"]
    if not from_config:
        return None, raw
    run = current_run()
    configured = None if run is None else run.approver
    return (_approver(configured) if configured is not None else None), raw


def _approver(value: Any) -> dict[str, Any]:
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


def _allowed(rule: ApproverRule | None, who: Mapping[str, Any], pause: Mapping[str, Any]) -> bool:
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
    names = {r for r in rule if not r.startswith((_ROLE, _PERMISSION))}
    roles = {r.removeprefix(_ROLE) for r in rule if r.startswith(_ROLE)}
    permissions = {r.removeprefix(_PERMISSION) for r in rule if r.startswith(_PERMISSION)}
    return (
        who["name"] in names
        or bool(roles & set(who.get("roles") or []))
        or bool(permissions & set(who.get("permissions") or []))
    )


def _signed(
    answerer: Answerer, raw: Any, policy: ApprovalPolicy
) -> tuple[dict[str, Any], Any, str | None, str | None]:
    """An answer given on a server with auth: ``(approver, decision, claimed, error)``.

    The signed-in user is the approver; the name the answer claims (its envelope, else the
    config's ``approver`` of the run that gave it) must be that user's, else ``claimed`` is
    that name and ``error`` says why it is refused. Roles an envelope claims are not read
    (the server's user has its own). A user the server let in unauthenticated (Studio's local
    user) cannot approve a pause that needs a named approver (``error``)."""
    claim, decision = _unwrap(raw, False)
    if claim is None and answerer.configured is not None:
        claim = _approver(answerer.configured)
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
                _emit(held)
            if isinstance(paused, GraphInterrupt):  # recorded, then raised on: never swallowed
                _audit.on_pause(value, paused.args[0] if paused.args else (), error is not None)
            raise
        index += 1
        held, error, refused, nameless, claimed = None, None, None, False, None
        who: dict[str, Any] | None = None

        if deadline is not None and _run_policy(node_id, "clock", policy.now) >= deadline:
            reason = f"the approval of {node_id!r} expired at {_iso(deadline)}"
            _emit(event("expired", None, reason))
            _note(value, raw, index, who, None, "expired", reason)
            return on_expired(reason)
        if _is_expiry(raw):
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
                    who, inner = _unwrap(check_bound(raw, value), policy.approvals_required == 1)
                else:
                    who, inner, claimed, error = _signed(answerer, check_bound(raw, value), policy)
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
            node_id, "approvers", _allowed, policy.approvers, who, value
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


# --- the doors ---------------------------------------------------------------------------


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
    who = _approver(approver)
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
            and not any(str(r).startswith(_PERMISSION) for r in rule)  # the server knows them
            and not _allowed(rule, who, pending.value)
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


def timeout_error(events: Sequence[ApprovalEvent]) -> Exception | None:
    """dynavec's ``ApprovalTimeoutError`` for the first expiry in ``events`` whose policy
    says ``on_expire="raise"``, else ``None``."""
    from dynavec_langgraph.exceptions import ApprovalTimeoutError

    for e in events:
        if e.kind == "expired" and e.on_expire == EXPIRE:
            return ApprovalTimeoutError(e.thread_id, e.node_id, e.seconds)
    return None


@contextmanager
def collected() -> Iterator[list[ApprovalEvent]]:
    """The events emitted while the block runs (in any thread of this process)."""
    seen: list[ApprovalEvent] = []
    remove = add_approval_listener(seen.append)
    try:
        yield seen
    finally:
        remove()


@contextmanager
def raise_timeouts(thread_id: str | None) -> Iterator[None]:
    """Around a door's run of ``thread_id``: an expiry whose policy says
    ``on_expire="raise"`` raises dynavec's ``ApprovalTimeoutError`` once the run is done (the
    pause is settled in the thread: the tool was answered with a rejection)."""
    with collected() as seen:
        yield
    error = timeout_error([e for e in seen if e.thread_id == thread_id])
    if error is not None:
        raise error


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
