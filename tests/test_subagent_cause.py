"""docs/compatibility.md CA6: ``create_agent``'s v3 ``subagents`` projection gives each nested
named agent the tool call that started it (``cause``), as LangChain's ``create_agent`` does,
with this package's tool node (one call per checkpointed step) and its unique call ids."""

from __future__ import annotations

import hashlib
import inspect
import uuid
from typing import Any

import langchain.agents
import pytest
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.stream import transformers as lg_transformers

from dynavec_langgraph import create_agent
from dynavec_langgraph._graph.subagent_cause import ToolCallCause
from dynavec_langgraph.testing import ScriptedChatModel

REFERENCE = langchain.agents.create_agent


def _supervisor(factory: Any, ids: list[str]) -> Any:
    """A supervisor whose model calls ``call_weather`` once per id (a turn each), then
    answers; the tool runs a nested agent named ``weather_agent``."""
    weather_agent = factory(
        model=ScriptedChatModel(turns=["sunny"] * len(ids)), name="weather_agent"
    )

    @tool("call_weather")
    def call_weather(city: str) -> str:
        """Call the weather agent."""
        result = weather_agent.invoke({"messages": [HumanMessage(f"weather in {city}")]})
        return str(result["messages"][-1].content)

    turns: list[Any] = [[{"name": "call_weather", "args": {"city": "SF"}, "id": i}] for i in ids]
    return factory(
        model=ScriptedChatModel(turns=[*turns, "done"]),
        tools=[call_weather],
        name="supervisor",
        checkpointer=InMemorySaver(),
    )


def _causes(agent: Any, config: Any) -> list[Any]:
    run = agent.stream_events({"messages": [HumanMessage("weather?")]}, config, version="v3")
    causes = []
    for handle in run.subagents:
        assert handle.name == "weather_agent"
        for _ in handle:
            pass
        causes.append(handle.cause)
    return causes


@pytest.mark.parametrize("factory", [create_agent, REFERENCE], ids=["dynavec", "reference"])
def test_a_nested_agent_has_its_tool_call_as_cause(factory: Any) -> None:
    config: Any = {"configurable": {"thread_id": str(uuid.uuid4())}}
    causes = _causes(_supervisor(factory, ["call_w"]), config)
    assert causes == [{"type": "toolCall", "tool_call_id": "call_w"}]


async def test_the_cause_on_the_async_lane() -> None:
    agent = _supervisor(create_agent, ["call_w"])
    config: Any = {"configurable": {"thread_id": str(uuid.uuid4())}}
    run = await agent.astream_events({"messages": [HumanMessage("weather?")]}, config, version="v3")
    handles = []
    async for handle in run.subagents:
        handles.append(handle)
        async for _ in handle:
            pass
    assert [h.cause for h in handles] == [{"type": "toolCall", "tool_call_id": "call_w"}]
    assert handles[0].status == "completed"


def test_repeated_provider_ids_give_each_nested_agent_its_own_call() -> None:
    """A provider that repeats one id every turn: each call gets an id unique in the thread
    (docs/compatibility.md CA2, I1), and each nested agent's cause is the id its call has in
    the thread, the one its answer carries."""
    agent = _supervisor(create_agent, ["call_0", "call_0"])
    config: Any = {"configurable": {"thread_id": str(uuid.uuid4())}}
    causes = _causes(agent, config)
    messages = agent.get_state(config).values["messages"]
    answered = [m.tool_call_id for m in messages if isinstance(m, ToolMessage)]
    assert len(answered) == 2 and len(set(answered)) == 2
    assert causes == [{"type": "toolCall", "tool_call_id": i} for i in answered]


def test_the_cause_transformer_sits_just_before_the_subagent_transformer() -> None:
    names = [t.__name__ for t in create_agent(ScriptedChatModel()).stream_transformers]
    assert names == ["ToolCallTransformer", "ToolCallCause", "SubagentTransformer"]
    assert ToolCallCause.required_stream_modes == ("tasks",)


def test_the_mirrored_reading_of_a_tool_task_has_not_changed() -> None:
    """``ToolCallCause`` gives the call in the shape ``_TasksLifecycleBase``
    (langgraph.stream.transformers, langgraph 1.2.24) reads; a change there changes this
    digest: re-check dynavec_langgraph/_graph/subagent_cause.py and update it."""
    base = getattr(lg_transformers, "_TasksLifecycleBase")  # noqa: B009
    source = inspect.getsource(base._record_pending_tool_calls)
    assert 'payload.get("tool_call")' in source
    assert hashlib.sha256(source.encode()).hexdigest()[:16] == "cf4be33770ed4985"


def test_a_pause_under_the_v3_stream_resumes_once() -> None:
    """The cause transformer only reads: a tool that pauses under ``stream_events(version="v3")``
    pauses once and its call runs once after the decision."""
    from langgraph.types import Command

    from dynavec_langgraph import interrupt

    ran: list[str] = []

    @tool("pay")
    def pay(amount: int) -> str:
        """Pay after approval."""
        decision = interrupt("approve", {"amount": amount})
        ran.append(str(decision))
        return f"paid {amount}: {decision}"

    model = ScriptedChatModel(turns=[[{"name": "pay", "args": {"amount": 5}, "id": "p1"}], "ok"])
    agent = create_agent(model, [pay], checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": str(uuid.uuid4())}}
    for _ in agent.stream_events({"messages": [HumanMessage("pay")]}, config, version="v3"):
        pass
    assert agent.get_state(config).interrupts and ran == []
    for _ in agent.stream_events(Command(resume="yes"), config, version="v3"):
        pass
    assert ran == ["yes"]
    messages = agent.get_state(config).values["messages"]
    assert [m.content for m in messages if isinstance(m, ToolMessage)] == ["paid 5: yes"]
    assert messages[-1].text == "ok"
