"""Parallel tool calls and several pending approvals, sync and async.

``parallel_tool_calls=True`` sends each call of a turn as its own task: finished calls are
never re-run, several interrupts can be pending at once, and ``resume_command`` /
``ReActAgent.resume(decisions=...)`` answer them. Counters in :class:`Desk` prove what ran
how often; every refusal must leave the thread exactly as it was.
"""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command, Interrupt

from dynavec_langgraph import (
    AgentResult,
    AgentState,
    AgentTool,
    InvalidDecisionError,
    ReActAgent,
    create_react_agent,
    interrupt,
    tool,
)
from dynavec_langgraph.interrupt import resume_command
from dynavec_langgraph.testing import ScriptedChatModel, Turn
from tests.test_graph import (
    SYNC_AND_ASYNC,
    assert_provider_valid,
    check_model_calls,
    thread,
    tool_answers,
)
from tests.test_graph import drive as drive_graph

# --- helpers ------------------------------------------------------------------------------


class Desk:
    """``look`` (no pause), ``pay`` and ``ship`` (each pauses), ``note_a`` / ``note_b``
    (write the shared state). ``runs`` counts entries, ``<name>_decided`` the runs that got
    past the interrupt; ``decisions`` what each pausing tool received."""

    def __init__(self) -> None:
        self.runs = Counter[str]()
        self.decisions: dict[str, list[Any]] = {"pay": [], "ship": []}
        self._lock = threading.Lock()  # parallel tasks run in worker threads

    def count(self, key: str) -> None:
        with self._lock:
            self.runs[key] += 1

    def tools(self) -> list[AgentTool]:
        desk = self

        @tool
        def look(x: int) -> str:
            """Read something; never pauses."""
            desk.count("look")
            return f"look {x}"

        def pausing(name: str) -> AgentTool:
            @tool(name)
            def act(x: int) -> str:
                desk.count(name)
                decision = interrupt(f"approve_{name}", {"x": x})
                desk.count(f"{name}_decided")
                with desk._lock:
                    desk.decisions[name].append(decision)
                return f"{name} {x}: {decision}"

            return act

        @tool
        def note_a(state: AgentState) -> str:
            """Write key a."""
            desk.count("note_a")
            state.data["a"] = 1
            return "noted a"

        @tool
        def note_b(state: AgentState) -> str:
            """Write key b, drop key old."""
            desk.count("note_b")
            state.data["b"] = 2
            state.data.pop("old", None)
            return "noted b"

        return [look, pausing("pay"), pausing("ship"), note_a, note_b]


def call(name: str, x: int | None = None, call_id: str | None = None) -> dict[str, Any]:
    turn: dict[str, Any] = {"name": name, "args": {} if x is None else {"x": x}}
    if call_id:
        turn["id"] = call_id
    return turn


THREE = [call("pay", 1, "c_pay"), call("look", 2, "c_look"), call("ship", 3, "c_ship")]
"""One turn, three calls; the first and the last pause."""


def script(*turns: Turn) -> ScriptedChatModel:
    return ScriptedChatModel(turns=list(turns))


async def run(agent: ReActAgent, use_async: bool, goal: str, **kw: Any) -> AgentResult:
    return await agent.arun(goal, **kw) if use_async else agent.run(goal, **kw)


async def resume(agent: ReActAgent, use_async: bool, **kw: Any) -> AgentResult:
    return await agent.aresume(**kw) if use_async else agent.resume(**kw)


def by_node(interrupts: Any) -> dict[str, Any]:
    """``{node_id: interrupt}`` of pending LangGraph interrupts (order-free)."""
    result = {i.value["node_id"]: i for i in interrupts}
    assert len(result) == len(interrupts), f"a node id is pending twice: {interrupts!r}"
    return result


def pending_of(result: AgentResult) -> dict[str, dict[str, Any]]:
    """``{node_id: pending entry}`` of a paused ``AgentResult``."""
    assert result.interrupt_payload is not None
    return {p["node_id"]: p for p in result.interrupt_payload["pending"]}


def frozen(agent: ReActAgent, thread_id: str) -> tuple[Any, ...]:
    """Everything a refusal must leave unchanged: checkpoint, values, next, interrupts."""
    snapshot = agent.graph.get_state({"configurable": {"thread_id": thread_id}})
    checkpoint_id = (snapshot.config.get("configurable") or {}).get("checkpoint_id")
    return checkpoint_id, snapshot.values, snapshot.next, snapshot.interrupts


