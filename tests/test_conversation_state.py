"""The conversation keeps no process-global state: its analysis travels with the ``messages``
value (a :class:`Conversation`) in a :class:`ConversationChannel`.

The first tests pin what that design relies on from LangGraph, so an upgrade that breaks it
fails here instead of silently making every step O(n) again. The others run conversations
that interleave in one process (two threads, two asyncio tasks, a parent graph and its
subgraph), read back from a new saver, and resumed; counters prove every tool call ran once.
"""

from __future__ import annotations

import asyncio
import copy
import random
import sqlite3
import threading
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import closing, contextmanager
from typing import Annotated, Any, TypedDict

import pytest
from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    ToolMessage,
)
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import Command

from dynavec_langgraph import ReActState, create_react_agent, interrupt, tool
from dynavec_langgraph._graph.messages import (
    Conversation,
    ConversationChannel,
    merge_conversation,
    new_turn,
    pending_calls,
    run_steps,
)
from dynavec_langgraph.savers import safe_serializer
from dynavec_langgraph.testing import ScriptedChatModel

RUNS: Counter[str] = Counter()
BASES: Counter[str] = Counter()


def setup_function() -> None:
    RUNS.clear()
    BASES.clear()


def assert_valid(messages: Sequence[BaseMessage]) -> None:
    """Unique message ids and call ids; each call answered once, right after its message."""
    ids = [m.id for m in messages]
    assert all(ids) and len(set(ids)) == len(ids), ids
    seen_calls: set[str] = set()
    i = 0
    while i < len(messages):
        m = messages[i]
        assert not isinstance(m, ToolMessage), f"answer without its call at {i}: {m!r}"
        if isinstance(m, AIMessage) and m.tool_calls:
            calls = [str(c["id"]) for c in m.tool_calls]
            assert not seen_calls & set(calls), calls
            seen_calls.update(calls)
            answers = messages[i + 1 : i + 1 + len(calls)]
            assert [a.tool_call_id for a in answers if isinstance(a, ToolMessage)] == calls
            i += len(calls)
        i += 1


def assert_same_analysis(messages: Sequence[BaseMessage]) -> None:
    """The carried analysis answers as the analysis computed from a plain list does."""
    plain = list(messages)
    assert pending_calls(messages) == pending_calls(plain)
    assert run_steps(messages) == run_steps(plain)


def _script(agent: str, steps: int, calls: int, tool_name: str = "lookup") -> Any:
    def policy(messages: list[BaseMessage]) -> Any:
        turn = 0
        for m in reversed(messages):
            if isinstance(m, HumanMessage):
                break
            turn += isinstance(m, AIMessage)
        if turn < steps:
            return [
                {"name": tool_name, "args": {"query": f"{agent}:{turn}.{j}"}} for j in range(calls)
            ]
        return f"{agent} done"

    return policy


@tool
def lookup(query: str) -> str:
    """Look a query up."""
    RUNS[query] += 1
    return f"result for {query}"


@tool
def execute(action: str) -> str:
    """Do something that needs approval."""
    RUNS[f"execute {action}"] += 1
    decision = interrupt("approve_action", {"action": action})
    RUNS[f"execute {action}: {decision}"] += 1
    return f"{action}: {decision}"


@contextmanager
def open_saver(db: str) -> Iterator[BaseCheckpointSaver[Any]]:
    """A new saver on ``db`` (a SQLite file or a PostgreSQL URI), closed afterwards."""
    if db.startswith("postgres"):
        with PostgresSaver.from_conn_string(db) as saver:
            saver.setup()
            yield saver
    else:
        with closing(sqlite3.connect(db, check_same_thread=False)) as conn:
            yield SqliteSaver(conn)


# --- what the design relies on from LangGraph ---------------------------------------------


class CountedState(TypedDict):
    messages: Annotated[list[AnyMessage], ConversationChannel()]


