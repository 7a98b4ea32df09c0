"""The audit trail of a thread on a LangGraph API server, read through ``langgraph_sdk``.

On a server the graph records its trail in the server's store (see
:mod:`dynavec_langgraph._audit`): items under ``(AUDIT_NS, <server thread id>)``. This module
reads them back (``RemoteReActAgent.audit``, which ``dynavec-langgraph inbox history --server``
calls), verifies their chain (:func:`verify_items`, for ``RemoteReActAgent.verify_audit`` and
``dynavec-langgraph audit verify --server``) and records what only the client sees (a resume
the server refused as concurrent), chained after the server's entries like any other
(:func:`dynavec_langgraph._audit.storage.append_item`). Every read is an API request with the
client's credentials: the server's auth handler decides who may read the trails.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dynavec_langgraph._audit.entries import AuditEvent, make_event
from dynavec_langgraph._audit.storage import append_item, ordered
from dynavec_langgraph._audit.trail import events_of
from dynavec_langgraph._audit.verify import TrailReport, check_items
from dynavec_langgraph._names import AUDIT_KEY, AUDIT_NS, NOTIFY_KEY, SURFACE_KEY
from dynavec_langgraph._types import JSONMapping, JSONObject, UserPayload

__all__ = ["events_of_items", "run_config", "verify_items"]

_PAGE = 100


def run_config(audit: bool, notify: str | None) -> JSONObject | None:
    """The run ``config`` that turns recording on for the runs a client sends, or ``None``.

    Raises:
        ValueError: ``notify`` is no http(s) URL (a callable cannot travel to a server).
    """
    if notify is not None and not (
        isinstance(notify, str) and notify.startswith(("http://", "https://"))
    ):
        raise ValueError(
            f"notify={notify!r:.80}: a server calls a webhook URL (http:// or https://); a "
            "callable cannot be sent to it"
        )
    if not audit and notify is None:
        return None
    configurable: JSONObject = {AUDIT_KEY: True, SURFACE_KEY: "api"}
    if notify is not None:
        configurable[NOTIFY_KEY] = notify
    return {"configurable": configurable}


def events_of_items(items: Sequence[JSONMapping]) -> list[AuditEvent]:
    """The audit entries of the store items ``store.search_items`` returned, oldest first."""
    values = [dict(i["value"]) for i in items if isinstance(i.get("value"), Mapping)]
    return events_of(ordered(values))


def read_items(sync_client: Any, server_thread: str) -> list[AuditEvent]:
    """Every audit entry of ``server_thread`` through a ``langgraph_sdk`` sync client."""
    items: list[JSONMapping] = []
    while True:
        page = sync_client.store.search_items(
            [AUDIT_NS, server_thread], limit=_PAGE, offset=len(items)
        )["items"]
        items += page
        if len(page) < _PAGE:
            return events_of_items(items)


async def aread_items(client: Any, server_thread: str) -> list[AuditEvent]:
    """Async twin of :func:`read_items`."""
    items: list[JSONMapping] = []
    while True:
        result = await client.store.search_items(
            [AUDIT_NS, server_thread], limit=_PAGE, offset=len(items)
        )
        page = result["items"]
        items += page
        if len(page) < _PAGE:
            return events_of_items(items)


class _ServerItems:
    """The items of one thread's trail in a server's store, through a ``langgraph_sdk`` sync
    client (``append_item``'s ``Items``)."""

    def __init__(self, sync_client: Any, server_thread: str) -> None:
        self.store, self.ns = sync_client.store, [AUDIT_NS, server_thread]

    def values(self) -> list[tuple[str, JSONMapping]]:
        items: list[JSONMapping] = []
        while True:
            page = self.store.search_items(self.ns, limit=_PAGE, offset=len(items))["items"]
            items += page
            if len(page) < _PAGE:
                return [(str(i["key"]), i["value"]) for i in items]

    def with_seq(self, seq: int) -> list[str]:
        found = self.store.search_items(self.ns, filter={"seq": seq}, limit=_PAGE)["items"]
        return [str(i["key"]) for i in found]

    def put(self, key: str, value: JSONObject) -> None:
        self.store.put_item(self.ns, key, value, index=False)

    def delete(self, key: str) -> None:
        self.store.delete_item(self.ns, key)


def _trail_threads(sync_client: Any) -> list[str]:
    """The server threads that have a trail: the namespaces under :data:`AUDIT_NS`."""
    spaces: list[Sequence[str]] = []
    while True:
        page = sync_client.store.list_namespaces(
            prefix=[AUDIT_NS], max_depth=2, limit=_PAGE, offset=len(spaces)
        )["namespaces"]
        spaces += page
        if len(page) < _PAGE:
            return sorted({str(ns[1]) for ns in spaces if len(ns) == 2})


def verify_items(sync_client: Any, server_thread: str | None) -> TrailReport:
    """Verify the chain of ``server_thread``'s trail in the server's store (every trail there
    when ``None``), read through a ``langgraph_sdk`` sync client; reads only."""
    ids = [server_thread] if server_thread is not None else _trail_threads(sync_client)
    checked = [check_items(_ServerItems(sync_client, t), t) for t in ids]
    kept = [
        c for c in checked if server_thread is not None or c.chained or c.unchained or c.problems
    ]
    return TrailReport(tuple(kept))


def record_refusal(
    sync_client: Any, server_thread: str, decision: UserPayload, error: Exception
) -> None:
    """Record a resume refused as concurrent in the server's store (the run never started,
    so the graph could not)."""
    event = make_event(
        server_thread,
        "refused",
        outcome="concurrent resume refused",
        surface="api",
        decision=decision,
        comment=str(error),
    )
    append_item(_ServerItems(sync_client, server_thread), server_thread, event.as_dict())
