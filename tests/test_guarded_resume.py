"""One guarded resume (``dynavec_langgraph._resuming``) for ``ReActAgent``, the inbox and the CLI.

The same case gives the same error, with the same message, through every entry point:
``ReActAgent.resume`` (and ``aresume``), ``inbox.resume_graph`` and ``dynavec-langgraph inbox
answer`` (which prints it, exit code 2). Nothing runs for a refused answer: the ledger of the
tools stays as it was and the thread keeps its checkpoint. docs/compatibility.md I4.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.sqlite import SqliteSaver

from dynavec_langgraph import (
    ConcurrentResumeError,
    DynavecError,
    InvalidDecisionError,
    NothingToResumeError,
    ReActAgent,
    tool,
)
from dynavec_langgraph._approvals.inbox import graph_on, resume_graph
from dynavec_langgraph._cli import main as cli_main
from dynavec_langgraph._persistence.locks import resume_lock
from dynavec_langgraph.demo import LEDGER_ENV
from dynavec_langgraph.testing import ScriptedChatModel
from tests import inbox_graph

GRAPH = "tests.inbox_graph:graph"
PARALLEL = "tests.inbox_graph:parallel_graph"


def _cfg(thread_id: str) -> Any:
    return {"configurable": {"thread_id": thread_id}}


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(LEDGER_ENV, str(tmp_path / "ledger.jsonl"))
    return tmp_path / "g.db"


def _ledger(db: Path) -> list[tuple[str, str]]:
    path = db.parent / "ledger.jsonl"
    if not path.exists():
        return []
    return [(e["tool"], e["to"]) for e in map(json.loads, path.read_text().splitlines())]


def _start(db: Path, thread_id: str, message: str, *, parallel: bool = False) -> None:
    graph = inbox_graph.parallel_graph if parallel else inbox_graph.graph
    with SqliteSaver.from_conn_string(str(db)) as saver:
        graph.copy(update={"checkpointer": saver}).invoke(
            {"messages": [HumanMessage(message)]}, _cfg(thread_id)
        )


def _head(db: Path, thread_id: str) -> str | None:
    with SqliteSaver.from_conn_string(str(db)) as saver:
        found = saver.get_tuple(_cfg(thread_id))
    return None if found is None else str(found.config["configurable"]["checkpoint_id"])


def _agent(saver: SqliteSaver, *, parallel: bool = False, tools: list[Any] | None = None) -> Any:
    return ReActAgent(
        ScriptedChatModel(policy=inbox_graph.policy),
        tools if tools is not None else [inbox_graph.lookup, inbox_graph.wire],
        checkpointer=saver,
        parallel_tool_calls=parallel,
    )


Entry = Callable[[Path, str, Any, "str | None", bool], Any]


def _via_agent(db: Path, thread_id: str, decision: Any, node: str | None, parallel: bool) -> Any:
    with SqliteSaver.from_conn_string(str(db)) as saver:
        agent = _agent(saver, parallel=parallel)
        if node is not None:
            return agent.resume(thread_id=thread_id, decisions={node: decision})
        return agent.resume(thread_id=thread_id, human_decision=decision)


def _via_agent_async(
    db: Path, thread_id: str, decision: Any, node: str | None, parallel: bool
) -> Any:
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    async def go() -> Any:
        async with AsyncSqliteSaver.from_conn_string(str(db)) as saver:
            agent = _agent(saver, parallel=parallel)  # type: ignore[arg-type]
            if node is not None:
                return await agent.aresume(thread_id=thread_id, decisions={node: decision})
            return await agent.aresume(thread_id=thread_id, human_decision=decision)

    return asyncio.run(go())


def _via_inbox(db: Path, thread_id: str, decision: Any, node: str | None, parallel: bool) -> Any:
    graph = inbox_graph.parallel_graph if parallel else inbox_graph.graph
    with SqliteSaver.from_conn_string(str(db)) as saver:
        return resume_graph(graph_on(graph, saver), saver, thread_id, decision, node)


def _via_cli(db: Path, thread_id: str, decision: Any, node: str | None, parallel: bool) -> Any:
    args = ["inbox", "answer", "--db", str(db), "--thread", thread_id]
    args += ["--graph", PARALLEL if parallel else GRAPH, "--decision", json.dumps(decision)]
    if node is not None:
        args += ["--node", node]
    return cli_main(args)


ENTRIES: dict[str, Entry] = {
    "ReActAgent.resume": _via_agent,
    "ReActAgent.aresume": _via_agent_async,
    "inbox.resume_graph": _via_inbox,
    "cli inbox answer": _via_cli,
}


def _refused(
    entry: str,
    capsys: pytest.CaptureFixture[str],
    call: Callable[[], Any],
) -> tuple[type[BaseException], str]:
    """The error type and message an entry point gives (the CLI's printed message)."""
    capsys.readouterr()
    if entry == "cli inbox answer":
        assert call() == 2
        err = capsys.readouterr().err
        first = err.splitlines()[0]
        assert first.startswith("dynavec-langgraph: error: "), err
        return DynavecError, first.removeprefix("dynavec-langgraph: error: ")
    with pytest.raises(DynavecError) as caught:
        call()
    return type(caught.value), str(caught.value)


CASES: dict[str, tuple[type[DynavecError], str]] = {
    "unknown thread": (NothingToResumeError, "unknown thread 'ghost': nothing to resume"),
    "not paused": (NothingToResumeError, "thread 'done' is not paused: nothing to resume"),
    "several pending, one decision": (InvalidDecisionError, "2 decisions are pending ("),
    "node not pending": (InvalidDecisionError, "'approve_nothing' is not pending"),
    "node pending twice": (InvalidDecisionError, "node id 'approve_wire' is pending 2 times"),
    "lock held": (ConcurrentResumeError, "another caller is running or resuming thread 'p'"),
}


@pytest.fixture
def threads(db: Path) -> Path:
    _start(db, "p", "wire 5 to Ann")  # paused at approve_wire
    _start(db, "two", "wire 5 to Ann and 7 to Bo", parallel=True)  # two pending
    _start(db, "done", "wire 1 to Cy")
    assert _via_inbox(db, "done", "approved", None, False).interrupts == ()
    return db


def _case(name: str) -> tuple[str, Any, str | None, bool]:
    """thread, decision, node, parallel graph."""
    return {
        "unknown thread": ("ghost", "approved", None, False),
        "not paused": ("done", "approved", None, False),
        "several pending, one decision": ("two", "approved", None, True),
        "node not pending": ("two", "approved", "approve_nothing", True),
        "node pending twice": ("two", "approved", "approve_wire", True),
        "lock held": ("p", "approved", None, False),
    }[name]


@pytest.mark.parametrize("entry", sorted(ENTRIES))
@pytest.mark.parametrize("case", sorted(CASES))
def test_every_entry_point_refuses_the_same_case_with_the_same_error(
    threads: Path, capsys: pytest.CaptureFixture[str], entry: str, case: str
) -> None:
    db = threads
    thread_id, decision, node, parallel = _case(case)
    ledger, head = _ledger(db), _head(db, thread_id)
    expected_type, expected_text = CASES[case]

    def call() -> Any:
        return ENTRIES[entry](db, thread_id, decision, node, parallel)

    if case == "lock held":
        with SqliteSaver.from_conn_string(str(db)) as holder, resume_lock(holder, thread_id):
            kind, message = _refused(entry, capsys, call)
    else:
        kind, message = _refused(entry, capsys, call)

    assert issubclass(kind, expected_type if entry != "cli inbox answer" else DynavecError)
    assert expected_text in message
    assert (_ledger(db), _head(db, thread_id)) == (ledger, head)  # nothing ran, nothing written


def test_the_messages_are_identical_across_entry_points(
    threads: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Word for word, except the how-to that names the caller's own API: how to answer
    several pauses (``decisions=`` in Python, ``--node`` in the inbox) and how to continue a
    finished thread (``run()`` in Python; the CLI's hint line names its command)."""
    for case in CASES:
        thread_id = _case(case)[0]
        seen: dict[str, str] = {}
        for entry, call in ENTRIES.items():

            def run(
                call: Entry = call, args: tuple[str, Any, str | None, bool] = _case(case)
            ) -> Any:
                return call(threads, *args)

            if case == "lock held":
                with (
                    SqliteSaver.from_conn_string(str(threads)) as holder,
                    resume_lock(holder, thread_id),
                ):
                    seen[entry] = _refused(entry, capsys, run)[1]
            else:
                seen[entry] = _refused(entry, capsys, run)[1]
        if case == "several pending, one decision":  # the how-to names the caller's own API
            assert "decisions={node_id: decision" in seen["ReActAgent.resume"]
            assert "answer one with --node" in seen["inbox.resume_graph"]
            seen = {k: v.split("); ")[0] for k, v in seen.items()}
        if case == "not paused":
            assert seen["ReActAgent.resume"].endswith("new message (run()) to continue it")
            assert "()" not in seen["cli inbox answer"]
            seen = {k: v.split("; send it a new message")[0] for k, v in seen.items()}
        assert len(set(seen.values())) == 1, (case, seen)


@tool
def other_tool(x: int) -> int:
    """A tool of another agent."""
    return x


def test_a_thread_of_another_agent_is_refused_by_every_entry_point(
    db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _start(db, "w", "wire 5 to Ann")
    head, ledger = _head(db, "w"), _ledger(db)
    with (
        SqliteSaver.from_conn_string(str(db)) as saver,
        pytest.raises(InvalidDecisionError, match="waits for an approval of tool 'wire'"),
    ):
        _agent(saver, tools=[other_tool]).resume(thread_id="w", human_decision="approved")
    assert cli_main(["inbox", "answer", "--db", str(db), "--thread", "w", "--approve"]) == 2
    printed = capsys.readouterr().err
    assert "waits for an approval of tool 'wire'" in printed  # the demo agent has no `wire`
    assert "which this agent does not have (its tools: get_balance, transfer_funds)" in printed
    assert (_head(db, "w"), _ledger(db)) == (head, ledger)
    assert _via_inbox(db, "w", "approved", None, False).interrupts == ()  # the right agent
    assert _ledger(db) == [("lookup", "Ann"), ("wire", "Ann")]


def test_a_run_stopped_without_a_pause_is_finished_by_the_agent_and_refused_by_the_inbox(
    db: Path,
) -> None:
    """A thread stopped before its tool node (here a breakpoint; a crashed run, or a thread
    whose pause record was deleted, looks the same) has no approval to answer: the inbox
    refuses; ReActAgent.resume refuses a decision (it would be dropped) and,
    without one, finishes the run (documented crash continuation)."""
    with SqliteSaver.from_conn_string(str(db)) as saver:
        app = inbox_graph.graph.copy(update={"checkpointer": saver})
        app.invoke(
            {"messages": [HumanMessage("wire 5 to Ann")]}, _cfg("b"), interrupt_before=["tools"]
        )
        assert app.get_state(_cfg("b")).next == ("tools",)
    head = _head(db, "b")
    with pytest.raises(NothingToResumeError, match="stopped before tools"):
        _via_inbox(db, "b", "approved", None, False)
    assert _head(db, "b") == head and _ledger(db) == []
    with SqliteSaver.from_conn_string(str(db)) as saver:
        with pytest.raises(NothingToResumeError, match="decision was not applied"):
            _agent(saver).resume(thread_id="b", human_decision="approved")
        assert _head(db, "b") == head and _ledger(db) == []
        result = _agent(saver).resume(thread_id="b")
    assert result.termination_reason == "interrupted"  # it ran lookup, then wire paused
    assert _ledger(db) == [("lookup", "Ann")]


@pytest.fixture
def schema_thread(tmp_path: Path) -> Iterator[tuple[Path, Any]]:
    """A thread paused at an approval with a ``response_schema`` (bool ``ok``)."""
    from typing_extensions import TypedDict

    from dynavec_langgraph import interrupt

    class Approval(TypedDict):
        ok: bool

    runs: list[Any] = []

    @tool
    def pay(amount: int) -> str:
        """Pay once approved."""
        decision = interrupt("approve_pay", {"amount": amount}, response_schema=Approval)
        runs.append(decision)
        return "paid" if decision["ok"] else "not paid"

    db = tmp_path / "s.db"
    with SqliteSaver.from_conn_string(str(db)) as saver:
        agent = ReActAgent(
            ScriptedChatModel(turns=[[{"name": "pay", "args": {"amount": 3}}], "ok"]),
            [pay],
            checkpointer=saver,
        )
        assert agent.run("pay 3", thread_id="s").termination_reason == "interrupted"
        yield db, (agent, runs)


def test_a_decision_its_schema_refuses_is_the_same_error_for_agent_and_inbox(
    schema_thread: tuple[Path, Any],
) -> None:
    db, (agent, runs) = schema_thread
    head = _head(db, "s")
    with pytest.raises(InvalidDecisionError) as by_agent:
        agent.resume(thread_id="s", human_decision={"ok": "maybe"})
    with pytest.raises(InvalidDecisionError) as by_inbox:
        resume_graph(agent.graph, agent.checkpointer, "s", {"ok": "maybe"})
    assert str(by_agent.value) == str(by_inbox.value)
    assert "still paused" in str(by_inbox.value)
    assert runs == [] and _head(db, "s") == head
    assert resume_graph(agent.graph, agent.checkpointer, "s", {"ok": True}).interrupts == ()
    assert runs == [{"ok": True}]


def test_the_inbox_reaches_the_lock_only_through_the_guarded_resume() -> None:
    """One home: inbox, remote inbox and CLI import no lock and no refusal helper of their own."""
    import ast

    import dynavec_langgraph

    root = Path(dynavec_langgraph.__file__).parent
    cli = sorted(str(p.relative_to(root)) for p in (root / "_cli").glob("*.py"))
    assert "_cli/inbox.py" in cli  # the command line is a folder, its modules read one by one
    for name in ("_approvals/inbox.py", *cli, "_remote/inbox.py"):
        tree = ast.parse((root / name).read_text())
        imported = {
            (node.module, alias.name)
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom)
            for alias in node.names
        }
        modules = {m for m, _ in imported}
        # the lock and the decision helpers under every path they have lived at
        assert not modules & {"dynavec_langgraph._locks", "dynavec_langgraph._persistence.locks"}
        for home in ("dynavec_langgraph.interrupt", "dynavec_langgraph._pauses.decisions"):
            assert (home, "refusal") not in imported, name
            assert (home, "resume_command") not in imported, name
        assert "resume_lock" not in {alias for _, alias in imported}, name
