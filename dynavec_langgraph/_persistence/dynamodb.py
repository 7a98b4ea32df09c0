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

**The resume lock** (``resume_lock`` / ``aresume_lock``, used by ``ReActAgent`` around every
run and resume of a named thread) is a conditional put of the lock item, so it holds across
processes and machines. Its holder renews a short lease (``lock_ttl`` seconds, default 15)
every ``lock_heartbeat`` seconds (default ``lock_ttl / 3``) from a background thread, and the
item names the holder (host, boot, PID namespace, process id and start time). The next caller:

* on the holder's machine, takes the lock over at once when that process is gone (an owner
  check: a SIGKILLed holder blocks nobody) and never while it still runs (Linux; with
  ``lock_owner_check=False``, or elsewhere, the lease alone applies);
* elsewhere, takes it over once the lease has run out (at most ``lock_ttl`` seconds after the
  holder died);
* otherwise gets :class:`ConcurrentResumeError` saying which process holds it, when its lease
  was last renewed and when it would free if that process has died.
"""

from __future__ import annotations

import asyncio
import builtins
import copy
import json
import logging
import os
import socket
import threading
import time
import uuid
import weakref
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager, suppress
from decimal import Decimal
from typing import Any, Final, TypeVar

from dynavec_langgraph._errors import (
    CheckpointerConfigError,
    ConcurrentResumeError,
    StorageError,
)
from dynavec_langgraph._extras import missing_extra
from dynavec_langgraph._persistence.kinds import is_instance_of
from dynavec_langgraph._persistence.records import BaseCheckpointer, Checkpoint

__all__ = ["INLINE_LIMIT", "PIECE_SIZE", "SCHEME", "DynamoDBCheckpointer"]

SCHEME: Final = "dynamodb://"
"""The URL prefix of a DynamoDB checkpointer (``dynamodb://TABLE?...``)."""
INLINE_LIMIT: Final = 350_000
"""Bytes (DynamoDB's item-size accounting) above which a checkpoint item is stored in pieces;
DynamoDB refuses items over 400 KB."""
PIECE_SIZE: Final = 300_000
"""Bytes of record data per piece item."""

_CHECKPOINT: Final = "checkpoint"
_MANIFEST: Final = "thread_manifest"
_LOCK: Final = "lg_lock"
_PIECE: Final = "lg_piece"
_HISTORY_MAX: Final = 1000
"""Entries a manifest's ``history`` holds at most (about 200 KB); the older ones then move to
a history page item, ``_HISTORY_KEEP`` stay."""
_HISTORY_KEEP: Final = 200
_CACHED: Final = 256
"""Records kept in memory per checkpointer object (see ``_records``)."""
_BULKY_STATE: Final = ("messages", "steps", "output")
_LG_META: Final = "langgraph"

_log = logging.getLogger(__name__)
T = TypeVar("T")


def _boto3() -> Any:
    try:
        import boto3
    except ImportError:
        raise missing_extra("DynamoDBCheckpointer", "boto3", "dynamodb") from None
    return boto3


# --- values ---------------------------------------------------------------------------


def _to_dynamo(value: Any) -> Any:
    """Plain Python -> what boto3 stores (dynavec's encoding: floats as ``Decimal(str(x))``)."""
    if isinstance(value, bool) or value is None or isinstance(value, str | int):
        return value
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError(f"DynamoDB cannot store the number {value!r}")
        return Decimal(str(value))
    if isinstance(value, Mapping):
        return {str(k): _to_dynamo(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_to_dynamo(v) for v in value]
    raise TypeError(
        f"DynamoDBCheckpointer stores JSON-like values; got {type(value).__name__} ({value!r})"
    )


def _from_dynamo(value: Any) -> Any:
    """What boto3 reads -> plain Python (a whole ``Decimal`` -> int, else float; dynavec's)."""
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dict):
        return {k: _from_dynamo(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_from_dynamo(v) for v in value]
    return value


def _size(value: Any) -> int:
    """An upper bound of DynamoDB's size accounting of a value (attribute names included)."""
    if value is None or isinstance(value, bool):
        return 1
    if isinstance(value, str):
        return len(value.encode("utf-8", "surrogatepass"))
    if isinstance(value, int | Decimal):
        return 22
    if isinstance(value, bytes):
        return len(value)
    if isinstance(value, Mapping):
        return 3 + sum(_size(str(k)) + _size(v) + 1 for k, v in value.items())
    if isinstance(value, list | tuple):
        return 3 + sum(_size(v) + 1 for v in value)
    return len(str(value))


# --- who holds a lock (the owner check) ---------------------------------------------------


def _read(path: str) -> str | None:
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def _machine() -> str | None:
    """This machine and PID namespace (Linux: boot id + PID namespace); ``None`` elsewhere,
    which turns the owner check off (the lease alone then frees a dead holder's lock)."""
    boot = _read("/proc/sys/kernel/random/boot_id")
    try:
        pidns = os.readlink("/proc/self/ns/pid")
    except OSError:
        return None
    return f"{boot}|{pidns}" if boot else None


def _start_time(pid: int) -> str | None:
    """The start time of process ``pid`` in clock ticks since boot (``/proc/PID/stat``)."""
    stat = _read(f"/proc/{pid}/stat")
    if stat is None:
        return None
    fields = stat.rsplit(")", 1)[-1].split()
    return fields[19] if len(fields) > 19 else None


def _alive(pid: int, started: str | None) -> bool:
    """Whether process ``pid`` of this machine still runs (the same process: same start time,
    when its ``/proc`` entry can be read; another user's process counts as running)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    now = _start_time(pid)
    return now is None or started is None or now == started


def _no_latest_item(checkpoint_id: str) -> str:
    """What is damaged when the manifest names a latest checkpoint whose item is gone."""
    return f"the manifest (its latest checkpoint {checkpoint_id!r} has no item)"


class DynamoDBCheckpointer(BaseCheckpointer):
    """dynavec's checkpointer on a DynamoDB table (see the module docstring for the layout).

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
        boto3 = _boto3()
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
        self._cache: OrderedDict[str, tuple[str, Checkpoint]] = OrderedDict()
        self._history_max = _HISTORY_MAX
        self._history_keep = _HISTORY_KEEP
        self._cache_lock = threading.Lock()
        self._read_revisions: dict[int, tuple[weakref.ref[Checkpoint], str | None]] = {}
        self.lock_owner_check = bool(lock_owner_check)
        self._machine = _machine() if lock_owner_check else None
        if create_table if create_table is not None else isinstance(table, str):
            self.setup()

    def __repr__(self) -> str:
        return f"DynamoDBCheckpointer({self.table_name!r}, namespace={self.namespace!r})"

    # --- errors -------------------------------------------------------------------------

    @staticmethod
    def _config_error(error: BaseException, table: str) -> BaseException:
        """A missing credential or region -> what to set; anything else unchanged."""
        name = type(error).__name__  # for the message only
        if any(
            is_instance_of(error, "botocore.exceptions", cls)
            for cls in ("NoCredentialsError", "PartialCredentialsError")
        ):
            return CheckpointerConfigError(
                f"no AWS credentials for the DynamoDB table {table!r} ({name}: {error}). Set "
                "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN for "
                "temporary ones), or AWS_PROFILE naming a profile of ~/.aws/credentials, or run "
                "where an IAM role provides them; a local endpoint also needs some (any) keys"
            )
        if is_instance_of(error, "botocore.exceptions", "NoRegionError"):
            return CheckpointerConfigError(
                f"no AWS region for the DynamoDB table {table!r}: add region=... to the "
                "'dynamodb://' URL (e.g. dynamodb://TABLE?region=eu-west-1), pass "
                "region_name=, or set AWS_DEFAULT_REGION"
            )
        return error

    def _call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """One request; missing credentials or region -> a :class:`StorageError` saying what
        to set, a table with another key schema -> one saying so (others pass through: the
        agent reports them with what ran)."""
        try:
            return fn(*args, **kwargs)
        except Exception as error:
            translated = self._config_error(error, self.table_name)
            if translated is not error:
                raise StorageError(str(translated), None, []) from None
            code = getattr(error, "response", {}).get("Error", {}).get("Code")
            if code == "ResourceNotFoundException":
                raise StorageError(
                    f"the DynamoDB table {self.table_name!r} does not exist: create it with a "
                    "partition key 'pk' of type string and no sort key (dynavec's layout), or "
                    "give DynamoDBCheckpointer the table's name with create_table=True",
                    None,
                    [],
                ) from None
            schema = self._other_schema(error)
            if schema is not None:
                raise StorageError(self._schema_message(schema), None, []) from None
            raise

    def _other_schema(self, error: BaseException) -> object:
        """The table's key schema when ``error`` is a ``ValidationException`` because it is
        not dynavec's (``None`` otherwise)."""
        code = getattr(error, "response", {}).get("Error", {}).get("Code")
        if code != "ValidationException":
            return None
        try:
            described = self.table.meta.client.describe_table(TableName=self.table_name)
        except Exception:
            return None
        schema = [(k["AttributeName"], k["KeyType"]) for k in described["Table"]["KeySchema"]]
        return schema if schema != [("pk", "HASH")] else None

    def _schema_message(self, schema: object = None) -> str:
        seen = f" (its key schema is {schema})" if schema is not None else ""
        return (
            f"the DynamoDB table {self.table_name!r} does not have dynavec's key schema"
            f"{seen}: DynamoDBCheckpointer needs a partition key 'pk' of type string and no "
            "sort key (dynavec's layout). Use a table with that schema, or a new table name "
            "(it is then created with it)"
        )

    def _damaged(self, thread_id: str, what: str) -> StorageError:
        return StorageError(
            f"thread {thread_id!r} cannot be read: {what} in the DynamoDB table "
            f"{self.table_name!r} (namespace {self.namespace!r}) is damaged. Nothing was "
            "changed; restore the item from a backup, or delete the thread's items and start "
            "it again",
            thread_id,
            [],
        )

    # --- table ----------------------------------------------------------------------

    def setup(self) -> None:
        """Create the table (key ``pk`` only) if it does not exist and wait until it is active;
        check the key schema of an existing one (idempotent).

        Raises:
            CheckpointerConfigError: no credentials or region, or another key schema.
        """
        client = self.table.meta.client
        try:
            try:
                described = client.describe_table(TableName=self.table_name)["Table"]
            except client.exceptions.ResourceNotFoundException:
                with suppress(client.exceptions.ResourceInUseException):  # made by another
                    client.create_table(
                        TableName=self.table_name,
                        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                        BillingMode="PAY_PER_REQUEST",
                    )
                client.get_waiter("table_exists").wait(TableName=self.table_name)
                return
        except Exception as error:
            raise self._config_error(error, self.table_name) from None
        schema = [(k["AttributeName"], k["KeyType"]) for k in described.get("KeySchema", [])]
        if schema != [("pk", "HASH")]:
            raise CheckpointerConfigError(self._schema_message(schema))

    def _key(self, kind: str, thread_id: str, checkpoint_id: str | None = None) -> str:
        base = f"{self.namespace}#{kind}#{thread_id}"
        return base if checkpoint_id is None else f"{base}#{checkpoint_id}"

    def _get(self, pk: str) -> dict[str, Any] | None:
        item = self._call(self.table.get_item, Key={"pk": pk}, ConsistentRead=True).get("Item")
        return dict(item) if item is not None else None

    def _get_many(self, pks: Sequence[str], projection: str | None = None) -> dict[str, Any]:
        """Items by ``pk`` (``BatchGetItem``, 100 keys a request, unprocessed keys retried;
        missing ones left out). The ``Table``'s client takes and gives plain values."""
        client = self.table.meta.client
        found: dict[str, Any] = {}
        unique = list(dict.fromkeys(pks))
        for start in range(0, len(unique), 100):
            wanted: dict[str, Any] = {
                "Keys": [{"pk": pk} for pk in unique[start : start + 100]],
                "ConsistentRead": True,
            }
            if projection:
                wanted["ProjectionExpression"] = projection
            request: dict[str, Any] = {self.table_name: wanted}
            delay = 0.05
            while request:
                answer = self._call(client.batch_get_item, RequestItems=request)
                for item in answer.get("Responses", {}).get(self.table_name, []):
                    found[str(item["pk"])] = dict(item)
                request = answer.get("UnprocessedKeys") or {}
                if request:
                    time.sleep(delay)
                    delay = min(delay * 2, 1.0)
        return found

    # --- records ----------------------------------------------------------------------

    def _item(self, checkpoint: Checkpoint) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """The checkpoint item (dynavec's attributes) and its piece items (none when it fits)."""
        data = checkpoint.to_dict()
        pk = self._key(_CHECKPOINT, checkpoint.thread_id, checkpoint.checkpoint_id)
        item: dict[str, Any] = {
            "pk": pk,
            "ns": self.namespace,
            "type": _CHECKPOINT,
            **_to_dynamo(data),
            "lg_rev": uuid.uuid4().hex,
        }
        if _size(item) <= INLINE_LIMIT:
            return item, []
        moved: dict[str, dict[str, Any]] = {}

        def move(field: str, key: str) -> None:
            moved.setdefault(field, {})[key] = data[field][key]
            item[field] = {k: v for k, v in item[field].items() if k != key}

        if _LG_META in item["metadata"]:
            move("metadata", _LG_META)
        for key in _BULKY_STATE:  # dynavec's bulky keys first, then the largest others
            if _size(item) > INLINE_LIMIT and key in item["state"]:
                move("state", key)
        others = [(_size(v), f, k) for f in ("state", "metadata") for k, v in item[f].items()]
        for _, field, key in sorted(others, reverse=True):
            if _size(item) > INLINE_LIMIT:
                move(field, key)
        if _size(item) > INLINE_LIMIT:
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

    def _record(self, thread_id: str, item: Mapping[str, Any], pieces: Mapping[str, Any]) -> Any:
        """A checkpoint item (and its pieces) -> a :class:`Checkpoint`."""
        what = f"the checkpoint item {item.get('pk')!r}"
        try:
            data = _from_dynamo(dict(item))
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
        pks = [self._key(_CHECKPOINT, thread_id, cid) for cid in ids]
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

    def _remember(self, pk: str, revision: Any, record: Checkpoint) -> None:
        if not isinstance(revision, str):
            return
        with self._cache_lock:
            self._cache[pk] = (revision, copy.deepcopy(record))
            self._cache.move_to_end(pk)
            while len(self._cache) > _CACHED:
                self._cache.popitem(last=False)

    def _manifest(self, thread_id: str) -> dict[str, Any] | None:
        return self._get(self._key("thread", thread_id))

    def _history(self, thread_id: str, manifest: Mapping[str, Any]) -> builtins.list[str]:
        """The checkpoint ids of the thread's history (its history pages, then the
        manifest's own entries), in save order (checked)."""
        history = _from_dynamo(manifest.get("history"))
        pages = _from_dynamo(manifest.get("lg_history_pages"))
        if pages:
            if not isinstance(pages, list) or not all(isinstance(p, str) for p in pages):
                raise self._damaged(thread_id, f"the manifest (lg_history_pages={pages!r})")
            found = self._get_many(pages)
            if any(p not in found for p in pages):
                raise self._damaged(thread_id, "the manifest (a history page is missing)")
            older = [e for p in pages for e in _from_dynamo(found[p].get("history") or [])]
            history = [*older, *history] if isinstance(history, list) else history
        latest = _from_dynamo(manifest.get("latest_checkpoint_id"))
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
        stored = Checkpoint.from_dict(_from_dynamo(_to_dynamo(checkpoint.to_dict())))
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
                        ":new_entry": [_to_dynamo(entry)],
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
        stored = Checkpoint.from_dict(_from_dynamo(_to_dynamo(checkpoint.to_dict())))
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
        pks = [self._key(_CHECKPOINT, thread_id, cid) for cid in ids]
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

    # --- the resume lock ----------------------------------------------------------------

    def _lock_item(self, thread_id: str, owner: str, now: float) -> dict[str, Any]:
        pid = os.getpid()
        return {
            "pk": self._key("lglock", thread_id),
            "type": _LOCK,
            "owner": owner,
            "host": socket.gethostname(),
            "machine": self._machine or "",
            "pid": pid,
            "started": _start_time(pid) or "",
            "renewed_at": Decimal(repr(now)),
            "expires_at": Decimal(repr(now + self.lock_ttl)),
        }

    def _busy(self, thread_id: str, held: Mapping[str, Any], now: float) -> ConcurrentResumeError:
        pid, host = held.get("pid"), held.get("host")
        renewed = now - float(held.get("renewed_at") or now)
        left = float(held.get("expires_at") or now) - now
        local = bool(self._machine) and held.get("machine") == self._machine
        where = "on this machine" if local else f"on host {host!r}"
        if local:
            after = (
                "it is still running (checked just now), so the lock stays with it; it frees "
                "the moment that process ends"
            )
        else:
            after = (
                f"if that process has died, the lock is free {max(left, 0):.0f} s from now "
                f"(lock_ttl={self.lock_ttl:g} s after its last renewal)"
            )
        return ConcurrentResumeError(
            f"another caller is running or resuming thread {thread_id!r} right now: process "
            f"{pid} {where} holds its DynamoDB lock in table {self.table_name!r} (lease "
            f"renewed {renewed:.1f} s ago; {after}). Nothing was done here (no decision "
            "applied, no tool run). Wait for it to finish, then read the thread again before "
            "deciding"
        )

    def _free(self, held: Mapping[str, Any], now: float) -> bool:
        """Whether a held lock may be taken over: its holder is gone (same machine) or, on
        another machine, its lease ran out."""
        if self._machine and held.get("machine") == self._machine:
            started = str(held.get("started") or "") or None
            return not _alive(int(held.get("pid") or 0), started)
        return float(held.get("expires_at") or 0) < now

    def _acquire(self, thread_id: str) -> str:
        owner = uuid.uuid4().hex
        client = self.table.meta.client
        failed = client.exceptions.ConditionalCheckFailedException
        pk = self._key("lglock", thread_id)
        for _ in range(5):
            now = time.time()
            try:
                self._call(
                    self.table.put_item,
                    Item=self._lock_item(thread_id, owner, now),
                    ConditionExpression="attribute_not_exists(pk)",
                )
                return owner
            except failed:
                pass
            held = self._get(pk)
            if held is None:
                continue  # released meanwhile: try again
            if not self._free(held, now):
                raise self._busy(thread_id, held, now)
            try:  # take over the dead holder's lock, unless someone else just did
                self._call(
                    self.table.put_item,
                    Item=self._lock_item(thread_id, owner, now),
                    ConditionExpression="#o = :old",
                    ExpressionAttributeNames={"#o": "owner"},
                    ExpressionAttributeValues={":old": held.get("owner")},
                )
                _log.warning(
                    "took over the DynamoDB lock of thread %r in table %r from process %s on "
                    "%s, which is gone or stopped renewing it",
                    thread_id,
                    self.table_name,
                    held.get("pid"),
                    held.get("host"),
                )
                return owner
            except failed:
                continue
        held = self._get(pk) or {}
        raise self._busy(thread_id, held, time.time())

    def _renew(self, thread_id: str, owner: str) -> bool:
        """Extend the lease; ``False`` when the lock is no longer ours."""
        now = time.time()
        try:
            self._call(
                self.table.update_item,
                Key={"pk": self._key("lglock", thread_id)},
                UpdateExpression="SET expires_at = :exp, renewed_at = :now",
                ConditionExpression="#o = :me",
                ExpressionAttributeNames={"#o": "owner"},
                ExpressionAttributeValues={
                    ":me": owner,
                    ":now": Decimal(repr(now)),
                    ":exp": Decimal(repr(now + self.lock_ttl)),
                },
            )
        except self.table.meta.client.exceptions.ConditionalCheckFailedException:
            return False
        return True

    def _heartbeat(self, thread_id: str, owner: str, stop: threading.Event) -> None:
        while not stop.wait(self.lock_heartbeat):
            try:
                if not self._renew(thread_id, owner):
                    _log.error(
                        "lost the DynamoDB lock of thread %r in table %r: its lease ran out "
                        "and another caller took it (this process was stalled for more than "
                        "lock_ttl=%g s)",
                        thread_id,
                        self.table_name,
                        self.lock_ttl,
                    )
                    return
            except Exception:
                _log.warning("could not renew the DynamoDB lock of %r", thread_id, exc_info=True)

    def _release(self, thread_id: str, owner: str) -> None:
        client = self.table.meta.client
        # taken over by another caller: not ours to delete (the condition fails then)
        with suppress(client.exceptions.ConditionalCheckFailedException):
            self._call(
                self.table.delete_item,
                Key={"pk": self._key("lglock", thread_id)},
                ConditionExpression="#o = :me",
                ExpressionAttributeNames={"#o": "owner"},
                ExpressionAttributeValues={":me": owner},
            )

    def _hold(self, thread_id: str) -> tuple[str, threading.Event, threading.Thread]:
        owner = self._acquire(thread_id)
        stop = threading.Event()
        beat = threading.Thread(
            target=self._heartbeat,
            args=(thread_id, owner, stop),
            name=f"dynamodb-lock-heartbeat-{thread_id}",
            daemon=True,
        )
        beat.start()
        return owner, stop, beat

    def _let_go(self, thread_id: str, held: tuple[str, threading.Event, threading.Thread]) -> None:
        owner, stop, beat = held
        stop.set()
        beat.join(timeout=self.lock_heartbeat + 30)
        self._release(thread_id, owner)

    @contextmanager
    def resume_lock(self, thread_id: str) -> Iterator[None]:
        """Hold the thread's resume lock (never waits), renewing its lease meanwhile.

        Raises:
            ConcurrentResumeError: another live process (or thread) holds it.
        """
        held = self._hold(thread_id)
        try:
            yield
        finally:
            self._let_go(thread_id, held)

    @asynccontextmanager
    async def aresume_lock(self, thread_id: str) -> AsyncIterator[None]:
        """Async twin of :meth:`resume_lock` (the requests run in a worker thread)."""
        held = await asyncio.to_thread(self._hold, thread_id)
        try:
            yield
        finally:
            await asyncio.to_thread(self._let_go, thread_id, held)
