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

:func:`safe_serializer` is the serializer the savers it opens use (it revives only standard
and this package's types); give it to your own savers:
``SqliteSaver(conn, serde=safe_serializer())``.
"""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Callable
from typing import Any, Final, Literal
from urllib.parse import parse_qs, urlsplit, urlunsplit

from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
)

from dynavec_langgraph._errors import CheckpointerConfigError, StorageError, foreign_table_text
from dynavec_langgraph._persistence.adapter import DynavecCheckpointSaver
from dynavec_langgraph._persistence.base import DelegatingSaver, ThreadedAsyncSaver
from dynavec_langgraph._persistence.locks import check_writable
from dynavec_langgraph._persistence.records import BaseCheckpointer
from dynavec_langgraph._persistence.serde import safe_serializer

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


class ConnectionSaver(ThreadedAsyncSaver[Any], DelegatingSaver):
    """A sync LangGraph saver the package opened from a connection string.

    The sync methods call ``inner`` (a ``SqliteSaver`` or ``PostgresSaver``: a
    :class:`~dynavec_langgraph._persistence.base.DelegatingSaver`); the async ones run them in a
    worker thread (:class:`~dynavec_langgraph._persistence.base.ThreadedAsyncSaver`), so one
    agent can ``invoke`` and ``ainvoke``. :meth:`close` closes the connection (or pool) that
    was opened.

    Attributes:
        inner: the wrapped saver.
        url: the connection string, password masked.
    """

    def __init__(
        self, inner: BaseCheckpointSaver[Any], url: str, close: Callable[[], None]
    ) -> None:
        super().__init__(inner)
        self.url = url
        self._close = close
        self.closed = False

    def close(self) -> None:
        """Close what was opened; idempotent."""
        if not self.closed:
            self.closed = True
            self._close()

    def __enter__(self) -> ConnectionSaver:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"ConnectionSaver({self.url!r})"


def masked_url(url: str) -> str:
    """``url`` with its password replaced by ``***``."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))


def _open_sqlite(url: str) -> ConnectionSaver:
    from langgraph.checkpoint.sqlite import SqliteSaver

    path, _, query = url[len(SQLITE_SCHEME) :].partition("?")
    timeout = _sqlite_options(url, query)
    if not path:
        raise CheckpointerConfigError(
            f"checkpointer={url!r} names no file: use 'sqlite:///path/to.db', "
            "'sqlite:////absolute/path.db' or 'sqlite:///:memory:'"
        )
    if path != ":memory:":
        try:
            check_writable(path)
        except StorageError as error:
            raise CheckpointerConfigError(str(error)) from None
    try:
        conn = sqlite3.connect(path, check_same_thread=False, timeout=timeout)
    except sqlite3.Error as exc:
        raise CheckpointerConfigError(f"cannot open SQLite file {path!r}: {exc}") from exc
    saver = SqliteSaver(conn, serde=safe_serializer())
    conflict = schema_conflict(saver, f"the SQLite file {path!r}")  # before setup writes
    if conflict:
        conn.close()
        raise CheckpointerConfigError(conflict)
    try:
        saver.setup()
    except sqlite3.Error as exc:
        conn.close()
        raise CheckpointerConfigError(
            f"cannot set up SQLite file {path!r}: {exc}. The agent writes a checkpoint at every "
            "step: give it a file (and folder) it can write"
        ) from exc
    return ConnectionSaver(saver, url, conn.close)


def _sqlite_options(url: str, query: str) -> float:
    """The options of a ``sqlite:///`` URL: ``timeout`` (seconds to wait for a lock)."""
    timeout = 5.0
    for key, _, value in (item.partition("=") for item in query.split("&") if item):
        if key != "timeout":
            raise CheckpointerConfigError(
                f"checkpointer={url!r}: unknown SQLite option {key!r}; the only option is "
                "timeout=SECONDS (the agent writes every step, so read-only modes cannot work)"
            )
        try:
            timeout = float(value)
        except ValueError:
            raise CheckpointerConfigError(
                f"checkpointer={url!r}: timeout={value!r} is not a number of seconds"
            ) from None
    return timeout


_PG_WAIT: Final = 5.0
"""Seconds a PostgreSQL call waits for a connection before failing (the server is down)."""


def _open_postgres(url: str) -> ConnectionSaver:
    import psycopg
    from langgraph.checkpoint.postgres import PostgresSaver
    from psycopg.rows import dict_row
    from psycopg_pool import ConnectionPool, PoolTimeout

    pool: ConnectionPool[Any] = ConnectionPool(
        url,
        min_size=1,
        max_size=8,
        kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row},
        open=False,
        check=ConnectionPool.check_connection,  # a connection broken by a restart is replaced
        timeout=_PG_WAIT,  # fail fast while the server is down
    )
    where = f"PostgreSQL at {masked_url(url)}"
    try:
        with psycopg.connect(url, autocommit=True, row_factory=dict_row) as probe:
            conflict = schema_conflict(PostgresSaver(probe), where)  # before setup writes
            if conflict:
                raise CheckpointerConfigError(conflict)
            PostgresSaver(probe).setup()  # fails fast when the server is down
        pool.open(wait=True, timeout=10)
        saver = PostgresSaver(pool, serde=safe_serializer())
    except CheckpointerConfigError:
        pool.close()
        raise
    except (PoolTimeout, psycopg.Error) as exc:
        pool.close()
        raise CheckpointerConfigError(
            f"cannot connect to PostgreSQL at {masked_url(url)}: {exc}. Check that the server "
            "runs and the URI (host, port, database, user) is right"
        ) from exc
    return ConnectionSaver(saver, masked_url(url), pool.close)


