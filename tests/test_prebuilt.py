"""``create_react_agent`` as the prebuilt agent's drop-in (docs/compatibility.md PB1-PB8), with the
human-in-the-loop contract in place. LangGraph's own prebuilt suite runs in
``make reference-prebuilt``; these tests pin what it does not check: the pause and resume with
the prebuilt options, over HTTP where a provider is involved."""

from __future__ import annotations

import dataclasses
import inspect
import uuid
from collections import Counter
from typing import Annotated, Any

import pytest
from langchain_core.messages import AIMessage, AnyMessage, SystemMessage, ToolMessage
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langchain_core.tools import tool as lc_tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph.message import add_messages
from langgraph.prebuilt import InjectedState, ToolRuntime
from langgraph.prebuilt import create_react_agent as prebuilt_agent
from langgraph.runtime import Runtime
from langgraph.store.memory import InMemoryStore
from langgraph.types import Command
from langgraph.warnings import LangGraphDeprecatedSinceV10
from pydantic import BaseModel

from dynavec_langgraph import create_react_agent, interrupt
from dynavec_langgraph.testing import ScriptedChatModel
from tests.openai_server import OpenAIServer, chat_openai


def cfg(**configurable: Any) -> RunnableConfig:
    return {"configurable": {"thread_id": str(uuid.uuid4()), **configurable}}


def test_every_prebuilt_parameter_is_taken() -> None:
    ours = inspect.signature(create_react_agent).parameters
    reference = inspect.signature(prebuilt_agent).parameters
    for name, param in reference.items():
        if param.kind is inspect.Parameter.VAR_KEYWORD:
            continue
        assert name in ours, name
        if param.default is not inspect.Parameter.empty:
            assert ours[name].default == param.default, name
    model = ScriptedChatModel(turns=["a", "b"])
    for version in ("v1", "v2"):
        assert create_react_agent(model, [], version=version).invoke({"messages": [("user", "x")]})
    with pytest.raises(ValueError, match=r"version='v3': use 'v1' or 'v2'"):
        create_react_agent(model, [], version="v3")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"unexpected keyword arguments: \{'tool': 1\}"):
        create_react_agent(model, [], tool=1)
    with pytest.warns(LangGraphDeprecatedSinceV10, match="config_schema"):
        graph = create_react_agent(model, [], config_schema=dict)
    assert graph.context_schema is dict


class Ledger(BaseModel):
    messages: Annotated[list[AnyMessage], add_messages]
    owner: str = "ada"


@dataclasses.dataclass
class LedgerData:
    messages: Annotated[list[AnyMessage], add_messages]
    owner: str = "ada"


@pytest.mark.parametrize("schema", [Ledger, LedgerData])
@pytest.mark.parametrize("version", ["v1", "v2"])
async def test_callable_model_and_typed_state_keep_the_pause(
    schema: type[Any], version: str
) -> None:
    """A callable model, a pydantic / dataclass state, a callable prompt, a hook and an
    ``InjectedState`` tool, with the contract: one call per superstep, the later call waits
    for the decision, finished calls never run again."""
    seen: Counter[str] = Counter()
    runs: Counter[str] = Counter()

    @lc_tool
    def approve(amount: int, state: Annotated[Any, InjectedState]) -> str:
        """Ask a person to approve a payment."""
        seen[f"tool:{type(state).__name__}:{state.owner}"] += 1
        runs["approve"] += 1
        return str(interrupt("approve", {"amount": amount}))

    @lc_tool
    def log(note: str, runtime: ToolRuntime) -> str:
        """Write a note."""
        seen[f"runtime:{type(runtime.state).__name__}"] += 1
        runs["log"] += 1
        return f"logged {note}"

    scripted = ScriptedChatModel(
        turns=[
            [{"name": "approve", "args": {"amount": 5}}, {"name": "log", "args": {"note": "x"}}],
            "Done.",
        ]
    )

    def choose(state: Any, runtime: Runtime[Any]) -> Any:
        seen[f"model:{type(state).__name__}"] += 1
        return scripted.bind_tools([approve, log])

    def prompt(state: Any) -> list[AnyMessage]:
        seen[f"prompt:{type(state).__name__}"] += 1
        return [SystemMessage(f"Owner: {state.owner}"), *state.messages]

    def before(state: schema) -> dict[str, Any]:  # type: ignore[valid-type]
        seen[f"hook:{type(state).__name__}"] += 1
        return {}

    graph = create_react_agent(
        choose,
        [approve, log],
        prompt=prompt,
        pre_model_hook=before,
        state_schema=schema,
        checkpointer=InMemorySaver(),
        version=version,  # type: ignore[arg-type]
    )
    config = cfg()
    out = await graph.ainvoke({"messages": [("user", "pay")], "owner": "bo"}, config)
    assert "__interrupt__" in out
    assert runs == Counter({"approve": 1})  # the later call waits for the decision
    state = await graph.aget_state(config)
    assert state.next == ("tools",)
    out = await graph.ainvoke(Command(resume="approved"), config)
    assert runs == Counter({"approve": 2, "log": 1})  # approve re-ran to its pause; log once
    answers = [m.content for m in out["messages"] if isinstance(m, ToolMessage)]
    assert answers == ["approved", "logged x"] and out["messages"][-1].content == "Done."
    assert set(out) == {"messages", "owner"} and out["owner"] == "bo"
    name = schema.__name__
    assert seen == Counter(
        {
            f"model:{name}": 2,
            f"prompt:{name}": 2,
            f"hook:{name}": 2,
            f"tool:{name}:bo": 2,
            f"runtime:{name}": 1,
        }
    )


