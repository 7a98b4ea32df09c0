"""Nothing runs twice, nothing is dropped: the cases an adversarial review found.

Each case is one where an agent could run something twice or drop something silently; counters
prove what ran how often, on SQLite files and PostgreSQL where storage is involved. The
tool-call id cases (none, empty, duplicate ids) are in ``tests/test_tool_call_ids.py``.
"""

from __future__ import annotations

import asyncio
import json
import re
import sqlite3
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import BaseMessage, HumanMessage
from typing_extensions import TypedDict

from dynavec_langgraph import (
    CheckpointerConfigError,
    ConcurrentResumeError,
    InterruptCallError,
    InvalidDecisionError,
    NothingToResumeError,
    ReActAgent,
    StorageError,
    ThreadPausedError,
    interrupt,
    tool,
)
from dynavec_langgraph._approvals.inbox import load_graph
from dynavec_langgraph._cli import main as cli_main
from dynavec_langgraph.demo import LEDGER_ENV
from dynavec_langgraph.testing import ScriptedChatModel, Turn
from tests import inbox_graph
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


@pytest.mark.slow
def test_postgres_back_after_a_long_outage_is_used_by_the_next_call(tmp_path: Path) -> None:
    """After a long outage the pool does not wait out a retry delay that grew while the server
    was down (psycopg_pool doubles it for 5 minutes by default): the first call after the
    restart gets a connection at once and finishes the paused run."""
    server = PostgresServer().start()
    try:
        agent = paused_agent(server.create_database())
        server.shutdown()
        down = time.monotonic()
        for _ in range(2):
            with pytest.raises(StorageError, match="PoolTimeout"):
                agent.resume(thread_id="t", human_decision="approved")
        assert RUNS == {}
        time.sleep(max(0.0, down + 25 - time.monotonic()))  # the old delay: ~16 s by now
        server.restart()
        started = time.monotonic()
        done = agent.resume(thread_id="t", human_decision="approved")
        assert time.monotonic() - started < 4  # not a 5 s pool wait for a scheduled retry
        assert done.output == "finished: sent 120"
        assert RUNS == {"sent 'approved'": 1}
        agent.close()
    finally:
        server.stop()


# --- case 5: every decision reaches the tool unchanged ---------------------------------------

RECEIVED: list[Any] = []


@tool
def decide(item: str) -> str:
    """Ask a person about an item."""
    decision = interrupt("approve_item", {"item": item})
    RECEIVED.append(decision)
    return f"decided {decision!r}"


def decide_policy(messages: list[BaseMessage]) -> Turn:
    if isinstance(messages[-1], HumanMessage):
        return [{"name": "decide", "args": {"item": "x"}}]
    return "ok"


ID_LIKE = {"0" * 32: "a", "f" * 32: "b"}


@pytest.mark.parametrize("decision", [{}, ID_LIKE, {"approved": True}, [], ""])
@pytest.mark.parametrize("path", ["thread", "messages", "async thread"])
def test_every_decision_reaches_the_tool_unchanged(decision: Any, path: str) -> None:
    """``{}`` (and any dict whose keys look like interrupt ids) was read by LangGraph as a map
    of interrupt ids: the run returned "interrupted" with no error and the tool got nothing."""
    RECEIVED.clear()
    agent = ReActAgent(ScriptedChatModel(policy=decide_policy), [decide])
    paused = agent.run("go", thread_id="t")
    if path == "thread":
        done = agent.resume(thread_id="t", human_decision=decision)
    elif path == "async thread":
        done = asyncio.run(agent.aresume(thread_id="t", human_decision=decision))
    else:
        assert paused.interrupt_payload is not None
        fresh = ReActAgent(ScriptedChatModel(policy=decide_policy), [decide])
        done = fresh.resume(paused.interrupt_payload["messages"], human_decision=decision)
    assert done.termination_reason == "completed"
    assert RECEIVED == [decision]
    assert done.steps[0].observations == [f"decided {decision!r}"]


def test_raw_graph_resume_command_by_id_passes_an_empty_dict() -> None:
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.types import Command

    from dynavec_langgraph import create_react_agent

    RECEIVED.clear()
    graph = create_react_agent(
        ScriptedChatModel(policy=decide_policy), [decide], checkpointer=InMemorySaver()
    )
    (pending,) = graph.invoke({"messages": [HumanMessage("go")]}, cfg())["__interrupt__"]
    graph.invoke(Command(resume={pending.id: {}}), cfg())
    assert RECEIVED == [{}]


class Needs(TypedDict):
    approved: bool


@tool
def typed(item: str) -> str:
    """Ask with a schema."""
    decision = interrupt("approve_typed", {"item": item}, response_schema=Needs)
    RECEIVED.append(decision)
    return "done"