def test_nodes_and_routers_get_the_channel_value_itself_with_its_analysis() -> None:
    """Reliance 1: LangGraph hands nodes and conditional edges the channel's value object
    (no copy that drops the list subclass); reliance 2: a router's fresh read applies the
    node's writes to ``DeltaChannel.copy()``, which copies the value with ``copy.copy``."""
    seen: Counter[str] = Counter()

    def record(where: str, messages: Any) -> None:
        seen[f"{where} {type(messages).__name__} analysed={messages.analysed}"] += 1

    def model(state: CountedState) -> dict[str, Any]:
        record("node", state["messages"])
        turn = run_steps(state["messages"])
        if turn >= 5:
            return {"messages": [AIMessage("done", id=f"ai{turn}")]}
        calls = [{"name": "t", "args": {}, "id": f"c{turn}.{j}"} for j in range(2)]
        return {"messages": [AIMessage("", id=f"ai{turn}", tool_calls=calls)]}

    def tools(state: CountedState) -> dict[str, Any]:
        record("node", state["messages"])
        (call, *_) = pending_calls(state["messages"])
        return {"messages": [ToolMessage("ok", tool_call_id=call["id"], id=f"t{call['id']}")]}

    def route(state: CountedState) -> str:
        record("router", state["messages"])
        return "tools" if pending_calls(state["messages"]) else END

    def route_after_tools(state: CountedState) -> str:
        record("router", state["messages"])
        return "tools" if pending_calls(state["messages"]) else "model"

    builder = StateGraph(CountedState)
    builder.add_node("model", model)
    builder.add_node("tools", tools)
    builder.add_edge(START, "model")
    builder.add_conditional_edges("model", route, ["tools", END])
    builder.add_conditional_edges("tools", route_after_tools, ["tools", "model"])
    graph = builder.compile()
    out = graph.invoke({"messages": [HumanMessage("go", id="h")]})
    assert seen == Counter(
        {"node Conversation analysed=True": 6 + 10, "router Conversation analysed=True": 16}
    )
    assert isinstance(out["messages"], Conversation) and out["messages"].analysed
    assert_valid(out["messages"])


def counting_reducer(state: Sequence[AnyMessage], writes: Sequence[Any]) -> Conversation:
    """``merge_conversation``, counting what kind of base LangGraph passed it."""
    analysed = getattr(state, "analysed", None)
    BASES["empty" if not state else f"{type(state).__name__} analysed={analysed}"] += 1
    return merge_conversation(state, writes)


class ReducedState(TypedDict):
    messages: Annotated[list[AnyMessage], ConversationChannel(counting_reducer)]


def test_the_reducer_always_gets_a_value_that_carries_the_analysis() -> None:
    """Reliance 3: ``DeltaChannel`` calls the reducer with its current value (or a copy of
    it) as the base, never with a rebuilt list."""

    def node(state: ReducedState) -> dict[str, Any]:
        return {
            "messages": [AIMessage(f"{len(state['messages'])}", id=f"a{len(state['messages'])}")]
        }

    def again(state: ReducedState) -> str:
        return "node" if len(state["messages"]) < 8 else END

    builder = StateGraph(ReducedState)
    builder.add_node("node", node)
    builder.add_edge(START, "node")
    builder.add_conditional_edges("node", again, ["node", END])
    graph = builder.compile()
    out = graph.invoke({"messages": [HumanMessage("go", id="h")]})
    assert len(out["messages"]) == 8
    # one input write, then per node write one reducer call for the router's fresh read
    # (on a copy) and one for the real update
    assert BASES == Counter({"empty": 1, "Conversation analysed=True": 14})


def test_the_compiled_graph_keeps_the_channel_class_through_copies_and_checkpoints() -> None:
    """Reliance 4: ``StateGraph`` rebuilds an annotation's ``DeltaChannel`` subclass with
    ``cls(reducer, typ, snapshot_frequency=...)``, and ``DeltaChannel.copy()`` /
    ``from_checkpoint()`` build ``self.__class__`` the same way."""
    graph = create_react_agent(ScriptedChatModel(turns=["hi"]), [lookup])
    channel = graph.channels["messages"]
    assert type(channel) is ConversationChannel
    live = channel.copy()
    live.update([[HumanMessage("a", id="a")], [AIMessage("b", id="b")]])
    value = live.get()
    assert isinstance(value, Conversation) and value.analysed
    copied = live.copy()
    assert type(copied) is ConversationChannel
    assert copied.get() == value and copied.get().analysed
    restored = channel.from_checkpoint(list(value))  # a plain list, as a snapshot holds
    assert type(restored) is ConversationChannel
    assert isinstance(restored.get(), Conversation) and restored.get() == value
    assert isinstance(channel.from_checkpoint(None).get(), Conversation)


