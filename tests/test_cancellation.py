"""Cancelling ``arun`` / ``aresume`` / ``astream`` / ``astream_resume`` (``task.cancel()``, an
``asyncio.wait_for`` timeout) while a tool runs never leads to a second run of that tool.

A tool call that started runs to its end (a sync tool cannot be stopped in its worker thread;
an async one may have done its side effect before the cancellation point). While it runs the
thread stays held: another caller gets ``ConcurrentResumeError``. When it has ended, its result
is saved to the thread and the cancellation goes on; a retry, here always from a NEW agent
object on the same database (as another process would), continues after the call without
running it again. SQLite files and a PostgreSQL server; sync and async tools.

The tool blocks on an event the test sets only after it checked that the thread is held, so the
cancellation really lands while the tool runs.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Iterator
from typing import Any, Literal

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.runnables import RunnableConfig

from dynavec_langgraph import AgentTool, ConcurrentResumeError, ReActAgent, interrupt, tool
from dynavec_langgraph.records import AgentResult
from dynavec_langgraph.testing import ScriptedChatModel

Entry = Literal["arun", "astream", "aresume", "astream_resume"]
Kind = Literal["sync", "async"]
Cancel = Literal["cancel", "wait_for"]

WAIT = 30.0  # seconds a test waits for the tool (never reached when it works)
TIMEOUT_AFTER = 2.0
"""The ``asyncio.wait_for`` timeout: long enough for the tool to start on a busy machine; it
fires while the tool runs (the tool waits for the test)."""


class Gate:
    """What the tool does, and when it may finish."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.release = threading.Event()
        self.starts = 0
        self.runs: list[Any] = []


GATE = Gate()


@pytest.fixture(autouse=True)
def _gate() -> Iterator[None]:
    global GATE
    GATE = Gate()
    yield
    GATE.release.set()  # never leave a worker thread blocked


def _pausing(pauses: bool) -> Any:
    return interrupt("pay", {"amount": 100}) if pauses else None


@tool
def pay_sync(pauses: bool = False) -> str:
    """Pay 100 (a sync tool: it runs in a worker thread under arun)."""
    decision = _pausing(pauses)
    GATE.starts += 1
    GATE.started.set()
    assert GATE.release.wait(WAIT)
    GATE.runs.append(decision)
    return "paid 100"


@tool
async def pay_async(pauses: bool = False) -> str:
    """Pay 100 (an async tool)."""
    decision = _pausing(pauses)
    GATE.starts += 1
    GATE.started.set()
    for _ in range(int(WAIT * 100)):
        if GATE.release.is_set():
            break
        await asyncio.sleep(0.01)
    GATE.runs.append(decision)
    return "paid 100"


TOOLS: dict[Kind, AgentTool] = {"sync": pay_sync, "async": pay_async}


def _agent(url: str, kind: Kind, pauses: bool) -> ReActAgent:
    name = TOOLS[kind].name
    call = AIMessage(
        content="", tool_calls=[{"name": name, "args": {"pauses": pauses}, "id": "call_pay"}]
    )
    model = ScriptedChatModel(turns=[call, "Paid."])
    return ReActAgent(model, [TOOLS[kind]], checkpointer=url)


def _after_call(url: str, kind: Kind) -> ReActAgent:
    """A new agent object whose model answers once the tool's result is in."""
    return ReActAgent(ScriptedChatModel(turns=["Paid."]), [TOOLS[kind]], checkpointer=url)


async def _drain(events: AsyncIterator[Any]) -> None:
    async for _ in events:
        pass


def _call(agent: ReActAgent, entry: Entry) -> Any:
    if entry == "arun":
        return agent.arun("pay the rent", thread_id="t")
    if entry == "astream":
        return _drain(agent.astream("pay the rent", thread_id="t"))
    if entry == "aresume":
        return agent.aresume(human_decision="approved", thread_id="t")
    return _drain(agent.astream_resume(human_decision="approved", thread_id="t"))


def _url(db: str) -> str:
    return db if db.startswith("postgresql://") else f"sqlite:///{db}"


async def _wait_started() -> None:
    for _ in range(int(WAIT * 100)):
        if GATE.started.is_set():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the tool never started")


def _tool_messages(agent: ReActAgent) -> list[ToolMessage]:
    values = agent.graph.get_state({"configurable": {"thread_id": "t"}}).values
    return [m for m in values["messages"] if isinstance(m, ToolMessage)]


