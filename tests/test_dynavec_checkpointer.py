"""dynavec checkpointers (docs/compatibility.md §5), tested the way a dynavec user's tests are: a
dynavec ``ChatModel`` subclass as the model, imports only from the mirrored paths. One test per
N4 / C* row of docs/compatibility.md; a deliberate difference is asserted as documented."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import pytest

import dynavec_langgraph.checkpoint as checkpoint_module
from dynavec_langgraph.agents import DEFAULT_REACT_SYSTEM_PROMPT, ReActAgent, interrupt, tool
from dynavec_langgraph.checkpoint import BaseCheckpointer, Checkpoint, MemoryCheckpointer
from dynavec_langgraph.dynamodb import DynamoDBCheckpointer
from tests.dynavec_model import ScriptedDynavecModel

RUNS: Counter[str] = Counter()
STATE_KEYS = {"goal", "messages", "steps", "total_tool_calls", "finished"}


@tool()
def add(a: int, b: int) -> int:
    """Add."""
    RUNS["add"] += 1
    return a + b


@tool()
def approve(amount: int) -> str:
    """Needs approval."""
    decision = interrupt("approve", {"amount": amount})
    RUNS["approved"] += 1
    return f"{decision} {amount}"


class ListCheckpointer(BaseCheckpointer):
    """A user's own checkpointer: records in a list, ``save`` appends (never replaces)."""

    def __init__(self) -> None:
        self.records: list[Checkpoint] = []

    def save(self, checkpoint: Checkpoint) -> None:
        self.records.append(checkpoint)

    def get(self, thread_id: str, checkpoint_id: str | None = None) -> Checkpoint | None:
        mine = [c for c in self.records if c.thread_id == thread_id]
        if checkpoint_id is not None:
            mine = [c for c in mine if c.checkpoint_id == checkpoint_id]
        return mine[-1] if mine else None

    def list(self, thread_id: str, limit: int | None = None) -> list[Checkpoint]:
        newest: dict[str, Checkpoint] = {}
        for c in self.records:
            if c.thread_id == thread_id:
                newest[c.checkpoint_id] = c
        out = list(newest.values())
        return out[-limit:] if limit else out


@pytest.fixture(autouse=True)
def _reset() -> None:
    RUNS.clear()


def test_n4_paths() -> None:
    assert checkpoint_module.DynamoDBCheckpointer is DynamoDBCheckpointer
    assert issubclass(DynamoDBCheckpointer, BaseCheckpointer)
    assert issubclass(MemoryCheckpointer, BaseCheckpointer)


def test_c1_c2_records() -> None:
    cp = Checkpoint("t1")
    assert re.fullmatch(r"cp_\d{14}_[0-9a-f]{8}", cp.checkpoint_id)
    assert (cp.parent_checkpoint_id, cp.node_id, cp.step, cp.state, cp.metadata) == (
        None, None, 0, {}, {},
    )  # fmt: skip
    assert cp.timestamp.endswith("+00:00") and Checkpoint.from_dict(cp.to_dict()) == cp
    store = MemoryCheckpointer()
    assert store.get("t1") is None and store.list("t1") == []
    first = store.put("t1", {"goal": "g"}, node_id="init")
    second = store.put("t1", {"goal": "g"}, node_id="step_1", metadata={"k": 1})
    third = store.put("t1", {}, node_id="step_2", step=7, parent_checkpoint_id="x")
    assert (first.step, second.step, second.parent_checkpoint_id) == (0, 1, first.checkpoint_id)
    assert (third.step, third.parent_checkpoint_id, second.metadata) == (7, "x", {"k": 1})
    assert store.get("t1") is third and store.get("t1", first.checkpoint_id) is first
    assert store.list("t1") == [first, second, third] and store.list("t1", limit=2) == [
        second,
        third,
    ]
    store.clear("t1")
    assert store.list("t1") == []


@pytest.mark.parametrize("make", [MemoryCheckpointer, ListCheckpointer], ids=["memory", "own"])
def test_c3_records_of_a_run(make: Any) -> None:
    store = make()
    model = ScriptedDynavecModel(
        [[("add", {"a": 1, "b": 2}), ("add", {"a": 3, "b": 4})], "3 and 7"]
    )
    agent = ReActAgent(model, tools=[add], system_prompt="sys", checkpointer=store)
    assert agent.run("add them", thread_id="t1").output == "3 and 7"
    records = store.list("t1")
    assert [(r.node_id, r.step) for r in records] == [("init", 0), ("step_1", 1), ("step_2", 2)]
    for record in records:
        assert STATE_KEYS <= set(record.state) and record.state["goal"] == "add them"
        assert "langgraph" in record.metadata  # C9: what lets any process resume the thread
    init, step1, step2 = records
    assert (init.state["steps"], init.state["total_tool_calls"]) == ([], 0)
    assert step1.state["finished"] is False and step1.state["total_tool_calls"] == 2
    assert step1.state["steps"][0]["observations"] == ["3", "7"]
    assert (step2.state["finished"], step2.state["output"]) == (True, "3 and 7")
    assert [r.parent_checkpoint_id for r in records] == [
        None,
        init.checkpoint_id,
        step1.checkpoint_id,
    ]
    # C8: the messages start with the system prompt, as dynavec's records do (every record);
    # C7: ids are LangGraph's, usable as resume_from=
    for record in records:
        assert record.state["messages"][0] == {
            "role": "system", "content": "sys", "tool_call_id": None, "tool_calls": []
        }  # fmt: skip
    assert [m["role"] for m in step2.state["messages"]] == [
        "system",
        "user",
        "assistant",
        "tool",
        "tool",
        "assistant",
    ]
    assert not step2.checkpoint_id.startswith("cp_")
    view = agent.get_checkpoint("t1", step2.checkpoint_id)
    assert view is not None and view.state["messages"] == step2.state["messages"]
    assert RUNS["add"] == 2


