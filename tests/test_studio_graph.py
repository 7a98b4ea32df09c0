"""``dynavec_langgraph.studio.graph``, the graph ``langgraph dev`` serves, in process: compiled
without a checkpointer, and choosing its model when it runs (the scripted demo model without
``OPENAI_API_KEY``, ``ChatOpenAI`` with it), not when it is imported.

The graph runs as a node of a parent graph compiled with an ``InMemorySaver`` (as the LangGraph
server gives it one), so its pause can be resumed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest
from langchain_core.messages import AIMessage, AnyMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import Command, StateSnapshot

from dynavec_langgraph._demo import DEMO_SYSTEM_PROMPT
from dynavec_langgraph.demo import LEDGER_ENV
from dynavec_langgraph.studio import graph as studio_graph
from tests.openai_server import OpenAIServer


class Parent(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


def _parent() -> Any:
    builder = StateGraph(Parent)
    builder.add_node("studio", studio_graph)
    builder.add_edge(START, "studio")
    builder.add_edge("studio", END)
    return builder.compile(checkpointer=InMemorySaver())


def _thread(thread_id: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread_id}}


def _ledger(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


@pytest.fixture
def ledger(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The demo's audit trail for this test (one JSON line per finished tool run)."""
    path = tmp_path / "ledger.jsonl"
    monkeypatch.setenv(LEDGER_ENV, str(path))
    return path


@pytest.fixture
def no_openai(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_BASE", "OPENAI_MODEL"):
        monkeypatch.delenv(name, raising=False)


def test_the_studio_graph_has_no_checkpointer() -> None:
    assert studio_graph.checkpointer is None  # the LangGraph server brings its own
    assert studio_graph.name == "dynavec_agent"
    assert {"agent", "tools"} <= set(studio_graph.get_graph().nodes)


def test_without_a_key_the_scripted_demo_model_pauses_for_approval(
    no_openai: None, ledger: Path
) -> None:
    parent = _parent()
    out = parent.invoke({"messages": [("user", "pay 30 to Bob")]}, _thread("s1"))
    (pause,) = out["__interrupt__"]
    assert pause.value["node_id"] == "approve_transfer"
    assert pause.value["payload"] == {"amount": 30, "to": "Bob"}
    assert pause.value["tool_call"]["name"] == "transfer_funds"
    assert [e["tool"] for e in _ledger(ledger)] == ["get_balance"]  # transfer waits

    done = parent.invoke(Command(resume="approved"), _thread("s1"))
    assert done["messages"][-1].content == "Done. Balance: 1000. Transferred 30 to Bob."
    assert [(e["tool"], e["result"]) for e in _ledger(ledger)] == [
        ("get_balance", "Balance: 1000."),
        ("transfer_funds", "Transferred 30 to Bob."),
    ]


def test_the_model_is_chosen_at_run_time(
    no_openai: None, ledger: Path, openai: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the same graph object, imported above without a key: with one, it talks to OpenAI
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("OPENAI_BASE_URL", openai.url)
    monkeypatch.setenv("OPENAI_MODEL", "gpt-test")
    openai.script([{"name": "transfer_funds", "args": {"amount": 45, "to": "Ann"}}], "Sent.")
    parent = _parent()

    out = parent.invoke({"messages": [("user", "pay Ann")]}, _thread("o1"))
    assert [i.value["payload"] for i in out["__interrupt__"]] == [{"amount": 45, "to": "Ann"}]
    assert len(openai.requests) == 1
    request = openai.requests[0]
    assert request["model"] == "gpt-test"
    assert [t["function"]["name"] for t in request["tools"]] == ["get_balance", "transfer_funds"]
    assert request["messages"] == [
        {"role": "system", "content": DEMO_SYSTEM_PROMPT},
        {"role": "user", "content": "pay Ann"},
    ]

    done = parent.invoke(Command(resume={"decision": "rejected", "comment": "no"}), _thread("o1"))
    assert done["messages"][-1].content == "Sent."
    assert len(openai.requests) == 2
    answer = openai.requests[1]["messages"][-1]
    assert answer["role"] == "tool"
    assert answer["content"] == "Transfer of 45 to Ann was rejected (no)."
    assert openai.rejections == []
    assert [e["decision"] for e in _ledger(ledger)] == ["rejected"]

    # and without the key again, the very same graph is back on the scripted demo model
    monkeypatch.delenv("OPENAI_API_KEY")
    out = parent.invoke({"messages": [("user", "pay 7 to Cy")]}, _thread("s2"))
    assert [i.value["payload"] for i in out["__interrupt__"]] == [{"amount": 7, "to": "Cy"}]
    assert len(openai.requests) == 2  # the server saw nothing more
    (task,) = parent.get_state(_thread("s2"), subgraphs=True).tasks
    assert isinstance(task.state, StateSnapshot)
    messages = task.state.values["messages"]
    asked = [m for m in messages if isinstance(m, AIMessage) and m.tool_calls]
    assert [[c["name"] for c in m.tool_calls] for m in asked] == [
        ["get_balance"],
        ["transfer_funds"],
    ]  # the scripted demo model: one call per turn
