"""dynavec's checkpoint records and checkpointers, and the dynavec view of a graph state
(the public module is :mod:`dynavec_langgraph.checkpoint`).

:class:`Checkpoint` is one record of a thread (docs/compatibility.md §5). :class:`BaseCheckpointer`
is dynavec's checkpointer interface (``save`` / ``get`` / ``list`` / ``put``) and
:class:`MemoryCheckpointer` its in-process implementation. Passed as ``checkpointer=``, one is
adapted by :class:`~dynavec_langgraph._persistence.adapter.DynavecCheckpointSaver` (see
:func:`~dynavec_langgraph.savers.resolve_checkpointer`).

Where the dynavec view is built. LangGraph savers store channel values, and with the default
``message_storage="delta"`` the ``messages`` channel is stored as per-step deltas. Two places
turn that into docs/compatibility.md §5's records:

* :func:`dynavec_view` (here) builds a :class:`Checkpoint` from a ``StateSnapshot`` (what
  ``graph.get_state`` / ``get_state_history`` return). ``ReActAgent.get_checkpoint`` and
  ``list_checkpoints`` use it, so they work on every saver; :func:`is_step_boundary` picks
  the snapshots dynavec would have recorded.
* :class:`~dynavec_langgraph._persistence.adapter.DynavecCheckpointSaver` writes one dynavec
  record per LangGraph checkpoint with the same view (its module docstring describes the layout).
"""

from __future__ import annotations

import threading
import uuid
from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Protocol

from langgraph.types import StateSnapshot

from dynavec_langgraph._dynavec.view import json_metadata, state_view
from dynavec_langgraph._graph.messages import pending_calls
from dynavec_langgraph._types import JSONMapping, JSONObject

if TYPE_CHECKING:
    from typing import TypeAlias

    from langgraph.types import Checkpointer

__all__ = [  # and CheckpointerOption, for the type checker
    "BaseCheckpointer",
    "Checkpoint",
    "DynavecCheckpointer",
    "MemoryCheckpointer",
    "dynavec_view",
    "is_step_boundary",
]


# --- dynavec records -------------------------------------------------------------------


def _new_checkpoint_id() -> str:
    return f"cp_{datetime.now(UTC):%Y%m%d%H%M%S}_{uuid.uuid4().hex[:8]}"


def _now() -> str:
    return datetime.now(UTC).isoformat()


@dataclass
class Checkpoint:
    """One dynavec checkpoint record of a thread (docs/compatibility.md §5).

    Example:
        >>> cp = Checkpoint("t1", node_id="init", state={"goal": "hi"})
        >>> Checkpoint.from_dict(cp.to_dict()) == cp
        True
    """

    thread_id: str
    checkpoint_id: str = field(default_factory=_new_checkpoint_id)
    parent_checkpoint_id: str | None = None
    node_id: str | None = None
    step: int = 0
    state: JSONObject = field(default_factory=dict)
    metadata: JSONObject = field(default_factory=dict)
    timestamp: str = field(default_factory=_now)

    def to_dict(self) -> JSONObject:
        """Return the record as a plain dict (JSON when ``state``/``metadata`` are)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_dict(cls, data: JSONMapping) -> Checkpoint:
        """Build a record from :meth:`to_dict`'s form (missing keys take their defaults)."""
        kwargs: dict[str, Any] = {"thread_id": str(data["thread_id"])}
        for key in ("checkpoint_id", "parent_checkpoint_id", "node_id", "timestamp"):
            if data.get(key) is not None:
                kwargs[key] = data[key]
        kwargs["step"] = int(data.get("step") or 0)
        kwargs["state"] = dict(data.get("state") or {})
        kwargs["metadata"] = dict(data.get("metadata") or {})
        return cls(**kwargs)


# The record's public home: a stored checkpoint names the class by its module (LangGraph's
# serializer writes ``__module__``), and records written before this module existed say
# ``dynavec_langgraph.checkpoint`` (the allowlist in ``_serde`` names it there too).
Checkpoint.__module__ = "dynavec_langgraph.checkpoint"


