"""Two resumes of one paused thread at once: exactly one decision is applied, the approved tool
runs once, the other caller gets ``ConcurrentResumeError``. Two processes, two threads, two
asyncio tasks; SQLite files and PostgreSQL.

The winner's ``transfer`` blocks (on a file or an event) until the test releases it, and the
test releases it only after the loser has finished, so the two really overlap; without the lock
both would enter ``transfer`` and the loser would never finish (the test fails on a timeout).
"""

from __future__ import annotations

import asyncio
import json
import signal
import threading
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, ExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from dynavec_langgraph import ConcurrentResumeError, ReActAgent
from dynavec_langgraph.records import AgentResult
from tests.children.scenario import (
    PAID,
    TIMEOUT,
    Scenario,
    conversation,
    conversation_problems,
    make_agent,
    open_saver,
    race_resumes,
    start_child,
    wait_for,
)
from tests.children.scenario import (
    thread_config as _cfg,
)

DECISIONS = {"a": "approved", "b": "rejected"}


def _pause(db: str, scenario: Scenario, thread_id: str) -> None:
    with open_saver(db) as saver:
        paused = make_agent(scenario, saver).run("pay the rent", thread_id=thread_id)
    assert paused.termination_reason == "interrupted"


def _effects_of(winner_decision: str) -> list[str]:
    d = json.dumps(winner_decision)
    return ["lookup rent", f"transfer start {d}", f"transfer done {d}"]


def _check_thread(db: str, scenario: Scenario, thread_id: str, output: str) -> None:
    with open_saver(db) as saver:
        values = make_agent(scenario, saver).graph.get_state(_cfg(thread_id)).values
    messages = conversation(values["messages"])
    assert [m["type"] for m in messages] == ["human", "ai", "tool", "tool", "ai"]
    assert messages[-1]["content"] == output
    assert conversation_problems(messages) == []


def test_two_processes_resume_at_once(db: str, tmp_path: Path) -> None:
    scenario = Scenario(tmp_path / "effects")
    _pause(db, scenario, "t")
    race = race_resumes(db, scenario, "t", DECISIONS)
    winner, won, lost = race.winner, race.won, race.lost

    assert lost["ok"] is False
    assert lost["error"] == "ConcurrentResumeError"
    assert "another caller is running or resuming thread 't'" in lost["message"]
    assert not race.loser_reached_the_tool
    assert won["ok"] is True
    assert won["termination_reason"] == "completed"
    output = (
        PAID
        if DECISIONS[winner] == "approved"
        else "Finished: rent: balance 500 | Not sent: rejected"
    )
    assert won["output"] == output
    assert scenario.lines() == _effects_of(DECISIONS[winner])
    _check_thread(db, scenario, "t", output)


class _Hold:
    """``on_transfer`` for threads and tasks: record who entered, block until released."""

    def __init__(self) -> None:
        self.entered: list[Any] = []
        self.started = threading.Event()
        self.release = threading.Event()

    def __call__(self, decision: Any) -> None:
        self.entered.append(decision)
        self.started.set()
        assert self.release.wait(TIMEOUT), "the test never released the winner"


@pytest.mark.parametrize("sharing", ["one agent", "two agents", "two connection strings"])
def test_two_threads_resume_at_once(db: str, tmp_path: Path, sharing: str) -> None:
    """One agent used by two threads (the in-process lock), or two agents with their own saver
    on the same database (the file lock / advisory lock, as between processes), or two agents
    given the same ``checkpointer=`` string (the package's saver; a pool for PostgreSQL)."""
    hold = _Hold()
    scenario = Scenario(tmp_path / "effects", on_transfer=hold)
    _pause(db, scenario, "t")
    results: dict[str, AgentResult | BaseException] = {}
    barrier = threading.Barrier(2)

    with ExitStack() as stack:
        if sharing == "two connection strings":
            url = db if db.startswith("postgresql://") else f"sqlite:///{db}"
            agents = [make_agent(scenario, url) for _ in range(2)]
            for agent in agents:
                stack.callback(agent.close)
        else:
            savers = [stack.enter_context(open_saver(db))]
            if sharing == "two agents":
                savers.append(stack.enter_context(open_saver(db)))
            agents = [make_agent(scenario, saver) for saver in savers]

        def resume(label: str, agent: ReActAgent) -> None:
            barrier.wait(TIMEOUT)
            try:
                results[label] = agent.resume(thread_id="t", human_decision=DECISIONS[label])
            except BaseException as error:
                results[label] = error

        threads = {
            label: threading.Thread(target=resume, args=(label, agents[i % len(agents)]))
            for i, label in enumerate(DECISIONS)
        }
        for t in threads.values():
            t.start()
        try:
            assert hold.started.wait(TIMEOUT)
            winner = next(k for k, v in DECISIONS.items() if v == hold.entered[0])
            loser = "b" if winner == "a" else "a"
            threads[loser].join(TIMEOUT)
            assert not threads[loser].is_alive()
        finally:
            hold.release.set()
            for t in threads.values():
                t.join(TIMEOUT)

    assert isinstance(results[loser], ConcurrentResumeError), results[loser]
    assert hold.entered == [DECISIONS[winner]]
    won = results[winner]
    assert isinstance(won, AgentResult), won
    assert won.termination_reason == "completed"
    assert scenario.lines() == _effects_of(DECISIONS[winner])


