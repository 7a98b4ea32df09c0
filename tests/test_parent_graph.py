"""The agent as a node of a parent graph, two agents in one parent, an agent inside a tool."""

from __future__ import annotations

from collections import Counter
from typing import Annotated, Any, TypedDict

from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.types import Command

from dynavec_langgraph import create_react_agent, interrupt, tool
from dynavec_langgraph.testing import ScriptedChatModel


class Parent(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


def assert_valid(messages: list[BaseMessage]) -> None:
    """Each assistant tool call is answered, right after it, before any other message."""
    i = 0
    while i < len(messages):
        m = messages[i]
        if isinstance(m, AIMessage) and m.tool_calls:
            ids = {c["id"] for c in m.tool_calls}
            answers = messages[i + 1 : i + 1 + len(ids)]
            assert all(isinstance(a, ToolMessage) for a in answers), messages
            assert {a.tool_call_id for a in answers if isinstance(a, ToolMessage)} == ids
            i += len(ids)
        i += 1


RUNS: Counter[str] = Counter()


@tool
def lookup(topic: str) -> str:
    """Look something up."""
    RUNS["lookup"] += 1
    return f"facts about {topic}"


@tool
def execute(action: str) -> str:
    """Do something that needs approval."""
    RUNS["execute"] += 1
    decision = interrupt("approve_action", {"action": action})
    RUNS[f"execute:{decision}"] += 1
    return f"{action}: {decision}"


def _policy(calls: list[dict[str, Any]], answer: str) -> Any:
    def policy(messages: list[BaseMessage]) -> Any:
        own = {c["name"] for c in calls}
        if any(isinstance(m, ToolMessage) and m.name in own for m in messages):
            return answer
        return calls

    return policy


def _parent(*agents: Any) -> Any:
    builder = StateGraph(Parent)
    previous = START
    for agent in agents:
        builder.add_node(agent.name, agent)
        builder.add_edge(previous, agent.name)
        previous = agent.name
    builder.add_edge(previous, END)
    return builder.compile(checkpointer=InMemorySaver())


def setup_function() -> None:
    RUNS.clear()


def test_pause_and_resume_through_the_parent() -> None:
    model = ScriptedChatModel(
        policy=_policy(
            [
                {"name": "lookup", "args": {"topic": "rent"}},
                {"name": "execute", "args": {"action": "pay"}},
            ],
            "paid",
        )
    )
    agent = create_react_agent(model, [lookup, execute], name="executor")
    parent = _parent(agent)
    cfg: Any = {"configurable": {"thread_id": "p1"}}
    out = parent.invoke({"messages": [("user", "pay the rent")]}, cfg)
    (pending,) = out["__interrupt__"]
    assert pending.value["node_id"] == "approve_action"
    assert pending.value["payload"] == {"action": "pay"}
    state = parent.get_state(cfg, subgraphs=True)
    (task,) = state.tasks
    assert task.name == "executor"
    assert task.state is not None
    inner = task.state.values["messages"]
    assert [type(m).__name__ for m in inner] == ["HumanMessage", "AIMessage", "ToolMessage"]
    out = parent.invoke(Command(resume="approved"), cfg)
    assert out["messages"][-1].content == "paid"
    assert Counter({"lookup": 1, "execute": 2, "execute:approved": 1}) == RUNS
    assert_valid(out["messages"])
    for request in model.calls:
        assert_valid(request)


def test_two_agents_in_one_parent() -> None:
    researcher = create_react_agent(
        ScriptedChatModel(policy=_policy([{"name": "lookup", "args": {"topic": "x"}}], "found x")),
        [lookup],
        name="researcher",
    )
    executor = create_react_agent(
        ScriptedChatModel(
            policy=_policy([{"name": "execute", "args": {"action": "ship"}}], "shipped")
        ),
        [execute],
        name="executor",
    )
    parent = _parent(researcher, executor)
    cfg: Any = {"configurable": {"thread_id": "p2"}}
    out = parent.invoke({"messages": [("user", "research then ship")]}, cfg)
    assert out["__interrupt__"][0].value["payload"] == {"action": "ship"}
    assert [m.content for m in out["messages"]][-1] == "found x"  # the researcher's answer
    out = parent.invoke(Command(resume="ok"), cfg)
    assert out["messages"][-1].content == "shipped"
    assert Counter({"lookup": 1, "execute": 2, "execute:ok": 1}) == RUNS
    assert_valid(out["messages"])


def test_agent_called_inside_a_tool_of_another_graph() -> None:
    inner = create_react_agent(
        ScriptedChatModel(
            policy=_policy([{"name": "execute", "args": {"action": "deploy"}}], "deployed")
        ),
        [execute],
        name="inner",
    )

    @tool
    def delegate(task: str) -> str:
        """Hand a task to the inner agent."""
        RUNS["delegate"] += 1
        result = inner.invoke({"messages": [("user", task)]})
        return str(result["messages"][-1].content)

    outer_model = ScriptedChatModel(
        policy=_policy([{"name": "delegate", "args": {"task": "deploy it"}}], "all done")
    )
    builder = StateGraph(Parent)

    def call_model(state: Parent) -> dict[str, Any]:
        return {"messages": [outer_model.bind_tools([delegate]).invoke(state["messages"])]}

    builder.add_node("model", call_model)
    builder.add_node("tools", ToolNode([delegate]))
    builder.add_edge(START, "model")
    builder.add_conditional_edges("model", tools_condition, ["tools", END])
    builder.add_edge("tools", "model")
    outer: Any = builder.compile(checkpointer=InMemorySaver())
    cfg: Any = {"configurable": {"thread_id": "p3"}}
    out = outer.invoke({"messages": [("user", "deploy")]}, cfg)
    assert out["__interrupt__"][0].value["payload"] == {"action": "deploy"}
    out = outer.invoke(Command(resume="approved"), cfg)
    assert out["messages"][-1].content == "all done"
    assert out["messages"][-2].content == "deployed"
    assert RUNS["execute:approved"] == 1
    assert_valid(out["messages"])


def _protected_parent(checkpointer: Any) -> tuple[Any, ScriptedChatModel]:
    model = ScriptedChatModel(
        policy=_policy(
            [
                {"name": "lookup", "args": {"topic": "a"}},
                {"name": "execute", "args": {"action": "b"}},
            ],
            "finished",
        )
    )
    agent = create_react_agent(model, [lookup, execute], checkpointer=checkpointer, name="agent")
    return _parent(agent), model


def test_new_message_to_a_parent_keeps_the_paused_agent_with_a_stateful_subgraph() -> None:
    parent, model = _protected_parent(True)
    cfg: Any = {"configurable": {"thread_id": "p4"}}
    parent.invoke({"messages": [("user", "do a then b")]}, cfg)
    out = parent.invoke({"messages": [("user", "hurry up")]}, cfg)
    (pending,) = out["__interrupt__"]
    assert pending.value["payload"] == {"action": "b"}  # the same approval is still pending
    assert RUNS["lookup"] == 1  # the finished call did not run again
    out = parent.invoke(Command(resume="yes"), cfg)
    assert out["messages"][-1].content == "finished"
    assert Counter({"lookup": 1, "execute": 3, "execute:yes": 1}) == RUNS
    for request in model.calls:
        assert_valid(request)


def test_plain_embedding_reruns_finished_calls_which_is_why_the_docs_say_stateful() -> None:
    parent, _ = _protected_parent(None)
    cfg: Any = {"configurable": {"thread_id": "p5"}}
    parent.invoke({"messages": [("user", "do a then b")]}, cfg)
    parent.invoke({"messages": [("user", "hurry up")]}, cfg)
    assert RUNS["lookup"] == 2  # LangGraph dropped the paused subgraph task and started over


def test_a_router_that_sends_new_input_elsewhere_does_not_lose_the_paused_calls() -> None:
    model = ScriptedChatModel(
        policy=_policy(
            [
                {"name": "lookup", "args": {"topic": "a"}},
                {"name": "execute", "args": {"action": "b"}},
            ],
            "finished",
        )
    )
    agent = create_react_agent(model, [lookup, execute], checkpointer=True, name="executor")

    def chat(state: Parent) -> dict[str, Any]:
        return {"messages": [AIMessage("chatting")]}

    def route(state: Parent) -> str:
        return "executor" if "pay" in str(state["messages"][-1].content) else "chat"

    builder = StateGraph(Parent)
    builder.add_node("executor", agent)
    builder.add_node("chat", chat)
    builder.add_conditional_edges(START, route, ["executor", "chat"])
    builder.add_edge("executor", END)
    builder.add_edge("chat", END)
    parent: Any = builder.compile(checkpointer=InMemorySaver())
    cfg: Any = {"configurable": {"thread_id": "p6"}}
    parent.invoke({"messages": [("user", "pay rent")]}, cfg)
    parent.invoke(
        {"messages": [("user", "hello")]}, cfg
    )  # routed to chat: LangGraph drops the pause
    out = parent.invoke({"messages": [("user", "pay now")]}, cfg)
    (pending,) = out["__interrupt__"]  # back at the agent: the leftover call asks again
    assert pending.value["payload"] == {"action": "b"}
    assert RUNS["lookup"] == 1
    out = parent.invoke(Command(resume="ok"), cfg)
    assert RUNS == Counter({"lookup": 1, "execute": 3, "execute:ok": 1})
    assert out["messages"][-1].content == "finished"
    for request in model.calls:
        assert_valid(request)
