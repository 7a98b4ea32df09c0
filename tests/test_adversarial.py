"""Nothing runs twice, nothing is dropped: the cases an adversarial pass found (issue 14).

Each case ran something twice or dropped something silently before it was fixed; counters
prove what ran how often, on SQLite files and PostgreSQL where storage is involved. The
tool-call id cases (none, empty, duplicate ids) are in ``tests/test_tool_call_ids.py``.
"""

from __future__ import annotations

import asyncio
import threading
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import BaseMessage, HumanMessage

from dynavec_langgraph import (
    ConcurrentResumeError,
    NothingToResumeError,
    ReActAgent,
    ThreadPausedError,
    interrupt,
    tool,
)
from dynavec_langgraph.testing import ScriptedChatModel, Turn

TIMEOUT = 60.0
RUNS: Counter[str] = Counter()


@pytest.fixture(autouse=True)
def _reset() -> None:
    RUNS.clear()


def url(db: str) -> str:
    """``checkpointer=`` for a SQLite path or a PostgreSQL URI (a saver of its own each time)."""
    return db if db.startswith("postgresql://") else f"sqlite:///{db}"


def charge_policy(messages: list[BaseMessage]) -> Turn:
    if isinstance(messages[-1], HumanMessage):
        return [{"name": "charge", "args": {"amount": 5}}]
    return "charged"


class SlowCharge:
    """A ``charge`` tool that waits inside the tool until the test lets it finish."""

    def __init__(self) -> None:
        self.inside = threading.Event()
        self.release = threading.Event()

        @tool
        def charge(amount: int) -> str:
            """Charge the card."""
            RUNS["charge"] += 1
            self.inside.set()
            assert self.release.wait(TIMEOUT)
            return f"charged {amount}"

        self.tool = charge


def _second_caller(agent: ReActAgent, entry: str) -> Callable[[], Any]:
    calls: dict[str, Callable[[], Any]] = {
        "resume": lambda: agent.resume(thread_id="t", human_decision="approved"),
        "aresume": lambda: asyncio.run(agent.aresume(thread_id="t", human_decision="approved")),
        "stream_resume": lambda: list(agent.stream_resume(thread_id="t", human_decision="ok")),
        "run": lambda: agent.run("pay again", thread_id="t"),
        "arun": lambda: asyncio.run(agent.arun("pay again", thread_id="t")),
        "stream": lambda: list(agent.stream("pay again", thread_id="t")),
    }
    return calls[entry]


@pytest.mark.parametrize("entry", ["resume", "aresume", "stream_resume", "run", "arun", "stream"])
def test_a_thread_inside_a_tool_cannot_be_advanced_by_another_caller(db: str, entry: str) -> None:
    """Case 3: ``resume()`` while ``run()`` of the same thread is inside a tool charged the
    card twice. Every entry point holds the thread's lock; the second caller is refused and
    nothing of it runs."""
    slow = SlowCharge()
    first = ReActAgent(ScriptedChatModel(policy=charge_policy), [slow.tool], checkpointer=url(db))
    second = ReActAgent(ScriptedChatModel(policy=charge_policy), [slow.tool], checkpointer=url(db))
    results: list[Any] = []
    runner = threading.Thread(target=lambda: results.append(first.run("pay", thread_id="t")))
    runner.start()
    try:
        assert slow.inside.wait(TIMEOUT)
        with pytest.raises(ConcurrentResumeError, match="running or resuming thread 't'"):
            _second_caller(second, entry)()
    finally:
        slow.release.set()
        runner.join(TIMEOUT)
    assert results[0].termination_reason == "completed"
    assert RUNS == {"charge": 1}
    # once the run is over: a resume of the finished thread is refused, nothing runs
    with pytest.raises(NothingToResumeError):
        second.resume(thread_id="t", human_decision="approved")
    assert RUNS == {"charge": 1}
    first.close()
    second.close()


def test_run_on_a_paused_thread_is_refused_under_the_lock(tmp_path: Path) -> None:
    @tool
    def approve(amount: int) -> str:
        """Ask first."""
        RUNS["asked"] += 1
        return str(interrupt("approve", {"amount": amount}))

    def policy(messages: list[BaseMessage]) -> Turn:
        if isinstance(messages[-1], HumanMessage):
            return [{"name": "approve", "args": {"amount": 1}}]
        return "ok"

    agent = ReActAgent(
        ScriptedChatModel(policy=policy), [approve], checkpointer=f"sqlite:///{tmp_path}/p.db"
    )
    assert agent.run("go", thread_id="t").termination_reason == "interrupted"
    with pytest.raises(ThreadPausedError):
        agent.run("again", thread_id="t")
    assert agent.resume(thread_id="t", human_decision="yes").output == "ok"
    assert RUNS == {"asked": 2}  # the pause, then the re-run with the decision
    agent.close()
