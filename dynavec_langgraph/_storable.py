"""Values a checkpointer cannot store as they are: the first lone surrogate (half of a UTF-16
pair) in a value, and a short ``repr`` for the messages that name it. Read by the guarded resume
(:mod:`dynavec_langgraph._resuming`) and by ``interrupt`` before anything is saved."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import fields, is_dataclass
from typing import Any, Final

from pydantic import BaseModel

from dynavec_langgraph._errors import (
    DynavecError,
    InvalidInputError,
    lone_surrogate_text,
    nul_text,
)

__all__ = ["MAX_NESTING", "brief", "check_id", "check_text", "lone_surrogate", "too_deep"]

MAX_NESTING: Final = 255
"""The deepest nesting of lists and dicts LangGraph's serializer stores (ormsgpack refuses a
256th level, langgraph-checkpoint 4.3, pinned by tests/test_option_validation.py): what the
audit trail and the notification outbox accept."""


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


def too_deep(value: Any, limit: int = MAX_NESTING) -> bool:
    """Whether ``value`` nests lists, tuples and dicts more than ``limit`` levels deep
    (walked without recursion, so a value of any depth is measured).

    Example:
        >>> too_deep([[1]], limit=2), too_deep([[[1]]], limit=2)
        (False, True)
    """
    stack: list[tuple[int, Any]] = [(0, value)]
    while stack:
        depth, item = stack.pop()
        if isinstance(item, Mapping):
            children: Any = item.values()
        elif isinstance(item, list | tuple):
            children = item
        else:
            continue
        if depth + 1 > limit:
            return True
        stack.extend((depth + 1, child) for child in children)
    return False


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


def check_text(value: Any, field: str, error: type[DynavecError] = InvalidInputError) -> None:
    """Refuse ``value`` when a string in it holds a lone surrogate (no saver stores it as it
    is: SQLite and the in-memory saver write ``?`` instead, PostgreSQL fails).

    Raises:
        InvalidInputError: (or ``error``) naming ``field``, the place and the position.
    """
    found = lone_surrogate(value)
    if found is None:
        return
    place, index, char = found
    text = lone_surrogate_text(field + place, index, char)
    if issubclass(error, InvalidInputError):
        raise error(text, field + place)
    raise error(text)


def check_id(value: Any, field: str) -> None:
    """Refuse an id (a thread id, a checkpoint id) that a saver cannot store as it is: a lone
    surrogate, or a NUL character (PostgreSQL's text columns refuse it; refused on every
    saver, so a thread id works on each).

    Raises:
        InvalidInputError: naming ``field`` and the position.
    """
    check_text(value, field)
    if isinstance(value, str) and "\x00" in value:
        raise InvalidInputError(nul_text(field, value.index("\x00")), field)
