"""The re-check under the resume lock reads the saver's record: a thread that moved is refused,
a thread where this caller's pause is still pending is not (also half-answered parallel turns)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import BaseMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver

from dynavec_langgraph import ConcurrentResumeError, MemoryCheckpointer, ReActAgent, interrupt, tool
from dynavec_langgraph.agent import _refuse_if_moved
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
def test_a_thread_answered_by_someone_else_is_refused(kind: str, tmp_path: Path) -> None:
    saver = _saver(kind, tmp_path)
    agent = ReActAgent(ScriptedChatModel(policy=_policy), [ask], checkpointer=saver)
    cfg: Any = {"configurable": {"thread_id": "t"}}
    agent.run("go", thread_id="t")
    seen = agent.graph.get_state(cfg)
    _refuse_if_moved(seen, agent.checkpointer.get_tuple(cfg))  # nothing moved yet
    other = ReActAgent(ScriptedChatModel(policy=_policy), [ask], checkpointer=saver)
    other.resume(thread_id="t", human_decision="yes")  # answers approve_1, pauses at approve_2
    with pytest.raises(ConcurrentResumeError):
        _refuse_if_moved(seen, agent.checkpointer.get_tuple(cfg))


@pytest.mark.parametrize("kind", SAVERS)
def test_a_half_answered_parallel_turn_is_not_refused(kind: str, tmp_path: Path) -> None:
    saver = _saver(kind, tmp_path)
    agent = ReActAgent(
        ScriptedChatModel(policy=_policy), [ask], checkpointer=saver, parallel_tool_calls=True
    )
    cfg: Any = {"configurable": {"thread_id": "t"}}
    agent.run("go", thread_id="t")
    both = agent.graph.get_state(cfg)
    assert len(both.interrupts) == 2
    agent.resume(thread_id="t", decisions={"approve_1": "yes"})
    seen = agent.graph.get_state(cfg)
    assert [i.value["node_id"] for i in seen.interrupts] == ["approve_2"]
    _refuse_if_moved(seen, agent.checkpointer.get_tuple(cfg))  # still where the caller saw it
    with pytest.raises(ConcurrentResumeError):  # the view from before the first answer moved
        _refuse_if_moved(both, agent.checkpointer.get_tuple(cfg))
    final = agent.resume(thread_id="t", human_decision="no")
    assert final.steps[0].observations == ["1: yes", "2: no"]
