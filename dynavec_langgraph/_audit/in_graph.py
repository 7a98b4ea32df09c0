"""What a running graph records where decisions are read: the hooks a pause and a decision
call (:func:`on_pause`, :func:`on_decision`, :func:`written`), returned by
:func:`dynavec_langgraph._audit.hooks.recorder` when the run switches recording on."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.store.base import BaseStore
from langgraph.types import Interrupt

from dynavec_langgraph._audit.entries import SURFACES, Notifier, event_id, first_text, make_event
from dynavec_langgraph._audit.notifications import (
    deliver_soon,
    digest_of,
    notification_body,
    outbox_entry,
)
from dynavec_langgraph._audit.storage import last_task, write
from dynavec_langgraph._audit.switch import audit_flag, notifier
from dynavec_langgraph._graph.run_data import SignedIn
from dynavec_langgraph._names import APPROVER_KEY, AUDIT_NS, OUTBOX_NS, SURFACE_KEY
from dynavec_langgraph._types import JSONMapping, JSONObject, UserPayload

if TYPE_CHECKING:
    from dynavec_langgraph._audit.storage import Target

__all__ = [
    "mirrored_interrupt_id",
    "on_decision",
    "on_pause",
    "written",
]

# The graph's checkpointer, as LangGraph passes it to a running node: langgraph 1.2
# (langgraph._internal._constants.CONFIG_KEY_CHECKPOINTER); pinned by tests/test_audit.py.
_CHECKPOINTER_KEY: Final = "__pregel_checkpointer"


@dataclass(frozen=True)
class _Setting:
    target: Target
    thread_id: str
    ns: str
    audit: bool
    notify: Notifier | None
    surface: str
    who: str | None
    signed_in: str | None = None
    """The user a LangGraph API server with auth signed in for the run (its identity), when
    that user is who answers
    (:attr:`~dynavec_langgraph._graph.run_data.SignedIn.proves_approver`)."""


def _setting(conf: JSONMapping) -> _Setting | None:
    notify = notifier(conf)
    audit = audit_flag(conf) or notify is not None
    if not audit:
        return None
    from langgraph.config import get_store

    try:
        store = get_store()
    except RuntimeError:
        store = None
    target = store if store is not None else conf.get(_CHECKPOINTER_KEY)
    if not isinstance(target, BaseCheckpointSaver | BaseStore) or "thread_id" not in conf:
        return None  # nothing durable to record in: a graph run without a checkpointer
    surface = conf.get(SURFACE_KEY)
    if surface not in SURFACES:
        surface = "server" if "assistant_id" in conf else "graph"
    who = conf.get(APPROVER_KEY) or conf.get("langgraph_auth_user_id") or None
    user = SignedIn.of(conf)
    return _Setting(
        target,
        str(conf["thread_id"]),
        str(conf.get("checkpoint_ns", "")),
        audit,
        notify,
        str(surface),
        str(who) if who is not None else None,
        user.name if user is not None and user.proves_approver else None,
    )


def _current() -> _Setting | None:
    from langgraph.config import get_config

    try:
        conf = get_config().get("configurable") or {}
    except RuntimeError:
        return None
    return _setting(conf)


def _pause_fields(value: UserPayload) -> JSONObject:
    value = value if isinstance(value, Mapping) else {}
    call = value.get("tool_call")
    return {
        "node_id": value.get("node_id"),
        "tool_call_id": call.get("id") if isinstance(call, Mapping) else None,
        "digest": digest_of(value),
    }


def mirrored_interrupt_id(ns: str, answered: int) -> str:
    """The id LangGraph gives the interrupt that fills answer slot ``answered`` of the task
    ``ns`` (mirrors ``langgraph.types._interrupt_id`` of langgraph 1.2; pinned by
    tests/test_audit.py)."""
    from xxhash import xxh3_128_hexdigest

    return xxh3_128_hexdigest((f"{ns}|{answered}" if answered else ns).encode())


def _who(raw: UserPayload, setting: _Setting) -> str | None:
    """The approver: named in the decision (``approver`` / ``as`` / ``user``), else the config's."""
    items = raw.get("decisions") if isinstance(raw, Mapping) else raw
    candidates = items if isinstance(items, list) else [raw]
    for item in [raw, *candidates]:
        if isinstance(item, Mapping):
            for key in ("approver", "as", "user"):
                if isinstance(item.get(key), str):
                    return str(item[key])
    return setting.who


def _comment(raw: UserPayload) -> str | None:
    items = raw.get("decisions") if isinstance(raw, Mapping) else raw
    first = items[0] if isinstance(items, list) and items else raw
    return first_text(first, ("comment", "message")) if isinstance(first, Mapping) else None


