"""Values a checkpointer cannot store as they are: the first lone surrogate (half of a UTF-16
pair) in a value, and a short ``repr`` for the messages that name it. Read by the guarded resume
(:mod:`dynavec_langgraph._resuming`) and by ``interrupt`` before anything is saved."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import fields, is_dataclass
from typing import Any

from pydantic import BaseModel

__all__ = ["brief", "lone_surrogate"]


def brief(value: Any, limit: int = 160) -> str:
    """``repr(value)`` for a message: shortened, and safe for values nested too deeply."""
    try:
        text = repr(value)
    except RecursionError:
        return "<a value nested too deeply to show>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _children(value: Any) -> Iterator[tuple[str, Any]]:
    """The parts of a value that may hold text, each with its place (``"['k']"``, ``"[0]"``,
    ``".content"``), for :func:`lone_surrogate`."""
    if isinstance(value, Mapping):
        for key, item in value.items():
            yield f"[{brief(key, 40)}]", key
            yield f"[{brief(key, 40)}]", item
    elif isinstance(value, list | tuple | set | frozenset):
        for i, item in enumerate(value):
            yield f"[{i}]", item
    elif isinstance(value, BaseModel):
        for name in type(value).model_fields:
            yield f".{name}", getattr(value, name, None)
    elif is_dataclass(value) and not isinstance(value, type):
        for f in fields(value):
            yield f".{f.name}", getattr(value, f.name, None)


def lone_surrogate(value: Any) -> tuple[str, int, str] | None:
    r"""The first lone surrogate in ``value`` (a string, or one inside dicts, lists, pydantic
    models such as messages, dataclasses): its place, its index in that string and the
    character; ``None`` when there is none.

    Example:
        >>> lone_surrogate({"note": ["ok", "pay \ud83d rent"]})
        ("['note'][1]", 4, '\ud83d')
        >>> lone_surrogate("pay \U0001f600 rent") is None
        True
    """
    stack: list[tuple[str, Any]] = [("", value)]
    seen = 0
    while stack:
        place, item = stack.pop()
        seen += 1
        if isinstance(item, str):
            if item.isascii():
                continue
            try:
                item.encode("utf-8")
            except UnicodeEncodeError as error:
                return place, error.start, item[error.start]
        elif seen < 1_000_000:  # a value nested deeper is refused by the serializer
            stack.extend(reversed([(place + p, v) for p, v in _children(item)]))
    return None
