"""dynavec agents, models and tools, tested the way a dynavec user's tests are: a dynavec
``ChatModel`` subclass as the model, imports only from the mirrored paths. One test per row of
docs/compatibility.md (ids N*, M*, A*, T*); a deliberate difference is asserted as documented."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from typing import TYPE_CHECKING, Any

import pytest

import dynavec_langgraph
import dynavec_langgraph.agents as agents
from dynavec_langgraph.agents import (
    DEFAULT_REACT_SYSTEM_PROMPT,
    AgentState,
    AgentTool,
    ReActAgent,
    ToolRegistry,
    default_registry,
    tool,
)
from dynavec_langgraph.chat import ChatChunk, ChatModel, ChatResult, Message, Role, Tool, ToolCall
from tests.dynavec_model import ScriptedDynavecModel

if TYPE_CHECKING:
    from decimal import Decimal  # only for the type checker: unknown at run time

RUNS: Counter[str] = Counter()


@tool()
def add(a: int, b: int) -> int:
    """Add two numbers."""
    RUNS["add"] += 1
    return a + b


@tool()
def shout(text: str) -> str:
    """Upper-case a text."""
    RUNS["shout"] += 1
    return text.upper()


@tool()
def broken(x: int) -> str:
    """Always fails."""
    raise ValueError(f"no luck with {x}")


@pytest.fixture(autouse=True)
def _reset() -> None:
    RUNS.clear()


# --- N: names -------------------------------------------------------------------------------


def test_n1_names() -> None:
    expected = {
        "ReActAgent", "interrupt", "tool", "AgentTool", "AgentResult", "AgentStep", "AgentState",
        "Checkpoint", "BaseCheckpointer", "MemoryCheckpointer", "Message", "ToolCall",
        "NodeInterrupt", "ApprovalTimeoutError", "MissingDependencyError", "Supervisor",
        "Handoff", "AgentLike", "Planner", "Plan", "PlanStep", "ToolRegistry",
        "default_registry", "DEFAULT_REACT_SYSTEM_PROMPT",
    }  # fmt: skip
    assert set(agents.__all__) >= expected  # dynavec's names (part 2): tests/dynavec_contract
    for name in expected - {"DEFAULT_REACT_SYSTEM_PROMPT"}:  # the constant: agents only
        assert getattr(dynavec_langgraph, name) is getattr(agents, name)
    assert agents.Message is Message and agents.ToolCall is ToolCall


def test_n2_chat_types() -> None:
    assert Message(Role.USER, "x") == Message("user", "x") and [r.value for r in Role] == [
        "system",
        "user",
        "assistant",
        "tool",
    ]
    m = Message(Role.ASSISTANT)
    assert (m.content, m.tool_calls, m.tool_call_id) == (None, [], None)
    assert (
        Tool("t").parameters == {"type": "object", "properties": {}} and Tool("t").description == ""
    )
    call = ToolCall("c1", "add", '{"a": 1}')
    result = ChatResult(Message("assistant", "hi", [call]))
    assert (result.finish_reason, result.usage, result.model, result.raw) == (None, {}, None, None)
    assert (result.content, result.tool_calls) == ("hi", [call])
    chunk = ChatChunk("he")
    assert (chunk.delta, chunk.tool_calls, chunk.finish_reason) == ("he", [], None)
    with pytest.raises(TypeError):
        ChatModel()  # type: ignore[abstract]


# --- M: models ------------------------------------------------------------------------------


def test_m1_chat_model_is_the_model() -> None:
    model = ScriptedDynavecModel([[("add", {"a": 2, "b": 3})], "5"])
    result = ReActAgent(model, tools=[add], system_prompt="Be brief.").run("2+3?")
    assert result.output == "5" and RUNS == Counter({"add": 1})
    first, second = model.seen
    assert [(m.role, m.content) for m in first] == [("system", "Be brief."), ("user", "2+3?")]
    assert [m.role for m in second] == ["system", "user", "assistant", "tool"]
    assert (second[3].tool_call_id, second[3].content) == ("call_1_0", "5")
    assert all(isinstance(m, Message) for m in second)
    (seen_tool,) = model.tools_seen[0]
    assert isinstance(seen_tool, Tool)
    assert (seen_tool.name, seen_tool.description) == ("add", "Add two numbers.")
    assert seen_tool.parameters["required"] == ["a", "b"]


@pytest.mark.parametrize("use_async", [False, True], ids=["run", "arun"])
def test_m1_an_agent_without_tools_sends_tools_none(use_async: bool) -> None:
    """dynavec's agent passes ``tools=None`` when it has none (CONTRACT-2 9.6), not ``[]``;
    a model that tells "no tools" by ``tools is None`` sees the same."""
    model = ScriptedDynavecModel(["plain"])
    agent = ReActAgent(model)
    result = asyncio.run(agent.arun("hi")) if use_async else agent.run("hi")
    assert result.output == "plain" and model.tools_given == [None]
    assert (model.ainvoke_calls, model.invoke_calls) == ((1, 0) if use_async else (0, 1))
    with_tools = ScriptedDynavecModel(["plain"])
    ReActAgent(with_tools, tools=[add]).run("hi")
    (given,) = with_tools.tools_given
    assert isinstance(given, list) and [t.name for t in given] == ["add"]


async def test_m2_default_async_and_stream() -> None:
    model = ScriptedDynavecModel(["hello", "again", "third"], use_default_ainvoke=True)
    got = await model.ainvoke([Message("user", "hi")])
    assert got.message.content == "hello" and model.invoke_calls == 1
    chunks = list(model.stream([Message("user", "hi")]))
    assert [(c.content, c.finish_reason) for c in chunks] == [("again", "stop")]
    chunks = [c async for c in model.astream([Message("user", "hi")])]
    assert [c.content for c in chunks] == ["third"] and model.invoke_calls == 3


async def test_m3_arun_uses_ainvoke() -> None:
    model = ScriptedDynavecModel([[("add", {"a": 1, "b": 1})], "2"])
    result = await ReActAgent(model, tools=[add]).arun("1+1?")
    assert result.output == "2"
    assert (model.ainvoke_calls, model.invoke_calls) == (2, 0)
    sync_model = ScriptedDynavecModel([[("add", {"a": 1, "b": 1})], "2"])
    ReActAgent(sync_model, tools=[add]).run("1+1?")
    assert (sync_model.ainvoke_calls, sync_model.invoke_calls) == (0, 2)


def test_m4_model_kwargs() -> None:
    @tool()
    def remember(note: str, state: AgentState) -> str:
        state.data["note"] = note
        return "ok"

    model = ScriptedDynavecModel([[("remember", {"note": "n"})], "done"])
    shared = AgentState({"secret": 1})
    ReActAgent(model, tools=[remember]).run("go", state=shared, temperature=0.2, seed=7)
    assert model.kwargs_seen == [{"temperature": 0.2, "seed": 7}] * 2
    assert shared.data == {"secret": 1, "note": "n"}
    assert all("secret" not in str(m.content) for turn in model.seen for m in turn)


# --- A: the loop ----------------------------------------------------------------------------


def test_a1_run_records() -> None:
    order: list[str] = []

    @tool()
    def first() -> str:
        order.append("first")
        return "one"

    @tool()
    def second() -> str:
        order.append("second")
        return "two"

    model = ScriptedDynavecModel([[("second", {}), ("first", {}), ("second", {})], "Done."])
    result = ReActAgent(model, tools=[first, second]).run("go")
    assert order == ["second", "first", "second"]
    assert (result.output, result.finished, result.termination_reason) == (
        "Done.",
        True,
        "completed",
    )
    assert (result.total_steps, result.tool_calls_count) == (2, 3)
    step1, step2 = result.steps
    assert [c.name for c in step1.tool_calls] == ["second", "first", "second"]
    assert step1.observations == ["two", "one", "two"]
    assert (step2.step_number, step2.thought, step2.observations) == (2, "Done.", [])


def test_a3_max_steps() -> None:
    def looping(messages: list[Message]) -> Any:
        return [("add", {"a": len(messages), "b": 0})]

    model = ScriptedDynavecModel(policy=looping)
    result = ReActAgent(model, tools=[add], max_steps=2).run("loop")
    assert (result.finished, result.termination_reason) == (False, "max_steps_reached")
    assert (result.total_steps, model.calls, result.output) == (2, 2, "4")  # last observation
    once = ScriptedDynavecModel(policy=looping)
    assert ReActAgent(once, tools=[add], max_steps=0).run("loop").total_steps == 1
    assert once.calls == 1


def test_a4_system_prompt() -> None:
    default = ScriptedDynavecModel(["a"])
    ReActAgent(default).run("hi")
    assert default.seen[0][0] == Message("system", DEFAULT_REACT_SYSTEM_PROMPT)
    none = ScriptedDynavecModel(["a"])
    ReActAgent(none, system_prompt="").run("hi")
    assert [m.role for m in none.seen[0]] == ["user"]


def test_a5_tool_errors() -> None:
    model = ScriptedDynavecModel(
        [[("broken", {"x": 3}), ("nope", {}), ("add", {"a": 1, "b": 2})], "ok"]
    )
    result = ReActAgent(model, tools=[broken, add]).run("go")
    assert result.steps[0].observations == [
        "Error executing tool 'broken': no luck with 3",
        "Error: Tool 'nope' is not registered in available tools.",
        "3",
    ]
    assert result.output == "ok"


def test_a6_sync_async_identical() -> None:
    def script() -> ScriptedDynavecModel:
        return ScriptedDynavecModel([[("add", {"a": 1, "b": 2}), ("shout", {"text": "x"})], "fin"])

    sync = ReActAgent(script(), tools=[add, shout]).run("go", thread_id="t")
    async_ = asyncio.run(ReActAgent(script(), tools=[add, shout]).arun("go", thread_id="t"))
    assert sync == async_


def test_a7_reused_call_id_stops_at_max_steps() -> None:
    """dynavec's own max-steps test: the model gives every call the id ``call_0``."""
    model = ScriptedDynavecModel(policy=lambda _: [("add", {"a": 1, "b": 1})], fixed_id="call_0")
    result = ReActAgent(model, tools=[add], max_steps=3).run("loop forever")
    assert result.termination_reason == "max_steps_reached"
    assert model.calls == 3 and RUNS["add"] == 3
    assert (result.total_steps, result.tool_calls_count) == (3, 3)
    assert [s.observations for s in result.steps] == [["2"]] * 3


