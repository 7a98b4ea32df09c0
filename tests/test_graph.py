"""``create_react_agent``: the compiled graph, its tool node, and its life inside LangGraph."""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, TypedDict, cast

import pytest
from langchain_core.language_models import FakeListChatModel
from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command, StateSnapshot

from dynavec_langgraph import AgentTool, Message, ToolCall, create_react_agent, interrupt, tool
from dynavec_langgraph._dynavec.conversion import from_dynavec
from dynavec_langgraph._graph.state import MessageStorage
from dynavec_langgraph._names import MODEL_KWARGS_KEY
from dynavec_langgraph.testing import ScriptedChatModel
from tests.openai_server import OpenAIServer


def assert_provider_valid(messages: Sequence[BaseMessage]) -> None:
    """Fail unless every assistant message with tool calls is followed immediately by exactly
    one tool message per call id (and no tool message answers anything else)."""
    pending: list[str] = []
    for index, message in enumerate(messages):
        if isinstance(message, ToolMessage):
            assert message.tool_call_id in pending, (
                f"message {index} answers {message.tool_call_id!r}, which is not an "
                f"unanswered call of the preceding assistant message: {list(messages)!r}"
            )
            pending.remove(message.tool_call_id)
            continue
        assert not pending, (
            f"message {index} ({message.type}) comes before the answers to {pending}: "
            f"{list(messages)!r}"
        )
        if isinstance(message, AIMessage):
            ids = [c["id"] or "" for c in message.tool_calls]
            ids += [c.get("id") or "" for c in message.invalid_tool_calls]
            assert all(ids), f"message {index} has a tool call without an id"
            assert len(set(ids)) == len(ids), f"message {index} repeats a tool call id"
            pending = ids
    assert not pending, f"the conversation ends with unanswered calls {pending}"


async def drive(graph: Any, graph_input: Any, config: RunnableConfig, use_async: bool) -> Any:
    """Run ``graph`` with ``invoke`` or ``ainvoke``; tests parametrize over both. The output
    has every state key, the bookkeeping too (``output_keys=``: these tests check it)."""
    keys = list(graph.stream_channels_list)
    if use_async:
        return await graph.ainvoke(graph_input, config, output_keys=keys)
    return graph.invoke(graph_input, config, output_keys=keys)


def thread(thread_id: str = "t1") -> RunnableConfig:
    return {"configurable": {"thread_id": thread_id}}


SYNC_AND_ASYNC = pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])


def _ai(*ids: str) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": "t", "args": {}, "id": i} for i in ids])


def _answer(call_id: str) -> ToolMessage:
    return ToolMessage("ok", tool_call_id=call_id)


@pytest.mark.parametrize(
    "conversation",
    [
        [HumanMessage("q"), _ai("a", "b"), _answer("a"), HumanMessage("more"), _answer("b")],
        [HumanMessage("q"), _ai("a"), _answer("a"), _answer("a")],
        [HumanMessage("q"), _answer("x")],
        [HumanMessage("q"), _ai("a", "b"), _answer("a")],
        [HumanMessage("q"), _ai("a", "a"), _answer("a"), _answer("a")],
    ],
    ids=["interleaved", "answered-twice", "orphan", "unanswered", "duplicate-id"],
)
def test_provider_valid_helper_rejects_broken_conversations(
    conversation: list[BaseMessage],
) -> None:
    with pytest.raises(AssertionError):
        assert_provider_valid(conversation)
    assert_provider_valid([HumanMessage("q"), _ai("a", "b"), _answer("b"), _answer("a")])


STORAGES = pytest.mark.parametrize("storage", ["delta", "full"])


def check_model_calls(model: ScriptedChatModel) -> None:
    """Everything the model ever received was a conversation a provider accepts."""
    assert model.calls, "the model was never called"
    for received in model.calls:
        assert_provider_valid(received)


def tool_answers(messages: Sequence[BaseMessage]) -> list[tuple[str, str]]:
    """``(tool name, observation)`` of every tool message, in order."""
    return [(m.name or "", str(m.content)) for m in messages if isinstance(m, ToolMessage)]


