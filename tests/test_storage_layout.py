"""``message_storage="delta"`` on real databases: what the benchmark's storage figures rely on.

Every checkpoint of the history rebuilds the right conversation, time travel forks from an
older checkpoint, a new process resumes a paused thread, and storage grows linearly while
``"full"`` grows quadratically. SQLite files and a real PostgreSQL server.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig

from benchmarks.savers import open_saver, sqlite_saver, stored_bytes
from benchmarks.systems import ANSWER, DECISION, Script, build, lookup
from dynavec_langgraph import create_react_agent
from dynavec_langgraph._graph.state import MessageStorage
from dynavec_langgraph.testing import ScriptedChatModel

REPO = Path(__file__).resolve().parent.parent


def _cfg(thread_id: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread_id}}


def _shape(messages: list[BaseMessage]) -> list[tuple[str, str]]:
    """Types and contents (ids differ between runs of the same script)."""
    return [(m.type, str(m.content)) for m in messages]


def _assert_valid(messages: list[BaseMessage], *, complete: bool = True) -> None:
    """Each tool call is answered once, in order, right after its assistant message; only the
    last batch may still be unanswered (``complete=False``, a checkpoint in mid-batch)."""
    i = 0
    while i < len(messages):
        m = messages[i]
        i += 1
        if isinstance(m, AIMessage) and m.tool_calls:
            ids = [c["id"] for c in m.tool_calls]
            window = messages[i : i + len(ids)]
            answers = [a.tool_call_id for a in window if isinstance(a, ToolMessage)]
            assert answers == ids[: len(answers)]
            i += len(answers)
            if len(answers) < len(ids):
                assert i == len(messages) and not complete


@pytest.fixture(params=["sqlite", "postgres"])
def saver(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    """A SqliteSaver on a file or a PostgresSaver on a fresh database."""
    uri = request.getfixturevalue("pg_uri") if request.param == "postgres" else None
    with open_saver(request.param, tmp_path, uri) as opened:
        yield opened


def _graph(saver: Any, script: Script, storage: MessageStorage = "delta") -> Any:
    model = ScriptedChatModel(policy=script)
    return create_react_agent(
        model, [lookup], max_steps=100, checkpointer=saver, message_storage=storage
    )


def test_every_checkpoint_of_the_history_rebuilds_its_conversation(saver: Any) -> None:
    graph = _graph(saver, Script(steps=6, calls=2))
    final = graph.invoke({"messages": [HumanMessage("go")]}, _cfg("t"))["messages"]
    assert len(final) == 1 + 6 * 3 + 1
    history = list(graph.get_state_history(_cfg("t")))
    # one checkpoint per model call and per tool call (each call checkpointed on its own)
    assert len(history) == 2 + 7 + 12
    ids = [m.id for m in final]
    lengths = []
    for snapshot in history:
        messages = snapshot.values.get("messages", [])
        assert [m.id for m in messages] == ids[: len(messages)]
        _assert_valid(messages, complete=False)
        lengths.append(len(messages))
    assert lengths == sorted(lengths, reverse=True)
    assert lengths[0] == len(final)


def test_time_travel_forks_from_an_older_checkpoint(saver: Any) -> None:
    script = Script(steps=6, calls=2)
    graph = _graph(saver, script)
    original = graph.invoke({"messages": [HumanMessage("go")]}, _cfg("t"))["messages"]
    history = list(graph.get_state_history(_cfg("t")))
    head_config = history[0].config
    # the checkpoint after the third model turn's tool calls, about to call the model again
    older = next(
        s
        for s in history
        if s.next == ("agent",) and sum(isinstance(m, AIMessage) for m in s.values["messages"]) == 3
    )
    prefix = older.values["messages"]
    assert len(prefix) == 1 + 3 * 3

    forked = graph.invoke(None, older.config)["messages"]

    assert [m.id for m in forked[: len(prefix)]] == [m.id for m in prefix]
    assert _shape(forked) == _shape(original)  # same script, same conversation
    later_ids = {m.id for m in original[len(prefix) :]}
    assert later_ids.isdisjoint(m.id for m in forked[len(prefix) :])  # new messages, new turns
    _assert_valid(forked)
    assert [m.id for m in graph.get_state(_cfg("t")).values["messages"]] == [m.id for m in forked]
    # the original branch is still there, unchanged
    kept = graph.get_state(head_config).values["messages"]
    assert [m.id for m in kept] == [m.id for m in original]
    parent_ids = {
        (s.parent_config or {}).get("configurable", {}).get("checkpoint_id")
        for s in graph.get_state_history(_cfg("t"))
    }
    assert older.config["configurable"]["checkpoint_id"] in parent_ids


def test_delta_and_full_storage_keep_the_same_history(tmp_path: Path) -> None:
    shapes = {}
    for storage in ("delta", "full"):
        saver = sqlite_saver(tmp_path / f"{storage}.db")
        graph = _graph(saver, Script(steps=4, calls=3), storage)
        graph.invoke({"messages": [HumanMessage("go")]}, _cfg("t"))
        shapes[storage] = [
            (s.next, _shape(s.values.get("messages", [])))
            for s in graph.get_state_history(_cfg("t"))
        ]
        saver.conn.close()
    assert len(shapes["delta"]) == 2 + 5 + 12
    assert shapes["delta"] == shapes["full"]


def test_delta_storage_grows_linearly_and_full_quadratically(tmp_path: Path) -> None:
    size: dict[tuple[str, int], int] = {}
    for storage in ("delta", "full"):
        for steps in (20, 40):
            saver = sqlite_saver(tmp_path / f"{storage}-{steps}.db")
            before = stored_bytes("sqlite", saver)
            _graph(saver, Script(steps=steps), storage).invoke(
                {"messages": [HumanMessage("go")]}, _cfg("t")
            )
            size[storage, steps] = stored_bytes("sqlite", saver) - before
            saver.conn.close()
    assert size["delta", 40] / size["delta", 20] <= 2.2
    assert size["full", 40] / size["full", 20] > 3.0
    assert size["delta", 40] * 4 < size["full", 40]


@pytest.mark.parametrize("system", ["dynavec_graph", "dynavec_ReActAgent"])
def test_a_new_process_resumes_a_paused_delta_thread(system: Any, tmp_path: Path) -> None:
    db = tmp_path / "agent.db"
    saver = sqlite_saver(db)
    script = Script(steps=3, calls=2, approval=True)
    paused = build(system, saver, script=script).run("t")
    assert paused.interrupted
    assert len(paused.observations) == 6
    saver.conn.close()

    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks.resume_child", system, str(db), "t"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    child = json.loads(proc.stdout.strip().splitlines()[-1])
    assert child["ok"] is True
    assert child["observations"] == ["result for q2.1", f"transferred 120: {DECISION}"]

    saver = sqlite_saver(db)
    graph = _graph(saver, Script(steps=0))
    messages = graph.get_state(_cfg("t")).values["messages"]
    saver.conn.close()
    _assert_valid(messages)
    tools = [str(m.content) for m in messages if isinstance(m, ToolMessage)]
    assert tools == [f"result for q{t}.{j}" for t in range(3) for j in range(2)] + [
        f"transferred 120: {DECISION}"
    ]
    assert messages[-1].content == ANSWER
    assert sum(isinstance(m, AIMessage) for m in messages) == 5
