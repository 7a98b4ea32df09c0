"""The second adversarial pass: text stored exactly or refused, foreign threads and
tables, damaged threads, bad ``interrupt()`` calls and other raw errors.

Each case is refused with an error of the package's tree that names the field (and position),
the table or the node, and says what to do; nothing runs for a refused call (counters prove
it) and the thread keeps the checkpoint it had. Real parts: SQLite files, the PostgreSQL server
the tests start, the command line in a subprocess. Cancellation, the PostgreSQL pool, DynamoDB
and the cost of long threads are elsewhere.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import sqlite3
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import ExitStack, closing, contextmanager
from pathlib import Path
from typing import Any

import psycopg
import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool as lc_tool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.sqlite import SqliteSaver

from dynavec_langgraph import (
    AgentState,
    CheckpointerConfigError,
    DamagedThreadError,
    IncompatibleThreadError,
    InterruptCallError,
    InvalidDecisionError,
    InvalidInputError,
    MemoryCheckpointer,
    NothingToResumeError,
    ReActAgent,
    StorageError,
    create_react_agent,
    interrupt,
    tool,
)
from dynavec_langgraph.demo import LEDGER_ENV
from dynavec_langgraph.testing import ScriptedChatModel, Turn

ROOT = Path(__file__).resolve().parent.parent
RUNS: Counter[str] = Counter()
SPLIT = "pay \ud83d rent"
"""A goal holding half of a surrogate pair (the first half of an emoji)."""


@pytest.fixture(autouse=True)
def _reset() -> None:
    RUNS.clear()


def cfg(thread: str = "t") -> Any:
    return {"configurable": {"thread_id": thread}}


def url(db: str) -> str:
    return db if db.startswith("postgresql://") else f"sqlite:///{db}"


@contextmanager
def saver_on(db: str) -> Iterator[BaseCheckpointSaver[Any]]:
    """A LangGraph saver of its own on the SQLite file or PostgreSQL database ``db``."""
    if db.startswith("postgresql://"):
        with PostgresSaver.from_conn_string(db) as pg:
            pg.setup()
            yield pg
    else:
        with SqliteSaver.from_conn_string(db) as lite:
            yield lite


def execute(db: str, statement: str) -> None:
    """Run SQL on the SQLite file or PostgreSQL database ``db`` (to damage it)."""
    if db.startswith("postgresql://"):
        with psycopg.connect(db, autocommit=True) as conn:
            conn.execute(statement)
    else:
        with closing(sqlite3.connect(db)) as conn:
            conn.execute(statement)
            conn.commit()


@tool
def pay(amount: int) -> str:
    """Pay once a person approves."""
    decision = interrupt("approve_pay", {"amount": amount})
    RUNS[f"paid {decision!r}"] += 1
    return f"paid {amount}"


def pay_policy(messages: list[BaseMessage]) -> Turn:
    if isinstance(messages[-1], HumanMessage):
        return [{"name": "pay", "args": {"amount": 5}}]
    return f"done: {messages[-1].content}"


def agent_on(checkpointer: Any, tools: list[Any] | None = None) -> ReActAgent:
    return ReActAgent(
        ScriptedChatModel(policy=pay_policy), [pay] if tools is None else tools,
        checkpointer=checkpointer,
    )  # fmt: skip


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> str | None:
    """``checkpointer=``: the agent's in-process saver, a SQLite file, a PostgreSQL database."""
    if request.param == "memory":
        return None
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'agent.db'}"
    uri: str = request.getfixturevalue("pg_uri")
    return uri


# --- 1. text is stored exactly or refused, wherever a string enters --------------------------


def _head(agent: ReActAgent, thread: str = "p") -> Any:
    snapshot = agent.graph.get_state(cfg(thread))
    return snapshot.config, [i.id for i in snapshot.interrupts]