class Batch:
    """Three tools ``first``, ``ask`` (interrupts) and ``last``, counting what ran how often."""

    def __init__(self, node_id: str = "approve") -> None:
        self.runs = Counter[str]()
        self.decisions: list[Any] = []
        runs, decisions = self.runs, self.decisions

        @tool
        def first(x: int) -> str:
            runs["first"] += 1
            return f"first {x}"

        @tool
        def ask(x: int) -> str:
            runs["ask"] += 1
            decision = interrupt(node_id, {"x": x})
            runs["ask_decided"] += 1
            decisions.append(decision)
            return f"ask {x}: {decision}"

        @tool
        def last(x: int) -> str:
            runs["last"] += 1
            return f"last {x}"

        self.tools = [first, ask, last]

    @staticmethod
    def turn(*names: str) -> list[dict[str, Any]]:
        return [{"name": n, "args": {"x": i}} for i, n in enumerate(names, 1)]


# --- runs that end ----------------------------------------------------------------------------


@SYNC_AND_ASYNC
@STORAGES
async def test_completed_run(use_async: bool, storage: MessageStorage) -> None:
    batch = Batch()
    model = ScriptedChatModel(turns=[Batch.turn("first", "last"), "All done."])
    graph = create_react_agent(
        model, batch.tools, system_prompt="Be brief.", message_storage=storage
    )
    assert isinstance(graph, CompiledStateGraph)
    out = await drive(graph, {"messages": [("user", "go")]}, {}, use_async)
    assert out["termination_reason"] == "completed"
    assert out["step"] == 2
    assert tool_answers(out["messages"]) == [("first", "first 1"), ("last", "last 2")]
    assert out["messages"][-1].content == "All done."
    assert [type(m) for m in out["messages"]] == [
        HumanMessage,
        AIMessage,
        ToolMessage,
        ToolMessage,
        AIMessage,
    ]
    assert batch.runs == Counter({"first": 1, "last": 1})
    assert len(model.calls) == 2
    # the system prompt is sent every time and never stored
    assert all(isinstance(c[0], SystemMessage) for c in model.calls)
    assert model.calls[0][0].content == "Be brief."
    assert [type(m) for m in model.calls[1][1:]] == [type(m) for m in out["messages"][:-1]]
    check_model_calls(model)


@SYNC_AND_ASYNC
async def test_second_user_message_continues_the_thread(use_async: bool) -> None:
    model = ScriptedChatModel(turns=["one", "two"])
    graph = create_react_agent(model, [], checkpointer=InMemorySaver())
    await drive(graph, {"messages": [("user", "a")]}, thread(), use_async)
    out = await drive(graph, {"messages": [("user", "b")]}, thread(), use_async)
    assert [m.content for m in out["messages"]] == ["a", "one", "b", "two"]
    assert (out["step"], out["termination_reason"]) == (1, "completed")
    check_model_calls(model)


@SYNC_AND_ASYNC
@pytest.mark.parametrize(("max_steps", "expected_calls"), [(3, 3), (1, 1), (0, 1), (-4, 1)])
async def test_max_steps(max_steps: int, expected_calls: int, use_async: bool) -> None:
    batch = Batch()
    model = ScriptedChatModel(policy=lambda messages: Batch.turn("first"))
    graph = create_react_agent(model, batch.tools, max_steps=max_steps)
    out = await drive(graph, {"messages": [("user", "loop")]}, {}, use_async)
    assert out["termination_reason"] == "max_steps_reached"
    assert out["step"] == expected_calls
    assert len(model.calls) == expected_calls
    assert batch.runs == Counter({"first": expected_calls})
    assert isinstance(out["messages"][-1], ToolMessage)
    check_model_calls(model)


