"""Streaming: ``ReActAgent.stream`` / ``astream`` / ``stream_resume`` /
``astream_resume`` and the raw graph with ``STREAM_MODES`` + ``events_from_chunk``.

Exact event sequences with the scripted model (it streams its text word by word), and real
token streaming with ``ChatOpenAI(streaming=True)`` against the tests' local server.
"""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from dynavec_langgraph import (
    AgentResult,
    AgentTool,
    ReActAgent,
    ThreadPausedError,
    ToolCall,
    create_react_agent,
    interrupt,
    tool,
)
from dynavec_langgraph.events import (
    STREAM_MODES,
    AgentEvent,
    InterruptEvent,
    ResultEvent,
    TokenEvent,
    ToolCallEvent,
    ToolResultEvent,
    events_from_chunk,
)
from dynavec_langgraph.testing import ScriptedChatModel
from tests.openai_server import OpenAIServer, chat_openai
from tests.test_graph import SYNC_AND_ASYNC, assert_provider_valid, check_model_calls, thread

# --- helpers ------------------------------------------------------------------------------


def make_tools(runs: Counter[str]) -> list[AgentTool]:
    """``look`` and ``last`` never pause; ``pay`` and ``ship`` do."""

    @tool
    def look(x: int) -> str:
        """Read."""
        runs["look"] += 1
        return f"look {x}"

    @tool
    def last(x: int) -> str:
        """Finish."""
        runs["last"] += 1
        return f"last {x}"

    def pausing(name: str) -> AgentTool:
        @tool(name)
        def act(x: int) -> str:
            runs[name] += 1
            decision = interrupt(f"approve_{name}", {"x": x})
            runs[f"{name}_decided"] += 1
            return f"{name} {x}: {decision}"

        return act

    return [look, last, pausing("pay"), pausing("ship")]


THOUGHT = "Let me check."
ANSWER = "All three are done."
CALLS = [("c1", "look", 1), ("c2", "pay", 2), ("c3", "last", 3)]


def turns() -> list[Any]:
    """A thought with three calls (the second pauses), then the answer."""
    calls = [{"name": n, "args": {"x": x}, "id": i} for i, n, x in CALLS]
    return [AIMessage(THOUGHT, tool_calls=calls), ANSWER]


def tokens(text: str) -> list[AgentEvent]:
    """The scripted model streams its text word by word, spaces kept."""
    words = text.split(" ")
    pieces = [w + " " for w in words[:-1]] + words[-1:]
    return [TokenEvent(piece) for piece in pieces]


def pause_events(interrupt_id: str) -> list[AgentEvent]:
    """Everything before the ResultEvent of a run that pauses at ``pay``."""
    return [
        *tokens(THOUGHT),
        *[ToolCallEvent(ToolCall(i, n, json.dumps({"x": x}))) for i, n, x in CALLS],
        ToolResultEvent("c1", "look", "look 1"),
        InterruptEvent(
            "approve_pay", {"x": 2}, interrupt_id, {"id": "c2", "name": "pay", "args": {"x": 2}}
        ),
    ]


RESUME_EVENTS: list[AgentEvent] = [
    ToolResultEvent("c2", "pay", "pay 2: yes"),
    ToolResultEvent("c3", "last", "last 3"),
    *tokens(ANSWER),
]
"""Everything before the ResultEvent of ``stream_resume(..., human_decision="yes")``."""


async def stream(agent: ReActAgent, use_async: bool, goal: str, **kw: Any) -> list[AgentEvent]:
    if use_async:
        return [e async for e in agent.astream(goal, **kw)]
    return list(agent.stream(goal, **kw))


async def stream_resume(
    agent: ReActAgent, use_async: bool, *args: Any, **kw: Any
) -> list[AgentEvent]:
    if use_async:
        return [e async for e in agent.astream_resume(*args, **kw)]
    return list(agent.stream_resume(*args, **kw))


async def graph_events(graph: Any, graph_input: Any, use_async: bool) -> list[AgentEvent]:
    """The raw graph streamed as a LangGraph app would, read with ``events_from_chunk``."""
    events: list[AgentEvent] = []
    if use_async:
        chunks: AsyncIterator[Any] = graph.astream(graph_input, thread(), stream_mode=STREAM_MODES)
        async for mode, chunk in chunks:
            events.extend(events_from_chunk(mode, chunk))
    else:
        sync_chunks: Iterator[Any] = graph.stream(graph_input, thread(), stream_mode=STREAM_MODES)
        for mode, chunk in sync_chunks:
            events.extend(events_from_chunk(mode, chunk))
    return events


