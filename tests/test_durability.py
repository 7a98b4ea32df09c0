"""What a paused approval survives: a new process, a crash mid-batch, bad input, a database
that goes down. Real processes, a real SQLite file, a real PostgreSQL server; the tools append
to an effects file so every run of every tool, in any process, is counted."""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path
from typing import Any

import psycopg
import pytest

from dynavec_langgraph import (
    CheckpointNotFoundError,
    InvalidDecisionError,
    NothingToResumeError,
    StorageError,
)
from tests.children.scenario import (
    PAID,
    ROOT,
    TIMEOUT,
    Scenario,
    conversation,
    conversation_problems,
    make_agent,
    open_saver,
    run_child,
    start_child,
    wait_for,
)
from tests.children.scenario import (
    thread_config as _cfg,
)
from tests.children.warm import run as warm_run
from tests.pg import PostgresServer
from tests.review import same_ask_again


def _base(db: str, effects: Path) -> tuple[str, ...]:
    return ("--db", db, "--effects", str(effects))


def test_pause_in_one_process_resume_in_a_new_one(db: str, tmp_path: Path) -> None:
    effects = tmp_path / "effects"
    paused = run_child(*_base(db, effects), "run", "t1", "pay the rent")
    assert paused["ok"], paused
    assert paused["termination_reason"] == "interrupted"
    assert paused["payload"] == {"amount": 100}
    assert effects.read_text().splitlines() == ["lookup rent"]

    done = run_child(*_base(db, effects), "resume", "t1", json.dumps("approved"))
    assert done["ok"], done
    assert done["termination_reason"] == "completed"
    assert done["output"] == PAID
    # lookup finished before the pause and did not run again; transfer ran once, approved
    assert effects.read_text().splitlines() == [
        "lookup rent",
        'transfer start "approved"',
        'transfer done "approved"',
    ]
    assert [m["type"] for m in done["messages"]] == ["human", "ai", "tool", "tool", "ai"]
    assert conversation_problems(done["messages"]) == []

    with open_saver(db) as saver:  # and this process sees the finished thread
        agent = make_agent(Scenario(effects), saver)
        assert agent.graph.get_state(_cfg("t1")).values["messages"][-1].content == PAID
        with pytest.raises(NothingToResumeError, match="not paused"):
            agent.resume(thread_id="t1", human_decision="approved")
    assert len(effects.read_text().splitlines()) == 3


def test_crash_mid_batch_is_finished_by_a_new_process(db: str, tmp_path: Path) -> None:
    effects = tmp_path / "effects"
    scenario = Scenario(effects)
    child = start_child(*_base(db, effects), "--block-step-two", "run", "t2", "do the steps")
    try:
        wait_for(scenario.step_two_marker, child)  # step_one done, step_two running
    finally:
        child.kill()  # SIGKILL: no cleanup, no last write
        child.communicate(timeout=30)
    assert child.returncode == -signal.SIGKILL
    assert scenario.lines() == ["start step_one", "done step_one", "start step_two"]

    done = run_child(*_base(db, effects), "continue", "t2")
    assert done["ok"], done
    assert done["termination_reason"] == "completed"
    assert done["output"] == "Finished: step_one ok | step_two ok | step_three ok"
    lines = scenario.lines()
    assert lines == [
        "start step_one",
        "done step_one",
        "start step_two",
        "start step_two",
        "done step_two",
        "start step_three",
        "done step_three",
    ]
    assert lines.count("done step_two") == 1  # the killed run never completed
    assert [m["type"] for m in done["messages"]] == ["human", "ai", "tool", "tool", "tool", "ai"]
    assert [m["content"] for m in done["messages"][2:5]] == [
        "step_one ok",
        "step_two ok",
        "step_three ok",
    ]
    assert conversation_problems(done["messages"]) == []


def test_a_decision_failing_response_schema_leaves_the_thread_paused(tmp_path: Path) -> None:
    scenario = Scenario(tmp_path / "effects")
    with open_saver(str(tmp_path / "agent.db")) as saver:
        agent = make_agent(scenario, saver)
        paused = agent.run("wire the money", thread_id="w")
        assert paused.termination_reason == "interrupted"
        before = agent.graph.get_state(_cfg("w"))

        with pytest.raises(InvalidDecisionError, match=r"'approve_wire'.*maybe.*boolean") as info:
            agent.resume(thread_id="w", human_decision={"approved": "maybe"})
        assert "still paused" in str(info.value)

        # the same approval is asked again, with the error in its value; nothing ran
        after = agent.graph.get_state(_cfg("w"))
        (asked, again) = (*before.interrupts, *after.interrupts)
        assert again.id != asked.id
        assert same_ask_again(asked.value, again.value)
        assert "boolean" in again.value["error"]
        assert scenario.lines() == []

        done = agent.resume(thread_id="w", human_decision={"approved": True, "note": "ok"})
        assert done.output == "Finished: Wired 70."
        assert scenario.lines() == ["wire True ok"]


