"""The PostgreSQL sessions a resume holds (docs/benchmarks.md, the async-resume row).

A resume lock taken inside another one on the same PostgreSQL saver (the claim of a resumed
call, ``dynavec_langgraph._exactly_once.claims``, inside a door's thread lock) takes its advisory
lock on the session that already holds one: a door's resume holds one pool connection for its locks,
not two, so 8 workers resuming at once do not open connections beyond the pool's.
"""

from __future__ import annotations

import asyncio
from typing import Any

import psycopg
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

from dynavec_langgraph import ConcurrentResumeError
from dynavec_langgraph._persistence.locks import aresume_lock, resume_lock

_ADVISORY = (
    "SELECT count(*) AS locks, count(DISTINCT pid) AS sessions FROM pg_locks "
    "WHERE locktype = 'advisory' AND granted"
)


def _advisory(uri: str) -> dict[str, Any]:
    with psycopg.connect(uri, autocommit=True, row_factory=dict_row) as conn:
        row = conn.execute(_ADVISORY).fetchone()
    assert row is not None
    return dict(row)


def test_a_nested_resume_lock_shares_the_session_of_the_enclosing_one(pg_uri: str) -> None:
    with psycopg.connect(pg_uri, autocommit=True, prepare_threshold=0) as conn:
        saver = PostgresSaver(conn)  # type: ignore[arg-type]
        with resume_lock(saver, "t"):
            assert _advisory(pg_uri) == {"locks": 1, "sessions": 1}
            with resume_lock(saver, "t.claim-1"):
                assert _advisory(pg_uri) == {"locks": 2, "sessions": 1}
                other = PostgresSaver(psycopg.connect(pg_uri, autocommit=True))
                try:  # another session is still refused either lock
                    for key in ("t", "t.claim-1"):
                        try:
                            with resume_lock(other, key):
                                raise AssertionError(f"{key}: taken twice")
                        except ConcurrentResumeError:
                            pass
                finally:
                    other.conn.close()
            assert _advisory(pg_uri) == {"locks": 1, "sessions": 1}  # the inner one released
            try:  # the same key inside: refused (by the in-process lock)
                with resume_lock(saver, "t"):
                    raise AssertionError("t: taken twice in one session")
            except ConcurrentResumeError:
                pass
        assert _advisory(pg_uri) == {"locks": 0, "sessions": 0}
        with resume_lock(saver, "t.claim-1"):  # alone: a session of its own, as before
            assert _advisory(pg_uri) == {"locks": 1, "sessions": 1}


async def test_a_nested_aresume_lock_takes_no_second_pool_connection(pg_uri: str) -> None:
    kwargs: dict[str, Any] = {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row}
    async with AsyncConnectionPool(
        pg_uri, min_size=4, max_size=4, kwargs=kwargs, open=False
    ) as pool:
        await pool.wait()  # all 4 connections open
        saver = AsyncPostgresSaver(pool)  # type: ignore[arg-type]
        async with aresume_lock(saver, "t"):
            async with aresume_lock(saver, "t.claim-1"):
                assert _advisory(pg_uri) == {"locks": 2, "sessions": 1}
                assert pool.get_stats()["pool_available"] == 3  # one lent, to the locks
            assert _advisory(pg_uri) == {"locks": 1, "sessions": 1}
        assert _advisory(pg_uri) == {"locks": 0, "sessions": 0}
        assert pool.get_stats()["pool_available"] == 4


async def test_a_task_that_outlives_the_lock_takes_a_connection_of_its_own(pg_uri: str) -> None:
    kwargs: dict[str, Any] = {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row}
    async with AsyncConnectionPool(
        pg_uri, min_size=4, max_size=4, kwargs=kwargs, open=False
    ) as pool:
        await pool.wait()
        saver = AsyncPostgresSaver(pool)  # type: ignore[arg-type]
        go = asyncio.Event()
        seen: list[int] = []

        async def later() -> None:  # its context is a copy of the lock holder's
            await go.wait()
            async with aresume_lock(saver, "t2"):
                seen.append(pool.get_stats()["pool_available"])
                assert _advisory(pg_uri) == {"locks": 1, "sessions": 1}

        async with aresume_lock(saver, "t"):
            task = asyncio.create_task(later())
        assert pool.get_stats()["pool_available"] == 4
        go.set()
        await task
        assert seen == [3]  # it took a connection of the pool, not the returned one
        assert _advisory(pg_uri) == {"locks": 0, "sessions": 0}
