"""``DynamoDBCheckpointer``: dynavec's durable checkpointer on Amazon DynamoDB, in dynavec's layout
(the public module is :mod:`dynavec_langgraph.dynamodb`).

A dynavec :class:`~dynavec_langgraph.checkpoint.BaseCheckpointer`, so it works everywhere a
dynavec checkpointer does: ``ReActAgent(..., checkpointer=DynamoDBCheckpointer(table))``,
``create_react_agent(..., checkpointer=...)`` (both adapt it with
:class:`~dynavec_langgraph._persistence.adapter.DynavecCheckpointSaver`, the LangGraph-saver
view), or the string ``"dynamodb://TABLE?region=eu-west-1&endpoint_url=http://127.0.0.1:8000&namespace=default
&lock_ttl=15&lock_heartbeat=5"`` (read by :func:`dynavec_langgraph.savers.parse_database_url`).
It needs the ``dynamodb`` extra (``boto3``); without it, using it raises
:class:`~dynavec_langgraph.exceptions.MissingDependencyError` naming the extra.

The item layout is described in :mod:`.records`, the resume lock in :mod:`.lock`.

Where this differs from dynavec (each is documented in docs/compatibility.md):

* saving a ``checkpoint_id`` again replaces its item and leaves the manifest alone (dynavec
  appends a second history entry); the LangGraph view re-saves records often (pending writes).
* reads are strongly consistent (``ConsistentRead``); :meth:`threads` is the one call that
  scans. Items written here carry a revision (``lg_rev``) so that a record already read by
  the same object is not fetched again while it is unchanged.
* **no record exceeds DynamoDB's 400 KB item limit**: a checkpoint item that would exceed
  :data:`INLINE_LIMIT` bytes keeps every attribute dynavec reads, but its LangGraph data
  (``metadata["langgraph"]``) and, if still too big, the bulky state keys (``messages``,
  ``steps``, ``output``, then the largest others) move into piece items of at most
  :data:`PIECE_SIZE` bytes each; its ``lg_pieces`` attribute names them. This package reads
  such a record whole; dynavec (which could not have written it) sees it without those keys.
* a manifest's ``history`` keeps at most 1,000 entries (about 200 KB): the older ones then move
  to history page items (``{ns}#lghistory#{thread_id}#...``, named in the manifest's
  ``lg_history_pages``) and the newest 200 stay. This package lists them all; dynavec's
  ``list`` sees the entries left in the manifest (its ``get`` is unaffected).
* a manifest that exists but cannot be read (its history is not a list of checkpoints, or its
  latest checkpoint is missing or damaged) raises :class:`StorageError` ("thread T cannot be
  read ...") instead of reading as an unknown thread.
"""

from __future__ import annotations

import builtins
import threading
import uuid
from collections import OrderedDict
from typing import Any, Final

from dynavec_langgraph._errors import CheckpointerConfigError, StorageError
from dynavec_langgraph._persistence.dynamodb.lock import DynamoDBResumeLock, machine
from dynavec_langgraph._persistence.dynamodb.records import CHECKPOINT, DynamoDBRecords
from dynavec_langgraph._persistence.dynamodb.values import from_dynamo, load_boto3, to_dynamo
from dynavec_langgraph._persistence.records import BaseCheckpointer, Checkpoint

__all__ = ["SCHEME", "DynamoDBCheckpointer"]

SCHEME: Final = "dynamodb://"
"""The URL prefix of a DynamoDB checkpointer (``dynamodb://TABLE?...``)."""
_MANIFEST: Final = "thread_manifest"
_HISTORY_MAX: Final = 1000
"""Entries a manifest's ``history`` holds at most (about 200 KB); the older ones then move to
a history page item, ``_HISTORY_KEEP`` stay."""
_HISTORY_KEEP: Final = 200


def _no_latest_item(checkpoint_id: str) -> str:
    """What is damaged when the manifest names a latest checkpoint whose item is gone."""
    return f"the manifest (its latest checkpoint {checkpoint_id!r} has no item)"


