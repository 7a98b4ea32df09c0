"""The checkpointer of ``--db``: a SQLite file or a PostgreSQL URI, opened writable or read
only (nothing created), closed on exit."""

from __future__ import annotations

import shlex
import sqlite3
from collections.abc import Iterator
from contextlib import AbstractContextManager, closing, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, overload

from dynavec_langgraph._cli.common import CliError, invocation
from dynavec_langgraph._errors import CheckpointerConfigError

# Everything that imports LangGraph is imported inside the command that needs it, so that
# `dynavec-langgraph --help` (and a mistyped command) answers at once.
if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver


__all__ = [
    "open_saver",
]


def _sqlite_path(db: str) -> str | None:
    """The SQLite file of ``--db`` (a path or ``sqlite:///PATH``); ``None`` for PostgreSQL."""
    from dynavec_langgraph.savers import parse_database_url

    parsed = parse_database_url(db)
    if parsed is not None and parsed[0] == "postgres":
        return None
    if parsed is not None and parsed[0] == "sqlite":
        return parsed[1]
    if "://" in db:
        scheme = db.split("://", 1)[0]
        raise CliError(
            f"unknown database scheme {scheme!r} in --db {db!r}: use a SQLite file path, "
            "sqlite:///PATH or a postgresql:// URI"
        )
    return db


@overload
def open_saver(
    db: str, *, must_exist: bool, read_only: Literal[False] = False
) -> AbstractContextManager[BaseCheckpointSaver[Any]]: ...
@overload
def open_saver(
    db: str, *, must_exist: bool, read_only: Literal[True]
) -> AbstractContextManager[BaseCheckpointSaver[Any] | None]: ...
def open_saver(
    db: str, *, must_exist: bool, read_only: bool = False
) -> AbstractContextManager[BaseCheckpointSaver[Any] | None]:
    """The checkpointer of ``--db`` (a SQLite file or a PostgreSQL URI), closed on exit.

    With ``read_only`` nothing is created or written (no tables, no journal files): a
    database without checkpoint tables gives ``None`` (no threads there).

    Raises:
        CliError: an unknown scheme, a missing SQLite file (``must_exist``), or a database
            that cannot be opened.
    """
    path = _sqlite_path(db)
    if path is not None and must_exist and not Path(path).is_file():
        raise CliError(
            f"no SQLite database at {path!r}: check --db, or start a thread with "
            f"`{invocation()} demo --db {shlex.quote(db)}`"
        )
    if read_only:
        return _open_read_only(db, path)
    return _open_writable(db, path)


@contextmanager
def _open_read_only(db: str, path: str | None) -> Iterator[BaseCheckpointSaver[Any] | None]:
    from dynavec_langgraph._extras import missing_extra, missing_package
    from dynavec_langgraph._persistence.connections import PG_PACKAGES
    from dynavec_langgraph._persistence.serde import safe_serializer
    from dynavec_langgraph.savers import masked_url

    if path is not None:
        try:
            from langgraph.checkpoint.sqlite import SqliteSaver
        except ImportError:
            raise missing_extra(
                "--db (a SQLite file)", "langgraph-checkpoint-sqlite", "sqlite"
            ) from None

        uri = Path(path).resolve().as_uri() + "?mode=ro"
        try:
            conn = sqlite3.connect(uri, uri=True, check_same_thread=False)
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        except sqlite3.Error as error:
            raise CliError(f"cannot read SQLite file {path!r}: {error}") from None
        with closing(conn):
            yield SqliteSaver(conn, serde=safe_serializer()) if "checkpoints" in tables else None
        return
    try:
        import psycopg
        from langgraph.checkpoint.postgres import PostgresSaver
        from psycopg.rows import dict_row
    except ImportError as error:
        package = missing_package(error, "langgraph-checkpoint-postgres", *PG_PACKAGES)
        raise missing_extra("--db (a PostgreSQL URI)", package, "postgres") from None

    try:
        conn_pg = psycopg.connect(db, autocommit=True, row_factory=dict_row)
    except psycopg.Error as error:
        raise CliError(f"cannot connect to PostgreSQL at {masked_url(db)}: {error}") from None
    with conn_pg:
        row = conn_pg.execute("SELECT to_regclass('checkpoints') IS NOT NULL AS ok").fetchone()
        yield PostgresSaver(conn_pg, serde=safe_serializer()) if row and row["ok"] else None


@contextmanager
def _open_writable(db: str, path: str | None) -> Iterator[BaseCheckpointSaver[Any]]:
    from dynavec_langgraph.savers import ConnectionSaver, resolve_checkpointer, sqlite_url

    try:
        saver = resolve_checkpointer(db if path is None else sqlite_url(path))
    except CheckpointerConfigError as error:
        raise CliError(str(error)) from None
    if not isinstance(saver, ConnectionSaver):  # pragma: no cover - strings always open one
        raise CliError(f"cannot open --db {db!r}")
    with saver:
        yield saver
