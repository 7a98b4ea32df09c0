"""``@tool``, ``AgentTool`` and ``as_tools`` (docs/compatibility.md §3), and LangChain interop."""

from __future__ import annotations

import asyncio
import json
import typing
from collections import Counter
from typing import Any, Literal

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool
from langchain_core.tools import tool as lc_tool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from pydantic import BaseModel

from dynavec_langgraph import AgentTool, create_react_agent, tool
from dynavec_langgraph._tools.adapters import as_tools
from dynavec_langgraph.testing import ScriptedChatModel
from tests.test_graph import assert_provider_valid

# --- the decorator forms ----------------------------------------------------------------------


def _add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def test_bare_decorator() -> None:
    add = tool(_add)
    assert isinstance(add, AgentTool)
    assert isinstance(add, BaseTool)
    assert add.name == "_add"
    assert add.description == "Add two numbers."
    assert add.parameters["required"] == ["a", "b"]
    assert add.tags == []
    assert add(3, 4) == 7


def test_empty_call_decorator() -> None:
    @tool()
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    assert (add.name, add.description, add(3, 4)) == ("add", "Add two numbers.", 7)


def test_name_decorator() -> None:
    @tool("sum_two")
    def add(a: int, b: int) -> int:
        return a + b

    assert add.name == "sum_two"
    assert add.description == "Execute sum_two"
    assert add.execute({"a": 1, "b": 2}) == "3"


def test_keyword_decorator() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a"],
    }

    @tool(name="plus", description="Plus.", parameters=schema, tags=["math", "cheap"])
    def add(a: int, b: int = 10) -> int:
        """Ignored docstring."""
        return a + b

    assert add.name == "plus"
    assert add.description == "Plus."
    assert add.parameters == schema
    assert add.tags == ["math", "cheap"]
    assert add(3, 4) == 7
    assert add.execute({"a": 1}) == "11"


def test_description_defaults() -> None:
    @tool
    def silent(x: int) -> int:
        return x

    @tool
    def spaced(x: int) -> int:
        """

        Padded docstring.

        """
        return x

    @tool
    def blank(x: int) -> int:
        """ """
        return x

    assert silent.description == "Execute silent"
    assert spaced.description == "Padded docstring."
    assert blank.description == "Execute blank"


def test_bad_decorator_argument() -> None:
    with pytest.raises(TypeError):
        tool(42)  # type: ignore[call-overload]


# --- schema -----------------------------------------------------------------------------------


class Address(BaseModel):
    street: str
    zip_code: int | None = None


def test_schema_from_type_hints() -> None:
    @tool
    def ship(
        address: Address,
        mode: Literal["air", "sea"],
        items: list[str],
        note: str | None = None,
        copies: int = 1,
    ) -> str:
        """Ship items."""
        return "ok"

    schema = ship.parameters
    assert schema["type"] == "object"
    assert schema["required"] == ["address", "mode", "items"]
    props = schema["properties"]
    assert props["mode"] == {"enum": ["air", "sea"], "type": "string"}
    assert props["items"] == {"items": {"type": "string"}, "type": "array"}
    assert props["note"]["anyOf"] == [{"type": "string"}, {"type": "null"}]
    assert props["note"]["default"] is None
    assert props["copies"] == {"default": 1, "type": "integer"}
    ref = props["address"]["$ref"].rsplit("/", 1)[-1]
    nested = schema["$defs"][ref]
    assert nested["required"] == ["street"]
    assert set(nested["properties"]) == {"street", "zip_code"}
    # the model is shown the same schema through LangChain's tool conversion
    shown = convert_to_openai_tool(ship)["function"]
    assert shown["name"] == "ship"
    assert shown["parameters"]["required"] == ["address", "mode", "items"]