def test_a8_shared_state() -> None:
    @tool()
    def count(state: AgentState) -> str:
        state.data["n"] = state.data.get("n", 0) + 1
        return str(state.data["n"])

    shared = AgentState()
    model = ScriptedDynavecModel([[("count", {})], [("count", {})], "two"])
    ReActAgent(model, tools=[count]).run("count", state=shared)
    assert shared.data == {"n": 2}
    assert AgentState().data == {} and AgentState().data is not AgentState().data


# --- T: tools -------------------------------------------------------------------------------


def test_t1_tool_forms() -> None:
    def f(a: int, b: str = "x") -> str:
        return b * a

    bare = tool(f)
    named = tool("g")(f)
    full = tool(name="h", description="d", parameters={"type": "object"}, tags=["t"])(f)
    assert (bare.name, bare.description, bare.parameters["required"]) == ("f", "Execute f", ["a"])
    assert tool()(f).name == "f" and named.name == "g"
    assert (full.name, full.description, full.parameters, full.tags) == (
        "h", "d", {"type": "object"}, ["t"],
    )  # fmt: skip
    assert add.description == "Add two numbers." and add(3, 4) == 7


def test_t2_agent_tool_constructor() -> None:
    def double(x: int) -> int:
        """Double it."""
        return 2 * x

    made = AgentTool(double, name="dbl", tags=["math"])
    assert (made.name, made.description, made.tags, made.fn) == (
        "dbl",
        "Double it.",
        ["math"],
        double,
    )
    assert made.execute({"x": 4}) == "8" and made(5) == 10
    chat_tool = made.to_chat_tool()
    assert chat_tool == Tool("dbl", "Double it.", made.parameters)
    model = ScriptedDynavecModel([[("dbl", {"x": 2})], "4"])
    assert ReActAgent(model, tools=[made]).run("?").steps[0].observations == ["4"]