class SnapshotState(TypedDict):
    messages: Annotated[list[AnyMessage], ConversationChannel(snapshot_frequency=2)]


def test_checkpoints_store_plain_lists(db: str) -> None:
    """Reliance 5: LangGraph's serializer stores a ``list`` subclass as a plain list, so a
    checkpoint holds exactly what ``DeltaChannel(merge_conversation)`` would store."""

    def node(state: SnapshotState) -> dict[str, Any]:
        n = len(state["messages"])
        return {"messages": [AIMessage(f"{n}", id=f"a{n}")]}

    def again(state: SnapshotState) -> str:
        return "node" if len(state["messages"]) < 6 else END

    builder = StateGraph(SnapshotState)
    builder.add_node("node", node)
    builder.add_edge(START, "node")
    builder.add_conditional_edges("node", again, ["node", END])
    cfg: RunnableConfig = {"configurable": {"thread_id": "plain"}}
    with open_saver(db) as saver:
        graph = builder.compile(checkpointer=saver)
        graph.invoke({"messages": [HumanMessage("go", id="h")]}, cfg)
        snapshots = [
            t.checkpoint["channel_values"]["messages"]
            for t in saver.list(cfg)
            if "messages" in t.checkpoint["channel_values"]
        ]
        assert len(snapshots) >= 2
        assert {type(getattr(s, "value", s)) for s in snapshots} == {list}
        last = saver.get_tuple(cfg)
        assert last is not None
        saver.put_writes(last.config, [("messages", graph.get_state(cfg).values["messages"])], "t")
        again_read = saver.get_tuple(last.config)
        assert again_read is not None
        written = [v for _, c, v in again_read.pending_writes or [] if c == "messages"]
        assert [type(v) for v in written] == [list]
    with open_saver(db) as fresh:
        values = builder.compile(checkpointer=fresh).get_state(cfg).values["messages"]
    assert isinstance(values, Conversation)
    assert [m.content for m in values] == ["go", "1", "2", "3", "4", "5"]
    serde = safe_serializer()
    assert type(serde.loads_typed(serde.dumps_typed(values))) is list


# --- a value without the analysis is still right ---------------------------------------


def test_lists_without_the_analysis_are_computed_and_changes_drop_it() -> None:
    rng = random.Random(7)
    conversation: Sequence[AnyMessage] = merge_conversation([], [HumanMessage("go", id="h")])
    for step in range(60):
        if pending_calls(conversation):
            call = pending_calls(conversation)[0]
            write: list[Any] = [ToolMessage("r", tool_call_id=call["id"], id=f"t{step}")]
        elif rng.random() < 0.2:
            write = [HumanMessage(f"more {step}", id=f"h{step}")]
        elif rng.random() < 0.1 and len(conversation) > 3:
            write = [RemoveMessage(id=str(conversation[1].id))]
        else:
            calls = [
                {"name": "t", "args": {}, "id": f"c{step}.{j}"} for j in range(rng.randint(0, 3))
            ]
            write = [new_turn(conversation, AIMessage("", id=f"a{step}", tool_calls=calls))]
        plain = merge_conversation(list(conversation), write)  # from a list with no analysis
        conversation = merge_conversation(conversation, write)
        assert plain == conversation
        assert_same_analysis(conversation)
        assert_same_analysis(plain)
    assert isinstance(conversation, Conversation) and conversation.analysed
    changed = copy.copy(conversation)
    assert changed.analysed
    changed.append(AIMessage("", id="x", tool_calls=[{"name": "t", "args": {}, "id": "cx"}]))
    assert not changed.analysed
    assert [c["id"] for c in pending_calls(changed)] == (
        [c["id"] for c in pending_calls(conversation)] or ["cx"]
    )
    assert changed.analysed  # computed once and kept
    del changed[-1]
    assert not changed.analysed and pending_calls(changed) == pending_calls(conversation)
    assert conversation.analysed  # the original's analysis is untouched


