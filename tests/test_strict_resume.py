"""LangGraph 1.2.20+ strict resume with the package's graphs (issue 34).

Under strict resume (``config["configurable"][STRICT_RESUME]``, what a server sets for a run
created with ``strict_resume=True``) LangGraph refuses a stale, unknown or ambiguous answer
with ``UnknownInterruptError`` before anything is written. The package's compiled graphs, in
every face (``create_react_agent`` sequential and parallel, ``create_agent``, the agent as a
node of a parent graph), let it through unchanged: the error is LangGraph's, no tool runs (a
ledger counts them) and the thread is as it was (state, pending interrupts, checkpoints).

A late answer on the raw graph in-process (another caller's answer finished the thread) warns
``UnappliedResumeWarning`` (raised as LangGraph's ``UnknownInterruptError`` under strict
resume), instead of returning the finished state with no signal.

Also LangGraph's per-interrupt ids with the package: a tool that calls ``interrupt()`` twice
in one call pauses twice under two ids and two review digests, an answer to the first is
refused for the second (by id under strict resume, by review digest everywhere), and
``get_state().interrupts`` lists only the pauses still waiting after a partial answer (these
two on a SQLite file and on PostgreSQL).
"""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Annotated, Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.errors import UnknownInterruptError
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import Command
from typing_extensions import TypedDict

from dynavec_langgraph import (
    ReActAgent,
    StaleDecisionError,
    create_agent,
    create_react_agent,
    interrupt,
    tool,
)
from dynavec_langgraph._lg_names import STRICT_RESUME
from dynavec_langgraph.interrupt import UnappliedResumeWarning, bind_decision, review_digest
from dynavec_langgraph.testing import ScriptedChatModel

LEDGER: list[str] = []


@pytest.fixture(autouse=True)
def _fresh() -> None:
    LEDGER.clear()


@tool
def pay(to: str) -> str:
    """Pay someone once a person approves."""
    decision = interrupt(f"approve_{to}", {"to": to})
    LEDGER.append(f"pay {to} {decision}")
    return f"paid {to}: {decision}"


@tool
def wire_twice(to: str) -> str:
    """Ask twice, with the same approval point and payload (a two-step sign-off)."""
    first = interrupt("approve_wire", {"to": to})
    LEDGER.append(f"first {first}")
    second = interrupt("approve_wire", {"to": to})
    LEDGER.append(f"second {second}")
    return f"wired {to}: {first}, {second}"


def _two_payments() -> ScriptedChatModel:
    calls = [{"name": "pay", "args": {"to": "a"}}, {"name": "pay", "args": {"to": "b"}}]
    return ScriptedChatModel(turns=[calls, "Done."])


def _cfg(thread_id: str, *, strict: bool = False) -> Any:
    configurable: dict[str, Any] = {"thread_id": thread_id}
    if strict:
        configurable[STRICT_RESUME] = True
    return {"configurable": configurable}


class _Parent(TypedDict):
    messages: Annotated[list[Any], add_messages]


def _react_sequential(saver: InMemorySaver) -> Any:
    return create_react_agent(_two_payments(), [pay], checkpointer=saver)


def _react_parallel(saver: BaseCheckpointSaver[Any]) -> Any:
    return create_react_agent(_two_payments(), [pay], parallel_tool_calls=True, checkpointer=saver)


def _create_agent(saver: InMemorySaver) -> Any:
    return create_agent(_two_payments(), [pay], checkpointer=saver)


def _subgraph(saver: InMemorySaver) -> Any:
    agent = create_react_agent(
        _two_payments(), [pay], parallel_tool_calls=True, checkpointer=True, name="executor"
    )
    parent = StateGraph(_Parent)
    parent.add_node("executor", agent)
    parent.add_edge(START, "executor")
    return parent.compile(checkpointer=saver)


