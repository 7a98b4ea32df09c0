"""Safe checkpoint serialization.  (STUB: being written.)"""

from __future__ import annotations

from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer


def safe_serializer() -> JsonPlusSerializer:
    """The serializer for savers this package creates (stub: LangGraph's default)."""
    return JsonPlusSerializer()
