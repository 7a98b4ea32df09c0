"""The approval policy (``ApprovalPolicy``), the checks of its options and its deadline's
clock."""

from __future__ import annotations

import math
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from dynavec_langgraph._approvals.links import LinkKeys
from dynavec_langgraph._errors import InvalidOptionError, option_text
from dynavec_langgraph._graph.run_data import current_run
from dynavec_langgraph._types import ApproverRule

__all__ = [
    "EXPIRE",
    "MAX_EXPIRES_IN",
    "PERMISSION",
    "ROLE",
    "ApprovalPolicy",
    "ApprovalPolicyOption",
    "Approver",
]


EXPIRE: Final = "raise"
"""``on_expire=EXPIRE``: the doors of this package raise dynavec's ``ApprovalTimeoutError``
after settling the pause (the tool is answered with a rejection)."""


MAX_EXPIRES_IN: Final = timedelta(days=36525)
"""The longest ``expires_in``, a hundred years: a deadline further away is no deadline (and
one past the year 9999 fits in no ``datetime``)."""


Approver = str | Mapping[str, Any]
"""Who answers: a name, or ``{"name": ..., "roles": [...]}``."""


ROLE: Final = "role:"


PERMISSION: Final = "permission:"


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
        if not isinstance(entry, str) or not entry or entry in (ROLE, PERMISSION):
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
    groups = (ROLE, PERMISSION)
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
