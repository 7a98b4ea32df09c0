"""A dynavec checkpointer shared between processes: the lock it gets (docs/guarantees.md).

A user's own dynavec ``BaseCheckpointer`` that has ``resume_lock`` / ``aresume_lock`` context
managers (``tests/children/file_checkpointer.py``: ``flock`` on a file per thread) is locked
through them, across processes: two processes resume one pause at the same moment, one applies
its decision and runs the tool once, the other gets ``ConcurrentResumeError`` and runs nothing.
Without such methods the lock is in-process only (keyed by the checkpointer object).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dynavec_langgraph import ConcurrentResumeError, MemoryCheckpointer, ReActAgent
from dynavec_langgraph._persistence.locks import resume_lock
from dynavec_langgraph.savers import resolve_checkpointer
from dynavec_langgraph.testing import ScriptedChatModel
from tests.children.file_checkpointer import FileCheckpointer
from tests.children.scenario import (
    PAID,
    Scenario,
    make_agent,
    open_saver,
    race_resumes,
)

DECISIONS = {"a": "approved", "b": "rejected"}


def test_two_processes_resume_one_pause_of_a_file_checkpointer(tmp_path: Path) -> None:
    db = f"files:{tmp_path / 'records'}"
    scenario = Scenario(tmp_path / "effects")
    with open_saver(db) as saver:
        paused = make_agent(scenario, saver).run("pay the rent", thread_id="t")
    assert paused.termination_reason == "interrupted"
    race = race_resumes(db, scenario, "t", DECISIONS)
    winner, won, lost = race.winner, race.won, race.lost
    assert (lost["ok"], lost["error"]) == (False, "ConcurrentResumeError")
    assert "taken by another process (file lock)" in lost["message"]
    assert not race.loser_reached_the_tool
    assert won["ok"] and won["termination_reason"] == "completed"
    if DECISIONS[winner] == "approved":
        assert won["output"] == PAID
    transfers = [line for line in scenario.lines() if line.startswith("transfer start")]
    assert transfers == [f"transfer start {json.dumps(DECISIONS[winner])}"]  # once


def test_the_checkpointers_own_lock_is_taken_by_resume_lock(tmp_path: Path) -> None:
    one = resolve_checkpointer(FileCheckpointer(tmp_path))
    two = resolve_checkpointer(FileCheckpointer(tmp_path))  # another object, same files
    with resume_lock(one, "t"):
        with pytest.raises(ConcurrentResumeError, match="file lock"), resume_lock(two, "t"):
            pass
        with resume_lock(two, "other"):
            pass
    with resume_lock(two, "t"):  # released
        pass


def test_without_its_own_lock_a_dynavec_checkpointer_is_locked_in_process(
    tmp_path: Path,
) -> None:
    """Agents sharing one ``MemoryCheckpointer`` object share its in-process lock."""
    store = MemoryCheckpointer()
    agent = ReActAgent(ScriptedChatModel(turns=["hi"]), checkpointer=store)
    with resume_lock(agent.checkpointer, "t"), pytest.raises(ConcurrentResumeError):
        ReActAgent(ScriptedChatModel(turns=["hi"]), checkpointer=store).run("x", thread_id="t")