@SYNC_AND_ASYNC
async def test_error_observations(use_async: bool) -> None:
    runs = Counter[str]()

    @tool
    def add(a: int, b: int) -> int:
        runs["add"] += 1
        return a + b

    @tool
    def explode(reason: str) -> str:
        runs["explode"] += 1
        raise RuntimeError(f"boom: {reason}")

    broken = AIMessage(
        content="",
        tool_calls=[
            {"name": "nope", "args": {"q": 1}, "id": "c1", "type": "tool_call"},
            {"name": "explode", "args": {"reason": "disk"}, "id": "c2", "type": "tool_call"},
            {"name": "add", "args": {"a": "many", "b": 1}, "id": "c3", "type": "tool_call"},
            {"name": "add", "args": {"a": 2, "b": 3}, "id": "c5", "type": "tool_call"},
        ],
        invalid_tool_calls=[
            {"name": "add", "args": '{"a": 1,', "id": "c4", "error": "truncated", "type": "x"}
        ],
    )
    model = ScriptedChatModel(turns=[broken, "recovered"])
    graph = create_react_agent(model, [add, explode])
    out = await drive(graph, {"messages": [("user", "go")]}, {}, use_async)
    answers = {
        m.tool_call_id: str(m.content) for m in out["messages"] if isinstance(m, ToolMessage)
    }
    assert answers["c1"] == "Error: Tool 'nope' is not registered in available tools."
    assert answers["c2"] == "Error executing tool 'explode': boom: disk"
    assert answers["c3"].startswith("Error executing tool 'add': invalid arguments: a: ")
    assert answers["c4"].startswith("Error executing tool 'add': ")
    assert "JSON" in answers["c4"]
    assert answers["c5"] == "5"
    assert len(answers) == 5
    assert runs == Counter({"explode": 1, "add": 1})
    assert out["messages"][-1].content == "recovered"
    assert out["termination_reason"] == "completed"
    check_model_calls(model)


# --- the sequential tool node -------------------------------------------------------------------


@SYNC_AND_ASYNC
@STORAGES
async def test_pause_in_the_middle_of_a_batch(use_async: bool, storage: MessageStorage) -> None:
    batch = Batch()
    model = ScriptedChatModel(turns=[Batch.turn("first", "ask", "last"), "Finished."])
    graph = create_react_agent(
        model, batch.tools, checkpointer=InMemorySaver(), message_storage=storage
    )
    out = await drive(graph, {"messages": [("user", "go")]}, thread(), use_async)

    (pending,) = out["__interrupt__"]
    assert pending.value["node_id"] == "approve"
    assert pending.value["payload"] == {"x": 2}
    assert batch.runs == Counter({"first": 1, "ask": 1})  # last has not run
    assert tool_answers(out["messages"]) == [("first", "first 1")]
    assert out["termination_reason"] is None
    snapshot = graph.get_state(thread())
    assert snapshot.next == ("tools",)
    assert snapshot.interrupts == (pending,)

    out = await drive(graph, Command(resume="yes"), thread(), use_async)
    assert batch.runs == Counter({"first": 1, "ask": 2, "ask_decided": 1, "last": 1})
    assert batch.decisions == ["yes"]
    assert tool_answers(out["messages"]) == [
        ("first", "first 1"),
        ("ask", "ask 2: yes"),
        ("last", "last 3"),
    ]
    assert (out["termination_reason"], out["step"]) == ("completed", 2)
    assert graph.get_state(thread()).interrupts == ()
    check_model_calls(model)