def test_nested_model_arguments_are_validated_objects() -> None:
    seen: list[Address] = []

    @tool
    def ship(address: Address, mode: Literal["air", "sea"]) -> str:
        seen.append(address)
        return f"{address.street} by {mode}"

    assert ship.execute({"address": {"street": "Main 1"}, "mode": "air"}) == "Main 1 by air"
    assert seen == [Address(street="Main 1")]
    bad = ship.execute({"address": {"street": "Main 1"}, "mode": "rail"})
    assert bad.startswith("Error executing tool 'ship': ")
    assert "mode" in bad
    assert len(seen) == 1


def test_parameters_override_what_the_model_sees() -> None:
    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": []}

    @tool(parameters=schema)
    def weather(city: str = "Oslo") -> str:
        return f"sunny in {city}"

    assert weather.parameters == schema
    assert convert_to_openai_tool(weather)["function"]["parameters"]["properties"] == {
        "city": {"type": "string"}
    }
    assert weather.execute(None) == "sunny in Oslo"


# --- execute(): argument rules ------------------------------------------------------------------


def _recorder() -> tuple[AgentTool, list[dict[str, Any]]]:
    received: list[dict[str, Any]] = []

    @tool
    def pair(input: Any = None, other: int = 0) -> str:
        received.append({"input": input, "other": other})
        return "ok"

    return pair, received


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"input": 1, "other": 2}, {"input": 1, "other": 2}),
        ('{"input": "x", "other": 3, "unknown": true}', {"input": "x", "other": 3}),
        ({"other": 5, "unknown": 1}, {"input": None, "other": 5}),
        ("[1, 2]", {"input": [1, 2], "other": 0}),
        ("42", {"input": 42, "other": 0}),
        ('"quoted"', {"input": "quoted", "other": 0}),
        ("not json at all", {"input": "not json at all", "other": 0}),
        ("", {"input": None, "other": 0}),
        ("   ", {"input": None, "other": 0}),
        (None, {"input": None, "other": 0}),
    ],
)
def test_execute_argument_rules(arguments: Any, expected: dict[str, Any]) -> None:
    pair, received = _recorder()
    assert pair.execute(arguments) == "ok"
    assert received == [expected]


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"text": "direct"}, "DIRECT"),
        ({"query": "first value"}, "FIRST VALUE"),
        ('{"q": "json first", "z": "second"}', "JSON FIRST"),
        ("plain text", "PLAIN TEXT"),
        ('"json string"', "JSON STRING"),
    ],
)
def test_single_parameter_receives_first_value(arguments: Any, expected: str) -> None:
    calls = Counter[str]()

    @tool
    def shout(text: str) -> str:
        calls["shout"] += 1
        return text.upper()

    assert shout.execute(arguments) == expected
    assert calls["shout"] == 1


def test_missing_required_argument_is_an_observation() -> None:
    calls = Counter[str]()

    @tool
    def shout(text: str) -> str:
        calls["shout"] += 1
        return text.upper()

    blanks: list[Any] = ["", None, {}]
    for blank in blanks:
        observation = shout.execute(blank)
        assert observation.startswith("Error executing tool 'shout': ")
        assert "text" in observation
    assert calls["shout"] == 0


# --- results and errors -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("result", "expected"),
    [
        ("plain", "plain"),
        ('{"already": "json"}', '{"already": "json"}'),
        (7, "7"),
        (1.5, "1.5"),
        (None, "null"),
        (True, "true"),
        ([1, "ü"], '[1, "ü"]'),
        ({"city": "Zürich", "n": 2}, '{"city": "Zürich", "n": 2}'),
    ],
)
def test_result_stringification(result: Any, expected: str) -> None:
    @tool
    def give() -> Any:
        return result

    assert give.execute() == expected
    if not isinstance(result, str):
        assert give.execute() == json.dumps(result, ensure_ascii=False)


def test_tool_error_observation() -> None:
    calls = Counter[str]()

    @tool
    def boom(x: int) -> str:
        calls["boom"] += 1
        raise RuntimeError(f"kaput {x}")

    assert boom.execute({"x": 3}) == "Error executing tool 'boom': kaput 3"
    assert boom.invoke({"x": 4}) == "Error executing tool 'boom': kaput 4"
    assert calls["boom"] == 2


