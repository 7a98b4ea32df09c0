"""Many concurrent callers on one agent and one PostgreSQL connection pool never deadlock.

Each caller holds its thread's resume lock (a PostgreSQL advisory lock, held on a connection)
for the whole run, and its run needs a connection of the saver's pool for every checkpoint.
If the locks took every connection of the pool, the runs would wait for each other until the
pool's timeout (``StorageError ... PoolTimeout``). 32 callers, each on its own thread, on the
package's own pool (``checkpointer="postgresql://..."``, 8 connections) and on a user's pool of
4 connections; threads and asyncio tasks. Every tool runs once and every run completes.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from dynavec_langgraph import ReActAgent, tool
from dynavec_langgraph.testing import ScriptedChatModel

CALLERS = 32
RUNS: list[str] = []
RUNS_GUARD = threading.Lock()


@pytest.fixture(autouse=True)
def _runs() -> Iterator[None]:
    RUNS.clear()
    yield


@tool
def charge(customer: str) -> str:
    """Charge a customer (takes a while, holding the thread's lock)."""
    time.sleep(0.2)
    with RUNS_GUARD:
        RUNS.append(customer)
    return f"charged {customer}"


@tool
async def acharge(customer: str) -> str:
    """Async twin of charge."""
    await asyncio.sleep(0.2)
    RUNS.append(customer)
    return f"charged {customer}"


def _model(name: str) -> ScriptedChatModel:
    def policy(messages: list[Any]) -> Any:
        if messages[-1].type == "tool":
            return "Done."
        customer = str(messages[-1].content)
        return AIMessage(
            content="",
            tool_calls=[{"name": name, "args": {"customer": customer}, "id": f"c_{customer}"}],
        )

    return ScriptedChatModel(policy=policy)


def _check(results: list[Any]) -> None:
    assert [r.termination_reason for r in results] == ["completed"] * CALLERS
    assert sorted(RUNS) == sorted(f"customer-{i}" for i in range(CALLERS))


def _threads(agent: ReActAgent) -> None:
    def one(i: int) -> Any:
        return agent.run(f"customer-{i}", thread_id=f"t{i}")

    with ThreadPoolExecutor(CALLERS) as pool:
        results = list(pool.map(one, range(CALLERS)))
    _check(results)


async def _tasks(agent: ReActAgent) -> None:
    results = await asyncio.gather(
        *(agent.arun(f"customer-{i}", thread_id=f"t{i}") for i in range(CALLERS))
    )
    _check(list(results))


def test_32_threads_share_the_package_pool(pg_uri: str) -> None:
    with ReActAgent(_model("charge"), [charge], checkpointer=pg_uri) as agent:
        _threads(agent)


async def test_32_tasks_share_the_package_pool(pg_uri: str) -> None:
    with ReActAgent(_model("acharge"), [acharge], checkpointer=pg_uri) as agent:
        await _tasks(agent)


def test_32_threads_share_a_users_small_pool(pg_uri: str) -> None:
    kwargs = {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row}
    with ConnectionPool(pg_uri, min_size=1, max_size=4, kwargs=kwargs, timeout=10) as pool:
        saver = PostgresSaver(pool)  # type: ignore[arg-type]
        saver.setup()
        _threads(ReActAgent(_model("charge"), [charge], checkpointer=saver))


async def test_32_tasks_share_a_users_small_async_pool(pg_uri: str) -> None:
    kwargs = {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row}
    async with AsyncConnectionPool(
        pg_uri, min_size=1, max_size=4, kwargs=kwargs, timeout=10, open=False
    ) as pool:
        saver = AsyncPostgresSaver(pool)  # type: ignore[arg-type]
        await saver.setup()
        await _tasks(ReActAgent(_model("acharge"), [acharge], checkpointer=saver))
