"""``create_agent``'s options and LangChain middleware on this package's agent.

Every test that can runs the same scenario against ``langchain.agents.create_agent`` (or
LangGraph's prebuilt agent, for its options) as the reference, with ``ChatOpenAI`` over HTTP
against the strict local server, which rejects any conversation OpenAI would reject.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import uuid
from collections import Counter
from collections.abc import Sequence
from typing import Any, Literal

import pytest
from langchain.agents import AgentState, create_agent
from langchain.agents.middleware import (
    AgentMiddleware,
    ClearToolUsesEdit,
    ContextEditingMiddleware,
    HumanInTheLoopMiddleware,
    LLMToolSelectorMiddleware,
    ModelCallLimitMiddleware,
    ModelFallbackMiddleware,
    ModelRequest,
    ModelRetryMiddleware,
    PIIMiddleware,
    SummarizationMiddleware,
    TodoListMiddleware,
    ToolCallLimitMiddleware,
    ToolRetryMiddleware,
    after_agent,
    after_model,
    before_agent,
    before_model,
    dynamic_prompt,
    hook_config,
    wrap_model_call,
    wrap_tool_call,
)
from langchain.agents.structured_output import (
    ProviderStrategy,
    StructuredOutputValidationError,
    ToolStrategy,
)
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langchain_core.tools import tool as lc_tool
from langgraph.cache.memory import InMemoryCache
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.prebuilt import ToolRuntime
from langgraph.prebuilt import create_react_agent as prebuilt_agent
from langgraph.prebuilt.chat_agent_executor import AgentState as PrebuiltState
from langgraph.runtime import get_runtime
from langgraph.types import Command
from pydantic import BaseModel
from typing_extensions import TypedDict

from dynavec_langgraph import Checkpoint, ReActAgent, create_react_agent, interrupt
from dynavec_langgraph.testing import ScriptedChatModel
from tests.openai_server import OpenAIServer, chat_openai, validate

Kind = Literal["dynavec", "create_agent"]
KINDS: list[Kind] = ["dynavec", "create_agent"]
RUNS: Counter[str] = Counter()
LOG: list[str] = []


def setup_function() -> None:
    RUNS.clear()
    LOG.clear()


def build(kind: str, model: Any, tools: Sequence[Any], **kw: Any) -> Any:
    """This package's agent, or the reference (``create_agent`` / the prebuilt agent)."""
    kw.setdefault("checkpointer", InMemorySaver())
    if kind == "dynavec":
        return create_react_agent(model, tools, **kw)
    if kind == "prebuilt":
        return prebuilt_agent(model, tools, **kw)
    return create_agent(model, tools, **kw)


def cfg() -> RunnableConfig:
    return {"configurable": {"thread_id": str(uuid.uuid4())}}


def check_wire(openai: OpenAIServer, model_calls: int | None = None) -> None:
    """The server rejected nothing, every request is valid (and the model ran so often)."""
    assert openai.rejections == []
    for body in openai.requests:
        validate(body)
    if model_calls is not None:
        assert len(openai.requests) == model_calls


def sent(openai: OpenAIServer, index: int = -1) -> list[dict[str, Any]]:
    return list(openai.requests[index]["messages"])


def tool_names(openai: OpenAIServer, index: int = -1) -> list[str]:
    return [t["function"]["name"] for t in openai.requests[index].get("tools") or []]


def kinds(messages: Sequence[BaseMessage]) -> list[str]:
    return [type(m).__name__ for m in messages]


@lc_tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    RUNS["add"] += 1
    return a + b


@lc_tool
def send(to: str) -> str:
    """Send a message."""
    RUNS["send"] += 1
    return f"sent to {to}"


# --- prompts ------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_system_prompt_as_system_message(kind: Kind, openai: OpenAIServer) -> None:
    openai.script("hi")
    prompt = SystemMessage(content=[{"type": "text", "text": "Be brief."}])
    graph = build(kind, chat_openai(openai), [], system_prompt=prompt)
    out = graph.invoke({"messages": [("user", "hello")]}, cfg())
    assert sent(openai)[0]["role"] == "system"
    assert "Be brief." in json.dumps(sent(openai)[0]["content"])
    assert kinds(out["messages"]) == ["HumanMessage", "AIMessage"]  # the prompt is not stored
    check_wire(openai, 1)


@pytest.mark.parametrize("kind", ["dynavec", "prebuilt"])
@pytest.mark.parametrize("form", ["str", "message", "callable", "runnable"])
def test_prompt_forms_of_the_prebuilt_agent(kind: str, form: str, openai: OpenAIServer) -> None:
    openai.script("hi")

    def make(state: Any) -> list[Any]:
        RUNS["prompt"] += 1
        return [SystemMessage(content="From the state."), *state["messages"]]

    prompt: Any = {
        "str": "From a string.",
        "message": SystemMessage(content="From a message."),
        "callable": make,
        "runnable": RunnableLambda(make),
    }[form]
    graph = build(kind, chat_openai(openai), [], prompt=prompt)
    graph.invoke({"messages": [("user", "hello")]}, cfg())
    first = sent(openai)[0]
    assert first["role"] == "system"
    assert (
        first["content"]
        == {
            "str": "From a string.",
            "message": "From a message.",
            "callable": "From the state.",
            "runnable": "From the state.",
        }[form]
    )
    assert RUNS["prompt"] == (1 if form in ("callable", "runnable") else 0)
    check_wire(openai, 1)


# --- structured output ----------------------------------------------------------------------


class Weather(BaseModel):
    city: str
    degrees: int