def result_of(events: list[AgentEvent]) -> AgentResult:
    """The stream ends with exactly one ResultEvent."""
    assert isinstance(events[-1], ResultEvent), events
    assert sum(isinstance(e, ResultEvent) for e in events) == 1, events
    return events[-1].result


def without_interrupt_ids(result: AgentResult) -> AgentResult:
    """Two threads pause with different interrupt ids; everything else must match."""
    payload = result.interrupt_payload
    if payload is None:
        return result
    payload = {**payload, "interrupt_id": "-"}
    payload["pending"] = [{**p, "interrupt_id": "-"} for p in payload["pending"]]
    return dataclasses.replace(result, interrupt_payload=payload)


# --- ReActAgent.stream / stream_resume ------------------------------------------------------


@SYNC_AND_ASYNC
async def test_stream_pause_then_stream_resume(use_async: bool) -> None:
    runs = Counter[str]()
    model = ScriptedChatModel(turns=turns())
    agent = ReActAgent(model, make_tools(runs))
    events = await stream(agent, use_async, "go", thread_id="t")

    paused = result_of(events)
    (pending,) = agent.graph.get_state(thread("t")).interrupts
    assert events[:-1] == pause_events(pending.id)
    assert (paused.termination_reason, paused.finished) == ("interrupted", False)
    assert paused.interrupt_payload is not None
    assert paused.interrupt_payload["interrupt_id"] == pending.id
    assert paused.interrupt_payload["node_id"] == "approve_pay"
    assert paused.steps[0].thought == THOUGHT
    assert runs == Counter({"look": 1, "pay": 1})  # `last` waits for the decision

    # the same script through run / resume gives the same results
    twin_runs = Counter[str]()
    twin = ReActAgent(ScriptedChatModel(turns=turns()), make_tools(twin_runs))
    twin_paused = twin.run("go", thread_id="t")
    assert without_interrupt_ids(paused) == without_interrupt_ids(twin_paused)

    events = await stream_resume(agent, use_async, thread_id="t", human_decision="yes")
    final = result_of(events)
    assert events[:-1] == RESUME_EVENTS
    assert "".join(e.text for e in events if isinstance(e, TokenEvent)) == ANSWER
    assert (final.termination_reason, final.output) == ("completed", ANSWER)
    assert final == twin.resume(thread_id="t", human_decision="yes")
    assert runs == twin_runs == Counter({"look": 1, "pay": 2, "pay_decided": 1, "last": 1})
    assert agent.graph.get_state(thread("t")).interrupts == ()
    assert_provider_valid(agent.graph.get_state(thread("t")).values["messages"])
    check_model_calls(model)


@SYNC_AND_ASYNC
async def test_stream_resume_from_messages(use_async: bool) -> None:
    runs = Counter[str]()
    agent = ReActAgent(ScriptedChatModel(turns=turns()), make_tools(runs))
    paused = agent.run("go")
    assert paused.interrupt_payload is not None
    fresh = ReActAgent(ScriptedChatModel(turns=turns()[1:]), make_tools(runs))
    events = await stream_resume(
        fresh, use_async, paused.interrupt_payload["messages"], human_decision="yes"
    )
    assert events[:-1] == RESUME_EVENTS
    assert result_of(events).output == ANSWER
    assert runs == Counter({"look": 1, "pay": 2, "pay_decided": 1, "last": 1})


@SYNC_AND_ASYNC
async def test_stream_a_run_without_pause(use_async: bool) -> None:
    runs = Counter[str]()
    model = ScriptedChatModel(turns=[[{"name": "look", "args": {"x": 7}, "id": "k"}], "Seven."])
    agent = ReActAgent(model, make_tools(runs))
    events = await stream(agent, use_async, "look")
    assert events[:-1] == [
        ToolCallEvent(ToolCall("k", "look", '{"x": 7}')),
        ToolResultEvent("k", "look", "look 7"),
        TokenEvent("Seven."),
    ]
    result = result_of(events)
    assert (result.termination_reason, result.output, result.total_steps) == (
        "completed",
        "Seven.",
        2,
    )
    assert runs == Counter({"look": 1})