FACES: dict[str, Callable[[InMemorySaver], Any]] = {
    "create_react_agent": _react_sequential,
    "create_react_agent parallel": _react_parallel,
    "create_agent": _create_agent,
    "subgraph node": _subgraph,
}
SEVERAL_PENDING = {"create_react_agent parallel", "subgraph node"}
"""The faces that pause both calls of the turn at once (the others ask one at a time)."""


def _thread(graph: Any, saver: BaseCheckpointSaver[Any], thread_id: str) -> tuple[Any, ...]:
    """What must not change: values, pending interrupts, next, the checkpoints, the ledger."""
    snapshot = graph.get_state(_cfg(thread_id), subgraphs=True)
    checkpoints = [c.config["configurable"]["checkpoint_id"] for c in saver.list(None)]
    return snapshot.values, snapshot.interrupts, snapshot.next, checkpoints, list(LEDGER)


def _refused(graph: Any, saver: InMemorySaver, resume: Any, reason: str) -> UnknownInterruptError:
    before = _thread(graph, saver, "t")
    with pytest.raises(UnknownInterruptError) as caught:
        graph.invoke(Command(resume=resume), _cfg("t", strict=True))
    assert caught.value.reason == reason
    assert _thread(graph, saver, "t") == before
    return caught.value


@pytest.mark.parametrize("face", sorted(FACES))
def test_strict_resume_refuses_unknown_and_stale_answers_and_changes_nothing(face: str) -> None:
    saver = InMemorySaver()
    graph = FACES[face](saver)
    out = graph.invoke({"messages": [HumanMessage("pay a and b")]}, _cfg("t"))
    pending = graph.get_state(_cfg("t")).interrupts
    assert {i.id for i in out["__interrupt__"]} == {i.id for i in pending}
    first = next(i for i in pending if i.value["node_id"] == "approve_a")

    unknown = _refused(graph, saver, {"0" * 32: "approved"}, "not_pending")
    assert unknown.interrupt_ids == ("0" * 32,)
    assert set(unknown.pending_ids) == {i.id for i in pending}
    _refused(graph, saver, {}, "empty_map")
    if face in SEVERAL_PENDING:
        ambiguous = _refused(graph, saver, "approved", "ambiguous")
        assert set(ambiguous.pending_ids) == {i.id for i in pending}

    # the first pause answered (by id, under strict resume: accepted)
    graph.invoke(Command(resume={first.id: "approved"}), _cfg("t", strict=True))
    assert LEDGER == ["pay a approved"]
    left = graph.get_state(_cfg("t")).interrupts
    assert [i.value["node_id"] for i in left] == ["approve_b"] and first.id not in {
        i.id for i in left
    }
    # the same answer again is stale: refused, nothing ran, approve_b still waits
    stale = _refused(graph, saver, {first.id: "approved"}, "not_pending")
    assert stale.interrupt_ids == (first.id,)
    assert stale.pending_ids == (left[0].id,)
    if face in SEVERAL_PENDING:  # a map naming one stale and one pending id: all refused
        _refused(graph, saver, {first.id: "approved", left[0].id: "approved"}, "not_pending")

    final = graph.invoke(Command(resume={left[0].id: "rejected"}), _cfg("t", strict=True))
    assert LEDGER == ["pay a approved", "pay b rejected"]
    assert final["messages"][-1].content == "Done."
    assert graph.get_state(_cfg("t")).interrupts == ()


def test_without_strict_resume_a_stale_answer_is_still_ignored() -> None:
    """LangGraph's default is unchanged by the package: the stale map answers nothing."""
    saver = InMemorySaver()
    graph = _react_sequential(saver)
    graph.invoke({"messages": [HumanMessage("pay a and b")]}, _cfg("t"))
    (first,) = graph.get_state(_cfg("t")).interrupts
    graph.invoke(Command(resume={first.id: "approved"}), _cfg("t"))
    before = _thread(graph, saver, "t")
    out = graph.invoke(Command(resume={first.id: "approved"}), _cfg("t"))
    assert [i.value["node_id"] for i in out["__interrupt__"]] == ["approve_b"]
    assert _thread(graph, saver, "t")[:3] == before[:3] and LEDGER == ["pay a approved"]


