"""Nothing runs twice, nothing is dropped: the cases an adversarial pass found (issue 14).

Each case ran something twice or dropped something silently before it was fixed; counters
prove what ran how often, on SQLite files and PostgreSQL where storage is involved. The
tool-call id cases (none, empty, duplicate ids) are in ``tests/test_tool_call_ids.py``.
"""

from __future__ import annotations

import asyncio
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import BaseMessage, HumanMessage

from dynavec_langgraph import (
    CheckpointerConfigError,
    ConcurrentResumeError,
    InvalidDecisionError,
    NothingToResumeError,
    ReActAgent,
    StorageError,
    ThreadPausedError,
    interrupt,
    tool,
)
from dynavec_langgraph.testing import ScriptedChatModel, Turn
from tests.pg import PostgresServer

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


# --- case 4: a decision that cannot be stored; storage failing around the approved tool -----


class Opaque:
    """No saver can store this."""


def send_policy(messages: list[BaseMessage]) -> Turn:
    if isinstance(messages[-1], HumanMessage):
        return [{"name": "send", "args": {"amount": 120}}]
    return f"finished: {messages[-1].content}"


def make_send(on_run: Callable[[], None] | None = None) -> Any:
    @tool
    def send(amount: int) -> str:
        """Send money once approved."""
        decision = interrupt("approve_send", {"amount": amount})
        RUNS[f"sent {decision!r}"] += 1
        if on_run is not None:
            on_run()
        return f"sent {amount}"

    return send


def paused_agent(checkpointer: Any, on_run: Callable[[], None] | None = None) -> ReActAgent:
    agent = ReActAgent(
        ScriptedChatModel(policy=send_policy), [make_send(on_run)], checkpointer=checkpointer
    )
    assert agent.run("pay", thread_id="t").termination_reason == "interrupted"
    return agent


@pytest.mark.parametrize("decision", [Opaque(), {"nested": Opaque()}, [lambda: 1]])
def test_a_decision_the_saver_cannot_store_is_refused_before_anything_runs(
    db: str, decision: Any
) -> None:
    agent = paused_agent(url(db))
    with pytest.raises(InvalidDecisionError, match="cannot be stored by the checkpointer"):
        agent.resume(thread_id="t", human_decision=decision)
    with pytest.raises(InvalidDecisionError, match="cannot be stored"):
        agent.resume(thread_id="t", decisions={"approve_send": decision})
    assert RUNS == {}
    assert agent.graph.get_state(cfg()).interrupts  # still paused
    assert agent.resume(thread_id="t", human_decision="approved").output == "finished: sent 120"
    assert RUNS == {"sent 'approved'": 1}
    agent.close()


def test_a_deeply_nested_decision_is_refused_with_a_clear_error(tmp_path: Path) -> None:
    deep: Any = "x"
    for _ in range(100_000):
        deep = [deep]
    agent = paused_agent(f"sqlite:///{tmp_path}/d.db")
    with pytest.raises(InvalidDecisionError, match="nested too deeply"):
        agent.resume(thread_id="t", human_decision=deep)
    assert RUNS == {}
    agent.close()


def cfg(thread: str = "t") -> Any:
    return {"configurable": {"thread_id": thread}}


class Immutable:
    """``chattr +i``: even root cannot write the path (tests run as root in CI)."""

    def __init__(self) -> None:
        self.paths: list[Path] = []

    def set(self, path: Path) -> None:
        subprocess.run(["chattr", "+i", str(path)], check=True)
        self.paths.append(path)

    def clear(self) -> None:
        while self.paths:
            subprocess.run(["chattr", "-i", str(self.paths.pop())], check=True)


@pytest.fixture
def immutable() -> Iterator[Immutable]:
    handle = Immutable()
    try:
        yield handle
    finally:
        handle.clear()


@pytest.mark.parametrize("what", ["file", "folder"])
def test_a_sqlite_file_turned_read_only_is_refused_before_the_tool_runs(
    tmp_path: Path, immutable: Immutable, what: str
) -> None:
    folder = tmp_path / "data"
    folder.mkdir()
    db = folder / "bank.db"
    agent = paused_agent(f"sqlite:///{db}")
    immutable.set(db if what == "file" else folder)
    with pytest.raises(StorageError, match=rf"SQLite {what} .* is read-only.*nothing ran"):
        agent.resume(thread_id="t", human_decision="approved")
    assert RUNS == {}
    # a new agent on it is refused when it is built, with the same reason
    with pytest.raises(CheckpointerConfigError, match="read-only"):
        ReActAgent(ScriptedChatModel(policy=send_policy), [], checkpointer=f"sqlite:///{db}")
    immutable.clear()
    assert agent.resume(thread_id="t", human_decision="approved").output == "finished: sent 120"
    assert RUNS == {"sent 'approved'": 1}
    agent.close()


def test_postgres_stopped_while_the_tool_runs_then_back(tmp_path: Path) -> None:
    """The write after the approved tool fails: the error says which call ran with which
    decision, and the retry on the same agent does not send the money again."""
    server = PostgresServer().start()
    try:
        uri = server.create_database()
        agent = paused_agent(uri, on_run=server.shutdown)
        started = time.monotonic()
        with pytest.raises(StorageError) as failure:
            agent.resume(thread_id="t", human_decision="approved")
        assert time.monotonic() - started < 30  # fails fast, no 30 s pool wait
        message = str(failure.value)
        assert message.startswith("PostgreSQL at postgresql://")
        assert "send({'amount': 120})" in message and "decision 'approved'" in message
        # while it is down: one clear error, fast; the call is not run again
        started = time.monotonic()
        with pytest.raises(StorageError, match=r"PoolTimeout.*send\(\{'amount': 120\}\)"):
            agent.resume(thread_id="t", human_decision="approved")
        assert time.monotonic() - started < 15
        assert RUNS == {"sent 'approved'": 1}
        server.restart()
        # back: the same agent reconnects by itself and does not send the money again
        done = agent.resume(thread_id="t", human_decision="approved")
        assert done.output == "finished: sent 120"
        assert RUNS == {"sent 'approved'": 1}
        agent.close()
    finally:
        server.stop()
