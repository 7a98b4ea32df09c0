"""Checkpointers for the benchmark, and how many bytes each one stores.

``none``: no checkpointer. ``memory``: ``InMemorySaver``. ``sqlite``: ``SqliteSaver`` on a temp
file. ``postgres``: ``PostgresSaver`` (autocommit connection) on a database of a throwaway server.
"""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any, Final, Literal

import psycopg
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

SaverName = Literal["none", "memory", "sqlite", "postgres"]
SAVERS: Final[tuple[SaverName, ...]] = ("none", "memory", "sqlite", "postgres")
SQLITE_TABLES: Final = ("checkpoints", "writes")
POSTGRES_TABLES: Final = ("checkpoints", "checkpoint_blobs", "checkpoint_writes")


def sqlite_saver(path: Path) -> SqliteSaver:
    """A ``SqliteSaver`` on the file ``path`` (tables created)."""
    saver = SqliteSaver(sqlite3.connect(str(path), check_same_thread=False))
    saver.setup()
    return saver


def postgres_connection(uri: str) -> psycopg.Connection[Any]:
    """An autocommit connection as ``PostgresSaver`` needs it (a new process sees commits)."""
    return psycopg.connect(uri, autocommit=True, prepare_threshold=0, row_factory=dict_row)


@contextmanager
def open_saver(kind: SaverName, workdir: Path, pg_uri: str | None) -> Iterator[Any]:
    """Open the checkpointer ``kind`` (``None`` for ``"none"``); close it afterwards."""
    if kind == "none":
        yield None
    elif kind == "memory":
        yield InMemorySaver()
    elif kind == "sqlite":
        saver = sqlite_saver(workdir / f"{uuid.uuid4().hex}.db")
        try:
            yield saver
        finally:
            saver.conn.close()
    else:
        if pg_uri is None:
            raise ValueError("the postgres saver needs a database URI")
        with postgres_connection(pg_uri) as conn:
            pg = PostgresSaver(conn)
            pg.setup()
            yield pg


@asynccontextmanager
async def async_postgres_saver(uri: str, pool_size: int) -> AsyncIterator[AsyncPostgresSaver]:
    """``AsyncPostgresSaver`` on a connection pool of ``pool_size`` connections."""
    kwargs: dict[str, Any] = {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row}
    async with AsyncConnectionPool(
        uri, min_size=pool_size, max_size=pool_size, kwargs=kwargs, open=False
    ) as pool:
        saver = AsyncPostgresSaver(pool)  # type: ignore[arg-type]
        await saver.setup()
        yield saver


def forget(saver: Any) -> None:
    """Empty an ``InMemorySaver`` between timed runs (so no run pays for the ones before)."""
    if isinstance(saver, InMemorySaver):
        saver.storage.clear()
        saver.writes.clear()
        saver.blobs.clear()


def _payload_bytes(value: Any) -> int:
    if isinstance(value, bytes | bytearray | memoryview):
        return len(value)
    if isinstance(value, str):
        return 0  # keys, ids and type tags are not payload
    if isinstance(value, dict):
        return sum(_payload_bytes(v) for v in value.values())
    if isinstance(value, list | tuple):
        return sum(_payload_bytes(v) for v in value)
    return 0


def stored_bytes(kind: SaverName, saver: Any) -> int:
    """Bytes the checkpointer holds: serialized payloads (memory) or table sizes (databases)."""
    if kind == "memory":
        return sum(_payload_bytes(part) for part in (saver.storage, saver.writes, saver.blobs))
    if kind == "sqlite":
        marks = ",".join("?" for _ in SQLITE_TABLES)
        row = saver.conn.execute(
            "SELECT coalesce(sum(pgsize), 0) FROM dbstat WHERE name IN "
            f"(SELECT name FROM sqlite_master WHERE tbl_name IN ({marks}))",
            SQLITE_TABLES,
        ).fetchone()
        return int(row[0])
    if kind == "postgres":
        with saver.conn.cursor() as cur:
            for table in POSTGRES_TABLES:
                cur.execute(f"VACUUM FULL {table}")
            cur.execute(
                "SELECT sum(pg_total_relation_size(t::regclass)) AS size "
                "FROM unnest(%s::text[]) AS t",
                (list(POSTGRES_TABLES),),
            )
            row = cur.fetchone()
            return int(row["size"]) if row else 0
    raise ValueError(f"no storage to measure for {kind!r}")
