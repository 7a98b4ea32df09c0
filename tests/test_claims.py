"""The guarantee inside the graph: two resumes of one pause run the approved tool once, also
when nobody but LangGraph drives the graph (``graph.invoke(Command(resume=...))``).

The tool node claims a resumed call before the tool runs
(``dynavec_langgraph/_exactly_once/claims.py``): the thread's resume lock, then a first-writer-wins
write on the checkpoint it resumes. The loser's ``invoke`` raises ``ConcurrentResumeError`` naming
the thread and the call. Tested with two processes on a SQLite file and on PostgreSQL, with a caller
that comes late (it read the paused checkpoint before the winner finished and reaches the tool
after), with a claimant that died mid-call (its claim is in doubt: the next resume runs the call
again, as before), with a re-asked approval (each answer is its own claim), with ``ReActAgent``
against the raw graph, and the LangGraph behaviours the claim reads are pinned.
"""

from __future__ import annotations

import gc
import json
import os
import sqlite3
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypedDict

import psycopg
import pytest
from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command
from langgraph.types import interrupt as lg_interrupt
from psycopg.rows import dict_row

from dynavec_langgraph import ConcurrentResumeError, ReActAgent, create_react_agent, interrupt, tool
from dynavec_langgraph._names import CLAIM_CHANNEL
from dynavec_langgraph._persistence.adapter import DynavecCheckpointSaver
from dynavec_langgraph.checkpoint import Checkpoint
from dynavec_langgraph.dynamodb import from_url
from dynavec_langgraph.testing import ScriptedChatModel
from tests.children.scenario import (
    PAID,
    Scenario,
    make_agent,
    open_saver,
    race_resumes,
)
from tests.children.scenario import thread_config as _cfg

DECISIONS = {"a": "approved", "b": "rejected"}


def _pause(db: str, scenario: Scenario, thread_id: str) -> None:
    with open_saver(db) as saver:
        paused = make_agent(scenario, saver).run("pay the rent", thread_id=thread_id)
    assert paused.termination_reason == "interrupted"


def test_two_processes_resume_the_raw_graph_at_once(db: str, tmp_path: Path) -> None:
    _raw_race(db, tmp_path)


def test_two_processes_resume_the_raw_graph_at_once_on_dynamodb(
    dynamodb_url: str, tmp_path: Path
) -> None:
    """The dynavec record adapter over DynamoDB: the claim is a write on a record the adapter
    rewrites whole, so it is a conditional save on the record's revision (a write that lost
    the race reads the record again and merges), and the first claim stays."""
    _raw_race(dynamodb_url, tmp_path)


def _raw_race(db: str, tmp_path: Path) -> None:
    scenario = Scenario(tmp_path / "effects")
    _pause(db, scenario, "t")
    race = race_resumes(db, scenario, "t", DECISIONS, action="raw-resume")

    assert race.lost["ok"] is False, race.lost
    assert race.lost["error"] == "ConcurrentResumeError"
    assert "thread 't'" in race.lost["message"]
    assert not race.loser_reached_the_tool
    assert race.won["ok"] is True
    decision = DECISIONS[race.winner]
    assert [line for line in scenario.lines() if line.startswith("transfer")] == [
        f"transfer start {json.dumps(decision)}",
        f"transfer done {json.dumps(decision)}",
    ]
    with open_saver(db) as saver:
        values = make_agent(scenario, saver).graph.get_state(_cfg("t")).values
    tools = [m.content for m in values["messages"] if m.type == "tool"]
    assert len(tools) == 2  # lookup, then one transfer answer
    if decision == "approved":
        assert values["messages"][-1].content == PAID


# --- in one process: the late caller, the dead claimant, re-asks ------------------------

RUNS: list[Any] = []


@pytest.fixture(autouse=True)
def _runs() -> Iterator[None]:
    RUNS.clear()
    yield


@tool
def transfer(amount: int) -> str:
    """Transfer money once a person approved it."""
    decision = interrupt("approve_transfer", {"amount": amount})
    RUNS.append(decision)
    if decision == "ask again":
        second = interrupt("approve_transfer_again", {"amount": amount})
        RUNS.append(second)
        return f"second answer {second}"
    return f"transfer {decision}"


