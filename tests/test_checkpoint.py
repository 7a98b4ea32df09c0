"""dynavec checkpoints: records, MemoryCheckpointer, connection strings, adapter, time travel."""

from __future__ import annotations

import json
import re
import sqlite3
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from dynavec_langgraph import (
    AgentResult,
    AgentTool,
    Checkpoint,
    CheckpointerConfigError,
    CheckpointNotFoundError,
    MemoryCheckpointer,
    ReActAgent,
    interrupt,
    tool,
)
from dynavec_langgraph._persistence.adapter import DynavecCheckpointSaver
from dynavec_langgraph.agents import DEFAULT_REACT_SYSTEM_PROMPT
from dynavec_langgraph.savers import ConnectionSaver, resolve_checkpointer
from dynavec_langgraph.testing import ScriptedChatModel

BATCH = [
    {"name": "lookup", "args": {"q": "rent"}},
    {"name": "transfer", "args": {"amount": 120}},
    {"name": "lookup", "args": {"q": "receipt"}},
]


def _tools(ran: list[tuple[str, Any]]) -> list[AgentTool]:
    @tool()
    def lookup(q: str) -> str:
        ran.append(("lookup", q))
        return f"found {q}"

    @tool()
    def transfer(amount: int) -> str:
        decision = interrupt("approve_transfer", {"amount": amount})
        ran.append(("transfer", decision))
        return f"Transferred {amount}." if decision == "approved" else "Cancelled."

    return [lookup, transfer]


def _valid(messages: list[dict[str, Any]]) -> bool:
    """Each assistant message with calls is followed by exactly one answer per call id."""
    for i, m in enumerate(messages):
        ids = [c["id"] for c in m["tool_calls"]]
        if ids:
            answers = [x["tool_call_id"] for x in messages[i + 1 : i + 1 + len(ids)]]
            if sorted(answers) != sorted(ids):
                return False
    return True


# --- records --------------------------------------------------------------------------


def test_checkpoint_defaults_and_dict_round_trip() -> None:
    before = datetime.now(UTC).replace(microsecond=0)
    cp = Checkpoint("t1", node_id="init", state={"goal": "hi"}, metadata={"k": 1})
    assert re.fullmatch(r"cp_\d{14}_[0-9a-f]{8}", cp.checkpoint_id)
    assert datetime.strptime(cp.checkpoint_id[3:17], "%Y%m%d%H%M%S").replace(tzinfo=UTC) >= before
    stamp = datetime.fromisoformat(cp.timestamp)
    assert stamp.utcoffset() is not None and stamp.utcoffset() == UTC.utcoffset(None)
    assert (cp.parent_checkpoint_id, cp.step) == (None, 0)
    assert Checkpoint("t1").checkpoint_id != Checkpoint("t1").checkpoint_id
    data = json.loads(json.dumps(cp.to_dict()))
    assert Checkpoint.from_dict(data) == cp
    assert Checkpoint.from_dict({"thread_id": "t2"}).state == {}


def test_memory_checkpointer_put_get_list_clear() -> None:
    store = MemoryCheckpointer()
    assert store.get("t1") is None and store.list("t1") == []
    first = store.put("t1", {"goal": "a"}, node_id="init")
    second = store.put("t1", {"goal": "a"}, node_id="step_1", metadata={"x": 1})
    third = store.put("t1", {}, node_id="step_5", step=5, parent_checkpoint_id="other")
    store.put("t2", {}, node_id="init")
    assert (first.step, first.parent_checkpoint_id) == (0, None)
    assert (second.step, second.parent_checkpoint_id, second.metadata) == (
        1,
        first.checkpoint_id,
        {"x": 1},
    )
    assert (third.step, third.parent_checkpoint_id) == (5, "other")
    assert store.get("t1") == third
    assert store.get("t1", first.checkpoint_id) == first
    assert store.get("t1", "missing") is None
    assert [c.node_id for c in store.list("t1")] == ["init", "step_1", "step_5"]
    assert [c.node_id for c in store.list("t1", limit=2)] == ["step_1", "step_5"]
    assert store.list("t1", limit=0) == []
    store.clear("t1")
    assert store.list("t1") == [] and store.get("t2") is not None
    store.clear()
    assert store.get("t2") is None