async def test_an_async_model_callable_needs_ainvoke() -> None:
    async def choose(state: Any, runtime: Runtime[Any]) -> Any:
        return ScriptedChatModel(turns=["hi"])

    graph = create_react_agent(choose, [])
    with pytest.raises(RuntimeError, match=r"Use agent\.ainvoke\(\) or agent\.astream\(\)"):
        graph.invoke({"messages": [("user", "x")]})
    out = await graph.ainvoke({"messages": [("user", "x")]})
    assert out["messages"][-1].content == "hi"


def test_prompt_gets_the_store_and_may_return_a_runnable() -> None:
    store = InMemoryStore()
    store.put(("users",), "1", {"name": "Ada"})

    def prompt(state: dict[str, Any], config: RunnableConfig, *, store: Any) -> Any:
        user = store.get(("users",), config["configurable"]["user_id"]).value["name"]
        assert "step" not in state and "termination_reason" not in state
        return SystemMessage(f"User: {user}") + state["messages"]

    model = ScriptedChatModel(turns=["hello"])
    graph = create_react_agent(model, [], prompt=prompt, store=store)
    out = graph.invoke({"messages": [("user", "hi")]}, cfg(user_id="1"))
    assert out["messages"][-1].content == "hello"
    assert [m.content for m in model.calls[-1]] == ["User: Ada", "hi"]


def test_builtin_tools_and_bound_models(openai: OpenAIServer) -> None:
    builtin = {
        "type": "function",
        "function": {"name": "server_side", "parameters": {"type": "object", "properties": {}}},
    }

    @lc_tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    openai.script([{"name": "add", "args": {"a": 1, "b": 2}}], "3")
    graph = create_react_agent(chat_openai(openai), [add, builtin], checkpointer=InMemorySaver())
    out = graph.invoke({"messages": [("user", "1+2?")]}, cfg())
    assert [m.content for m in out["messages"][-2:]] == ["3", "3"]
    names = [t["function"]["name"] for t in openai.requests[0]["tools"]]
    assert names == ["add", "server_side"]
    assert openai.rejections == []
    model = chat_openai(openai)

    @lc_tool
    def sub(a: int, b: int) -> int:
        """Subtract."""
        return a - b

    with pytest.raises(ValueError, match=r"Number of tools in the model\.bind_tools"):
        create_react_agent(model.bind_tools([add]), [add, sub])
    with pytest.raises(ValueError, match=r"Missing tools '\{'sub'\}'"):
        create_react_agent(model.bind_tools([add]), [sub])
    create_react_agent(model.bind_tools([add, builtin]), [add, builtin])  # matches


class Weather(BaseModel):
    city: str
    degrees: int


def test_prebuilt_response_format(openai: OpenAIServer) -> None:
    """With a prebuilt-only option (here ``version=``), ``response_format`` is the prebuilt's:
    the run as usual, then one ``with_structured_output`` call; a tuple adds its prompt."""
    openai.script("It is 21 in Oslo.", '{"city": "Oslo", "degrees": 21}')
    graph = create_react_agent(
        chat_openai(openai),
        [],
        response_format=("Answer as JSON.", Weather),
        checkpointer=InMemorySaver(),
        version="v2",
    )
    assert "generate_structured_response" in graph.nodes
    out = graph.invoke({"messages": [("user", "weather?")]}, cfg())
    assert out["structured_response"] == Weather(city="Oslo", degrees=21)
    assert [type(m).__name__ for m in out["messages"]] == ["HumanMessage", "AIMessage"]
    assert isinstance(out["messages"][-1], AIMessage)
    assert openai.requests[1]["messages"][0] == {"role": "system", "content": "Answer as JSON."}
    assert openai.rejections == []


