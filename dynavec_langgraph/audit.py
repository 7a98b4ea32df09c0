"""The audit trail of a thread's approvals and the notification outbox of its pauses
(docs/audit-and-notifications.md).

``ReActAgent(audit=True)`` / ``ReActAgent(notify=URL_OR_CALLABLE)`` turn them on for an agent,
``config={"configurable": {AUDIT_KEY: True, NOTIFY_KEY: url}}`` for a graph of
``create_react_agent`` (``DYNAVEC_AUDIT=1`` / ``DYNAVEC_NOTIFY_URL`` for a server). Read a
trail with ``agent.audit(thread_id)``, :func:`audit_trail` (a checkpointer or a store),
``RemoteReActAgent.audit(thread_id)`` or ``dynavec-langgraph inbox history THREAD``; send what
is still in the outbox with :func:`deliver` or ``dynavec-langgraph inbox notify`` (the sweeper).
"""

from __future__ import annotations

from dynavec_langgraph._audit import (
    APPROVER_KEY,
    AUDIT_KEY,
    NOTIFY_KEY,
    SURFACE_KEY,
    AuditEvent,
    Delivery,
    Notifier,
    aaudit_trail,
    arecord,
    audit_trail,
    deliver,
    enqueue,
    notification_body,
    outbox,
    record,
    wait_for_deliveries,
)

__all__ = [
    "APPROVER_KEY",
    "AUDIT_KEY",
    "NOTIFY_KEY",
    "SURFACE_KEY",
    "AuditEvent",
    "Delivery",
    "Notifier",
    "aaudit_trail",
    "arecord",
    "audit_trail",
    "deliver",
    "enqueue",
    "notification_body",
    "outbox",
    "record",
    "wait_for_deliveries",
]
