"""Handoffs with ``langgraph-swarm`` and ``langgraph-supervisor``.

This package's agent sits on either side of a handoff next to LangGraph's prebuilt agent, with
the real ``ChatOpenAI`` over HTTP against the strict local server and a checkpointer on the top
graph. A worker pauses with ``interrupt()`` and is resumed through the top graph; counters prove
the approved tool ran once.
"""

from __future__ import annotations

import uuid
from collections import Counter
from typing import Any, Literal

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool as lc_tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.prebuilt import create_react_agent as prebuilt_agent
from langgraph.types import Command
from langgraph_supervisor import create_supervisor
from langgraph_supervisor.handoff import create_forward_message_tool
from langgraph_swarm import create_handoff_tool, create_swarm

from dynavec_langgraph import create_react_agent, interrupt
from tests.openai_server import OpenAIServer, chat_openai, validate

Kind = Literal["dynavec", "prebuilt"]
PAIRS: list[tuple[Kind, Kind]] = [
    ("dynavec", "prebuilt"),  # a handoff out of this agent
    ("prebuilt", "dynavec"),  # a handoff into it (and its worker pauses)
    ("dynavec", "dynavec"),
]
RUNS: Counter[str] = Counter()


def setup_function() -> None:
    RUNS.clear()


@lc_tool
def pay(amount: int) -> str:
    """Pay an amount once a person approved it."""
    RUNS["pay_started"] += 1
    decision = interrupt("approve_payment", {"amount": amount})
    if decision != "approved":
        return "not paid"
    RUNS["paid"] += 1
    return f"paid {amount}"


def agent(kind: Kind, openai: OpenAIServer, name: str, tools: list[Any]) -> Any:
    if kind == "dynavec":
        return create_react_agent(chat_openai(openai), tools, name=name)
    return prebuilt_agent(chat_openai(openai), tools, name=name)


def check_wire(openai: OpenAIServer, model_calls: int) -> None:
    assert openai.rejections == []
    for body in openai.requests:
        validate(body)
    assert len(openai.requests) == model_calls


def cfg() -> RunnableConfig:
    return {"configurable": {"thread_id": str(uuid.uuid4())}}


@pytest.mark.parametrize(("alice_kind", "bob_kind"), PAIRS)
def test_swarm_handoff_pause_in_the_worker_resume_through_the_top_graph(
    alice_kind: Kind, bob_kind: Kind, openai: OpenAIServer
) -> None:
    alice = agent(alice_kind, openai, "alice", [create_handoff_tool(agent_name="bob")])
    bob = agent(bob_kind, openai, "bob", [pay, create_handoff_tool(agent_name="alice")])
    swarm = create_swarm([alice, bob], default_active_agent="alice").compile(
        checkpointer=InMemorySaver()
    )
    openai.script(
        [{"name": "transfer_to_bob", "args": {}, "id": "call_h1"}],  # alice
        [{"name": "pay", "args": {"amount": 120}, "id": "call_pay"}],  # bob
    )
    config = cfg()
    out = swarm.invoke({"messages": [("user", "pay the rent")]}, config)
    assert out["active_agent"] == "bob"
    [pending] = out["__interrupt__"]
    assert pending.value["node_id"] == "approve_payment"
    assert RUNS == {"pay_started": 1}
    check_wire(openai, 2)

    openai.script(
        [{"name": "transfer_to_alice", "args": {}, "id": "call_h2"}],  # bob, after paying
        "Rent paid.",  # alice
    )
    out = swarm.invoke(Command(resume="approved"), config)
    assert RUNS == {"pay_started": 2, "paid": 1}
    assert out["active_agent"] == "alice"
    assert out["messages"][-1].content == "Rent paid."
    tool_answers = {
        m.tool_call_id: m.content for m in out["messages"] if isinstance(m, ToolMessage)
    }
    assert tool_answers == {
        "call_h1": "Successfully transferred to bob",
        "call_pay": "paid 120",
        "call_h2": "Successfully transferred to alice",
    }
    assert swarm.get_state(config).interrupts == ()
    check_wire(openai, 4)


def test_a_handoff_in_the_middle_of_a_batch_answers_the_calls_it_skips(
    openai: OpenAIServer,
) -> None:
    """Sequential mode: calls after the handoff do not run, and get an answer, so the agent
    taking over sends the provider a valid conversation."""
    alice = agent("dynavec", openai, "alice", [create_handoff_tool(agent_name="bob"), pay])
    bob = agent("prebuilt", openai, "bob", [])
    swarm = create_swarm([alice, bob], default_active_agent="alice").compile(
        checkpointer=InMemorySaver()
    )
    openai.script(
        [
            {"name": "transfer_to_bob", "args": {}, "id": "call_h"},
            {"name": "pay", "args": {"amount": 5}, "id": "call_skip"},
        ],
        "bob here",
    )
    out = swarm.invoke({"messages": [("user", "hi")]}, cfg())
    assert RUNS == {}
    answers = {m.tool_call_id: m for m in out["messages"] if isinstance(m, ToolMessage)}
    assert answers.keys() == {"call_h", "call_skip"}
    assert "handed off" in str(answers["call_skip"].content)
    assert out["messages"][-1].content == "bob here"
    check_wire(openai, 2)


