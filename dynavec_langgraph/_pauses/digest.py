"""Decisions bound to the reviewed action: the review digest of a pause (docs/approval-uis.md).

Every pause this package raises carries ``review_digest``: a hash of what the person reviews
(the thread, the tool call's id, name and canonical arguments, the approval point, the action
and its arguments, the payload) and of *which ask* it is (how many decisions this approval
refused before: a re-asked approval is another pause; and, for the second and later
approvals one tool call asks, its position among them, :func:`next_slot`: a tool that asks
twice with the same payload asks two pauses, and an answer bound to the first is refused by
the second). A decision may carry it back
(:func:`bind_decision`); the paused tool reads it where it reads the decision
(:func:`check_bound`, called by :func:`dynavec_langgraph._pauses.ask.ask`) and refuses a
decision bound to another pause: the same approval is asked again under the *same* digest
(a stale decision does not count as an ask), nothing after the pause runs. The package's doors
(``ReActAgent.resume``, the inbox, the command line, ``RemoteReActAgent``) refuse it before
anything runs (:func:`refuse_stale`), and after a run they raise
:class:`~dynavec_langgraph._errors.StaleDecisionError` when the graph refused it
(:func:`stale_refusal`). A decision without a digest works as before.

Where the digest travels in a decision:

- a UI decision dict (LangChain's per-call ``{"type": ...}``, an Agent Inbox response, each
  item of ``{"decisions": [...]}``, or the ``{"decisions": [...]}`` dict itself): a
  ``"review_digest"`` key beside the others;
- any other value: the envelope ``{"review_digest": digest, "decision": value}``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar

from langgraph.types import Interrupt

from dynavec_langgraph._errors import (
    InvalidDecisionError,
    StaleDecisionError,
    no_decision_text,
    stale_text,
)
from dynavec_langgraph._graph.run_data import current_run
from dynavec_langgraph._types import JSONMapping, UserPayload

__all__ = [
    "DIGEST_KEY",
    "bind_decision",
    "check_bound",
    "compute_review_digest",
    "counting_slots",
    "decision_digest",
    "next_slot",
    "pause_digest",
    "refuse_stale",
    "review_digest",
    "stale_refusal",
]

DIGEST_KEY = "review_digest"
"""The key of the digest in a pause value and in a decision."""
_ENVELOPE = frozenset({DIGEST_KEY, "decision"})
_TYPES = frozenset({"approve", "edit", "reject", "respond", "accept", "ignore", "response"})


def _canonical(value: object) -> str:
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=repr
    )


def compute_review_digest(
    *,
    thread_id: str | None,
    node_id: str,
    tool_call: JSONMapping | None,
    name: str,
    args: JSONMapping,
    payload: UserPayload,
    ask: int = 0,
    slot: int = 0,
) -> str:
    """The review digest of a pause: 32 hex digits of SHA-256 over the canonical JSON (sorted
    keys) of what is reviewed and of which ask it is.

    Args:
        thread_id: the thread the pause is in (``None`` outside a run).
        node_id: the approval point.
        tool_call: the paused tool call (``id``, ``name``, ``args``), if any.
        name: the action under review.
        args: its arguments.
        payload: what the person decides on.
        ask: how many decisions this approval refused before (0 on the first ask).
        slot: which approval of the tool call this is (0 for its first, 1 for the second
            ``interrupt()`` it calls, ...); 0 is left out of the hash, so the digest of a
            tool's first approval is the one it had before ``slot`` existed.

    Example:
        >>> d = compute_review_digest(thread_id="t", node_id="approve_pay", tool_call=None,
        ...                           name="pay", args={"amount": 5}, payload={"amount": 5})
        >>> len(d), d == compute_review_digest(thread_id="t", node_id="approve_pay",
        ...     tool_call=None, name="pay", args={"amount": 5}, payload={"amount": 5}, ask=1)
        (32, False)
    """
    call = None
    if tool_call is not None:
        call = {k: tool_call.get(k) for k in ("id", "name", "args")}
    reviewed = {
        "v": 1,
        "thread": thread_id,
        "node_id": node_id,
        "tool_call": call,
        "name": name,
        "args": dict(args),
        "payload": payload,
        "ask": ask,
    }
    if slot:
        reviewed["slot"] = slot
    return hashlib.sha256(_canonical(reviewed).encode("utf-8")).hexdigest()[:32]


def _thread_id() -> str | None:
    run = current_run()  # None outside a run
    return None if run is None else run.thread_id


_slots: ContextVar[list[int] | None] = ContextVar("dynavec_pause_slots", default=None)


@contextmanager
def counting_slots() -> Iterator[None]:
    """Number the approvals asked in this block (one run of a tool call, from its first line:
    every re-run numbers them again from 0, in the same order)."""
    token = _slots.set([0])  # a list: a tool run in a copied context still counts here
    try:
        yield
    finally:
        _slots.reset(token)


def next_slot() -> int:
    """The position of the approval about to be asked among those of the running tool call
    (:func:`counting_slots`); 0 outside one (a LangGraph node of the caller's own)."""
    slots = _slots.get()
    if slots is None:
        return 0
    slot = slots[0]
    slots[0] += 1
    return slot


def pause_digest(value: JSONMapping, ask: int = 0, slot: int = 0) -> str:
    """The digest of a pause value built by ``pause_value`` in the running thread."""
    return compute_review_digest(
        thread_id=_thread_id(),
        node_id=str(value["node_id"]),
        tool_call=value.get("tool_call"),
        name=str(value.get("name", value["node_id"])),
        args=value.get("args") or {},
        payload=value.get("payload"),
        ask=ask,
        slot=slot,
    )


def review_digest(pause: object) -> str | None:
    """The review digest a pause carries: an ``Interrupt``, its value (a dict as a server sends
    it), or a row of the inbox; ``None`` for a pause this package did not raise.

    Example:
        >>> review_digest({"node_id": "a", "review_digest": "0" * 32})
        '00000000000000000000000000000000'
        >>> review_digest(Interrupt("why?", id="1" * 32)) is None
        True
    """
    if isinstance(pause, Interrupt):
        pause = pause.value
    elif not isinstance(pause, Mapping) and hasattr(pause, DIGEST_KEY):
        pause = {DIGEST_KEY: getattr(pause, DIGEST_KEY)}
    if isinstance(pause, Mapping):
        value = pause.get(DIGEST_KEY)
        return value if isinstance(value, str) and value else None
    return None


def _typed(item: object) -> bool:
    return isinstance(item, Mapping) and item.get("type") in _TYPES


def bind_decision(decision: UserPayload, pause: object) -> UserPayload:
    """``decision`` carrying the review digest of ``pause`` (an ``Interrupt``, its value, an
    inbox row, or the digest itself), in the decision's own format: a UI decision gets a
    ``"review_digest"`` key, any other value the envelope ``{"review_digest": ...,
    "decision": value}``. The paused tool refuses it if the pending pause is another one.

    Raises:
        InvalidDecisionError: ``pause`` carries no review digest (a plain LangGraph
            interrupt), or ``decision`` is ``None``.

    Example:
        >>> bind_decision({"type": "approve"}, "ab" * 16)
        {'type': 'approve', 'review_digest': 'abababababababababababababababab'}
        >>> bind_decision("approved", "ab" * 16)
        {'review_digest': 'abababababababababababababababab', 'decision': 'approved'}
    """
    digest = pause if isinstance(pause, str) else review_digest(pause)
    if not digest:
        raise InvalidDecisionError(
            "this pause carries no review digest (it was not raised by dynavec_langgraph's "
            "interrupt() or require_approval): send the decision without one"
        )
    if decision is None:
        raise InvalidDecisionError(no_decision_text())
    if _typed(decision):
        return {**decision, DIGEST_KEY: digest}
    if isinstance(decision, Mapping) and set(decision) == {"decisions"}:
        return {**decision, DIGEST_KEY: digest}
    if isinstance(decision, list) and decision and all(_typed(i) for i in decision):
        return [{**item, DIGEST_KEY: digest} for item in decision]
    return {DIGEST_KEY: digest, "decision": decision}


def _one_digest(found: list[object]) -> str | None:
    digests = set()
    for value in found:
        if not isinstance(value, str) or not value:
            raise InvalidDecisionError(
                f"review_digest must be the digest string the pause shows, got {value!r:.60}"
            )
        digests.add(value)
    if len(digests) > 1:
        raise InvalidDecisionError(
            f"the decision carries {len(digests)} different review digests; bind it to one pause"
        )
    return digests.pop() if digests else None


def _strip(item: UserPayload, found: list[object]) -> UserPayload:
    if isinstance(item, Mapping) and DIGEST_KEY in item:
        found.append(item[DIGEST_KEY])
        return {k: v for k, v in item.items() if k != DIGEST_KEY}
    return item


def decision_digest(raw: UserPayload) -> tuple[UserPayload, str | None]:
    """``(decision, digest)``: the decision without its review digest, and the digest
    (``None`` when it carries none; the decision is then returned as it is).

    Raises:
        InvalidDecisionError: a digest that is no string, or several different ones.

    Example:
        >>> decision_digest({"review_digest": "ab" * 16, "decision": "approved"})
        ('approved', 'abababababababababababababababab')
        >>> decision_digest("approved")
        ('approved', None)
    """
    found: list[object] = []
    if isinstance(raw, Mapping) and set(raw) == _ENVELOPE:
        return raw["decision"], _one_digest([raw[DIGEST_KEY]])
    if _typed(raw):
        stripped: UserPayload = _strip(raw, found)
    elif isinstance(raw, Mapping) and "decisions" in raw and set(raw) <= {"decisions", DIGEST_KEY}:
        stripped = dict(_strip(raw, found))
        items = stripped["decisions"]
        if isinstance(items, list):
            stripped["decisions"] = [_strip(i, found) for i in items]
    elif isinstance(raw, list) and raw and all(_typed(i) for i in raw):
        stripped = [_strip(i, found) for i in raw]
    else:
        return raw, None
    digest = _one_digest(found)
    return (stripped, digest) if digest is not None else (raw, None)


def _call_text(value: JSONMapping) -> str:
    call = value.get("tool_call") if isinstance(value.get("tool_call"), Mapping) else None
    node = value.get("node_id")
    if call:
        return f"call {call.get('id')!r} of {call.get('name')!r} (approval {node!r})"
    return f"approval {node!r}"


def check_bound(raw: UserPayload, value: JSONMapping) -> UserPayload:
    """Inside the paused tool: ``raw`` without its digest, if it carries none or the digest
    of ``value`` (the pause it answers).

    Raises:
        StaleDecisionError: ``raw`` carries the digest of another pause.
        InvalidDecisionError: a malformed digest.
    """
    decision, digest = decision_digest(raw)
    pending = value.get(DIGEST_KEY)
    if digest is not None and digest != pending:
        text = stale_text(_thread_id(), _call_text(value), digest, pending)
        raise StaleDecisionError(text)
    return decision


def refuse_stale(
    thread_id: str | None, interrupts: Sequence[Interrupt], resume: UserPayload
) -> None:
    """At a door, before anything runs: refuse a decision bound to another pause than the one
    it answers (``resume`` is ``{interrupt_id: decision}`` or one decision).

    Raises:
        StaleDecisionError: naming the thread, the call and the two digests.
        InvalidDecisionError: a digest for a pause that carries none, or a malformed one.
    """
    by_id = {i.id: i for i in interrupts}
    if isinstance(resume, Mapping) and resume and set(resume) <= set(by_id):
        pairs = [(by_id[k], v) for k, v in resume.items()]
    elif len(interrupts) == 1:
        pairs = [(interrupts[0], resume)]
    else:
        return
    for pending, decision in pairs:
        _, digest = decision_digest(decision)
        if digest is None:
            continue
        value = pending.value if isinstance(pending.value, Mapping) else {}
        if review_digest(value) is None:
            raise InvalidDecisionError(
                f"the decision for interrupt {pending.id} carries a review digest but that "
                "pause has none (it was not raised by dynavec_langgraph): send it without one"
            )
        if digest != value[DIGEST_KEY]:
            raise StaleDecisionError(
                stale_text(thread_id, _call_text(value), digest, value[DIGEST_KEY])
            )


def stale_refusal(before: Sequence[Interrupt], after: Sequence[Interrupt]) -> str | None:
    """After a run: the error of a pause the graph asked again because the decision was bound
    to another pause (a new interrupt, with ``error`` set, under a digest already pending
    before), or ``None``."""
    seen = {i.id for i in before}
    digests = {review_digest(i) for i in before} - {None}
    for i in after:
        value = i.value if isinstance(i.value, Mapping) else {}
        if i.id not in seen and value.get("error") and review_digest(value) in digests:
            return str(value["error"])
    return None