def test_a_parent_state_with_add_messages_gets_the_same_answers() -> None:
    model = ScriptedChatModel(policy=_script("p", 3, 2))
    agent = create_react_agent(model, [lookup], name="agent")

    class Parent(TypedDict):
        messages: Annotated[list[AnyMessage], add_messages]

    builder = StateGraph(Parent)
    builder.add_node("agent", agent)
    builder.add_edge(START, "agent")
    builder.add_edge("agent", END)
    out = builder.compile().invoke({"messages": [HumanMessage("go", id="go")]})
    assert type(out["messages"]) is list  # the parent's own reducer: no analysis carried
    assert_valid(out["messages"])
    assert_same_analysis(out["messages"])
    assert run_steps(out["messages"]) == 4
    assert RUNS == Counter({f"p:{s}.{j}": 1 for s in range(3) for j in range(2)})


# --- conversations interleaving in one process -------------------------------------------


class Lockstep:
    """Makes two agents' tool calls alternate strictly: a, b, a, b, ..."""

    def __init__(self, order: Sequence[str]) -> None:
        self.order = list(order)
        self.turn = 0
        self.ran: list[str] = []

    def mine(self, agent: str) -> bool:
        return self.order[self.turn % len(self.order)] == agent

    def wait(self, agent: str) -> None:
        deadline = time.monotonic() + 20
        while not self.mine(agent):
            assert time.monotonic() < deadline, f"{agent} never got its turn: {self.ran}"
            time.sleep(0.0005)

    async def await_turn(self, agent: str) -> None:
        deadline = time.monotonic() + 20
        while not self.mine(agent):
            assert time.monotonic() < deadline, f"{agent} never got its turn: {self.ran}"
            await asyncio.sleep(0)

    def done(self, agent: str) -> None:
        self.ran.append(agent)
        self.turn += 1


STEPS, CALLS = 8, 2


def _expected(*agents: str) -> Counter[str]:
    return Counter({f"{a}:{s}.{j}": 1 for a in agents for s in range(STEPS) for j in range(CALLS)})


def _check_run(chunks: list[dict[str, Any]]) -> None:
    for chunk in chunks:
        assert isinstance(chunk["messages"], Conversation) and chunk["messages"].analysed
    final = chunk["messages"]
    assert_valid(final)
    assert_same_analysis(final)
    assert len(final) == 1 + STEPS * (1 + CALLS) + 1
    assert run_steps(final) == STEPS + 1 and pending_calls(final) == []


def test_two_agents_in_two_threads_interleave(tmp_path: Any) -> None:
    step = Lockstep(["a", "b"])

    @tool("lookup")
    def stepped(query: str) -> str:
        """Look a query up, in turn with the other agent."""
        agent = query.split(":")[0]
        step.wait(agent)
        RUNS[query] += 1
        step.done(agent)
        return f"result for {query}"

    chunks: dict[str, list[dict[str, Any]]] = {}
    errors: list[BaseException] = []
    with open_saver(str(tmp_path / "two.db")) as saver:
        agents = {
            name: create_react_agent(
                ScriptedChatModel(policy=_script(name, STEPS, CALLS)),
                [stepped],
                checkpointer=saver,
                name=name,
            )
            for name in ("a", "b")
        }

        def run(name: str) -> None:
            try:
                cfg: RunnableConfig = {"configurable": {"thread_id": name}}
                goal = {"messages": [HumanMessage("go", id=f"{name}-go")]}
                chunks[name] = list(agents[name].stream(goal, cfg, stream_mode="values"))
            except BaseException as error:  # reported below, in the test's thread
                errors.append(error)

        threads = [threading.Thread(target=run, args=(n,)) for n in ("a", "b")]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert errors == []
        for name in ("a", "b"):
            _check_run(chunks[name])
            stored = agents[name].get_state({"configurable": {"thread_id": name}})
            assert stored.values["messages"] == chunks[name][-1]["messages"]
    assert step.ran == ["a", "b"] * (STEPS * CALLS)  # the steps really interleaved
    assert RUNS == _expected("a", "b")