def test_t3_execute_rules() -> None:
    @tool()
    def echo(value: Any) -> Any:
        return value

    @tool()
    def pair(a: int, b: int = 0) -> dict[str, int]:
        return {"a": a, "b": b}

    assert pair.execute({"a": 1, "zzz": 2}) == '{"a": 1, "b": 0}'  # unknown keys dropped
    assert pair.execute('{"a": 2, "b": 3}') == '{"a": 2, "b": 3}'
    assert echo.execute("[1, 2]") == "[1, 2]"  # other JSON -> {"input": value} -> one param
    assert echo.execute("plain text") == "plain text"
    assert echo.execute({"other": "é"}) == "é"
    assert pair.execute("") == pair.execute(None)
    assert pair.execute(None).startswith("Error executing tool 'pair'")


def test_t4_real_world_signatures() -> None:
    class Account:
        pass

    def pay(account: Account, amount: Decimal, note: str = "") -> str:
        return f"{account}|{amount}|{note}"

    made = tool(pay)  # never crashes at decoration
    props = made.parameters["properties"]
    assert props["account"]["type"] == "string" and props["amount"]["type"] == "string"
    assert made.parameters["required"] == ["account", "amount"]
    assert made.execute({"account": "acc-1", "amount": "12.5"}) == "acc-1|12.5|"
    account = Account()
    assert made.execute({"account": account, "amount": 3}) == f"{account}|3|"  # as given


