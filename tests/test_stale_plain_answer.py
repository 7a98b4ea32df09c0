"""A decision given without an interrupt id (``Command(resume=value)``) answers one pause.

LangGraph (1.2.24) keeps such a decision on the checkpoint it resumed until that graph's step
ends and hands it to the next pause no answer addresses, in whichever later run asks it: a
third pause of a call whose first was answered plainly and second by id, or the approval asked
again after a crash (the run that took the plain answer died). The package's pauses do not take
it in a run given its decisions by interrupt id, which is how every door of the package answers
(``_graph.run_data.drop_left_over_answer``): the pause is asked, nothing runs unanswered.

Real parts: a SQLite file and the PostgreSQL server the tests start; the crash cases in a
child process SIGKILLed while the approved ``pay`` ran, the fake payment service in its own
process, ``inbox answer`` in its own process.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.config import get_config
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import Command
from langgraph.types import interrupt as lg_interrupt
from typing_extensions import TypedDict

from dynavec_langgraph import create_react_agent, interrupt, tool
from dynavec_langgraph._lg_names import RESUME_MAP, SCRATCHPAD
from dynavec_langgraph.testing import ScriptedChatModel
from tests.children.scenario import open_saver
from tests.payment_service import PaymentService
from tests.test_in_doubt_doors import CHILD, _cli, _env, service
from tests.test_in_doubt_doors import _approved_and_killed as _top_approved_and_killed
from tests.test_in_doubt_nested import _approved_and_killed as _nested_approved_and_killed
from tests.test_in_doubt_nested import _requests, _stored

__all__ = ["service"]  # the payment service's fixture, shared with tests/test_in_doubt_doors.py

CONFIG: RunnableConfig = {"configurable": {"thread_id": "t1"}}


class Log(TypedDict, total=False):
    log: list[str]


# --- LangGraph's own behaviour, and the internals the package reads -----------------------


def test_langgraph_hands_a_kept_plain_answer_to_a_later_pause_and_says_a_run_is_resumed_by_id() -> (
    None
):
    """The behaviour the package guards against, on LangGraph alone: ``c`` is given ``"x"``,
    the plain answer to ``a``, in the run that answered ``b`` by id. And what the package reads
    to tell such a run: the run config's resume map (``RESUME_MAP``) in that run, and the
    scratchpad's ``get_null_resume`` (``SCRATCHPAD``) still holding the kept answer."""
    seen: list[tuple[bool, object]] = []

    def node(state: Log) -> Log:
        out = []
        for name in "abc":
            conf = get_config()["configurable"]
            seen.append((bool(conf.get(RESUME_MAP)), conf[SCRATCHPAD].get_null_resume(False)))
            out.append(f"{name}={lg_interrupt(name)}")
        return {"log": out}

    builder = StateGraph(Log)
    builder.add_node("n", node)
    builder.add_edge(START, "n")
    builder.add_edge("n", END)
    graph = builder.compile(checkpointer=InMemorySaver())
    graph.invoke({"log": []}, CONFIG)
    second = graph.invoke(Command(resume="x"), CONFIG)["__interrupt__"][0]
    seen.clear()
    done = graph.invoke(Command(resume={second.id: "y"}), CONFIG)
    assert done["log"] == ["a=x", "b=y", "c=x"]  # LangGraph alone: c took a's answer
    assert seen[0] == (True, "x")  # resumed by id, the plain answer still kept


# --- in process: three pauses in one call --------------------------------------------------


@pytest.fixture
def saver(db: str) -> Iterator[BaseCheckpointSaver[Any]]:
    with open_saver(db) as opened:
        yield opened


def _three_asks(decisions: list[object]) -> Any:
    @tool
    def transfer(amount: int) -> str:
        """Transfer money once three people said yes."""
        decisions.clear()  # the call runs again on every resume: keep the last run's answers
        for node_id in ("first", "second", "third"):
            decisions.append(interrupt(node_id, {"amount": amount}))
        return f"sent {amount}"

    return transfer


def _graph(shape: str, decisions: list[object], saver: BaseCheckpointSaver[Any]) -> Any:
    model = ScriptedChatModel(turns=[[{"name": "transfer", "args": {"amount": 5}}], "Done."])
    if shape == "top":
        return create_react_agent(model, [_three_asks(decisions)], checkpointer=saver)
    parent = StateGraph(MessagesState)
    parent.add_node("payments", create_react_agent(model, [_three_asks(decisions)]))
    parent.add_edge(START, "payments")
    return parent.compile(checkpointer=saver)


def _paused(out: dict[str, Any]) -> list[str]:
    return [i.value["node_id"] for i in out.get("__interrupt__", [])]