# --- two interrupt() calls in one tool call ------------------------------------------------


def _wire_graph(saver: BaseCheckpointSaver[Any]) -> Any:
    model = ScriptedChatModel(turns=[[{"name": "wire_twice", "args": {"to": "Ann"}}], "Done."])
    return create_react_agent(model, [wire_twice], checkpointer=saver)


@contextmanager
def _saver(db: str) -> Iterator[BaseCheckpointSaver[Any]]:
    """LangGraph's saver on ``db`` (the ``db`` fixture: a SQLite file or a fresh PostgreSQL
    database)."""
    if db.startswith("postgres"):
        with PostgresSaver.from_conn_string(db) as postgres:
            postgres.setup()
            yield postgres
    else:
        with SqliteSaver.from_conn_string(db) as sqlite:
            yield sqlite


def test_two_asks_in_one_call_have_their_own_ids_and_digests(db: str) -> None:
    with _saver(db) as saver:
        _two_asks(saver)


def _two_asks(saver: BaseCheckpointSaver[Any]) -> None:
    graph = _wire_graph(saver)
    graph.invoke({"messages": [HumanMessage("wire Ann")]}, _cfg("w"))
    (first,) = graph.get_state(_cfg("w")).interrupts
    graph.invoke(Command(resume={first.id: "approved"}), _cfg("w"))
    (second,) = graph.get_state(_cfg("w")).interrupts
    assert LEDGER == ["first approved"]
    # the same approval point, payload and call: two pauses all the same
    assert first.value["payload"] == second.value["payload"]
    assert first.value["tool_call"] == second.value["tool_call"]
    assert first.id != second.id
    assert review_digest(first) != review_digest(second)

    # the first answer replayed by id: refused under strict resume, nothing ran
    before = _thread(graph, saver, "w")
    with pytest.raises(UnknownInterruptError) as caught:
        graph.invoke(Command(resume={first.id: "approved"}), _cfg("w", strict=True))
    assert caught.value.reason == "not_pending" and caught.value.pending_ids == (second.id,)
    assert _thread(graph, saver, "w") == before

    # the first answer bound to its pause, sent to the second: refused by its digest
    bound = bind_decision("approved", first)
    out = graph.invoke(Command(resume={second.id: bound}), _cfg("w"))
    (again,) = out["__interrupt__"]
    assert "stale decision" in again.value["error"]
    assert review_digest(again) == review_digest(second)  # the same pause, asked again
    assert LEDGER == ["first approved", "first approved"]  # the tool re-ran to its 2nd ask

    # each answer bound to its own pause is accepted
    final = graph.invoke(Command(resume={again.id: bind_decision("approved", again)}), _cfg("w"))
    assert LEDGER[-1] == "second approved"
    assert final["messages"][-1].content == "Done."


def test_a_replayed_first_answer_is_refused_for_the_second_ask_by_the_agent() -> None:
    """``ReActAgent.resume`` refuses it before anything runs (``StaleDecisionError``)."""
    model = ScriptedChatModel(turns=[[{"name": "wire_twice", "args": {"to": "Bo"}}], "Done."])
    agent = ReActAgent(model, [wire_twice], checkpointer=InMemorySaver())
    payload = agent.run("wire Bo", thread_id="r").interrupt_payload
    assert payload is not None
    first = payload["review_digest"]
    bound = bind_decision("approved", first)
    paused = agent.resume(thread_id="r", human_decision=bound)
    assert paused.termination_reason == "interrupted" and paused.interrupt_payload is not None
    second = paused.interrupt_payload["review_digest"]
    assert second != first
    with pytest.raises(StaleDecisionError):
        agent.resume(thread_id="r", human_decision=bound)
    assert LEDGER == ["first approved"]
    final = agent.resume(
        thread_id="r",
        human_decision=bind_decision("approved", second),
    )
    assert final.output == "Done." and LEDGER[-1] == "second approved"