PAUSED_COUNTS = Counter({"pay": 2, "look": 1, "ship": 2})
"""In a turn of several calls a pausing call is entered twice before its pause: its first run
is held until the finished results are saved, then it pauses for good."""
FINAL_ANSWERS = [("pay", "pay 1: A"), ("look", "look 2"), ("ship", "ship 3: B")]


# --- the raw graph -------------------------------------------------------------------------


@SYNC_AND_ASYNC
@pytest.mark.parametrize("keyed_by", ["node_id", "interrupt_id"])
async def test_graph_two_pauses_pending_at_once(use_async: bool, keyed_by: str) -> None:
    desk = Desk()
    model = script(THREE, "Paid and shipped.")
    graph = create_react_agent(
        model, desk.tools(), checkpointer=InMemorySaver(), parallel_tool_calls=True
    )
    out = await drive_graph(graph, {"messages": [("user", "go")]}, thread(), use_async)

    pending = by_node(out["__interrupt__"])
    assert set(pending) == {"approve_pay", "approve_ship"}
    assert pending["approve_pay"].value["payload"] == {"x": 1}
    assert pending["approve_ship"].value["payload"] == {"x": 3}
    assert pending["approve_pay"].value["tool_call"] == {
        "id": "c_pay",
        "name": "pay",
        "args": {"x": 1},
    }
    assert pending["approve_ship"].value["tool_call"]["id"] == "c_ship"
    assert desk.runs == PAUSED_COUNTS  # look ran, both pausing tools reached their interrupt
    assert tool_answers(out["messages"]) == [("look", "look 2")]
    now = graph.get_state(thread()).interrupts
    assert {i.id: i.value for i in now} == {i.id: i.value for i in out["__interrupt__"]}

    if keyed_by == "node_id":
        decisions = {"approve_pay": "A", "approve_ship": "B"}
    else:
        decisions = {pending["approve_pay"].id: "A", pending["approve_ship"].id: "B"}
    command = resume_command(out["__interrupt__"], decisions)
    assert command.resume == {pending["approve_pay"].id: "A", pending["approve_ship"].id: "B"}
    out = await drive_graph(graph, command, thread(), use_async)

    assert "__interrupt__" not in out
    assert desk.decisions == {"pay": ["A"], "ship": ["B"]}
    assert desk.runs == Counter(
        {"pay": 3, "pay_decided": 1, "look": 1, "ship": 3, "ship_decided": 1}
    )
    assert tool_answers(out["messages"]) == FINAL_ANSWERS  # in the model's call order
    assert (out["termination_reason"], out["step"]) == ("completed", 2)
    assert out["messages"][-1].content == "Paid and shipped."
    assert graph.get_state(thread()).interrupts == ()
    assert_provider_valid(out["messages"])
    check_model_calls(model)
    assert len(model.calls) == 2


@SYNC_AND_ASYNC
async def test_graph_answer_one_then_the_other(use_async: bool) -> None:
    desk = Desk()
    model = script(THREE, "Done.")
    graph = create_react_agent(
        model, desk.tools(), checkpointer=InMemorySaver(), parallel_tool_calls=True
    )
    out = await drive_graph(graph, {"messages": [("user", "go")]}, thread(), use_async)
    before = by_node(out["__interrupt__"])

    out = await drive_graph(
        graph, resume_command(out["__interrupt__"], {"approve_ship": "B"}), thread(), use_async
    )
    (still,) = out["__interrupt__"]
    assert still == before["approve_pay"]  # same pause, same id, same payload
    assert graph.get_state(thread()).interrupts == (still,)
    assert desk.decisions == {"pay": [], "ship": ["B"]}
    assert desk.runs["look"] == 1
    assert desk.runs["pay_decided"] == 0
    assert tool_answers(out["messages"]) == [("look", "look 2"), ("ship", "ship 3: B")]
    assert len(model.calls) == 1  # the model waits for every answer of the turn

    # one pause left: a plain Command(resume=...) answers it
    out = await drive_graph(graph, Command(resume="A"), thread(), use_async)
    assert "__interrupt__" not in out
    assert desk.decisions == {"pay": ["A"], "ship": ["B"]}
    assert (desk.runs["look"], desk.runs["pay_decided"], desk.runs["ship_decided"]) == (1, 1, 1)
    assert tool_answers(out["messages"]) == FINAL_ANSWERS
    assert out["termination_reason"] == "completed"
    assert_provider_valid(out["messages"])
    check_model_calls(model)


