"""A long thread costs the same per run as a short one: the history is not rebuilt per call.

Each run of one thread is a goal, a tool call that pauses for approval, the resume and the
answer. What grows with the thread is reviving its stored messages (every message of the
conversation built and validated again); the test counts message objects built per run +
resume, early in the thread and late, on SQLite and PostgreSQL, for the graph driven with
``invoke`` / ``Command(resume=...)`` and for ``ReActAgent``. No timing: the speed target is in
the benchmark (``python -m benchmarks.run --only long_thread``).
"""

from __future__ import annotations

import sqlite3
import statistics
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

import psycopg
import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.types import Command
from psycopg.rows import dict_row

from dynavec_langgraph import ReActAgent, create_react_agent, interrupt, tool
from dynavec_langgraph.testing import ScriptedChatModel, Turn

RAN: list[int] = []
EARLY, LATE = range(6, 16), range(51, 61)


@tool
def transfer(amount: int) -> str:
    """Transfer money after a person approves."""
    decision = interrupt("approve_transfer", {"amount": amount})
    RAN.append(amount)
    return f"transferred {amount}: {decision}"


def policy(messages: list[BaseMessage]) -> Turn:
    """Ask for the transfer after the user's goal, answer after the tool's result."""
    if isinstance(messages[-1], ToolMessage):
        return "done"
    return [{"name": "transfer", "args": {"amount": 120}}]


@contextmanager
def open_saver(kind: str, tmp_path: Path, pg_uri: Callable[[], str]) -> Iterator[Any]:
    if kind == "sqlite":
        with closing(sqlite3.connect(str(tmp_path / "long.db"), check_same_thread=False)) as conn:
            saver = SqliteSaver(conn)
            saver.setup()
            yield saver
    else:
        with psycopg.connect(
            pg_uri(), autocommit=True, prepare_threshold=0, row_factory=dict_row
        ) as conn:
            pg = PostgresSaver(conn)
            pg.setup()
            yield pg


def _runner(system: str, saver: BaseCheckpointSaver[Any]) -> Callable[[str], list[BaseMessage]]:
    """One run + resume of the thread; returns the conversation afterwards."""
    model = ScriptedChatModel(policy=policy)
    if system == "graph":
        graph = create_react_agent(model, [transfer], checkpointer=saver)

        def graph_run(tid: str) -> list[BaseMessage]:
            config: Any = {"configurable": {"thread_id": tid}}
            paused = graph.invoke({"messages": [HumanMessage("pay the rent")]}, config)
            assert paused["__interrupt__"]
            done = graph.invoke(Command(resume="approved"), config)
            assert "__interrupt__" not in done
            return list(done["messages"])

        return graph_run
    agent = ReActAgent(model, [transfer], checkpointer=saver)

    def agent_run(tid: str) -> list[BaseMessage]:
        assert agent.run("pay the rent", thread_id=tid).termination_reason == "interrupted"
        result = agent.resume(thread_id=tid, human_decision="approved")
        assert (result.finished, result.output) == (True, "done")
        snapshot = agent.graph.get_state({"configurable": {"thread_id": tid}})
        return list(snapshot.values["messages"])

    return agent_run


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
@pytest.mark.parametrize("system", ["graph", "ReActAgent"])
def test_a_run_late_in_a_long_thread_rebuilds_no_more_messages_than_an_early_one(
    system: str,
    kind: str,
    tmp_path: Path,
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    built = [0]
    original = BaseMessage.__init__

    def counting(self: BaseMessage, *args: Any, **kwargs: Any) -> None:
        built[0] += 1
        original(self, *args, **kwargs)

    RAN.clear()
    per_run: dict[int, int] = {}
    with open_saver(kind, tmp_path, lambda: str(request.getfixturevalue("pg_uri"))) as saver:
        run = _runner(system, saver)
        monkeypatch.setattr(BaseMessage, "__init__", counting)
        for i in range(1, LATE[-1] + 1):
            before = built[0]
            messages = run("long")
            per_run[i] = built[0] - before
            # the whole thread is there, in order: 4 messages per run
            assert len(messages) == 4 * i
            assert [type(m) for m in messages[-4:]] == [
                HumanMessage,
                AIMessage,
                ToolMessage,
                AIMessage,
            ]
            assert messages[-2].content == "transferred 120: approved"
    assert len(RAN) == LATE[-1]  # every approved transfer ran once
    early = statistics.median(per_run[i] for i in EARLY)
    late = statistics.median(per_run[i] for i in LATE)
    # Without kept history each call revives the whole conversation (4 messages a run):
    # a typical run late in the thread would build hundreds more messages than an early one.
    assert late <= early + 2, (early, late, per_run)
    # LangGraph's periodic snapshot is read in full now and then: a bounded number of times
    # per window of runs, not on every run.
    history = 4 * LATE[-1]
    assert sum(per_run[i] for i in LATE) <= sum(per_run[i] for i in EARLY) + 4 * history, per_run
