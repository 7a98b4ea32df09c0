"""The item layout of the DynamoDB checkpointer: checkpoint items and their pieces, the
manifest's history, and the records one object keeps in memory.

**Layout: dynavec's own** (docs/compatibility.md, rows C10 and D1-D12), so a table written by
dynavec is read here and a table written here is read by dynavec. The key schema is ``pk``
(string) only: no sort key, no index.

============  ==============================================  ====================================
item          ``pk``                                          attributes
============  ==============================================  ====================================
checkpoint    ``{ns}#checkpoint#{thread_id}#{checkpoint}``    ``ns``, ``type="checkpoint"``,
                                                              ``thread_id``, ``checkpoint_id``,
                                                              ``parent_checkpoint_id``,
                                                              ``node_id``, ``step``, ``state``,
                                                              ``metadata``, ``timestamp``
manifest      ``{ns}#thread#{thread_id}``                     ``type="thread_manifest"``,
                                                              ``latest_checkpoint_id``,
                                                              ``updated_at``, ``history``
                                                              (one map per checkpoint)
resume lock   ``{ns}#lglock#{thread_id}``                     this package only (below)
history page  ``{ns}#lghistory#{thread_id}#...``              this package only (below)
record piece  ``{ns}#lgpart#{thread_id}#{checkpoint}#...``    this package only (below)
============  ==============================================  ====================================

Values: floats are stored as numbers (``Decimal(str(x))``), tuples as lists; a stored number
reads back as an ``int`` when it is whole (``1.0`` -> ``1``), else as a ``float``, as dynavec
does. The LangGraph side (serialized checkpoints and pending writes, base64) lives in the
``metadata["langgraph"]`` map of the checkpoint items, which dynavec ignores. Only ``pk``
prefixes dynavec never uses (``#lglock#``, ``#lgpart#``, ``#lghistory#``) are added, so the
table may keep holding dynavec's memory and document items.
"""

from __future__ import annotations

import builtins
import copy
import json
import threading
import uuid
import weakref
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Final

from dynavec_langgraph._persistence.dynamodb.table import DynamoDBTable
from dynavec_langgraph._persistence.dynamodb.values import from_dynamo, item_size, to_dynamo
from dynavec_langgraph._persistence.records import Checkpoint
from dynavec_langgraph._types import JSONMapping, JSONObject

__all__ = ["CHECKPOINT", "INLINE_LIMIT", "PIECE_SIZE", "DynamoDBRecords"]

INLINE_LIMIT: Final = 350_000
"""Bytes (DynamoDB's item-size accounting) above which a checkpoint item is stored in pieces;
DynamoDB refuses items over 400 KB."""
PIECE_SIZE: Final = 300_000
"""Bytes of record data per piece item."""

CHECKPOINT: Final = "checkpoint"
_PIECE: Final = "lg_piece"
_CACHED: Final = 256
"""Records kept in memory per checkpointer object (see ``_records``)."""
_BULKY_STATE: Final = ("messages", "steps", "output")
_LG_META: Final = "langgraph"