async def test_tool_error_observation_async() -> None:
    calls = Counter[str]()

    @tool
    async def boom(x: int) -> str:
        calls["boom"] += 1
        raise ValueError(f"bad {x}")

    assert await boom.aexecute({"x": 1}) == "Error executing tool 'boom': bad 1"
    assert await boom.ainvoke({"x": 2}) == "Error executing tool 'boom': bad 2"
    assert calls["boom"] == 2


# --- sync and async ---------------------------------------------------------------------------


def test_sync_tool_invoke_and_execute() -> None:
    calls = Counter[str]()

    @tool
    def add(a: int, b: int) -> int:
        calls["add"] += 1
        return a + b

    assert add(3, 4) == 7
    assert add.execute('{"a": 3, "b": 4}') == "7"
    assert add.invoke({"a": 3, "b": 4}) == "7"
    assert calls["add"] == 3


def test_a_tool_call_resolves_no_annotations(monkeypatch: pytest.MonkeyPatch) -> None:
    """LangChain's ``BaseTool.run``/``arun`` read ``get_type_hints(self._run)`` on every call
    (``_get_runnable_config_param``, langchain-core 1.x): ``AgentTool``'s ``_run``/``_arun``
    carry resolved annotations, so a call compiles no ``ForwardRef`` (it compiled three)."""
    made = Counter[str]()
    real_init = typing.ForwardRef.__init__

    def counting_init(self: typing.ForwardRef, *args: Any, **kwargs: Any) -> None:
        made[str(args[0]) if args else "?"] += 1
        real_init(self, *args, **kwargs)

    @tool
    def add(a: int, b: int) -> int:
        return a + b

    monkeypatch.setattr(typing.ForwardRef, "__init__", counting_init)
    assert add.invoke({"a": 3, "b": 4}) == "7"
    assert asyncio.run(add.ainvoke({"a": 1, "b": 2})) == "3"
    assert made == Counter()
    hints = [*AgentTool._run.__annotations__.values(), *AgentTool._arun.__annotations__.values()]
    assert hints and not any(isinstance(h, str) for h in hints)


async def test_sync_tool_from_async_code() -> None:
    calls = Counter[str]()

    @tool
    def add(a: int, b: int) -> int:
        calls["add"] += 1
        return a + b

    assert await add.aexecute({"a": 1, "b": 2}) == "3"
    assert await add.ainvoke({"a": 1, "b": 2}) == "3"
    assert calls["add"] == 2


async def test_async_tool() -> None:
    calls = Counter[str]()

    @tool
    async def fetch(url: str) -> dict[str, Any]:
        """Fetch a page."""
        calls["fetch"] += 1
        return {"url": url, "status": 200}

    assert fetch.description == "Fetch a page."
    assert fetch.parameters["required"] == ["url"]
    assert await fetch("u0") == {"url": "u0", "status": 200}
    assert await fetch.aexecute({"url": "u1"}) == '{"url": "u1", "status": 200}'
    assert await fetch.ainvoke({"url": "u2"}) == '{"url": "u2", "status": 200}'
    # execute() inside a running loop cannot block on it: dynavec's observation
    # (docs/compatibility.md, R7)
    observation = fetch.execute({"url": "u3"})
    assert observation == (
        "Error: Cannot execute async tool 'fetch' synchronously in a running event loop."
    )
    assert calls["fetch"] == 3


def test_async_tool_execute_without_loop() -> None:
    calls = Counter[str]()

    @tool
    async def fetch(url: str) -> str:
        calls["fetch"] += 1
        return f"page {url}"

    assert fetch.execute({"url": "a"}) == "page a"
    assert calls["fetch"] == 1


# --- LangGraph's ToolNode and langchain's create_agent --------------------------------------