@dataclasses.dataclass
class Strict:
    messages: Annotated[list[AnyMessage], add_messages]
    owner: str


def test_a_dataclass_state_missing_a_field_says_what_to_do() -> None:
    def prompt(state: Strict) -> list[AnyMessage]:
        return list(state.messages)

    graph = create_react_agent(
        ScriptedChatModel(turns=["hi", "hi"]), [], prompt=prompt, state_schema=Strict
    )
    with pytest.raises(ValueError, match=r"state_schema=Strict: .*give the field a default"):
        graph.invoke({"messages": [("user", "x")]})
    assert graph.invoke({"messages": [("user", "x")], "owner": "bo"})["owner"] == "bo"


def _repeating_model(turns: list[int]) -> Any:
    """A callable model whose every turn has message id "0" and call id "1" (the reference
    suite's fake model in ``test_dynamic_model_with_tools``), counting its turns."""

    def answer(_: Any) -> AIMessage:
        turns.append(1)
        return AIMessage("", id="0", tool_calls=[{"name": "lookup", "args": {}, "id": "1"}])

    return lambda state, runtime: RunnableLambda(answer)


def test_repeated_message_and_call_ids_never_lose_a_call() -> None:
    """docs/compatibility.md PB12: the prebuilt agent lets a repeated message id replace the
    earlier turn, and takes a repeated call id as answered, so the model's second call never
    runs; here every turn and every call is kept, and ``max_steps`` bounds the model."""
    runs: list[int] = []

    @lc_tool
    def lookup() -> str:
        """Look something up."""
        runs.append(1)
        return f"result {len(runs)}"

    with pytest.warns(LangGraphDeprecatedSinceV10):
        reference_turns: list[int] = []
        reference = prebuilt_agent(_repeating_model(reference_turns), [lookup])
        out = reference.invoke({"messages": [("user", "go")]})
    assert (len(reference_turns), len(runs)) == (2, 1)  # the second turn's call is lost
    assert [type(m).__name__ for m in out["messages"]] == [
        "HumanMessage",
        "AIMessage",
        "ToolMessage",
    ]

    runs.clear()
    turns: list[int] = []
    graph = create_react_agent(_repeating_model(turns), [lookup], max_steps=3, version="v2")
    messages = graph.invoke({"messages": [("user", "go")]})["messages"]
    assert (len(turns), len(runs)) == (3, 3)  # every turn's call ran once
    ais = [m for m in messages if isinstance(m, AIMessage)]
    answers = [m for m in messages if isinstance(m, ToolMessage)]
    assert len(ais) == 3 and len({m.id for m in ais}) == 3
    assert [a.tool_calls[0]["id"] for a in ais] == [t.tool_call_id for t in answers]
    assert len({t.tool_call_id for t in answers}) == 3
    assert [t.content for t in answers] == ["result 1", "result 2", "result 3"]


def test_raw_checkpoint_holds_deltas_and_the_bookkeeping() -> None:
    """docs/compatibility.md PB11: what the saver holds differs from the prebuilt agent's
    (``messages`` as per-step deltas by default, the bookkeeping beside it); the state a
    caller reads is the reference's."""
    saver = InMemorySaver()
    config = cfg()
    graph = create_react_agent(ScriptedChatModel(turns=["hi"]), [], checkpointer=saver)
    graph.invoke({"messages": [("user", "x")]}, config)
    saved = saver.get_tuple(config)
    assert saved is not None
    assert set(saved.checkpoint["channel_values"]) == {"step", "termination_reason"}
    assert saved.checkpoint["channel_values"]["termination_reason"] == "completed"
    assert [m.content for m in graph.get_state(config).values["messages"]] == ["x", "hi"]

    full = InMemorySaver()
    graph = create_react_agent(
        ScriptedChatModel(turns=["hi"]), [], checkpointer=full, message_storage="full"
    )
    graph.invoke({"messages": [("user", "x")]}, config)
    saved = full.get_tuple(config)
    assert saved is not None
    values = saved.checkpoint["channel_values"]
    assert set(values) == {"messages", "step", "termination_reason"}
    assert [m.content for m in values["messages"]] == ["x", "hi"]
