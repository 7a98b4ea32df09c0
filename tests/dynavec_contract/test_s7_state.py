"""dynavec's shared state, hand-off and supervisor (docs/compatibility.md S5-S8): agents need
only ``run(goal, *, state)``; ``Supervisor.run`` calls each once, in order, with the same goal
and state object, and returns one result per agent."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from dynavec_langgraph.agents import (
    AgentResult,
    AgentState,
    Handoff,
    ReActAgent,
    Supervisor,
    interrupt,
    tool,
)
from dynavec_langgraph.agents.supervisor import AgentLike
from tests.dynavec_model import ScriptedDynavecModel


class RunOnly:
    """An agent with nothing but ``run(goal, *, state)``."""

    def __init__(self, name: str, reason: str = "completed") -> None:
        self.name = name
        self.reason = reason
        self.calls: list[tuple[str, AgentState, dict[str, Any]]] = []

    def run(self, goal: str, *, state: AgentState, **kwargs: Any) -> AgentResult:
        self.calls.append((goal, state, kwargs))
        state.data.setdefault("order", []).append(self.name)
        state.data[f"{self.name}_saw"] = list(state.data["order"])
        return AgentResult(f"{self.name} done", termination_reason=self.reason)  # type: ignore[arg-type]


def test_s5_agent_state_and_handoff() -> None:
    state = AgentState()
    assert state.data == {} and AgentState().data is not state.data
    state.data["k"] = 1
    assert AgentState({"k": 1}) == state
    handoff = Handoff()
    assert handoff(state) is state and state.data == {"k": 1}


def test_s6_supervisor_runs_every_agent_on_the_same_goal_and_state() -> None:
    first, paused, last = RunOnly("a"), RunOnly("b", "interrupted"), RunOnly("c")
    agents: list[Any] = [first, paused, last]
    supervisor = Supervisor(agents)
    assert supervisor.agents is agents
    state = AgentState()
    results = supervisor.run("the goal", state=state)
    assert [r.output for r in results] == ["a done", "b done", "c done"]
    assert results[1].termination_reason == "interrupted"  # included; the next still ran
    for agent in agents:
        ((goal, seen_state, kwargs),) = agent.calls
        assert (goal, seen_state, kwargs) == ("the goal", state, {}) and seen_state is state
    assert state.data["c_saw"] == ["a", "b", "c"]  # later agents see earlier writes
    assert Supervisor([]).run("x", state=AgentState()) == []


def test_s6_exceptions_propagate_and_extensions_are_opt_in() -> None:
    class Broken:
        def run(self, goal: str, *, state: AgentState) -> AgentResult:
            raise RuntimeError("agent failed")

    after = RunOnly("after")
    with pytest.raises(RuntimeError, match="agent failed"):
        Supervisor([Broken(), after]).run("g", state=AgentState())
    assert after.calls == []
    one = RunOnly("one")
    Supervisor([one]).run("g")  # state defaults to a fresh AgentState
    Supervisor([one]).run("g", state=AgentState(), thread_id="t")  # forwarded only when given
    assert isinstance(one.calls[0][1], AgentState) and one.calls[1][2] == {"thread_id": "t"}


def test_s7_agent_like_is_a_plain_protocol() -> None:
    agent: AgentLike = RunOnly("x")
    assert agent.run("g", state=AgentState()).output == "x done"
    with pytest.raises(TypeError):
        isinstance(agent, AgentLike)  # type: ignore[misc]  # not runtime_checkable


@tool()
def note(value: str, state: AgentState) -> str:
    """Write to the shared state."""
    state.data["note"] = value
    return "noted"


@tool()
def approve(item: str) -> str:
    """Needs a person."""
    return str(interrupt("approve", {"item": item}))


def test_s6_react_agents_under_the_supervisor() -> None:
    writer = ReActAgent(ScriptedDynavecModel([[("note", {"value": "120"})], "wrote"]), [note])
    asker = ReActAgent(ScriptedDynavecModel([[("approve", {"item": "rent"})]]), [approve])
    reader_model = ScriptedDynavecModel(["read"])
    reader = ReActAgent(reader_model, [])
    state = AgentState()
    results = Supervisor([writer, asker, reader]).run("pay rent", state=state)
    assert [r.termination_reason for r in results] == ["completed", "interrupted", "completed"]
    assert state.data == {"note": "120"}
    assert reader_model.seen[0][-1].content == "pay rent"  # the same goal, not a hand-off


def test_s8_arun_keeps_the_order_and_the_shape() -> None:
    threads: list[str] = []

    class AsyncAgent:
        async def arun(self, goal: str, *, state: AgentState) -> AgentResult:
            state.data.setdefault("order", []).append("async")
            return AgentResult("async done")

    class SyncAgent(RunOnly):
        def run(self, goal: str, *, state: AgentState, **kwargs: Any) -> AgentResult:
            threads.append(threading.current_thread().name)
            return super().run(goal, state=state, **kwargs)

    state = AgentState()
    sync_agent = SyncAgent("sync")
    results = asyncio.run(Supervisor([AsyncAgent(), sync_agent]).arun("g", state=state))
    assert [r.output for r in results] == ["async done", "sync done"]
    assert state.data["order"] == ["async", "sync"] and threads[0] != "MainThread"
    assert sync_agent.calls[0][0] == "g"
