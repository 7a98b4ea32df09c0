"""Verifying the hash chain of a thread's trail: every entry edited, deleted, reordered or
inserted is named (:class:`TrailProblem`), read only."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from langgraph.store.base import BaseStore

from dynavec_langgraph._audit.entries import GENESIS, entry_hash
from dynavec_langgraph._audit.storage import (
    PAGE,
    Found,
    Items,
    check_target,
    found_items,
    is_seq,
    stored,
)
from dynavec_langgraph._names import AUDIT_NS
from dynavec_langgraph._persistence.kinds import stored_in
from dynavec_langgraph._types import JSONMapping, JSONObject

if TYPE_CHECKING:
    pass

__all__ = [
    "ThreadTrail",
    "TrailProblem",
    "TrailReport",
    "check_items",
    "check_thread",
    "trail_thread_ids",
]


@dataclass(frozen=True)
class TrailProblem:
    """One sign of tampering in a thread's trail.

    ``kind`` is one of :data:`TAMPERING`: ``edited`` (an entry's content does not match its
    hash, or its link to the entry before it was rewritten), ``deleted`` (entries missing
    from the middle or the start of the chain: ``seq`` is the first missing one), ``reordered``
    (an entry stored in another entry's place, or linked to another entry than the one before
    it), ``inserted`` (an entry that is not part of the chain: a second entry for one place, an
    entry of another thread, one stored outside the chain, or one without a hash written after
    the chain began). ``seq`` and ``event_id`` name the entry (``event_id`` is ``None`` for
    deleted ones); ``detail`` says what is wrong.
    """

    thread_id: str
    kind: str
    seq: int | None
    event_id: str | None
    detail: str

    def __str__(self) -> str:
        where = f"entry {self.seq}" if self.seq is not None else "an entry"
        which = f" (event {self.event_id})" if self.event_id else ""
        return f"thread {self.thread_id!r}, {where}{which}: {self.kind}: {self.detail}"

    def as_dict(self) -> JSONObject:
        return asdict(self)


@dataclass(frozen=True)
class ThreadTrail:
    """What :func:`check_thread` found in one thread's trail: how many entries are chained and
    how many were written before the chain (``unchained``), the last entry of the chain
    (``head_seq``, ``head_hash``: keep them elsewhere to notice later that entries were cut
    off the end) and the problems."""

    thread_id: str
    chained: int
    unchained: int
    head_seq: int | None
    head_hash: str | None
    problems: tuple[TrailProblem, ...] = ()

    @property
    def ok(self) -> bool:
        """Whether nothing was found wrong."""
        return not self.problems

    def as_dict(self) -> JSONObject:
        out = asdict(self)
        out["ok"] = self.ok
        return out


@dataclass(frozen=True)
class TrailReport:
    """What ``verify`` found in every trail it read (one :class:`ThreadTrail` a thread)."""

    threads: tuple[ThreadTrail, ...]

    @property
    def ok(self) -> bool:
        """Whether no trail shows tampering."""
        return all(t.ok for t in self.threads)

    @property
    def problems(self) -> list[TrailProblem]:
        return [p for t in self.threads for p in t.problems]

    def as_dict(self) -> JSONObject:
        return {"ok": self.ok, "threads": [t.as_dict() for t in self.threads]}


def _chain_fields_ok(entry: JSONMapping) -> bool:
    return (
        is_seq(entry.get("seq"))
        and isinstance(entry.get("prev_hash"), str)
        and isinstance(entry.get("hash"), str)
    )


def _rank(f: Found, seq: int, linking: set[str], prev_hash: str) -> tuple[bool, ...]:
    """How surely ``f`` is the chain's entry ``seq`` among several claiming it: in its place,
    linked to by the next entry, linked to the entry before, content matching its hash."""
    e = f.entry or {}
    return (f.slot == seq, e["hash"] in linking, e["prev_hash"] == prev_hash, not f.edited)


def _check(thread_id: str, found: Sequence[Found]) -> ThreadTrail:
    """The verdict on one thread's stored entries (see :class:`TrailProblem`)."""
    problems: list[TrailProblem] = []

    def report(kind: str, f: Found | None, detail: str, seq: int | None = None) -> None:
        entry = f.entry if f is not None and f.entry is not None else {}
        eid = entry.get("event_id")
        at = seq if seq is not None else entry.get("seq") if is_seq(entry.get("seq")) else None
        at = at if at is not None or f is None else f.slot
        problems.append(TrailProblem(thread_id, kind, at, str(eid) if eid else None, detail))

    chained: list[Found] = []
    earlier: list[Found] = []
    for f in found:
        if f.entry is None:
            report("edited", f, f"what is stored at {f.where!r} is no readable entry")
        elif f.slot is None and not {"seq", "prev_hash", "hash"} & set(f.entry):
            earlier.append(f)
        elif not _chain_fields_ok(f.entry):
            report("edited", f, "its seq, prev_hash or hash is missing or not valid")
        else:
            chained.append(f)
    for f in chained:
        e = f.entry or {}
        seq = int(e["seq"])
        if entry_hash(e) != e["hash"]:
            f.edited = True
            report("edited", f, "its content does not match its hash")
        if e.get("thread_id") != thread_id:
            report("inserted", f, f"it is an entry of thread {e.get('thread_id')!r}")
        if f.slot is None:
            report("inserted", f, f"it is stored outside the chain (at {f.where!r})")
        elif f.slot != seq:
            report("reordered", f, f"it is stored as entry {f.slot}")
    by_seq: dict[int, list[Found]] = {}
    for f in chained:
        by_seq.setdefault(int((f.entry or {})["seq"]), []).append(f)
    by_hash = {str((f.entry or {})["hash"]): f for f in chained}
    prev_seq, prev_hash = 0, GENESIS
    for seq in sorted(by_seq):
        linking = {str((g.entry or {})["prev_hash"]) for g in by_seq.get(seq + 1, [])}
        group = by_seq[seq]
        ranks = [(_rank(g, seq, linking, prev_hash), -i) for i, g in enumerate(group)]
        first, *others = [group[i] for i in sorted(range(len(group)), key=ranks.__getitem__)[::-1]]
        e = first.entry or {}
        for other in others:
            report(
                "inserted",
                other,
                f"a second entry {seq}; the chain goes on from event {e.get('event_id')}",
            )
        if seq > prev_seq + 1:
            gap = f"{prev_seq + 1}" if seq == prev_seq + 2 else f"{prev_seq + 1} to {seq - 1}"
            after = f"entry {prev_seq} is followed by" if prev_seq else "the chain starts at"
            report(
                "deleted",
                None,
                f"entr{'y' if seq == prev_seq + 2 else 'ies'} {gap} of the chain "
                f"{'is' if seq == prev_seq + 2 else 'are'} missing ({after} entry {seq}, event "
                f"{e.get('event_id')})",
                seq=prev_seq + 1,
            )
        elif e["prev_hash"] != prev_hash:
            linked = by_hash.get(str(e["prev_hash"]))
            if linked is not None and linked.entry is not None and linked.entry["seq"] != prev_seq:
                report(
                    "reordered",
                    first,
                    f"it follows entry {linked.entry['seq']}, not entry {prev_seq}",
                )
            else:
                report(
                    "edited",
                    first,
                    f"its link to entry {prev_seq} is broken: one of the two "
                    "was rewritten (its hash recomputed) or replaced",
                )
        prev_seq, prev_hash = seq, str(e["hash"])
    late = []
    if chained:
        began = min(str((f.entry or {}).get("at", "")) for f in chained)
        late = [f for f in earlier if str((f.entry or {}).get("at", "")) > began]
        for f in late:
            report(
                "inserted",
                f,
                "it has no hash but was written after the chain began "
                f"({began}): forged, or written by a version of the package before it",
            )
    return ThreadTrail(
        thread_id,
        chained=len(chained),
        unchained=len(earlier) - len(late),
        head_seq=prev_seq if chained else None,
        head_hash=prev_hash if chained else None,
        problems=tuple(problems),
    )


