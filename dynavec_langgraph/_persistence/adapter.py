"""A dynavec checkpointer as a LangGraph saver: :class:`DynavecCheckpointSaver`.

``checkpointer=`` given a dynavec-style checkpointer
(:class:`~dynavec_langgraph.checkpoint.BaseCheckpointer`, or any object with ``save`` /
``get`` / ``list`` / ``put``) is wrapped in a :class:`DynavecCheckpointSaver`.

The saver writes one dynavec record per LangGraph checkpoint. For the root namespace it
rebuilds the messages itself (the checkpoint's own value, or the parent's messages plus the
parent's pending writes, replayed through the graph's reducer exactly as ``DeltaChannel``
does) and stores the same view as :func:`~dynavec_langgraph.checkpoint.dynavec_view`:
``node_id`` ``init`` / ``step_i`` / ``interrupted`` / ``max_steps_reached``, ``step``, and
``state`` with goal, messages, steps, total_tool_calls, finished (+ output, + interrupted).
LangGraph's own checkpoint, metadata and pending writes go, serialized by the saver's ``serde``
and base64-encoded (so records stay JSON), under ``metadata["langgraph"]``; the adapter
rebuilds ``CheckpointTuple``s from that alone. Records are keyed by LangGraph's checkpoint id.

The user's ``checkpointer.list()`` shows dynavec's records only (docs/compatibility.md §5: ``init``,
``step_1``, ``step_2``, ..., ``interrupted``, ``max_steps_reached``). A LangGraph checkpoint
gets a record of its own when it is one of those moments: the thread's first checkpoint, the
end of a step, an answer, running out of steps (a new label), or a pause (promoted to its own
``interrupted`` record when its interrupt arrives). Every other LangGraph checkpoint (the
input checkpoint of a run, the one after the model asked for tools, the ones between two tool
calls of a batch, subgraph namespaces) is kept inside the latest record, in
``metadata["langgraph"]["entries"]`` after the record's own entry, which is saved again under
the same id; a checkpoint with the label of that record refreshes its dynavec state. So a run
that asks for a tool, gets its result and answers leaves ``init``, ``step_1``, ``step_2``.

The records' ``state["messages"]`` start with the agent's system prompt, as dynavec's do,
when the agent (``ReActAgent``, ``create_react_agent``, ``create_agent``) made this saver from
the dynavec checkpointer it was given (``system_prompt``; a saver built by hand has none unless
it is given one: LangGraph's checkpoints never hold the prompt). Other differences from a
dynavec-era run: pending writes update their checkpoint's record by saving it
again under the same id. ``delete_thread`` uses the checkpointer's
``delete(thread_id)`` when it supports it; otherwise it saves a tombstone record
(``node_id="deleted"``) and the adapter ignores everything before it.

Records written by dynavec itself (no ``metadata["langgraph"]``) end the LangGraph view too:
a thread whose latest record dynavec wrote shows no LangGraph state, and
:meth:`DynavecCheckpointSaver.dynavec_record` gives that record (``ReActAgent.resume`` answers
a pause recorded there from its messages).
"""

from __future__ import annotations

import base64
import copy
import random
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
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

from dynavec_langgraph._dynavec.view import interrupted_marker, json_metadata, state_view
from dynavec_langgraph._errors import StorageError
from dynavec_langgraph._graph.messages import ConversationChannel, pending_calls
from dynavec_langgraph._persistence.base import ThreadedAsyncSaver
from dynavec_langgraph._persistence.records import Checkpoint
from dynavec_langgraph._persistence.serde import safe_serializer

if TYPE_CHECKING:
    from dynavec_langgraph._persistence.records import DynavecCheckpointer

__all__ = ["DynavecCheckpointSaver"]

_LG_KEY: Final = "langgraph"
_TOMBSTONE: Final = "deleted"


@dataclass
class _Stored:
    """One LangGraph checkpoint as the adapter keeps it (decoded from a dynavec record)."""

    record: Checkpoint
    """The dynavec record holding it (its own, or the one it is kept in)."""
    ns: str
    checkpoint_id: str
    parent_id: str | None
    checkpoint: list[str]
    metadata: list[str]
    writes: list[dict[str, Any]]

    @property
    def own(self) -> bool:
        """Whether the record is this checkpoint's own (else it is kept in another one)."""
        return self.record.checkpoint_id == _record_key(self.ns, self.checkpoint_id)