Call = Callable[[ReActAgent], Any]
SURROGATE_CALLS: dict[str, tuple[Call, type[Exception], str]] = {
    "run goal": (lambda a: a.run(SPLIT, thread_id="p"), InvalidInputError, "goal: character 4"),
    "arun goal": (
        lambda a: asyncio.run(a.arun(SPLIT, thread_id="new")),
        InvalidInputError,
        "goal: character 4",
    ),
    "stream goal": (lambda a: list(a.stream(SPLIT)), InvalidInputError, "goal: character 4"),
    "run thread_id": (
        lambda a: a.run("pay", thread_id="p\udc80"),
        InvalidInputError,
        "thread_id: character 1 ('\\udc80')",
    ),
    "resume thread_id": (
        lambda a: a.resume(thread_id="p\ud83d", human_decision="ok"),
        InvalidInputError,
        "thread_id: character 1",
    ),
    "decision": (
        lambda a: a.resume(thread_id="p", human_decision={"note": ["ok", SPLIT]}),
        InvalidDecisionError,
        "human_decision['note'][1]: character 4",
    ),
    "aresume decision": (
        lambda a: asyncio.run(a.aresume(thread_id="p", human_decision=SPLIT)),
        InvalidDecisionError,
        "human_decision: character 4",
    ),
    "decisions": (
        lambda a: a.resume(thread_id="p", decisions={"approve_pay": SPLIT}),
        InvalidDecisionError,
        "decisions['approve_pay']: character 4",
    ),
    "state": (
        lambda a: a.run("pay", thread_id="new", state=AgentState({"memo": SPLIT})),
        InvalidInputError,
        "state.data['memo']: character 4",
    ),
    "resume messages": (
        lambda a: a.resume(
            [HumanMessage(SPLIT), AIMessage("", tool_calls=[_call()])], human_decision="ok"
        ),
        InvalidInputError,
        "messages[0].content: character 4",
    ),
}


def _call() -> Any:
    return {"name": "pay", "args": {"amount": 5}, "id": "c1", "type": "tool_call"}


@pytest.mark.parametrize("case", list(SURROGATE_CALLS))
def test_a_lone_surrogate_is_refused_where_it_enters_and_changes_nothing(
    store: str | None, case: str
) -> None:
    """``"pay \\ud83d rent"`` was stored as ``"pay ? rent"`` (memory, SQLite) with no error,
    and raised a raw ``UnicodeEncodeError`` as a thread id. Now: refused, named, nothing ran."""
    call, error, text = SURROGATE_CALLS[case]
    agent = agent_on(store)
    assert agent.run("pay", thread_id="p").termination_reason == "interrupted"
    before = _head(agent)
    with pytest.raises(error) as raised:
        call(agent)
    message = str(raised.value)
    assert message.startswith(text), message
    assert "lone surrogate" in message and "Nothing ran and nothing was written" in message
    if isinstance(raised.value, InvalidInputError):
        assert raised.value.field == text.split(":")[0]
    assert RUNS == {}
    assert _head(agent) == before
    assert agent.graph.get_state(cfg("new")).created_at is None
    # the thread still works, and a whole emoji is stored exactly
    assert agent.resume(thread_id="p", human_decision="ok \U0001f600").output == "done: paid 5"
    assert RUNS == {"paid 'ok \U0001f600'": 1}
    done = agent.run("thanks \U0001f600", thread_id="p")
    assert done.termination_reason == "interrupted"  # the policy pays again; stored exactly:
    stored = agent.graph.get_state(cfg("p")).values["messages"]
    assert "thanks \U0001f600" in [m.content for m in stored]
    agent.close()


def test_reading_a_thread_named_with_a_lone_surrogate_is_refused(tmp_path: Path) -> None:
    """It raised a raw ``UnicodeEncodeError`` from the SQLite driver."""
    agent = agent_on(f"sqlite:///{tmp_path}/r.db")
    for call in (
        lambda: agent.get_checkpoint("t\ud83d"),
        lambda: agent.list_checkpoints("t\ud83d"),
        lambda: asyncio.run(agent.aget_checkpoint("t", checkpoint_id="c\ud83d")),
    ):
        with pytest.raises(InvalidInputError, match=r"character 1 .* is a lone surrogate"):
            call()
    agent.close()