def test_an_empty_typeddict_decision_is_refused_and_the_pause_stays() -> None:
    RECEIVED.clear()

    def policy(messages: list[BaseMessage]) -> Turn:
        if isinstance(messages[-1], HumanMessage):
            return [{"name": "typed", "args": {"item": "x"}}]
        return "ok"

    agent = ReActAgent(ScriptedChatModel(policy=policy), [typed])
    agent.run("go", thread_id="t")
    with pytest.raises(InvalidDecisionError, match=re.escape("the decision {} was refused: ")):
        agent.resume(thread_id="t", human_decision={})
    assert RECEIVED == []
    assert agent.graph.get_state(cfg()).interrupts
    assert agent.resume(thread_id="t", human_decision={"approved": True}).output == "ok"
    assert RECEIVED == [{"approved": True}]


# --- case 8 and the clear errors: bad input is refused, named, and changes nothing ----------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("sqlite:///q.db?mode=ro&timeout=5", "unknown SQLite option 'mode'"),
        ("sqlite:///q.db?timeout=soon", "timeout='soon' is not a number"),
    ],
)
def test_sqlite_url_options_are_refused_or_applied(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str, expected: str
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(CheckpointerConfigError, match=re.escape(expected)):
        ReActAgent(ScriptedChatModel(turns=["ok"]), checkpointer=value)
    assert list(tmp_path.iterdir()) == []  # no file named 'q.db?mode=ro&timeout=5'
    agent = ReActAgent(ScriptedChatModel(turns=["ok"]), checkpointer="sqlite:///q.db?timeout=2")
    assert agent.run("hi", thread_id="t").output == "ok"
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith("q.db-")) == [
        "q.db"  # the resume-lock file and its folder are removed once released
    ]
    agent.close()


@tool
def noop() -> str:
    """Do nothing."""
    RUNS["noop"] += 1
    return "ok"


@pytest.mark.parametrize(
    ("kwargs", "error", "text"),
    [
        ({"max_steps": 2.7}, TypeError, "max_steps=2.7: pass a whole number"),
        ({"max_steps": "abc"}, TypeError, "max_steps='abc'"),
        ({"max_steps": None}, TypeError, "max_steps=None"),
        ({"max_steps": [3]}, TypeError, "max_steps=[3]"),
        ({"max_steps": True}, TypeError, "max_steps=True"),
        ({"tools": noop}, TypeError, "tools= takes a list of tools"),
        ({"tools": noop.func}, TypeError, "tools= takes a list of tools"),
        ({"tools": "noop"}, TypeError, "tools= takes a list of tools"),
        ({"tools": ["noop"]}, TypeError, "tools= got 'noop'"),
    ],
    ids=lambda v: repr(v)[:30],
)
def test_bad_agent_arguments_are_refused_at_build(
    kwargs: dict[str, Any], error: type[Exception], text: str
) -> None:
    with pytest.raises(error, match=re.escape(text)):
        ReActAgent(ScriptedChatModel(turns=["ok"]), **kwargs)
    from dynavec_langgraph import create_react_agent

    with pytest.raises(error, match=re.escape(text)):
        create_react_agent(ScriptedChatModel(turns=["ok"]), **kwargs)


@pytest.mark.parametrize(
    ("call", "error", "text"),
    [
        (lambda a: a.run("go", thread_id=""), TypeError, "thread_id='': pass a non-empty"),
        (lambda a: a.run("go", thread_id="  "), TypeError, "thread_id='  '"),
        (lambda a: a.run("go", thread_id=7), TypeError, "thread_id=7"),
        (lambda a: a.run(42, thread_id="t"), TypeError, "goal=42 (int): pass the user's request"),
        (lambda a: a.run(None), TypeError, "goal=None"),
        (lambda a: a.resume(thread_id=123, human_decision="ok"), TypeError, "thread_id=123"),
        (
            lambda a: a.resume(thread_id="p", decisions=["ok"]),
            InvalidDecisionError,
            "decisions=['ok'] (list): pass a mapping",
        ),
        (lambda a: a.resume(thread_id="p", human_decision=None), InvalidDecisionError, "None"),
    ],
    ids=lambda v: getattr(v, "__name__", repr(v))[:30],
)
def test_bad_call_arguments_are_refused_and_change_nothing(
    call: Callable[[ReActAgent], Any], error: type[Exception], text: str
) -> None:
    RECEIVED.clear()
    agent = ReActAgent(ScriptedChatModel(policy=decide_policy), [decide])
    agent.run("go", thread_id="p")
    before = agent.graph.get_state(cfg("p"))
    with pytest.raises(error, match=re.escape(text)):
        call(agent)
    after = agent.graph.get_state(cfg("p"))
    assert after.config == before.config and after.interrupts == before.interrupts
    assert RECEIVED == []