class BaseCheckpointer(ABC):
    """dynavec's checkpointer interface: subclass it and implement ``save``, ``get``, ``list``.

    ``save(cp)`` with the ``checkpoint_id`` of a record already saved should replace it (the
    LangGraph adapter re-saves a record when pending writes arrive; if ``save`` appends
    instead, the adapter still reads the newest copy). Override ``delete`` to let LangGraph's
    ``delete_thread`` really delete.
    """

    @abstractmethod
    def save(self, checkpoint: Checkpoint) -> None:
        """Store ``checkpoint``."""

    @abstractmethod
    def get(self, thread_id: str, checkpoint_id: str | None = None) -> Checkpoint | None:
        """The thread's latest record, or the one with ``checkpoint_id``; ``None`` if absent."""

    @abstractmethod
    def list(self, thread_id: str, limit: int | None = None) -> list[Checkpoint]:
        """The thread's records, oldest first; ``limit`` keeps the newest ``limit``."""

    def put(
        self,
        thread_id: str,
        state: dict[str, Any],
        *,
        node_id: str | None = None,
        step: int | None = None,
        parent_checkpoint_id: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> Checkpoint:
        """Save a new record after the thread's latest and return it.

        ``parent_checkpoint_id`` defaults to the latest record's id, ``step`` to its step + 1
        (0 for a thread's first record).
        """
        latest = self.get(thread_id)
        if parent_checkpoint_id is None and latest is not None:
            parent_checkpoint_id = latest.checkpoint_id
        if step is None:
            step = latest.step + 1 if latest is not None else 0
        record = Checkpoint(
            thread_id,
            parent_checkpoint_id=parent_checkpoint_id,
            node_id=node_id,
            step=step,
            state=state,
            metadata=dict(metadata or {}),
        )
        self.save(record)
        return record

    def delete(self, thread_id: str) -> bool:
        """Delete the thread's records; return ``False`` when the store cannot delete."""
        del thread_id
        return False


class DynavecCheckpointer(Protocol):
    """A dynavec-style checkpointer, as the LangGraph adapter uses it: ``save(record)``,
    ``get(thread_id)`` (the latest record or ``None``) and ``list(thread_id)`` (oldest first);
    ``BaseCheckpointer`` is one. ``save_if_unchanged`` and ``delete`` are used when present."""

    def save(self, checkpoint: Checkpoint, /) -> object: ...

    def get(self, thread_id: str, /) -> Checkpoint | None: ...

    def list(self, thread_id: str, /) -> Iterable[Checkpoint] | None: ...


if TYPE_CHECKING:
    CheckpointerOption: TypeAlias = Checkpointer | str | BaseCheckpointer | DynavecCheckpointer
    """``checkpointer=``: LangGraph's ``Checkpointer`` (``None``, ``True``/``False`` for a
    subgraph, a ``BaseCheckpointSaver``), a connection string (``"sqlite:///..."``,
    ``"postgresql://..."``) or a dynavec-style checkpointer."""


class MemoryCheckpointer(BaseCheckpointer):
    """dynavec's in-process checkpointer; thread-safe. Records are shared, not copied.

    Example:
        >>> store = MemoryCheckpointer()
        >>> first = store.put("t1", {"goal": "hi"}, node_id="init")
        >>> store.put("t1", {"goal": "hi"}, node_id="step_1").step
        1
        >>> [c.node_id for c in store.list("t1")]
        ['init', 'step_1']
    """

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._threads: dict[str, dict[str, Checkpoint]] = {}

    def save(self, checkpoint: Checkpoint) -> None:
        """Store ``checkpoint``; a record with the same id is replaced in place."""
        with self._lock:
            self._threads.setdefault(checkpoint.thread_id, {})[checkpoint.checkpoint_id] = (
                checkpoint
            )

    def get(self, thread_id: str, checkpoint_id: str | None = None) -> Checkpoint | None:
        """The latest saved record of the thread, or the one with ``checkpoint_id``."""
        with self._lock:
            records = self._threads.get(thread_id) or {}
            if checkpoint_id is not None:
                return records.get(checkpoint_id)
            return next(reversed(records.values()), None)

    def list(self, thread_id: str, limit: int | None = None) -> list[Checkpoint]:
        """The thread's records in the order they were first saved."""
        with self._lock:
            records = list((self._threads.get(thread_id) or {}).values())
        if limit is not None:
            records = records[-limit:] if limit > 0 else []
        return records

    def clear(self, thread_id: str | None = None) -> None:
        """Forget one thread, or every thread when ``thread_id`` is ``None``."""
        with self._lock:
            if thread_id is None:
                self._threads.clear()
            else:
                self._threads.pop(thread_id, None)

    def delete(self, thread_id: str) -> bool:
        """Same as ``clear(thread_id)``."""
        self.clear(thread_id)
        return True


# --- the dynavec view of a graph state -------------------------------------------------


def dynavec_view(
    snapshot: StateSnapshot, *, thread_id: str | None = None, system_prompt: str | None = None
) -> Checkpoint:
    """The dynavec :class:`Checkpoint` of a graph ``StateSnapshot`` (docs/compatibility.md §5).

    ``checkpoint_id`` and ``parent_checkpoint_id`` are LangGraph's checkpoint ids, so they can
    be passed back as ``run(..., resume_from=...)``. ``metadata`` holds LangGraph's metadata
    (``source``, ``step``...) and ``next`` (the nodes that would run next).
    """
    configurable = snapshot.config.get("configurable") or {}
    tid = thread_id or str(configurable.get("thread_id") or "")
    node_id, step, state = state_view(
        snapshot.values or {}, snapshot.interrupts, tid, system_prompt
    )
    parent = (snapshot.parent_config or {}).get("configurable") or {}
    metadata = json_metadata(snapshot.metadata or {})
    metadata["next"] = list(snapshot.next)
    return Checkpoint(
        thread_id=tid,
        checkpoint_id=str(configurable.get("checkpoint_id") or _new_checkpoint_id()),
        parent_checkpoint_id=parent.get("checkpoint_id"),
        node_id=node_id,
        step=step,
        state=state,
        metadata=metadata,
        timestamp=snapshot.created_at or _now(),
    )


def is_step_boundary(snapshot: StateSnapshot) -> bool:
    """Whether a snapshot is one of the moments dynavec recorded (see docs/compatibility.md §5):
    a run's start, the end of a step, the answer, out of steps, or a pause."""
    if snapshot.interrupts:
        return True
    if (snapshot.metadata or {}).get("source") == "input":
        return False
    return not pending_calls(list((snapshot.values or {}).get("messages") or []))
