"""The DynamoDB table under the checkpointer: its requests, its key schema (created or checked)
and the errors that say what to set."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from contextlib import suppress
from typing import Any, TypeVar

from dynavec_langgraph._errors import CheckpointerConfigError, StorageError
from dynavec_langgraph._persistence.kinds import is_instance_of

__all__ = ["DynamoDBTable"]

T = TypeVar("T")


class DynamoDBTable:
    """The table a ``DynamoDBCheckpointer`` stores in (set by its constructor) and the
    requests to it."""

    table: Any
    """The boto3 ``Table`` resource."""
    table_name: str
    namespace: str

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
