"""Tools written for LangGraph run in this agent as in LangGraph's own.

Every row runs the same tools, the same scripted conversation and the same assertions against
this package's ``create_react_agent`` and, as the reference, ``langgraph.prebuilt``'s, with the
real ``ChatOpenAI`` over HTTP against the strict local server (which answers 400 to any
conversation OpenAI would reject). Counters prove what ran how often.
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import InjectedToolCallId
from langchain_core.tools import tool as lc_tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import InjectedState, InjectedStore, ToolNode, ToolRuntime
from langgraph.prebuilt import create_react_agent as prebuilt_agent
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore
from langgraph.types import Command

from dynavec_langgraph import create_react_agent, interrupt, tool
from dynavec_langgraph.testing import ScriptedChatModel
from tests.openai_server import OpenAIServer, chat_openai, validate
from tests.test_parent_graph import _policy as parent_policy
from tests.test_parent_graph import assert_valid

Kind = Literal["dynavec", "prebuilt"]
KINDS: list[Kind] = ["dynavec", "prebuilt"]
RUNS: Counter[str] = Counter()


def setup_function() -> None:
    RUNS.clear()


def build(kind: Kind, openai: OpenAIServer, tools: Any, **kw: Any) -> Any:
    """This package's agent or LangGraph's prebuilt one, on ``ChatOpenAI`` over HTTP."""
    kw.setdefault("checkpointer", InMemorySaver())
    if kind == "dynavec":
        return create_react_agent(chat_openai(openai), tools, **kw)
    return prebuilt_agent(chat_openai(openai), tools, **kw)


def cfg(**configurable: Any) -> RunnableConfig:
    return {"configurable": {"thread_id": str(uuid.uuid4()), **configurable}}


def answers(messages: Sequence[BaseMessage]) -> dict[str, ToolMessage]:
    return {m.tool_call_id: m for m in messages if isinstance(m, ToolMessage)}


def check_wire(openai: OpenAIServer, model_calls: int) -> None:
    """The server rejected nothing, every request is valid, the model ran ``model_calls``."""
    assert openai.rejections == []
    for body in openai.requests:
        validate(body)
    assert len(openai.requests) == model_calls


def tool_schema(openai: OpenAIServer, name: str) -> dict[str, Any]:
    for entry in openai.requests[0]["tools"]:
        if entry["function"]["name"] == name:
            return dict(entry["function"]["parameters"])
    raise AssertionError(f"{name} not sent to the model")


# --- injection ------------------------------------------------------------------------------


@lc_tool
def whole_state(topic: str, state: Annotated[dict[str, Any], InjectedState]) -> str:
    """Look a topic up with the whole state."""
    RUNS["whole_state"] += 1
    return f"{topic}: {len(state['messages'])} messages, first {state['messages'][0].content!r}"


def one_key(topic: str, messages: Annotated[list[BaseMessage], InjectedState("messages")]) -> str:
    """Look a topic up with one key of the state (a plain function)."""
    RUNS["one_key"] += 1
    return f"{topic}: second is {type(messages[1]).__name__}"


@pytest.mark.parametrize("kind", KINDS)
def test_injected_state_whole_and_one_key(kind: Kind, openai: OpenAIServer) -> None:
    openai.script(
        [
            {"name": "whole_state", "args": {"topic": "rent"}, "id": "call_a"},
            {"name": "one_key", "args": {"topic": "tax"}, "id": "call_b"},
        ],
        "done",
    )
    graph = build(kind, openai, [whole_state, one_key])
    out = graph.invoke({"messages": [("user", "hi")]}, cfg())
    got = answers(out["messages"])
    assert got["call_a"].content == "rent: 2 messages, first 'hi'"
    assert got["call_b"].content == "tax: second is AIMessage"
    assert RUNS == {"whole_state": 1, "one_key": 1}
    assert tool_schema(openai, "whole_state")["properties"].keys() == {"topic"}
    assert tool_schema(openai, "one_key")["properties"].keys() == {"topic"}
    assert out["messages"][-1].content == "done"
    check_wire(openai, 2)


@lc_tool
def remember(key: str, store: Annotated[BaseStore, InjectedStore()]) -> str:
    """Read a remembered value."""
    item = store.get(("prefs",), key)
    return f"{key}={item.value['v'] if item else None}"


@lc_tool
def my_call_id(tool_call_id: Annotated[str, InjectedToolCallId]) -> str:
    """Say the id of this call."""
    return f"id {tool_call_id}"


@pytest.mark.parametrize("kind", KINDS)
def test_injected_store_and_tool_call_id(kind: Kind, openai: OpenAIServer) -> None:
    store = InMemoryStore()
    store.put(("prefs",), "color", {"v": "green"})
    openai.script(
        [
            {"name": "remember", "args": {"key": "color"}, "id": "call_s"},
            {"name": "my_call_id", "args": {}, "id": "call_i"},
        ],
        "ok",
    )
    graph = build(kind, openai, [remember, my_call_id], store=store)
    got = answers(graph.invoke({"messages": [("user", "hi")]}, cfg())["messages"])
    assert got["call_s"].content == "color=green"
    assert got["call_i"].content == "id call_i"
    assert tool_schema(openai, "remember")["properties"].keys() == {"key"}
    assert tool_schema(openai, "my_call_id").get("properties", {}) == {}
    check_wire(openai, 2)


@lc_tool
def runtime_tool(topic: str, runtime: ToolRuntime[dict[str, str]]) -> str:
    """Everything ToolRuntime carries."""
    runtime.stream_writer({"progress": topic})
    assert runtime.store is not None
    runtime.store.put(("seen",), topic, {"by": runtime.tool_call_id})
    return (
        f"{topic} call={runtime.tool_call_id} msgs={len(runtime.state['messages'])} "
        f"user={runtime.context['user']} thread={runtime.config['configurable']['tag']}"
    )


@pytest.mark.parametrize("kind", KINDS)
def test_tool_runtime(kind: Kind, openai: OpenAIServer) -> None:
    store = InMemoryStore()
    openai.script([{"name": "runtime_tool", "args": {"topic": "rent"}, "id": "call_r"}], "ok")
    graph = build(kind, openai, [runtime_tool], store=store)
    custom = []
    final: dict[str, Any] = {}
    for mode, chunk in graph.stream(
        {"messages": [("user", "hi")]},
        cfg(tag="t-1"),
        context={"user": "ada"},
        stream_mode=["custom", "values"],
    ):
        if mode == "custom":
            custom.append(chunk)
        else:
            final = chunk
    got = answers(final["messages"])
    assert got["call_r"].content == "rent call=call_r msgs=2 user=ada thread=t-1"
    assert custom == [{"progress": "rent"}]
    item = store.get(("seen",), "rent")
    assert item is not None and item.value == {"by": "call_r"}
    assert tool_schema(openai, "runtime_tool")["properties"].keys() == {"topic"}
    check_wire(openai, 2)


# --- Command results --------------------------------------------------------------------------


@lc_tool
def save_note(note: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> Command[Any]:
    """Save a note by updating the state."""
    RUNS["save_note"] += 1
    return Command(
        update={
            "messages": [
                ToolMessage(f"saved {note}", tool_call_id=tool_call_id),
                HumanMessage(f"(note) {note}", id=f"note-{tool_call_id}"),
            ]
        }
    )


@lc_tool
def forgetful(note: str) -> Command[Any]:
    """A Command that does not answer its own call."""
    return Command(update={"messages": [HumanMessage(f"(note) {note}")]})


@pytest.mark.parametrize("kind", KINDS)
def test_command_update_applied_and_an_unanswering_command_is_an_error(
    kind: Kind, openai: OpenAIServer
) -> None:
    openai.script(
        [
            {"name": "save_note", "args": {"note": "milk"}, "id": "call_n"},
            {"name": "forgetful", "args": {"note": "eggs"}, "id": "call_f"},
        ],
        "noted",
    )
    graph = build(kind, openai, [save_note, forgetful])
    if kind == "prebuilt":  # ToolNode's default error handling raises LangGraph's error
        with pytest.raises(ValueError, match="Expected to have a matching ToolMessage"):
            graph.invoke({"messages": [("user", "hi")]}, cfg())
        return
    out = graph.invoke({"messages": [("user", "hi")]}, cfg())
    got = answers(out["messages"])
    assert got["call_n"].content == "saved milk"
    assert got["call_n"].name == "save_note"
    assert "Expected to have a matching ToolMessage" in str(got["call_f"].content)
    assert got["call_f"].status == "error"
    assert any(m.content == "(note) milk" for m in out["messages"])
    assert RUNS == {"save_note": 1}
    assert out["messages"][-1].content == "noted"
    check_wire(openai, 2)


def test_command_update_reaches_this_packages_shared_state(openai: OpenAIServer) -> None:
    @lc_tool
    def set_budget(amount: int, tool_call_id: Annotated[str, InjectedToolCallId]) -> Command[Any]:
        """Set the budget."""
        return Command(
            update={
                "shared": {"budget": amount},
                "messages": [ToolMessage("set", tool_call_id=tool_call_id)],
            }
        )

    openai.script([{"name": "set_budget", "args": {"amount": 7}}], "ok")
    graph = build("dynavec", openai, [set_budget])
    config = cfg()
    out = graph.invoke({"messages": [("user", "hi")]}, config)
    assert "shared" not in out  # the bookkeeping is in the thread state
    assert graph.get_state(config).values["shared"] == {"budget": 7}
    check_wire(openai, 2)


@lc_tool
def to_billing(reason: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> Command[Any]:
    """Hand the conversation to billing."""
    RUNS["to_billing"] += 1
    return Command(
        goto="billing",
        graph=Command.PARENT,
        update={"messages": [ToolMessage(f"to billing: {reason}", tool_call_id=tool_call_id)]},
    )


def _parent_with(agent: Any) -> Any:
    def billing(state: MessagesState) -> dict[str, Any]:
        RUNS["billing"] += 1
        return {"messages": [AIMessage("billing here", id=f"billing-{RUNS['billing']}")]}

    builder = StateGraph(MessagesState)
    builder.add_node("front", agent)
    builder.add_node("billing", billing)
    builder.add_edge(START, "front")
    builder.add_edge("billing", END)
    return builder.compile(checkpointer=InMemorySaver())


@pytest.mark.parametrize("kind", KINDS)
def test_command_parent_handoff(kind: Kind, openai: OpenAIServer) -> None:
    openai.script([{"name": "to_billing", "args": {"reason": "refund"}, "id": "call_h"}])
    parent = _parent_with(build(kind, openai, [to_billing], checkpointer=None, name="front"))
    out = parent.invoke({"messages": [("user", "refund please")]}, cfg())
    assert RUNS == {"to_billing": 1, "billing": 1}
    assert answers(out["messages"])["call_h"].content == "to billing: refund"
    assert out["messages"][-1].content == "billing here"
    check_wire(openai, 1)


@lc_tool
def go_nowhere() -> Command[Any]:
    """Go to a node that does not exist."""
    return Command(goto="nowhere")


def test_command_to_a_missing_node_is_a_clear_error_losing_nothing(openai: OpenAIServer) -> None:
    """LangGraph only logs "wrote to unknown channel branch:to:nowhere" and the prebuilt agent
    fails later on an unanswered call; here the run stops at once, saying what to do."""
    openai.script([{"name": "lookup", "args": {"topic": "a"}}, {"name": "go_nowhere"}])
    graph = build("dynavec", openai, [lookup, go_nowhere])
    config = cfg()
    with pytest.raises(ValueError, match=r"no node 'nowhere'.*graph=Command.PARENT"):
        graph.invoke({"messages": [("user", "hi")]}, config)
    messages = graph.get_state(config).values["messages"]
    assert [type(m).__name__ for m in messages] == ["HumanMessage", "AIMessage", "ToolMessage"]
    assert RUNS == {"lookup": 1}


@lc_tool
def back_to_model() -> Command[Any]:
    """A Command that only routes."""
    RUNS["back_to_model"] += 1
    return Command(goto="agent")


def test_a_command_that_leaves_its_call_unanswered_still_answers_it(openai: OpenAIServer) -> None:
    openai.script([{"name": "back_to_model", "id": "call_g"}], "ok")
    graph = build("dynavec", openai, [back_to_model])
    out = graph.invoke({"messages": [("user", "hi")]}, cfg())
    assert answers(out["messages"])["call_g"].status == "error"
    assert RUNS == {"back_to_model": 1}
    assert out["messages"][-1].content == "ok"
    check_wire(openai, 2)


# --- return_direct, artifacts, ToolMessage fields ------------------------------------------


@lc_tool(return_direct=True)
def final_answer(text: str) -> str:
    """Answer the user directly."""
    RUNS["final_answer"] += 1
    return f"FINAL: {text}"


@lc_tool
def lookup(topic: str) -> str:
    """Look something up."""
    RUNS["lookup"] += 1
    return f"{topic} found"


@pytest.mark.parametrize("kind", KINDS)
def test_return_direct_ends_the_run_without_another_model_call(
    kind: Kind, openai: OpenAIServer
) -> None:
    openai.script(
        [
            {"name": "lookup", "args": {"topic": "rent"}, "id": "call_l"},
            {"name": "final_answer", "args": {"text": "42"}, "id": "call_d"},
        ]
    )
    graph = build(kind, openai, [lookup, final_answer])
    config = cfg()
    out = graph.invoke({"messages": [("user", "hi")]}, config)
    last = out["messages"][-1]
    assert isinstance(last, ToolMessage) and last.content == "FINAL: 42"
    assert RUNS == {"lookup": 1, "final_answer": 1}
    check_wire(openai, 1)
    if kind == "dynavec":
        assert graph.get_state(config).values["termination_reason"] == "completed"
    # the next user message starts a new run that reaches the model
    openai.script("hello again")
    out = graph.invoke({"messages": [("user", "again")]}, config)
    assert out["messages"][-1].content == "hello again"
    check_wire(openai, 2)


@lc_tool(response_format="content_and_artifact")
def chart(metric: str) -> tuple[str, dict[str, Any]]:
    """Chart a metric."""
    return f"chart of {metric}", {"points": [1, 2, 3]}


@lc_tool
def rich(tool_call_id: Annotated[str, InjectedToolCallId]) -> ToolMessage:
    """Return a whole ToolMessage."""
    return ToolMessage(
        "partly failed",
        tool_call_id=tool_call_id,
        status="error",
        id="my-id",
        artifact=[1],
        name="rich-name",
    )


@pytest.mark.parametrize("kind", KINDS)
def test_artifacts_and_tool_message_fields_survive(kind: Kind, openai: OpenAIServer) -> None:
    openai.script(
        [
            {"name": "chart", "args": {"metric": "rent"}, "id": "call_c"},
            {"name": "rich", "args": {}, "id": "call_m"},
        ],
        "ok",
    )
    graph = build(kind, openai, [chart, rich])
    config = cfg()
    graph.invoke({"messages": [("user", "hi")]}, config)
    got = answers(graph.get_state(config).values["messages"])  # also after the checkpoint
    assert got["call_c"].content == "chart of rent"
    assert got["call_c"].artifact == {"points": [1, 2, 3]}
    assert (got["call_m"].status, got["call_m"].id, got["call_m"].artifact) == (
        "error",
        "my-id",
        [1],
    )
    assert got["call_m"].name == "rich-name"
    check_wire(openai, 2)


# --- callbacks and events -------------------------------------------------------------------


def plain_add(a: int, b: int) -> int:
    """Add (a plain function)."""
    return a + b


@tool
def package_mul(a: int, b: int) -> int:
    """Multiply (this package's @tool)."""
    return a * b


@tool
def package_fail(a: int) -> int:
    """Always fails."""
    raise ValueError(f"no {a}")


@lc_tool("package_fail")
def langchain_fail(a: int) -> int:
    """Always fails (the LangChain @tool the prebuilt agent is compared with)."""
    raise ValueError(f"no {a}")


def failing_tools(kind: Kind) -> list[Any]:
    """Outside this agent a package @tool returns dynavec's error observation (as before), so
    the reference runs the LangChain twin to show the same events."""
    return [plain_add, package_mul, package_fail if kind == "dynavec" else langchain_fail]


def by_tool(event: tuple[str, str]) -> int:
    """Order of the tools in CALLS (the prebuilt agent runs them concurrently)."""
    name = event[1]
    return next((i for i, c in enumerate(CALLS) if c["name"] == name), len(CALLS))


class Recorder(BaseCallbackHandler):
    def __init__(self) -> None:
        self.events: list[tuple[str, str]] = []

    def on_tool_start(self, serialized: dict[str, Any], input_str: str, **kw: Any) -> None:
        self.events.append(("start", str(serialized.get("name"))))

    def on_tool_end(self, output: Any, **kw: Any) -> None:
        self.events.append(("end", str(getattr(output, "name", output))))

    def on_tool_error(self, error: BaseException, **kw: Any) -> None:
        self.events.append(("error", str(error)))


CALLS = [
    {"name": "plain_add", "args": {"a": 2, "b": 3}, "id": "call_1"},
    {"name": "package_mul", "args": {"a": 2, "b": 3}, "id": "call_2"},
    {"name": "package_fail", "args": {"a": 1}, "id": "call_3"},
]


@pytest.mark.parametrize("kind", KINDS)
def test_callbacks_fire_for_plain_functions_and_this_packages_tools(
    kind: Kind, openai: OpenAIServer
) -> None:
    openai.script(CALLS, "ok")
    recorder = Recorder()
    tools_ = failing_tools(kind)
    node = ToolNode(tools_, handle_tool_errors=True) if kind == "prebuilt" else tools_
    graph = build(kind, openai, node)
    out = graph.invoke({"messages": [("user", "hi")]}, {**cfg(), "callbacks": [recorder]})
    events = recorder.events if kind == "dynavec" else sorted(recorder.events, key=by_tool)
    assert events == [
        ("start", "plain_add"),
        ("end", "plain_add"),
        ("start", "package_mul"),
        ("end", "package_mul"),
        ("start", "package_fail"),
        ("error", "no 1"),
    ]
    got = answers(out["messages"])
    assert (got["call_1"].content, got["call_2"].content) == ("5", "6")
    if kind == "dynavec":  # docs/compatibility.md §3: the package's error observation
        assert got["call_3"].content == "Error executing tool 'package_fail': no 1"
    check_wire(openai, 2)


@pytest.mark.parametrize("kind", KINDS)
async def test_astream_events_v2(kind: Kind, openai: OpenAIServer) -> None:
    openai.script(CALLS, "ok")
    tools_ = failing_tools(kind)
    node = ToolNode(tools_, handle_tool_errors=True) if kind == "prebuilt" else tools_
    graph = build(kind, openai, node)
    seen = [
        (e["event"], e["name"])
        async for e in graph.astream_events({"messages": [("user", "hi")]}, cfg(), version="v2")
        if e["event"].startswith("on_tool")
    ]
    if kind == "prebuilt":  # concurrent there
        seen.sort(key=by_tool)
    assert seen == [
        ("on_tool_start", "plain_add"),
        ("on_tool_end", "plain_add"),
        ("on_tool_start", "package_mul"),
        ("on_tool_end", "package_mul"),
        ("on_tool_start", "package_fail"),
        ("on_tool_error", "package_fail"),
    ]
    check_wire(openai, 2)


# --- tools=ToolNode -------------------------------------------------------------------------


def _handler(error: ValueError) -> str:
    return f"handled: {error}"


@pytest.mark.parametrize("kind", KINDS)
def test_tools_as_a_tool_node_with_its_error_handling(kind: Kind, openai: OpenAIServer) -> None:
    openai.script(
        [
            {"name": "plain_add", "args": {"a": 1, "b": 1}, "id": "call_1"},
            {"name": "package_fail", "args": {"a": 4}, "id": "call_2"},
        ],
        "ok",
    )
    fail = package_fail if kind == "dynavec" else langchain_fail
    graph = build(kind, openai, ToolNode([plain_add, fail], handle_tool_errors=_handler))
    got = answers(graph.invoke({"messages": [("user", "hi")]}, cfg())["messages"])
    assert got["call_1"].content == "2"
    assert got["call_2"].content == "handled: no 4"
    check_wire(openai, 2)


def test_a_tool_nodes_error_setting_wins_even_when_it_raises(openai: OpenAIServer) -> None:
    openai.script([{"name": "package_fail", "args": {"a": 4}}])
    graph = build("dynavec", openai, ToolNode([package_fail], handle_tool_errors=False))
    with pytest.raises(ValueError, match="no 4"):
        graph.invoke({"messages": [("user", "hi")]}, cfg())


# --- the helpers the tests use (kept honest) -------------------------------------------------


def test_sequential_mode_still_runs_one_call_per_superstep(openai: OpenAIServer) -> None:
    openai.script(
        [
            {"name": "lookup", "args": {"topic": "a"}},
            {"name": "whole_state", "args": {"topic": "b"}},
            {"name": "save_note", "args": {"note": "c"}},
        ],
        "ok",
    )
    graph = build("dynavec", openai, [lookup, whole_state, save_note])
    steps = [
        list(chunk)
        for chunk in graph.stream({"messages": [("user", "hi")]}, cfg(), stream_mode="updates")
    ]
    assert steps == [["agent"], ["tools"], ["tools"], ["tools"], ["agent"]]
    assert RUNS == {"lookup": 1, "whole_state": 1, "save_note": 1}
    check_wire(openai, 2)


# --- interrupts inside tools that use injection or return Command -------------------------


@lc_tool
def approve_and_note(
    amount: int,
    state: Annotated[dict[str, Any], InjectedState],
    tool_call_id: Annotated[str, InjectedToolCallId],
) -> Command[Any]:
    """Pay once approved, noting it in the state."""
    RUNS["approve_and_note"] += 1
    decision = interrupt("approve_pay", {"amount": amount, "seen": len(state["messages"])})
    RUNS["approved"] += 1
    return Command(
        update={"messages": [ToolMessage(f"paid {amount}: {decision}", tool_call_id=tool_call_id)]}
    )


@pytest.mark.parametrize(
    ("kind", "parallel"), [("dynavec", False), ("dynavec", True), ("prebuilt", False)]
)
def test_interrupt_in_an_injected_command_tool_pauses_and_resumes(
    kind: Kind, parallel: bool, openai: OpenAIServer
) -> None:
    openai.script(
        [
            {"name": "lookup", "args": {"topic": "a"}, "id": "call_l"},
            {"name": "approve_and_note", "args": {"amount": 9}, "id": "call_p"},
        ]
    )
    extra = {"parallel_tool_calls": parallel} if kind == "dynavec" else {}
    graph = build(kind, openai, [lookup, approve_and_note], **extra)
    config = cfg()
    out = graph.invoke({"messages": [("user", "pay")]}, config)
    [pending] = out["__interrupt__"]
    assert pending.value["node_id"] == "approve_pay"
    if kind == "dynavec":
        assert pending.value["tool_call"]["id"] == "call_p"
    openai.script("paid")
    out = graph.invoke(Command(resume="yes"), config)
    assert answers(out["messages"])["call_p"].content == "paid 9: yes"
    assert RUNS["lookup"] == 1 and RUNS["approved"] == 1
    assert out["messages"][-1].content == "paid"
    check_wire(openai, 2)


# --- parallel mode: the same machinery, and finished calls never run again ----------------


def test_parallel_mode_injects_and_applies_commands(openai: OpenAIServer) -> None:
    store = InMemoryStore()
    openai.script(
        [
            {"name": "whole_state", "args": {"topic": "rent"}, "id": "call_a"},
            {"name": "runtime_tool", "args": {"topic": "tax"}, "id": "call_r"},
            {"name": "save_note", "args": {"note": "milk"}, "id": "call_n"},
            {"name": "chart", "args": {"metric": "rent"}, "id": "call_c"},
        ],
        "ok",
    )
    graph = build(
        "dynavec",
        openai,
        [whole_state, runtime_tool, save_note, chart],
        store=store,
        parallel_tool_calls=True,
    )
    out = graph.invoke({"messages": [("user", "hi")]}, cfg(tag="p"), context={"user": "bo"})
    got = answers(out["messages"])
    assert got["call_a"].content == "rent: 2 messages, first 'hi'"
    assert got["call_r"].content == "tax call=call_r msgs=2 user=bo thread=p"
    assert got["call_n"].content == "saved milk"
    assert got["call_c"].artifact == {"points": [1, 2, 3]}
    check_wire(openai, 2)


@tool
def slow_pay(amount: int) -> str:
    """Pay once approved."""
    RUNS["slow_pay"] += 1
    decision = interrupt("approve_pay", {"amount": amount})
    RUNS["slow_pay_done"] += 1
    return f"paid {amount}: {decision}"


@pytest.mark.parametrize("use_async", [False, True])
async def test_parallel_new_input_while_one_of_three_is_paused_never_reruns_finished_calls(
    use_async: bool, openai: OpenAIServer
) -> None:
    def policy(messages: list[dict[str, Any]]) -> Any:
        users = [m["content"] for m in messages if m["role"] == "user"]
        if users == ["go"]:
            return [
                {"name": "lookup", "args": {"topic": "a"}, "id": "call_a"},
                {"name": "slow_pay", "args": {"amount": 5}, "id": "call_p"},
                {"name": "lookup", "args": {"topic": "c"}, "id": "call_c"},
            ]
        return f"answered {len(users)}"

    openai.set_policy(policy)
    graph = build("dynavec", openai, [lookup, slow_pay], parallel_tool_calls=True)
    config = cfg()

    async def send(value: Any) -> dict[str, Any]:
        if use_async:
            return dict(await graph.ainvoke(value, config))
        return dict(graph.invoke(value, config))

    out = await send({"messages": [("user", "go")]})
    assert [i.value["node_id"] for i in out["__interrupt__"]] == ["approve_pay"]
    assert RUNS["lookup"] == 2
    saved = answers(graph.get_state(config).values["messages"])
    assert saved.keys() == {"call_a", "call_c"}  # in the checkpoint, not pending writes

    out = await send({"messages": [("user", "any news?")]})  # new input while paused
    assert [i.value["node_id"] for i in out["__interrupt__"]] == ["approve_pay"]
    assert RUNS["lookup"] == 2  # the two finished calls ran once
    out = await send(Command(resume="ok"))
    assert RUNS == {"lookup": 2, "slow_pay": 4, "slow_pay_done": 1}
    got = answers(out["messages"])
    assert [got[i].content for i in ("call_a", "call_p", "call_c")] == [
        "a found",
        "paid 5: ok",
        "c found",
    ]
    assert out["messages"][-1].content == "answered 2"
    check_wire(openai, 2)


def test_parallel_parent_routing_elsewhere_while_paused_never_reruns_finished_calls() -> None:
    """Embedded as a stateful subgraph (``checkpointer=True``), as the docs ask; plain
    embedding starts the agent over in either mode (tests/test_parent_graph.py)."""
    model = ScriptedChatModel(
        policy=parent_policy(
            [
                {"name": "lookup", "args": {"topic": "a"}},
                {"name": "slow_pay", "args": {"amount": 1}},
                {"name": "lookup", "args": {"topic": "c"}},
            ],
            "finished",
        )
    )
    agent = create_react_agent(
        model,
        [lookup, slow_pay],
        checkpointer=True,
        name="executor",
        parallel_tool_calls=True,
    )

    def chat(state: MessagesState) -> dict[str, Any]:
        return {"messages": [AIMessage("chatting")]}

    def route(state: MessagesState) -> str:
        return "executor" if "pay" in str(state["messages"][-1].content) else "chat"

    builder = StateGraph(MessagesState)
    builder.add_node("executor", agent)
    builder.add_node("chat", chat)
    builder.add_conditional_edges(START, route, ["executor", "chat"])
    builder.add_edge("executor", END)
    builder.add_edge("chat", END)
    parent: Any = builder.compile(checkpointer=InMemorySaver())
    config = cfg()
    out = parent.invoke({"messages": [("user", "pay rent")]}, config)
    assert len(out["__interrupt__"]) == 1 and RUNS["lookup"] == 2
    parent.invoke({"messages": [("user", "hello")]}, config)  # routed elsewhere
    out = parent.invoke({"messages": [("user", "pay now")]}, config)
    (pending,) = out["__interrupt__"]
    assert pending.value["payload"] == {"amount": 1}
    out = parent.invoke(Command(resume="ok"), config)
    assert RUNS["lookup"] == 2 and RUNS["slow_pay_done"] == 1
    assert out["messages"][-1].content == "finished"
    for request in model.calls:
        assert_valid(request)


# --- config injection, and the documented example -----------------------------------------


@lc_tool
def with_config(topic: str, config: RunnableConfig) -> str:
    """A LangChain tool that reads the run's config."""
    return f"{topic} for {config['configurable']['user']}"


def plain_with_config(topic: str, config: RunnableConfig) -> str:
    """A plain function that reads the run's config."""
    return f"{topic} (plain) for {config['configurable']['user']}"


@pytest.mark.parametrize("kind", KINDS)
def test_injected_config(kind: Kind, openai: OpenAIServer) -> None:
    openai.script(
        [
            {"name": "with_config", "args": {"topic": "a"}, "id": "call_1"},
            {"name": "plain_with_config", "args": {"topic": "b"}, "id": "call_2"},
        ],
        "ok",
    )
    graph = build(kind, openai, [with_config, plain_with_config])
    got = answers(graph.invoke({"messages": [("user", "hi")]}, cfg(user="ada"))["messages"])
    assert (got["call_1"].content, got["call_2"].content) == ("a for ada", "b (plain) for ada")
    for name in ("with_config", "plain_with_config"):
        assert tool_schema(openai, name)["properties"].keys() == {"topic"}
    check_wire(openai, 2)


def test_the_documented_swarm_example_runs() -> None:
    page = (Path(__file__).resolve().parents[1] / "docs" / "langgraph-tools.md").read_text()
    code = page.split("```python\n", 1)[1].split("```", 1)[0]
    namespace: dict[str, Any] = {}
    exec(compile(code, "docs/langgraph-tools.md", "exec"), namespace)
    assert namespace["out"]["messages"][-1].content == "Bob here, Ada."
    assert [m.content for m in namespace["out"]["messages"]][2] == "2 messages"


def test_goto_the_model_while_calls_wait_never_sends_an_unanswered_call(
    openai: OpenAIServer,
) -> None:
    @lc_tool
    def jump(tool_call_id: Annotated[str, InjectedToolCallId]) -> Command[Any]:
        """Answer, and ask for the model at once."""
        RUNS["jump"] += 1
        return Command(
            goto="agent", update={"messages": [ToolMessage("jumped", tool_call_id=tool_call_id)]}
        )

    openai.script(
        [{"name": "jump", "args": {}}, {"name": "lookup", "args": {"topic": "x"}}], "done"
    )
    graph = build("dynavec", openai, [jump, lookup])
    out = graph.invoke({"messages": [("user", "hi")]}, cfg())
    assert RUNS == {"jump": 1, "lookup": 1}
    assert out["messages"][-1].content == "done"
    check_wire(openai, 2)  # the strict server refused no request


@pytest.mark.parametrize("kind", KINDS)
def test_return_direct_first_in_the_batch_still_answers_the_rest(
    kind: Kind, openai: OpenAIServer
) -> None:
    """The run ends once the whole batch is answered, in the model's call order (as in the
    prebuilt agent, whose ToolNode also answers in call order)."""
    openai.script(
        [
            {"name": "final_answer", "args": {"text": "7"}, "id": "call_d"},
            {"name": "lookup", "args": {"topic": "b"}, "id": "call_l"},
        ]
    )
    graph = build(kind, openai, [lookup, final_answer])
    out = graph.invoke({"messages": [("user", "hi")]}, cfg())
    assert [m.content for m in out["messages"][-2:]] == ["FINAL: 7", "b found"]
    assert RUNS == {"final_answer": 1, "lookup": 1}
    check_wire(openai, 1)


def test_a_tool_node_in_parallel_mode(openai: OpenAIServer) -> None:
    openai.script(
        [
            {"name": "plain_add", "args": {"a": 1, "b": 2}, "id": "call_1"},
            {"name": "package_fail", "args": {"a": 3}, "id": "call_2"},
            {"name": "whole_state", "args": {"topic": "t"}, "id": "call_3"},
        ],
        "ok",
    )
    node = ToolNode([plain_add, package_fail, whole_state], handle_tool_errors=_handler)
    graph = build("dynavec", openai, node, parallel_tool_calls=True)
    got = answers(graph.invoke({"messages": [("user", "hi")]}, cfg())["messages"])
    assert [got[f"call_{i}"].content for i in (1, 2, 3)] == [
        "3",
        "handled: no 3",
        "t: 2 messages, first 'hi'",
    ]
    check_wire(openai, 2)