def resolve_checkpointer(checkpointer: Any) -> BaseCheckpointSaver[Any] | None:
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
        parsed = parse_database_url(checkpointer)
        kind = parsed[0] if parsed else None
        if kind == "sqlite":
            return _open_sqlite(checkpointer)
        if kind == "postgres":
            return _open_postgres(checkpointer)
        if kind == "dynamodb":  # dynavec's table layout, adapted
            from dynavec_langgraph._persistence.dynamodb import DynamoDBCheckpointer

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
        return DynavecCheckpointSaver(checkpointer)
    raise CheckpointerConfigError(
        f"checkpointer={checkpointer!r} is not a checkpointer: pass a LangGraph saver "
        "(InMemorySaver, SqliteSaver, PostgresSaver...), a connection string "
        "('sqlite:///path/to.db' or 'postgresql://...'), or a dynavec BaseCheckpointer"
    )


def is_storage_error(error: BaseException) -> bool:
    """Whether ``error`` came from the storage under a saver (SQLite, PostgreSQL connection or
    pool, a lock file that cannot be made), not from the agent or a tool."""
    if isinstance(error, sqlite3.OperationalError | PermissionError) or is_schema_error(error):
        return True
    psycopg = sys.modules.get("psycopg")
    if psycopg is not None and isinstance(error, psycopg.OperationalError | psycopg.InterfaceError):
        return True
    pool = sys.modules.get("psycopg_pool")
    if pool is not None and isinstance(error, pool.PoolTimeout | pool.PoolClosed):
        return True
    botocore = sys.modules.get("botocore.exceptions")  # DynamoDB: a request that failed
    return botocore is not None and isinstance(error, botocore.BotoCoreError | botocore.ClientError)


