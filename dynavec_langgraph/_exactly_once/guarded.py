"""The guarded doors of a tool call, sync and async: its marks written around its body."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from dynavec_langgraph._exactly_once.gate import Gate, gate_of
from dynavec_langgraph._exactly_once.keys import OnCrash
from dynavec_langgraph._exactly_once.marks import (
    Where,
    aheld_marks,
    end_mark,
    held_marks,
    mark,
    note,
    read_marks,
    run_store,
    where_of,
)
from dynavec_langgraph._exactly_once.wait import astored, saved_in_background, stored
from dynavec_langgraph._graph.run_data import RunData
from dynavec_langgraph._names import NOTE_NS
from dynavec_langgraph._pauses.value import ToolCallRef
from dynavec_langgraph._types import JSONObject, NodeUpdate

if TYPE_CHECKING:
    from langgraph.checkpoint.base import CheckpointTuple, PendingWrite
    from langgraph.store.base import BaseStore

    from dynavec_langgraph._exactly_once.marks import MarkWrites

__all__ = ["aguarded", "guarded"]


class _Guard:
    """One call of a tool declaring ``"ask"`` or ``"fail"``, what :func:`guarded` and
    :func:`aguarded` share between their I/O calls: its marks read, the marks to write before
    it runs, its start, its note, its end. Each door does only the reads and the writes."""

    __slots__ = ("attempt", "gate", "where")

    def __init__(self, gate: Gate, where: Where) -> None:
        self.gate, self.where = gate, where
        self.attempt = -1

    def found(self, tup: CheckpointTuple | None, earlier: list[PendingWrite]) -> list[MarkWrites]:
        """The call's marks read from checkpoint ``tup`` (``earlier``: a held call's,
        :func:`~dynavec_langgraph._exactly_once.marks.held_marks`); the marks to write before
        the decision (a doubt found now, a late answer moved on)."""
        gate = self.gate
        gate.marks = read_marks(tup, gate.prefix, self.where.task_id, earlier)
        return [found for found in (gate.new_doubt(), gate.late_answer()) if found is not None]

    def start(self) -> MarkWrites:
        """The start mark of the next attempt."""
        gate = self.gate
        self.attempt = gate.marks.latest + 1
        return mark(gate.prefix, self.attempt, "start", call=gate.call["id"], policy=gate.policy)

    def store(self) -> BaseStore | None:
        """The run's store that keeps the note of an ``"ask"`` call, else ``None``."""
        return run_store() if self.gate.policy == "ask" else None

    def note(self) -> tuple[tuple[str, str], str, JSONObject]:
        """The note's namespace, key and value (for a server's views, the package doc)."""
        gate = self.gate
        return (
            (NOTE_NS, self.where.thread_id),
            gate.key,
            note(self.where, gate.call, gate.key, self.attempt),
        )

    def noted(self) -> tuple[tuple[str, str], str]:
        """The note's namespace and key."""
        return (NOTE_NS, self.where.thread_id), self.gate.key

    def end(
        self, error: BaseException | None, result: object
    ) -> tuple[list[tuple[str, object]], str]:
        """The end mark (writes, task id) after the body returned ``result`` or raised
        ``error``."""
        task_id, writes = end_mark(self.gate.prefix, self.attempt, error, result)
        return writes, task_id


def guarded(
    data: RunData,
    call: ToolCallRef,
    key: str,
    policy: OnCrash | None,
    run: Callable[[], NodeUpdate],
    answer: Callable[[str], NodeUpdate],
    resent: bool = False,
) -> NodeUpdate:
    """Run ``run()`` (one call's body and the node's update) under its ``on_crash`` policy
    (``None``: the tool declares none, which is ``"retry"``: it writes no marks);
    ``answer(text)`` is the update that answers the call with ``text`` without running it.

    No call starts before the checkpoint it runs from is stored (under ``durability="async"``
    LangGraph saves it in the background): a crash after the start then re-runs the same call
    from that checkpoint, with the same key, never a new model turn. ``resent``: a held call of a
    parallel batch sent again (:func:`held_marks`)."""
    where = where_of(data)
    if where is None:  # no saver: nothing is durable, nothing to mark
        return run()
    background = saved_in_background(data)
    if policy is None or policy == "retry":
        if background:
            stored(where, call, read=False)
        return run()
    guard = _Guard(gate_of(data, call, key, where, policy), where)
    saver, base = where.saver, where.base
    found = stored(where, call) if background else saver.get_tuple(base)
    earlier = held_marks(saver, found, guard.gate.prefix) if resent else []
    for task_id, writes in guard.found(found, earlier):
        saver.put_writes(base, writes, task_id)
    go, early = guard.gate.decide(answer)
    if not go:
        return early
    task_id, writes = guard.start()
    saver.put_writes(base, writes, task_id)
    store = guard.store()
    if store is not None:  # for a server's views (package doc): after the start mark
        store.put(*guard.note())
    try:
        result = run()
    except BaseException as error:
        saver.put_writes(base, *guard.end(error, None))
        if store is not None:
            store.delete(*guard.noted())
        raise
    saver.put_writes(base, *guard.end(None, result))
    if store is not None:
        store.delete(*guard.noted())
    return result


async def aguarded(
    data: RunData,
    call: ToolCallRef,
    key: str,
    policy: OnCrash | None,
    run: Callable[[], Awaitable[NodeUpdate]],
    answer: Callable[[str], NodeUpdate],
    resent: bool = False,
) -> NodeUpdate:
    """Async twin of :func:`guarded`."""
    where = where_of(data)
    if where is None:
        return await run()
    background = saved_in_background(data)
    if policy is None or policy == "retry":
        if background:
            await astored(where, call, read=False)
        return await run()
    guard = _Guard(gate_of(data, call, key, where, policy), where)
    saver, base = where.saver, where.base
    found = await astored(where, call) if background else await saver.aget_tuple(base)
    earlier = await aheld_marks(saver, found, guard.gate.prefix) if resent else []
    for task_id, writes in guard.found(found, earlier):
        await saver.aput_writes(base, writes, task_id)
    go, early = guard.gate.decide(answer)
    if not go:
        return early
    task_id, writes = guard.start()
    await saver.aput_writes(base, writes, task_id)
    store = guard.store()
    if store is not None:  # as in guarded()
        await store.aput(*guard.note())
    try:
        result = await run()
    except BaseException as error:
        await saver.aput_writes(base, *guard.end(error, None))
        if store is not None:
            await store.adelete(*guard.noted())
        raise
    await saver.aput_writes(base, *guard.end(None, result))
    if store is not None:
        await store.adelete(*guard.noted())
    return result