async def _walk(graph: Any, decisions: list[object], use_async: bool) -> None:
    async def run(graph_input: Any) -> dict[str, Any]:
        if use_async:
            out: dict[str, Any] = await graph.ainvoke(graph_input, CONFIG)
            return out
        return dict(graph.invoke(graph_input, CONFIG))

    assert _paused(await run({"messages": [("user", "send 5")]})) == ["first"]
    out = await run(Command(resume="yes from Ann"))
    assert _paused(out) == ["second"]
    out = await run(Command(resume={out["__interrupt__"][0].id: "yes from Bo"}))
    assert _paused(out) == ["third"], out.get("messages")
    assert decisions == ["yes from Ann", "yes from Bo"]
    out = await run(Command(resume={out["__interrupt__"][0].id: "yes from Cy"}))
    assert _paused(out) == [] and out["messages"][-2].content == "sent 5"
    assert decisions == ["yes from Ann", "yes from Bo", "yes from Cy"]


@pytest.mark.parametrize("shape", ["top", "nested"])
def test_a_plain_answer_answers_one_pause_then_a_run_resumed_by_id_asks_the_next(
    saver: BaseCheckpointSaver[Any], shape: str
) -> None:
    """``first`` answered plainly, ``second`` by id: ``third`` is asked (before the fix it
    took ``first``'s answer and the transfer ran); answered by id, the call has the three
    answers each pause was given."""
    decisions: list[object] = []
    asyncio.run(_walk(_graph(shape, decisions, saver), decisions, use_async=False))


@pytest.mark.parametrize("shape", ["top", "nested"])
def test_the_async_tool_node_asks_the_next_pause_too(db: str, shape: str) -> None:
    """The same through ``ainvoke`` (the async tool node) on LangGraph's async savers."""

    async def walk() -> None:
        decisions: list[object] = []
        if db.startswith("postgresql://"):
            async with AsyncPostgresSaver.from_conn_string(db) as saver:
                await saver.setup()
                await _walk(_graph(shape, decisions, saver), decisions, use_async=True)
        else:
            async with AsyncSqliteSaver.from_conn_string(db) as lite:
                await _walk(_graph(shape, decisions, lite), decisions, use_async=True)

    asyncio.run(walk())


@pytest.mark.parametrize("shape", ["top", "nested"])
def test_plain_answers_still_answer_the_next_pause_each(
    saver: BaseCheckpointSaver[Any], shape: str
) -> None:
    """A run resumed plainly is unchanged: each plain answer answers the next pause."""
    decisions: list[object] = []
    graph = _graph(shape, decisions, saver)
    graph.invoke({"messages": [("user", "send 5")]}, CONFIG)
    for answer, pending in (("a", ["second"]), ("b", ["third"]), ("c", [])):
        assert _paused(graph.invoke(Command(resume=answer), CONFIG)) == pending
    assert decisions == ["a", "b", "c"]


# --- a crash behind an approval answered plainly, then the in-doubt question by id --------


@pytest.mark.parametrize("shape", ["approval", "nested"])
@pytest.mark.service  # child processes and the payment service
def test_after_a_crash_the_plain_approval_kept_does_not_answer_the_approval_asked_again(
    db: str, service: PaymentService, tmp_path: Path, shape: str
) -> None:
    """The approval answered with a plain ``Command(resume="approved")`` in a process killed
    while the approved ``pay`` ran (the agent alone, or nested in a parent graph). ``inbox
    answer --node in_doubt_pay`` approves running it again: the approval is asked again, as
    when the approval was answered by id (before the fix the kept ``"approved"`` answered it
    and ``pay`` ran again at once); approved, ``pay`` runs under its key: one charge."""
    if shape == "nested":
        key = _nested_approved_and_killed(db, service, tmp_path, "resume")
    else:
        key = _top_approved_and_killed(db, service, tmp_path, "raw")
    env = _env(service, tmp_path)
    where = ("--db", db, "--graph", f"{CHILD}:graph_{shape}")

    decided = ("--node", "in_doubt_pay", "--decision", json.dumps({"type": "approve"}))
    again = _cli(env, "answer", *where, "--thread", "t1", *decided)
    assert again.returncode == 0, (again.stdout, again.stderr)
    assert _requests(service) == [key]  # nothing ran: the approval is asked
    [row] = json.loads(_cli(env, "list", *where, "--json").stdout)
    assert row["node_id"] == "approve_pay"
    if shape == "nested":
        assert _stored(db) == ["approve_pay"]

    done = _cli(env, "answer", *where, "--thread", "t1", "--approve")
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert "replayed=True" in done.stdout
    assert _requests(service) == [key, key] and len(service.stats()["charges"]) == 1