def _model() -> ScriptedChatModel:
    def policy(messages: list[Any]) -> Any:
        if messages[-1].type == "tool":
            return "Finished."
        return AIMessage(
            content="",
            tool_calls=[{"name": "transfer", "args": {"amount": 5}, "id": "call_transfer"}],
        )

    return ScriptedChatModel(policy=policy)


def _sqlite(path: Path) -> SqliteSaver:
    saver = SqliteSaver(sqlite3.connect(path, check_same_thread=False))
    saver.setup()
    return saver


def _graph(saver: BaseCheckpointSaver[Any]) -> Any:
    return create_react_agent(_model(), [transfer], checkpointer=saver)


CFG: RunnableConfig = {"configurable": {"thread_id": "t"}}


def _paused(path: Path) -> None:
    out = _graph(_sqlite(path)).invoke({"messages": [("user", "pay")]}, CFG)
    assert out["__interrupt__"]


class _LateLoad(SqliteSaver):
    """Blocks the run right after it loaded the checkpoint it runs from (its first read), so
    another caller can finish the resume before this one reaches the tool node: LangGraph's
    loop's read, or the read of the package's check of a resume (``UnappliedResumeWarning``),
    which the loop takes instead of reading (``HistoryCache.hand_over``). Other reads pass
    through."""

    def __init__(self, path: Path, loaded: threading.Event, go_on: threading.Event) -> None:
        super().__init__(sqlite3.connect(path, check_same_thread=False))
        self.loaded, self.go_on, self.reads = loaded, go_on, 0

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        tup = super().get_tuple(config)
        if not _the_runs_load(sys._getframe(1)):
            return tup
        self.reads += 1
        if self.reads == 1:
            self.loaded.set()
            assert self.go_on.wait(30)
        return tup


_LOOP = os.path.join("langgraph", "pregel", "_loop.py")
"""The module of LangGraph's Pregel loop (langgraph 1.2), whose enter loads the checkpoint."""


def _frames(frame: Any) -> Iterator[Any]:
    while frame is not None:
        yield frame
        frame = frame.f_back


def _the_runs_load(frame: Any) -> bool:
    """Whether this read is the one the run's loop runs from: the loop's own, or the graph's
    resume check's (``AgentGraph._check_resume``), whose checkpoint the loop takes."""
    return any(
        f.f_code.co_filename.endswith(_LOOP) or f.f_code.co_name == "_check_resume"
        for f in _frames(frame)
    )


def test_a_caller_that_read_the_pause_before_the_winner_finished_is_refused(
    tmp_path: Path,
) -> None:
    path = tmp_path / "db.sqlite"
    _paused(path)
    loaded, go_on = threading.Event(), threading.Event()
    late: dict[str, Any] = {}

    def late_caller() -> None:
        try:
            late["out"] = _graph(_LateLoad(path, loaded, go_on)).invoke(
                Command(resume="rejected"), CFG
            )
        except ConcurrentResumeError as error:
            late["error"] = str(error)

    thread = threading.Thread(target=late_caller)
    thread.start()
    assert loaded.wait(30)
    out = _graph(_sqlite(path)).invoke(Command(resume="approved"), CFG)  # the winner, whole
    assert out["messages"][-1].content == "Finished."
    go_on.set()
    thread.join(30)
    assert "error" in late, late
    assert "call 'call_transfer' (transfer)" in late["error"]
    assert "nothing ran here" in late["error"]
    assert RUNS == ["approved"]
    assert _graph(_sqlite(path)).get_state(CFG).values["messages"][-1].content == "Finished."


class _Hooks:
    """What the tests below do at a racy point, on a saver of each caller's own (as if in two
    processes: no in-process lock is shared)."""

    def __init__(self) -> None:
        self.loaded = threading.Event()  # the late caller loaded the paused checkpoint
        self.go_on = threading.Event()  # ...and may go on
        self.ended = threading.Event()  # the winner's call ended: LangGraph saved its writes
        self.late_done = threading.Event()  # the late caller's invoke is over

    def let_the_late_caller_in(self) -> None:
        self.go_on.set()
        assert self.late_done.wait(30)