def on_decision(
    value: UserPayload,
    raw: UserPayload,
    index: int,
    refused: str | None,
    *,
    kind: str | None = None,
    outcome: str | None = None,
    who: str | None = None,
    authenticated_by: str | None = None,
) -> None:
    """Record a decision ``ask`` read for the pause ``value`` (its ``index``-th ask):
    accepted, or refused with the reason ``refused``. A no-op unless recording is on.

    An approval policy's rules in the ask loop
    (``dynavec_langgraph._pauses.policy.ask.PolicyRules``) name their own ``kind``
    (``"expired"``), ``outcome`` (``"approval 1 of 2"``) and approver ``who``, and
    how ``who`` was identified: ``authenticated_by`` ``"server"`` (the user a LangGraph API
    server with auth signed in) or ``"explicit"`` (named in the answer or the run's config),
    stored as the entry's ``authenticated_by``. A plain pause names none: on a server with
    auth its answer is the signed-in user's (``"server"``; the first run that reads an answer
    is the one that gave it, and a replay writes the same event id, kept once), else the name
    the answer or the config carries (``"explicit"``)."""
    setting = _current()
    if setting is None:
        return
    if who is None and setting.signed_in is not None:
        who, authenticated_by = setting.signed_in, "server"
    fields = _pause_fields(value)
    interrupt_id = mirrored_interrupt_id(setting.ns, index)
    default_kind, default_outcome = ("refused", refused) if refused else ("decision", "accepted")
    kind, outcome = kind or default_kind, outcome or default_outcome
    eid = event_id("decision", setting.thread_id, setting.ns, index, fields["node_id"], raw)
    if kind == "expired" and setting.notify is not None:  # approvers hear of an expiry too
        body = notification_body(setting.thread_id, kind, value, interrupt_id, event_id=eid)
        write(setting.target, OUTBOX_NS, setting.thread_id, outbox_entry(body))
        _notify(setting)
    if not setting.audit:
        return
    event = make_event(
        setting.thread_id,
        kind,
        outcome=outcome,
        surface=setting.surface,
        who=who or _who(raw, setting),
        interrupt_id=interrupt_id,
        decision=raw,
        comment=_comment(raw),
        event_id=eid,
        authenticated_by=authenticated_by if who else None,
        **fields,
    )
    write(setting.target, AUDIT_NS, setting.thread_id, event.as_dict())


def on_pause(value: UserPayload, interrupts: Sequence[Interrupt], reasked: bool) -> None:
    """Record a pause ``ask`` raised (``interrupts``: the ``GraphInterrupt``'s), put its
    notification in the outbox and start sending it. A no-op unless recording is on; never
    raises for a receiver (delivery runs in the background)."""
    setting = _current()
    if setting is None:
        return
    fields = _pause_fields(value)
    interrupt = interrupts[0] if interrupts else None
    iid = interrupt.id if interrupt is not None else None
    kind = "reasked" if reasked else "paused"
    eid = event_id("pause", setting.thread_id, iid, fields["node_id"])
    if setting.audit:
        error = value.get("error") if isinstance(value, Mapping) else None
        event = make_event(
            setting.thread_id,
            kind,
            outcome="waiting",
            surface=setting.surface,
            interrupt_id=iid,
            comment=error if isinstance(error, str) else None,
            event_id=eid,
            **fields,
        )
        write(setting.target, AUDIT_NS, setting.thread_id, event.as_dict())
    if setting.notify is not None:
        body = notification_body(setting.thread_id, kind, value, iid, event_id=eid)
        write(setting.target, OUTBOX_NS, setting.thread_id, outbox_entry(body))
        _notify(setting)


def _notify(setting: _Setting) -> None:
    """Start sending the thread's outbox, once the entries a task of the running loop still
    writes (:func:`write` on a server's event loop) are written."""
    assert setting.notify is not None
    task = last_task.get((id(setting.target), setting.thread_id))
    if task is None or task.done():
        deliver_soon(setting.target, setting.thread_id, setting.notify)
        return
    target, thread_id, notify = setting.target, setting.thread_id, setting.notify
    task.add_done_callback(lambda _: deliver_soon(target, thread_id, notify))


async def written() -> None:
    """Wait until the running graph run's audit and outbox entries that tasks of this event
    loop write (:func:`write`, on a LangGraph API server's loop) are written: the tool node
    awaits it after an async tool, so the run ends after its trail. A no-op elsewhere."""
    setting = _current()
    if setting is None:
        return
    task = last_task.get((id(setting.target), setting.thread_id))
    if task is not None and not task.done():
        await asyncio.wait({task})  # each task waits for the one before: the last ends last
