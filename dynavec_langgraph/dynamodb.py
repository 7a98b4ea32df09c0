"""``DynamoDBCheckpointer``: dynavec's durable checkpointer on Amazon DynamoDB.

A dynavec :class:`~dynavec_langgraph.checkpoint.BaseCheckpointer`, so it works everywhere a
dynavec checkpointer does: ``ReActAgent(..., checkpointer=DynamoDBCheckpointer("table"))``,
``create_react_agent(..., checkpointer=...)`` (both adapt it with
:class:`~dynavec_langgraph._adapter.DynavecCheckpointSaver`), or the string
``"dynamodb://TABLE?region=eu-west-1&endpoint_url=http://127.0.0.1:8000&namespace=default"``.
It needs the ``dynamodb`` extra (``boto3``); without it, using it raises
:class:`~dynavec_langgraph.exceptions.MissingDependencyError` naming the extra.

Single-table layout (dynavec's): partition key ``pk`` and sort key ``sk``, both strings.

=================  ============================  ==================================================
item               ``pk``                        ``sk`` and attributes
=================  ============================  ==================================================
checkpoint         ``<namespace>#<thread_id>``   ``checkpoint#<checkpoint_id>``; ``thread_id``,
                                                 ``checkpoint_id``, ``parent_checkpoint_id``,
                                                 ``node_id``, ``step``, ``state``, ``metadata``,
                                                 ``timestamp``, ``namespace``
thread manifest    ``<namespace>#<thread_id>``   ``manifest``; ``checkpoint_ids`` (save order),
                                                 ``latest_checkpoint_id``, ``updated_at``
resume lock        ``<namespace>#<thread_id>``   ``lock#resume``; ``owner``, ``expires_at``
=================  ============================  ==================================================

``state`` and ``metadata`` are DynamoDB maps: floats are stored as numbers and come back as
floats (integers as ints), lists stay lists, ``None`` stays ``None``. An item is limited to
400 KB by DynamoDB; a record holds the thread's whole conversation (dynavec's layout), so very
long threads need another store.

Which LangGraph saver? ``langgraph-checkpoint-aws`` has a DynamoDB saver, but its layout is
LangGraph's own (a record per superstep and per write), not dynavec's, so dynavec users'
tables and tools would no longer read their threads; here the dynavec layout is kept and the
LangGraph side goes through the same adapter as every dynavec checkpointer (it passes
LangGraph's checkpoint conformance suite).

The resume lock (``resume_lock`` / ``aresume_lock``, used by ``ReActAgent.resume``) is a
conditional put of the lock item: it holds across processes and machines. A holder that dies
keeps the lock until ``expires_at`` (``lock_ttl`` seconds, default 900), then anyone may take it.
"""

from __future__ import annotations

import asyncio
import builtins
import time
import uuid
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager, suppress
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any, Final
from urllib.parse import parse_qs, urlsplit

from dynavec_langgraph._errors import CheckpointerConfigError, ConcurrentResumeError
from dynavec_langgraph.checkpoint import BaseCheckpointer, Checkpoint
from dynavec_langgraph.exceptions import MissingDependencyError

__all__ = ["SCHEME", "DynamoDBCheckpointer", "from_url"]

SCHEME: Final = "dynamodb://"
"""The URL prefix of a DynamoDB checkpointer (``dynamodb://TABLE?...``)."""
_MANIFEST: Final = "manifest"
_LOCK: Final = "lock#resume"
_CP_PREFIX: Final = "checkpoint#"


def _boto3() -> Any:
    try:
        import boto3
    except ImportError:
        raise MissingDependencyError("DynamoDBCheckpointer", "boto3", "dynamodb") from None
    return boto3