def _hooked(db: str, hooks: _Hooks, role: str, hold: str = "checkpoint") -> Any:
    """A saver on ``db`` that holds the late caller right after it loaded the checkpoint, and
    lets it in while the winner is held: right before the winner saves the checkpoint after
    the pause (``hold="checkpoint"``: its call has ended and its writes are saved by then), or
    right before it saves the writes of its call's new pause (``hold="pause"``: the call asked
    again; its claim is closed by then)."""
    base: type[Any] = SqliteSaver if not db.startswith("postgresql://") else PostgresSaver

    class Hooked(base):  # type: ignore[misc]
        reads = 0

        def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
            tup: CheckpointTuple | None = super().get_tuple(config)
            if not _the_runs_load(sys._getframe(1)):
                return tup  # another read (as _LateLoad)
            self.reads += 1
            if role == "late" and self.reads == 1:
                hooks.loaded.set()
                assert hooks.go_on.wait(30)
            return tup

        def put_writes(self, config: RunnableConfig, writes: Any, task_id: str, *a: Any) -> None:
            pausing = any(ch == "__interrupt__" for ch, _ in writes)
            if role == "winner" and hold == "pause" and pausing:
                hooks.let_the_late_caller_in()
            super().put_writes(config, writes, task_id, *a)
            if role == "winner" and any(ch == "messages" for ch, _ in writes):
                hooks.ended.set()  # the tool node's result, saved as the task's writes

        def put(self, config: RunnableConfig, *args: Any) -> RunnableConfig:
            if role == "winner" and hold == "checkpoint":
                assert hooks.ended.wait(30)
                hooks.let_the_late_caller_in()
            saved: RunnableConfig = super().put(config, *args)
            return saved

    if base is SqliteSaver:
        return Hooked(sqlite3.connect(db, check_same_thread=False))
    conn = psycopg.connect(db, autocommit=True, prepare_threshold=0, row_factory=dict_row)
    return Hooked(conn)


def _late_caller(db: str, hooks: _Hooks, resume: Any, late: dict[str, Any]) -> threading.Thread:
    """A caller that loads the paused checkpoint now and is held there (``hooks``); what its
    ``invoke`` returned or the refusal's text goes to ``late``."""

    def run() -> None:
        try:
            late["out"] = _graph(_hooked(db, hooks, "late")).invoke(Command(resume=resume), CFG)
        except ConcurrentResumeError as error:
            late["error"] = str(error)
        finally:
            hooks.late_done.set()

    thread = threading.Thread(target=run)
    thread.start()
    assert hooks.loaded.wait(30)
    return thread


def test_a_caller_that_reaches_the_tool_after_the_winners_call_ended_is_refused(
    db: str,
) -> None:
    """The window between the winner's call ending (the claim marked done, the lock released,
    LangGraph saving the task's writes, the decision among them) and its next checkpoint: a
    caller that loaded the pause before and takes the lock then finds the thread still on the
    paused checkpoint, with one more answer recorded for the call. That answer is the
    winner's, not an earlier one: the call is done, the caller is refused (it used to count
    it as a re-asked approval's and run the tool a second time with its own decision)."""
    with open_saver(db) as saver:
        _graph(saver).invoke({"messages": [("user", "pay")]}, CFG)
    hooks = _Hooks()
    late: dict[str, Any] = {}
    thread = _late_caller(db, hooks, "rejected", late)
    out = _graph(_hooked(db, hooks, "winner")).invoke(Command(resume="approved"), CFG)
    thread.join(30)
    assert out["messages"][-1].content == "Finished."
    assert RUNS == ["approved"], late  # the tool ran once, with the winner's decision
    assert "error" in late, late
    assert "call 'call_transfer' (transfer)" in late["error"]
    assert "nothing ran here" in late["error"]


def _paused_in(db: str) -> str:
    """Pause the thread on ``db``; the id of its interrupt."""
    with open_saver(db) as saver:
        out = _graph(saver).invoke({"messages": [("user", "pay")]}, CFG)
    return str(out["__interrupt__"][0].id)


def _still_asked_again(db: str) -> None:
    with open_saver(db) as saver:
        state = _graph(saver).get_state(CFG)
    assert [i.value["node_id"] for i in state.interrupts] == ["approve_transfer_again"]