@dataclasses.dataclass
class WeatherDC:
    city: str
    degrees: int


class WeatherTD(TypedDict):
    city: str
    degrees: int


WEATHER_SCHEMA = {
    "title": "WeatherJS",
    "description": "The weather.",
    "type": "object",
    "properties": {"city": {"type": "string"}, "degrees": {"type": "integer"}},
    "required": ["city", "degrees"],
}


def _city(value: Any) -> tuple[str, int]:
    if isinstance(value, dict):
        return value["city"], value["degrees"]
    return value.city, value.degrees


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("form", ["pydantic", "dataclass", "typeddict", "json", "tool_strategy"])
def test_response_format_forms(kind: Kind, form: str, openai: OpenAIServer) -> None:
    schema: Any = {
        "pydantic": Weather,
        "dataclass": WeatherDC,
        "typeddict": WeatherTD,
        "json": WEATHER_SCHEMA,
        "tool_strategy": ToolStrategy(Weather),
    }[form]
    name = {"dataclass": "WeatherDC", "typeddict": "WeatherTD", "json": "WeatherJS"}.get(
        form, "Weather"
    )
    openai.script(
        [{"name": "add", "args": {"a": 20, "b": 1}}],
        [{"name": name, "args": {"city": "Oslo", "degrees": 21}}],
    )
    graph = build(kind, chat_openai(openai), [add], response_format=schema)
    out = graph.invoke({"messages": [("user", "weather?")]}, cfg())
    assert _city(out["structured_response"]) == ("Oslo", 21)
    if form == "pydantic":
        assert isinstance(out["structured_response"], Weather)
    # the structured-output call is answered in the conversation: the thread stays valid
    last = out["messages"][-1]
    assert isinstance(last, ToolMessage) and last.name == name
    assert RUNS["add"] == 1
    assert name in tool_names(openai)
    check_wire(openai, 2)
    # the thread goes on: a later request carries the answered call and is accepted
    openai.script("fine")
    graph.invoke({"messages": [("user", "thanks")]}, cfg() | {})
    check_wire(openai, 3)


@pytest.mark.parametrize("kind", KINDS)
def test_response_format_retries_with_the_error(kind: Kind, openai: OpenAIServer) -> None:
    openai.script(
        [{"name": "Weather", "args": {"city": "Oslo", "degrees": "warm"}}],
        [{"name": "Weather", "args": {"city": "Oslo", "degrees": 21}}],
    )
    graph = build(kind, chat_openai(openai), [add], response_format=ToolStrategy(Weather))
    out = graph.invoke({"messages": [("user", "weather?")]}, cfg())
    assert out["structured_response"] == Weather(city="Oslo", degrees=21)
    errors = [m for m in out["messages"] if isinstance(m, ToolMessage) and "fix" in str(m.content)]
    assert len(errors) == 1 and "Please fix your mistakes" in str(errors[0].content)
    # the second request told the model what was wrong
    assert any("Please fix" in str(m.get("content")) for m in sent(openai) if m["role"] == "tool")
    check_wire(openai, 2)


@pytest.mark.parametrize("kind", KINDS)
def test_response_format_raises_when_told_to(kind: Kind, openai: OpenAIServer) -> None:
    openai.script([{"name": "Weather", "args": {"city": "Oslo", "degrees": "warm"}}])
    fmt = ToolStrategy(Weather, handle_errors=False)
    graph = build(kind, chat_openai(openai), [add], response_format=fmt)
    with pytest.raises(StructuredOutputValidationError):
        graph.invoke({"messages": [("user", "weather?")]}, cfg())


@pytest.mark.parametrize("kind", KINDS)
def test_provider_strategy(kind: Kind, openai: OpenAIServer) -> None:
    openai.script('{"city": "Oslo", "degrees": 21}')
    graph = build(kind, chat_openai(openai), [add], response_format=ProviderStrategy(Weather))
    out = graph.invoke({"messages": [("user", "weather?")]}, cfg())
    assert out["structured_response"] == Weather(city="Oslo", degrees=21)
    assert openai.requests[0]["response_format"]["type"] == "json_schema"
    check_wire(openai, 1)


def test_react_agent_exposes_the_structured_response(openai: OpenAIServer) -> None:
    openai.script([{"name": "Weather", "args": {"city": "Oslo", "degrees": 21}}])
    agent = ReActAgent(chat_openai(openai), [add], response_format=Weather)
    result = agent.run("weather?")
    assert result.structured_response == Weather(city="Oslo", degrees=21)
    check_wire(openai, 1)


# --- state and context ----------------------------------------------------------------------


class WithUser(AgentState[Any]):
    user_name: str


class PrebuiltWithUser(PrebuiltState):
    user_name: str


@lc_tool
def whoami(runtime: ToolRuntime) -> str:
    """Who is asking."""
    RUNS["whoami"] += 1
    context: Any = runtime.context
    return f"{runtime.state['user_name']} in {context['team']}"


@pytest.mark.parametrize("kind", [*KINDS, "prebuilt"])
def test_state_schema_and_context_schema(kind: str, openai: OpenAIServer) -> None:
    openai.script([{"name": "whoami", "args": {}}], "done")
    schema = PrebuiltWithUser if kind == "prebuilt" else WithUser
    graph = build(kind, chat_openai(openai), [whoami], state_schema=schema, context_schema=dict)
    out = graph.invoke(
        {"messages": [("user", "who?")], "user_name": "ada"}, cfg(), context={"team": "ops"}
    )
    assert out["user_name"] == "ada"
    assert out["messages"][2].content == "ada in ops"
    check_wire(openai, 2)