def _to_dynamo(value: Any) -> Any:
    """Plain Python -> what boto3 stores (floats as Decimal; tuples as lists)."""
    if isinstance(value, bool) or value is None or isinstance(value, str | int):
        return value
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError(f"DynamoDB cannot store the number {value!r}")
        return Decimal(repr(value))
    if isinstance(value, Mapping):
        return {str(k): _to_dynamo(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_to_dynamo(v) for v in value]
    raise TypeError(
        f"DynamoDBCheckpointer stores JSON-like values; got {type(value).__name__} ({value!r})"
    )


def _from_dynamo(value: Any) -> Any:
    """What boto3 reads -> plain Python (Decimal back to int or float)."""
    if isinstance(value, Decimal):
        text = str(value)
        return int(text) if text.lstrip("-").isdigit() else float(value)
    if isinstance(value, dict):
        return {k: _from_dynamo(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_from_dynamo(v) for v in value]
    return value


class DynamoDBCheckpointer(BaseCheckpointer):
    """dynavec's checkpointer on a DynamoDB table (see the module docstring for the layout).

    Args:
        table: the table name, or a boto3 ``Table`` resource.
        namespace: separates applications sharing one table.
        region_name: AWS region (boto3's default chain when ``None``).
        endpoint_url: e.g. a local DynamoDB endpoint.
        create_table: create the table (on-demand billing) if it does not exist.
        lock_ttl: seconds after which a resume lock left by a dead process may be taken.

    Raises:
        MissingDependencyError: ``boto3`` is not installed (the ``dynamodb`` extra).
    """

    def __init__(
        self,
        table: Any,
        *,
        namespace: str = "default",
        region_name: str | None = None,
        endpoint_url: str | None = None,
        create_table: bool = True,
        lock_ttl: float = 900.0,
    ) -> None:
        boto3 = _boto3()
        if not namespace or "#" in namespace:
            raise CheckpointerConfigError(
                f"namespace={namespace!r}: use a non-empty name without '#'"
            )
        self.namespace = namespace
        self.lock_ttl = lock_ttl
        if isinstance(table, str):
            resource = boto3.resource(
                "dynamodb", region_name=region_name, endpoint_url=endpoint_url
            )
            self.table = resource.Table(table)
        else:
            self.table = table
        self.table_name = str(self.table.name)
        if create_table:
            self.setup()

    def __repr__(self) -> str:
        return f"DynamoDBCheckpointer({self.table_name!r}, namespace={self.namespace!r})"

    # --- table ----------------------------------------------------------------------

    def setup(self) -> None:
        """Create the table if it does not exist and wait until it is active (idempotent)."""
        client = self.table.meta.client
        try:
            client.describe_table(TableName=self.table_name)
            return
        except client.exceptions.ResourceNotFoundException:
            pass
        with suppress(client.exceptions.ResourceInUseException):  # another process made it
            client.create_table(
                TableName=self.table_name,
                KeySchema=[
                    {"AttributeName": "pk", "KeyType": "HASH"},
                    {"AttributeName": "sk", "KeyType": "RANGE"},
                ],
                AttributeDefinitions=[
                    {"AttributeName": "pk", "AttributeType": "S"},
                    {"AttributeName": "sk", "AttributeType": "S"},
                ],
                BillingMode="PAY_PER_REQUEST",
            )
        client.get_waiter("table_exists").wait(TableName=self.table_name)

    def _pk(self, thread_id: str) -> str:
        return f"{self.namespace}#{thread_id}"

    def _manifest(self, thread_id: str) -> list[str]:
        item = self.table.get_item(
            Key={"pk": self._pk(thread_id), "sk": _MANIFEST}, ConsistentRead=True
        ).get("Item")
        return [str(i) for i in (item or {}).get("checkpoint_ids") or []]

    @staticmethod
    def _record(item: Mapping[str, Any]) -> Checkpoint:
        data = _from_dynamo(dict(item))
        return Checkpoint.from_dict(data)

    # --- BaseCheckpointer -------------------------------------------------------------

    def save(self, checkpoint: Checkpoint) -> None:
        """Store ``checkpoint`` (a record with the same id is replaced, keeping its place)."""
        pk = self._pk(checkpoint.thread_id)
        item = {
            "pk": pk,
            "sk": _CP_PREFIX + checkpoint.checkpoint_id,
            "namespace": self.namespace,
            **_to_dynamo(checkpoint.to_dict()),
        }
        self.table.put_item(Item=item)
        client = self.table.meta.client
        # a replaced record keeps its place in the manifest (the condition fails then)
        with suppress(client.exceptions.ConditionalCheckFailedException):
            self.table.update_item(
                Key={"pk": pk, "sk": _MANIFEST},
                UpdateExpression=(
                    "SET checkpoint_ids = list_append(if_not_exists(checkpoint_ids, :none), :new),"
                    " latest_checkpoint_id = :id, updated_at = :now, thread_id = :tid"
                ),
                ConditionExpression="attribute_not_exists(checkpoint_ids) OR NOT contains("
                "checkpoint_ids, :id)",
                ExpressionAttributeValues={
                    ":none": [],
                    ":new": [checkpoint.checkpoint_id],
                    ":id": checkpoint.checkpoint_id,
                    ":now": datetime.now(UTC).isoformat(),
                    ":tid": checkpoint.thread_id,
                },
            )

    def get(self, thread_id: str, checkpoint_id: str | None = None) -> Checkpoint | None:
        """The thread's latest record (the manifest's last), or the one with ``checkpoint_id``."""
        if checkpoint_id is None:
            ids = self._manifest(thread_id)
            if not ids:
                return None
            checkpoint_id = ids[-1]
        item = self.table.get_item(
            Key={"pk": self._pk(thread_id), "sk": _CP_PREFIX + checkpoint_id},
            ConsistentRead=True,
        ).get("Item")
        return self._record(item) if item else None

    def list(self, thread_id: str, limit: int | None = None) -> list[Checkpoint]:
        """The thread's records in save order (one query of the thread's partition)."""
        ids = self._manifest(thread_id)
        if limit is not None:
            ids = ids[-limit:] if limit > 0 else []
        if not ids:
            return []
        wanted = set(ids)
        found: dict[str, Checkpoint] = {}
        kwargs: dict[str, Any] = {
            "KeyConditionExpression": "pk = :pk AND begins_with(sk, :cp)",
            "ExpressionAttributeValues": {":pk": self._pk(thread_id), ":cp": _CP_PREFIX},
            "ConsistentRead": True,
        }
        while True:
            page = self.table.query(**kwargs)
            for item in page.get("Items", []):
                cid = str(item["sk"])[len(_CP_PREFIX) :]
                if cid in wanted:
                    found[cid] = self._record(item)
            if "LastEvaluatedKey" not in page:
                break
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
        return [found[i] for i in ids if i in found]

    def delete(self, thread_id: str) -> bool:
        """Delete every item of the thread (records, manifest; a held lock stays)."""
        pk = self._pk(thread_id)
        kwargs: dict[str, Any] = {
            "KeyConditionExpression": "pk = :pk",
            "ExpressionAttributeValues": {":pk": pk},
            "ProjectionExpression": "pk, sk",
        }
        with self.table.batch_writer() as batch:
            while True:
                page = self.table.query(**kwargs)
                for item in page.get("Items", []):
                    if item["sk"] != _LOCK:
                        batch.delete_item(Key={"pk": item["pk"], "sk": item["sk"]})
                if "LastEvaluatedKey" not in page:
                    break
                kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
        return True

    def threads(self) -> builtins.list[str]:
        """The thread ids of this namespace that have records (a table scan)."""
        out: builtins.list[str] = []
        kwargs: dict[str, Any] = {
            "FilterExpression": "sk = :m AND begins_with(pk, :ns)",
            "ExpressionAttributeValues": {":m": _MANIFEST, ":ns": f"{self.namespace}#"},
        }
        while True:
            page = self.table.scan(**kwargs)
            out += [str(i["pk"])[len(self.namespace) + 1 :] for i in page.get("Items", [])]
            if "LastEvaluatedKey" not in page:
                return sorted(out)
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    # --- the resume lock ----------------------------------------------------------------

    def _acquire(self, thread_id: str) -> str:
        owner = uuid.uuid4().hex
        now = time.time()
        client = self.table.meta.client
        try:
            self.table.put_item(
                Item={
                    "pk": self._pk(thread_id),
                    "sk": _LOCK,
                    "owner": owner,
                    "expires_at": Decimal(repr(now + self.lock_ttl)),
                },
                ConditionExpression="attribute_not_exists(pk) OR expires_at < :now",
                ExpressionAttributeValues={":now": Decimal(repr(now))},
            )
        except client.exceptions.ConditionalCheckFailedException:
            raise ConcurrentResumeError(
                f"another caller is resuming thread {thread_id!r} right now (DynamoDB lock in "
                f"table {self.table_name!r}); this decision was not applied. Wait for that "
                "resume to finish, then read the thread again before deciding"
            ) from None
        return owner

    def _release(self, thread_id: str, owner: str) -> None:
        client = self.table.meta.client
        # expired and taken by another caller: not ours to delete (the condition fails then)
        with suppress(client.exceptions.ConditionalCheckFailedException):
            self.table.delete_item(
                Key={"pk": self._pk(thread_id), "sk": _LOCK},
                ConditionExpression="#o = :me",
                ExpressionAttributeNames={"#o": "owner"},
                ExpressionAttributeValues={":me": owner},
            )

    @contextmanager
    def resume_lock(self, thread_id: str) -> Iterator[None]:
        """Hold the thread's resume lock (never waits).

        Raises:
            ConcurrentResumeError: another process (or thread) holds it.
        """
        owner = self._acquire(thread_id)
        try:
            yield
        finally:
            self._release(thread_id, owner)

    @asynccontextmanager
    async def aresume_lock(self, thread_id: str) -> AsyncIterator[None]:
        """Async twin of :meth:`resume_lock` (the requests run in a worker thread)."""
        owner = await asyncio.to_thread(self._acquire, thread_id)
        try:
            yield
        finally:
            await asyncio.to_thread(self._release, thread_id, owner)


def from_url(url: str) -> DynamoDBCheckpointer:
    """``"dynamodb://TABLE?region=...&endpoint_url=...&namespace=..."`` -> a checkpointer.

    Raises:
        CheckpointerConfigError: no table name, or an unknown query parameter.
        MissingDependencyError: ``boto3`` is not installed.
    """
    parts = urlsplit(url)
    table = parts.netloc or parts.path.lstrip("/")
    if not table:
        raise CheckpointerConfigError(
            f"checkpointer={url!r} names no table: use 'dynamodb://TABLE?region=...'"
        )
    query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
    known = {"region", "region_name", "endpoint_url", "namespace"}
    unknown = sorted(set(query) - known)
    if unknown:
        raise CheckpointerConfigError(
            f"checkpointer={url!r}: unknown parameter(s) {unknown}; known: {sorted(known)}"
        )
    return DynamoDBCheckpointer(
        table,
        namespace=query.get("namespace") or "default",
        region_name=query.get("region") or query.get("region_name"),
        endpoint_url=query.get("endpoint_url"),
    )
