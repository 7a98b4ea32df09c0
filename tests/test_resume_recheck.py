"""``resume()`` reads the thread under its lock: a decision applies to what is pending when the
lock is held (someone else's answer in between is seen), a half-answered parallel turn resumes
the rest, and a caller that finds the lock held is refused without anything running."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import BaseMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver

from dynavec_langgraph import ConcurrentResumeError, MemoryCheckpointer, ReActAgent, interrupt, tool
from dynavec_langgraph._persistence.locks import resume_lock
from dynavec_langgraph.testing import ScriptedChatModel


@tool
def ask(n: int) -> str:
    """Ask a person."""
    return f"{n}: {interrupt(f'approve_{n}', {'n': n})}"


def _policy(messages: list[BaseMessage]) -> Any:
    if isinstance(messages[-1], ToolMessage):
        return "done"
    return [{"name": "ask", "args": {"n": 1}}, {"name": "ask", "args": {"n": 2}}]


SAVERS = ["memory", "sqlite", "dynavec"]


def _saver(kind: str, tmp_path: Path) -> Any:
    if kind == "memory":
        return InMemorySaver()
    if kind == "sqlite":
        return SqliteSaver(sqlite3.connect(tmp_path / "t.db", check_same_thread=False))
    return MemoryCheckpointer()


@pytest.mark.parametrize("kind", SAVERS)
def test_a_thread_answered_by_someone_else_is_read_again_under_the_lock(
    kind: str, tmp_path: Path
) -> None:
    saver = _saver(kind, tmp_path)
    agent = ReActAgent(ScriptedChatModel(policy=_policy), [ask], checkpointer=saver)
    agent.run("go", thread_id="t")
    other = ReActAgent(ScriptedChatModel(policy=_policy), [ask], checkpointer=saver)
    other.resume(thread_id="t", human_decision="yes")  # answers approve_1, pauses at approve_2
    with resume_lock(agent.checkpointer, "t"), pytest.raises(ConcurrentResumeError):
        agent.resume(thread_id="t", human_decision="no")  # someone holds the thread
    final = agent.resume(thread_id="t", human_decision="no")  # applies to approve_2
    assert final.steps[0].observations == ["1: yes", "2: no"]


@pytest.mark.parametrize("kind", SAVERS)
def test_a_half_answered_parallel_turn_resumes_the_rest(kind: str, tmp_path: Path) -> None:
    saver = _saver(kind, tmp_path)
    agent = ReActAgent(
        ScriptedChatModel(policy=_policy), [ask], checkpointer=saver, parallel_tool_calls=True
    )
    cfg: Any = {"configurable": {"thread_id": "t"}}
    agent.run("go", thread_id="t")
    assert len(agent.graph.get_state(cfg).interrupts) == 2
    agent.resume(thread_id="t", decisions={"approve_1": "yes"})
    seen = agent.graph.get_state(cfg)
    assert [i.value["node_id"] for i in seen.interrupts] == ["approve_2"]
    final = agent.resume(thread_id="t", human_decision="no")
    assert final.steps[0].observations == ["1: yes", "2: no"]