def _entries(record: Checkpoint) -> list[dict[str, Any]]:
    """The LangGraph checkpoints a record holds, its own first (older records held one)."""
    lg = (record.metadata or {}).get(_LG_KEY)
    if not isinstance(lg, dict) or lg.get("tombstone"):
        return []
    return [dict(e) for e in lg["entries"]] if "entries" in lg else [dict(lg)]


def _entry_key(entry: Mapping[str, Any]) -> tuple[str, str]:
    return str(entry["checkpoint_ns"]), str(entry["checkpoint_id"])


def _holder(stored: Mapping[tuple[str, str], _Stored], ns: str, parent: str | None) -> str | None:
    """The id of the record holding LangGraph checkpoint ``parent``: a record's parent is the
    record before it in dynavec's sense, also when LangGraph's parent is kept inside it."""
    if parent is None:
        return None
    item = stored.get((ns, parent))
    return item.record.checkpoint_id if item is not None else _record_key(ns, parent)


def _with_entries(record: Checkpoint, entries: list[dict[str, Any]]) -> Checkpoint:
    """A copy of ``record`` holding ``entries`` (records are shared, never mutated)."""
    out = copy.copy(record)
    out.state = dict(record.state)
    out.metadata = {**record.metadata, _LG_KEY: {"entries": entries}}
    return out


_CONFLICTS: Final = 50
"""Attempts of one rewrite of a record that other processes keep changing."""


def _attempts(thread_id: str) -> Iterator[int]:
    """The attempts of a conditional rewrite (a short pause between two), then an error."""
    for n in range(_CONFLICTS):
        if n:
            time.sleep(min(0.002 * 2**n, 0.1) * random.random())
        yield n
    raise StorageError(
        f"could not save a checkpoint of thread {thread_id!r}: other callers kept changing its "
        f"record ({_CONFLICTS} attempts). Try again",
        thread_id,
        [],
    )


def _merged(
    stored: Sequence[dict[str, Any]], new: Sequence[dict[str, Any]]
) -> list[dict[str, Any]]:
    """``stored`` with the pending writes ``new`` added as LangGraph's savers do: the first
    write of a ``(task, index)`` wins (a later one is dropped), a special channel's (negative
    index) is replaced. Also where a put picks up writes parked before its checkpoint was
    stored: a write another process stored meanwhile stays the only one of its place."""
    out = list(stored)
    for write in new:
        place = (write["task_id"], write["idx"])
        same = [w for w in out if (w["task_id"], w["idx"]) == place]
        if same and write["idx"] >= 0:
            continue
        out = [w for w in out if w not in same]
        out.append(write)
    return out


def _record_key(ns: str, checkpoint_id: str) -> str:
    return checkpoint_id if ns == "" else f"{ns}#{checkpoint_id}"


