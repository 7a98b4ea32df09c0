"""What happened to a pause with a policy (``ApprovalEvent``), its listeners, and the expiries a
door raises."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal

from dynavec_langgraph._pauses.policy.spec import EXPIRE

__all__ = [
    "ApprovalEvent",
    "EventKind",
    "add_approval_listener",
    "collected",
    "emit",
    "raise_timeouts",
    "timeout_error",
]

EventKind = Literal["approved", "refused", "expired"]
"""What happened to a pause with a policy: one approval of several, a refused approver, its
expiry."""


@dataclass(frozen=True)
class ApprovalEvent:
    """One thing that happened to a pause with a policy.

    ``kind``: ``"approved"`` (one approval of several, ``approved_by`` so far), ``"refused"``
    (an approver the policy does not allow, or one who already approved), ``"expired"``.
    ``key`` identifies the answer (thread, tool call, node, answer index): the same event
    seen twice (a tool re-run) has the same key.
    """

    kind: EventKind
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


def emit(event: ApprovalEvent) -> None:
    for listener in list(_listeners):
        try:
            listener(event)
        except Exception:  # a listener never fails the run (never GraphBubbleUp: not raised)
            continue


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
