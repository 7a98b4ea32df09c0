"""Which policy a pause gets: the agent's policies set around a tool call, the options given, and
the node ids a tool declares."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from dynavec_langgraph._errors import InvalidOptionError, option_text
from dynavec_langgraph._names import APPROVAL_POINT_KEY, ASKS_KEY, POLICY_KEY
from dynavec_langgraph._pauses.policy.spec import ApprovalPolicy

__all__ = [
    "ApprovalPoint",
    "check_asks",
    "check_declared",
    "checked_options",
    "declared_asks",
    "policy_for",
    "policy_scope",
]


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