@SYNC_AND_ASYNC
async def test_stream_on_a_paused_thread_is_refused(use_async: bool) -> None:
    runs = Counter[str]()
    model = ScriptedChatModel(turns=turns())
    agent = ReActAgent(model, make_tools(runs))
    await stream(agent, use_async, "go", thread_id="t")
    before = agent.graph.get_state(thread("t"))
    with pytest.raises(ThreadPausedError, match="approve_pay"):
        await stream(agent, use_async, "something else", thread_id="t")
    after = agent.graph.get_state(thread("t"))
    assert (after.config, after.values, after.interrupts) == (
        before.config,
        before.values,
        before.interrupts,
    )
    assert len(model.calls) == 1
    assert runs == Counter({"look": 1, "pay": 1})


@SYNC_AND_ASYNC
async def test_stream_parallel_pauses_and_decisions(use_async: bool) -> None:
    runs = Counter[str]()
    calls = [("p", "pay", 1), ("l", "look", 2), ("s", "ship", 3)]
    script = [[{"name": n, "args": {"x": x}, "id": i} for i, n, x in calls], "Both done."]
    model = ScriptedChatModel(turns=script)
    agent = ReActAgent(model, make_tools(runs), parallel_tool_calls=True)
    events = await stream(agent, use_async, "go", thread_id="t")

    paused = result_of(events)
    assert events[:3] == [ToolCallEvent(ToolCall(i, n, json.dumps({"x": x}))) for i, n, x in calls]
    ids = {i.value["node_id"]: i.id for i in agent.graph.get_state(thread("t")).interrupts}
    middle = events[3:-1]  # the tasks run concurrently: any order
    assert len(middle) == 3
    assert ToolResultEvent("l", "look", "look 2") in middle
    assert (
        InterruptEvent(
            "approve_pay",
            {"x": 1},
            ids["approve_pay"],
            {"id": "p", "name": "pay", "args": {"x": 1}},
        )
        in middle
    )
    assert (
        InterruptEvent(
            "approve_ship",
            {"x": 3},
            ids["approve_ship"],
            {"id": "s", "name": "ship", "args": {"x": 3}},
        )
        in middle
    )
    assert paused.termination_reason == "interrupted"
    assert paused.interrupt_payload is not None
    assert {p["node_id"] for p in paused.interrupt_payload["pending"]} == set(ids)

    events = await stream_resume(
        agent, use_async, thread_id="t", decisions={"approve_pay": "A", "approve_ship": "B"}
    )
    final = result_of(events)
    results = [e for e in events if isinstance(e, ToolResultEvent)]
    assert sorted(results, key=lambda e: e.tool_call_id) == [
        ToolResultEvent("p", "pay", "pay 1: A"),
        ToolResultEvent("s", "ship", "ship 3: B"),
    ]
    assert events[2:-1] == tokens("Both done.")
    assert (final.termination_reason, final.output) == ("completed", "Both done.")
    assert final.steps[0].observations == ["pay 1: A", "look 2", "ship 3: B"]
    # each pausing call entered once more: held one step so look's result was saved
    assert runs == Counter({"look": 1, "pay": 3, "pay_decided": 1, "ship": 3, "ship_decided": 1})
    check_model_calls(model)


@SYNC_AND_ASYNC
async def test_stream_parallel_answer_one_then_the_other(use_async: bool) -> None:
    runs = Counter[str]()
    calls = [("p", "pay", 1), ("l", "look", 2), ("s", "ship", 3)]
    script = [[{"name": n, "args": {"x": x}, "id": i} for i, n, x in calls], "Both done."]
    agent = ReActAgent(ScriptedChatModel(turns=script), make_tools(runs), parallel_tool_calls=True)
    await stream(agent, use_async, "go", thread_id="t")
    ids = {i.value["node_id"]: i.id for i in agent.graph.get_state(thread("t")).interrupts}

    events = await stream_resume(agent, use_async, thread_id="t", decisions={"approve_ship": "B"})
    still = InterruptEvent(
        "approve_pay", {"x": 1}, ids["approve_pay"], {"id": "p", "name": "pay", "args": {"x": 1}}
    )
    # look's result, kept from the first run, is not reported again: look did not run again
    assert len(events) == 3
    assert ToolResultEvent("s", "ship", "ship 3: B") in events[:2]
    assert still in events[:2]
    assert result_of(events).termination_reason == "interrupted"

    events = await stream_resume(agent, use_async, thread_id="t", human_decision="A")
    assert events[:-1] == [ToolResultEvent("p", "pay", "pay 1: A"), *tokens("Both done.")]
    assert result_of(events).steps[0].observations == ["pay 1: A", "look 2", "ship 3: B"]
    assert runs == Counter({"look": 1, "pay": 4, "pay_decided": 1, "ship": 3, "ship_decided": 1})