@asynccontextmanager
async def _async_saver(db: str) -> AsyncIterator[BaseCheckpointSaver[Any]]:
    if db.startswith("postgresql://"):
        async with AsyncPostgresSaver.from_conn_string(db) as pg:
            await pg.setup()
            yield pg
    else:
        async with AsyncSqliteSaver.from_conn_string(db) as lite:
            yield lite


@pytest.mark.parametrize("sharing", ["one agent", "two agents"])
async def test_two_tasks_aresume_at_once(db: str, tmp_path: Path, sharing: str) -> None:
    hold = _Hold()
    scenario = Scenario(tmp_path / "effects", on_transfer=hold)
    async with AsyncExitStack() as stack:
        savers = [await stack.enter_async_context(_async_saver(db))]
        if sharing == "two agents":
            savers.append(await stack.enter_async_context(_async_saver(db)))
        agents = [make_agent(scenario, saver) for saver in savers]
        paused = await agents[0].arun("pay the rent", thread_id="t")
        assert paused.termination_reason == "interrupted"

        tasks = {
            label: asyncio.create_task(
                agents[i % len(agents)].aresume(thread_id="t", human_decision=DECISIONS[label])
            )
            for i, label in enumerate(DECISIONS)
        }
        try:
            assert await asyncio.to_thread(hold.started.wait, TIMEOUT)
            winner = next(k for k, v in DECISIONS.items() if v == hold.entered[0])
            loser = "b" if winner == "a" else "a"
            with pytest.raises(
                ConcurrentResumeError, match="another caller is running or resuming"
            ):
                await asyncio.wait_for(tasks[loser], TIMEOUT)
        finally:
            hold.release.set()
        won = await asyncio.wait_for(tasks[winner], TIMEOUT)

    assert won.termination_reason == "completed"
    assert hold.entered == [DECISIONS[winner]]
    assert scenario.lines() == _effects_of(DECISIONS[winner])


def test_a_crashed_resume_leaves_the_thread_resumable(db: str, tmp_path: Path) -> None:
    """The lock dies with its holder: a resume killed while it holds it blocks nobody."""
    scenario = Scenario(tmp_path / "effects")
    _pause(db, scenario, "t")
    gate = tmp_path / "gate"
    gate.mkdir()
    base = ("--db", db, "--effects", str(scenario.effects), "--gate", str(gate), "--label", "a")
    proc = start_child(*base, "resume", "t", json.dumps("approved"))
    try:
        wait_for(gate / "ready-a", proc)
        (gate / "go").touch()
        wait_for(gate / "started-a", proc)  # inside transfer, holding the lock
    finally:
        proc.kill()
        proc.communicate(timeout=TIMEOUT)
    assert proc.returncode == -signal.SIGKILL

    with open_saver(db) as saver:
        done = make_agent(scenario, saver).resume(thread_id="t", human_decision="approved")
    assert done.output == PAID
    assert scenario.lines() == [
        "lookup rent",
        'transfer start "approved"',  # the killed resume
        'transfer start "approved"',
        'transfer done "approved"',
    ]
    _check_thread(db, scenario, "t", PAID)


def test_sqlite_lock_files_do_not_pile_up(tmp_path: Path) -> None:
    """Each holder removes its lock file (and the folder once empty) before releasing it;
    a second caller during the hold is still refused."""
    from dynavec_langgraph._persistence.locks import LOCK_DIR_SUFFIX, resume_lock

    db = tmp_path / "agent.db"
    scenario = Scenario(tmp_path / "effects")
    for n in range(5):
        _pause(str(db), scenario, f"t{n}")
    with open_saver(str(db)) as saver:
        folder = Path(str(db) + LOCK_DIR_SUFFIX)
        with resume_lock(saver, "t0"):
            assert len(list(folder.iterdir())) == 1
            with (
                open_saver(str(db)) as other,
                pytest.raises(ConcurrentResumeError),
                resume_lock(other, "t0"),
            ):
                pass
            with open_saver(str(db)) as other, resume_lock(other, "t1"):
                assert len(list(folder.iterdir())) == 2
        assert not folder.exists()
        for n in range(5):
            make_agent(scenario, saver).resume(thread_id=f"t{n}", human_decision="approved")
    assert not folder.exists()
    assert scenario.lines().count('transfer done "approved"') == 5