_COLUMNS: Final[dict[str, dict[str, tuple[str, ...]]]] = {
    "sqlite": {
        "checkpoints": ("thread_id", "checkpoint_ns", "checkpoint_id", "checkpoint", "metadata"),
        "writes": ("thread_id", "checkpoint_ns", "checkpoint_id", "task_id", "channel", "value"),
    },
    "postgres": {
        "checkpoints": ("thread_id", "checkpoint_ns", "checkpoint_id", "checkpoint", "metadata"),
        "checkpoint_blobs": ("thread_id", "checkpoint_ns", "channel", "version", "blob"),
        "checkpoint_writes": ("thread_id", "checkpoint_ns", "checkpoint_id", "task_id", "blob"),
    },
}
"""The tables LangGraph's SQLite and PostgreSQL savers use and columns each must have (the
savers create them with ``CREATE TABLE IF NOT EXISTS``, so another application's table of the
same name stays, and every query on it fails)."""

_PG_COLUMNS_SQL: Final = (
    "SELECT table_name, column_name FROM information_schema.columns "
    "WHERE table_schema = current_schema() AND table_name = ANY(%s)"
)


def _table_columns(saver: Any) -> tuple[str, dict[str, list[str]]] | None:
    """``(kind, {table: columns})`` of the saver's tables that exist, or ``None`` for a saver
    that is not LangGraph's SQLite or PostgreSQL one (or cannot be asked)."""
    saver = getattr(saver, "inner", saver)
    module = type(saver).__module__
    conn = getattr(saver, "conn", None)
    if conn is None:
        return None
    found: dict[str, list[str]] = {}
    if module.startswith("langgraph.checkpoint.sqlite") and isinstance(conn, sqlite3.Connection):
        for table in _COLUMNS["sqlite"]:
            rows = conn.execute(f"PRAGMA table_info({table})").fetchall()
            if rows:
                found[table] = [str(r[1]) for r in rows]
        return "sqlite", found
    if module.startswith("langgraph.checkpoint.postgres"):
        pools = sys.modules.get("psycopg_pool")
        tables = list(_COLUMNS["postgres"])
        if pools is not None and isinstance(conn, pools.ConnectionPool):
            with conn.connection() as pooled:
                rows = pooled.execute(_PG_COLUMNS_SQL, (tables,)).fetchall()
        else:
            rows = conn.execute(_PG_COLUMNS_SQL, (tables,)).fetchall()
        for row in rows:
            table, column = (
                (row["table_name"], row["column_name"]) if isinstance(row, dict) else row
            )
            found.setdefault(str(table), []).append(str(column))
        return "postgres", found
    return None


def schema_conflict(saver: Any, where: str | None = None) -> str | None:
    """What to tell the user when a table the saver needs belongs to another application
    (it lacks the saver's columns), or ``None`` when the tables are LangGraph's, absent, or
    the saver is not LangGraph's SQLite or PostgreSQL saver.

    Example:
        >>> import sqlite3
        >>> from langgraph.checkpoint.sqlite import SqliteSaver
        >>> conn = sqlite3.connect(":memory:")
        >>> _ = conn.execute("CREATE TABLE checkpoints (id INTEGER, title TEXT)")
        >>> found = schema_conflict(SqliteSaver(conn), "the SQLite file 'app.db'")
        >>> found.startswith("the SQLite file 'app.db' holds a table 'checkpoints' that is not")
        True
    """
    try:
        read = _table_columns(saver)
    except Exception:  # the storage fails: that is the error to report, not this one
        return None
    if read is None:
        return None
    kind, found = read
    for table, needed in _COLUMNS[kind].items():
        columns = found.get(table)
        if columns is None:
            continue
        missing = [c for c in needed if c not in columns]
        if missing:
            return foreign_table_text(where or describe_storage(saver), table, columns, missing)
    return None


def is_schema_error(error: BaseException) -> bool:
    """Whether ``error`` says a table lacks a column the saver uses (another application's
    table of the same name, see :func:`schema_conflict`)."""
    if isinstance(error, sqlite3.OperationalError):
        text = str(error)
        return text.startswith("no such column") or " has no column named " in text
    errors = getattr(sys.modules.get("psycopg"), "errors", None)
    return errors is not None and isinstance(error, errors.UndefinedColumn)


def describe_storage(saver: Any) -> str:
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