@pytest.mark.parametrize("answer", [42, None, "text"])
def test_a_model_that_answers_no_message_gets_a_clear_error(answer: Any) -> None:
    from langchain_core.runnables import RunnableLambda

    from dynavec_langgraph import create_react_agent

    graph = create_react_agent(RunnableLambda(lambda _messages: answer), [])
    with pytest.raises(TypeError, match="not an AIMessage: pass a LangChain chat model"):
        graph.invoke({"messages": [HumanMessage("go")]})


def test_a_dynavec_model_that_answers_42_gets_a_clear_error() -> None:
    class Broken:
        def invoke(self, messages: Any, tools: Any = None) -> Any:
            return 42

    with pytest.raises(TypeError, match="must answer an assistant message"):
        ReActAgent(Broken()).run("go")


def test_a_huge_max_steps_ends_at_max_steps_not_at_a_recursion_limit() -> None:
    """A run is bounded by ``max_steps``; LangGraph's recursion limit follows it (it was a
    fixed 10,000 supersteps, which ``ReActAgent`` users cannot change: a huge ``max_steps``
    with a model that never stops ended in ``GraphRecursionError``)."""
    from dynavec_langgraph import create_react_agent

    calls_per_turn = 30
    model = ScriptedChatModel(
        policy=lambda _m: [{"name": "noop", "args": {}} for _ in range(calls_per_turn)]
    )
    steps = 12
    graph = create_react_agent(model, [noop], max_steps=steps)
    out = graph.invoke({"messages": [HumanMessage("go")]}, output_keys=["termination_reason"])
    assert out["termination_reason"] == "max_steps_reached"
    assert len(model.calls) == steps
    assert RUNS == {"noop": steps * calls_per_turn}
    # the limit leaves room for a thousand calls per model turn, whatever max_steps is
    for huge in (10_000, 10**6):
        config = ReActAgent(model, [noop], max_steps=huge).graph.config or {}
        assert config["recursion_limit"] >= huge * 1_000


def test_a_deeply_nested_payload_names_the_payload() -> None:
    deep: Any = "x"
    for _ in range(100_000):
        deep = [deep]

    @tool
    def ask() -> str:
        """Ask with a huge payload."""
        return str(interrupt("approve_deep", deep))

    model = ScriptedChatModel(turns=[[{"name": "ask", "args": {}}], "ok"])
    with pytest.raises(InterruptCallError) as raised:  # the developer's, not the model's
        ReActAgent(model, [ask]).run("go")
    assert "interrupt('approve_deep'): the payload" in str(raised.value)
    assert "nested too deeply" in str(raised.value)


# --- the command line: decisions by id, reading commands write nothing, clear errors --------


def _paused_wire_thread(db: Path, thread_id: str = "w") -> None:
    from langgraph.checkpoint.sqlite import SqliteSaver

    with SqliteSaver.from_conn_string(str(db)) as saver:
        graph = inbox_graph.graph.copy(update={"checkpointer": saver})
        out = graph.invoke({"messages": [HumanMessage("wire 5 to Ann")]}, cfg(thread_id))
        assert out["__interrupt__"][0].value["node_id"] == "approve_wire"


