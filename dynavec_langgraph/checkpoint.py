"""dynavec checkpoints on LangGraph checkpointers.

``checkpointer=`` (of :class:`~dynavec_langgraph.ReActAgent` and ``create_react_agent``) goes
through :func:`resolve_checkpointer`, which accepts:

* a LangGraph ``BaseCheckpointSaver`` (used as is);
* ``"sqlite:///path/to.db"`` (``sqlite:////abs/path.db``, ``sqlite:///:memory:``) or
  ``"postgresql://..."`` / ``"postgres://..."``: the package opens the connection, creates the
  tables and wraps the saver in a :class:`ConnectionSaver`, whose async methods run the sync
  saver in a worker thread, so ``invoke`` and ``ainvoke`` both work; ``close()`` releases it;
* a dynavec-style checkpointer (:class:`BaseCheckpointer`, or any object with ``save`` /
  ``get`` / ``list`` / ``put``), adapted by :class:`DynavecCheckpointSaver`.

Where the dynavec view is built. LangGraph savers store channel values, and with the default
``message_storage="delta"`` the ``messages`` channel is stored as per-step deltas. Two places
turn that into CONTRACT section 5's records:

* :func:`dynavec_view` builds a :class:`Checkpoint` from a ``StateSnapshot`` (what
  ``graph.get_state`` / ``get_state_history`` return). ``ReActAgent.get_checkpoint`` and
  ``list_checkpoints`` use it, so they work on every saver.
* :class:`DynavecCheckpointSaver` writes one dynavec record per LangGraph checkpoint. For the
  root namespace it rebuilds the messages itself (the checkpoint's own value, or the parent's
  messages plus the parent's pending writes, replayed through the graph's reducer exactly as
  ``DeltaChannel`` does) and stores the same view: ``node_id`` ``init`` / ``step_i`` /
  ``interrupted`` / ``max_steps_reached``, ``step``, and ``state`` with goal, messages,
  steps, total_tool_calls, finished (+ output, + interrupted). LangGraph's own checkpoint,
  metadata and pending writes go, serialized by the saver's ``serde`` and base64-encoded (so
  records stay JSON), under ``metadata["langgraph"]``; the adapter rebuilds
  ``CheckpointTuple``s from that alone. Records are keyed by LangGraph's checkpoint id.
  Differences from a dynavec-era run: every LangGraph superstep is a record (mid-step ones,
  e.g. between two tool calls of a batch, are labelled ``step_i`` with ``finished=False``),
  the system prompt is not in ``state["messages"]`` (the saver never sees it), subgraph
  namespaces are stored opaque (``node_id=None``, id ``"<ns>#<id>"``), and pending writes
  update their checkpoint's record by saving it again under the same id. ``delete_thread``
  uses the checkpointer's ``delete(thread_id)`` when it supports it; otherwise it saves a
  tombstone record (``node_id="deleted"``) and the adapter ignores everything before it.
"""

from __future__ import annotations

import asyncio
import base64
import copy
import sqlite3
import threading
import uuid
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final
from urllib.parse import urlsplit, urlunsplit

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.channels import DeltaChannel
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    BaseCheckpointSaver,
    ChannelVersions,
    CheckpointMetadata,
    CheckpointTuple,
    DeltaChannelHistory,
    PendingWrite,
    get_checkpoint_id,
    get_checkpoint_metadata,
    writes_sort_key,
)
from langgraph.checkpoint.base import Checkpoint as LGCheckpoint
from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.checkpoint.serde.types import INTERRUPT
from langgraph.types import Interrupt, StateSnapshot

from dynavec_langgraph.errors import CheckpointerConfigError
from dynavec_langgraph.messages import calls_of, merge_conversation, pending_calls, to_dynavec
from dynavec_langgraph.serde import safe_serializer

__all__ = [
    "BaseCheckpointer",
    "Checkpoint",
    "ConnectionSaver",
    "DynavecCheckpointSaver",
    "MemoryCheckpointer",
    "dynavec_view",
    "is_step_boundary",
    "resolve_checkpointer",
]

