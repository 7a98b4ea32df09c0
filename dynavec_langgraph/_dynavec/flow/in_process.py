"""The serializer of a run kept in process: plain data through LangGraph's, any other object
by reference."""

from __future__ import annotations

import itertools

from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from dynavec_langgraph._types import UserPayload

__all__ = ["InProcessSerde"]


class InProcessSerde(SerializerProtocol):
    """The serializer of a run's in-process saver: plain data (what LangGraph itself writes:
    checkpoints, metadata, JSON state) goes through LangGraph's serializer, so every load is
    a fresh object, as LangGraph expects; anything else is kept by reference, so a state may
    hold what no serializer can store (clients, locks, functions), as in dynavec."""

    def __init__(self) -> None:
        self._plain = JsonPlusSerializer()
        self._objects: dict[bytes, UserPayload] = {}
        self._ids = itertools.count()

    def dumps_typed(self, obj: UserPayload) -> tuple[str, bytes]:
        if _is_plain(obj):
            return self._plain.dumps_typed(obj)
        key = str(next(self._ids)).encode()
        self._objects[key] = obj
        return "in-process", key

    def loads_typed(self, data: tuple[str, bytes]) -> UserPayload:
        if data[0] == "in-process":
            return self._objects[data[1]]
        return self._plain.loads_typed(data)


def _is_plain(value: object, depth: int = 0) -> bool:
    if value is None or isinstance(value, bool | int | float | str | bytes):
        return True
    if depth > 50:
        return False
    if type(value) is list:
        return all(_is_plain(v, depth + 1) for v in value)
    if type(value) is dict:
        return all(isinstance(k, str) and _is_plain(v, depth + 1) for k, v in value.items())
    return False