def test_state_schema_of_the_prebuilt_agent_on_this_agent(openai: OpenAIServer) -> None:
    """The prebuilt state's managed ``remaining_steps`` works here as well."""
    seen: list[int] = []

    @lc_tool
    def steps_left(runtime: ToolRuntime) -> str:
        """Steps left."""
        seen.append(runtime.state["remaining_steps"])
        return "ok"

    openai.script([{"name": "steps_left", "args": {}}], "done")
    graph = build("dynavec", chat_openai(openai), [steps_left], state_schema=PrebuiltState)
    graph.invoke({"messages": [("user", "go")]}, cfg())
    assert len(seen) == 1 and seen[0] > 0
    check_wire(openai, 2)


@pytest.mark.parametrize("kind", KINDS)
def test_get_runtime_reads_the_context(kind: Kind, openai: OpenAIServer) -> None:
    def team() -> str:
        """The caller's team."""
        context: Any = get_runtime().context
        return str(context["team"])

    openai.script([{"name": "team", "args": {}}], "done")
    graph = build(kind, chat_openai(openai), [team], context_schema=dict)
    out = graph.invoke({"messages": [("user", "team?")]}, cfg(), context={"team": "ops"})
    assert out["messages"][2].content == "ops"
    check_wire(openai, 2)


# --- the prebuilt agent's hooks -----------------------------------------------------------


@pytest.mark.parametrize("kind", ["dynavec", "prebuilt"])
def test_pre_and_post_model_hooks(kind: str, openai: OpenAIServer) -> None:
    def pre(state: Any) -> dict[str, Any]:
        RUNS["pre"] += 1
        return {"llm_input_messages": state["messages"][-1:]}  # only the latest message

    def post(state: Any) -> dict[str, Any]:
        RUNS["post"] += 1
        return {}

    openai.script("one", "two")
    graph = build(kind, chat_openai(openai), [], pre_model_hook=pre, post_model_hook=post)
    config = cfg()
    graph.invoke({"messages": [("user", "first")]}, config)
    out = graph.invoke({"messages": [("user", "second")]}, config)
    assert [m["content"] for m in sent(openai)] == ["second"]  # the model saw the hook's input
    assert kinds(out["messages"]) == ["HumanMessage", "AIMessage"] * 2  # the state kept all
    assert RUNS == {"pre": 2, "post": 2}
    check_wire(openai, 2)


@pytest.mark.parametrize("kind", KINDS)
def test_interrupt_before_tools_debug_and_cache(kind: Kind, openai: OpenAIServer) -> None:
    openai.script([{"name": "add", "args": {"a": 1, "b": 2}}], "3")
    graph = build(
        kind,
        chat_openai(openai),
        [add],
        interrupt_before=["tools"],
        debug=False,
        cache=InMemoryCache(),
    )
    config = cfg()
    graph.invoke({"messages": [("user", "1+2")]}, config)
    assert graph.get_state(config).next == ("tools",)
    assert RUNS["add"] == 0
    out = graph.invoke(None, config)
    assert RUNS["add"] == 1 and out["messages"][-1].content == "3"
    check_wire(openai, 2)


def test_debug_prints_the_steps(openai: OpenAIServer, capsys: pytest.CaptureFixture[str]) -> None:
    openai.script("hi")
    graph = build("dynavec", chat_openai(openai), [], debug=True)
    graph.invoke({"messages": [("user", "hello")]}, cfg())
    assert "agent" in capsys.readouterr().out


# --- middleware: hooks, order and jumps -----------------------------------------------------


def _recording_middleware() -> list[Any]:
    @before_agent
    def ba(state: Any, runtime: Any) -> None:
        LOG.append("before_agent")

    @before_model
    def bm1(state: Any, runtime: Any) -> None:
        LOG.append("before_model 1")

    @before_model
    def bm2(state: Any, runtime: Any) -> None:
        LOG.append("before_model 2")

    @after_model
    def am1(state: Any, runtime: Any) -> None:
        LOG.append("after_model 1")

    @after_model
    def am2(state: Any, runtime: Any) -> None:
        LOG.append("after_model 2")

    @after_agent
    def aa(state: Any, runtime: Any) -> None:
        LOG.append("after_agent")

    @wrap_model_call
    def wm1(request: ModelRequest, handler: Any) -> Any:
        LOG.append("wrap_model 1 in")
        response = handler(request)
        LOG.append("wrap_model 1 out")
        return response

    @wrap_model_call
    def wm2(request: ModelRequest, handler: Any) -> Any:
        LOG.append("wrap_model 2 in")
        response = handler(request)
        LOG.append("wrap_model 2 out")
        return response

    @wrap_tool_call
    def wt1(request: Any, handler: Any) -> Any:
        LOG.append(f"wrap_tool 1 {request.tool_call['name']}")
        return handler(request)

    @wrap_tool_call
    def wt2(request: Any, handler: Any) -> Any:
        LOG.append(f"wrap_tool 2 {request.tool_call['name']}")
        return handler(request)

    @dynamic_prompt
    def prompt(request: ModelRequest) -> str:
        LOG.append("dynamic_prompt")
        return f"{len(request.messages)} messages so far."

    return [ba, bm1, bm2, am1, am2, aa, wm1, wm2, wt1, wt2, prompt]


