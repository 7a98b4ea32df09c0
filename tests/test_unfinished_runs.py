"""dynavec's ``run()`` on an unfinished thread continues it (docs/compatibility.md C6).

A thread whose last run stopped at ``max_steps`` is continued by the next ``run()`` (from
another agent object on the same SQLite file, as another process would): the goal is not added
again, the run gets ``max_steps`` more model calls, counted from where the last one stopped,
and no tool call runs twice. On a finished thread a new goal is a follow-up message with a
full step budget of its own. (The crash-in-the-middle-of-a-batch case is
``test_durability.py::test_run_again_after_a_crash_mid_batch_continues_it_without_the_goal_twice``.)
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from dynavec_langgraph import AgentResult, ReActAgent, tool
from dynavec_langgraph.events import ResultEvent
from dynavec_langgraph.testing import ScriptedChatModel, Turn

GOAL = "count to five"


def _counting_policy(last: int) -> Callable[[list[BaseMessage]], Turn]:
    """Calls ``step(n)`` for n = 1.. one model call at a time, then answers after ``last``."""

    def policy(messages: list[BaseMessage]) -> Turn:
        done = sum(isinstance(m, ToolMessage) for m in messages)
        if done >= last:
            return f"counted to {done}"
        return [{"name": "step", "args": {"n": done + 1}}]

    return policy


class Runner:
    """One way of calling ``run``: sync, async, streaming or async streaming."""

    def __init__(self, mode: str, db: Path) -> None:
        self.mode, self.db = mode, db

    def __call__(self, goal: str, thread_id: str, max_steps: int, tools: list[Any]) -> Any:
        model = ScriptedChatModel(policy=_counting_policy(5))
        if self.mode in ("run", "stream"):
            with SqliteSaver.from_conn_string(str(self.db)) as saver:
                agent = ReActAgent(model, tools, max_steps=max_steps, checkpointer=saver)
                if self.mode == "run":
                    return agent.run(goal, thread_id=thread_id), model
                events = list(agent.stream(goal, thread_id=thread_id))
                assert isinstance(events[-1], ResultEvent)
                return events[-1].result, model

        async def go() -> AgentResult:
            async with AsyncSqliteSaver.from_conn_string(str(self.db)) as saver:
                agent = ReActAgent(model, tools, max_steps=max_steps, checkpointer=saver)
                if self.mode == "arun":
                    return await agent.arun(goal, thread_id=thread_id)
                events = [e async for e in agent.astream(goal, thread_id=thread_id)]
                assert isinstance(events[-1], ResultEvent)
                return events[-1].result

        return asyncio.run(go()), model


@pytest.fixture(params=["run", "arun", "stream", "astream"])
def runner(request: pytest.FixtureRequest, tmp_path: Path) -> Runner:
    return Runner(str(request.param), tmp_path / "runs.db")


@pytest.fixture
def ran() -> Counter[int]:
    return Counter()


@pytest.fixture
def tools(ran: Counter[int]) -> list[Any]:
    @tool
    def step(n: int) -> str:
        """Take step ``n``."""
        ran[n] += 1
        return f"step {n} done"

    return [step]


def _thread(db: Path, thread_id: str) -> list[BaseMessage]:
    with SqliteSaver.from_conn_string(str(db)) as saver:
        found = saver.get_tuple({"configurable": {"thread_id": thread_id}})
    assert found is not None
    return list(found.checkpoint["channel_values"].get("messages") or [])


def _state(db: Path, thread_id: str, tools: list[Any]) -> dict[str, Any]:
    with SqliteSaver.from_conn_string(str(db)) as saver:
        agent = ReActAgent(ScriptedChatModel(), tools, checkpointer=saver)
        return dict(agent.graph.get_state({"configurable": {"thread_id": thread_id}}).values)


def test_run_on_a_thread_stopped_at_max_steps_continues_it_without_the_goal(
    runner: Runner, ran: Counter[int], tools: list[Any]
) -> None:
    first, _ = runner(GOAL, "t", 2, tools)
    assert (first.termination_reason, first.finished) == ("max_steps_reached", False)
    assert ran == Counter({1: 1, 2: 1})

    second, model = runner(GOAL, "t", 2, tools)  # dynavec's users call run() again
    assert (second.termination_reason, second.finished) == ("max_steps_reached", False)
    assert ran == Counter({1: 1, 2: 1, 3: 1, 4: 1})
    assert len(model.calls) == 2  # max_steps more model calls, not 2 - 2 = 0 and not 4
    humans = [m for m in model.calls[0] if isinstance(m, HumanMessage)]
    assert [h.content for h in humans] == [GOAL]  # the model saw the goal once

    third, model = runner(GOAL, "t", 2, tools)
    assert (third.termination_reason, third.finished) == ("completed", True)
    assert third.output == "counted to 5"
    assert ran == Counter({1: 1, 2: 1, 3: 1, 4: 1, 5: 1})  # every call ran once
    assert len(model.calls) == 2

    messages = _state(runner.db, "t", tools)["messages"]
    assert [type(m).__name__ for m in messages] == [
        "HumanMessage", *["AIMessage", "ToolMessage"] * 5, "AIMessage"
    ]  # fmt: skip
    answered = {str(m.tool_call_id) for m in messages if isinstance(m, ToolMessage)}
    calls = [str(c["id"]) for m in messages if isinstance(m, AIMessage) for c in m.tool_calls]
    assert sorted(calls) == sorted(answered) and len(set(calls)) == 5


def test_a_new_goal_on_a_finished_thread_is_a_follow_up_with_a_full_budget(
    runner: Runner, ran: Counter[int], tools: list[Any]
) -> None:
    runner(GOAL, "f", 3, tools)  # steps 1-3, out of steps
    done, _ = runner(GOAL, "f", 3, tools)  # steps 4-5, answer: finished
    assert done.termination_reason == "completed"
    assert _state(runner.db, "f", tools).get("continued_at")  # the continued run's mark

    follow_up, model = runner("and once more", "f", 3, tools)
    assert follow_up.termination_reason == "completed"  # 5 tool results: it answers at once
    assert len(model.calls) == 1
    assert [h.content for h in model.calls[0] if isinstance(h, HumanMessage)] == [
        GOAL,
        "and once more",
    ]
    assert _state(runner.db, "f", tools).get("continued_at") is None  # a new run, new count
    assert ran == Counter({1: 1, 2: 1, 3: 1, 4: 1, 5: 1})


def test_steps_after_a_continuation_are_counted_from_the_new_user_message(
    tmp_path: Path, ran: Counter[int], tools: list[Any]
) -> None:
    """A follow-up after a continued run gets ``max_steps`` calls from its own message (the
    continuation's mark is cleared), not fewer and not more."""
    db = tmp_path / "c.db"
    with SqliteSaver.from_conn_string(str(db)) as saver:

        def policy(messages: list[BaseMessage]) -> Turn:
            n = sum(isinstance(m, ToolMessage) for m in messages)
            return [{"name": "step", "args": {"n": n + 1}}]  # never answers

        agent = ReActAgent(ScriptedChatModel(policy=policy), tools, max_steps=2, checkpointer=saver)
        assert agent.run(GOAL, thread_id="c").termination_reason == "max_steps_reached"
        assert agent.run(GOAL, thread_id="c").total_steps == 2  # continued: 2 more
        # a user message sent some other way (Studio, a parent graph): the mark stays set
        result = agent.graph.invoke(
            {"messages": [HumanMessage("new question")]}, {"configurable": {"thread_id": "c"}}
        )
        assert result["continued_at"] and result["termination_reason"] == "max_steps_reached"
    assert ran == Counter({n: 1 for n in range(1, 7)})  # 2 + 2 + 2 (from the new message)
