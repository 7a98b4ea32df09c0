"""dynavec's value encoding on DynamoDB (floats as ``Decimal``), the size of an item, and boto3
(the ``dynamodb`` extra)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Any

from dynavec_langgraph._extras import missing_extra

__all__ = ["from_dynamo", "item_size", "load_boto3", "to_dynamo", "walked"]


def load_boto3() -> Any:
    try:
        import boto3
    except ImportError:
        raise missing_extra("DynamoDBCheckpointer", "boto3", "dynamodb") from None
    return boto3


# --- values ---------------------------------------------------------------------------


def walked(value: Any, leaf: Callable[[object], object]) -> Any:
    """``value`` for boto3: its mappings and lists walked (keys as strings, tuples as lists),
    every other value as ``leaf`` makes it, or refuses it (one walk for each encoding of
    dynavec's values: the checkpointer's, :func:`to_dynamo`, and the memory's)."""
    if isinstance(value, Mapping):
        return {str(k): walked(v, leaf) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [walked(v, leaf) for v in value]
    return leaf(value)


def to_dynamo(value: Any) -> Any:
    """Plain Python -> what boto3 stores (dynavec's encoding: floats as ``Decimal(str(x))``)."""
    return walked(value, _stored_leaf)


def _stored_leaf(value: object) -> object:
    if isinstance(value, bool) or value is None or isinstance(value, str | int):
        return value
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError(f"DynamoDB cannot store the number {value!r}")
        return Decimal(str(value))
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