@SYNC_AND_ASYNC
async def test_graph_parallel_shared_writes_merge(use_async: bool) -> None:
    desk = Desk()
    model = script([call("note_a"), call("pay", 1), call("note_b")], "Noted.")
    graph = create_react_agent(
        model, desk.tools(), checkpointer=InMemorySaver(), parallel_tool_calls=True
    )
    start = {"messages": [("user", "go")], "shared": {"keep": 0, "old": 9}}
    out = await drive_graph(graph, start, thread(), use_async)
    assert len(out["__interrupt__"]) == 1
    # both tools started from the same copy; each one's change is merged, none overwritten
    assert out["shared"] == {"keep": 0, "a": 1, "b": 2}

    out = await drive_graph(graph, Command(resume="ok"), thread(), use_async)
    assert out["shared"] == {"keep": 0, "a": 1, "b": 2}
    assert desk.runs == Counter({"note_a": 1, "note_b": 1, "pay": 3, "pay_decided": 1})
    assert out["termination_reason"] == "completed"
    check_model_calls(model)


@SYNC_AND_ASYNC
async def test_graph_max_steps_in_parallel_mode(use_async: bool) -> None:
    desk = Desk()
    model = ScriptedChatModel(policy=lambda messages: [call("look", 1), call("look", 2)])
    graph = create_react_agent(model, desk.tools(), max_steps=3, parallel_tool_calls=True)
    out = await drive_graph(graph, {"messages": [("user", "loop")]}, {}, use_async)
    assert (out["termination_reason"], out["step"]) == ("max_steps_reached", 3)
    assert len(model.calls) == 3
    assert desk.runs == Counter({"look": 6})
    assert tool_answers(out["messages"])[-2:] == [("look", "look 1"), ("look", "look 2")]
    assert_provider_valid(out["messages"])
    check_model_calls(model)


@SYNC_AND_ASYNC
async def test_graph_default_is_sequential(use_async: bool) -> None:
    desk = Desk()
    model = script(THREE, "Done.")
    graph = create_react_agent(model, desk.tools(), checkpointer=InMemorySaver())
    out = await drive_graph(graph, {"messages": [("user", "go")]}, thread(), use_async)
    (only,) = out["__interrupt__"]
    assert only.value["node_id"] == "approve_pay"
    assert desk.runs == Counter({"pay": 1})  # look and ship wait for the decision
    assert tool_answers(out["messages"]) == []


# --- resume_command -------------------------------------------------------------------------

PAY = Interrupt(value={"node_id": "approve_pay", "payload": 1, "tool_call": None}, id="a" * 32)
SHIP = Interrupt(value={"node_id": "approve_ship", "payload": 2, "tool_call": None}, id="b" * 32)
PAY_TOO = Interrupt(value={"node_id": "approve_pay", "payload": 3, "tool_call": None}, id="c" * 32)


def test_resume_command_maps_node_ids_and_interrupt_ids() -> None:
    command = resume_command([PAY, SHIP], {"approve_pay": "yes", "approve_ship": {"ok": False}})
    assert command.resume == {"a" * 32: "yes", "b" * 32: {"ok": False}}
    assert resume_command([PAY, SHIP], {"b" * 32: "no"}).resume == {"b" * 32: "no"}
    mixed = resume_command([PAY, SHIP, PAY_TOO], {"a" * 32: 1, "approve_ship": 2, "c" * 32: 3})
    assert mixed.resume == {"a" * 32: 1, "b" * 32: 2, "c" * 32: 3}
    # falsy decisions other than None are decisions
    assert resume_command([PAY], {"approve_pay": False}).resume == {"a" * 32: False}