def test_middleware_hooks_run_in_create_agents_order(openai: OpenAIServer) -> None:
    logs: dict[str, list[str]] = {}
    prompts: dict[str, list[str]] = {}
    for kind in KINDS:
        openai.reset()
        LOG.clear()
        openai.script(
            [{"name": "add", "args": {"a": 1, "b": 2}}, {"name": "add", "args": {"a": 3, "b": 4}}],
            "done",
        )
        graph = build(kind, chat_openai(openai), [add], middleware=_recording_middleware())
        graph.invoke({"messages": [("user", "sums")]}, cfg())
        logs[kind] = list(LOG)
        prompts[kind] = [str(sent(openai, i)[0]["content"]) for i in range(2)]
        check_wire(openai, 2)
    assert logs["dynavec"] == logs["create_agent"]
    assert logs["dynavec"][:10] == [
        "before_agent",
        "before_model 1",
        "before_model 2",
        "wrap_model 1 in",
        "wrap_model 2 in",
        "dynamic_prompt",
        "wrap_model 2 out",
        "wrap_model 1 out",
        "after_model 2",
        "after_model 1",
    ]
    assert logs["dynavec"].count("wrap_tool 1 add") == 2
    assert logs["dynavec"][-1] == "after_agent"
    assert (
        prompts["dynavec"]
        == prompts["create_agent"]
        == [
            "1 messages so far.",
            "4 messages so far.",
        ]
    )


@pytest.mark.parametrize("kind", KINDS)
def test_jump_to_end_from_before_model(kind: Kind, openai: OpenAIServer) -> None:
    class Gate(AgentMiddleware):
        @hook_config(can_jump_to=["end"])
        def before_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
            if "stop" in str(state["messages"][-1].content):
                return {"jump_to": "end", "messages": [AIMessage(content="stopped")]}
            return None

    openai.script("answered")
    graph = build(kind, chat_openai(openai), [add], middleware=[Gate()])
    out = graph.invoke({"messages": [("user", "please stop")]}, cfg())
    assert out["messages"][-1].content == "stopped"
    assert openai.requests == []
    out = graph.invoke({"messages": [("user", "go on")]}, cfg())
    assert out["messages"][-1].content == "answered"
    check_wire(openai, 1)


@pytest.mark.parametrize("kind", KINDS)
def test_middleware_state_schema_and_tools(kind: Kind, openai: OpenAIServer) -> None:
    class Counted(AgentState[Any]):
        calls: int

    @lc_tool
    def ping() -> str:
        """Ping."""
        RUNS["ping"] += 1
        return "pong"

    class Counter_(AgentMiddleware[Counted]):
        state_schema = Counted

        def __init__(self) -> None:
            super().__init__()
            self.tools = [ping]

        def after_model(self, state: Any, runtime: Any) -> dict[str, Any]:
            return {"calls": state.get("calls", 0) + 1}

    openai.script([{"name": "ping", "args": {}}], "done")
    graph = build(kind, chat_openai(openai), [], middleware=[Counter_()])
    out = graph.invoke({"messages": [("user", "ping")]}, cfg())
    assert out["calls"] == 2 and RUNS["ping"] == 1
    assert "ping" in tool_names(openai, 0)
    check_wire(openai, 2)


# --- built-in middleware ----------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_summarization_with_delta_storage(kind: Kind, openai: OpenAIServer) -> None:
    """Old messages are removed (RemoveMessage(REMOVE_ALL_MESSAGES)) and replaced by a summary;
    the thread stays valid, and tool-call ids stay unique across the summary."""

    def policy(messages: list[dict[str, Any]]) -> Any:
        text = json.dumps(messages)
        if "summar" in text.lower() and messages[-1]["role"] == "user" and len(messages) == 1:
            return "SUMMARY: the user added numbers."
        if messages[-1]["role"] == "user":
            return [{"name": "add", "args": {"a": 1, "b": 1}, "id": "call_same"}]
        return "ok"

    openai.set_policy(policy)
    summarizer = chat_openai(openai)
    middleware = SummarizationMiddleware(summarizer, trigger=("messages", 6), keep=("messages", 2))
    graph = build(kind, chat_openai(openai), [add], middleware=[middleware])
    config = cfg()
    for i in range(4):
        out = graph.invoke({"messages": [("user", f"add {i}")]}, config)
    check_wire(openai)
    assert any("SUMMARY" in str(m.content) for m in out["messages"])
    assert len(out["messages"]) < 4 * 4
    assert RUNS["add"] == 4
    if kind == "dynavec":  # the provider repeated the id; this agent keeps them unique
        ids = [c["id"] for m in out["messages"] if isinstance(m, AIMessage) for c in m.tool_calls]
        assert len(ids) == len(set(ids))
        history = graph.get_state_history(config)
        assert sum(1 for _ in history) > 0


def test_summarization_removal_on_delta_storage_is_persisted(openai: OpenAIServer) -> None:
    """The removal is a delta write: a fresh read of the thread shows the summarized list."""
    openai.set_policy(lambda messages: "SUMMARY" if len(messages) == 1 else "ok")
    saver = InMemorySaver()
    middleware = SummarizationMiddleware(
        chat_openai(openai), trigger=("messages", 4), keep=("messages", 1)
    )
    graph = create_react_agent(chat_openai(openai), [], middleware=[middleware], checkpointer=saver)
    config = cfg()
    for i in range(4):
        graph.invoke({"messages": [("user", f"hello {i}")]}, config)
    again = create_react_agent(chat_openai(openai), [], checkpointer=saver)
    messages = again.get_state(config).values["messages"]
    assert any("SUMMARY" in str(m.content) for m in messages)
    assert len(messages) <= 5
    assert not any(isinstance(m, RemoveMessage) for m in messages)
    assert REMOVE_ALL_MESSAGES  # the sentinel the middleware writes
    check_wire(openai)