def test_c4_interrupted_record() -> None:
    store = MemoryCheckpointer()
    model = ScriptedDynavecModel([[("add", {"a": 1, "b": 1}), ("approve", {"amount": 9})]])
    ReActAgent(model, tools=[add, approve], checkpointer=store).run("go", thread_id="t1")
    assert [r.node_id for r in store.list("t1")] == ["init", "interrupted"]
    paused = store.get("t1")
    assert paused is not None and paused.state["finished"] is False
    interrupted = paused.state["interrupted"]
    system, _, asked = paused.state["messages"][:3]  # the default system prompt first (C8)
    assert (system["role"], system["content"]) == ("system", DEFAULT_REACT_SYSTEM_PROMPT)
    call_id = asked["tool_calls"][1]["id"]
    assert interrupted == {
        "node_id": "approve", "payload": {"amount": 9}, "tool_call_id": call_id,
        "step": 1, "thread_id": "t1",
    }  # fmt: skip
    fresh = ReActAgent(ScriptedDynavecModel(["done"]), tools=[add, approve], checkpointer=store)
    done = fresh.resume(thread_id="t1", human_decision="ok")
    assert done.steps[0].observations == ["2", "ok 9"] and RUNS == Counter(
        {"add": 1, "approved": 1}
    )
    assert [r.node_id for r in store.list("t1")] == ["init", "interrupted", "step_1", "step_2"]


@pytest.mark.parametrize(
    ("prompt", "head"),
    [("Be brief.", ["system"]), (None, []), ("", [])],
    ids=["prompt", "none", "empty"],
)
def test_c8_the_graphs_records_start_with_its_system_prompt(
    prompt: str | None, head: list[str]
) -> None:
    """The same for the LangGraph graph given a dynavec checkpointer (its ``system_prompt=``
    has no default there); the pause's ``interrupted`` record too."""
    from langchain_core.messages import HumanMessage
    from langgraph.types import Command

    from dynavec_langgraph import create_react_agent

    store = MemoryCheckpointer()
    model = ScriptedDynavecModel([[("approve", {"amount": 9})], "done"])
    graph = create_react_agent(model, [approve], system_prompt=prompt, checkpointer=store)
    config: Any = {"configurable": {"thread_id": "t1"}}
    graph.invoke({"messages": [HumanMessage("go")]}, config)
    graph.invoke(Command(resume="ok"), config)
    records = store.list("t1")
    assert "interrupted" in [r.node_id for r in records]
    for record in records:
        roles = [m["role"] for m in record.state["messages"]]
        assert roles[: len(head) + 1] == [*head, "user"], (record.node_id, roles)
        if head:
            assert record.state["messages"][0]["content"] == prompt
    assert [m.role for m in model.seen[0]] == [*head, "user"]  # what the model was sent


def test_c8_a_saver_built_by_hand_stores_the_prompt_it_is_given() -> None:
    from langchain_core.messages import HumanMessage

    from dynavec_langgraph import create_react_agent
    from dynavec_langgraph._persistence.adapter import DynavecCheckpointSaver

    for given, head in ((None, []), ("sys", ["system"])):
        store = MemoryCheckpointer()
        saver = DynavecCheckpointSaver(store, system_prompt=given)
        graph = create_react_agent(ScriptedDynavecModel(["hi"]), [], system_prompt="other")
        graph = graph.copy(update={"checkpointer": saver})  # a saver is used as it is
        graph.invoke({"messages": [HumanMessage("go")]}, {"configurable": {"thread_id": "t"}})
        record = store.get("t")
        assert record is not None
        assert [m["role"] for m in record.state["messages"]] == [*head, "user", "assistant"]


def test_c5_max_steps_record() -> None:
    store = MemoryCheckpointer()
    model = ScriptedDynavecModel(policy=lambda m: [("add", {"a": len(m), "b": 0})])
    result = ReActAgent(model, tools=[add], max_steps=2, checkpointer=store).run("x", thread_id="t")
    assert result.termination_reason == "max_steps_reached"
    last = store.get("t")
    assert last is not None and (last.node_id, last.step) == ("max_steps_reached", 2)
    assert (last.state["finished"], last.state["output"]) == (False, result.output)
    assert store.list("t")[0].node_id == "init"


def test_c6_continue_and_resume_from() -> None:
    store = MemoryCheckpointer()
    model = ScriptedDynavecModel(["first answer", "second answer", "forked answer"])
    agent = ReActAgent(model, checkpointer=store)
    agent.run("one", thread_id="t")
    fork_point = store.list("t")[-1].checkpoint_id
    agent.run("two", thread_id="t")
    assert [m.content for m in model.seen[1] if m.role != "system"] == [
        "one",
        "first answer",
        "two",
    ]
    agent.run("three", thread_id="t", resume_from=fork_point)
    assert [m.content for m in model.seen[2] if m.role != "system"] == [
        "one",
        "first answer",
        "three",
    ]
