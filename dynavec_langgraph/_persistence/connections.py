"""The savers the package opens from a connection string: :class:`ConnectionSaver`,
:func:`open_sqlite`, :func:`open_postgres`; and what tells a storage failure apart
(:func:`is_storage_error`, another application's tables: :func:`schema_conflict`).

:func:`dynavec_langgraph.savers.resolve_checkpointer` reads the URL
(:func:`~dynavec_langgraph.savers.parse_database_url`, the one grammar) and calls the opener of
its kind; :mod:`dynavec_langgraph.savers` is the public home of :class:`ConnectionSaver`,
:func:`masked_url` and :func:`is_storage_error`.
"""

from __future__ import annotations

import sqlite3
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlsplit, urlunsplit

from dynavec_langgraph._errors import CheckpointerConfigError, StorageError, foreign_table_text
from dynavec_langgraph._extras import missing_extra, missing_package
from dynavec_langgraph._persistence.base import DelegatingSaver, ThreadedAsyncSaver
from dynavec_langgraph._persistence.kinds import is_instance_of, saver_kind, stored_in
from dynavec_langgraph._persistence.locks import check_writable
from dynavec_langgraph._persistence.serde import safe_serializer

if TYPE_CHECKING:
    from langgraph.checkpoint.postgres import PostgresSaver

    from dynavec_langgraph._types import CheckpointSaver, ForeignObject

__all__ = [
    "PG_PACKAGES",
    "ConnectionSaver",
    "is_schema_error",
    "is_storage_error",
    "masked_url",
    "open_postgres",
    "open_sqlite",
    "postgres_rows",
    "schema_conflict",
]

PG_PACKAGES: Final = ("psycopg", "psycopg_pool")
"""The packages of the ``postgres`` extra besides ``langgraph-checkpoint-postgres`` (named
when one of them is the one missing)."""


class ConnectionSaver(ThreadedAsyncSaver[Any], DelegatingSaver):
    """A sync LangGraph saver the package opened from a connection string.

    A :class:`~dynavec_langgraph._persistence.base.DelegatingSaver`: the sync methods call
    ``inner`` (a ``SqliteSaver`` or ``PostgresSaver``); the async ones run them in a worker
    thread (:class:`~dynavec_langgraph._persistence.base.ThreadedAsyncSaver`), so one agent can
    ``invoke`` and ``ainvoke``. :meth:`close` closes the connection (or pool) that was opened.

    Attributes:
        inner: the wrapped saver.
        url: the connection string, password masked.
    """

    def __init__(self, inner: CheckpointSaver, url: str, close: Callable[[], None]) -> None:
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


def open_sqlite(url: str, rest: str) -> ConnectionSaver:
    """The saver of a ``sqlite:///`` URL (``rest``: what follows the scheme, ``path?options``),
    its tables set up; the caller owns it (close it).

    Raises:
        MissingDependencyError: the ``sqlite`` extra is not installed.
        CheckpointerConfigError: no file, an unknown option, a file that cannot be opened,
            written or set up, or another application's table of the same name.
    """
    try:
        from langgraph.checkpoint.sqlite import SqliteSaver
    except ImportError:
        raise missing_extra(
            f"checkpointer={url!r}", "langgraph-checkpoint-sqlite", "sqlite"
        ) from None

    path, _, query = rest.partition("?")
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
_SETUP_LOCK: Final = 0x64796E6176656301
"""The PostgreSQL advisory lock key held while a process runs LangGraph's ``setup()``."""
_SETUP_WAIT: Final = 60.0
"""Seconds a process waits for another to finish setting up the checkpoint tables."""