def check_thread(target: object, thread_id: str) -> ThreadTrail:
    """Verify the chain of ``thread_id``'s trail in ``target`` (a checkpointer or a store):
    every entry's hash, its link to the entry before it, its place; read only.

    Raises:
        TypeError: ``target`` is no checkpointer or store.
    """
    target = check_target(target)
    return _check(thread_id, stored(target, AUDIT_NS, thread_id))


def check_items(items: Items, thread_id: str) -> ThreadTrail:
    """:func:`check_thread` of a trail read as store items (a server's, through
    ``langgraph_sdk``: :mod:`dynavec_langgraph._remote.audit`)."""
    return _check(thread_id, found_items(items.values()))


def trail_thread_ids(target: object) -> list[str]:
    """The threads of ``target`` that have an audit trail (a store's namespaces, a dynavec
    checkpointer's threads, or the threads of :data:`AUDIT_NS` in ``target.list(None)``)."""
    target = check_target(target)
    if isinstance(target, BaseStore):
        spaces: list[tuple[str, ...]] = []
        while True:
            page = target.list_namespaces(
                prefix=(AUDIT_NS,), max_depth=2, limit=PAGE, offset=len(spaces)
            )
            spaces += page
            if len(page) < PAGE:
                return sorted({ns[1] for ns in spaces if len(ns) == 2})
    listing = getattr(getattr(stored_in(target), "checkpointer", None), "threads", None)
    if callable(listing):  # a dynavec checkpointer that lists its threads (DynamoDB)
        return sorted(str(t) for t in listing())
    seen = set()
    for t in target.list(None):
        configurable = t.config.get("configurable") or {}
        if configurable.get("checkpoint_ns") == AUDIT_NS:
            seen.add(str(configurable["thread_id"]))
    return sorted(seen)