async def test_two_agents_in_two_asyncio_tasks_interleave() -> None:
    step = Lockstep(["a", "b"])

    @tool("lookup")
    async def stepped(query: str) -> str:
        """Look a query up, in turn with the other agent."""
        agent = query.split(":")[0]
        await step.await_turn(agent)
        RUNS[query] += 1
        step.done(agent)
        return f"result for {query}"

    agents = {
        name: create_react_agent(
            ScriptedChatModel(policy=_script(name, STEPS, CALLS)), [stepped], name=name
        )
        for name in ("a", "b")
    }

    async def run(name: str) -> list[dict[str, Any]]:
        goal = {"messages": [HumanMessage("go", id=f"{name}-go")]}
        return [c async for c in agents[name].astream(goal, stream_mode="values")]

    results = await asyncio.wait_for(asyncio.gather(run("a"), run("b")), 60)
    for chunks in results:
        _check_run(chunks)
    assert step.ran == ["a", "b"] * (STEPS * CALLS)
    assert RUNS == _expected("a", "b")


@pytest.mark.parametrize("parent_state", ["ReActState", "add_messages"])
def test_a_parent_graph_and_its_subgraph_share_messages(parent_state: str) -> None:
    """The parent and the agent subgraph take turns on one conversation, with pauses."""

    class Parent(TypedDict):
        messages: Annotated[list[AnyMessage], add_messages]

    def policy(messages: list[BaseMessage]) -> Any:
        human = sum(isinstance(m, HumanMessage) for m in messages)
        turn = 0
        for m in reversed(messages):
            if isinstance(m, HumanMessage):
                break
            turn += isinstance(m, AIMessage)
        if turn == 0:
            return [{"name": "lookup", "args": {"query": f"p:{human}.0"}}]
        if turn == 1:
            return [{"name": "execute", "args": {"action": f"act{human}"}}]
        return f"answer {human}"

    agent = create_react_agent(ScriptedChatModel(policy=policy), [lookup, execute], name="agent")

    def follow_up(state: Any) -> dict[str, Any]:
        RUNS["follow_up"] += 1
        n = sum(isinstance(m, HumanMessage) for m in state["messages"])
        return {"messages": [HumanMessage(f"and then {n}", id=f"follow{n}")]}

    def more(state: Any) -> str:
        return (
            "follow_up" if sum(isinstance(m, HumanMessage) for m in state["messages"]) < 3 else END
        )

    builder: StateGraph[Any] = StateGraph(ReActState if parent_state == "ReActState" else Parent)
    builder.add_node("agent", agent)
    builder.add_node("follow_up", follow_up)
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", more, ["follow_up", END])
    builder.add_edge("follow_up", "agent")
    parent = builder.compile(checkpointer=InMemorySaver())
    cfg: RunnableConfig = {"configurable": {"thread_id": "shared"}}
    out = parent.invoke({"messages": [HumanMessage("start", id="start")]}, cfg)
    pauses = 0
    while out.get("__interrupt__"):
        pauses += 1
        out = parent.invoke(Command(resume="yes"), cfg)
    assert pauses == 3
    final = out["messages"]
    assert_valid(final)
    assert_same_analysis(final)
    assert [m.content for m in final if isinstance(m, HumanMessage)] == [
        "start",
        "and then 1",
        "and then 2",
    ]
    assert [m.content for m in final if isinstance(m, AIMessage) and not m.tool_calls] == [
        "answer 1",
        "answer 2",
        "answer 3",
    ]
    if parent_state == "ReActState":
        assert isinstance(final, Conversation) and final.analysed
    assert (
        Counter(
            {
                **{f"p:{h}.0": 1 for h in (1, 2, 3)},
                **{f"execute act{h}": 2 for h in (1, 2, 3)},  # once to pause, once resumed
                **{f"execute act{h}: yes": 1 for h in (1, 2, 3)},
                "follow_up": 2,
            }
        )
        == RUNS
    )


# --- read back from a new saver, then continued ------------------------------------------