def _ledger(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.parametrize("decision", ["{}", json.dumps(ID_LIKE), '{"ok": true}'])
def test_cli_inbox_answer_passes_every_decision_to_the_tool(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    decision: str,
) -> None:
    ledger = tmp_path / "ledger.jsonl"
    monkeypatch.setenv(LEDGER_ENV, str(ledger))
    db = tmp_path / "w.db"
    _paused_wire_thread(db)
    args = ["inbox", "answer", "--db", str(db), "--graph", "tests.inbox_graph:graph"]
    assert cli_main([*args, "--thread", "w", "--decision", decision]) == 0
    out = capsys.readouterr().out
    assert "still paused" not in out
    wires = [e for e in _ledger(ledger) if e["tool"] == "wire"]
    assert wires == [{"tool": "wire", "to": "Ann", "decision": json.loads(decision)}]


def test_cli_inbox_answers_a_plain_langgraph_graph(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from langgraph.checkpoint.sqlite import SqliteSaver

    module = tmp_path / "plain_graph.py"
    module.write_text(
        "from typing import TypedDict\n"
        "from langgraph.graph import START, StateGraph\n"
        "from langgraph.types import interrupt\n\n"
        "class S(TypedDict, total=False):\n    answer: object\n\n"
        "def ask(state: S) -> S:\n    return {'answer': interrupt({'question': 'ok?'})}\n\n"
        "builder = StateGraph(S)\nbuilder.add_node('ask', ask)\nbuilder.add_edge(START, 'ask')\n"
        "graph = builder.compile()\n"
    )
    monkeypatch.chdir(tmp_path)
    spec = "./plain_graph.py:graph"
    db = tmp_path / "plain.db"
    graph = load_graph(spec)
    with SqliteSaver.from_conn_string(str(db)) as saver:
        graph.copy(update={"checkpointer": saver}).invoke({}, cfg("p"))
    assert cli_main(["inbox", "list", "--db", str(db), "--graph", spec]) == 0
    listed = capsys.readouterr().out
    assert "1 pending approval(s)" in listed and 'payload {"question": "ok?"}' in listed
    assert cli_main(["inbox", "answer", "--db", str(db), "--graph", spec, "--thread", "p",
                     "--decision", "{}"]) == 0  # fmt: skip
    with SqliteSaver.from_conn_string(str(db)) as saver:
        after = graph.copy(update={"checkpointer": saver}).get_state(cfg("p"))
    assert after.values == {"answer": {}} and not after.interrupts


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_cli_inbox_list_writes_nothing_into_a_foreign_database(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str, request: pytest.FixtureRequest
) -> None:
    if kind == "sqlite":
        other = tmp_path / "other.db"
        with closing(sqlite3.connect(other)) as conn:
            conn.execute("CREATE TABLE notes (x)")
            conn.commit()
        before = sorted(p.name for p in tmp_path.iterdir()), other.read_bytes()
        db = str(other)
    else:
        db = request.getfixturevalue("pg_uri")
    assert cli_main(["inbox", "list", "--db", db]) == 0
    assert "No paused threads" in capsys.readouterr().out
    if kind == "sqlite":
        assert (sorted(p.name for p in tmp_path.iterdir()), other.read_bytes()) == before
    else:
        import psycopg

        with psycopg.connect(db) as conn:
            tables = conn.execute(
                "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'"
            ).fetchone()
        assert tables == (0,)


def test_cli_reports_an_unreadable_thread(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "w.db"
    _paused_wire_thread(db, "good")
    _paused_wire_thread(db, "bad")
    with closing(sqlite3.connect(db)) as conn:
        conn.execute("UPDATE checkpoints SET type = 'pickle' WHERE thread_id = 'bad'")
        conn.commit()
    args = ["--db", str(db), "--graph", "tests.inbox_graph:graph"]
    assert cli_main(["inbox", "list", *args]) == 0
    captured = capsys.readouterr()
    rows = captured.out.splitlines()[1:]  # an interrupt id is random hex: it may hold "bad"
    assert [r.split()[0] for r in rows] == ["good"]
    assert "thread 'bad' cannot be read: NotImplementedError" in captured.err
    assert cli_main(["inbox", "answer", *args, "--thread", "bad", "--approve"]) == 2
    assert "thread 'bad' cannot be read" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("def broken(:\n", "importing it failed with SyntaxError"),
        ("import not_a_module_anywhere\n", "No module named 'not_a_module_anywhere'"),
        ("raise RuntimeError('boom')\n", "importing it failed with RuntimeError: boom"),
    ],
)
def test_cli_graph_that_fails_to_import_gets_a_clear_error(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    source: str,
    expected: str,
) -> None:
    (tmp_path / "agents.py").write_text(source)
    monkeypatch.chdir(tmp_path)
    db = tmp_path / "w.db"
    _paused_wire_thread(db)
    for spec in ("./agents.py:graph", "agents:graph"):
        assert cli_main(["inbox", "list", "--db", str(db), "--graph", spec]) == 2
        err = capsys.readouterr().err
        assert expected in err and "Traceback" not in err


def test_postgres_down_at_resume_fails_fast_then_reconnects_by_itself() -> None:
    server = PostgresServer().start()
    try:
        agent = paused_agent(server.create_database())
        server.shutdown()
        started = time.monotonic()
        with pytest.raises(StorageError) as failure:
            agent.resume(thread_id="t", human_decision="approved")
        assert time.monotonic() - started < 15
        message = str(failure.value)
        assert message.startswith("PostgreSQL at postgresql://")
        assert "No tool ran and thread 't' is unchanged" in message
        assert RUNS == {}
        server.restart()
        assert agent.resume(thread_id="t", human_decision="approved").output == (
            "finished: sent 120"
        )  # the first call after the restart works: the pool replaced its dead connections
        assert RUNS == {"sent 'approved'": 1}
        agent.close()
    finally:
        server.stop()