class DynamoDBCheckpointer(BaseCheckpointer, DynamoDBRecords, DynamoDBResumeLock):
    """dynavec's checkpointer on a DynamoDB table (see :mod:`.records` for the layout).

    Args:
        table: a boto3 ``Table`` resource (dynavec's form) or a table name.
        namespace: separates applications sharing one table.
        region_name: AWS region (boto3's default chain when ``None``), for a table name.
        endpoint_url: e.g. a local DynamoDB endpoint, for a table name.
        create_table: create the table (key ``pk`` only, on-demand billing) when it does not
            exist; default: yes for a table name, no for a ``Table`` resource (as dynavec).
        lock_ttl: seconds the resume lock's lease lasts; its holder renews it every
            ``lock_heartbeat`` seconds, so a holder on another machine that died frees the
            lock at most ``lock_ttl`` seconds later (on the same machine: at once).
        lock_heartbeat: seconds between two renewals (default ``lock_ttl / 3``).
        lock_owner_check: record this machine in the locks it takes, so that a caller on the
            same machine frees the lock of a holder that died at once; with ``False`` the
            lease alone frees it (at most ``lock_ttl`` seconds after the holder died).

    Raises:
        MissingDependencyError: ``boto3`` is not installed (the ``dynamodb`` extra).
        CheckpointerConfigError: a bad argument, no AWS credentials or region, or a table
            whose key schema is not dynavec's.
    """

    def __init__(
        self,
        table: Any,
        *,
        namespace: str = "default",
        region_name: str | None = None,
        endpoint_url: str | None = None,
        create_table: bool | None = None,
        lock_ttl: float = 15.0,
        lock_heartbeat: float | None = None,
        lock_owner_check: bool = True,
    ) -> None:
        boto3 = load_boto3()
        if not isinstance(namespace, str) or not namespace or "#" in namespace:
            raise CheckpointerConfigError(
                f"namespace={namespace!r}: use a non-empty name without '#'"
            )
        numbers = (lock_ttl,) if lock_heartbeat is None else (lock_ttl, lock_heartbeat)
        if not all(isinstance(n, int | float) and not isinstance(n, bool) for n in numbers):
            raise CheckpointerConfigError(
                f"lock_ttl={lock_ttl!r}, lock_heartbeat={lock_heartbeat!r}: give seconds as "
                "numbers (e.g. lock_ttl=15, lock_heartbeat=5)"
            )
        heartbeat = lock_ttl / 3 if lock_heartbeat is None else lock_heartbeat
        if not lock_ttl > 0 or not 0 < heartbeat < lock_ttl:
            raise CheckpointerConfigError(
                f"lock_ttl={lock_ttl!r}, lock_heartbeat={lock_heartbeat!r}: use a lease of "
                "some seconds and a heartbeat shorter than it (e.g. lock_ttl=15, "
                "lock_heartbeat=5); the holder renews its lease every heartbeat"
            )
        self.namespace = namespace
        self.lock_ttl = float(lock_ttl)
        self.lock_heartbeat = float(heartbeat)
        if isinstance(table, str):
            if not table:
                raise CheckpointerConfigError("DynamoDBCheckpointer needs a table name")
            try:
                # a session of its own: the credentials and region of the environment now
                # (boto3's default session keeps the first ones it found)
                resource = boto3.session.Session().resource(
                    "dynamodb", region_name=region_name, endpoint_url=endpoint_url
                )
            except Exception as error:
                raise self._config_error(error, table) from None
            self.table = resource.Table(table)
        else:
            self.table = table
        self.table_name = str(self.table.name)
        self._cache = OrderedDict()
        self._history_max = _HISTORY_MAX
        self._history_keep = _HISTORY_KEEP
        self._cache_lock = threading.Lock()
        self._read_revisions = {}
        self.lock_owner_check = bool(lock_owner_check)
        self._machine = machine() if lock_owner_check else None
        if create_table if create_table is not None else isinstance(table, str):
            self.setup()

    def __repr__(self) -> str:
        return f"DynamoDBCheckpointer({self.table_name!r}, namespace={self.namespace!r})"

    # --- BaseCheckpointer -------------------------------------------------------------

    def save(self, checkpoint: Checkpoint) -> None:
        """Store ``checkpoint`` (dynavec's ``save``). A new checkpoint is appended to the
        thread's manifest atomically; saving an id again replaces its item and keeps its place
        (dynavec would append it a second time)."""
        item, pieces = self._item(checkpoint)
        old = self._call(
            self.table.get_item,
            Key={"pk": item["pk"]},
            ProjectionExpression="pk, lg_pieces",
            ConsistentRead=True,
        ).get("Item")
        for piece in pieces:
            self._call(self.table.put_item, Item=piece)
        self._call(self.table.put_item, Item=item)
        stored = Checkpoint.from_dict(from_dynamo(to_dynamo(checkpoint.to_dict())))
        self._remember(str(item["pk"]), item["lg_rev"], stored)  # as a read would give it
        if old is not None:
            keep = set(item.get("lg_pieces") or [])
            for name in [str(n) for n in old.get("lg_pieces") or [] if n not in keep]:
                self._call(self.table.delete_item, Key={"pk": name})
            return
        entry = {
            "checkpoint_id": checkpoint.checkpoint_id,
            "parent_checkpoint_id": checkpoint.parent_checkpoint_id,
            "node_id": checkpoint.node_id,
            "step": checkpoint.step,
            "timestamp": checkpoint.timestamp,
        }
        failed = self.table.meta.client.exceptions.ConditionalCheckFailedException
        for _ in range(10):
            try:
                self._call(
                    self.table.update_item,
                    Key={"pk": self._key("thread", checkpoint.thread_id)},
                    UpdateExpression=(
                        "SET latest_checkpoint_id = :cid, updated_at = :ts, #tp = :type, "
                        "history = list_append(if_not_exists(history, :empty_list), :new_entry)"
                    ),
                    ConditionExpression="attribute_not_exists(history) OR size(history) < :max",
                    ExpressionAttributeNames={"#tp": "type"},
                    ExpressionAttributeValues={
                        ":cid": checkpoint.checkpoint_id,
                        ":ts": checkpoint.timestamp,
                        ":type": _MANIFEST,
                        ":empty_list": [],
                        ":new_entry": [to_dynamo(entry)],
                        ":max": self._history_max,
                    },
                )
                return
            except failed:
                self._rotate(checkpoint.thread_id)
        raise StorageError(
            f"could not append checkpoint {checkpoint.checkpoint_id!r} to the manifest of "
            f"thread {checkpoint.thread_id!r} in the DynamoDB table {self.table_name!r}: "
            "other callers kept changing it. Try again",
            checkpoint.thread_id,
            [],
        )

    def save_if_unchanged(self, checkpoint: Checkpoint, read: Checkpoint) -> bool:
        """Replace the stored record ``read`` (returned by :meth:`get` or :meth:`list` of this
        object) with ``checkpoint`` (the same id), only if nobody saved it since it was read:
        one conditional put on the item's revision (``lg_rev``). ``False`` (nothing written)
        when it changed or is gone: read it again and redo the change. The LangGraph view
        (:class:`~dynavec_langgraph._persistence.adapter.DynavecCheckpointSaver`) saves every
        rewrite of a record this way, so writes of two processes to one record both land (a
        claim of a resumed call among them, first writer wins).

        Raises:
            ValueError: ``read`` was not read through this object, or the ids differ.
        """
        with self._cache_lock:
            known = self._read_revisions.get(id(read))
        if known is None or known[0]() is not read:
            raise ValueError(
                "save_if_unchanged(checkpoint, read): pass as read a record this "
                "DynamoDBCheckpointer returned from get() or list()"
            )
        if (checkpoint.thread_id, checkpoint.checkpoint_id) != (read.thread_id, read.checkpoint_id):
            raise ValueError(
                f"save_if_unchanged: checkpoint {checkpoint.checkpoint_id!r} of thread "
                f"{checkpoint.thread_id!r} does not replace the record read "
                f"({read.checkpoint_id!r} of {read.thread_id!r}); use save() for a new record"
            )
        revision = known[1]
        item, pieces = self._item(checkpoint)
        for piece in pieces:
            self._call(self.table.put_item, Item=piece)
        if revision is None:  # an item dynavec wrote (no revision)
            condition: dict[str, Any] = {
                "ConditionExpression": "attribute_exists(pk) AND attribute_not_exists(lg_rev)"
            }
        else:
            condition = {
                "ConditionExpression": "lg_rev = :rev",
                "ExpressionAttributeValues": {":rev": revision},
            }
        try:
            answer = self._call(self.table.put_item, Item=item, ReturnValues="ALL_OLD", **condition)
        except self.table.meta.client.exceptions.ConditionalCheckFailedException:
            for piece in pieces:
                self._call(self.table.delete_item, Key={"pk": piece["pk"]})
            return False
        stored = Checkpoint.from_dict(from_dynamo(to_dynamo(checkpoint.to_dict())))
        self._remember(str(item["pk"]), item["lg_rev"], stored)
        keep = set(item.get("lg_pieces") or [])
        old = answer.get("Attributes") or {}
        for name in [str(n) for n in old.get("lg_pieces") or [] if n not in keep]:
            self._call(self.table.delete_item, Key={"pk": name})
        return True

    def _rotate(self, thread_id: str) -> None:
        """Move the older entries of a full manifest history to a history page item (so the
        manifest stays far below the item limit); the newest ones stay for dynavec's readers.
        Conditional on the history not having changed meanwhile (else nothing happens)."""
        manifest = self._manifest(thread_id) or {}
        history = list(manifest.get("history") or [])
        if len(history) < self._history_max:
            return  # someone rotated it meanwhile
        keep = self._history_keep
        page = f"{self._key('lghistory', thread_id)}#{uuid.uuid4().hex[:12]}"
        self._call(
            self.table.put_item,
            Item={"pk": page, "type": "lg_history", "history": history[:-keep]},
        )
        try:
            self._call(
                self.table.update_item,
                Key={"pk": self._key("thread", thread_id)},
                UpdateExpression=(
                    "SET history = :kept, "
                    "lg_history_pages = list_append(if_not_exists(lg_history_pages, :none), :p)"
                ),
                ConditionExpression="size(history) = :n",
                ExpressionAttributeValues={
                    ":kept": history[-keep:],
                    ":none": [],
                    ":p": [page],
                    ":n": len(history),
                },
            )
        except self.table.meta.client.exceptions.ConditionalCheckFailedException:
            self._call(self.table.delete_item, Key={"pk": page})

    def get(self, thread_id: str, checkpoint_id: str | None = None) -> Checkpoint | None:
        """The thread's latest record (the manifest's ``latest_checkpoint_id``), or the one
        with ``checkpoint_id``; ``None`` when absent.

        Raises:
            StorageError: the manifest or the record is damaged.
        """
        if checkpoint_id is None:
            manifest = self._manifest(thread_id)
            if manifest is None:
                return None
            self._history(thread_id, manifest)
            checkpoint_id = manifest.get("latest_checkpoint_id")
            if not checkpoint_id:
                return None
            found = self._records(thread_id, [checkpoint_id])
            if not found:
                raise self._damaged(thread_id, _no_latest_item(checkpoint_id))
            return found[0]
        found = self._records(thread_id, [checkpoint_id])
        return found[0] if found else None

    def list(self, thread_id: str, limit: int | None = None) -> builtins.list[Checkpoint]:
        """The thread's records in save order, oldest first (``limit`` keeps the newest).

        Raises:
            StorageError: the manifest, or a record of it, is damaged.
        """
        manifest = self._manifest(thread_id)
        if manifest is None:
            return []
        ids = self._history(thread_id, manifest)
        latest = manifest.get("latest_checkpoint_id")
        if limit is not None:
            ids = ids[-limit:] if limit > 0 else []
        if not ids:
            return []
        records = self._records(thread_id, ids)
        if latest and latest in ids and all(r.checkpoint_id != latest for r in records):
            raise self._damaged(thread_id, _no_latest_item(latest))
        return records

    def delete(self, thread_id: str) -> bool:
        """Delete the thread's checkpoint items, their pieces and its manifest (a held lock
        stays)."""
        manifest = self._manifest(thread_id)
        if manifest is None:
            return True
        try:
            ids = self._history(thread_id, manifest)
        except StorageError:
            ids = []
        pks = [self._key(CHECKPOINT, thread_id, cid) for cid in ids]
        items = self._get_many(pks) if pks else {}
        doomed = [*items, *(str(n) for i in items.values() for n in i.get("lg_pieces") or [])]
        doomed += [str(p) for p in manifest.get("lg_history_pages") or []]
        with self.table.batch_writer() as batch:
            for pk in dict.fromkeys(doomed):
                batch.delete_item(Key={"pk": pk})
        self._call(self.table.delete_item, Key={"pk": self._key("thread", thread_id)})
        return True

    def threads(self) -> builtins.list[str]:
        """The thread ids of this namespace that have a manifest (the one call that scans)."""
        out: builtins.list[str] = []
        prefix = f"{self.namespace}#thread#"
        kwargs: dict[str, Any] = {
            "FilterExpression": "begins_with(pk, :p)",
            "ExpressionAttributeValues": {":p": prefix},
            "ProjectionExpression": "pk",
        }
        while True:
            page = self._call(self.table.scan, **kwargs)
            out += [str(i["pk"])[len(prefix) :] for i in page.get("Items", [])]
            if "LastEvaluatedKey" not in page:
                return sorted(out)
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
