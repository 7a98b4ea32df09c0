"""dynavec's value encoding on DynamoDB (floats as ``Decimal``), the size of an item, and boto3
(the ``dynamodb`` extra)."""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from dynavec_langgraph._extras import missing_extra

__all__ = ["from_dynamo", "item_size", "load_boto3", "to_dynamo"]


def load_boto3() -> Any:
    try:
        import boto3
    except ImportError:
        raise missing_extra("DynamoDBCheckpointer", "boto3", "dynamodb") from None
    return boto3


# --- values ---------------------------------------------------------------------------


def to_dynamo(value: Any) -> Any:
    """Plain Python -> what boto3 stores (dynavec's encoding: floats as ``Decimal(str(x))``)."""
    if isinstance(value, bool) or value is None or isinstance(value, str | int):
        return value
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError(f"DynamoDB cannot store the number {value!r}")
        return Decimal(str(value))
    if isinstance(value, Mapping):
        return {str(k): to_dynamo(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_dynamo(v) for v in value]
    raise TypeError(
        f"DynamoDBCheckpointer stores JSON-like values; got {type(value).__name__} ({value!r})"
    )


def from_dynamo(value: Any) -> Any:
    """What boto3 reads -> plain Python (a whole ``Decimal`` -> int, else float; dynavec's)."""
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dict):
        return {k: from_dynamo(v) for k, v in value.items()}
    if isinstance(value, list):
        return [from_dynamo(v) for v in value]
    return value


def item_size(value: Any) -> int:
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
        return 3 + sum(item_size(str(k)) + item_size(v) + 1 for k, v in value.items())
    if isinstance(value, list | tuple):
        return 3 + sum(item_size(v) + 1 for v in value)
    return len(str(value))