@SYNC_AND_ASYNC
async def test_two_interrupts_in_one_batch(use_async: bool) -> None:
    runs = Counter[str]()
    decisions: dict[str, list[Any]] = {"one": [], "two": []}

    def make(name: str) -> AgentTool:
        @tool(name)
        def approve(amount: int) -> str:
            runs[name] += 1
            decision = interrupt(f"approve_{name}", {"amount": amount})
            decisions[name].append(decision)
            return f"{name}: {decision}"

        return approve

    model = ScriptedChatModel(
        turns=[
            [{"name": "one", "args": {"amount": 1}}, {"name": "two", "args": {"amount": 2}}],
            "ok",
        ]
    )
    graph = create_react_agent(model, [make("one"), make("two")], checkpointer=InMemorySaver())
    out = await drive(graph, {"messages": [("user", "go")]}, thread(), use_async)
    (first,) = out["__interrupt__"]
    assert (first.value["node_id"], first.value["payload"]) == ("approve_one", {"amount": 1})
    assert runs == Counter({"one": 1})

    out = await drive(graph, Command(resume={"answer": "A"}), thread(), use_async)
    (second,) = out["__interrupt__"]
    assert (second.value["node_id"], second.value["payload"]) == ("approve_two", {"amount": 2})
    assert second.value["tool_call"]["name"] == "two"
    assert second.id != first.id
    assert runs == Counter({"one": 2, "two": 1})
    assert decisions == {"one": [{"answer": "A"}], "two": []}
    assert tool_answers(out["messages"]) == [("one", "one: {'answer': 'A'}")]

    out = await drive(graph, Command(resume="B"), thread(), use_async)
    assert "__interrupt__" not in out
    assert decisions == {"one": [{"answer": "A"}], "two": ["B"]}
    assert runs == Counter({"one": 2, "two": 2})
    assert tool_answers(out["messages"]) == [("one", "one: {'answer': 'A'}"), ("two", "two: B")]
    assert out["termination_reason"] == "completed"
    check_model_calls(model)


@STORAGES
def test_every_tool_call_is_checkpointed_on_its_own(storage: MessageStorage) -> None:
    batch = Batch()
    model = ScriptedChatModel(turns=[Batch.turn("first", "last", "first"), "done"])
    graph = create_react_agent(
        model, batch.tools, checkpointer=InMemorySaver(), message_storage=storage
    )
    graph.invoke({"messages": [("user", "go")]}, thread())
    history = list(reversed(list(graph.get_state_history(thread()))))
    answered = [len(tool_answers(s.values.get("messages", []))) for s in history]
    # one checkpoint after each call: 0 -> 1 -> 2 -> 3 answers, never two at once
    assert answered == [0, 0, 0, 1, 2, 3, 3]
    assert [s.next for s in history] == [
        ("__start__",),
        ("agent",),
        ("tools",),
        ("tools",),
        ("tools",),
        ("agent",),
        (),
    ]
    assert batch.runs == Counter({"first": 2, "last": 1})
    check_model_calls(model)


@SYNC_AND_ASYNC
@STORAGES
async def test_new_input_on_a_paused_thread(use_async: bool, storage: MessageStorage) -> None:
    batch = Batch()
    model = ScriptedChatModel(turns=[Batch.turn("first", "ask", "last"), "Handled both."])
    graph = create_react_agent(
        model, batch.tools, checkpointer=InMemorySaver(), message_storage=storage
    )
    out = await drive(graph, {"messages": [("user", "go")]}, thread(), use_async)
    (before,) = out["__interrupt__"]

    out = await drive(graph, {"messages": [("user", "and also this")]}, thread(), use_async)
    (after,) = out["__interrupt__"]
    assert (after.value["node_id"], after.value["payload"]) == ("approve", {"x": 2})
    assert after.value["tool_call"] == before.value["tool_call"]
    assert graph.get_state(thread()).interrupts == (after,)
    assert batch.runs["first"] == 1
    assert batch.runs["last"] == 0
    assert batch.runs["ask_decided"] == 0
    assert tool_answers(out["messages"]) == [("first", "first 1")]
    assert len(model.calls) == 1  # the model was not called with the half-answered turn
    assert "and also this" in [m.content for m in out["messages"]]

    out = await drive(graph, Command(resume="approved"), thread(), use_async)
    assert batch.runs["first"] == 1
    assert (batch.runs["ask_decided"], batch.runs["last"]) == (1, 1)
    assert batch.decisions == ["approved"]
    assert tool_answers(out["messages"]) == [
        ("first", "first 1"),
        ("ask", "ask 2: approved"),
        ("last", "last 3"),
    ]
    assert out["messages"][-1].content == "Handled both."
    assert len(model.calls) == 2
    contents = [m.content for m in model.calls[1] if isinstance(m, HumanMessage)]
    assert contents == ["go", "and also this"]
    assert_provider_valid(out["messages"])
    check_model_calls(model)


