"""A long thread costs the same per run as a short one: the history is not rebuilt per call.

Each run of one thread is a goal, a tool call that pauses for approval, the resume and the
answer. What grows with the thread is reviving its stored messages (every message of the
conversation built and validated again); the test counts message objects built per run +
resume, early in the thread and late, on SQLite and PostgreSQL, for the graph driven with
``invoke`` / ``Command(resume=...)`` and for ``ReActAgent``. No timing: the speed target is in
the benchmark (``python -m benchmarks.run --only long_thread``).
"""

from __future__ import annotations

import asyncio
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
from langgraph.checkpoint.memory import InMemorySaver
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


@pytest.mark.slow  # a thread of 60 runs: left out of `make test-fast`
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


def _dump(messages: Any) -> list[tuple[str, str, str]]:
    return [(m.type, str(m.id), str(m.content)) for m in messages or []]


def test_kept_history_gives_what_the_stored_checkpoints_hold(tmp_path: Path) -> None:
    """Every checkpoint read through the kept history (latest, older ones, after a fork from
    an old checkpoint, async) holds exactly what a graph on the bare saver reads from disk."""
    RAN.clear()
    with closing(sqlite3.connect(str(tmp_path / "t.db"), check_same_thread=False)) as conn:
        saver = SqliteSaver(conn)
        saver.setup()
        graph = create_react_agent(ScriptedChatModel(policy=policy), [transfer], checkpointer=saver)
        bare = graph.copy(update={"checkpointer": saver})  # no kept history: reads the rows
        assert type(bare.checkpointer) is SqliteSaver
        kept_saver: Any = graph.checkpointer
        assert kept_saver.conn is conn  # the saver's own attributes still reachable
        assert isinstance(kept_saver, BaseCheckpointSaver) and type(kept_saver) is not SqliteSaver
        config: Any = {"configurable": {"thread_id": "t"}}

        def same(cfg: Any) -> None:
            kept, stored = graph.get_state(cfg), bare.get_state(cfg)
            assert _dump(kept.values.get("messages")) == _dump(stored.values.get("messages"))
            assert kept.next == stored.next

        for _ in range(6):
            graph.invoke({"messages": [HumanMessage("pay the rent")]}, config)
            same(config)
            graph.invoke(Command(resume="approved"), config)
            same(config)
        history = list(graph.get_state_history(config))
        assert len(history) > 20
        for snapshot in history:
            same(snapshot.config)
        # fork: a new message on a checkpoint in the middle, then run on from it
        middle = history[len(history) // 2].config
        forked = graph.update_state(middle, {"messages": [HumanMessage("and the phone bill")]})
        same(forked)
        graph.invoke(None, forked)
        same(forked)
        same(config)
        # a run on the bare saver (another process, say) is read correctly by the kept one
        bare.invoke({"messages": [HumanMessage("pay the rent")]}, config)
        bare.invoke(Command(resume="approved"), config)
        same(config)
        assert len(graph.get_state(config).values["messages"]) == len(
            bare.get_state(config).values["messages"]
        )
        kept_saver.delete_thread("t")
        assert not graph.get_state(config).values


def test_kept_history_on_the_async_path_matches_the_stored_one() -> None:
    RAN.clear()
    saver = InMemorySaver()
    agent = ReActAgent(ScriptedChatModel(policy=policy), [transfer], checkpointer=saver)
    bare = agent.graph.copy(update={"checkpointer": saver})
    config: Any = {"configurable": {"thread_id": "a"}}

    async def main() -> None:
        for i in range(1, 9):
            paused = await agent.arun("pay the rent", thread_id="a")
            assert paused.termination_reason == "interrupted"
            done = await agent.aresume(thread_id="a", human_decision="approved")
            assert done.finished
            kept, stored = await agent.graph.aget_state(config), await bare.aget_state(config)
            assert _dump(kept.values["messages"]) == _dump(stored.values["messages"])
            assert len(stored.values["messages"]) == 4 * i

    asyncio.run(main())
    assert len(RAN) == 8


def test_a_result_is_the_callers_to_change(tmp_path: Path) -> None:
    """The pause's ``messages`` are copies of the kept records: a caller who edits them (text,
    a tool call's name or arguments, the call list) changes nothing the next result shows."""
    RAN.clear()
    with closing(sqlite3.connect(str(tmp_path / "r.db"), check_same_thread=False)) as conn:
        saver = SqliteSaver(conn)
        saver.setup()
        agent = ReActAgent(ScriptedChatModel(policy=policy), [transfer], checkpointer=saver)
        agent.run("pay the rent", thread_id="t")  # from the second run on, records are kept
        agent.resume(thread_id="t", human_decision="approved")
        first = agent.run("pay the rent", thread_id="t")
        assert first.interrupt_payload is not None
        kept = [m.to_dict() for m in first.interrupt_payload["messages"]]
        asked = next(m for m in first.interrupt_payload["messages"] if m.tool_calls)
        asked.content = "changed"
        asked.tool_calls[0].name = "other"
        asked.tool_calls[0].arguments = '{"amount": 1}'
        asked.tool_calls.append(asked.tool_calls[0])
        first.interrupt_payload["messages"][0].content = "changed too"
        again = agent.run("pay the rent", thread_id="t2")  # another thread: its own records
        assert again.interrupt_payload is not None
        same = agent.resume(thread_id="t", human_decision="approved")
        assert (same.finished, RAN) == (True, [120, 120])
        second = agent.run("pay the rent", thread_id="t")
        assert second.interrupt_payload is not None
        assert [m.to_dict() for m in second.interrupt_payload["messages"]][: len(kept)] == kept
        # no object of the first result is in the second one (so no later edit reaches it)
        mine = {id(o) for m in first.interrupt_payload["messages"] for o in (m, m.tool_calls)}
        mine |= {id(c) for m in first.interrupt_payload["messages"] for c in m.tool_calls}
        theirs = [o for m in second.interrupt_payload["messages"] for o in (m, m.tool_calls)]
        theirs += [c for m in second.interrupt_payload["messages"] for c in m.tool_calls]
        assert not [o for o in theirs if id(o) in mine]
        asked.role, asked.tool_call_id = "user", "edited"  # the other two fields
        agent.resume(thread_id="t", human_decision="approved")
        fourth = agent.run("pay the rent", thread_id="t")
        assert fourth.interrupt_payload is not None
        assert [m.to_dict() for m in fourth.interrupt_payload["messages"]][: len(kept)] == kept


def test_the_copy_of_a_kept_record_sets_every_field() -> None:
    """``own_copies`` sets the fields of ``Message`` and ``ToolCall`` by name: a new field
    must be added there too (this list fails first), and a copy equals its record."""
    from dataclasses import fields

    from dynavec_langgraph._dynavec.view import own_copies
    from dynavec_langgraph.records import Message, ToolCall

    assert [f.name for f in fields(Message)] == ["role", "content", "tool_calls", "tool_call_id"]
    assert [f.name for f in fields(ToolCall)] == ["id", "name", "arguments"]
    records = [
        Message("user", "goal"),
        Message("assistant", None, [ToolCall("c1", "transfer", '{"amount": 1}')]),
        Message("tool", "done", tool_call_id="c1"),
    ]
    copies = own_copies(records)
    assert copies == records
    assert [vars(c) for c in copies] == [vars(Message(**vars(r))) for r in records]
    assert all(
        c is not r and c.tool_calls is not r.tool_calls
        for c, r in zip(copies, records, strict=True)
    )
    assert copies[1].tool_calls[0] is not records[1].tool_calls[0]
