"""dynavec checkpoints on LangGraph checkpointers.  (STUB: being written.)"""

from __future__ import annotations

from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver


def resolve_checkpointer(checkpointer: Any) -> BaseCheckpointSaver[Any] | None:
    """Turn ``checkpointer=`` into a LangGraph saver (stub: passthrough)."""
    return checkpointer  # type: ignore[no-any-return]