def test_the_first_asks_digest_is_unchanged() -> None:
    """Only the second and later asks of a call hash their position: the digest of a first
    ask (every pause stored before) is the one it always was."""
    from dynavec_langgraph.interrupt import compute_review_digest

    parts: dict[str, Any] = {
        "thread_id": "t",
        "node_id": "approve_wire",
        "tool_call": {"id": "c1", "name": "wire", "args": {"to": "Ann"}},
        "name": "approve_wire",
        "args": {"to": "Ann"},
        "payload": {"to": "Ann"},
    }
    assert compute_review_digest(**parts) == compute_review_digest(**parts, slot=0)
    assert compute_review_digest(**parts) != compute_review_digest(**parts, slot=1)
    assert compute_review_digest(**parts, slot=1) != compute_review_digest(**parts, ask=1)


def test_get_state_lists_only_the_pauses_still_waiting_after_a_partial_answer(db: str) -> None:
    with _saver(db) as saver:
        _partial_answer(saver)


def _partial_answer(saver: BaseCheckpointSaver[Any]) -> None:
    graph = _react_parallel(saver)
    graph.invoke({"messages": [HumanMessage("pay a and b")]}, _cfg("p"))
    pending = graph.get_state(_cfg("p")).interrupts
    assert sorted(i.value["node_id"] for i in pending) == ["approve_a", "approve_b"]
    answered = next(i for i in pending if i.value["node_id"] == "approve_a")
    out = graph.invoke(Command(resume={answered.id: "approved"}), _cfg("p"))
    left = graph.get_state(_cfg("p")).interrupts
    assert [i.value["node_id"] for i in left] == ["approve_b"]
    assert {i.id for i in out["__interrupt__"]} == {i.id for i in left}
    assert answered.id not in {i.id for i in left}
    assert LEDGER == ["pay a approved"]


def test_the_strict_resume_key_is_langgraphs() -> None:
    """``_lg_names.STRICT_RESUME`` is LangGraph's internal key (langgraph 1.2.20+)."""
    from langgraph._internal._constants import CONFIG_KEY_STRICT_RESUME

    assert STRICT_RESUME == CONFIG_KEY_STRICT_RESUME


# --- a late answer on the raw graph ---------------------------------------------------------


def _finished(saver: InMemorySaver) -> tuple[Any, Any]:
    """A thread whose one pause another caller answered: it finished."""
    graph = create_react_agent(
        ScriptedChatModel(turns=[[{"name": "pay", "args": {"to": "a"}}], "Done."]),
        [pay],
        checkpointer=saver,
    )
    graph.invoke({"messages": [HumanMessage("pay a")]}, _cfg("late"))
    (pause,) = graph.get_state(_cfg("late")).interrupts
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnappliedResumeWarning)  # an answer in time: none
        graph.invoke(Command(resume="approved"), _cfg("late"))
    assert LEDGER == ["pay a approved"]
    return graph, pause


@pytest.mark.parametrize("resume", ["plain", "by id"])
@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_a_late_answer_warns_and_applies_nothing(resume: str, use_async: bool) -> None:
    saver = InMemorySaver()
    graph, pause = _finished(saver)
    before = _thread(graph, saver, "late")
    value = "rejected" if resume == "plain" else {pause.id: "rejected"}
    with pytest.warns(UnappliedResumeWarning) as caught:
        if use_async:
            out = asyncio.run(graph.ainvoke(Command(resume=value), _cfg("late")))
        else:
            out = graph.invoke(Command(resume=value), _cfg("late"))
    assert out["messages"][-1].content == "Done."  # LangGraph's answer: the state as it is
    assert _thread(graph, saver, "late") == before and LEDGER == ["pay a approved"]
    [warning] = [w.message for w in caught]
    assert isinstance(warning, UnappliedResumeWarning) and warning.thread_id == "late"
    assert "thread 'late' is not paused" in str(warning) and "was not applied" in str(warning)
    if not use_async:
        assert caught[0].filename == __file__  # it points at the caller's line