def test_t5_arguments_validated() -> None:
    """Differs on purpose (docs/compatibility.md T5)."""
    observation = add.execute({"a": "three", "b": 1})
    assert observation.startswith("Error executing tool 'add': invalid arguments: a:")
    assert RUNS["add"] == 0
    assert add.execute({"a": "3", "b": 1}) == "4"  # coercible values are coerced


def test_t6_duplicate_names_refused() -> None:
    """Differs on purpose (docs/compatibility.md T6)."""
    other = AgentTool(lambda a, b: a - b, name="add")
    with pytest.raises(ValueError, match="two tools are named 'add'"):
        ReActAgent(ScriptedDynavecModel(["x"]), tools=[add, other])
    registry = ToolRegistry([add])  # a registry replaces, as dynavec's (docs R2)
    assert registry.register(other) is other and registry.get("add") is other


def test_t7_registry() -> None:
    registry = ToolRegistry()

    @registry.tool(description="Multiply.")
    def mul(a: int, b: int) -> int:
        return a * b

    registry.register(add)
    assert registry.names() == ["mul", "add"] and "mul" in registry and len(registry) == 2
    assert registry.get("mul") is mul and registry.get("nope") is None
    assert [t.name for t in registry.tools(["add"])] == ["add"]
    with pytest.raises(KeyError, match="nope"):
        registry.tools(["nope"])
    model = ScriptedDynavecModel([[("mul", {"a": 6, "b": 7})], "42"])
    assert ReActAgent(model, tools=registry.tools()).run("6*7").steps[0].observations == ["42"]
    assert registry.unregister("mul") and not registry.unregister("mul")
    assert isinstance(default_registry, ToolRegistry) and "mul" not in default_registry
    assert json.loads(registry.get("add").execute({"a": 1, "b": 1}) or "0") == 2  # type: ignore[union-attr]


def test_m5_agent_streams_the_whole_answer_at_once() -> None:
    """Differs on purpose (docs/compatibility.md M5): the model's ``stream`` is not used."""

    class Streaming(ScriptedDynavecModel):
        streamed = 0

        def stream(self, messages: Any, tools: Any = None, **kwargs: Any) -> Any:
            Streaming.streamed += 1
            return super().stream(messages, tools, **kwargs)

    model = Streaming(["hello there"])
    events = list(ReActAgent(model).stream("hi"))
    assert [type(e).__name__ for e in events] == ["TokenEvent", "ResultEvent"]
    assert getattr(events[0], "text", None) == "hello there"
    assert (Streaming.streamed, model.invoke_calls) == (0, 1)