@pytest.mark.parametrize("by_id", [False, True], ids=["plain", "by-interrupt-id"])
def test_a_caller_whose_pause_another_answered_and_the_tool_asked_again_is_refused(
    db: str, by_id: bool
) -> None:
    """Both callers read the first approval; the winner's answer makes the tool ask again (a
    second pause of the same call, on the same checkpoint). The late caller's decision
    answers the first approval, which is answered: refused, even though the thread is paused
    on this call again and one answer more is recorded (it used to claim the next answer and
    run the tool with its decision to the first approval)."""
    pause_id = _paused_in(db)
    hooks = _Hooks()
    late: dict[str, Any] = {}
    thread = _late_caller(db, hooks, {pause_id: "approved"} if by_id else "approved", late)
    with open_saver(db) as saver:
        again = _graph(saver).invoke(Command(resume="ask again"), CFG)
    assert [i.value["node_id"] for i in again["__interrupt__"]] == ["approve_transfer_again"]
    hooks.go_on.set()
    thread.join(30)
    assert RUNS == ["ask again"], late  # the late approval never reached the tool
    assert "error" in late, late
    assert "nothing ran here" in late["error"]
    _still_asked_again(db)


def test_a_caller_that_comes_while_the_winners_new_pause_is_being_saved_is_refused(
    db: str,
) -> None:
    """The same, in the window between the winner's claim closing (its call asked again) and
    LangGraph saving the new pause: the thread shows the first approval still unanswered, but
    the closed claim says it was answered. Refused as busy (it used to be read as a claim in
    doubt, and the tool ran again with the late decision)."""
    _paused_in(db)
    hooks = _Hooks()
    late: dict[str, Any] = {}
    thread = _late_caller(db, hooks, "approved", late)
    again = _graph(_hooked(db, hooks, "winner", hold="pause")).invoke(
        Command(resume="ask again"), CFG
    )
    thread.join(30)
    assert [i.value["node_id"] for i in again["__interrupt__"]] == ["approve_transfer_again"]
    assert RUNS == ["ask again"], late
    assert "error" in late, late
    assert "nothing ran here" in late["error"]
    _still_asked_again(db)