class DynamoDBRecords(DynamoDBTable):
    """Checkpoint items <-> records, and the records read or saved by this object, by
    revision."""

    _cache: OrderedDict[str, tuple[str, Checkpoint]]
    _cache_lock: threading.Lock
    _read_revisions: dict[int, tuple[weakref.ref[Checkpoint], str | None]]

    # --- records ----------------------------------------------------------------------

    def _item(self, checkpoint: Checkpoint) -> tuple[JSONObject, list[JSONObject]]:
        """The checkpoint item (dynavec's attributes) and its piece items (none when it fits)."""
        data = checkpoint.to_dict()
        pk = self._key(CHECKPOINT, checkpoint.thread_id, checkpoint.checkpoint_id)
        item: JSONObject = {
            "pk": pk,
            "ns": self.namespace,
            "type": CHECKPOINT,
            **to_dynamo(data),
            "lg_rev": uuid.uuid4().hex,
        }
        if item_size(item) <= INLINE_LIMIT:
            return item, []
        moved: dict[str, JSONObject] = {}

        def move(field: str, key: str) -> None:
            moved.setdefault(field, {})[key] = data[field][key]
            item[field] = {k: v for k, v in item[field].items() if k != key}

        if _LG_META in item["metadata"]:
            move("metadata", _LG_META)
        for key in _BULKY_STATE:  # dynavec's bulky keys first, then the largest others
            if item_size(item) > INLINE_LIMIT and key in item["state"]:
                move("state", key)
        others = [(item_size(v), f, k) for f in ("state", "metadata") for k, v in item[f].items()]
        for _, field, key in sorted(others, reverse=True):
            if item_size(item) > INLINE_LIMIT:
                move(field, key)
        if item_size(item) > INLINE_LIMIT:
            raise ValueError(
                f"checkpoint {checkpoint.checkpoint_id!r} of thread {checkpoint.thread_id!r} "
                "does not fit a DynamoDB item even without its state and metadata (its ids "
                "are too long)"
            )
        text = json.dumps(moved, ensure_ascii=True, separators=(",", ":"))
        nonce = uuid.uuid4().hex[:12]
        chunks = [text[i : i + PIECE_SIZE] for i in range(0, len(text), PIECE_SIZE)]
        pieces = [
            {
                "pk": f"{self._key('lgpart', checkpoint.thread_id, checkpoint.checkpoint_id)}"
                f"#{nonce}#{n}",
                "type": _PIECE,
                "data": chunk,
            }
            for n, chunk in enumerate(chunks)
        ]
        item["lg_pieces"] = [p["pk"] for p in pieces]
        return item, pieces

    def _record(self, thread_id: str, item: JSONMapping, pieces: JSONMapping) -> Checkpoint:
        """A checkpoint item (and its pieces) -> a :class:`Checkpoint`."""
        what = f"the checkpoint item {item.get('pk')!r}"
        try:
            data = from_dynamo(dict(item))
            names = data.get("lg_pieces")
            if names:
                parts = [pieces.get(str(n)) for n in names]
                if any(p is None for p in parts):
                    raise ValueError("a piece of it is missing")
                moved = json.loads("".join(str(p["data"]) for p in parts if p is not None))
                for field, values in moved.items():
                    data[field] = {**dict(data.get(field) or {}), **values}
            record = Checkpoint.from_dict(data)
        except Exception as error:
            raise self._damaged(thread_id, f"{what} ({type(error).__name__}: {error})") from None
        return record

    def _revisions(self, pks: Sequence[str]) -> dict[str, str | None]:
        """``lg_rev`` of each existing item (``None``: written by dynavec)."""
        found = self._get_many(pks, projection="pk, lg_rev")
        return {
            pk: item.get("lg_rev") if isinstance(item.get("lg_rev"), str) else None
            for pk, item in found.items()
        }

    def _records(self, thread_id: str, ids: Sequence[str]) -> builtins.list[Checkpoint]:
        """The records of ``ids`` (in that order, missing ones skipped, as dynavec does).

        Records this package wrote carry a revision (``lg_rev``); one already read or saved
        by this object and unchanged since is taken from memory (a copy), so reading a
        thread costs one small request per 100 records plus the changed ones."""
        pks = [self._key(CHECKPOINT, thread_id, cid) for cid in ids]
        revisions = self._revisions(pks)
        out: dict[str, Checkpoint] = {}
        fetch: builtins.list[str] = []
        with self._cache_lock:
            for pk in dict.fromkeys(pks):
                if pk not in revisions:
                    continue
                cached = self._cache.get(pk)
                if cached is not None and revisions[pk] is not None and cached[0] == revisions[pk]:
                    self._cache.move_to_end(pk)
                    out[pk] = copy.deepcopy(cached[1])
                else:
                    fetch.append(pk)
        items = self._get_many(fetch)
        names = [str(n) for item in items.values() for n in item.get("lg_pieces") or []]
        pieces = self._get_many(names) if names else {}
        for pk, item in items.items():
            out[pk] = self._record(thread_id, item, pieces)
            self._remember(pk, item.get("lg_rev"), out[pk])
            revisions[pk] = item.get("lg_rev") if isinstance(item.get("lg_rev"), str) else None
        for pk, record in out.items():
            self._read_at(record, revisions.get(pk))
        return [out[pk] for pk in pks if pk in out]

    def _read_at(self, record: Checkpoint, revision: str | None) -> None:
        """Note the revision a returned record was read at (for :meth:`save_if_unchanged`)."""
        key = id(record)
        revisions = self._read_revisions

        def forget(dead: weakref.ref[Checkpoint], key: int = key) -> None:
            # no lock: the collector may call this while this thread holds one
            entry = revisions.get(key)
            if entry is not None and entry[0] is dead:
                revisions.pop(key, None)

        with self._cache_lock:
            revisions[key] = (weakref.ref(record, forget), revision)

    def _remember(self, pk: str, revision: object, record: Checkpoint) -> None:
        if not isinstance(revision, str):
            return
        with self._cache_lock:
            self._cache[pk] = (revision, copy.deepcopy(record))
            self._cache.move_to_end(pk)
            while len(self._cache) > _CACHED:
                self._cache.popitem(last=False)

    def _manifest(self, thread_id: str) -> JSONObject | None:
        return self._get(self._key("thread", thread_id))

    def _history(self, thread_id: str, manifest: JSONMapping) -> builtins.list[str]:
        """The checkpoint ids of the thread's history (its history pages, then the
        manifest's own entries), in save order (checked)."""
        history = from_dynamo(manifest.get("history"))
        pages = from_dynamo(manifest.get("lg_history_pages"))
        if pages:
            if not isinstance(pages, list) or not all(isinstance(p, str) for p in pages):
                raise self._damaged(thread_id, f"the manifest (lg_history_pages={pages!r})")
            found = self._get_many(pages)
            if any(p not in found for p in pages):
                raise self._damaged(thread_id, "the manifest (a history page is missing)")
            older = [e for p in pages for e in from_dynamo(found[p].get("history") or [])]
            history = [*older, *history] if isinstance(history, list) else history
        latest = from_dynamo(manifest.get("latest_checkpoint_id"))
        if latest is not None and not isinstance(latest, str):
            raise self._damaged(thread_id, f"the manifest (latest_checkpoint_id={latest!r})")
        if history is None:
            return [latest] if latest else []
        if not isinstance(history, list) or not all(
            isinstance(e, Mapping) and isinstance(e.get("checkpoint_id"), str) for e in history
        ):
            shown = repr(history)[:120]
            raise self._damaged(
                thread_id, f"the manifest (its history is not a list of checkpoints: {shown})"
            )
        ids = [str(e["checkpoint_id"]) for e in history]
        if latest and not ids:
            ids = [latest]
        return ids