@pytest.mark.parametrize(
    ("pending", "decisions", "says"),
    [
        ([PAY, SHIP], {"approve_pay": "yes", "approve_nothing": "no"}, "'approve_nothing'"),
        ([PAY, SHIP, PAY_TOO], {"approve_pay": "yes"}, "pending 2 times"),
        ([PAY, SHIP], {"approve_pay": None}, "None"),
        ([PAY, SHIP], {}, "no decisions"),
        ([PAY, SHIP], {"approve_pay": "yes", "a" * 32: "no"}, "two decisions"),
    ],
    ids=["unknown", "pending-twice", "none", "empty", "same-pause-twice"],
)
def test_resume_command_refusals_list_what_is_pending(
    pending: list[Interrupt], decisions: dict[str, Any], says: str
) -> None:
    with pytest.raises(InvalidDecisionError) as refused:
        resume_command(pending, decisions)
    assert isinstance(refused.value, ValueError)
    message = str(refused.value)
    assert says in message
    for i in pending:
        assert i.id in message, f"{i.id} missing from {message!r}"
        assert repr(i.value["node_id"]) in message


# --- ReActAgent ---------------------------------------------------------------------------


@SYNC_AND_ASYNC
@pytest.mark.parametrize("keyed_by", ["node_id", "interrupt_id"])
async def test_agent_resumes_both_pauses_at_once(use_async: bool, keyed_by: str) -> None:
    desk = Desk()
    model = script(THREE, "Paid and shipped.")
    agent = ReActAgent(model, desk.tools(), parallel_tool_calls=True)
    paused = await run(agent, use_async, "go", thread_id="t")

    assert (paused.finished, paused.termination_reason) == (False, "interrupted")
    assert (paused.total_steps, paused.tool_calls_count) == (1, 3)
    assert paused.steps[0].observations == ["look 2"]
    pending = pending_of(paused)
    assert set(pending) == {"approve_pay", "approve_ship"}
    assert pending["approve_pay"]["payload"] == {"x": 1}
    assert pending["approve_ship"]["payload"] == {"x": 3}
    assert pending["approve_pay"]["tool_call"]["id"] == "c_pay"
    assert pending["approve_ship"]["tool_call"]["id"] == "c_ship"
    assert paused.interrupt_payload is not None
    assert paused.interrupt_payload["thread_id"] == "t"
    assert desk.runs == PAUSED_COUNTS

    if keyed_by == "node_id":
        decisions = {"approve_pay": "A", "approve_ship": "B"}
    else:
        decisions = {
            pending["approve_pay"]["interrupt_id"]: "A",
            pending["approve_ship"]["interrupt_id"]: "B",
        }
    final = await resume(agent, use_async, thread_id="t", decisions=decisions)

    assert (final.finished, final.termination_reason) == (True, "completed")
    assert final.output == "Paid and shipped."
    assert (final.total_steps, final.tool_calls_count) == (2, 3)
    assert final.steps[0].observations == ["pay 1: A", "look 2", "ship 3: B"]
    assert desk.decisions == {"pay": ["A"], "ship": ["B"]}
    assert (desk.runs["look"], desk.runs["pay_decided"], desk.runs["ship_decided"]) == (1, 1, 1)
    assert agent.graph.get_state(thread("t")).interrupts == ()
    check_model_calls(model)
    assert len(model.calls) == 2


@SYNC_AND_ASYNC
async def test_agent_answers_one_pause_then_the_other(use_async: bool) -> None:
    desk = Desk()
    model = script(THREE, "Done.")
    agent = ReActAgent(model, desk.tools(), parallel_tool_calls=True)
    paused = await run(agent, use_async, "go", thread_id="t")
    first_ids = {k: v["interrupt_id"] for k, v in pending_of(paused).items()}

    again = await resume(agent, use_async, thread_id="t", decisions={"approve_pay": "A"})
    assert again.termination_reason == "interrupted"
    assert again.interrupt_payload is not None
    assert again.interrupt_payload["node_id"] == "approve_ship"
    assert again.interrupt_payload["payload"] == {"x": 3}
    assert list(pending_of(again)) == ["approve_ship"]
    assert pending_of(again)["approve_ship"]["interrupt_id"] == first_ids["approve_ship"]
    assert again.steps[0].observations == ["pay 1: A", "look 2"]
    assert desk.decisions == {"pay": ["A"], "ship": []}
    assert (desk.runs["look"], desk.runs["pay_decided"], desk.runs["ship_decided"]) == (1, 1, 0)

    # one pause left: a plain human_decision answers it
    final = await resume(agent, use_async, thread_id="t", human_decision="B")
    assert final.termination_reason == "completed"
    assert final.steps[0].observations == ["pay 1: A", "look 2", "ship 3: B"]
    assert desk.decisions == {"pay": ["A"], "ship": ["B"]}
    assert (desk.runs["look"], desk.runs["pay_decided"], desk.runs["ship_decided"]) == (1, 1, 1)
    assert final.tool_calls_count == 3
    check_model_calls(model)