def test_a_late_answer_streamed_warns_too() -> None:
    graph, _ = _finished(InMemorySaver())
    with pytest.warns(UnappliedResumeWarning):
        list(graph.stream(Command(resume="rejected"), _cfg("late"), stream_mode="updates"))


def test_an_answer_in_time_builds_no_state_snapshot(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The late-answer check reads the paused thread's checkpoint once and sees its pause;
    LangGraph's whole state snapshot (every task prepared, every channel read: a sixth of a
    resume's CPU) is built only when no pause is there (the late answers above)."""
    with SqliteSaver.from_conn_string(str(tmp_path / "t.db")) as saver:
        graph = create_react_agent(
            ScriptedChatModel(turns=[[{"name": "pay", "args": {"to": "a"}}], "Done."]),
            [pay],
            checkpointer=saver,
        )
        graph.invoke({"messages": [HumanMessage("pay a")]}, _cfg("t"))
        assert graph.get_state(_cfg("t")).interrupts

        def no_snapshot(*args: Any, **kwargs: Any) -> Any:
            raise AssertionError("a resume of a paused thread built a state snapshot")

        monkeypatch.setattr(graph, "get_state", no_snapshot)
        monkeypatch.setattr(graph, "aget_state", no_snapshot)
        with warnings.catch_warnings():
            warnings.simplefilter("error", UnappliedResumeWarning)
            out = graph.invoke(Command(resume="approved"), _cfg("t"))
    assert out["messages"][-1].content == "Done." and LEDGER == ["pay a approved"]


async def test_an_answer_in_time_builds_no_state_snapshot_async(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The same with ``ainvoke`` (the in-memory saver: the sync ``SqliteSaver`` has no
    async methods)."""
    graph = create_react_agent(
        ScriptedChatModel(turns=[[{"name": "pay", "args": {"to": "a"}}], "Done."]),
        [pay],
        checkpointer=InMemorySaver(),
    )
    await graph.ainvoke({"messages": [HumanMessage("pay a")]}, _cfg("t"))

    def no_snapshot(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a resume of a paused thread built a state snapshot")

    monkeypatch.setattr(graph, "get_state", no_snapshot)
    monkeypatch.setattr(graph, "aget_state", no_snapshot)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnappliedResumeWarning)
        out = await graph.ainvoke(Command(resume="approved"), _cfg("t"))
    assert out["messages"][-1].content == "Done." and LEDGER == ["pay a approved"]


class _CountingSaver(InMemorySaver):
    """Counts the reads of a thread's latest checkpoint (``get_tuple`` with no id)."""

    latest = 0

    def get_tuple(self, config: Any) -> Any:
        self.latest += not config["configurable"].get("checkpoint_id")
        return super().get_tuple(config)

    async def aget_tuple(self, config: Any) -> Any:
        return self.get_tuple(config)


@pytest.mark.parametrize("how", ["invoke", "stream", "ainvoke", "astream"])
async def test_a_resume_reads_the_paused_checkpoint_once_before_the_run(how: str) -> None:
    """The late-answer check's read of the paused checkpoint is the run's own first read:
    handed to LangGraph's loop (``HistoryCache.hand_over``), not read again (3 reads before
    the tool ran before the cut, with the claim's); what is handed and not taken is dropped
    when the run ends."""
    saver = _CountingSaver()
    seen: list[int] = []

    @tool
    def approve(to: str) -> str:
        """Pay once approved."""
        seen.append(saver.latest)
        return f"paid {to} {interrupt('approve', {'to': to})}"

    graph = create_react_agent(
        ScriptedChatModel(turns=[[{"name": "approve", "args": {"to": "a"}}], "Done."]),
        [approve],
        checkpointer=saver,
    )
    graph.invoke({"messages": [HumanMessage("pay a")]}, _cfg("t"))
    saver.latest, seen[:] = 0, []
    resume: Command[Any] = Command(resume="approved")
    if how == "invoke":
        out = graph.invoke(resume, _cfg("t"))
    elif how == "stream":
        out = list(graph.stream(resume, _cfg("t"), stream_mode="values"))[-1]
    elif how == "ainvoke":
        out = await graph.ainvoke(resume, _cfg("t"))
    else:
        out = [c async for c in graph.astream(resume, _cfg("t"), stream_mode="values")][-1]
    assert out["messages"][-1].content == "Done."
    assert seen == [2]  # the check's read, which the run took, and the claim's under its lock
    assert graph.checkpointer._handed == {}  # type: ignore[union-attr]


@pytest.mark.parametrize("use_async", [False, True], ids=["resume", "aresume"])
async def test_react_agent_reads_the_paused_checkpoint_once_under_its_lock(use_async: bool) -> None:
    """``ReActAgent.resume`` reads the thread under its lock once for the state snapshot and
    the crash marks together (``read_thread_once``), and that read's checkpoint is not read
    again by the snapshot: 3 reads before the tool runs (the lock's, the graph's check handed
    to the run, the claim's), 5 before."""
    saver = _CountingSaver()
    seen: list[int] = []

    @tool
    def approve(to: str) -> str:
        """Pay once approved."""
        seen.append(saver.latest)
        return f"paid {to} {interrupt('approve', {'to': to})}"

    model = ScriptedChatModel(turns=[[{"name": "approve", "args": {"to": "a"}}], "Done."])
    agent = ReActAgent(model, [approve], checkpointer=saver)
    agent.run("pay a", thread_id="t")
    saver.latest, seen[:] = 0, []
    if use_async:
        result = await agent.aresume(human_decision="approved", thread_id="t")
    else:
        result = agent.resume(human_decision="approved", thread_id="t")
    assert result.output == "Done." and seen == [3]


def test_a_handed_checkpoint_not_taken_is_dropped() -> None:
    """A resume stream stopped before its first chunk, or never started, leaves nothing
    handed over: the next read of the thread reads the saver."""
    saver = _CountingSaver()
    graph = create_react_agent(
        ScriptedChatModel(turns=[[{"name": "pay", "args": {"to": "a"}}], "Done."]),
        [pay],
        checkpointer=saver,
    )
    graph.invoke({"messages": [HumanMessage("pay a")]}, _cfg("t"))
    chunks = graph.stream(Command(resume="approved"), _cfg("t"))
    chunks.close()  # type: ignore[attr-defined]  # never iterated
    assert graph.checkpointer._handed == {}  # type: ignore[union-attr]
    saver.latest = 0
    assert graph.get_state(_cfg("t")).interrupts and saver.latest == 1
    assert LEDGER == []


def test_a_late_answer_under_strict_resume_raises_and_changes_nothing() -> None:
    """A single value too (LangGraph accepts one with nothing pending for a static
    breakpoint; this thread is at none), with LangGraph's error and reason."""
    saver = InMemorySaver()
    graph, pause = _finished(saver)
    before = _thread(graph, saver, "late")
    for value in ("rejected", {pause.id: "rejected"}):
        with pytest.raises(UnknownInterruptError) as caught:
            graph.invoke(Command(resume=value), _cfg("late", strict=True))
        assert caught.value.reason == "not_pending" and caught.value.pending_ids == ()
    assert _thread(graph, saver, "late") == before and LEDGER == ["pay a approved"]


def test_a_resume_that_continues_a_breakpoint_does_not_warn() -> None:
    saver = InMemorySaver()
    graph = create_react_agent(
        ScriptedChatModel(turns=[[{"name": "pay", "args": {"to": "a"}}], "Done."]),
        [pay],
        checkpointer=saver,
        interrupt_before=["tools"],
    )
    graph.invoke({"messages": [HumanMessage("pay a")]}, _cfg("b"))
    assert graph.get_state(_cfg("b")).next == ("tools",)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnappliedResumeWarning)
        out = graph.invoke(Command(resume="go"), _cfg("b", strict=True))
    # LangGraph continues the run; its single value answers the tool's interrupt
    assert LEDGER == ["pay a go"] and out["messages"][-1].content == "Done."