class DynavecCheckpointSaver(ThreadedAsyncSaver[int]):
    """A LangGraph saver over a dynavec checkpointer (see the module docstring for the layout).

    Args:
        checkpointer: a :class:`BaseCheckpointer` (or an object with ``save``/``get``/``list``).
        serde: the serializer of LangGraph's data; the package's safe serializer by default.
        system_prompt: the agent's system prompt, the first message of each record's
            ``state["messages"]`` as in dynavec's records (``None``: none). An agent given a
            dynavec checkpointer sets it to its own.

    Example:
        >>> from dynavec_langgraph import MemoryCheckpointer, ReActAgent
        >>> from dynavec_langgraph.testing import ScriptedChatModel
        >>> store = MemoryCheckpointer()
        >>> agent = ReActAgent(ScriptedChatModel(turns=["4"]), checkpointer=store)
        >>> agent.run("2 + 2?", thread_id="t1").output
        '4'
        >>> store.get("t1").state["output"]
        '4'
    """

    def __init__(
        self,
        checkpointer: DynavecCheckpointer,
        *,
        serde: SerializerProtocol | None = None,
        system_prompt: str | None = None,
    ) -> None:
        super().__init__(serde=serde or safe_serializer())
        self.checkpointer = checkpointer
        self.system_prompt = system_prompt
        self._lock = threading.RLock()
        self._early_writes: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
        self._messages: OrderedDict[tuple[str, str], list[BaseMessage]] = OrderedDict()

    # --- encoding -----------------------------------------------------------------------

    @property
    def lock_owner(self) -> DynavecCheckpointer:
        """The dynavec checkpointer this saver stores in (the locks' hook,
        ``locks.AdaptsCheckpointer``)."""
        return self.checkpointer

    def _enc(self, value: Any) -> list[str]:
        kind, data = self.serde.dumps_typed(value)
        return [kind, base64.b64encode(data).decode("ascii")]

    def _dec(self, blob: Sequence[str]) -> Any:
        return self.serde.loads_typed((blob[0], base64.b64decode(blob[1])))

    def _load(self, thread_id: str) -> dict[tuple[str, str], _Stored]:
        """The thread's live LangGraph checkpoints, by ``(ns, checkpoint_id)``."""
        return self._load_all(thread_id)[0]

    def _load_all(self, thread_id: str) -> tuple[dict[tuple[str, str], _Stored], Checkpoint | None]:
        """The live checkpoints and the latest record (where new checkpoints are kept)."""
        out: dict[tuple[str, str], _Stored] = {}
        latest: Checkpoint | None = None
        for record in self.checkpointer.list(thread_id) or []:
            lg = (record.metadata or {}).get(_LG_KEY)
            if not isinstance(lg, dict) or lg.get("tombstone"):
                # a tombstone, or a record written by dynavec itself (no LangGraph data): the
                # LangGraph checkpoints before it are no longer the thread's state
                out.clear()
                latest = None
                continue
            latest = record
            for entry in _entries(record):
                item = _Stored(
                    record,
                    str(entry["checkpoint_ns"]),
                    str(entry["checkpoint_id"]),
                    entry.get("parent_checkpoint_id"),
                    entry["checkpoint"],
                    entry["metadata"],
                    list(entry.get("writes") or []),
                )
                key = (item.ns, item.checkpoint_id)
                if key in out and out[key].own and not item.own:
                    continue  # a stale copy left in the record it was promoted from
                out.pop(key, None)
                out[key] = item
        return out, latest

    def dynavec_record(self, thread_id: str) -> Checkpoint | None:
        """The thread's latest record when dynavec itself wrote it (no LangGraph data), else
        ``None``. The LangGraph view shows no state for such a thread; ``ReActAgent.resume``
        continues a pause recorded there from the record's messages."""
        latest: Checkpoint | None = self.checkpointer.get(thread_id)
        if latest is None or isinstance((latest.metadata or {}).get(_LG_KEY), dict):
            return None
        return latest

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
        channel = ConversationChannel()
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
            for _ in _attempts(thread_id):
                if self._put_once(thread_id, ns, parent_id, config, checkpoint, metadata, saved):
                    break
        return {
            "configurable": {
                "thread_id": thread_id,
                "checkpoint_ns": ns,
                "checkpoint_id": checkpoint["id"],
            }
        }

    def _put_once(
        self,
        thread_id: str,
        ns: str,
        parent_id: str | None,
        config: RunnableConfig,
        checkpoint: LGCheckpoint,
        metadata: CheckpointMetadata,
        saved: dict[str, Any],
    ) -> bool:
        """One attempt of :meth:`put` (``False``: the record it rewrites changed meanwhile)."""
        stored, latest = self._load_all(thread_id)
        key = (thread_id, ns, checkpoint["id"])
        old = stored.get((ns, checkpoint["id"]))
        writes = _merged(old.writes if old else [], self._early_writes.get(key, []))
        record = Checkpoint(
            thread_id=thread_id,
            checkpoint_id=_record_key(ns, checkpoint["id"]),
            parent_checkpoint_id=_record_key(ns, parent_id) if parent_id else None,
            step=int(metadata.get("step", 0)),
            timestamp=checkpoint["ts"],
        )
        moment = False
        if ns == "":
            messages = self._root_messages(thread_id, stored, checkpoint, parent_id)
            self._remember(thread_id, checkpoint["id"], messages)
            values = {**saved["channel_values"], "messages": messages}
            node_id, step, state = state_view(values, [], thread_id, self.system_prompt)
            record.node_id, record.step, record.state = node_id, step, state
            moment = metadata.get("source") != "input" and not pending_calls(messages)
        entry = {
            "checkpoint_ns": ns,
            "checkpoint_id": checkpoint["id"],
            "parent_checkpoint_id": parent_id,
            "checkpoint": self._enc(saved),
            "metadata": self._enc(get_checkpoint_metadata(config, metadata)),
            "writes": writes,
        }
        host = old.record if old is not None else latest
        if host is None or (old is not None and old.own):
            own = True
        elif old is None and moment:
            own = (record.node_id, record.step) != (host.node_id, host.step)
        else:
            own = False
        if own:
            record.parent_checkpoint_id = _holder(stored, ns, parent_id)
            record.metadata = {**json_metadata(metadata), _LG_KEY: {"entries": [entry]}}
            done = self._save(record, old.record if old is not None else None)
        else:
            assert host is not None
            kept = [e for e in _entries(host) if _entry_key(e) != (ns, checkpoint["id"])]
            updated = _with_entries(host, [*kept, entry])
            if moment:  # the same dynavec moment again: show its newest state
                updated.state = record.state
            done = self._save(updated, host)
        if done:
            self._early_writes.pop(key, None)
        return done

    def _save(self, record: Checkpoint, read: Checkpoint | None = None) -> bool:
        """Save a record; one whose own checkpoint has an interrupt becomes ``interrupted``.

        ``read``: the stored record this one rewrites (as loaded). A checkpointer with
        ``save_if_unchanged(record, read)`` (``DynamoDBCheckpointer``: a conditional put on
        the record's revision) saves it only if nobody saved ``read`` since, so the writes of
        another process to the same record are never lost; ``False``: it changed, load the
        thread again and redo the change. Other checkpointers save unconditionally."""
        entries = _entries(record)
        own = (
            entries[0]
            if entries and _record_key(*_entry_key(entries[0])) == (record.checkpoint_id)
            else None
        )
        writes = own["writes"] if own is not None else []
        interrupts = [self._dec(w["value"]) for w in writes if w["channel"] == INTERRUPT]
        flat = [i for v in interrupts for i in (v if isinstance(v, list | tuple) else [v])]
        if flat and record.node_id is not None and record.node_id != "interrupted":
            state = dict(record.state)
            state.pop("output", None)
            state["finished"] = False
            state["interrupted"] = interrupted_marker(flat[0], record.step, record.thread_id)
            record.node_id, record.state = "interrupted", state
        conditional = getattr(self.checkpointer, "save_if_unchanged", None)
        if read is not None and callable(conditional):
            return bool(conditional(record, read))
        self.checkpointer.save(record)
        return True

    def _promote(
        self, thread_id: str, stored: Mapping[tuple[str, str], _Stored], item: _Stored
    ) -> None:
        """A kept checkpoint that paused gets its own ``interrupted`` record."""
        checkpoint = self._dec(item.checkpoint)
        metadata = self._dec(item.metadata)
        messages = self._root_messages(thread_id, stored, checkpoint, item.parent_id)
        values = {**checkpoint["channel_values"], "messages": messages}
        node_id, step, state = state_view(values, [], thread_id, self.system_prompt)
        entry = next(e for e in _entries(item.record) if _entry_key(e) == ("", item.checkpoint_id))
        entry["writes"] = item.writes
        record = Checkpoint(
            thread_id=thread_id,
            checkpoint_id=_record_key("", item.checkpoint_id),
            parent_checkpoint_id=_holder(stored, "", item.parent_id),
            node_id=node_id,
            step=step,
            state=state,
            metadata={**json_metadata(metadata), _LG_KEY: {"entries": [entry]}},
            timestamp=checkpoint["ts"],
        )
        # the copy left in the old record is stale; _load_all prefers a checkpoint's own record
        self._save(record)

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
            for _ in _attempts(thread_id):
                if self._put_writes_once(thread_id, ns, checkpoint_id, writes, task_id, task_path):
                    return

    def _put_writes_once(
        self,
        thread_id: str,
        ns: str,
        checkpoint_id: str,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str,
    ) -> bool:
        """One attempt of :meth:`put_writes` (``False``: the record changed meanwhile)."""
        stored = self._load(thread_id)
        item = stored.get((ns, checkpoint_id))
        early = self._early_writes.setdefault((thread_id, ns, checkpoint_id), [])
        new = [
            {
                "task_id": task_id,
                "channel": channel,
                "value": self._enc(value),
                "task_path": task_path,
                "idx": WRITES_IDX_MAP.get(channel, idx),
            }
            for idx, (channel, value) in enumerate(writes)
        ]
        if item is None:
            early[:] = _merged(early, new)
            return True  # the checkpoint's put is still running: it picks these up
        current = _merged(item.writes, new)
        item.writes = current
        if not item.own and ns == "" and any(ch == INTERRUPT for ch, _ in writes):
            self._early_writes.pop((thread_id, ns, checkpoint_id), None)
            self._promote(thread_id, stored, item)
            return True
        entries = _entries(item.record)
        for entry in entries:
            if _entry_key(entry) == (ns, checkpoint_id):
                entry["writes"] = current
        done = self._save(_with_entries(item.record, entries), item.record)
        if done:
            self._early_writes.pop((thread_id, ns, checkpoint_id), None)
        return done

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