REFUSALS = pytest.mark.parametrize(
    ("kwargs", "says"),
    [
        ({"human_decision": "A"}, "2 decisions are pending"),
        ({"decisions": {"approve_pay": "A", "approve_nope": "B"}}, "'approve_nope' is not pending"),
        ({"decisions": {"approve_pay": "A", "approve_ship": None}}, "None"),
        ({"decisions": {}}, "no decisions"),
        ({"decisions": {"approve_pay": "A"}, "human_decision": "A"}, "not both"),
    ],
    ids=["plain-decision", "unknown-key", "none-decision", "empty", "both"],
)


@SYNC_AND_ASYNC
@REFUSALS
async def test_agent_refusals_change_nothing(
    use_async: bool, kwargs: dict[str, Any], says: str
) -> None:
    desk = Desk()
    model = script(THREE, "Done.")
    agent = ReActAgent(model, desk.tools(), parallel_tool_calls=True)
    paused = await run(agent, use_async, "go", thread_id="t")
    before, runs_before = frozen(agent, "t"), Counter(desk.runs)

    with pytest.raises(InvalidDecisionError) as refused:
        await resume(agent, use_async, thread_id="t", **kwargs)
    assert isinstance(refused.value, ValueError)
    assert says in str(refused.value)
    if "both" not in says:
        for node_id in ("approve_pay", "approve_ship"):
            assert node_id in str(refused.value)
    assert frozen(agent, "t") == before
    assert desk.runs == runs_before
    assert desk.decisions == {"pay": [], "ship": []}
    assert len(model.calls) == 1

    # the thread is still answerable, and only the valid answer is applied
    assert set(pending_of(paused)) == {"approve_pay", "approve_ship"}
    final = await resume(
        agent, use_async, thread_id="t", decisions={"approve_pay": "A2", "approve_ship": "B2"}
    )
    assert final.steps[0].observations == ["pay 1: A2", "look 2", "ship 3: B2"]
    assert desk.decisions == {"pay": ["A2"], "ship": ["B2"]}
    assert desk.runs["look"] == 1
    check_model_calls(model)


@SYNC_AND_ASYNC
async def test_stream_resume_refusal_changes_nothing(use_async: bool) -> None:
    desk = Desk()
    agent = ReActAgent(script(THREE, "Done."), desk.tools(), parallel_tool_calls=True)
    await run(agent, use_async, "go", thread_id="t")
    before, runs_before = frozen(agent, "t"), Counter(desk.runs)
    with pytest.raises(InvalidDecisionError, match="approve_ship"):
        if use_async:
            async for _ in agent.astream_resume(thread_id="t", human_decision="A"):
                pass
        else:
            for _ in agent.stream_resume(thread_id="t", decisions={"approve_x": "A"}):
                pass
    assert frozen(agent, "t") == before
    assert desk.runs == runs_before


@SYNC_AND_ASYNC
async def test_agent_same_node_pending_twice_needs_interrupt_ids(use_async: bool) -> None:
    desk = Desk()
    model = script([call("pay", 1, "c1"), call("pay", 2, "c2")], "Both paid.")
    agent = ReActAgent(model, desk.tools(), parallel_tool_calls=True)
    paused = await run(agent, use_async, "go", thread_id="t")
    assert paused.interrupt_payload is not None
    pending = paused.interrupt_payload["pending"]
    assert sorted(p["payload"]["x"] for p in pending) == [1, 2]
    ids = {p["tool_call"]["id"]: p["interrupt_id"] for p in pending}
    before = frozen(agent, "t")

    with pytest.raises(InvalidDecisionError, match="pending 2 times") as refused:
        await resume(agent, use_async, thread_id="t", decisions={"approve_pay": "A"})
    assert ids["c1"] in str(refused.value) and ids["c2"] in str(refused.value)
    with pytest.raises(InvalidDecisionError) as plain:
        await resume(agent, use_async, thread_id="t", human_decision="A")
    assert ids["c1"] in str(plain.value) and ids["c2"] in str(plain.value)
    assert frozen(agent, "t") == before
    assert desk.runs == Counter({"pay": 4})

    final = await resume(
        agent, use_async, thread_id="t", decisions={ids["c1"]: "one", ids["c2"]: "two"}
    )
    # each call got its own decision, never the other's
    assert final.steps[0].observations == ["pay 1: one", "pay 2: two"]
    assert sorted(desk.decisions["pay"]) == ["one", "two"]
    assert desk.runs == Counter({"pay": 6, "pay_decided": 2})
    assert final.output == "Both paid."
    check_model_calls(model)


