"""Notification on pause: the body a receiver gets, the outbox it waits in and its delivery
(at least once: in the background of the process that paused, then by the sweeper)."""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Final

from dynavec_langgraph._approvals.links import notification_links
from dynavec_langgraph._audit.entries import (
    Notifier,
    check_entry,
    event_id,
    first_text,
    jsonable,
    now,
)
from dynavec_langgraph._audit.storage import check_target, read, write
from dynavec_langgraph._errors import InvalidInputError
from dynavec_langgraph._names import OUTBOX_NS
from dynavec_langgraph._storable import brief, check_id
from dynavec_langgraph._types import JSONMapping, JSONObject, UserPayload

if TYPE_CHECKING:
    from dynavec_langgraph._audit.storage import Target

__all__ = [
    "IN_PROCESS_BACKOFF",
    "IN_PROCESS_TRIES",
    "MAX_BACKOFF",
    "SWEEPER_BACKOFF",
    "Delivery",
    "deliver",
    "deliver_soon",
    "digest_of",
    "enqueue",
    "notification_body",
    "outbox",
    "outbox_entry",
    "wait_for_deliveries",
]

IN_PROCESS_TRIES: Final = 4
"""Tries of the background delivery of the process that paused (then the sweeper's turn)."""
IN_PROCESS_BACKOFF: Final = 0.5
"""Seconds before its second try; doubled after each failed one."""
SWEEPER_BACKOFF: Final = 30.0
"""Seconds the sweeper waits after a failed try before trying again; doubled each time, at
most :data:`MAX_BACKOFF`."""
MAX_BACKOFF: Final = 3600.0


def digest_of(value: JSONMapping) -> str | None:
    """The pause's review digest (``review_digest``, dynavec_langgraph._pauses.digest), if any."""
    return first_text(value, ("review_digest", "digest"))


def notification_body(
    thread_id: str,
    kind: str,
    value: UserPayload,
    interrupt_id: str | None,
    *,
    event_id: str,
    db: str | None = None,
) -> JSONObject:
    """What a receiver gets for a pause ``value`` (an :class:`InterruptValue` or any
    interrupt value): the thread, the approval, the call, and how to answer it."""
    value = value if isinstance(value, Mapping) else {"payload": value}
    node = value.get("node_id")
    target = interrupt_id or node or "NODE_ID"
    answer = ["dynavec-langgraph", "inbox", "answer", "--db", db or "DB", "--thread", thread_id]
    answer += ["--node", str(target), "--approve"]
    links = notification_links(thread_id, value) if kind in ("paused", "reasked") else None
    return {
        **(links or {}),
        "event_id": event_id,
        "event": kind,
        "at": now(),
        "thread_id": thread_id,
        "interrupt_id": interrupt_id,
        "node_id": node,
        "payload": jsonable(value.get("payload")),
        "tool_call": jsonable(value.get("tool_call")),
        "description": value.get("description"),
        "error": value.get("error"),
        "allowed_decisions": value.get("allowed_decisions"),
        # an approval policy's fields (dynavec_langgraph._pauses.policy): the deadline, who approved
        "deadline": value.get("expires_at", value.get("deadline")),
        "approvals": _approvals(value),
        "digest": digest_of(value),
        "resume": {
            "command": " ".join(answer),
            "python": f"agent.resume('approved', thread_id={thread_id!r})",
            "langgraph": {"resume": {str(target): "approved"}},
        },
    }


def _approvals(value: JSONMapping) -> Any:
    """Who has approved so far: the policy's ``approval.approved_by`` (with the count needed),
    or a value's own ``approvals`` / ``approved_by``."""
    state = value.get("approval")
    if isinstance(state, Mapping):
        return {
            "approved_by": list(state.get("approved_by") or []),
            "required": state.get("approvals_required"),
        }
    return value.get("approvals", value.get("approved_by"))


def outbox_entry(body: JSONMapping) -> JSONObject:
    at = body.get("at") or now()
    return {"event_id": body["event_id"], "type": "event", "at": at, "body": dict(body)}


def enqueue(target: object, thread_id: str, body: JSONMapping) -> None:
    """Put one notification ``body`` (with its ``event_id``) in ``thread_id``'s outbox, for
    features that notify outside the graph (an expiry settled by a sweeper).

    Raises:
        TypeError: ``target`` is no checkpointer or store.
        InvalidInputError: ``body`` is no mapping, has no ``event_id`` (a non-empty string,
            the same for every retry of one notification: :func:`event_id` builds one), or
            holds what no saver stores as it is (as :func:`record`); nothing was written.
    """
    target = check_target(target)
    if not isinstance(body, Mapping):
        raise InvalidInputError(
            f"body={brief(body, 80)}: pass the notification as a dict with its 'event_id' "
            "(notification_body(...) builds one); nothing was written",
            "body",
        )
    if not isinstance(body.get("event_id"), str) or not body["event_id"]:
        raise InvalidInputError(
            f"body['event_id']={brief(body.get('event_id'), 80)}: a notification needs its "
            "event_id, a non-empty string that is the same for every retry of it (the "
            "receiver drops duplicates by it; event_id(...) builds one); nothing was written",
            "body['event_id']",
        )
    check_entry(thread_id, {"body": dict(body)})
    write(target, OUTBOX_NS, thread_id, outbox_entry(body))