def test_a_claim_left_open_by_a_dead_caller_is_in_doubt_and_runs_again(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite"
    _paused(path)

    # the claim of the dead caller: written open, never finished (what a SIGKILL leaves)
    saver = _sqlite(path)
    graph = _graph(saver)
    tup = saver.get_tuple(CFG)
    assert tup is not None
    saver.put_writes(
        tup.config,
        [(CLAIM_CHANNEL, {"state": "open", "attempt": 0, "owner": "dead"})],
        "dynavec-claim:call_transfer:0:0",
    )
    out = graph.invoke(Command(resume="approved"), CFG)
    assert out["messages"][-1].content == "Finished."
    assert RUNS == ["approved"]  # ran again once: the dead caller's run was in doubt


def test_each_answer_of_a_re_asked_approval_is_its_own_claim(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite"
    _paused(path)
    graph = _graph(_sqlite(path))
    again = graph.invoke(Command(resume="ask again"), CFG)
    assert [i.value["node_id"] for i in again["__interrupt__"]] == ["approve_transfer_again"]
    done = graph.invoke(Command(resume="yes"), CFG)
    assert done["messages"][-1].content == "Finished."
    assert RUNS == ["ask again", "ask again", "yes"]
    tup = _sqlite(path).get_tuple(CFG)
    assert tup is not None


def test_react_agent_and_the_raw_graph_at_once(tmp_path: Path) -> None:
    """A package door (holding the thread's lock) and a raw invoke race: one applies."""
    path = tmp_path / "db.sqlite"
    _paused(path)
    inside, release = threading.Event(), threading.Event()

    @tool("transfer")
    def transfer_held(amount: int) -> str:
        """Transfer; held inside until released."""
        decision = interrupt("approve_transfer", {"amount": amount})
        RUNS.append(decision)
        inside.set()
        assert release.wait(30)
        return f"transfer {decision}"

    url = f"sqlite:///{path}"
    agent = ReActAgent(_model(), [transfer_held], checkpointer=url)
    result: dict[str, Any] = {}

    def by_agent() -> None:
        result["agent"] = agent.resume(human_decision="approved", thread_id="t")

    thread = threading.Thread(target=by_agent)
    thread.start()
    assert inside.wait(30)
    with pytest.raises(ConcurrentResumeError):
        create_react_agent(_model(), [transfer_held], checkpointer=_sqlite(path)).invoke(
            Command(resume="rejected"), CFG
        )
    release.set()
    thread.join(30)
    assert result["agent"].termination_reason == "completed"
    assert RUNS == ["approved"]


# --- what the claim reads from LangGraph, pinned ----------------------------------------


class _S(TypedDict):
    x: int


def test_the_langgraph_behaviours_the_claim_relies_on() -> None:
    """``_claims.py`` reads these (langgraph 1.2.24); a change of any fails here first."""
    seen: list[dict[str, Any]] = []
    answers: list[list[Any]] = []

    def node(state: _S, config: RunnableConfig) -> _S:
        seen.append(dict(config["configurable"]))
        answers.append(list(config["configurable"]["__pregel_scratchpad"].resume))
        lg_interrupt("first")
        lg_interrupt("second")
        return {"x": 1}

    builder = StateGraph(_S)
    builder.add_node("n", node)
    builder.add_edge(START, "n")
    builder.add_edge("n", END)
    saver = InMemorySaver()
    graph = builder.compile(checkpointer=saver)
    graph.invoke({"x": 0}, CFG)
    paused = saver.get_tuple(CFG)
    assert paused is not None
    paused_id = paused.config["configurable"]["checkpoint_id"]
    # a first-run task: not resuming; the checkpoint it runs from is in checkpoint_map
    assert not seen[0].get("__pregel_resuming")
    assert seen[0]["checkpoint_map"][""] == paused_id
    assert seen[0]["checkpoint_ns"].startswith("n:") and "|" not in seen[0]["checkpoint_ns"]
    # the pause is an "__interrupt__" write of the task; no resume values yet
    task = next(t for t, ch, _ in paused.pending_writes or [] if ch == "__interrupt__")
    assert not [v for t, ch, v in paused.pending_writes or [] if t == task and ch == "__resume__"]

    graph.invoke(Command(resume="one"), CFG)  # answers the first, asks the second
    asked = saver.get_tuple(CFG)
    assert asked is not None
    assert asked.config["configurable"]["checkpoint_id"] == paused_id  # no new checkpoint
    assert seen[1]["__pregel_resuming"] is True
    resumes = [v for t, ch, v in asked.pending_writes or [] if t == task and ch == "__resume__"]
    assert resumes == [["one"]]  # one answer so far: the next claim counts it

    # a write of another task id on the checkpoint: the first writer's stays, LangGraph ignores it
    saver.put_writes(asked.config, [(CLAIM_CHANNEL, {"owner": "A"})], "dynavec-claim:x:0:0")
    saver.put_writes(asked.config, [(CLAIM_CHANNEL, {"owner": "B"})], "dynavec-claim:x:0:0")
    claimed = saver.get_tuple(CFG)
    assert claimed is not None
    owners = [v for t, ch, v in claimed.pending_writes or [] if ch == CLAIM_CHANNEL]
    assert owners == [{"owner": "A"}]
    assert graph.invoke(Command(resume="two"), CFG) == {"x": 1}
    # the task's answers when the node starts (RunData.answers): the recorded ones, then a
    # decision given by interrupt id (a plain one stays apart until the pause consumes it)
    assert answers == [[], [], ["one"]]
    other: RunnableConfig = {"configurable": {"thread_id": "by-id"}}
    first = graph.invoke({"x": 0}, other)["__interrupt__"][0]
    graph.invoke(Command(resume={first.id: "uno"}), other)
    assert answers[-1] == ["uno"]


def test_sqlite_and_postgres_keep_the_first_claim(db: str) -> None:
    with open_saver(db) as saver:
        graph = _graph(saver)
        graph.invoke({"messages": [("user", "pay")]}, CFG)
        tup = saver.get_tuple(CFG)
        assert tup is not None
        for owner in ("A", "B"):
            saver.put_writes(tup.config, [(CLAIM_CHANNEL, {"owner": owner})], "dynavec-claim:c:0:0")
        again = saver.get_tuple(CFG)
        assert again is not None
        owners = [v for t, ch, v in again.pending_writes or [] if ch == CLAIM_CHANNEL]
        assert owners == [{"owner": "A"}]


def test_two_processes_writing_one_dynamodb_record_both_land(dynamodb_url: str) -> None:
    """The adapter rewrites a whole record per write; on DynamoDB each rewrite is a conditional
    put on the record's revision. Two checkpointer objects (two processes, as far as caches and
    locks go) interleave: B read the record, A's claim lands, then B saves. B's save fails its
    condition, B reads again and merges: A's claim stays (first writer wins), B's other write
    lands too."""
    first, second = from_url(dynamodb_url), from_url(dynamodb_url)
    a, b = DynavecCheckpointSaver(first), DynavecCheckpointSaver(second)
    _graph(a).invoke({"messages": [("user", "pay")]}, CFG)
    tup = a.get_tuple(CFG)
    assert tup is not None
    base = tup.config
    conflicts: list[bool] = []
    plain = second.save_if_unchanged

    def interleaved(record: Checkpoint, read: Checkpoint) -> bool:
        if not conflicts:  # B has read the record and is about to save: A writes first
            a.put_writes(base, [(CLAIM_CHANNEL, {"owner": "A"})], "dynavec-claim:c:0:0")
        saved = plain(record, read)
        conflicts.append(not saved)
        return saved

    second.save_if_unchanged = interleaved  # type: ignore[method-assign,assignment]
    b.put_writes(
        base,
        [(CLAIM_CHANNEL, {"owner": "B"}), ("other", {"owner": "B"})],
        "dynavec-claim:c:0:0",
    )
    assert conflicts == [True, False]  # B's first save lost the race, its second merged
    for saver in (a, DynavecCheckpointSaver(from_url(dynamodb_url))):
        after = saver.get_tuple(base)
        assert after is not None
        mine = [(ch, v) for t, ch, v in after.pending_writes or [] if t.startswith("dynavec")]
        assert mine == [(CLAIM_CHANNEL, {"owner": "A"}), ("other", {"owner": "B"})]
    assert _graph(a).invoke(Command(resume="approved"), CFG)["messages"][-1].content == "Finished."
    assert RUNS == ["approved"]


def test_save_if_unchanged_refuses_a_record_it_did_not_read(dynamodb_url: str) -> None:
    store = from_url(dynamodb_url)
    record = Checkpoint("t", node_id="init")
    store.save(record)
    with pytest.raises(ValueError, match="pass as read a record this DynamoDBCheckpointer"):
        store.save_if_unchanged(record, record)
    read = store.get("t")
    assert read is not None
    with pytest.raises(ValueError, match="use save\\(\\) for a new record"):
        store.save_if_unchanged(Checkpoint("t", node_id="other"), read)
    assert store.save_if_unchanged(Checkpoint("t", read.checkpoint_id, node_id="step_1"), read)
    assert not store.save_if_unchanged(Checkpoint("t", read.checkpoint_id, node_id="x"), read)
    again = store.get("t")
    assert again is not None and again.node_id == "step_1"
    del read, again
    gc.collect()
    assert store._read_revisions == {}  # a record let go is forgotten


def test_the_lock_says_whether_it_excludes_other_processes(tmp_path: Path) -> None:
    """The claim reads its write back (who got it) only where the lock is no more than
    in-process: a SQLite file's lock and a PostgreSQL advisory lock exclude other processes
    too, so no other caller can be writing the same claim."""
    from dynavec_langgraph._persistence.locks import resume_lock

    on_file = _sqlite(tmp_path / "a.db")
    in_memory = SqliteSaver(sqlite3.connect(":memory:", check_same_thread=False))
    kinds: dict[str, bool] = {}
    for name, saver in (
        ("file", on_file),
        ("sqlite memory", in_memory),
        ("memory", InMemorySaver()),
    ):
        with resume_lock(saver, "t") as exclusive:
            kinds[name] = exclusive
        with resume_lock(saver, "t") as again:  # the file is read once per saver, same answer
            assert again is exclusive
    assert kinds == {"file": True, "sqlite memory": False, "memory": False}