SCHEMES: Final = ("sqlite:///", "postgresql://", "postgres://")
"""Connection-string prefixes ``checkpointer=`` accepts."""

_LG_KEY: Final = "langgraph"
_TOMBSTONE: Final = "deleted"


# --- dynavec records -------------------------------------------------------------------


def _new_checkpoint_id() -> str:
    return f"cp_{datetime.now(UTC):%Y%m%d%H%M%S}_{uuid.uuid4().hex[:8]}"


def _now() -> str:
    return datetime.now(UTC).isoformat()


@dataclass
class Checkpoint:
    """One dynavec checkpoint record of a thread (CONTRACT section 5).

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
    state: dict[str, Any] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)
    timestamp: str = field(default_factory=_now)

    def to_dict(self) -> dict[str, Any]:
        """Return the record as a plain dict (JSON when ``state``/``metadata`` are)."""
        return {
            "thread_id": self.thread_id,
            "checkpoint_id": self.checkpoint_id,
            "parent_checkpoint_id": self.parent_checkpoint_id,
            "node_id": self.node_id,
            "step": self.step,
            "state": self.state,
            "metadata": self.metadata,
            "timestamp": self.timestamp,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Checkpoint:
        """Build a record from :meth:`to_dict`'s form (missing keys take their defaults)."""
        kwargs: dict[str, Any] = {"thread_id": str(data["thread_id"])}
        for key in ("checkpoint_id", "parent_checkpoint_id", "node_id", "timestamp"):
            if data.get(key) is not None:
                kwargs[key] = data[key]
        kwargs["step"] = int(data.get("step") or 0)
        kwargs["state"] = dict(data.get("state") or {})
        kwargs["metadata"] = dict(data.get("metadata") or {})
        return cls(**kwargs)


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


def _goal(messages: Sequence[BaseMessage]) -> str | None:
    for m in reversed(messages):
        if isinstance(m, HumanMessage):
            return str(to_dynavec(m).content or "")
    return None


