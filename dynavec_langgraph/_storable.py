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


_Path = tuple["_Path | None", tuple[str, Any]] | None
"""Where a part of a value sits: its parent's path and one step (``("[]", key)``,
``("[i]", index)``, ``(".", name)``); rendered only for the part that is reported."""
_LEAVES = (int, float, bool, bytes, type(None))


def _children(value: Any) -> Iterator[tuple[tuple[str, Any], Any]]:
    """The parts of a value that may hold text, each with its step from ``value``, for
    :func:`lone_surrogate`."""
    if isinstance(value, Mapping):
        for key, item in value.items():
            yield ("[]", key), key
            yield ("[]", key), item
    elif isinstance(value, list | tuple | set | frozenset):
        for i, item in enumerate(value):
            yield ("[i]", i), item
    elif isinstance(value, BaseModel):
        for name in type(value).model_fields:
            yield (".", name), getattr(value, name, None)
    elif is_dataclass(value) and not isinstance(value, type):
        for f in fields(value):
            yield (".", f.name), getattr(value, f.name, None)


def _place(path: _Path) -> str:
    """``"['note'][1]"``: the steps of ``path``, outermost first."""
    parts: list[str] = []
    while path is not None:
        path, (kind, key) = path
        parts.append(
            f"[{brief(key, 40)}]" if kind == "[]" else f"[{key}]" if kind == "[i]" else f".{key}"
        )
    return "".join(reversed(parts))


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
    stack: list[tuple[_Path, Any]] = [(None, value)]
    seen = 0
    while stack:
        path, item = stack.pop()
        seen += 1
        if isinstance(item, str):
            if item.isascii():
                continue
            try:
                item.encode("utf-8")
            except UnicodeEncodeError as error:
                return _place(path), error.start, item[error.start]
        elif isinstance(item, _LEAVES):
            continue
        elif seen < 1_000_000:  # a value nested deeper is refused by the serializer
            stack.extend(reversed([((path, step), v) for step, v in _children(item)]))
    return None
