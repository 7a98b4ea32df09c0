"""``DynamoDBCheckpointer``: dynavec's durable checkpointer on Amazon DynamoDB, in dynavec's layout.

The checkpointer lives in :mod:`dynavec_langgraph._persistence.dynamodb` (its modules'
docstrings describe the table layout and the resume lock); this module is its public home, with
:func:`from_url` for a ``dynamodb://`` connection string.
"""

from __future__ import annotations

from dynavec_langgraph._persistence.dynamodb.checkpointer import SCHEME, DynamoDBCheckpointer
from dynavec_langgraph._persistence.dynamodb.records import INLINE_LIMIT, PIECE_SIZE

__all__ = ["INLINE_LIMIT", "PIECE_SIZE", "SCHEME", "DynamoDBCheckpointer", "from_url"]


def from_url(url: str) -> DynamoDBCheckpointer:
    """``"dynamodb://TABLE?region=...&endpoint_url=...&namespace=...&lock_ttl=...
    &lock_heartbeat=...&create_table=..."`` -> a checkpointer (the grammar is
    :func:`dynavec_langgraph.savers.parse_database_url`'s).

    Raises:
        CheckpointerConfigError: no table name, an unknown or bad parameter, no credentials.
        MissingDependencyError: ``boto3`` is not installed.
    """
    from dynavec_langgraph.savers import dynamodb_options

    return DynamoDBCheckpointer(**dynamodb_options(url))