@pytest.mark.parametrize("worker_kind", ["dynavec", "prebuilt"])
def test_supervisor_with_this_agent_as_worker_pause_handoff_back_and_forward(
    worker_kind: Kind, openai: OpenAIServer
) -> None:
    worker = agent(worker_kind, openai, "payer", [pay])
    supervisor = create_supervisor(
        [worker],
        model=chat_openai(openai),
        tools=[create_forward_message_tool("supervisor")],
    ).compile(checkpointer=InMemorySaver())
    openai.script(
        [{"name": "transfer_to_payer", "args": {}, "id": "call_to_payer"}],  # supervisor
        [{"name": "pay", "args": {"amount": 80}, "id": "call_pay"}],  # worker
    )
    config = cfg()
    out = supervisor.invoke({"messages": [("user", "pay the bill")]}, config)
    [pending] = out["__interrupt__"]
    assert pending.value["payload"] == {"amount": 80}
    check_wire(openai, 2)

    openai.script(
        "Paid 80.",  # worker
        [{"name": "forward_message", "args": {"from_agent": "payer"}, "id": "call_fwd"}],
    )
    out = supervisor.invoke(Command(resume="approved"), config)
    assert RUNS == {"pay_started": 2, "paid": 1}
    last = out["messages"][-1]
    assert isinstance(last, AIMessage)
    assert (last.content, last.name) == ("Paid 80.", "supervisor")
    assert any(  # the handoff back to the supervisor
        isinstance(m, ToolMessage) and "back to supervisor" in str(m.content).lower()
        for m in out["messages"]
    )
    check_wire(openai, 4)


@lc_tool
def lookup(topic: str) -> str:
    """Look something up."""
    RUNS["lookup"] += 1
    return f"{topic} found"


def test_swarm_handoff_after_another_call_of_the_batch(openai: OpenAIServer) -> None:
    """Sequential mode: the answer already given in the batch reaches the parent with the
    handoff, so the agent taking over sees every call answered."""
    alice = agent("dynavec", openai, "alice", [lookup, create_handoff_tool(agent_name="bob")])
    bob = agent("prebuilt", openai, "bob", [])
    swarm = create_swarm([alice, bob], default_active_agent="alice").compile(
        checkpointer=InMemorySaver()
    )
    openai.script(
        [
            {"name": "lookup", "args": {"topic": "rent"}, "id": "call_l"},
            {"name": "transfer_to_bob", "args": {}, "id": "call_h"},
        ],
        "bob here",
    )
    out = swarm.invoke({"messages": [("user", "hi")]}, cfg())
    answers = {m.tool_call_id: m.content for m in out["messages"] if isinstance(m, ToolMessage)}
    assert answers == {"call_l": "rent found", "call_h": "Successfully transferred to bob"}
    assert RUNS == {"lookup": 1}
    check_wire(openai, 2)


def test_this_agent_as_supervisor_with_langgraph_supervisors_handoff_tool(
    openai: OpenAIServer,
) -> None:
    """This agent supervises with ``langgraph_supervisor``'s handoff tool (after another call
    of the same turn); the worker pauses and is resumed through the top graph; control comes
    back to the supervisor."""
    from langgraph.graph import END, START, MessagesState, StateGraph
    from langgraph_supervisor import create_handoff_tool as supervisor_handoff

    boss = agent("dynavec", openai, "boss", [lookup, supervisor_handoff(agent_name="worker")])
    worker = agent("prebuilt", openai, "worker", [pay])
    builder = StateGraph(MessagesState)
    builder.add_node("boss", boss, destinations=("worker", END))
    builder.add_node("worker", worker)
    builder.add_edge(START, "boss")
    builder.add_edge("worker", "boss")
    top: Any = builder.compile(checkpointer=InMemorySaver())
    openai.script(
        [
            {"name": "lookup", "args": {"topic": "bill"}, "id": "call_l"},
            {"name": "transfer_to_worker", "args": {}, "id": "call_h"},
        ],
        [{"name": "pay", "args": {"amount": 30}, "id": "call_pay"}],  # worker
    )
    config = cfg()
    out = top.invoke({"messages": [("user", "pay the bill")]}, config)
    [pending] = out["__interrupt__"]
    assert pending.value["payload"] == {"amount": 30}
    check_wire(openai, 2)

    openai.script("Paid 30.", "All done.")  # worker, then the supervisor again
    out = top.invoke(Command(resume="approved"), config)
    assert RUNS == {"lookup": 1, "pay_started": 2, "paid": 1}
    assert out["messages"][-1].content == "All done."
    assert out["messages"][-1].name == "boss"
    check_wire(openai, 4)