def test_the_cli_refuses_a_lone_surrogate_in_a_decision(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ledger = tmp_path / "ledger.jsonl"
    monkeypatch.setenv(LEDGER_ENV, str(ledger))
    db = tmp_path / "w.db"
    from tests import inbox_graph

    with SqliteSaver.from_conn_string(str(db)) as saver:
        app = inbox_graph.graph.copy(update={"checkpointer": saver})
        app.invoke({"messages": [HumanMessage("wire 5 to Ann")]}, cfg("w"))
    done = _cli(
        "inbox", "answer", "--db", str(db), "--graph", "tests.inbox_graph:graph",
        "--thread", "w", "--decision", '"ok \\ud83d"',
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "human_decision: character 3 ('\\ud83d') is a lone surrogate" in done.stderr
    assert "Traceback" not in done.stderr
    assert [json.loads(line)["tool"] for line in ledger.read_text().splitlines()] == ["lookup"]


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "dynavec_langgraph._cli", *args],
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("kind", ["memory", "sqlite", "postgres"])
def test_the_raw_graph_stores_what_its_saver_stores(
    tmp_path: Path, kind: str, request: pytest.FixtureRequest
) -> None:
    """What docs/errors.md says of the raw graph: its input reaches the saver before any node
    runs, so a lone surrogate in it is stored as the saver stores it: ``?`` in its place."""
    with ExitStack() as stack:
        saver: Any = InMemorySaver()
        if kind != "memory":
            db = request.getfixturevalue("pg_uri") if kind == "postgres" else str(tmp_path / "r.db")
            saver = stack.enter_context(saver_on(db))
        graph = create_react_agent(ScriptedChatModel(turns=["hi"]), [], checkpointer=saver)
        graph.invoke({"messages": [HumanMessage(SPLIT)]}, cfg("r"))
        assert graph.get_state(cfg("r")).values["messages"][0].content == "pay ? rent"


# --- 6. clear errors for state and messages that cannot be used ------------------------------


def test_state_the_checkpointer_cannot_store_is_refused_before_anything_runs(
    store: str | None,
) -> None:
    agent = agent_on(store)
    with pytest.raises(InvalidInputError) as raised:
        agent.run("pay", thread_id="t", state=AgentState({"ok": 1, "f": lambda: 1}))
    assert raised.value.field == "state.data['f']"
    assert str(raised.value).startswith(
        "state.data['f'] cannot be stored by the checkpointer (Type is not msgpack serializable: "
        "function); nothing ran and nothing was written"
    )
    assert RUNS == {} and agent.graph.get_state(cfg()).created_at is None
    agent.close()


@pytest.mark.parametrize(
    ("messages", "field"),
    [
        ([1, 2, 3], "messages[0]"),
        ([HumanMessage("pay"), object()], "messages[1]"),
        ("hi", "messages[0]"),
    ],
    ids=["ints", "object", "a string"],
)
def test_resume_with_things_that_are_no_messages_is_refused(messages: Any, field: str) -> None:
    agent = agent_on(None)
    with pytest.raises(InvalidInputError) as raised:
        agent.resume(messages, human_decision="ok")
    assert raised.value.field == field
    assert f"{field} = " in str(raised.value) and "is not a message" in str(raised.value)
    assert "paused.interrupt_payload['messages']" in str(raised.value)
    assert RUNS == {}


# --- 5. a bad interrupt() call reaches the developer ------------------------------------------


@tool
def lookup(item: str) -> str:
    """Look an item up."""
    RUNS["lookup"] += 1
    return f"{item} found"


def _bad_tools() -> dict[str, Any]:
    @tool
    def bad_payload() -> str:
        """Ask with a payload that is no JSON."""
        RUNS["asked"] += 1
        return str(interrupt("approve", {"when": object()}))

    @tool
    def empty_node() -> str:
        """Ask with no node id."""
        RUNS["asked"] += 1
        return str(interrupt("", {"x": 1}))

    @tool
    def split_payload() -> str:
        """Ask with a broken string."""
        RUNS["asked"] += 1
        return str(interrupt("approve", {"note": SPLIT}))

    @lc_tool
    def langchain_tool() -> str:
        """A LangChain tool, run by LangGraph's ToolNode."""
        RUNS["asked"] += 1
        return str(interrupt("approve", {"when": object()}))

    return {
        "bad_payload": (bad_payload, "payload", "the payload cannot be stored as JSON"),
        "empty_node": (empty_node, "node_id", "node_id must be a non-empty string"),
        "split_payload": (split_payload, "payload['note']", "payload['note']: character 4"),
        "langchain_tool": (langchain_tool, "payload", "the payload cannot be stored as JSON"),
    }


@pytest.mark.parametrize("name", ["bad_payload", "empty_node", "split_payload", "langchain_tool"])
@pytest.mark.parametrize("entry", ["run", "arun", "graph"])
def test_a_bad_interrupt_call_is_raised_to_the_developer(
    tmp_path: Path, name: str, entry: str
) -> None:
    """It was an error observation for the model, and the run ended "completed"."""
    bad, field, text = _bad_tools()[name]

    def policy(messages: list[BaseMessage]) -> Turn:
        if isinstance(messages[-1], HumanMessage):
            return [{"name": "lookup", "args": {"item": "x"}}]
        if isinstance(messages[-1], ToolMessage) and messages[-1].name == "lookup":
            return [{"name": bad.name, "args": {}}]
        return "completed anyway"

    agent = ReActAgent(
        ScriptedChatModel(policy=policy), [lookup, bad], checkpointer=f"sqlite:///{tmp_path}/i.db"
    )
    with pytest.raises(InterruptCallError) as raised:
        if entry == "run":
            agent.run("go", thread_id="t")
        elif entry == "arun":
            asyncio.run(agent.arun("go", thread_id="t"))
        else:
            agent.graph.invoke({"messages": [HumanMessage("go")]}, cfg())
    assert isinstance(raised.value, TypeError)  # what interrupt() raised before, too
    assert raised.value.field == field
    assert text in str(raised.value) and "raised instead of being shown to the model" in (
        str(raised.value)
    )
    # what was done before stays saved: lookup's answer; the bad call is unanswered
    snapshot = agent.graph.get_state(cfg())
    answers = [m.name for m in snapshot.values["messages"] if isinstance(m, ToolMessage)]
    assert answers == ["lookup"] and snapshot.next == ("tools",)
    assert RUNS == {"lookup": 1, "asked": 1}
    agent.close()


# --- 2. threads of LangGraph's prebuilt agent and LangChain's create_agent -------------------


def _foreign_graph(
    kind: str, saver: Any, tools: list[Any], policy: Callable[..., Turn] = pay_policy
) -> Any:
    model = ScriptedChatModel(policy=policy)
    if kind == "prebuilt":
        from langgraph.prebuilt import create_react_agent as prebuilt_agent

        with pytest.warns(DeprecationWarning):  # "moved to langchain.agents"
            return prebuilt_agent(model, tools, checkpointer=saver)
    from langchain.agents import create_agent

    return create_agent(model, tools, checkpointer=saver)


@pytest.mark.parametrize("kind", ["prebuilt", "create_agent"])
@pytest.mark.parametrize("entry", ["resume", "aresume"])
def test_a_thread_paused_by_another_agent_is_resumed_with_the_same_tools(
    db: str, kind: str, entry: str
) -> None:
    """It failed with ``KeyError: 'messages'`` in ``_graph.py`` (prebuilt) and ``TypeError``
    (create_agent): their tool node gets a ``Send`` of its own shape."""
    with saver_on(db) as saver:
        foreign = _foreign_graph(kind, saver, [pay])
        paused = foreign.invoke({"messages": [HumanMessage("pay")]}, cfg())
        assert paused["__interrupt__"][0].value["node_id"] == "approve_pay"
    agent = agent_on(url(db))
    if entry == "resume":
        done = agent.resume(thread_id="t", human_decision="approved")
    else:
        done = asyncio.run(agent.aresume(thread_id="t", human_decision="approved"))
    assert done.termination_reason == "completed" and done.output == "done: paid 5"
    assert RUNS == {"paid 'approved'": 1}
    messages = agent.graph.get_state(cfg()).values["messages"]
    assert [type(m).__name__ for m in messages] == [
        "HumanMessage", "AIMessage", "ToolMessage", "AIMessage",
    ]  # fmt: skip
    assert messages[2].tool_call_id == messages[1].tool_calls[0]["id"]
    with saver_on(db) as saver:  # and the other agent reads the finished thread
        after = _foreign_graph(kind, saver, [pay]).get_state(cfg())
        assert after.values["messages"][-1].content == "done: paid 5" and not after.next
    agent.close()


@pytest.mark.parametrize("kind", ["prebuilt", "create_agent"])
def test_a_thread_of_another_agent_with_other_tools_is_refused_naming_the_tool(
    db: str, kind: str
) -> None:
    @lc_tool
    def wire(amount: int) -> str:
        """Wire money after a plain LangGraph interrupt (no dynavec tool_call in it)."""
        from langgraph.types import interrupt as lg_interrupt

        RUNS[f"wired {lg_interrupt({'question': 'wire?'})!r}"] += 1
        return "wired"

    def wire_policy(messages: list[BaseMessage]) -> Turn:
        if isinstance(messages[-1], HumanMessage):
            return [{"name": "wire", "args": {"amount": 5}}]
        return "done"

    for tool_, policy in ((pay, pay_policy), (wire, wire_policy)):
        thread = tool_.name
        with saver_on(db) as saver:
            foreign = _foreign_graph(kind, saver, [tool_], policy)
            assert foreign.invoke({"messages": [HumanMessage("go")]}, cfg(thread))["__interrupt__"]
        agent = agent_on(url(db), tools=[lookup])
        with pytest.raises(IncompatibleThreadError) as raised:
            agent.resume(thread_id=thread, human_decision="approved")
        message = str(raised.value)
        assert f"waits for an approval of tool {tool_.name!r}" in message, message
        assert "which this agent does not have (its tools: lookup)" in message
        assert isinstance(raised.value, InvalidDecisionError)
        assert RUNS == {}
        agent.close()


@pytest.mark.parametrize("entry", ["resume", "run", "arun"])
def test_a_thread_paused_in_a_node_this_graph_lacks_is_refused_naming_the_node(
    db: str, entry: str
) -> None:
    """``create_agent`` with ``HumanInTheLoopMiddleware`` pauses in its own node: our graph
    saw no pause, so resume said "not paused" and run() ran the tool without the approval."""
    from langchain.agents.middleware import HumanInTheLoopMiddleware

    @tool
    def transfer(amount: int) -> str:
        """Transfer money (the middleware asks first)."""
        RUNS["transfer"] += 1
        return "sent"

    def policy(messages: list[BaseMessage]) -> Turn:
        if isinstance(messages[-1], HumanMessage):
            return [{"name": "transfer", "args": {"amount": 5}}]
        return "done"

    with saver_on(db) as saver:
        from langchain.agents import create_agent

        foreign = create_agent(
            ScriptedChatModel(policy=policy),
            [transfer],
            checkpointer=saver,
            middleware=[HumanInTheLoopMiddleware({"transfer": True})],
        )
        assert foreign.invoke({"messages": [HumanMessage("go")]}, cfg())["__interrupt__"]
        head = saver.get_tuple(cfg())
        assert head is not None
    agent = ReActAgent(ScriptedChatModel(policy=policy), [transfer], checkpointer=url(db))
    with pytest.raises(IncompatibleThreadError) as raised:
        if entry == "resume":
            agent.resume(thread_id="t", human_decision="approved")
        elif entry == "run":
            agent.run("go on", thread_id="t")
        else:
            asyncio.run(agent.arun("go on", thread_id="t"))
    assert str(raised.value).startswith(
        "thread 't' is paused in 'HumanInTheLoopMiddleware.after_model', a node this graph "
        "does not have (its nodes: agent, tools)"
    )
    assert RUNS == {}
    with saver_on(db) as saver:
        after = saver.get_tuple(cfg())
        assert after is not None and after.config == head.config  # nothing was written
    agent.close()


# --- 3. another application's checkpoints table -----------------------------------------------

FOREIGN_TABLE = "CREATE TABLE checkpoints (id INTEGER PRIMARY KEY, title TEXT)"


def test_another_applications_checkpoints_table_is_named_sqlite(tmp_path: Path) -> None:
    db = tmp_path / "app.db"
    execute(str(db), FOREIGN_TABLE)
    before = db.read_bytes()
    with pytest.raises(CheckpointerConfigError) as raised:
        agent_on(f"sqlite:///{db}")
    message = str(raised.value)
    assert message.startswith(
        f"the SQLite file {str(db)!r} holds a table 'checkpoints' that is not a LangGraph "
        "checkpoint table (its columns: id, title; missing: thread_id, checkpoint_ns"
    )
    assert "another application uses that name" in message and "nothing was written" in message
    assert db.read_bytes() == before
    # a saver the user built: the error of the first call names the table too
    agent = agent_on(SqliteSaver(sqlite3.connect(db, check_same_thread=False)))
    with pytest.raises(StorageError, match="holds a table 'checkpoints' that is not a LangGraph"):
        agent.run("pay", thread_id="t")
    assert RUNS == {}


def test_another_applications_checkpoints_table_is_named_postgres(pg_uri: str) -> None:
    execute(pg_uri, "CREATE TABLE checkpoints (id serial PRIMARY KEY, title text)")
    with pytest.raises(CheckpointerConfigError) as raised:
        agent_on(pg_uri)
    message = str(raised.value)
    assert message.startswith("PostgreSQL at postgresql://")
    assert "holds a table 'checkpoints' that is not a LangGraph checkpoint table (its " in message
    assert "missing: thread_id, checkpoint_ns, checkpoint_id" in message
    assert "Check that the server runs" not in message
    with psycopg.connect(pg_uri) as conn:
        tables = conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
        ).fetchall()
    assert tables == [("checkpoints",)]  # nothing was written
    # a saver the user built (without setup(), which would fail in their code)
    with PostgresSaver.from_conn_string(pg_uri) as saver:
        agent = agent_on(saver)
        with pytest.raises(StorageError) as failed:
            agent.run("pay", thread_id="t")
    assert "holds a table 'checkpoints' that is not a LangGraph checkpoint table" in str(
        failed.value
    )
    assert "UndefinedColumn" in str(failed.value) and RUNS == {}
    # what the message advises works: a schema of its own
    execute(pg_uri, "CREATE SCHEMA agent")
    agent = agent_on(f"{pg_uri}?options=-csearch_path%3Dagent")
    assert agent.run("pay", thread_id="t").termination_reason == "interrupted"
    assert agent.resume(thread_id="t", human_decision="approved").output == "done: paid 5"
    agent.close()


