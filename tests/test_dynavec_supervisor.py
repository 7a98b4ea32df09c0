"""The pausing, handoff-driven supervisor (``HandoffSupervisor``, an extension) and the
planner's ``execute``/``resume`` extension, with dynavec ``ChatModel`` subclasses as the
models. dynavec's own ``Supervisor``, ``Handoff``, ``AgentLike`` and ``Planner.plan`` are
tested in tests/dynavec_contract/. One test per S* row of docs/compatibility.md."""

from __future__ import annotations

from collections import Counter

import pytest

from dynavec_langgraph.agents import (
    AgentState,
    MemoryCheckpointer,
    Plan,
    Planner,
    PlanStep,
    ReActAgent,
    interrupt,
    tool,
)
from dynavec_langgraph.supervisor import HandoffRecord, HandoffSupervisor, ResumableAgent
from tests.dynavec_model import ScriptedDynavecModel

RUNS: Counter[str] = Counter()


@pytest.fixture(autouse=True)
def _reset() -> None:
    RUNS.clear()


@tool()
def note(key: str, value: str, state: AgentState) -> str:
    """Write to the shared state."""
    state.data[key] = value
    return f"noted {key}"


@tool()
def read(key: str, state: AgentState) -> str:
    """Read the shared state."""
    return str(state.data.get(key))


@tool()
def send(text: str) -> str:
    """Send after approval."""
    decision = interrupt("approve_send", {"text": text})
    RUNS["sent"] += 1
    return f"sent ({decision})"


def test_s1_agents_in_order_on_one_state() -> None:
    research = ReActAgent(
        ScriptedDynavecModel([[("note", {"key": "rent", "value": "120"})], "rent is 120"]),
        tools=[note],
    )
    writer_model = ScriptedDynavecModel([[("read", {"key": "rent"})], "Letter: 120"])
    writer = ReActAgent(writer_model, tools=[read])
    shared = AgentState()
    team = HandoffSupervisor({"research": research, "write": writer})
    result = team.run("pay rent", state=shared)
    assert result.output == "Letter: 120" and result.termination_reason == "completed"
    assert shared.data == {"rent": "120"}
    assert writer_model.seen[0][-1].content == "pay rent\n\nResult of research: rent is 120"
    assert team.handoffs == [
        HandoffRecord("research", "write", writer_model.seen[0][-1].content or "", "rent is 120")
    ]
    assert (result.total_steps, result.tool_calls_count, len(result.steps)) == (4, 2, 4)
    assert team.results["write"].steps[0].observations == ["120"]


def test_s2_pause_and_resume() -> None:
    store = MemoryCheckpointer()
    drafter = ReActAgent(ScriptedDynavecModel(["draft: hello"]), checkpointer=store)
    sender = ReActAgent(
        ScriptedDynavecModel([[("send", {"text": "hello"})], "Sent."]),
        tools=[send],
        checkpointer=store,
    )
    team = HandoffSupervisor([drafter, sender], handoff=lambda goal, source, r: f"send {r.output}")
    paused = team.run("greet", thread_id="w1")
    assert paused.termination_reason == "interrupted" and RUNS["sent"] == 0
    assert (paused.interrupt_payload or {})["agent"] == "agent_1"
    assert [c.node_id for c in store.list("w1/agent_1")] == ["init", "interrupted"]
    assert [c.node_id for c in store.list("w1/agent_0")] == ["init", "step_1"]
    done = team.resume(thread_id="w1", human_decision="ok")
    assert done.output == "Sent." and RUNS["sent"] == 1
    assert team.handoffs[0].goal == "send draft: hello"
    # without a thread id nothing is written; the pause is answered from its messages
    RUNS.clear()
    quiet = MemoryCheckpointer()
    sender2 = ReActAgent(
        ScriptedDynavecModel([[("send", {"text": "x"})], "ok"]), tools=[send], checkpointer=quiet
    )
    team2 = HandoffSupervisor({"send": sender2})
    paused2 = team2.run("x")
    key = (paused2.interrupt_payload or {})["supervisor_thread_id"]
    assert team2.resume(thread_id=key, human_decision="yes").output == "ok" and RUNS["sent"] == 1
    assert quiet.get(key) is None


def test_s4_agent_like() -> None:
    agent = ReActAgent(ScriptedDynavecModel(["x"]))
    assert isinstance(agent, ResumableAgent)
    assert isinstance(HandoffSupervisor([agent]), ResumableAgent)
    assert not isinstance(object(), ResumableAgent)


def test_s5_planner() -> None:
    answer = '{"steps": [{"step_number": 1, "description": "check the balance"}, "send the rent"]}'
    planner = Planner(ScriptedDynavecModel([answer]))
    plan = planner.plan("pay rent")
    steps = [PlanStep(1, "check the balance"), PlanStep(2, "send the rent")]
    assert plan == Plan("pay rent", steps)
    executor_model = ScriptedDynavecModel(
        ["balance 900", [("send", {"text": "rent"})], "rent sent"]
    )
    agent = ReActAgent(executor_model, tools=[send])
    paused = planner.execute(plan, agent)
    assert paused.termination_reason == "interrupted"
    assert [s.status for s in plan.steps] == ["done", "interrupted"] and RUNS["sent"] == 0
    assert "check the balance: balance 900" in (executor_model.seen[1][-1].content or "")
    done = planner.resume(plan, agent, "approved")
    assert done.output == "rent sent" and plan.is_complete and RUNS["sent"] == 1
    assert plan.steps[1].output == "rent sent" and plan.next_step() is None