@SYNC_AND_ASYNC
async def test_agent_shared_state_writes_merge(use_async: bool) -> None:
    desk = Desk()
    model = script([call("note_a"), call("note_b"), call("pay", 1)], "Noted.")
    agent = ReActAgent(model, desk.tools(), parallel_tool_calls=True)
    state = AgentState({"keep": 0, "old": 9})
    paused = await run(agent, use_async, "go", thread_id="t", state=state)
    assert paused.termination_reason == "interrupted"
    assert state.data == {"keep": 0, "a": 1, "b": 2}

    resumed_state = AgentState()
    final = await resume(agent, use_async, thread_id="t", human_decision="ok", state=resumed_state)
    assert final.termination_reason == "completed"
    assert resumed_state.data == {"keep": 0, "a": 1, "b": 2}
    assert desk.runs == Counter({"note_a": 1, "note_b": 1, "pay": 3, "pay_decided": 1})
    assert all("keep" not in str(m) for call_messages in model.calls for m in call_messages)
    assert all("keep" not in str(kwargs) for kwargs in model.call_kwargs)
    check_model_calls(model)


@SYNC_AND_ASYNC
async def test_agent_max_steps_in_parallel_mode(use_async: bool) -> None:
    desk = Desk()
    model = ScriptedChatModel(policy=lambda messages: [call("look", 1), call("look", 2)])
    agent = ReActAgent(model, desk.tools(), max_steps=2, parallel_tool_calls=True)
    result = await run(agent, use_async, "loop")
    assert (result.finished, result.termination_reason) == (False, "max_steps_reached")
    assert (result.total_steps, result.tool_calls_count) == (2, 4)
    assert result.output == "look 2"  # no thought: the last observation
    assert len(model.calls) == 2
    assert desk.runs == Counter({"look": 4})
    check_model_calls(model)


@SYNC_AND_ASYNC
async def test_agent_max_steps_reached_after_a_parallel_resume(use_async: bool) -> None:
    desk = Desk()
    model = script([call("look", 1), call("pay", 2)])  # no answer scripted: must not be asked
    agent = ReActAgent(model, desk.tools(), max_steps=1, parallel_tool_calls=True)
    paused = await run(agent, use_async, "go", thread_id="t")
    assert paused.termination_reason == "interrupted"
    final = await resume(agent, use_async, thread_id="t", human_decision="ok")
    assert (final.termination_reason, final.total_steps) == ("max_steps_reached", 1)
    assert final.output == "pay 2: ok"
    assert len(model.calls) == 1
    assert desk.runs == Counter({"look": 1, "pay": 3, "pay_decided": 1})


@SYNC_AND_ASYNC
async def test_agent_default_is_sequential(use_async: bool) -> None:
    desk = Desk()
    model = script(THREE, "Done.")
    agent = ReActAgent(model, desk.tools())
    paused = await run(agent, use_async, "go", thread_id="t")
    assert list(pending_of(paused)) == ["approve_pay"]
    assert desk.runs == Counter({"pay": 1})  # the calls after the pause have not run
    assert paused.steps[0].observations == []

    again = await resume(agent, use_async, thread_id="t", human_decision="A")
    assert list(pending_of(again)) == ["approve_ship"]
    assert desk.runs == Counter({"pay": 2, "pay_decided": 1, "look": 1, "ship": 1})
    assert again.steps[0].observations == ["pay 1: A", "look 2"]

    # decisions= also answers a single pause
    final = await resume(agent, use_async, thread_id="t", decisions={"approve_ship": "B"})
    assert final.steps[0].observations == ["pay 1: A", "look 2", "ship 3: B"]
    assert desk.runs == Counter(
        {"pay": 2, "pay_decided": 1, "look": 1, "ship": 2, "ship_decided": 1}
    )
    assert final.termination_reason == "completed"
    check_model_calls(model)
