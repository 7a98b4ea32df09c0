"""The durable marks of a guarded call: where they are written, read back, and its note."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import CheckpointTuple, PendingWrite
from langgraph.config import get_store
from langgraph.errors import GraphInterrupt

from dynavec_langgraph._exactly_once.keys import NS_END
from dynavec_langgraph._graph.run_data import RunData
from dynavec_langgraph._lg_names import RESUME_WRITE
from dynavec_langgraph._names import START_CHANNEL
from dynavec_langgraph._pauses.value import ToolCallRef
from dynavec_langgraph._types import JSONObject, NodeUpdate

if TYPE_CHECKING:
    from langgraph.store.base import BaseStore

    from dynavec_langgraph._types import CheckpointSaver

__all__ = [
    "HELD_DEPTH",
    "Marks",
    "Where",
    "aheld_marks",
    "end_mark",
    "held_marks",
    "mark",
    "note",
    "read_marks",
    "run_store",
    "where_of",
]

_RESUME: Final = RESUME_WRITE


MarkWrites = tuple[str, list[tuple[str, object]]]
"""A mark to write: ``(task_id, writes)`` for ``BaseCheckpointSaver.put_writes``."""


@dataclass
class Where:
    saver: CheckpointSaver
    thread_id: str
    base: RunnableConfig
    task_id: str


def where_of(data: RunData) -> Where | None:
    saver, thread_id, ns = data.saver, data.thread_id, data.checkpoint_ns
    parent, checkpoint_id = data.parent_ns, data.parent_checkpoint_id
    if saver is None or thread_id is None or not checkpoint_id:
        return None
    base: RunnableConfig = {
        "configurable": {
            "thread_id": str(thread_id),
            "checkpoint_ns": parent,
            "checkpoint_id": checkpoint_id,
        }
    }
    return Where(saver, str(thread_id), base, ns.rsplit(NS_END, 1)[-1])


@dataclass
class Marks:
    """What the checkpoint holds for one call: attempts, their ends, doubts."""

    started: set[int] = field(default_factory=set)
    ends: dict[int, JSONObject] = field(default_factory=dict)
    doubts: dict[int, int] = field(default_factory=dict)  # attempt -> decisions before it
    stale: set[int] = field(default_factory=set)  # doubts found with a decision for a pause
    # shown before the crash (never applied: the in-doubt question says so)
    answered: int = 0  # decisions the task holds (its "__resume__" write)
    asked_at: dict[int, float] = field(default_factory=dict)  # attempt -> when its doubt was
    # found (time.time() of the run that found it; absent in doubt marks written before it
    # was kept)

    @property
    def latest(self) -> int:
        return max(self.started, default=-1)

    @property
    def in_doubt(self) -> bool:
        return self.latest >= 0 and self.latest not in self.ends

    def record(self) -> NodeUpdate:
        """The update a finished attempt returned (``None`` when none did)."""
        for end in self.ends.values():
            if end.get("state") == "done" and isinstance(end.get("result"), dict):
                return end["result"]
        return None


def read_marks(
    tup: CheckpointTuple | None, prefix: str, task_id: str, earlier: Sequence[PendingWrite] = ()
) -> Marks:
    """The call's marks on checkpoint ``tup`` (and, first, those of the ``earlier`` pending
    writes: a held call's step, :func:`held_marks`); its decisions are ``tup``'s."""
    marks = Marks()
    moved: dict[int, int] = {}
    writes = [*earlier, *((tup.pending_writes if tup is not None else None) or [])]
    for tid, channel, value in writes:
        if channel == _RESUME and tid == task_id and isinstance(value, list):
            marks.answered = len(value)
        if channel != START_CHANNEL or not tid.startswith(prefix) or not isinstance(value, dict):
            continue
        attempt, state = int(value.get("attempt", 0)), value.get("state")
        if state == "start":
            marks.started.add(attempt)
        elif state == "doubt":
            if attempt not in marks.doubts:  # the first doubt mark of an attempt holds
                marks.doubts[attempt] = int(value.get("skip", 0))
                if value.get("stale"):
                    marks.stale.add(attempt)
                at = value.get("at")
                if isinstance(at, int | float) and not isinstance(at, bool):
                    marks.asked_at[attempt] = float(at)
        elif state == "moved":
            moved[attempt] = max(moved.get(attempt, 0), int(value.get("skip", 0)))
        else:
            marks.ends[attempt] = value
    for attempt, skip in moved.items():  # a late answer took the question's slot: asked after it
        if attempt in marks.doubts and skip > marks.doubts[attempt]:
            marks.doubts[attempt] = skip
            marks.stale.add(attempt)
    return marks


HELD_DEPTH: Final = 3
"""How many checkpoints before its own a re-sent held call's marks are looked for: it was
held in the tool step two checkpoints back (that step, then the agent node's pass-through)."""


def held_marks(
    saver: CheckpointSaver, tup: CheckpointTuple | None, prefix: str
) -> list[PendingWrite]:
    """Parallel mode: a call held in an earlier step of its turn (``_tool_call.held``) is sent
    again from a later checkpoint, but its start mark (a crash while it ran in the held step)
    and its doubt mark are on the checkpoint of the step that held it: the call's marks on the
    checkpoints before ``tup``, newest first, up to :data:`HELD_DEPTH` (stops at the first
    that has any; the prefix holds the call's key, so no other call's marks match)."""
    for _ in range(HELD_DEPTH):
        parent = getattr(tup, "parent_config", None)
        if tup is None or parent is None:
            return []
        tup = saver.get_tuple(parent)
        found = _marks_in(tup, prefix)
        if found:
            return found
    return []


async def aheld_marks(
    saver: CheckpointSaver, tup: CheckpointTuple | None, prefix: str
) -> list[PendingWrite]:
    """Async twin of :func:`held_marks`."""
    for _ in range(HELD_DEPTH):
        parent = getattr(tup, "parent_config", None)
        if tup is None or parent is None:
            return []
        tup = await saver.aget_tuple(parent)
        found = _marks_in(tup, prefix)
        if found:
            return found
    return []


def _marks_in(tup: CheckpointTuple | None, prefix: str) -> list[PendingWrite]:
    writes = (tup.pending_writes if tup is not None else None) or []
    return [w for w in writes if w[1] == START_CHANNEL and str(w[0]).startswith(prefix)]


def mark(prefix: str, attempt: int, state: str, **extra: object) -> MarkWrites:
    task_id = f"{prefix}{attempt}:{state}"
    return task_id, [(START_CHANNEL, {"state": state, "attempt": attempt, **extra})]


def end_mark(prefix: str, attempt: int, error: BaseException | None, result: object) -> MarkWrites:
    if error is None:
        return mark(prefix, attempt, "done", result=result if isinstance(result, dict) else None)
    return mark(prefix, attempt, "closed" if isinstance(error, GraphInterrupt) else "raised")


def note(where: Where, call: ToolCallRef, key: str, attempt: int) -> JSONObject:
    conf = where.base["configurable"]
    return {
        "call": {"id": call["id"], "name": call["name"], "args": dict(call["args"])},
        "key": key,
        "checkpoint_ns": conf["checkpoint_ns"],
        "checkpoint_id": conf["checkpoint_id"],
        "attempt": attempt,
    }


def run_store() -> BaseStore | None:
    """The run's store (``None``: the graph has none, e.g. in process without ``store=``)."""
    try:
        return get_store()
    except RuntimeError:  # not inside a LangGraph run (the tool node always is)
        return None