# --- 4. damaged threads -----------------------------------------------------------------------

WRITES = {"sqlite": "writes", "postgres": "checkpoint_writes"}


def _kind(db: str) -> str:
    return "postgres" if db.startswith("postgresql://") else "sqlite"


def _paused(db: str, *threads: str) -> None:
    agent = agent_on(url(db))
    for thread in threads:
        assert agent.run("pay", thread_id=thread).termination_reason == "interrupted"
    agent.close()


def test_a_deleted_pause_record_never_drops_a_decision(db: str) -> None:
    """The thread's interrupt write deleted: resume() returned "interrupted" again and dropped
    the decision. Now the decision is refused with an error saying why; without a decision
    the run goes on (the call runs again and asks again)."""
    _paused(db, "t", "ok")
    execute(
        db, f"DELETE FROM {WRITES[_kind(db)]} WHERE channel = '__interrupt__' AND thread_id = 't'"
    )
    agent = agent_on(url(db))
    calls: list[Callable[[], Any]] = [
        lambda: agent.resume(thread_id="t", human_decision="approved"),
        lambda: asyncio.run(agent.aresume(thread_id="t", human_decision="approved")),
    ]
    for call in calls:
        with pytest.raises(NothingToResumeError) as raised:
            call()
        message = str(raised.value)
        assert message.startswith("thread 't' cannot be resumed with a decision: it stopped")
        assert "pause record is missing (the thread is damaged)" in message
        assert "The decision was not applied and nothing ran" in message
    assert RUNS == {}
    listed = _cli("inbox", "list", "--db", db, "--graph", "tests.test_adversarial_2:GRAPH")
    assert listed.returncode == 0, listed.stderr
    assert "1 pending approval(s)" in listed.stdout  # thread 'ok'
    assert "thread 't' stopped before 'tools' with a tool call unanswered and no pause" in (
        listed.stderr
    )
    assert "pause record is missing (the thread is damaged)" in listed.stderr
    again = agent.resume(thread_id="t")  # no decision: the call asks again
    assert again.termination_reason == "interrupted" and RUNS == {}
    assert agent.resume(thread_id="t", human_decision="approved").output == "done: paid 5"
    assert RUNS == {"paid 'approved'": 1}
    agent.close()