def test_memory_checkpointer_is_thread_safe() -> None:
    store = MemoryCheckpointer()
    barrier = threading.Barrier(8)

    def writer(n: int) -> None:
        barrier.wait()
        for i in range(200):
            store.save(Checkpoint("shared", checkpoint_id=f"w{n}-{i}", step=i))
            store.put(f"own-{n}", {"i": i})
            assert store.get("shared") is not None
            store.list("shared", limit=5)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    shared = store.list("shared")
    assert len(shared) == 1600 and len({c.checkpoint_id for c in shared}) == 1600
    for n in range(8):  # each thread's own puts chained one after the other
        own = store.list(f"own-{n}")
        assert [c.step for c in own] == list(range(200))
        assert [c.parent_checkpoint_id for c in own[1:]] == [c.checkpoint_id for c in own[:-1]]


# --- resolve_checkpointer ---------------------------------------------------------------


def test_resolve_passes_savers_through_and_adapts_dynavec_checkpointers() -> None:
    saver = InMemorySaver()
    assert resolve_checkpointer(None) is None
    assert resolve_checkpointer(saver) is saver
    store = MemoryCheckpointer()
    adapted = resolve_checkpointer(store)
    assert isinstance(adapted, DynavecCheckpointSaver) and adapted.checkpointer is store


@pytest.mark.parametrize("bad", ["redis://localhost/0", "sqlite://relative.db", "mem"])
def test_unknown_scheme_is_a_config_error_naming_the_accepted_ones(bad: str) -> None:
    with pytest.raises(CheckpointerConfigError) as err:
        ReActAgent(ScriptedChatModel(turns=["x"]), checkpointer=bad)
    assert "sqlite:///path/to.db" in str(err.value) and "postgresql://" in str(err.value)
    assert isinstance(err.value, ValueError)


def test_an_object_that_is_no_checkpointer_is_a_config_error() -> None:
    with pytest.raises(CheckpointerConfigError, match="is not a checkpointer"):
        resolve_checkpointer(object())  # type: ignore[arg-type]


def test_postgres_server_down_is_a_config_error_without_the_password() -> None:
    with pytest.raises(CheckpointerConfigError, match="cannot connect to PostgreSQL") as err:
        resolve_checkpointer("postgresql://me:s3cret@127.0.0.1:9/none?connect_timeout=1")
    assert "s3cret" not in str(err.value)


# --- pause in one agent, resume in a fresh one -------------------------------------------


def _pause_and_resume(make_checkpointer: Callable[[], Any]) -> list[tuple[str, Any]]:
    ran: list[tuple[str, Any]] = []
    first = ReActAgent(
        ScriptedChatModel(turns=[BATCH]), _tools(ran), checkpointer=make_checkpointer()
    )
    paused = first.run("pay rent", thread_id="t1")
    assert paused.termination_reason == "interrupted"
    assert paused.interrupt_payload is not None
    assert paused.interrupt_payload["payload"] == {"amount": 120}
    first.close()
    fresh_model = ScriptedChatModel(turns=["Rent paid."])
    with ReActAgent(fresh_model, _tools(ran), checkpointer=make_checkpointer()) as second:
        final = second.resume(thread_id="t1", human_decision="approved")
        assert (final.output, final.finished, final.tool_calls_count) == ("Rent paid.", True, 3)
        assert [s.observations for s in final.steps] == [
            ["found rent", "Transferred 120.", "found receipt"],
            [],
        ]
        assert len(fresh_model.calls) == 1
    return ran


async def _apause_and_resume(make_checkpointer: Callable[[], Any]) -> list[tuple[str, Any]]:
    ran: list[tuple[str, Any]] = []
    first = ReActAgent(
        ScriptedChatModel(turns=[BATCH]), _tools(ran), checkpointer=make_checkpointer()
    )
    paused = await first.arun("pay rent", thread_id="t1")
    assert paused.termination_reason == "interrupted"
    first.close()
    with ReActAgent(
        ScriptedChatModel(turns=["Rent paid."]), _tools(ran), checkpointer=make_checkpointer()
    ) as second:
        final = await second.aresume(thread_id="t1", human_decision="approved")
        assert (final.output, final.termination_reason) == ("Rent paid.", "completed")
        latest = await second.aget_checkpoint("t1")
        assert latest is not None and latest.state["finished"] is True
        assert [c.node_id for c in await second.alist_checkpoints("t1")][-1] == "step_2"
    return ran


EXPECTED_RUNS = [("lookup", "rent"), ("transfer", "approved"), ("lookup", "receipt")]


