"""dynavec's checkpoint records and checkpointers, and the dynavec view of a graph state.

:class:`Checkpoint` is one record of a thread (docs/compatibility.md §5). :class:`BaseCheckpointer`
is dynavec's checkpointer interface (``save`` / ``get`` / ``list`` / ``put``) and
:class:`MemoryCheckpointer` its in-process implementation; :func:`dynavec_view` builds a
:class:`Checkpoint` from a ``StateSnapshot`` and :func:`is_step_boundary` picks the snapshots
dynavec would have recorded. They live in :mod:`dynavec_langgraph._persistence.records`; this
module is their public home (and dynavec's path to ``DynamoDBCheckpointer``).
"""

from __future__ import annotations

from typing import Any

from dynavec_langgraph._persistence.records import (
    BaseCheckpointer,
    Checkpoint,
    MemoryCheckpointer,
    dynavec_view,
    is_step_boundary,
)

__all__ = [
    "BaseCheckpointer",
    "Checkpoint",
    "MemoryCheckpointer",
    "dynavec_view",
    "is_step_boundary",
]


def __getattr__(name: str) -> Any:
    """``from dynavec_langgraph.checkpoint import DynamoDBCheckpointer`` (dynavec's path)."""
    if name == "DynamoDBCheckpointer":
        from dynavec_langgraph._persistence.dynamodb.checkpointer import DynamoDBCheckpointer

        return DynamoDBCheckpointer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
