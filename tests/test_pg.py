"""Self-tests for the throwaway PostgreSQL server in tests/pg.py."""

from __future__ import annotations

from urllib.parse import urlsplit

import psycopg
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.postgres import PostgresSaver

from tests.pg import PostgresServer

_seen: list[str] = []


def _dbname(uri: str) -> str:
    return urlsplit(uri).path.lstrip("/")


def test_uri_connects(pg_uri: str) -> None:
    with psycopg.connect(pg_uri) as conn:
        row = conn.execute("SELECT current_database()").fetchone()
    assert row is not None
    assert row[0] == _dbname(pg_uri)
    assert row[0].startswith("t_")
    _seen.append(row[0])


def test_each_test_gets_its_own_database(pg_uri: str) -> None:
    with psycopg.connect(pg_uri) as conn:
        conn.execute("CREATE TABLE only_here (x int)")
    _seen.append(_dbname(pg_uri))
    assert len(set(_seen)) == len(_seen)


def test_postgres_saver_round_trip(pg_uri: str) -> None:
    with PostgresSaver.from_conn_string(pg_uri) as saver:
        saver.setup()
        config: RunnableConfig = {"configurable": {"thread_id": "t1", "checkpoint_ns": ""}}
        checkpoint = empty_checkpoint()
        saved = saver.put(config, checkpoint, {"source": "input", "step": -1}, {})
        got = saver.get_tuple(saved)
    assert got is not None
    assert got.checkpoint["id"] == checkpoint["id"]
    assert got.metadata["step"] == -1


def test_drop_database_removes_it(postgres_server: PostgresServer) -> None:
    uri = postgres_server.create_database()
    held = psycopg.connect(uri)  # an open connection must not block the drop
    try:
        held.execute("SELECT 1")
        postgres_server.drop_database(uri)
    finally:
        held.close()
    with psycopg.connect(postgres_server.uri) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_database WHERE datname = %s", (_dbname(uri),)
        ).fetchone()
    assert row == (0,)