def _interrupt_values(interrupts: Sequence[Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for item in interrupts:
        value = item.value if isinstance(item, Interrupt) else item
        out.append(value if isinstance(value, dict) else {"payload": value})
    return out


def _view(
    values: Mapping[str, Any],
    interrupts: Sequence[Any],
    thread_id: str,
    system_prompt: str | None = None,
) -> tuple[str, int, dict[str, Any]]:
    """``(node_id, step, state)`` of a ReAct graph state, in CONTRACT section 5's layout."""
    from dynavec_langgraph.agent import build_result  # agent imports this module

    messages: list[BaseMessage] = [
        m for m in values.get("messages") or [] if isinstance(m, BaseMessage)
    ]
    result = build_result(
        {"messages": messages}, [], thread_id=thread_id, max_steps=0, system_prompt=None
    )
    steps = result.steps
    head: list[dict[str, Any]] = (
        [{"role": "system", "content": system_prompt, "tool_call_id": None, "tool_calls": []}]
        if system_prompt
        else []
    )
    state: dict[str, Any] = {
        "goal": _goal(messages),
        "messages": head + [to_dynavec(m).to_dict() for m in messages],
        "steps": [s.to_dict() for s in steps],
        "total_tool_calls": result.tool_calls_count,
        "finished": False,
    }
    last = messages[-1] if messages else None
    at_rest = not pending_calls(messages)
    if interrupts:
        first = _interrupt_values(interrupts)[0]
        call = first.get("tool_call") or {}
        state["interrupted"] = {
            "node_id": first.get("node_id"),
            "payload": first.get("payload"),
            "tool_call_id": call.get("id"),
            "step": len(steps),
            "thread_id": thread_id,
        }
        return "interrupted", len(steps), state
    if not steps:
        return "init", 0, state
    if values.get("termination_reason") == "max_steps_reached" and at_rest:
        state["output"] = steps[-1].thought or (
            steps[-1].observations[-1] if steps[-1].observations else ""
        )
        return "max_steps_reached", len(steps), state
    if isinstance(last, AIMessage) and not calls_of(last):
        state["output"] = steps[-1].thought or ""
        state["finished"] = True
    return f"step_{len(steps)}", len(steps), state


def _json_metadata(metadata: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in metadata.items():
        if isinstance(value, str | int | float | bool) or value is None:
            out[key] = value
        elif key == "parents" and isinstance(value, dict):
            out[key] = {str(k): str(v) for k, v in value.items()}
    return out


def dynavec_view(
    snapshot: StateSnapshot, *, thread_id: str | None = None, system_prompt: str | None = None
) -> Checkpoint:
    """The dynavec :class:`Checkpoint` of a graph ``StateSnapshot`` (CONTRACT section 5).

    ``checkpoint_id`` and ``parent_checkpoint_id`` are LangGraph's checkpoint ids, so they can
    be passed back as ``run(..., resume_from=...)``. ``metadata`` holds LangGraph's metadata
    (``source``, ``step``...) and ``next`` (the nodes that would run next).
    """
    configurable = snapshot.config.get("configurable") or {}
    tid = thread_id or str(configurable.get("thread_id") or "")
    node_id, step, state = _view(snapshot.values or {}, snapshot.interrupts, tid, system_prompt)
    parent = (snapshot.parent_config or {}).get("configurable") or {}
    metadata = _json_metadata(snapshot.metadata or {})
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
    """Whether a snapshot is one of the moments dynavec recorded (see CONTRACT section 5):
    a run's start, the end of a step, the answer, out of steps, or a pause."""
    if snapshot.interrupts:
        return True
    if (snapshot.metadata or {}).get("source") == "input":
        return False
    return not pending_calls(list((snapshot.values or {}).get("messages") or []))


# --- the adapter: a dynavec checkpointer as a LangGraph saver ---------------------------


@dataclass
class _Stored:
    """One LangGraph checkpoint as the adapter keeps it (decoded from a dynavec record)."""

    record: Checkpoint
    ns: str
    checkpoint_id: str
    parent_id: str | None
    checkpoint: list[str]
    metadata: list[str]
    writes: list[dict[str, Any]]


def _record_key(ns: str, checkpoint_id: str) -> str:
    return checkpoint_id if ns == "" else f"{ns}#{checkpoint_id}"


class DynavecCheckpointSaver(BaseCheckpointSaver[int]):
    """A LangGraph saver over a dynavec checkpointer (see the module docstring for the layout).

    Args:
        checkpointer: a :class:`BaseCheckpointer` (or an object with ``save``/``get``/``list``).
        serde: the serializer of LangGraph's data; the package's safe serializer by default.

    Example:
        >>> from dynavec_langgraph import ReActAgent
        >>> from dynavec_langgraph.testing import ScriptedChatModel
        >>> store = MemoryCheckpointer()
        >>> agent = ReActAgent(ScriptedChatModel(turns=["4"]), checkpointer=store)
        >>> agent.run("2 + 2?", thread_id="t1").output
        '4'
        >>> store.get("t1").state["output"]
        '4'
    """

    def __init__(self, checkpointer: Any, *, serde: SerializerProtocol | None = None) -> None:
        super().__init__(serde=serde or safe_serializer())
        self.checkpointer = checkpointer
        self._lock = threading.RLock()
        self._early_writes: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
        self._messages: OrderedDict[tuple[str, str], list[BaseMessage]] = OrderedDict()

    # --- encoding -----------------------------------------------------------------------

    def _enc(self, value: Any) -> list[str]:
        kind, data = self.serde.dumps_typed(value)
        return [kind, base64.b64encode(data).decode("ascii")]

    def _dec(self, blob: Sequence[str]) -> Any:
        return self.serde.loads_typed((blob[0], base64.b64decode(blob[1])))

    def _load(self, thread_id: str) -> dict[tuple[str, str], _Stored]:
        """The thread's live LangGraph checkpoints, by ``(ns, checkpoint_id)``."""
        out: dict[tuple[str, str], _Stored] = {}
        for record in self.checkpointer.list(thread_id) or []:
            lg = (record.metadata or {}).get(_LG_KEY)
            if not isinstance(lg, dict):
                continue
            if lg.get("tombstone"):
                out.clear()
                continue
            item = _Stored(
                record,
                str(lg["checkpoint_ns"]),
                str(lg["checkpoint_id"]),
                lg.get("parent_checkpoint_id"),
                lg["checkpoint"],
                lg["metadata"],
                list(lg.get("writes") or []),
            )
            out.pop((item.ns, item.checkpoint_id), None)
            out[(item.ns, item.checkpoint_id)] = item
        return out

    def _tuple(self, thread_id: str, item: _Stored) -> CheckpointTuple:
        def conf(checkpoint_id: str) -> RunnableConfig:
            return {
                "configurable": {
                    "thread_id": thread_id,
                    "checkpoint_ns": item.ns,
                    "checkpoint_id": checkpoint_id,
                }
            }

        writes = sorted(
            item.writes, key=lambda w: writes_sort_key(w["task_path"], w["task_id"], w["idx"])
        )
        return CheckpointTuple(
            config=conf(item.checkpoint_id),
            checkpoint=self._dec(item.checkpoint),
            metadata=self._dec(item.metadata),
            parent_config=conf(item.parent_id) if item.parent_id else None,
            pending_writes=[(w["task_id"], w["channel"], self._dec(w["value"])) for w in writes],
        )

    # --- the dynavec view ---------------------------------------------------------------

    def _remember(self, thread_id: str, checkpoint_id: str, messages: list[BaseMessage]) -> None:
        self._messages[(thread_id, checkpoint_id)] = messages
        while len(self._messages) > 256:
            self._messages.popitem(last=False)

    def _root_messages(
        self,
        thread_id: str,
        stored: Mapping[tuple[str, str], _Stored],
        checkpoint: LGCheckpoint,
        parent_id: str | None,
    ) -> list[BaseMessage]:
        values = checkpoint["channel_values"]
        if "messages" not in checkpoint["channel_versions"]:
            return []
        channel: DeltaChannel[Any] = DeltaChannel(merge_conversation)
        if isinstance(values.get("messages"), list):
            return list(values["messages"])
        if "messages" in values:  # a delta snapshot blob
            return list(channel.from_checkpoint(values["messages"]).get())
        cached = self._messages.get((thread_id, parent_id or ""))
        if cached is not None and parent_id is not None:
            parent = stored[("", parent_id)]
            writes = [w for w in self._writes(parent) if w[1] == "messages"]
            restored = channel.from_checkpoint(cached)
        else:
            history = self._history(stored, "", parent_id, ["messages"])["messages"]
            writes = history["writes"]
            restored = channel.from_checkpoint(history.get("seed"))
        restored.replay_writes(writes)
        return list(restored.get())

    def _writes(self, item: _Stored) -> list[PendingWrite]:
        ordered = sorted(
            item.writes, key=lambda w: writes_sort_key(w["task_path"], w["task_id"], w["idx"])
        )
        return [(w["task_id"], w["channel"], self._dec(w["value"])) for w in ordered]

    def _history(
        self,
        stored: Mapping[tuple[str, str], _Stored],
        ns: str,
        start: str | None,
        channels: Sequence[str],
    ) -> dict[str, DeltaChannelHistory]:
        """``get_delta_channel_history`` from ``start`` (the target's parent) up the chain."""
        collected: dict[str, list[PendingWrite]] = {c: [] for c in channels}
        seeds: dict[str, Any] = {}
        remaining = set(channels)
        cursor = start
        while cursor is not None and remaining:
            item = stored.get((ns, cursor))
            if item is None:
                break
            wanted = [w for w in self._writes(item) if w[1] in remaining]
            for write in reversed(wanted):
                collected[write[1]].append(write)
            values = self._dec(item.checkpoint)["channel_values"]
            for ch in list(remaining):
                if ch in values:
                    seeds[ch] = values[ch]
                    remaining.discard(ch)
            cursor = item.parent_id
        result: dict[str, DeltaChannelHistory] = {}
        for ch in channels:
            entry: DeltaChannelHistory = {"writes": list(reversed(collected[ch]))}
            if ch in seeds:
                entry["seed"] = seeds[ch]
            result[ch] = entry
        return result

    # --- BaseCheckpointSaver ------------------------------------------------------------

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The checkpoint named by ``config`` (its latest in the namespace without an id)."""
        configurable = config["configurable"]
        thread_id = str(configurable["thread_id"])
        ns = str(configurable.get("checkpoint_ns") or "")
        stored = self._load(thread_id)
        checkpoint_id = get_checkpoint_id(config)
        if checkpoint_id is None:
            ids = [cid for (n, cid) in stored if n == ns]
            if not ids:
                return None
            checkpoint_id = max(ids)
        item = stored.get((ns, checkpoint_id))
        return self._tuple(thread_id, item) if item is not None else None

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """The thread's checkpoints, newest first, filtered like ``InMemorySaver.list``."""
        if config is None:
            raise ValueError(
                "a dynavec checkpointer cannot list every thread: pass a config with thread_id"
            )
        configurable = config["configurable"]
        thread_id = str(configurable["thread_id"])
        ns = configurable.get("checkpoint_ns")
        only = get_checkpoint_id(config)
        cutoff = get_checkpoint_id(before) if before else None
        stored = self._load(thread_id)
        items = sorted(stored.values(), key=lambda i: i.checkpoint_id, reverse=True)
        for item in items:
            if limit is not None and limit <= 0:
                return
            if ns is not None and item.ns != ns:
                continue
            if (only and item.checkpoint_id != only) or (cutoff and item.checkpoint_id >= cutoff):
                continue
            found = self._tuple(thread_id, item)
            if filter and any(found.metadata.get(k) != v for k, v in filter.items()):
                continue
            if limit is not None:
                limit -= 1
            yield found

    def put(
        self,
        config: RunnableConfig,
        checkpoint: LGCheckpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Save ``checkpoint`` as a dynavec record (with the dynavec view in the root ns)."""
        del new_versions  # every record carries its full channel values
        configurable = config["configurable"]
        thread_id = str(configurable["thread_id"])
        ns = str(configurable.get("checkpoint_ns") or "")
        parent_id = configurable.get("checkpoint_id")
        saved: dict[str, Any] = {**checkpoint}
        versions = checkpoint["channel_versions"]
        saved["channel_values"] = {
            k: v for k, v in checkpoint["channel_values"].items() if k in versions
        }
        with self._lock:
            stored = self._load(thread_id)
            key = (thread_id, ns, checkpoint["id"])
            old = stored.get((ns, checkpoint["id"]))
            writes = (old.writes if old else []) + self._early_writes.pop(key, [])
            record = Checkpoint(
                thread_id=thread_id,
                checkpoint_id=_record_key(ns, checkpoint["id"]),
                parent_checkpoint_id=_record_key(ns, parent_id) if parent_id else None,
                step=int(metadata.get("step", 0)),
                timestamp=checkpoint["ts"],
            )
            if ns == "":
                messages = self._root_messages(thread_id, stored, checkpoint, parent_id)
                self._remember(thread_id, checkpoint["id"], messages)
                values = {**saved["channel_values"], "messages": messages}
                node_id, step, state = _view(values, [], thread_id)
                record.node_id, record.step, record.state = node_id, step, state
            record.metadata = {
                **_json_metadata(metadata),
                _LG_KEY: {
                    "checkpoint_ns": ns,
                    "checkpoint_id": checkpoint["id"],
                    "parent_checkpoint_id": parent_id,
                    "checkpoint": self._enc(saved),
                    "metadata": self._enc(get_checkpoint_metadata(config, metadata)),
                    "writes": [],
                },
            }
            self._save(record, writes)
        return {
            "configurable": {
                "thread_id": thread_id,
                "checkpoint_ns": ns,
                "checkpoint_id": checkpoint["id"],
            }
        }

    def _save(self, record: Checkpoint, writes: Sequence[dict[str, Any]]) -> None:
        record.metadata[_LG_KEY]["writes"] = [*writes]
        interrupts = [self._dec(w["value"]) for w in writes if w["channel"] == INTERRUPT]
        flat = [i for v in interrupts for i in (v if isinstance(v, list | tuple) else [v])]
        if flat and record.node_id is not None and record.node_id != "interrupted":
            first = _interrupt_values(flat)[0]
            call = first.get("tool_call") or {}
            state = dict(record.state)
            state.pop("output", None)
            state["finished"] = False
            state["interrupted"] = {
                "node_id": first.get("node_id"),
                "payload": first.get("payload"),
                "tool_call_id": call.get("id"),
                "step": record.step,
                "thread_id": record.thread_id,
            }
            record.node_id, record.state = "interrupted", state
        self.checkpointer.save(record)

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Store a task's pending writes on the checkpoint named by ``config``."""
        configurable = config["configurable"]
        thread_id = str(configurable["thread_id"])
        ns = str(configurable.get("checkpoint_ns") or "")
        checkpoint_id = str(configurable["checkpoint_id"])
        with self._lock:
            stored = self._load(thread_id)
            item = stored.get((ns, checkpoint_id))
            early = self._early_writes.setdefault((thread_id, ns, checkpoint_id), [])
            current = list(item.writes) if item is not None else early
            for idx, (channel, value) in enumerate(writes):
                slot = WRITES_IDX_MAP.get(channel, idx)
                same = [w for w in current if (w["task_id"], w["idx"]) == (task_id, slot)]
                if same and slot >= 0:
                    continue
                for w in same:
                    current.remove(w)
                current.append(
                    {
                        "task_id": task_id,
                        "channel": channel,
                        "value": self._enc(value),
                        "task_path": task_path,
                        "idx": slot,
                    }
                )
            if item is None:
                return  # the checkpoint's put is still running: it picks these up
            self._early_writes.pop((thread_id, ns, checkpoint_id), None)
            record = copy.copy(item.record)
            record.metadata = {**record.metadata, _LG_KEY: dict(record.metadata[_LG_KEY])}
            self._save(record, current)

    def delete_thread(self, thread_id: str) -> None:
        """Delete the thread (or write a tombstone when the store cannot delete)."""
        with self._lock:
            for key in [k for k in self._early_writes if k[0] == thread_id]:
                del self._early_writes[key]
            for mkey in [k for k in self._messages if k[0] == thread_id]:
                del self._messages[mkey]
            delete = getattr(self.checkpointer, "delete", None)
            if callable(delete) and delete(thread_id):
                return
            if not self._load(thread_id):
                return
            self.checkpointer.save(
                Checkpoint(
                    thread_id,
                    checkpoint_id=f"{_TOMBSTONE}_{uuid.uuid4().hex}",
                    node_id=_TOMBSTONE,
                    metadata={_LG_KEY: {"tombstone": True}},
                )
            )

    def get_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """One read of the thread, then the parent-chain walk of the base class."""
        if not channels:
            return {}
        target = self.get_tuple(config)
        if target is None or target.parent_config is None:
            return {c: {"writes": []} for c in channels}
        configurable = target.config["configurable"]
        stored = self._load(str(configurable["thread_id"]))
        parent = target.parent_config["configurable"]["checkpoint_id"]
        return self._history(stored, str(configurable["checkpoint_ns"]), parent, channels)

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """Async twin of :meth:`get_tuple` (runs in a worker thread)."""
        return await asyncio.to_thread(self.get_tuple, config)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        """Async twin of :meth:`list`."""
        found = await asyncio.to_thread(
            lambda: list(self.list(config, filter=filter, before=before, limit=limit))
        )
        for item in found:
            yield item

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: LGCheckpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Async twin of :meth:`put`."""
        return await asyncio.to_thread(self.put, config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Async twin of :meth:`put_writes`."""
        await asyncio.to_thread(self.put_writes, config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        """Async twin of :meth:`delete_thread`."""
        await asyncio.to_thread(self.delete_thread, thread_id)

    async def aget_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """Async twin of :meth:`get_delta_channel_history`."""
        return await asyncio.to_thread(
            lambda: self.get_delta_channel_history(config=config, channels=channels)
        )


# --- savers opened from a connection string ---------------------------------------------


class ConnectionSaver(BaseCheckpointSaver[Any]):
    """A sync LangGraph saver the package opened from a connection string.

    The sync methods call ``inner`` (a ``SqliteSaver`` or ``PostgresSaver``); the async ones
    run them in a worker thread, so one agent can ``invoke`` and ``ainvoke``. :meth:`close`
    closes the connection (or pool) that was opened.

    Attributes:
        inner: the wrapped saver.
        url: the connection string, password masked.
    """

    def __init__(
        self, inner: BaseCheckpointSaver[Any], url: str, close: Callable[[], None]
    ) -> None:
        super().__init__(serde=inner.serde)
        self.inner = inner
        self.url = url
        self._close = close
        self.closed = False

    def close(self) -> None:
        """Close what was opened; idempotent."""
        if not self.closed:
            self.closed = True
            self._close()

    def __enter__(self) -> ConnectionSaver:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"ConnectionSaver({self.url!r})"

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """See ``BaseCheckpointSaver.get_tuple``."""
        return self.inner.get_tuple(config)

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """See ``BaseCheckpointSaver.list``."""
        return self.inner.list(config, filter=filter, before=before, limit=limit)

    def put(
        self,
        config: RunnableConfig,
        checkpoint: LGCheckpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """See ``BaseCheckpointSaver.put``."""
        return self.inner.put(config, checkpoint, metadata, new_versions)

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """See ``BaseCheckpointSaver.put_writes``."""
        self.inner.put_writes(config, writes, task_id, task_path)

    def delete_thread(self, thread_id: str) -> None:
        """See ``BaseCheckpointSaver.delete_thread``."""
        self.inner.delete_thread(thread_id)

    def get_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """See ``BaseCheckpointSaver.get_delta_channel_history``."""
        return self.inner.get_delta_channel_history(config=config, channels=channels)

    def get_next_version(self, current: Any, channel: None) -> Any:
        """The wrapped saver's versions."""
        return self.inner.get_next_version(current, channel)

    def with_allowlist(self, extra_allowlist: Collection[tuple[str, ...]]) -> ConnectionSaver:
        """A clone whose wrapped saver uses the derived allowlist."""
        inner = self.inner.with_allowlist(extra_allowlist)
        if inner is self.inner:
            return self
        clone = copy.copy(self)
        clone.inner, clone.serde = inner, inner.serde
        return clone

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """Async twin of :meth:`get_tuple` (worker thread)."""
        return await asyncio.to_thread(self.inner.get_tuple, config)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        """Async twin of :meth:`list` (worker thread)."""
        found = await asyncio.to_thread(
            lambda: list(self.inner.list(config, filter=filter, before=before, limit=limit))
        )
        for item in found:
            yield item

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: LGCheckpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Async twin of :meth:`put` (worker thread)."""
        return await asyncio.to_thread(self.inner.put, config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Async twin of :meth:`put_writes` (worker thread)."""
        await asyncio.to_thread(self.inner.put_writes, config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        """Async twin of :meth:`delete_thread` (worker thread)."""
        await asyncio.to_thread(self.inner.delete_thread, thread_id)

    async def aget_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """Async twin of :meth:`get_delta_channel_history` (worker thread)."""
        return await asyncio.to_thread(
            lambda: self.inner.get_delta_channel_history(config=config, channels=channels)
        )


def _masked(url: str) -> str:
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))


def _open_sqlite(url: str) -> ConnectionSaver:
    from langgraph.checkpoint.sqlite import SqliteSaver

    path = url[len("sqlite:///") :]
    if not path:
        raise CheckpointerConfigError(
            f"checkpointer={url!r} names no file: use 'sqlite:///path/to.db', "
            "'sqlite:////absolute/path.db' or 'sqlite:///:memory:'"
        )
    try:
        conn = sqlite3.connect(path, check_same_thread=False)
    except sqlite3.Error as exc:
        raise CheckpointerConfigError(f"cannot open SQLite file {path!r}: {exc}") from exc
    saver = SqliteSaver(conn, serde=safe_serializer())
    try:
        saver.setup()
    except sqlite3.Error as exc:
        conn.close()
        raise CheckpointerConfigError(f"cannot set up SQLite file {path!r}: {exc}") from exc
    return ConnectionSaver(saver, url, conn.close)


def _open_postgres(url: str) -> ConnectionSaver:
    import psycopg
    from langgraph.checkpoint.postgres import PostgresSaver
    from psycopg.rows import dict_row
    from psycopg_pool import ConnectionPool, PoolTimeout

    pool: ConnectionPool[Any] = ConnectionPool(
        url,
        min_size=1,
        max_size=8,
        kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row},
        open=False,
    )
    try:
        with psycopg.connect(url, autocommit=True, row_factory=dict_row) as probe:
            PostgresSaver(probe).setup()  # fails fast when the server is down
        pool.open(wait=True, timeout=10)
        saver = PostgresSaver(pool, serde=safe_serializer())
    except (PoolTimeout, psycopg.Error) as exc:
        pool.close()
        raise CheckpointerConfigError(
            f"cannot connect to PostgreSQL at {_masked(url)}: {exc}. Check that the server "
            "runs and the URI (host, port, database, user) is right"
        ) from exc
    return ConnectionSaver(saver, _masked(url), pool.close)


def resolve_checkpointer(checkpointer: Any) -> BaseCheckpointSaver[Any] | None:
    """Turn ``checkpointer=`` into a LangGraph saver.

    Args:
        checkpointer: ``None``; a LangGraph ``BaseCheckpointSaver``; a connection string
            ``"sqlite:///path/to.db"`` / ``"postgresql://..."``; or a dynavec-style
            checkpointer (``save``/``get``/``list``/``put``).

    Returns:
        ``None`` for ``None``; the saver itself; a :class:`ConnectionSaver` the caller owns
        (close it) for a string; a :class:`DynavecCheckpointSaver` for a dynavec checkpointer.

    Raises:
        CheckpointerConfigError: an unknown scheme, a file or server that cannot be opened,
            or an object that is no checkpointer.

    Example:
        >>> resolve_checkpointer(None) is None
        True
        >>> resolve_checkpointer(MemoryCheckpointer()).__class__.__name__
        'DynavecCheckpointSaver'
    """
    if checkpointer is None or isinstance(checkpointer, BaseCheckpointSaver):
        return checkpointer
    if isinstance(checkpointer, str):
        if checkpointer.startswith("sqlite:///"):
            return _open_sqlite(checkpointer)
        if checkpointer.startswith(("postgresql://", "postgres://")):
            return _open_postgres(checkpointer)
        raise CheckpointerConfigError(
            f"checkpointer={_masked(checkpointer)!r}: unknown scheme; use "
            "'sqlite:///path/to.db', 'postgresql://user:password@host:port/database' "
            "(or 'postgres://...'), a LangGraph saver, or a dynavec checkpointer"
        )
    if isinstance(checkpointer, BaseCheckpointer) or all(
        callable(getattr(checkpointer, name, None)) for name in ("save", "get", "list", "put")
    ):
        return DynavecCheckpointSaver(checkpointer)
    raise CheckpointerConfigError(
        f"checkpointer={checkpointer!r} is not a checkpointer: pass a LangGraph saver "
        "(InMemorySaver, SqliteSaver, PostgresSaver...), a connection string "
        "('sqlite:///path/to.db' or 'postgresql://...'), or a dynavec BaseCheckpointer"
    )