# wait_for waits out its TIMEOUT_AFTER: `slow`, left out of `make test-fast` (run by `make test`)
@pytest.mark.parametrize("cancel", ["cancel", pytest.param("wait_for", marks=pytest.mark.slow)])
@pytest.mark.parametrize("kind", ["sync", "async"])
@pytest.mark.parametrize("entry", ["arun", "astream", "aresume", "astream_resume"])
async def test_a_cancelled_call_never_runs_its_tool_twice(
    db: str, entry: Entry, kind: Kind, cancel: Cancel
) -> None:
    url = _url(db)
    resumes = entry in ("aresume", "astream_resume")
    agent = _agent(url, kind, pauses=resumes)
    if resumes:
        paused = await agent.arun("pay the rent", thread_id="t")
        assert paused.termination_reason == "interrupted"
        assert GATE.starts == 0

    loop = asyncio.get_running_loop()
    deadline = loop.time() + TIMEOUT_AFTER
    if cancel == "cancel":
        task: asyncio.Future[Any] = asyncio.ensure_future(_call(agent, entry))
    else:
        task = asyncio.ensure_future(asyncio.wait_for(_call(agent, entry), TIMEOUT_AFTER))
    await _wait_started()
    if cancel == "cancel":
        task.cancel()
    else:
        assert loop.time() < deadline, "the tool started after the timeout (machine too busy)"
        await asyncio.sleep(deadline - loop.time())  # wait_for's timeout fires in the tool
    await asyncio.sleep(0.2)

    # the tool still runs: the cancelled call still holds the thread
    assert not task.done()
    other = _after_call(url, kind)
    with pytest.raises(ConcurrentResumeError):
        await other.arun("pay the rent", thread_id="t")
    with pytest.raises(ConcurrentResumeError):
        await other.aresume(human_decision="approved", thread_id="t")

    GATE.release.set()
    expected = asyncio.CancelledError if cancel == "cancel" else TimeoutError
    with pytest.raises(expected):
        await task
    assert GATE.runs == (["approved"] if resumes else [None])

    # the retry, from a new agent object: the call's result was saved, it does not run again
    retry = _after_call(url, kind)
    result: AgentResult
    if resumes:
        result = await retry.aresume(human_decision="approved", thread_id="t")
    else:
        result = await retry.arun("pay the rent", thread_id="t")
    assert result.termination_reason == "completed"
    assert result.output == "Paid."
    assert GATE.starts == 1
    assert GATE.runs == (["approved"] if resumes else [None])
    assert [m.content for m in _tool_messages(retry)] == ["paid 100"]


@pytest.mark.parametrize("kind", ["sync", "async"])
async def test_the_same_agent_object_retries_without_running_the_tool_again(
    tmp_path: Any, kind: Kind
) -> None:
    """The cancelled agent object itself, retried: the same outcome."""
    url = f"sqlite:///{tmp_path / 'agent.db'}"
    name = TOOLS[kind].name
    call = AIMessage(content="", tool_calls=[{"name": name, "args": {}, "id": "call_pay"}])
    agent = ReActAgent(ScriptedChatModel(turns=[call, "Paid."]), [TOOLS[kind]], checkpointer=url)
    task = asyncio.ensure_future(agent.arun("pay the rent", thread_id="t"))
    await _wait_started()
    task.cancel()
    await asyncio.sleep(0.1)
    assert not task.done()
    threading.Timer(0.2, GATE.release.set).start()
    with pytest.raises(asyncio.CancelledError):
        await task
    result = await agent.arun("pay the rent", thread_id="t")
    assert (result.output, GATE.starts, len(GATE.runs)) == ("Paid.", 1, 1)


async def test_cancelling_twice_still_waits_for_the_tool(tmp_path: Any) -> None:
    """A second cancellation while the tool runs does not let go of the thread either."""
    url = f"sqlite:///{tmp_path / 'agent.db'}"
    agent = _agent(url, "sync", pauses=False)
    task = asyncio.ensure_future(agent.arun("pay the rent", thread_id="t"))
    await _wait_started()
    task.cancel()
    await asyncio.sleep(0.05)
    task.cancel()
    await asyncio.sleep(0.05)
    assert not task.done()
    with pytest.raises(ConcurrentResumeError):
        await _after_call(url, "sync").arun("pay the rent", thread_id="t")
    GATE.release.set()
    with pytest.raises(asyncio.CancelledError):
        await task
    result = await _after_call(url, "sync").arun("pay the rent", thread_id="t")
    assert (result.output, GATE.starts) == ("Paid.", 1)


async def test_the_raw_graph_waits_for_a_started_tool_when_cancelled(tmp_path: Any) -> None:
    """The graph's own tool node: ``ainvoke`` cancelled mid-tool returns only once the tool
    ended (it never leaves a tool running behind a finished call)."""
    agent = _agent(f"sqlite:///{tmp_path / 'agent.db'}", "sync", pauses=False)
    config: RunnableConfig = {"configurable": {"thread_id": "raw"}}
    task = asyncio.ensure_future(
        agent.graph.ainvoke({"messages": [("user", "pay the rent")]}, config)
    )
    await _wait_started()
    task.cancel()
    await asyncio.sleep(0.2)
    assert not task.done()
    GATE.release.set()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert GATE.runs == [None]