DAMAGE = {
    "deleted writes": "DELETE FROM {writes} WHERE channel <> '__interrupt__' AND thread_id = 't'",
    "all writes": "DELETE FROM {writes} WHERE thread_id = 't'",
    "garbage parent": (
        "UPDATE checkpoints SET parent_checkpoint_id = 'garbage' WHERE thread_id = 't' AND "
        "checkpoint_id = (SELECT MAX(checkpoint_id) FROM checkpoints WHERE thread_id = 't')"
    ),
}


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_a_damaged_thread_is_reported_as_damaged(db: str, damage: str) -> None:
    """Deleted ``writes`` rows or a parent pointer to nowhere: ``RuntimeError: the tool node ran
    with no pending tool call``. Now ``DamagedThreadError`` from resume() and run(), and
    ``inbox list`` (the command line, another process) names the thread as damaged."""
    _paused(db, "t", "ok")
    execute(db, DAMAGE[damage].format(writes=WRITES[_kind(db)]))
    agent = agent_on(url(db))
    calls: list[Callable[[], Any]] = [
        lambda: agent.resume(thread_id="t", human_decision="approved"),
        lambda: asyncio.run(agent.aresume(thread_id="t", human_decision="approved")),
        lambda: agent.run("pay again", thread_id="t"),
        lambda: agent.resume(thread_id="t"),
    ]
    for call in calls:
        with pytest.raises(DamagedThreadError) as raised:
            call()
        message = str(raised.value)
        assert message.startswith("thread 't' cannot be read: it is damaged (its next step is")
        assert "Nothing ran and no decision was applied" in message
        assert isinstance(raised.value, StorageError) and raised.value.thread_id == "t"
    assert RUNS == {}
    listed = _cli("inbox", "list", "--db", db, "--graph", "tests.test_adversarial_2:GRAPH")
    assert listed.returncode == 0, listed.stderr
    rows = listed.stdout.splitlines()[1:]
    assert [r.split()[0] for r in rows] == ["ok"]
    assert "warning: thread 't' cannot be read: it is damaged" in listed.stderr
    answered = _cli(
        "inbox", "answer", "--db", db, "--graph", "tests.test_adversarial_2:GRAPH",
        "--thread", "t", "--approve",
    )  # fmt: skip
    assert answered.returncode == 2
    assert "thread 't' cannot be read: it is damaged" in answered.stderr
    assert agent.resume(thread_id="ok", human_decision="approved").output == "done: paid 5"
    agent.close()