@pytest.mark.parametrize("kind", KINDS)
def test_model_call_limit(kind: Kind, openai: OpenAIServer) -> None:
    openai.set_policy(lambda messages: [{"name": "add", "args": {"a": 1, "b": 1}}])
    graph = build(
        kind, chat_openai(openai), [add], middleware=[ModelCallLimitMiddleware(run_limit=2)]
    )
    out = graph.invoke({"messages": [("user", "loop")]}, cfg())
    assert len(openai.requests) == 2 and RUNS["add"] == 2
    assert "limit" in str(out["messages"][-1].content).lower()
    check_wire(openai, 2)


@pytest.mark.parametrize("kind", KINDS)
def test_tool_call_limit(kind: Kind, openai: OpenAIServer) -> None:
    openai.script(
        [{"name": "add", "args": {"a": 1, "b": 1}}, {"name": "add", "args": {"a": 2, "b": 2}}],
        "done",
    )
    limit = ToolCallLimitMiddleware(tool_name="add", run_limit=1)
    graph = build(kind, chat_openai(openai), [add], middleware=[limit])
    out = graph.invoke({"messages": [("user", "sums")]}, cfg())
    assert RUNS["add"] == 1
    blocked = [m for m in out["messages"] if isinstance(m, ToolMessage) and m.status == "error"]
    assert len(blocked) == 1
    check_wire(openai, 2)


@pytest.mark.parametrize("kind", KINDS)
def test_tool_retry_sees_the_exception(kind: Kind, openai: OpenAIServer) -> None:
    @lc_tool
    def flaky() -> str:
        """Fails twice."""
        RUNS["flaky"] += 1
        if RUNS["flaky"] < 3:
            raise ConnectionError("down")
        return "up"

    openai.script([{"name": "flaky", "args": {}}], "done")
    retry = ToolRetryMiddleware(max_retries=2, initial_delay=0, jitter=False)
    graph = build(kind, chat_openai(openai), [flaky], middleware=[retry])
    out = graph.invoke({"messages": [("user", "go")]}, cfg())
    assert RUNS["flaky"] == 3
    assert out["messages"][2].content == "up"
    check_wire(openai, 2)


class _Flaky(ScriptedChatModel):
    """Fails on its first ``fail`` calls (a model outage), then answers from its script."""

    fail: int = 1

    def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any) -> Any:
        RUNS["model"] += 1
        if RUNS["model"] <= self.fail:
            raise ConnectionError("model down")
        return super()._generate(messages, stop, run_manager, **kw)


@pytest.mark.parametrize("kind", KINDS)
def test_model_retry(kind: Kind) -> None:
    model = _Flaky(turns=["recovered"], fail=2)
    retry = ModelRetryMiddleware(max_retries=2, initial_delay=0, jitter=False)
    graph = build(kind, model, [], middleware=[retry])
    out = graph.invoke({"messages": [("user", "hi")]}, cfg())
    assert out["messages"][-1].content == "recovered" and RUNS["model"] == 3


@pytest.mark.parametrize("kind", KINDS)
def test_model_fallback(kind: Kind, openai: OpenAIServer) -> None:
    openai.script("from the fallback")
    primary = _Flaky(turns=[], fail=99)
    graph = build(kind, primary, [add], middleware=[ModelFallbackMiddleware(chat_openai(openai))])
    out = graph.invoke({"messages": [("user", "hi")]}, cfg())
    assert out["messages"][-1].content == "from the fallback" and RUNS["model"] == 1
    check_wire(openai, 1)


@pytest.mark.parametrize("kind", KINDS)
def test_pii_redaction(kind: Kind, openai: OpenAIServer) -> None:
    openai.script("noted")
    graph = build(kind, chat_openai(openai), [], middleware=[PIIMiddleware("email")])
    out = graph.invoke({"messages": [("user", "mail me at ada@example.com")]}, cfg())
    assert "ada@example.com" not in json.dumps(sent(openai))
    assert "[REDACTED_EMAIL]" in sent(openai)[-1]["content"]
    assert "ada@example.com" not in str(out["messages"][0].content)
    check_wire(openai, 1)


@pytest.mark.parametrize("kind", KINDS)
def test_context_editing_clears_old_tool_results(kind: Kind, openai: OpenAIServer) -> None:
    openai.script(
        [{"name": "add", "args": {"a": 1, "b": 1}}],
        [{"name": "add", "args": {"a": 2, "b": 2}}],
        "done",
    )
    edit = ClearToolUsesEdit(trigger=10, keep=1, placeholder="[cleared]")
    graph = build(
        kind, chat_openai(openai), [add], middleware=[ContextEditingMiddleware(edits=[edit])]
    )
    out = graph.invoke({"messages": [("user", "sums")]}, cfg())
    tools_sent = [m["content"] for m in sent(openai) if m["role"] == "tool"]
    assert tools_sent == ["[cleared]", "4"]
    assert [m.content for m in out["messages"] if isinstance(m, ToolMessage)] == ["2", "4"]
    check_wire(openai, 3)


@pytest.mark.parametrize("kind", KINDS)
def test_llm_tool_selector(kind: Kind, openai: OpenAIServer) -> None:
    openai.script('{"tools": ["add"]}', "no tools needed")
    selector = LLMToolSelectorMiddleware(model=chat_openai(openai), max_tools=1)
    graph = build(kind, chat_openai(openai), [add, send], middleware=[selector])
    graph.invoke({"messages": [("user", "sum")]}, cfg())
    assert tool_names(openai, 1) == ["add"]
    check_wire(openai, 2)