# --- the agent inside a parent graph ---------------------------------------------------------


class ParentState(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


@SYNC_AND_ASYNC
@STORAGES
async def test_agent_as_a_node_of_a_parent_graph(use_async: bool, storage: MessageStorage) -> None:
    batch = Batch()
    model = ScriptedChatModel(turns=[Batch.turn("first", "ask", "last"), "Sub done."])
    agent = create_react_agent(
        model, batch.tools, checkpointer=None, name="worker", message_storage=storage
    )
    runs = Counter[str]()

    def after(state: ParentState) -> dict[str, Any]:
        runs["after"] += 1
        return {"messages": [("assistant", f"parent saw {len(state['messages'])} messages")]}

    builder = StateGraph(ParentState)
    builder.add_node("worker", agent)
    builder.add_node("after", after)
    builder.add_edge(START, "worker")
    builder.add_edge("worker", "after")
    builder.add_edge("after", END)
    saver = InMemorySaver()
    parent = builder.compile(checkpointer=saver)

    out = await drive(parent, {"messages": [("user", "go")]}, thread(), use_async)
    (pending,) = out["__interrupt__"]
    assert pending.value["node_id"] == "approve"
    assert pending.value["payload"] == {"x": 2}
    assert batch.runs == Counter({"first": 1, "ask": 1})
    assert runs["after"] == 0
    snapshot = parent.get_state(thread(), subgraphs=True)
    assert snapshot.interrupts == (pending,)
    (task,) = snapshot.tasks
    assert task.name == "worker"
    assert isinstance(task.state, StateSnapshot)
    assert tool_answers(task.state.values["messages"]) == [("first", "first 1")]
    assert task.state.next == ("tools",)
    assert list(saver.list(thread()))  # the parent's checkpointer holds the thread

    out = await drive(parent, Command(resume="ok"), thread(), use_async)
    assert batch.runs == Counter({"first": 1, "ask": 2, "ask_decided": 1, "last": 1})
    assert batch.decisions == ["ok"]
    assert runs["after"] == 1
    assert tool_answers(out["messages"]) == [
        ("first", "first 1"),
        ("ask", "ask 2: ok"),
        ("last", "last 3"),
    ]
    assert out["messages"][-1].content == "parent saw 6 messages"
    assert parent.get_state(thread()).interrupts == ()
    assert_provider_valid(out["messages"])
    check_model_calls(model)


# --- models ------------------------------------------------------------------------------------


@dataclass
class DynavecResult:
    message: Message


class DynavecStyleModel:
    """A dynavec chat model: ``invoke(messages, tools=...)`` -> result with ``.message``."""

    def __init__(self) -> None:
        self.received: list[list[Message]] = []
        self.tool_names: list[list[str]] = []
        self.kwargs: list[dict[str, Any]] = []

    def invoke(self, messages: list[Message], tools: Any = None, **kwargs: Any) -> DynavecResult:
        self.received.append(list(messages))
        self.tool_names.append([t.name for t in tools or []])
        self.kwargs.append(kwargs)
        if len(self.received) == 1:
            call = ToolCall(id="dv_1", name="first", arguments='{"x": 7}')
            return DynavecResult(Message("assistant", "calling first", [call]))
        return DynavecResult(Message("assistant", "dynavec done"))


@SYNC_AND_ASYNC
async def test_dynavec_style_model(use_async: bool) -> None:
    batch = Batch()
    model = DynavecStyleModel()
    graph = create_react_agent(model, batch.tools, system_prompt="sys")
    out = await drive(graph, {"messages": [("user", "go")]}, {}, use_async)
    assert out["messages"][-1].content == "dynavec done"
    assert tool_answers(out["messages"]) == [("first", "first 7")]
    assert batch.runs == Counter({"first": 1})
    assert model.tool_names == [["first", "ask", "last"]] * 2
    second = model.received[1]
    assert [m.role for m in second] == ["system", "user", "assistant", "tool"]
    assert second[2].tool_calls == [ToolCall("dv_1", "first", '{"x": 7}')]
    assert (second[3].tool_call_id, second[3].content) == ("dv_1", "first 7")
    for received in model.received:
        assert_provider_valid([from_dynavec(m) for m in received])


@SYNC_AND_ASYNC
async def test_model_kwargs_reach_the_model(use_async: bool) -> None:
    batch = Batch()
    model = ScriptedChatModel(turns=[Batch.turn("first"), "done"])
    graph = create_react_agent(model, batch.tools)
    config: RunnableConfig = {"configurable": {MODEL_KWARGS_KEY: {"temperature": 0.1, "seed": 7}}}
    await drive(graph, {"messages": [("user", "go")]}, config, use_async)
    assert model.call_kwargs == [{"temperature": 0.1, "seed": 7}] * 2
    check_model_calls(model)


def test_model_without_bind_tools_fails_at_build_time() -> None:
    batch = Batch()
    with pytest.raises(TypeError, match="FakeListChatModel cannot call tools"):
        create_react_agent(FakeListChatModel(responses=["x"]), batch.tools)
    with pytest.raises(TypeError, match="not a chat model"):
        create_react_agent(42, batch.tools)  # type: ignore[arg-type]


def test_bad_message_storage() -> None:
    with pytest.raises(ValueError, match="message_storage='diff'"):
        create_react_agent(ScriptedChatModel(), [], message_storage=cast(Any, "diff"))


# --- a SQLite file ----------------------------------------------------------------------------


def _sqlite_agent(path: Path, batch: Batch, model: ScriptedChatModel) -> tuple[Any, Any]:
    conn = sqlite3.connect(path, check_same_thread=False)
    return create_react_agent(model, batch.tools, checkpointer=SqliteSaver(conn)), conn


def test_sqlite_file_pause_and_resume(tmp_path: Path) -> None:
    path = tmp_path / "threads.sqlite"
    batch = Batch()
    model = ScriptedChatModel(turns=[Batch.turn("first", "ask", "last"), "Stored."])
    graph, conn = _sqlite_agent(path, batch, model)
    out = graph.invoke({"messages": [("user", "go")]}, thread("sql"))
    assert out["__interrupt__"][0].value["payload"] == {"x": 2}
    conn.close()

    # a fresh graph on a fresh connection to the same file resumes the thread
    graph, conn = _sqlite_agent(path, batch, model)
    assert graph.get_state(thread("sql")).interrupts[0].value["node_id"] == "approve"
    out = graph.invoke(Command(resume="fine"), thread("sql"))
    conn.close()
    assert batch.runs == Counter({"first": 1, "ask": 2, "ask_decided": 1, "last": 1})
    assert tool_answers(out["messages"])[1:] == [("ask", "ask 2: fine"), ("last", "last 3")]
    assert out["messages"][-1].content == "Stored."
    check_model_calls(model)


async def test_async_sqlite_file_pause_and_resume(tmp_path: Path) -> None:
    path = str(tmp_path / "threads.sqlite")
    batch = Batch()
    model = ScriptedChatModel(turns=[Batch.turn("first", "ask", "last"), "Stored."])
    async with AsyncSqliteSaver.from_conn_string(path) as saver:
        graph = create_react_agent(model, batch.tools, checkpointer=saver)
        out = await graph.ainvoke({"messages": [("user", "go")]}, thread("sql"))
        assert out["__interrupt__"][0].value["payload"] == {"x": 2}
    async with AsyncSqliteSaver.from_conn_string(path) as saver:
        graph = create_react_agent(model, batch.tools, checkpointer=saver)
        out = await graph.ainvoke(Command(resume="fine"), thread("sql"))
    assert batch.runs == Counter({"first": 1, "ask": 2, "ask_decided": 1, "last": 1})
    assert tool_answers(out["messages"])[1:] == [("ask", "ask 2: fine"), ("last", "last 3")]
    check_model_calls(model)


# --- a "provider:model" string against the local OpenAI-compatible server ---------------------


def test_provider_model_string_pauses_and_resumes_over_http(
    openai: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("OPENAI_BASE_URL", openai.url)
    monkeypatch.delenv("OPENAI_API_BASE", raising=False)  # it would take precedence
    openai.script(Batch.turn("first", "ask", "last"), "Stored.")
    batch = Batch()
    graph = create_react_agent(
        "openai:gpt-test", batch.tools, system_prompt="Be brief.", checkpointer=InMemorySaver()
    )

    out = graph.invoke({"messages": [("user", "go")]}, thread("str"))
    assert [i.value["node_id"] for i in out["__interrupt__"]] == ["approve"]
    assert out["__interrupt__"][0].value["payload"] == {"x": 2}
    assert batch.runs == Counter({"first": 1, "ask": 1})
    assert len(openai.requests) == 1
    first = openai.requests[0]
    assert first["model"] == "gpt-test"
    assert [t["function"]["name"] for t in first["tools"]] == ["first", "ask", "last"]
    assert [(m["role"], m["content"]) for m in first["messages"]] == [
        ("system", "Be brief."),
        ("user", "go"),
    ]

    out = graph.invoke(Command(resume="fine"), thread("str"))
    assert batch.runs == Counter({"first": 1, "ask": 2, "ask_decided": 1, "last": 1})
    assert batch.decisions == ["fine"]
    assert tool_answers(out["messages"]) == [
        ("first", "first 1"),
        ("ask", "ask 2: fine"),
        ("last", "last 3"),
    ]
    assert out["messages"][-1].content == "Stored."
    assert_provider_valid(out["messages"])
    assert len(openai.requests) == 2
    sent = openai.requests[1]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "tool", "tool"]
    call_ids = [c["id"] for c in sent[2]["tool_calls"]]
    assert [m["tool_call_id"] for m in sent[3:]] == call_ids
    assert openai.rejections == []


@SYNC_AND_ASYNC
async def test_outputs_have_the_state_schema_keys_only(use_async: bool) -> None:
    """As the prebuilt agent's: ``invoke`` and the ``values`` / ``updates`` streams give the
    state's keys (``messages``), no bookkeeping and no default ``AIMessage.name``; the
    bookkeeping is in the thread state, and in the output when asked for (``output_keys=``)."""

    @tool
    def look(topic: str) -> str:
        """Look it up."""
        return f"found {topic}"

    turns: list[Any] = []
    for topic in ("rent", "tax", "fee"):
        turns += [[{"name": "look", "args": {"topic": topic}}], f"Done {topic}."]
    model = ScriptedChatModel(turns=[*turns, "Last."])
    graph = create_react_agent(model, [look], checkpointer=InMemorySaver(), version="v1")
    config = thread()
    out = await drive_public(graph, {"messages": [("user", "go")]}, config, use_async)
    assert set(out) == {"messages"}
    assert [m.name for m in out["messages"] if isinstance(m, AIMessage)] == [None, None]
    values = graph.get_state(config).values
    assert values["termination_reason"] == "completed" and values["step"] == 2
    chunks = list(graph.stream({"messages": [("user", "more")]}, config, stream_mode="values"))
    assert chunks and all(set(c) == {"messages"} for c in chunks)
    updates = list(graph.stream({"messages": [("user", "and")]}, config, stream_mode="updates"))
    assert [list(u) for u in updates] == [["agent"], ["tools"], ["agent"]]
    assert all(set(body) == {"messages"} for u in updates for body in u.values())
    keys = list(graph.stream_channels_list)
    assert "termination_reason" in graph.invoke(
        {"messages": [("user", "x")]}, config, output_keys=keys
    )
    named = create_react_agent(ScriptedChatModel(turns=["Hi."]), [], name="helper")
    assert named.invoke({"messages": [("user", "hi")]})["messages"][-1].name == "helper"
    assert named.name == "helper" and graph.name == "LangGraph"


async def drive_public(
    graph: Any, graph_input: Any, config: RunnableConfig, use_async: bool
) -> Any:
    if use_async:
        return await graph.ainvoke(graph_input, config)
    return graph.invoke(graph_input, config)
