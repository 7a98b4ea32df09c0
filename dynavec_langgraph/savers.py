"""LangGraph savers from ``checkpointer=``: :func:`resolve_checkpointer`, :class:`ConnectionSaver`.

``checkpointer=`` (of :class:`~dynavec_langgraph.ReActAgent` and ``create_react_agent``) goes
through :func:`resolve_checkpointer`, which accepts:

* a LangGraph ``BaseCheckpointSaver`` (used as is);
* ``"sqlite:///path/to.db"`` (``sqlite:////abs/path.db``, ``sqlite:///:memory:``) or
  ``"postgresql://..."`` / ``"postgres://..."`` (read by :func:`parse_database_url`, the one
  parser of database URLs, also used by the CLI's ``--db``): the package opens the
  connection, creates the tables and wraps the saver in a :class:`ConnectionSaver`, whose async
  methods run the sync saver in a worker thread, so ``invoke`` and ``ainvoke`` both work;
  ``close()`` releases it;
* ``"dynamodb://TABLE?region=...&endpoint_url=...&namespace=...&lock_ttl=...
  &lock_heartbeat=...&create_table=..."`` (options read by :func:`dynamodb_options`): a
  :class:`~dynavec_langgraph.dynamodb.DynamoDBCheckpointer` (extra ``dynamodb``, dynavec's
  table layout), adapted like any dynavec checkpointer;
* a dynavec-style checkpointer (:class:`~dynavec_langgraph.checkpoint.BaseCheckpointer`, or
  any object with ``save`` / ``get`` / ``list`` / ``put``), adapted by
  :class:`~dynavec_langgraph._persistence.adapter.DynavecCheckpointSaver`.

This module is the one grammar of connection strings (:func:`parse_database_url`,
:func:`dynamodb_options`, :func:`sqlite_url`) and the factory on it; the savers it opens live
in :mod:`dynavec_langgraph._persistence.connections`, the adapter and the wrappers in the rest
of :mod:`dynavec_langgraph._persistence`.

:func:`safe_serializer` is the serializer the savers it opens use (it revives only standard
and this package's types); give it to your own savers:
``SqliteSaver(conn, serde=safe_serializer())``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final, Literal, cast
from urllib.parse import parse_qs, urlsplit

from langgraph.checkpoint.base import BaseCheckpointSaver

from dynavec_langgraph._errors import CheckpointerConfigError
from dynavec_langgraph._persistence.adapter import DynavecCheckpointSaver
from dynavec_langgraph._persistence.connections import (
    ConnectionSaver,
    is_storage_error,
    masked_url,
    open_postgres,
    open_sqlite,
)
from dynavec_langgraph._persistence.records import BaseCheckpointer
from dynavec_langgraph._persistence.serde import safe_serializer

if TYPE_CHECKING:
    from dynavec_langgraph._persistence.records import CheckpointerOption, DynavecCheckpointer

__all__ = [
    "ConnectionSaver",
    "describe_storage",
    "dynamodb_options",
    "is_storage_error",
    "masked_url",
    "parse_database_url",
    "resolve_checkpointer",
    "safe_serializer",
    "sqlite_url",
]

DatabaseKind = Literal["sqlite", "postgres", "dynamodb"]
SQLITE_SCHEME: Final = "sqlite:///"
_SCHEMES: Final[dict[str, DatabaseKind]] = {
    SQLITE_SCHEME: "sqlite",
    "postgresql://": "postgres",
    "postgres://": "postgres",
    "dynamodb://": "dynamodb",
}


def parse_database_url(url: str) -> tuple[DatabaseKind, str] | None:
    """The kind of a database URL and what opens it; ``None`` for any other string.

    ``("sqlite", path)`` (the part after ``sqlite:///``, ``?options`` included),
    ``("postgres", url)`` or ``("dynamodb", url)``.

    Example:
        >>> parse_database_url("sqlite:///x.db?timeout=2")
        ('sqlite', 'x.db?timeout=2')
        >>> parse_database_url("postgres://u@h/db"), parse_database_url("x.db")
        (('postgres', 'postgres://u@h/db'), None)
    """
    for prefix, kind in _SCHEMES.items():
        if url.startswith(prefix):
            return kind, url[len(prefix) :] if kind == "sqlite" else url
    return None


_DYNAMODB_OPTIONS: Final = {
    "region": "region_name",
    "region_name": "region_name",
    "endpoint_url": "endpoint_url",
    "namespace": "namespace",
    "lock_ttl": "lock_ttl",
    "lock_heartbeat": "lock_heartbeat",
    "create_table": "create_table",
    "lock_owner_check": "lock_owner_check",
}
_BOOLS: Final = {"1": True, "true": True, "yes": True, "0": False, "false": False, "no": False}


def dynamodb_options(url: str) -> dict[str, Any]:
    """The ``DynamoDBCheckpointer`` arguments of a ``dynamodb://`` URL (``table`` included).

    ``dynamodb://TABLE?region=R&endpoint_url=U&namespace=N&lock_ttl=SECONDS
    &lock_heartbeat=SECONDS&lock_owner_check=true|false&create_table=true|false``; every
    option may be left out (see :class:`~dynavec_langgraph.dynamodb.DynamoDBCheckpointer`).

    Raises:
        CheckpointerConfigError: no table, an unknown option, or a bad value.

    Example:
        >>> dynamodb_options("dynamodb://runs?region=eu-west-1&lock_ttl=10")
        {'table': 'runs', 'region_name': 'eu-west-1', 'lock_ttl': 10.0}
    """
    parsed = parse_database_url(url)
    if parsed is None or parsed[0] != "dynamodb":
        raise CheckpointerConfigError(f"{url!r} is not a 'dynamodb://TABLE?...' URL")
    parts = urlsplit(url)
    table = parts.netloc or parts.path.lstrip("/")
    if not table:
        raise CheckpointerConfigError(
            f"checkpointer={url!r} names no table: use 'dynamodb://TABLE?region=...'"
        )
    out: dict[str, Any] = {"table": table}
    for key, values in parse_qs(parts.query, keep_blank_values=True).items():
        name = _DYNAMODB_OPTIONS.get(key)
        if name is None:
            raise CheckpointerConfigError(
                f"checkpointer={url!r}: unknown parameter {key!r}; known: "
                f"{sorted(_DYNAMODB_OPTIONS)}"
            )
        value = values[-1]
        if name in ("lock_ttl", "lock_heartbeat"):
            try:
                out[name] = float(value)
            except ValueError:
                raise CheckpointerConfigError(
                    f"checkpointer={url!r}: {key}={value!r} is not a number of seconds"
                ) from None
        elif name in ("create_table", "lock_owner_check"):
            if value.lower() not in _BOOLS:
                raise CheckpointerConfigError(
                    f"checkpointer={url!r}: {key}={value!r}: use true or false"
                )
            out[name] = _BOOLS[value.lower()]
        elif value:
            out[name] = value
    return out


def sqlite_url(path: str) -> str:
    """The ``sqlite:///`` URL of a SQLite file path (``?options`` kept)."""
    return SQLITE_SCHEME + path


def resolve_checkpointer(checkpointer: CheckpointerOption) -> BaseCheckpointSaver[Any] | None:
    """Turn ``checkpointer=`` into a LangGraph saver.

    Args:
        checkpointer: ``None``; a LangGraph ``BaseCheckpointSaver``; a connection string
            ``"sqlite:///path/to.db"`` / ``"postgresql://..."``; or a dynavec-style
            checkpointer (``save``/``get``/``list``/``put``).

    Returns:
        ``None`` for ``None``; the saver itself; a :class:`ConnectionSaver` the caller owns
        (close it) for a string; a :class:`DynavecCheckpointSaver` for a dynavec checkpointer.

    Raises:
        CheckpointerConfigError: an unknown scheme, a file or server that cannot be opened,
            or an object that is no checkpointer.

    Example:
        >>> from dynavec_langgraph import MemoryCheckpointer
        >>> resolve_checkpointer(None) is None
        True
        >>> resolve_checkpointer(MemoryCheckpointer()).__class__.__name__
        'DynavecCheckpointSaver'
    """
    if checkpointer is None or isinstance(checkpointer, BaseCheckpointSaver):
        return checkpointer
    if isinstance(checkpointer, str):
        kind, rest = parse_database_url(checkpointer) or (None, "")
        if kind == "sqlite":
            return open_sqlite(checkpointer, rest)
        if kind == "postgres":
            return open_postgres(checkpointer)
        if kind == "dynamodb":  # dynavec's table layout, adapted
            from dynavec_langgraph._persistence.dynamodb.checkpointer import DynamoDBCheckpointer

            return DynavecCheckpointSaver(DynamoDBCheckpointer(**dynamodb_options(checkpointer)))
        raise CheckpointerConfigError(
            f"checkpointer={masked_url(checkpointer)!r}: unknown scheme; use "
            "'sqlite:///path/to.db', 'postgresql://user:password@host:port/database' "
            "(or 'postgres://...'), 'dynamodb://TABLE?region=...&endpoint_url=...', a "
            "LangGraph saver, or a dynavec checkpointer"
        )
    if isinstance(checkpointer, BaseCheckpointer) or all(
        callable(getattr(checkpointer, name, None)) for name in ("save", "get", "list", "put")
    ):
        # checked above: it has save/get/list/put (True/False have none)
        return DynavecCheckpointSaver(cast("DynavecCheckpointer", checkpointer))
    raise CheckpointerConfigError(
        f"checkpointer={checkpointer!r} is not a checkpointer: pass a LangGraph saver "
        "(InMemorySaver, SqliteSaver, PostgresSaver...), a connection string "
        "('sqlite:///path/to.db' or 'postgresql://...'), or a dynavec BaseCheckpointer"
    )


def describe_storage(saver: BaseCheckpointSaver[Any] | None) -> str:
    """What a saver stores into, for messages: ``"the SQLite file 'x.db'"``, ``"PostgreSQL at
    postgresql://user:***@host/db"``, ``"the DynamoDB table 't' (namespace 'default')"``, or
    the saver's class."""
    if isinstance(saver, ConnectionSaver):
        parsed = parse_database_url(saver.url)
        if parsed and parsed[0] == "sqlite":
            return f"the SQLite file {parsed[1]!r}"
        return f"PostgreSQL at {saver.url}"
    inner: Any = getattr(saver, "checkpointer", None)
    if isinstance(saver, DynavecCheckpointSaver) and hasattr(inner, "table_name"):
        return f"the DynamoDB table {inner.table_name!r} (namespace {inner.namespace!r})"
    return f"the checkpointer {type(saver).__name__}"