@pytest.mark.parametrize("kind", KINDS)
def test_todo_list(kind: Kind, openai: OpenAIServer) -> None:
    todos = [{"content": "add", "status": "in_progress"}]
    openai.script([{"name": "write_todos", "args": {"todos": todos}}], "done")
    graph = build(kind, chat_openai(openai), [add], middleware=[TodoListMiddleware()])
    out = graph.invoke({"messages": [("user", "plan")]}, cfg())
    assert out["todos"] == todos
    assert "write_todos" in tool_names(openai, 0)
    check_wire(openai, 2)


@pytest.mark.parametrize("kind", KINDS)
def test_human_in_the_loop_middleware_batched(kind: Kind, openai: OpenAIServer) -> None:
    openai.script(
        [
            {"name": "send", "args": {"to": "ada"}},
            {"name": "add", "args": {"a": 1, "b": 1}},
            {"name": "send", "args": {"to": "bob"}},
        ],
        "done",
    )
    hitl = HumanInTheLoopMiddleware(interrupt_on={"send": True})
    graph = build(kind, chat_openai(openai), [add, send], middleware=[hitl])
    config = cfg()
    out = graph.invoke({"messages": [("user", "go")]}, config)
    (pause,) = out["__interrupt__"]
    assert [r["name"] for r in pause.value["action_requests"]] == ["send", "send"]
    assert RUNS == {}
    decisions = [{"type": "approve"}, {"type": "reject", "message": "not bob"}]
    out = graph.invoke(Command(resume={"decisions": decisions}), config)
    assert RUNS == {"send": 1, "add": 1}
    answers = [m.content for m in out["messages"] if isinstance(m, ToolMessage)]
    assert "sent to ada" in answers and "2" in answers
    assert any("not bob" in str(a) for a in answers)
    check_wire(openai, 2)


def test_human_in_the_loop_middleware_beside_per_tool_interrupt(openai: OpenAIServer) -> None:
    """LangChain's batched approval for one tool, this package's per-call interrupt() in
    another: both pause, each once; the thread stays valid."""

    @lc_tool
    def pay(amount: int) -> str:
        """Pay."""
        RUNS["pay before"] += 1
        decision = interrupt("approve_pay", {"amount": amount})
        RUNS["pay after"] += 1
        return f"paid {amount}: {decision}"

    openai.script(
        [{"name": "send", "args": {"to": "ada"}}, {"name": "pay", "args": {"amount": 5}}], "done"
    )
    hitl = HumanInTheLoopMiddleware(interrupt_on={"send": True})
    graph = build("dynavec", chat_openai(openai), [send, pay], middleware=[hitl])
    config = cfg()
    out = graph.invoke({"messages": [("user", "go")]}, config)
    assert "action_requests" in out["__interrupt__"][0].value
    out = graph.invoke(Command(resume={"decisions": [{"type": "approve"}]}), config)
    assert RUNS == {"send": 1, "pay before": 1}
    assert out["__interrupt__"][0].value["payload"] == {"amount": 5}
    out = graph.invoke(Command(resume="yes"), config)
    assert RUNS == {"send": 1, "pay before": 2, "pay after": 1}
    assert out["messages"][-1].content == "done"
    check_wire(openai, 2)


def test_react_agent_reports_a_human_in_the_loop_middleware_pause_in_dynavec_terms(
    openai: OpenAIServer,
) -> None:
    """ReActAgent with LangChain's HumanInTheLoopMiddleware: the paused result names the tool
    under review as ``node_id`` (the HITL request is the payload), and the pause is answered
    by that name or with the request's own decision format; the tool runs once."""
    openai.script([{"name": "send", "args": {"to": "ada"}}], "done")
    hitl = HumanInTheLoopMiddleware(interrupt_on={"send": True})
    agent = ReActAgent(chat_openai(openai), [send], middleware=[hitl])
    paused = agent.run("go", thread_id="h")
    assert paused.termination_reason == "interrupted"
    payload = paused.interrupt_payload or {}
    assert payload["node_id"] == "send"
    assert payload["payload"]["action_requests"][0]["args"] == {"to": "ada"}
    marker = (agent.get_checkpoint("h") or Checkpoint("h")).state["interrupted"]
    assert marker["node_id"] == "send"
    assert RUNS == {}
    done = agent.resume(thread_id="h", decisions={"send": {"decisions": [{"type": "approve"}]}})
    assert done.output == "done" and RUNS == {"send": 1}
    check_wire(openai, 2)


# --- the human-in-the-loop contract with middleware in place --------------------------------


@lc_tool
def transfer(amount: int) -> str:
    """Transfer money (asks a person first)."""
    RUNS[f"transfer {amount} asked"] += 1
    decision = interrupt("approve_transfer", {"transfer": amount})
    RUNS[f"transfer {amount} ran"] += 1
    return f"transferred {amount}: {decision}"


def _contract_middleware() -> list[Any]:
    @wrap_tool_call
    def audit(request: Any, handler: Any) -> Any:
        RUNS[f"wrapped {request.tool_call['name']}"] += 1
        return handler(request)

    return [audit, ToolRetryMiddleware(max_retries=2, initial_delay=0, jitter=False)]