def _counted_add(calls: Counter[str]) -> AgentTool:
    @tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        calls["add"] += 1
        return a + b

    return add


def _call_message() -> AIMessage:
    return AIMessage(
        content="",
        tool_calls=[
            {"name": "add", "args": {"a": 3, "b": 4}, "id": "call_1", "type": "tool_call"},
            {"name": "add", "args": {"a": 1, "b": 1}, "id": "call_2", "type": "tool_call"},
        ],
    )


def _tool_node_graph(tools: list[Any]) -> Any:
    builder = StateGraph(MessagesState)
    builder.add_node("tools", ToolNode(tools))
    builder.add_edge(START, "tools")
    builder.add_edge("tools", END)
    return builder.compile()


def test_agent_tool_in_langgraph_tool_node() -> None:
    calls = Counter[str]()
    out = _tool_node_graph([_counted_add(calls)]).invoke({"messages": [_call_message()]})
    answers = out["messages"][1:]
    assert_provider_valid(out["messages"])
    assert [(m.tool_call_id, m.content) for m in answers] == [("call_1", "7"), ("call_2", "2")]
    assert all(isinstance(m, ToolMessage) and m.name == "add" for m in answers)
    assert calls["add"] == 2


async def test_agent_tool_in_langgraph_tool_node_async() -> None:
    calls = Counter[str]()
    out = await _tool_node_graph([_counted_add(calls)]).ainvoke({"messages": [_call_message()]})
    assert_provider_valid(out["messages"])
    assert [(m.tool_call_id, m.content) for m in out["messages"][1:]] == [
        ("call_1", "7"),
        ("call_2", "2"),
    ]
    assert calls["add"] == 2


def _create_agent_run(calls: Counter[str]) -> tuple[Any, ScriptedChatModel]:
    model = ScriptedChatModel(turns=[[{"name": "add", "args": {"a": 3, "b": 4}}], "It is 7."])
    agent = create_agent(model=model, tools=[_counted_add(calls)])
    return agent, model


def _check_create_agent_result(result: dict[str, Any], model: ScriptedChatModel) -> None:
    messages = result["messages"]
    assert isinstance(messages[0], HumanMessage)
    tool_messages = [m for m in messages if isinstance(m, ToolMessage)]
    assert [m.content for m in tool_messages] == ["7"]
    assert messages[-1].content == "It is 7."
    assert len(model.calls) == 2
    for received in model.calls:
        assert_provider_valid(received)


def test_agent_tool_in_langchain_create_agent() -> None:
    calls = Counter[str]()
    agent, model = _create_agent_run(calls)
    result = agent.invoke({"messages": [HumanMessage("3 + 4?")]})
    _check_create_agent_result(result, model)
    assert calls["add"] == 1


async def test_agent_tool_in_langchain_create_agent_async() -> None:
    calls = Counter[str]()
    agent, model = _create_agent_run(calls)
    result = await agent.ainvoke({"messages": [HumanMessage("3 + 4?")]})
    _check_create_agent_result(result, model)
    assert calls["add"] == 1


# --- as_tools ---------------------------------------------------------------------------------


class DynavecStyleTool:
    """A dynavec tool object: name, description, parameters, execute(arguments) -> str."""

    name = "lookup"
    description = "Look a word up."
    parameters: dict[str, Any] = {  # noqa: RUF012
        "type": "object",
        "properties": {"word": {"type": "string"}},
        "required": ["word"],
    }

    def __init__(self) -> None:
        self.received: list[Any] = []

    def execute(self, arguments: Any) -> str:
        self.received.append(arguments)
        args = json.loads(arguments) if isinstance(arguments, str) else arguments
        return f"definition of {args['word']}"


def _plain_square(n: int) -> int:
    """Square a number."""
    return n * n


def _lc_multiply(calls: Counter[str]) -> BaseTool:
    @lc_tool
    def multiply(a: int, b: int) -> int:
        """Multiply two numbers."""
        calls["multiply"] += 1
        return a * b

    return multiply