def test_a_thread_read_back_in_a_new_saver_continues(db: str) -> None:
    cfg: RunnableConfig = {"configurable": {"thread_id": "again"}}
    with open_saver(db) as first:
        model = ScriptedChatModel(policy=_script("s", STEPS, CALLS))
        agent = create_react_agent(model, [lookup], checkpointer=first)
        agent.invoke({"messages": [HumanMessage("go", id="go")]}, cfg)
    with open_saver(db) as second:
        agent = create_react_agent(
            ScriptedChatModel(policy=_script("t", 2, CALLS)), [lookup], checkpointer=second
        )
        before = agent.get_state(cfg).values["messages"]
        assert isinstance(before, Conversation)
        assert_same_analysis(before)
        chunks = list(
            agent.stream({"messages": [HumanMessage("more", id="more")]}, cfg, stream_mode="values")
        )
    for chunk in chunks:
        assert chunk["messages"].analysed
    final = chunks[-1]["messages"]
    assert final[: len(before)] == before
    assert_valid(final)
    assert run_steps(final) == 3
    assert RUNS == _expected("s") + Counter(
        {f"t:{s}.{j}": 1 for s in range(2) for j in range(CALLS)}
    )


def test_a_paused_thread_resumes_from_a_new_saver(db: str) -> None:
    def policy(messages: list[BaseMessage]) -> Any:
        asked = [m for m in messages if isinstance(m, AIMessage)]
        if len(asked) == 0:
            return [
                {"name": "lookup", "args": {"query": "r:0.0"}},
                {"name": "execute", "args": {"action": "pay"}},
                {"name": "lookup", "args": {"query": "r:0.1"}},
            ]
        return "paid"

    cfg: RunnableConfig = {"configurable": {"thread_id": "paused"}}
    with open_saver(db) as first:
        agent = create_react_agent(
            ScriptedChatModel(policy=policy), [lookup, execute], checkpointer=first
        )
        out = agent.invoke({"messages": [HumanMessage("pay", id="pay")]}, cfg)
        assert out["__interrupt__"][0].value["payload"] == {"action": "pay"}
    with open_saver(db) as second:
        agent = create_react_agent(
            ScriptedChatModel(policy=policy), [lookup, execute], checkpointer=second
        )
        paused = agent.get_state(cfg).values["messages"]
        assert [c["args"] for c in pending_calls(paused)] == [{"action": "pay"}, {"query": "r:0.1"}]
        out = agent.invoke(Command(resume="approved"), cfg)
    final = out["messages"]
    assert final[-1].content == "paid"
    assert_valid(final)
    assert_same_analysis(final)
    assert Counter({"r:0.0": 1, "r:0.1": 1, "execute pay": 2, "execute pay: approved": 1}) == RUNS


class _InputIdsAtPut(InMemorySaver):
    """Records, when the loop saves the input checkpoint (in its background thread), whether
    each message object of the input (the ``__start__`` channel) already has its id."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str | None] = []

    def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        start = checkpoint["channel_values"].get("__start__")
        if metadata.get("source") == "input" and isinstance(start, dict):
            self.seen.extend(m.id for m in start["messages"] if isinstance(m, BaseMessage))
        return super().put(config, checkpoint, metadata, new_versions)


@pytest.mark.parametrize("sync", [True, False], ids=["invoke", "ainvoke"])
def test_the_input_messages_have_their_ids_before_the_input_checkpoint_is_saved(
    sync: bool,
) -> None:
    """The input checkpoint holds the caller's message objects and is serialized in a
    background thread while the first task runs: their ids are given before the run starts,
    not by ``__start__``'s router mid-save (which made LangGraph's immutable-checkpoint saver
    of the reference suite see the saved checkpoint change, now and then, under load)."""
    saver = _InputIdsAtPut()
    agent = create_react_agent(
        ScriptedChatModel(turns=["hi", "again", "ok"]), [], checkpointer=saver
    )
    config: RunnableConfig = {"configurable": {"thread_id": "ids"}}
    first, second = HumanMessage("hello"), HumanMessage("world")
    for message in (first, second):
        go = {"messages": [message]}
        out = agent.invoke(go, config) if sync else asyncio.run(agent.ainvoke(go, config))
        assert message.id is not None
        assert out["messages"][-2].id == message.id  # the id the run stored is the one given
    assert saver.seen == [first.id, second.id]
    out = agent.invoke({"messages": [HumanMessage("kept", id="mine")]}, config)
    assert [m.id for m in out["messages"] if m.content == "kept"] == ["mine"]  # a given id kept