def test_interrupt_inside_wrap_tool_call_pauses_once_runs_once(openai: OpenAIServer) -> None:
    openai.script(
        [
            {"name": "transfer", "args": {"amount": 1}},
            {"name": "transfer", "args": {"amount": 2}},
            {"name": "add", "args": {"a": 1, "b": 1}},
        ],
        "done",
    )
    graph = build(
        "dynavec", chat_openai(openai), [transfer, add], middleware=_contract_middleware()
    )
    config = cfg()
    out = graph.invoke({"messages": [("user", "pay")]}, config)
    assert out["__interrupt__"][0].value["payload"] == {"transfer": 1}
    assert RUNS == {"wrapped transfer": 1, "transfer 1 asked": 1}  # the retry saw no error
    out = graph.invoke(Command(resume="ok"), config)
    assert out["__interrupt__"][0].value["payload"] == {"transfer": 2}
    assert RUNS["transfer 1 ran"] == 1 and RUNS["transfer 2 ran"] == 0 and RUNS["add"] == 0
    out = graph.invoke(Command(resume="ok"), config)
    assert RUNS["transfer 1 ran"] == 1 and RUNS["transfer 2 ran"] == 1 and RUNS["add"] == 1
    assert RUNS["transfer 1 asked"] == 2 and RUNS["transfer 2 asked"] == 2  # replayed once
    assert out["messages"][-1].content == "done"
    check_wire(openai, 2)


def test_new_input_on_a_paused_thread_with_middleware(openai: OpenAIServer) -> None:
    openai.script(
        [{"name": "add", "args": {"a": 1, "b": 1}}, {"name": "transfer", "args": {"amount": 3}}],
        "later",
    )
    graph = build(
        "dynavec", chat_openai(openai), [transfer, add], middleware=_contract_middleware()
    )
    config = cfg()
    graph.invoke({"messages": [("user", "pay")]}, config)
    assert RUNS["add"] == 1 and RUNS["transfer 3 asked"] == 1
    out = graph.invoke({"messages": [("user", "actually, wait")]}, config)
    assert RUNS["add"] == 1  # the finished call did not run again
    assert out["__interrupt__"][0].value["payload"] == {"transfer": 3}  # still asking
    out = graph.invoke(Command(resume="fine"), config)
    assert RUNS["transfer 3 ran"] == 1 and RUNS["add"] == 1
    assert out["messages"][-1].content == "later"
    assert kinds(out["messages"])[:4] == ["HumanMessage", "AIMessage", "ToolMessage", "ToolMessage"]
    check_wire(openai, 2)


# --- bad input --------------------------------------------------------------------------------


def test_unknown_option_is_named() -> None:
    with pytest.raises(TypeError, match=r"unknown option\(s\) \['versoin'\]"):
        create_react_agent(ScriptedChatModel(turns=[]), [], versoin="v2")


def test_state_schema_without_messages() -> None:
    class NoMessages(TypedDict):
        user_name: str

    with pytest.raises(ValueError, match=r"state_schema=.*no 'messages' key"):
        create_react_agent(ScriptedChatModel(turns=[]), [], state_schema=NoMessages)


def test_response_format_the_model_cannot_serve() -> None:
    class DynavecModel:
        def invoke(self, messages: Any, tools: Any = None) -> Any:
            raise AssertionError("not called")

    with pytest.raises(TypeError, match=r"response_format=.*cannot serve structured output"):
        create_react_agent(DynavecModel(), [], response_format=Weather)


def test_two_middleware_with_one_name(openai: OpenAIServer) -> None:
    with pytest.raises(ValueError, match=r"middleware: two middleware named \['PIIMiddleware"):
        create_react_agent(
            chat_openai(openai), [], middleware=[PIIMiddleware("email"), PIIMiddleware("email")]
        )
    with pytest.raises(AssertionError):  # the reference refuses them too
        create_agent(
            chat_openai(openai), [], middleware=[PIIMiddleware("email"), PIIMiddleware("email")]
        )


def test_jump_target_the_graph_does_not_have(openai: OpenAIServer) -> None:
    class ToTools(AgentMiddleware):
        @hook_config(can_jump_to=["tools"])
        def before_model(self, state: Any, runtime: Any) -> None:
            return None

    with pytest.raises(ValueError, match="'ToTools': before_model declares can_jump_to 'tools'"):
        create_react_agent(chat_openai(openai), [], middleware=[ToTools()])


def test_interrupt_before_a_node_the_agent_lacks(openai: OpenAIServer) -> None:
    with pytest.raises(ValueError, match=r"interrupt_before=\['model'\]: the agent has no node"):
        create_react_agent(chat_openai(openai), [], interrupt_before=["model"])


def test_no_extra_nodes_without_middleware(openai: OpenAIServer) -> None:
    graph = create_react_agent(chat_openai(openai), [add], system_prompt=SystemMessage("hi"))
    assert set(graph.get_graph().nodes) == {"__start__", "agent", "tools", "__end__"}


# --- without langchain --------------------------------------------------------------------------

NO_LANGCHAIN = r"""
import sys
sys.modules["langchain"] = None  # as if it were not installed
from dynavec_langgraph import create_react_agent
from dynavec_langgraph.testing import ScriptedChatModel
graph = create_react_agent(ScriptedChatModel(turns=["hi"]), [], system_prompt="Be brief.")
print(graph.invoke({"messages": [("user", "hello")]})["messages"][-1].content)
for option, value in (("middleware", [object()]), ("response_format", dict)):
    try:
        create_react_agent(ScriptedChatModel(turns=[]), [], **{option: value})
    except ImportError as error:
        print(option, "->", error)
"""