# --- the raw graph --------------------------------------------------------------------------


@SYNC_AND_ASYNC
async def test_raw_graph_streams_the_same_events(use_async: bool) -> None:
    runs = Counter[str]()
    model = ScriptedChatModel(turns=turns())
    graph = create_react_agent(model, make_tools(runs), checkpointer=InMemorySaver())
    events = await graph_events(graph, {"messages": [("user", "go")]}, use_async)
    (pending,) = graph.get_state(thread()).interrupts
    assert events == pause_events(pending.id)
    assert runs == Counter({"look": 1, "pay": 1})

    events = await graph_events(graph, Command(resume="yes"), use_async)
    assert events == RESUME_EVENTS
    assert runs == Counter({"look": 1, "pay": 2, "pay_decided": 1, "last": 1})
    assert graph.get_state(thread()).values["termination_reason"] == "completed"
    check_model_calls(model)


def test_events_from_chunk_ignores_what_is_not_the_agent() -> None:
    assert events_from_chunk("values", {"messages": []}) == []
    assert events_from_chunk("custom", {"anything": 1}) == []
    # text streamed by a model inside a tool is not the agent's answer
    assert events_from_chunk("messages", (AIMessage("inner"), {"langgraph_node": "tools"})) == []
    assert events_from_chunk("messages", (AIMessage("out"), {"langgraph_node": "agent"})) == [
        TokenEvent("out")
    ]
    assert events_from_chunk("messages", (AIMessage(""), {"langgraph_node": "agent"})) == []
    assert events_from_chunk("updates", {"agent": {"step": 1}}) == []
    answer = ToolMessage("look 2", tool_call_id="l", name="look")
    assert events_from_chunk("updates", {"tools": {"messages": [answer]}}) == [
        ToolResultEvent("l", "look", "look 2")
    ]
    # LangGraph replays a finished task's writes on resume, marked cached: not news
    replayed = {"tools": {"messages": [answer]}, "__metadata__": {"cached": True}}
    assert events_from_chunk("updates", replayed) == []


# --- real token streaming over HTTP ---------------------------------------------------------

LONG_ANSWER = "The payment of five euros went through and the receipt is on its way."


@SYNC_AND_ASYNC
async def test_chat_openai_streams_tokens(openai: OpenAIServer, use_async: bool) -> None:
    runs = Counter[str]()
    openai.script([{"name": "pay", "args": {"x": 5}}], LONG_ANSWER)
    agent = ReActAgent(chat_openai(openai, streaming=True), make_tools(runs))
    events = await stream(agent, use_async, "pay five", thread_id="t")

    assert [type(e) for e in events] == [ToolCallEvent, InterruptEvent, ResultEvent]
    assert isinstance(events[0], ToolCallEvent) and isinstance(events[1], InterruptEvent)
    call = events[0].call
    assert (call.name, json.loads(call.arguments)) == ("pay", {"x": 5})
    assert (events[1].node_id, events[1].payload) == ("approve_pay", {"x": 5})
    assert events[1].tool_call == {"id": call.id, "name": "pay", "args": {"x": 5}}
    assert result_of(events).termination_reason == "interrupted"

    events = await stream_resume(agent, use_async, thread_id="t", human_decision="approved")
    assert events[0] == ToolResultEvent(call.id, "pay", "pay 5: approved")
    texts = [e.text for e in events[1:-1] if isinstance(e, TokenEvent)]
    assert len(texts) == len(events) - 2  # nothing but tokens between the result and the end
    assert len(texts) >= 10  # one answer, many tokens
    assert "".join(texts) == LONG_ANSWER
    final = result_of(events)
    assert (final.termination_reason, final.output) == ("completed", LONG_ANSWER)
    assert runs == Counter({"pay": 2, "pay_decided": 1})

    assert openai.rejections == []
    assert len(openai.requests) == 2
    assert all(body.get("stream") is True for body in openai.requests)