@dataclass(frozen=True)
class Delivery:
    """One outbox entry: its body, how many tries failed, and when the next is due."""

    event_id: str
    body: JSONObject
    delivered: bool
    tries: int
    next_at: float
    last_error: str | None

    def as_dict(self) -> JSONObject:
        return asdict(self)


def outbox(target: object, thread_id: str) -> list[Delivery]:
    """Every notification of ``thread_id`` in ``target``, oldest first, with its state."""
    target = check_target(target)
    check_id(thread_id, "thread_id")
    entries = read(target, OUTBOX_NS, thread_id)
    tries: dict[str, list[JSONObject]] = {}
    for e in entries:
        if e.get("type") == "try":
            tries.setdefault(str(e["of"]), []).append(e)
    found = []
    for e in entries:
        if e.get("type") != "event":
            continue
        done = tries.get(str(e["event_id"]), [])
        failed = [t for t in done if not t.get("ok")]
        last = failed[-1] if failed else None
        found.append(
            Delivery(
                event_id=str(e["event_id"]),
                body=dict(e["body"]),
                delivered=any(t.get("ok") for t in done),
                tries=len(failed),
                next_at=float(last["next_at"]) if last else 0.0,
                last_error=str(last["error"]) if last else None,
            )
        )
    return found


def _send(notify: Notifier, body: JSONMapping, timeout: float) -> None:
    if callable(notify):
        notify(dict(body))
        return
    import httpx

    eid = str(body["event_id"])
    headers = {"X-Dynavec-Event-Id": eid, "Idempotency-Key": eid}
    response = httpx.post(notify, json=dict(body), headers=headers, timeout=timeout)
    response.raise_for_status()


def _backoff(tries: int, base: float) -> float:
    return float(min(base * 2 ** max(tries - 1, 0), MAX_BACKOFF))


def deliver(
    target: object,
    thread_id: str,
    notify: Notifier,
    *,
    backoff: float = SWEEPER_BACKOFF,
    force: bool = False,
    timeout: float = 10.0,
) -> tuple[int, int]:
    """Send ``thread_id``'s undelivered notifications that are due (all with ``force``);
    record each try. Returns ``(delivered, failed)``; never raises for the receiver."""
    target = check_target(target)
    sent = failed = 0
    for item in outbox(target, thread_id):
        if item.delivered or (not force and item.next_at > time.time()):
            continue
        try:
            _send(notify, item.body, timeout)
        except Exception as error:  # any receiver failure is a failed try, never the caller's
            failed += 1
            tries = item.tries + 1
            eid = event_id("try", item.event_id, tries, time.time_ns())
            error_text = f"{type(error).__name__}: {error}"[:500]
            retry = {"error": error_text, "next_at": time.time() + _backoff(tries, backoff)}
            _tried(target, thread_id, item.event_id, eid, False, retry)
            continue
        sent += 1
        eid = event_id("delivered", item.event_id)
        _tried(target, thread_id, item.event_id, eid, True, {})
    return sent, failed


def _tried(
    target: Target, thread_id: str, of: str, eid: str, ok: bool, failure: JSONMapping
) -> None:
    """Record a try to deliver the notification ``of`` in the outbox (``failure``: what a
    failed one adds, its error and when to try again)."""
    entry = {"event_id": eid, "type": "try", "of": of, "ok": ok, "at": now(), **failure}
    write(target, OUTBOX_NS, thread_id, entry)


def deliver_soon(target: Target, thread_id: str, notify: Notifier) -> threading.Thread:
    """Send ``thread_id``'s outbox from a daemon thread: up to :data:`IN_PROCESS_TRIES`
    rounds, waiting :data:`IN_PROCESS_BACKOFF` seconds (doubled each time) after a failed one;
    what is still undelivered then is the sweeper's. The run that paused does not wait for it."""

    def work() -> None:
        wait = IN_PROCESS_BACKOFF
        for _ in range(IN_PROCESS_TRIES):
            try:
                _, failed = deliver(target, thread_id, notify, backoff=wait, force=True)
            except Exception:  # storage gone (process ending): the sweeper sends it later
                return
            if not failed:
                return
            time.sleep(wait)
            wait *= 2

    worker = threading.Thread(target=work, name=f"dynavec-notify-{thread_id}", daemon=True)
    worker.start()
    _workers.append(worker)
    del _workers[:-64]
    return worker


_workers: list[threading.Thread] = []


def wait_for_deliveries(timeout: float = 10.0) -> None:
    """Wait for this process's background deliveries (tests, or before a planned exit)."""
    end = time.monotonic() + timeout
    for worker in list(_workers):
        worker.join(max(0.0, end - time.monotonic()))