@pytest.mark.service  # a fresh interpreter without langchain
def test_without_langchain_the_factory_works_and_names_the_extra() -> None:
    done = subprocess.run(
        [sys.executable, "-c", NO_LANGCHAIN], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "hi"
    assert lines[1].startswith("middleware -> middleware= needs the `langchain` package")
    assert "pip install 'dynavec-langgraph[middleware]'" in lines[1]
    assert lines[2].startswith("response_format -> response_format= needs the `langchain`")


def test_async_run_with_middleware(openai: OpenAIServer) -> None:
    import asyncio

    @wrap_tool_call
    async def audit(request: Any, handler: Any) -> Any:
        LOG.append(f"awrap_tool {request.tool_call['name']}")
        return await handler(request)

    @before_model
    async def note(state: Any, runtime: Any) -> None:
        LOG.append("abefore_model")

    openai.script([{"name": "add", "args": {"a": 1, "b": 2}}], "3")
    middleware = [note, audit, PIIMiddleware("email"), ModelCallLimitMiddleware(run_limit=5)]
    graph = build("dynavec", chat_openai(openai), [add], middleware=middleware)
    out = asyncio.run(graph.ainvoke({"messages": [("user", "sum")]}, cfg()))
    assert out["messages"][-1].content == "3" and RUNS["add"] == 1
    assert LOG == ["abefore_model", "awrap_tool add", "abefore_model"]
    check_wire(openai, 2)


@pytest.mark.parametrize("kind", KINDS)
def test_sync_only_wrap_model_call_in_async_fails_as_in_create_agent(
    kind: Kind, openai: OpenAIServer
) -> None:
    import asyncio

    @wrap_model_call
    def sync_only(request: ModelRequest, handler: Any) -> Any:
        return handler(request)

    graph = build(kind, chat_openai(openai), [add], middleware=[sync_only])
    with pytest.raises(NotImplementedError, match="awrap_model_call is not available"):
        asyncio.run(graph.ainvoke({"messages": [("user", "sum")]}, cfg()))


def test_human_messages_kept(openai: OpenAIServer) -> None:
    openai.script("hi")
    graph = build("dynavec", chat_openai(openai), [], middleware=[PIIMiddleware("url")])
    out = graph.invoke({"messages": [HumanMessage(content="plain")]}, cfg())
    assert out["messages"][0].content == "plain"


def test_new_input_while_the_hitl_middleware_waits(openai: OpenAIServer) -> None:
    """New input on a thread paused by HumanInTheLoopMiddleware: the calls still wait for
    their approval (the after-model hooks see them again), nothing ran, the thread is valid."""
    openai.script([{"name": "send", "args": {"to": "ada"}}], "sent it")
    hitl = HumanInTheLoopMiddleware(interrupt_on={"send": True})
    graph = build("dynavec", chat_openai(openai), [send], middleware=[hitl])
    config = cfg()
    graph.invoke({"messages": [("user", "mail ada")]}, config)
    out = graph.invoke({"messages": [("user", "quickly please")]}, config)
    (pause,) = out["__interrupt__"]
    assert [r["name"] for r in pause.value["action_requests"]] == ["send"]
    assert RUNS == {}
    out = graph.invoke(Command(resume={"decisions": [{"type": "approve"}]}), config)
    assert RUNS == {"send": 1}
    assert out["messages"][-1].content == "sent it"
    check_wire(openai, 2)


def test_new_input_after_the_hitl_approval_does_not_ask_again(openai: OpenAIServer) -> None:
    """Approved by HumanInTheLoopMiddleware, then paused inside the tool by interrupt(): new
    input finishes the approved call (its pause stands), it is not reviewed again."""
    openai.script([{"name": "transfer", "args": {"amount": 7}}], "moved")
    hitl = HumanInTheLoopMiddleware(interrupt_on={"transfer": True})
    graph = build("dynavec", chat_openai(openai), [transfer], middleware=[hitl])
    config = cfg()
    out = graph.invoke({"messages": [("user", "move 7")]}, config)
    assert "action_requests" in out["__interrupt__"][0].value
    out = graph.invoke(Command(resume={"decisions": [{"type": "approve"}]}), config)
    assert out["__interrupt__"][0].value["payload"] == {"transfer": 7}
    out = graph.invoke({"messages": [("user", "is it done?")]}, config)
    assert out["__interrupt__"][0].value["payload"] == {"transfer": 7}  # the tool's pause
    out = graph.invoke(Command(resume="yes"), config)
    assert RUNS["transfer 7 ran"] == 1
    assert out["messages"][-1].content == "moved"
    check_wire(openai, 2)


def test_before_agent_runs_on_each_new_input_even_while_paused(openai: OpenAIServer) -> None:
    @before_agent
    def count(state: Any, runtime: Any) -> None:
        RUNS["before_agent"] += 1

    openai.script([{"name": "transfer", "args": {"amount": 9}}], "done")
    graph = build("dynavec", chat_openai(openai), [transfer], middleware=[count])
    config = cfg()
    graph.invoke({"messages": [("user", "move 9")]}, config)
    out = graph.invoke({"messages": [("user", "hurry")]}, config)
    assert RUNS["before_agent"] == 2
    assert out["__interrupt__"][0].value["payload"] == {"transfer": 9}  # the pause stands
    out = graph.invoke(Command(resume="ok"), config)  # a resume is not a new invocation
    assert RUNS["before_agent"] == 2 and RUNS["transfer 9 ran"] == 1
    assert out["messages"][-1].content == "done"
    check_wire(openai, 2)
