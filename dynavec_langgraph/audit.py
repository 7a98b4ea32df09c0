"""The audit trail of a thread's approvals and the notification outbox of its pauses
(docs/audit-and-notifications.md).

``ReActAgent(audit=True)`` / ``ReActAgent(notify=URL_OR_CALLABLE)`` turn them on for an agent,
``config={"configurable": {AUDIT_KEY: True, NOTIFY_KEY: url}}`` for a graph of
``create_react_agent`` (``DYNAVEC_AUDIT=1`` / ``DYNAVEC_NOTIFY_URL`` for a server). Read a
trail with ``agent.audit(thread_id)``, :func:`audit_trail` (a checkpointer or a store),
``RemoteReActAgent.audit(thread_id)`` or ``dynavec-langgraph inbox history THREAD``; send what
is still in the outbox with :func:`deliver` or ``dynavec-langgraph inbox notify`` (the sweeper).

Every entry is chained to the one before it in its thread (``seq``, ``prev_hash``, ``hash``);
:func:`verify` (``dynavec-langgraph audit verify``) names every entry edited, deleted,
reordered or inserted since.
"""

from __future__ import annotations

from typing import Any

from dynavec_langgraph._audit.entries import GENESIS, AuditEvent, entry_hash
from dynavec_langgraph._audit.notifications import (
    Delivery,
    deliver,
    enqueue,
    notification_body,
    outbox,
    wait_for_deliveries,
)
from dynavec_langgraph._audit.trail import aaudit_trail, arecord, audit_trail, record
from dynavec_langgraph._audit.verify import ThreadTrail, TrailProblem, TrailReport
from dynavec_langgraph._names import APPROVER_KEY, AUDIT_KEY, NOTIFY_KEY, SURFACE_KEY

__all__ = [
    "APPROVER_KEY",
    "AUDIT_KEY",
    "GENESIS",
    "NOTIFY_KEY",
    "SURFACE_KEY",
    "AuditEvent",
    "Delivery",
    "ThreadTrail",
    "TrailProblem",
    "TrailReport",
    "aaudit_trail",
    "arecord",
    "audit_trail",
    "deliver",
    "enqueue",
    "entry_hash",
    "notification_body",
    "outbox",
    "record",
    "verify",
    "wait_for_deliveries",
]


def verify(target: Any, thread_id: str | None = None) -> TrailReport:
    """Verify the hash chain of ``thread_id``'s audit trail in ``target`` (the thread's
    checkpointer, or the server's store), or of every trail there (``None``): each entry's
    hash, its link to the entry before it and its place. Reads only.

    The report names every entry edited, deleted (from the start or the middle), reordered or
    inserted (:class:`TrailProblem`); entries written before the chain existed (no hash) are
    counted as ``unchained``, not as tampering. Entries cut off the end cannot be told from
    a trail that ends there: compare ``head_seq`` / ``head_hash`` with values kept elsewhere.

    Raises:
        TypeError: ``target`` is no checkpointer or store.
        StorageError: the storage failed.

    Example:
        >>> from langgraph.checkpoint.memory import InMemorySaver
        >>> saver = InMemorySaver()
        >>> _ = record(saver, "t1", "expired", outcome="rejected", surface="sweeper")
        >>> report = verify(saver)
        >>> report.ok, [(t.thread_id, t.chained, t.head_seq) for t in report.threads]
        (True, [('t1', 1, 1)])
    """
    from dynavec_langgraph._approvals.inbox import verify_trails

    return verify_trails(target, thread_id)