def test_the_raw_graph_names_a_damaged_thread(tmp_path: Path) -> None:
    db = str(tmp_path / "raw.db")
    _paused(db, "t")
    execute(db, DAMAGE["all writes"].format(writes="writes"))
    with SqliteSaver.from_conn_string(db) as saver:
        graph = GRAPH.copy(update={"checkpointer": saver})
        with pytest.raises(DamagedThreadError, match="thread 't' cannot be read: it is damaged"):
            graph.invoke(None, cfg())
    assert RUNS == {}


def test_a_garbled_dynavec_record_never_drops_a_decision() -> None:
    """A dynavec checkpointer's record: the pause's write lost from the ``interrupted`` record,
    or its LangGraph checkpoint garbled."""
    records = MemoryCheckpointer()
    agent = agent_on(records)
    assert agent.run("pay", thread_id="t").termination_reason == "interrupted"
    (paused,) = [r for r in records.list("t") if r.node_id == "interrupted"]
    for entry in paused.metadata["langgraph"]["entries"]:
        entry["writes"] = []
    records.save(paused)
    with pytest.raises(NothingToResumeError, match="The decision was not applied"):
        agent.resume(thread_id="t", human_decision="approved")
    for entry in paused.metadata["langgraph"]["entries"]:
        entry["checkpoint"] = ["msgpack", "bm90IG1zZ3BhY2s="]
    records.save(paused)
    with pytest.raises(StorageError, match="thread 't' cannot be read"):
        agent.resume(thread_id="t", human_decision="approved")
    assert RUNS == {}