def test_unknown_thread_and_unknown_checkpoint(tmp_path: Path) -> None:
    scenario = Scenario(tmp_path / "effects")
    with open_saver(str(tmp_path / "agent.db")) as saver:
        agent = make_agent(scenario, saver)
        with pytest.raises(NothingToResumeError, match="unknown thread 'nope'"):
            agent.resume(thread_id="nope", human_decision="approved")
        assert list(saver.list(_cfg("nope"))) == []  # resuming wrote nothing

        agent.run("pay the rent", thread_id="t")
        with pytest.raises(CheckpointNotFoundError, match="no checkpoint"):
            agent.run(
                "pay again", thread_id="t", resume_from="1f0d0000-0000-6000-8000-000000000000"
            )
        assert agent.graph.get_state(_cfg("t")).interrupts  # still paused, untouched
        assert scenario.lines() == ["lookup rent"]


def test_database_down_then_back(tmp_path: Path) -> None:
    scenario = Scenario(tmp_path / "effects")
    server = PostgresServer().start()
    try:
        uri = server.create_database()
        with open_saver(uri) as saver:
            agent = make_agent(scenario, saver)
            assert agent.run("pay the rent", thread_id="d").termination_reason == "interrupted"
            paused_at: dict[str, Any] = dict(agent.graph.get_state(_cfg("d")).config)

            server.shutdown()
            with pytest.raises(StorageError, match="No tool ran and thread 'd' is unchanged") as e:
                agent.resume(thread_id="d", human_decision="approved")
            assert isinstance(e.value.__cause__, psycopg.OperationalError)
        with pytest.raises(psycopg.OperationalError), open_saver(uri):
            pass  # a new process cannot even connect
        assert scenario.lines() == ["lookup rent"]  # the paused tool did not run

        server.restart()
        with open_saver(uri) as saver:
            agent = make_agent(scenario, saver)
            snapshot = agent.graph.get_state(_cfg("d"))
            assert dict(snapshot.config) == paused_at  # no partial write
            assert [i.value["node_id"] for i in snapshot.interrupts] == ["approve_transfer"]
            done = agent.resume(thread_id="d", human_decision="approved")
            assert done.output == PAID
            messages = conversation(agent.graph.get_state(_cfg("d")).values["messages"])
            assert conversation_problems(messages) == []
        assert scenario.lines() == [
            "lookup rent",
            'transfer start "approved"',
            'transfer done "approved"',
        ]
    finally:
        server.stop()


# --- shared state across processes ------------------------------------------------------------


def _run_shared_state_child(*args: str) -> dict[str, Any]:
    """Run ``tests.children.shared_state`` in a new Python process; its JSON line."""
    proc = warm_run(
        [sys.executable, "-m", "tests.children.shared_state", *args], cwd=ROOT, timeout=TIMEOUT
    )
    if proc.returncode != 0 or not proc.stdout.strip():
        raise AssertionError(f"child failed ({proc.returncode}):\n{proc.stderr}\n{proc.stdout}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def test_shared_state_written_before_a_pause_reaches_a_new_process(tmp_path: Path) -> None:
    effects = tmp_path / "effects"
    base = ("--db", str(tmp_path / "agent.db"), "--effects", str(effects))

    paused = _run_shared_state_child(*base, "run", "s1")
    assert paused["termination_reason"] == "interrupted"
    # the pausing tool saw what the call before it wrote, and its own write before interrupt()
    assert paused["payload"] == {"item": "b", "seen": ["note a", "asked b"]}
    # the caller's state holds what finished calls wrote; the paused call has not finished
    assert paused["data"] == {"seen": ["note a"]}
    assert effects.read_text().splitlines() == ["note a", "approve start b"]

    done = _run_shared_state_child(*base, "resume", "s1", json.dumps("yes"))
    assert done["termination_reason"] == "completed"
    assert done["output"] == "Finished: noted a | b: yes"
    # a fresh AgentState() in a new process: what the tools wrote before and after the pause
    assert done["data"] == {"seen": ["note a", "asked b", "approved b: yes"]}
    # note ran once in all; approve re-ran from its first line and then finished, once
    assert effects.read_text().splitlines() == [
        "note a",
        "approve start b",
        "approve start b",
        'approve done b "yes"',
    ]


def test_run_again_after_a_crash_mid_batch_continues_it_without_the_goal_twice(
    db: str, tmp_path: Path
) -> None:
    """dynavec taught its users to call ``run()`` again after a crash: that continues the
    unfinished run (the goal is not added again), so every call of the batch runs once."""
    effects = tmp_path / "effects"
    scenario = Scenario(effects)
    child = start_child(*_base(db, effects), "--block-step-two", "run", "t3", "do the steps")
    try:
        wait_for(scenario.step_two_marker, child)
    finally:
        child.kill()
        child.communicate(timeout=30)
    assert child.returncode == -signal.SIGKILL

    done = run_child(*_base(db, effects), "run", "t3", "do the steps")  # the same goal again
    assert done["ok"], done
    assert done["termination_reason"] == "completed"
    lines = scenario.lines()
    for step in ("step_one", "step_two", "step_three"):
        assert lines.count(f"done {step}") == 1, lines
    assert [m["type"] for m in done["messages"]] == ["human", "ai", "tool", "tool", "tool", "ai"]
    assert conversation_problems(done["messages"]) == []

    # on the finished thread a new goal is a follow-up message
    again = run_child(*_base(db, effects), "run", "t3", "do the steps")
    assert [m["type"] for m in again["messages"]][-6:] == [
        "human", "ai", "tool", "tool", "tool", "ai"
    ]  # fmt: skip
    assert scenario.lines().count("done step_one") == 2
