"""Which saver stores a thread: the one home of how the package tells savers apart.

Three places need to know what a saver really writes to: the resume locks (a SQLite file is
locked with ``flock``, a PostgreSQL database with an advisory lock), the check for another
application's tables of the same name, and the inbox's thread listing (read from the table
itself). They all ask this module:

* :func:`stored_in` follows the wrappers down to the saver that writes. The package's
  wrappers declare what they wrap (:class:`WrapsSaver`, ``wrapped_saver``: every
  ``DelegatingSaver``); a wrapper that is not the package's and declares nothing is followed
  through the LangGraph saver its ``inner``, ``saver`` or ``wrapped`` attribute holds, if any.
* :func:`saver_kind` says whether that saver is LangGraph's SQLite or PostgreSQL saver (sync or
  async), by ``isinstance`` against their classes, without importing the optional packages
  that define them: a class that was never imported has no instance.
"""

from __future__ import annotations

import sys
from typing import Any, Final, Literal, Protocol, runtime_checkable

from langgraph.checkpoint.base import BaseCheckpointSaver

__all__ = ["SaverKind", "WrapsSaver", "is_instance_of", "saver_kind", "stored_in"]

SaverKind = Literal["sqlite", "async_sqlite", "postgres", "async_postgres"]

_CLASSES: Final[tuple[tuple[str, str, SaverKind], ...]] = (
    ("langgraph.checkpoint.sqlite", "SqliteSaver", "sqlite"),
    ("langgraph.checkpoint.sqlite.aio", "AsyncSqliteSaver", "async_sqlite"),
    ("langgraph.checkpoint.postgres", "PostgresSaver", "postgres"),
    ("langgraph.checkpoint.postgres.aio", "AsyncPostgresSaver", "async_postgres"),
)
"""LangGraph's savers the package knows how to lock and read: module, class, kind."""

_INNER_ATTRS: Final = ("inner", "saver", "wrapped")  # a foreign wrapper that declares nothing


@runtime_checkable
class WrapsSaver(Protocol):
    """A saver that stores through another saver, which it declares: its threads are locked as
    that saver's (this package's ``HistoryCache``, ``ScratchThreads``, ``ConnectionSaver``)."""

    @property
    def wrapped_saver(self) -> BaseCheckpointSaver[Any]:
        """The saver this one stores through."""
        ...


def is_instance_of(value: object, module: str, name: str) -> bool:
    """``isinstance(value, module.name)`` for a class of an optional package, without importing
    it (a class never imported has no instance).

    Example:
        >>> is_instance_of(3, "builtins", "int"), is_instance_of(3, "not_imported_pkg", "X")
        (True, False)
    """
    cls = getattr(sys.modules.get(module), name, None)
    return isinstance(cls, type) and isinstance(value, cls)


def stored_in(saver: object) -> Any:
    """The saver under every wrapper of ``saver`` (``saver`` itself when it wraps nothing).

    Example:
        >>> from langgraph.checkpoint.memory import InMemorySaver
        >>> inner = InMemorySaver()
        >>> class Foreign:  # a wrapper that declares nothing
        ...     def __init__(self, inner):
        ...         self.inner = inner
        >>> stored_in(Foreign(inner)) is inner, stored_in(inner) is inner
        (True, True)
    """
    seen: set[int] = set()
    while id(saver) not in seen:
        seen.add(id(saver))
        if isinstance(saver, WrapsSaver):
            saver = saver.wrapped_saver
            continue
        for attr in _INNER_ATTRS:
            inner = getattr(saver, attr, None)
            if isinstance(inner, BaseCheckpointSaver):
                saver = inner
                break
        else:
            return saver
    return saver


def saver_kind(saver: object) -> SaverKind | None:
    """Which of LangGraph's SQLite / PostgreSQL savers ``saver`` is (not what it wraps: see
    :func:`stored_in`); ``None`` for any other saver.

    Example:
        >>> import sqlite3
        >>> from langgraph.checkpoint.memory import InMemorySaver
        >>> from langgraph.checkpoint.sqlite import SqliteSaver
        >>> saver_kind(SqliteSaver(sqlite3.connect(":memory:"))), saver_kind(InMemorySaver())
        ('sqlite', None)
    """
    for module, name, kind in _CLASSES:
        if is_instance_of(saver, module, name):
            return kind
    return None