GRAPH = create_react_agent(ScriptedChatModel(policy=pay_policy), [pay], name="pay_agent")
"""The agent of the command-line cases (``--graph tests.test_adversarial_2:GRAPH``)."""


@pytest.mark.parametrize(
    ("call", "error", "field"),
    [
        (lambda a: a.run(SPLIT, thread_id="t"), InvalidInputError, "goal"),
        (lambda a: asyncio.run(a.arun("pay", thread_id="t\ud83d")), InvalidInputError, "thread_id"),
        (
            lambda a: a.resume({"note": SPLIT}, thread_id="t"),
            InvalidDecisionError,
            "human_decision['note']",
        ),
        (
            lambda a: asyncio.run(a.aresume(thread_id="t", decisions={"approve": SPLIT})),
            InvalidDecisionError,
            "decisions['approve']",
        ),
    ],
    ids=["run goal", "arun thread_id", "resume decision", "aresume decisions"],
)
def test_remote_agent_refuses_a_lone_surrogate_before_sending_anything(
    call: Callable[[Any], Any], error: type[Exception], field: str
) -> None:
    """Nothing is sent: the server (none listens on this port) is never asked."""
    from dynavec_langgraph.remote import RemoteReActAgent

    with closing(socket.socket()) as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    agent = RemoteReActAgent(f"http://127.0.0.1:{port}", "dynavec_agent", timeout=2)
    with pytest.raises(error, match=re.escape(f"{field}: character")):
        call(agent)


def test_the_cli_names_another_applications_checkpoints_table(tmp_path: Path) -> None:
    db = tmp_path / "app.db"
    execute(str(db), FOREIGN_TABLE)
    before = db.read_bytes()
    for args in (["inbox", "list"], ["resume", "--thread", "t", "--decision", "approve"]):
        done = _cli(*args, "--db", str(db))
        assert done.returncode == 2, done.stderr
        assert done.stderr.startswith("dynavec-langgraph: error: "), done.stderr
        assert "holds a table 'checkpoints' that is not a LangGraph checkpoint table" in (
            done.stderr
        )
        assert "Traceback" not in done.stderr
    assert db.read_bytes() == before