def open_postgres(url: str) -> ConnectionSaver:
    """The saver of a ``postgresql://`` / ``postgres://`` URL (a pool of up to 8 connections),
    its tables set up; the caller owns it (close it).

    Raises:
        MissingDependencyError: the ``postgres`` extra is not installed.
        CheckpointerConfigError: the server cannot be reached, or another application's
            table of the same name.
    """
    try:
        import psycopg
        from langgraph.checkpoint.postgres import PostgresSaver
        from psycopg.rows import dict_row
        from psycopg_pool import ConnectionPool, PoolTimeout
    except ImportError as error:
        package = missing_package(error, "langgraph-checkpoint-postgres", *PG_PACKAGES)
        raise missing_extra(f"checkpointer={masked_url(url)!r}", package, "postgres") from None

    pool: ConnectionPool[Any] = ConnectionPool(
        url,
        min_size=1,
        max_size=8,
        kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row},
        open=False,
        check=ConnectionPool.check_connection,  # a connection broken by a restart is replaced
        timeout=_PG_WAIT,  # fail fast while the server is down
        # psycopg_pool retries a lost connection with a doubling delay for reconnect_timeout
        # (5 min by default): after a long outage its next try could be minutes away, and every
        # call in between would time out. Giving up after _PG_WAIT lets the next call start a
        # fresh attempt at once, so the agent is back as soon as the server is.
        reconnect_timeout=_PG_WAIT,
    )
    where = f"PostgreSQL at {masked_url(url)}"
    try:
        with psycopg.connect(url, autocommit=True, row_factory=dict_row) as probe:
            conflict = schema_conflict(PostgresSaver(probe), where)  # before setup writes
            if conflict:
                raise CheckpointerConfigError(conflict)
            _setup_alone(probe, PostgresSaver)
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


def _setup_alone(conn: ForeignObject, saver_class: type[PostgresSaver]) -> None:
    """LangGraph's ``PostgresSaver.setup()``, one process at a time.

    ``setup()`` is not safe against itself: two processes starting at once on a new database
    (two workers, two servers) both insert its migration rows and one fails with a duplicate
    key. A session-level advisory lock lets one set up while the others wait, then find every
    migration done. The others poll ``pg_try_advisory_lock`` rather than wait in
    ``pg_advisory_lock``: a waiting statement is a transaction, which the migrations' ``CREATE
    INDEX CONCURRENTLY`` would wait for in turn (a deadlock)."""
    deadline = time.monotonic() + _SETUP_WAIT
    while not conn.execute("SELECT pg_try_advisory_lock(%s) AS ok", (_SETUP_LOCK,)).fetchone()[
        "ok"
    ]:
        if time.monotonic() > deadline:
            raise CheckpointerConfigError(
                f"another process has been setting up the checkpoint tables for over "
                f"{_SETUP_WAIT:.0f} s: check for a stuck process, or try again"
            )
        time.sleep(0.05)  # another process is running the migrations; nothing to wait on
    try:
        saver_class(conn).setup()  # fails fast when the server is down
    finally:
        conn.execute("SELECT pg_advisory_unlock(%s)", (_SETUP_LOCK,))


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


def postgres_rows(conn: ForeignObject, statement: str, params: tuple[Any, ...] = ()) -> list[Any]:
    """The rows of ``statement`` run on a sync PostgreSQL saver's ``conn`` (a psycopg
    connection, or a pool: on one of its connections)."""
    if is_instance_of(conn, "psycopg_pool", "ConnectionPool"):
        with conn.connection() as pooled:
            return list(pooled.execute(statement, params).fetchall())
    return list(conn.execute(statement, params).fetchall())


def _table_columns(saver: CheckpointSaver) -> tuple[str, dict[str, list[str]]] | None:
    """``(kind, {table: columns})`` of the saver's tables that exist, or ``None`` for a saver
    that is not LangGraph's SQLite or PostgreSQL one (or cannot be asked)."""
    saver = stored_in(saver)
    kind = saver_kind(saver)
    conn = getattr(saver, "conn", None)
    if conn is None:
        return None
    found: dict[str, list[str]] = {}
    if kind == "sqlite" and isinstance(conn, sqlite3.Connection):
        for table in _COLUMNS["sqlite"]:
            rows = conn.execute(f"PRAGMA table_info({table})").fetchall()
            if rows:
                found[table] = [str(r[1]) for r in rows]
        return "sqlite", found
    if kind == "postgres":
        for row in postgres_rows(conn, _PG_COLUMNS_SQL, (list(_COLUMNS["postgres"]),)):
            table, column = (
                (row["table_name"], row["column_name"]) if isinstance(row, dict) else row
            )
            found.setdefault(str(table), []).append(str(column))
        return "postgres", found
    return None


def schema_conflict(saver: CheckpointSaver, where: str) -> str | None:
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
            return foreign_table_text(where, table, columns, missing)
    return None


def is_schema_error(error: BaseException) -> bool:
    """Whether ``error`` says a table lacks a column the saver uses (another application's
    table of the same name, see :func:`schema_conflict`)."""
    if isinstance(error, sqlite3.OperationalError):
        text = str(error)
        return text.startswith("no such column") or " has no column named " in text
    errors = getattr(sys.modules.get("psycopg"), "errors", None)
    return errors is not None and isinstance(error, errors.UndefinedColumn)