def test_sqlite_file_string_pause_then_resume_in_a_fresh_agent(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/threads.db"
    assert _pause_and_resume(lambda: url) == EXPECTED_RUNS
    assert (tmp_path / "threads.db").stat().st_size > 0


async def test_sqlite_file_string_async_pause_then_resume(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/threads.db"
    assert await _apause_and_resume(lambda: url) == EXPECTED_RUNS


def test_sqlite_agent_serves_sync_and_async_calls_on_one_connection(tmp_path: Path) -> None:
    import asyncio

    ran: list[tuple[str, Any]] = []
    model = ScriptedChatModel(turns=[BATCH, "Rent paid."])
    with ReActAgent(model, _tools(ran), checkpointer=f"sqlite:///{tmp_path}/t.db") as agent:
        assert agent.run("pay rent", thread_id="t1").termination_reason == "interrupted"
        final = asyncio.run(agent.aresume(thread_id="t1", human_decision="no"))
    assert final.steps[0].observations[1] == "Cancelled."
    assert ran == [("lookup", "rent"), ("transfer", "no"), ("lookup", "receipt")]


def test_sqlite_memory_string_and_close(tmp_path: Path) -> None:
    agent = ReActAgent(ScriptedChatModel(turns=["hi"]), checkpointer="sqlite:///:memory:")
    assert isinstance(agent.checkpointer, ConnectionSaver)
    assert agent.run("hello", thread_id="t").output == "hi"
    agent.close()
    agent.close()  # idempotent
    with pytest.raises(sqlite3.ProgrammingError, match="closed"):
        agent.run("again", thread_id="t")


def test_postgres_string_pause_then_resume_in_a_fresh_agent(pg_uri: str) -> None:
    assert _pause_and_resume(lambda: pg_uri) == EXPECTED_RUNS


async def test_postgres_string_async_pause_then_resume(pg_uri: str) -> None:
    url = pg_uri.replace("postgresql://", "postgres://", 1)
    assert await _apause_and_resume(lambda: url) == EXPECTED_RUNS


def test_memory_checkpointer_pause_then_resume_in_a_fresh_agent() -> None:
    store = MemoryCheckpointer()
    assert _pause_and_resume(lambda: store) == EXPECTED_RUNS


async def test_memory_checkpointer_async_pause_then_resume() -> None:
    store = MemoryCheckpointer()
    assert await _apause_and_resume(lambda: store) == EXPECTED_RUNS


# --- the records the adapter writes -----------------------------------------------------


def test_adapter_records_keep_dynavec_layout_through_pause_and_resume() -> None:
    store = MemoryCheckpointer()
    ran: list[tuple[str, Any]] = []
    agent = ReActAgent(ScriptedChatModel(turns=[BATCH]), _tools(ran), checkpointer=store)
    agent.run("pay rent", thread_id="t1")

    latest = store.get("t1")  # what a dynavec-era reader does
    assert latest is not None and latest.node_id == "interrupted" and latest.step == 1
    system, *conversation = latest.state["messages"]  # the system prompt first, as dynavec's
    assert (system["role"], system["content"]) == ("system", DEFAULT_REACT_SYSTEM_PROMPT)
    call_id = conversation[1]["tool_calls"][1]["id"]
    assert latest.state["interrupted"] == {
        "node_id": "approve_transfer",
        "payload": {"amount": 120},
        "tool_call_id": call_id,
        "step": 1,
        "thread_id": "t1",
    }
    assert latest.state["finished"] is False and "output" not in latest.state
    assert latest.state["goal"] == "pay rent"
    assert conversation[0] == {
        "role": "user",
        "content": "pay rent",
        "tool_call_id": None,
        "tool_calls": [],
    }
    assert conversation[1]["tool_calls"][0] == {
        "id": conversation[1]["tool_calls"][0]["id"],
        "name": "lookup",
        "arguments": '{"q": "rent"}',
    }
    assert latest.state["steps"] == [
        {
            "step_number": 1,
            "thought": None,
            "tool_calls": conversation[1]["tool_calls"],
            "observations": ["found rent"],
        }
    ]
    assert latest.state["total_tool_calls"] == 3

    ReActAgent(ScriptedChatModel(turns=["Rent paid."]), _tools(ran), checkpointer=store).resume(
        thread_id="t1", human_decision="approved"
    )
    records = store.list("t1")
    for r in records:
        json.dumps(r.to_dict())  # plain JSON, as dynavec stores expect
        assert {"goal", "messages", "steps", "total_tool_calls", "finished"} <= set(r.state)
        assert r.node_id == "init" or re.fullmatch(r"step_\d+|interrupted", r.node_id or "")
    assert records[0].node_id == "init" and records[-1].node_id == "step_2"
    assert [r.node_id for r in records].count("interrupted") == 1
    done = records[-1]
    assert (done.step, done.state["finished"], done.state["output"]) == (2, True, "Rent paid.")
    assert [s["observations"] for s in done.state["steps"]] == [
        ["found rent", "Transferred 120.", "found receipt"],
        [],
    ]
    assert done.state["messages"][0] == system
    assert _valid(done.state["messages"]) and len(done.state["messages"]) == 7
    assert [r.parent_checkpoint_id for r in records[1:]] == [r.checkpoint_id for r in records[:-1]]
    assert ran == EXPECTED_RUNS


def test_adapter_records_max_steps_reached() -> None:
    store = MemoryCheckpointer()

    @tool()
    def ping() -> str:
        return "pong"

    model = ScriptedChatModel(policy=lambda _m: [{"name": "ping", "args": {}}])
    result = ReActAgent(model, [ping], max_steps=2, checkpointer=store).run("go", thread_id="t")
    assert result.termination_reason == "max_steps_reached"
    last = store.get("t")
    assert last is not None
    assert (last.node_id, last.step, last.state["finished"]) == ("max_steps_reached", 2, False)
    assert last.state["output"] == "pong" and last.state["total_tool_calls"] == 2


# --- get / list / resume_from on every kind of saver ------------------------------------


SAVERS: dict[str, Callable[[Path], Any]] = {
    "InMemorySaver": lambda _p: InMemorySaver(),
    "sqlite": lambda p: f"sqlite:///{p}/t.db",
    "MemoryCheckpointer": lambda _p: MemoryCheckpointer(),
}


@pytest.mark.parametrize("kind", list(SAVERS))
def test_get_list_and_resume_from(kind: str, tmp_path: Path) -> None:
    ran: list[tuple[str, Any]] = []
    model = ScriptedChatModel(
        turns=[[{"name": "lookup", "args": {"q": "a"}}], "done A", [BATCH[2]], "done B"]
    )
    with ReActAgent(model, _tools(ran), checkpointer=SAVERS[kind](tmp_path)) as agent:
        agent.run("first", thread_id="t")
        listed = agent.list_checkpoints("t")
        assert [(c.node_id, c.step, c.state["finished"]) for c in listed] == [
            ("init", 0, False),
            ("step_1", 1, False),
            ("step_2", 2, True),
        ]
        assert all(c.thread_id == "t" for c in listed)
        assert listed[0].state["messages"][0]["role"] == "system"  # the agent knows its prompt
        assert [c.checkpoint_id for c in agent.list_checkpoints("t", limit=2)] == [
            c.checkpoint_id for c in listed[1:]
        ]
        assert agent.get_checkpoint("t") == listed[-1]
        assert agent.get_checkpoint("t", listed[0].checkpoint_id) == listed[0]
        assert agent.get_checkpoint("t", "no-such-id") is None
        assert agent.get_checkpoint("unknown") is None and agent.list_checkpoints("unknown") == []

        # time travel: continue from the end of step 1, before answer A was given
        again = agent.run("second", thread_id="t", resume_from=listed[1].checkpoint_id)
        assert again.output == "done B"
        seen = [(m.type, m.content) for m in model.calls[-2]]
        assert ("ai", "done A") not in seen and seen[-1] == ("human", "second")
        assert ran == [("lookup", "a"), ("lookup", "receipt")]
        latest = agent.get_checkpoint("t")
        assert latest is not None and latest.state["goal"] == "second"

        with pytest.raises(CheckpointNotFoundError):
            agent.run("third", thread_id="t", resume_from="no-such-id")
        assert len(model.calls) == 4  # the unknown id called no model


# --- the same on PostgreSQL, and the async twins on every saver ---------------------------


async def _time_travel(agent: ReActAgent, model: ScriptedChatModel, use_async: bool) -> None:
    """``test_get_list_and_resume_from``'s checks through the sync or the async methods."""

    async def get(thread_id: str, checkpoint_id: str | None = None) -> Checkpoint | None:
        if use_async:
            return await agent.aget_checkpoint(thread_id, checkpoint_id)
        return agent.get_checkpoint(thread_id, checkpoint_id)

    async def listed(thread_id: str, limit: int | None = None) -> list[Checkpoint]:
        if use_async:
            return await agent.alist_checkpoints(thread_id, limit)
        return agent.list_checkpoints(thread_id, limit)

    async def run(goal: str, resume_from: str | None = None) -> AgentResult:
        if use_async:
            return await agent.arun(goal, thread_id="t", resume_from=resume_from)
        return agent.run(goal, thread_id="t", resume_from=resume_from)

    assert (await run("first")).output == "done A"
    records = await listed("t")
    assert [(c.node_id, c.step, c.state["finished"]) for c in records] == [
        ("init", 0, False),
        ("step_1", 1, False),
        ("step_2", 2, True),
    ]
    assert all(c.thread_id == "t" for c in records)
    assert records[0].state["messages"][0]["role"] == "system"
    assert records[1].state["steps"][0]["observations"] == ["found a"]
    assert records[2].state["output"] == "done A"
    assert [c.checkpoint_id for c in await listed("t", 2)] == [c.checkpoint_id for c in records[1:]]
    assert await listed("t", 0) == []
    assert await get("t") == records[-1]
    assert await get("t", records[0].checkpoint_id) == records[0]
    assert await get("t", "no-such-id") is None
    assert await get("unknown") is None and await listed("unknown") == []

    # time travel: continue from the end of step 1, before answer A was given
    again = await run("second", resume_from=records[1].checkpoint_id)
    assert (again.output, again.finished) == ("done B", True)
    seen = [(m.type, m.content) for m in model.calls[-2]]
    assert ("ai", "done A") not in seen and seen[-1] == ("human", "second")
    latest = await get("t")
    assert latest is not None and latest.state["goal"] == "second"
    assert latest.state["output"] == "done B"
    history = await listed("t")
    assert history[:3] == records  # the first branch is still there, unchanged
    assert [(c.node_id, c.state["goal"]) for c in history[3:]] == [
        ("init", "second"),
        ("step_1", "second"),
        ("step_2", "second"),
    ]
    assert history[4].state["steps"][0]["observations"] == ["found receipt"]

    with pytest.raises(CheckpointNotFoundError):
        await run("third", resume_from="no-such-id")
    assert len(model.calls) == 4  # the unknown id called no model


def _time_travel_agent(
    checkpointer: Any, ran: list[tuple[str, Any]]
) -> tuple[ReActAgent, ScriptedChatModel]:
    model = ScriptedChatModel(
        turns=[[{"name": "lookup", "args": {"q": "a"}}], "done A", [BATCH[2]], "done B"]
    )
    return ReActAgent(model, _tools(ran), checkpointer=checkpointer), model


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
async def test_postgres_get_list_and_resume_from(pg_uri: str, use_async: bool) -> None:
    ran: list[tuple[str, Any]] = []
    agent, model = _time_travel_agent(pg_uri, ran)
    try:
        assert isinstance(agent.checkpointer, ConnectionSaver)
        await _time_travel(agent, model, use_async)
    finally:
        agent.close()
    assert ran == [("lookup", "a"), ("lookup", "receipt")]
    # a fresh agent on the same database reads the same records
    with ReActAgent(ScriptedChatModel(turns=[]), _tools(ran), checkpointer=pg_uri) as fresh:
        listed = fresh.list_checkpoints("t")
        assert [(c.node_id, c.state["goal"]) for c in listed] == [
            ("init", "first"),
            ("step_1", "first"),
            ("step_2", "first"),
            ("init", "second"),
            ("step_1", "second"),
            ("step_2", "second"),
        ]
        assert fresh.get_checkpoint("t") == listed[-1]
        assert listed[-1].state["output"] == "done B"
        assert listed[2].state["output"] == "done A"


@pytest.mark.parametrize("kind", list(SAVERS))
async def test_async_get_list_and_resume_from(kind: str, tmp_path: Path) -> None:
    ran: list[tuple[str, Any]] = []
    agent, model = _time_travel_agent(SAVERS[kind](tmp_path), ran)
    with agent:
        await _time_travel(agent, model, use_async=True)
        # the async twins return exactly what the sync methods return
        assert await agent.alist_checkpoints("t") == agent.list_checkpoints("t")
        assert await agent.aget_checkpoint("t") == agent.get_checkpoint("t")
    assert ran == [("lookup", "a"), ("lookup", "receipt")]


def test_processes_opening_a_new_postgres_database_at_once_all_set_it_up(pg_uri: str) -> None:
    """Two workers (or servers) starting at once on a new database: LangGraph's ``setup()``
    raced itself (a duplicate key in its migrations table); the first sets up, the rest wait."""
    start = threading.Barrier(4)
    errors: list[BaseException] = []

    def open_one() -> None:
        start.wait()
        try:
            saver = resolve_checkpointer(pg_uri)
            assert isinstance(saver, ConnectionSaver)
            saver.close()
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=open_one) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == []
