"""Safe checkpoint serialization: revive only known types when a checkpoint is loaded.

LangGraph's default ``JsonPlusSerializer`` stores objects as ``(module, name, args)`` records
and, unless ``LANGGRAPH_STRICT_MSGPACK=true`` is set, imports and calls whatever a stored record
names when it loads it. Anyone who can write to the checkpoint database could make a process
that loads the thread import a module or call a function of their choosing.

:func:`safe_serializer` closes that door without depending on the environment variable: it
revives LangGraph's built-in list of safe types (LangChain messages, ``Interrupt``, ``Send``,
``Command``, datetimes, UUIDs, ...) plus this package's own records, and nothing else. A record
naming any other class is not imported or called; its stored data comes back as plain
dicts/lists/strings. Pickle is never used, and old "json" checkpoints revive only the same
types. Everything this package writes (messages, the interrupt value
``{"node_id", "payload", "tool_call"}``, decisions, ``shared``) is plain JSON or one of these
types, so nothing it writes is lost.

Savers this package creates from a connection string use it. Give it to your own savers with
``SqliteSaver(conn, serde=safe_serializer())`` / ``PostgresSaver(conn, serde=...)``
(``from dynavec_langgraph.savers import safe_serializer``).
"""

from __future__ import annotations

from typing import Final

from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

__all__ = ["PACKAGE_TYPES", "safe_serializer"]

PACKAGE_TYPES: Final[tuple[tuple[str, str], ...]] = (
    ("dynavec_langgraph.records", "AgentResult"),
    ("dynavec_langgraph.records", "AgentState"),
    ("dynavec_langgraph.records", "AgentStep"),
    ("dynavec_langgraph.records", "Message"),
    ("dynavec_langgraph.records", "ToolCall"),
    ("dynavec_langgraph.checkpoint", "Checkpoint"),
)
"""``(module, name)`` of this package's types that checkpoints may hold, added to LangGraph's
built-in safe list (``langgraph.checkpoint.serde`` revives those without being told)."""


def safe_serializer() -> JsonPlusSerializer:
    """A LangGraph serializer that revives only standard and this package's types.

    Returns:
        A ``JsonPlusSerializer`` with explicit allowlists (strict whatever
        ``LANGGRAPH_STRICT_MSGPACK`` says) and no pickle fallback.

    Example:
        >>> from langchain_core.messages import AIMessage
        >>> serde = safe_serializer()
        >>> serde.loads_typed(serde.dumps_typed(AIMessage("hi"))).content
        'hi'
    """
    return JsonPlusSerializer(
        pickle_fallback=False,
        allowed_msgpack_modules=PACKAGE_TYPES,
        allowed_json_modules=PACKAGE_TYPES,
    )