def test_as_tools_accepts_every_kind() -> None:
    calls = Counter[str]()
    agent_tool = _counted_add(calls)
    dynavec_tool = DynavecStyleTool()
    tools = as_tools([agent_tool, _plain_square, _lc_multiply(calls), dynavec_tool])
    assert all(isinstance(t, AgentTool) for t in tools)
    assert tools[0] is agent_tool
    by_name = {t.name: t for t in tools}
    assert list(by_name) == ["add", "_plain_square", "multiply", "lookup"]

    assert by_name["_plain_square"].description == "Square a number."
    assert by_name["_plain_square"].parameters["required"] == ["n"]
    assert by_name["_plain_square"].execute('{"n": 5}') == "25"

    assert by_name["multiply"].description == "Multiply two numbers."
    assert by_name["multiply"].parameters["required"] == ["a", "b"]
    assert by_name["multiply"].execute({"a": 6, "b": 7}) == "42"
    assert calls["multiply"] == 1

    assert by_name["lookup"].description == "Look a word up."
    assert by_name["lookup"].parameters == DynavecStyleTool.parameters
    assert by_name["lookup"].execute('{"word": "ox"}') == "definition of ox"
    assert dynavec_tool.received == [{"word": "ox"}]


async def test_as_tools_adapters_async() -> None:
    calls = Counter[str]()
    dynavec_tool = DynavecStyleTool()
    multiply, lookup = as_tools([_lc_multiply(calls), dynavec_tool])
    assert await multiply.aexecute({"a": 2, "b": 5}) == "10"
    assert await lookup.aexecute({"word": "elk"}) == "definition of elk"
    assert calls["multiply"] == 1
    assert dynavec_tool.received == [{"word": "elk"}]


def test_as_tools_empty() -> None:
    assert as_tools(None) == []
    assert as_tools([]) == []


@pytest.mark.parametrize("junk", [42, "add", None, {"name": "x"}, object()])
def test_as_tools_rejects_junk(junk: Any) -> None:
    with pytest.raises(TypeError, match="tools="):
        as_tools([junk])


def test_as_tools_rejects_duplicate_names() -> None:
    @tool("same")
    def one() -> str:
        return "1"

    @tool("same")
    def two() -> str:
        return "2"

    with pytest.raises(ValueError, match="same"):
        as_tools([one, two])
    with pytest.raises(ValueError, match="_plain_square"):
        as_tools([_plain_square, _plain_square])


def test_every_kind_of_tool_runs_in_the_agent() -> None:
    calls = Counter[str]()
    dynavec_tool = DynavecStyleTool()
    model = ScriptedChatModel(
        turns=[
            [
                {"name": "_plain_square", "args": {"n": 3}},
                {"name": "multiply", "args": {"a": 2, "b": 4}},
                {"name": "lookup", "args": {"word": "gnu"}},
                {"name": "add", "args": {"a": 1, "b": 2}},
            ],
            "done",
        ]
    )
    graph = create_react_agent(
        model, [_plain_square, _lc_multiply(calls), dynavec_tool, _counted_add(calls)]
    )
    out = graph.invoke({"messages": [("user", "go")]})
    observations = [m.content for m in out["messages"] if isinstance(m, ToolMessage)]
    assert observations == ["9", "8", "definition of gnu", "3"]
    assert calls == Counter({"multiply": 1, "add": 1})
    assert dynavec_tool.received == [{"word": "gnu"}]
    assert out["messages"][-1].content == "done"
    for received in model.calls:
        assert_provider_valid(received)
    with pytest.raises(ValueError, match="add"):
        create_react_agent(ScriptedChatModel(), [_counted_add(calls), _counted_add(calls)])
    with pytest.raises(TypeError, match="tools="):
        create_react_agent(ScriptedChatModel(), [123])  # type: ignore[list-item]
