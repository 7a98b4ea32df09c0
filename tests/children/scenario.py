"""The agent the durability and concurrency tests run, in the test process and in children.

Every tool appends what it does to an effects file (one line per event), so a test counts runs
across processes. The model is a :class:`ScriptedChatModel` policy, so every process that opens
the thread answers the same way:

* a goal mentioning "steps" -> one turn calling ``step_one``, ``step_two``, ``step_three``;
* any other goal -> one turn calling ``lookup`` then ``transfer`` (which pauses for approval);
* after tool results -> the answer ``"Finished: <observations joined by ' | '>"``.

The parent side (starting children, waiting for marker files, checking a conversation) lives
here too, so the three test files share it.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from psycopg.rows import dict_row
from pydantic import BaseModel

from dynavec_langgraph import ReActAgent, interrupt, tool
from dynavec_langgraph.savers import resolve_checkpointer, safe_serializer
from dynavec_langgraph.testing import ScriptedChatModel, Turn
from tests.children.warm import Child, Process

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 60.0
PAID = "Finished: rent: balance 500 | Transferred 100."
"""The final answer of the rent scenario once the transfer was approved."""


def thread_config(thread_id: str) -> RunnableConfig:
    """The run config of ``thread_id``."""
    return {"configurable": {"thread_id": thread_id}}


"""Seconds a test waits for a child or a marker before failing (never reached when it works)."""


class Approval(BaseModel):
    """The decision ``wire`` expects (its ``response_schema``)."""

    approved: bool
    note: str = ""


@dataclass
class Scenario:
    """Where the tools record what they do, and how ``transfer`` may be held.

    Attributes:
        effects: the file each tool event is appended to.
        on_transfer: called by ``transfer`` after it recorded its start, before it finishes
            (a test holds the resume lock there by blocking).
        block_step_two: ``step_two`` writes ``<effects>.step_two`` and then hangs (the crash
            test kills the process there).
    """

    effects: Path
    on_transfer: Callable[[Any], None] | None = None
    block_step_two: bool = False

    def record(self, line: str) -> None:
        with self.effects.open("a") as f:
            f.write(line + "\n")

    def lines(self) -> list[str]:
        return self.effects.read_text().splitlines() if self.effects.exists() else []

    @property
    def step_two_marker(self) -> Path:
        return Path(str(self.effects) + ".step_two")

    def tools(self) -> list[Any]:
        @tool
        def lookup(account: str) -> str:
            """Read an account's balance."""
            self.record(f"lookup {account}")
            return f"{account}: balance 500"

        @tool
        def transfer(amount: int) -> str:
            """Transfer money once a person approved it."""
            decision = interrupt("approve_transfer", {"amount": amount})
            self.record(f"transfer start {json.dumps(decision)}")
            if self.on_transfer is not None:
                self.on_transfer(decision)
            self.record(f"transfer done {json.dumps(decision)}")
            return f"Transferred {amount}." if decision == "approved" else f"Not sent: {decision}"

        @tool
        def wire(amount: int) -> str:
            """Wire money; the decision must be an Approval."""
            decision = interrupt("approve_wire", {"amount": amount}, response_schema=Approval)
            self.record(f"wire {decision.approved} {decision.note}")
            return f"Wired {amount}." if decision.approved else "Wire cancelled."

        def step(name: str) -> Callable[[], str]:
            def run() -> str:
                self.record(f"start {name}")
                if name == "step_two" and self.block_step_two:
                    self.step_two_marker.write_text(str(os.getpid()))
                    time.sleep(3600)  # killed here by the test
                self.record(f"done {name}")
                return f"{name} ok"

            run.__name__ = name
            run.__doc__ = f"Run {name}."
            return run

        return [
            lookup,
            transfer,
            wire,
            *(tool(step(n)) for n in ("step_one", "step_two", "step_three")),
        ]


def policy(messages: list[BaseMessage]) -> Turn:
    """The model: see the module docstring."""
    last = messages[-1]
    if isinstance(last, HumanMessage):
        goal = str(last.content)
        if "steps" in goal:
            return [{"name": n, "args": {}} for n in ("step_one", "step_two", "step_three")]
        if "wire" in goal:
            return [{"name": "wire", "args": {"amount": 70}}]
        return [
            {"name": "lookup", "args": {"account": "rent"}},
            {"name": "transfer", "args": {"amount": 100}},
        ]
    observations: list[str] = []
    for m in reversed(messages):
        if not isinstance(m, ToolMessage):
            break
        observations.insert(0, str(m.content))
    return "Finished: " + " | ".join(observations)


def make_agent(scenario: Scenario, saver: BaseCheckpointSaver[Any] | str) -> ReActAgent:
    """The test agent on ``saver`` (a LangGraph saver or a ``checkpointer=`` string)."""
    return ReActAgent(ScriptedChatModel(policy=policy), scenario.tools(), checkpointer=saver)


@contextmanager
def open_saver(db: str) -> Iterator[BaseCheckpointSaver[Any]]:
    """A saver using :func:`safe_serializer` on ``db``: a SQLite file path, a PostgreSQL URI,
    a ``dynamodb://`` URL (a ``DynamoDBCheckpointer``, adapted) or ``files:FOLDER`` (a user's
    own dynavec checkpointer with a cross-process lock, ``tests/children/file_checkpointer.py``,
    adapted)."""
    if db.startswith("files:"):
        from tests.children.file_checkpointer import FileCheckpointer

        files = resolve_checkpointer(FileCheckpointer(db.removeprefix("files:")))
        assert files is not None
        yield files
        return
    if db.startswith("dynamodb://"):
        adapted = resolve_checkpointer(db)
        assert adapted is not None
        yield adapted
        return
    if db.startswith("postgresql://"):
        with psycopg.connect(db, autocommit=True, prepare_threshold=0, row_factory=dict_row) as c:
            pg = PostgresSaver(c, serde=safe_serializer())
            pg.setup()
            yield pg
        return
    conn = sqlite3.connect(db, check_same_thread=False)
    try:
        yield SqliteSaver(conn, serde=safe_serializer())
    finally:
        conn.close()


def conversation(messages: Sequence[BaseMessage]) -> list[dict[str, Any]]:
    """Messages as JSON: type, content, tool call ids (assistant) or answered id (tool)."""
    out: list[dict[str, Any]] = []
    for m in messages:
        item: dict[str, Any] = {"type": m.type, "content": m.content}
        if isinstance(m, AIMessage):
            item["tool_calls"] = [c["id"] for c in m.tool_calls]
        if isinstance(m, ToolMessage):
            item["tool_call_id"] = m.tool_call_id
        out.append(item)
    return out


def conversation_problems(messages: Sequence[dict[str, Any]]) -> list[str]:
    """Why a conversation would be rejected: each assistant message's tool calls must be
    answered by exactly one tool message each, right after it, before any other message."""
    problems: list[str] = []
    answered: set[str] = set()
    i = 0
    while i < len(messages):
        m = messages[i]
        i += 1
        if m["type"] == "tool":
            problems.append(f"tool message {m['tool_call_id']} answers no open call")
            continue
        calls = list(m.get("tool_calls") or [])
        if not calls:
            continue
        open_calls = set(calls)
        while open_calls and i < len(messages) and messages[i]["type"] == "tool":
            call_id = messages[i]["tool_call_id"]
            if call_id not in open_calls or call_id in answered:
                problems.append(f"tool message {call_id} is unexpected or a duplicate")
            open_calls.discard(call_id)
            answered.add(call_id)
            i += 1
        if open_calls:
            problems.append(f"calls {sorted(open_calls)} are not answered before the next message")
    return problems


# --- parent side -------------------------------------------------------------------------


def child_argv(*args: str) -> list[str]:
    return [sys.executable, "-m", "tests.children.run_agent", *args]


def start_child(*args: str) -> Child:
    """Start ``run_agent`` with ``args`` (a new process, forked warm: tests/children/warm.py);
    it prints one JSON line on stdout."""
    return Child(child_argv(*args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish_child(proc: Process) -> dict[str, Any]:
    """Wait for a child and return its JSON result (fails with its stderr otherwise)."""
    out, err = proc.communicate(timeout=TIMEOUT)
    if proc.returncode != 0 or not out.strip():
        raise AssertionError(f"child failed ({proc.returncode}):\n{err}\n{out}")
    result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return result


def run_child(*args: str) -> dict[str, Any]:
    return finish_child(start_child(*args))


@dataclass
class Race:
    """How two processes resuming one pause at the same moment ended."""

    winner: str
    loser: str
    won: dict[str, Any]
    lost: dict[str, Any]
    loser_reached_the_tool: bool


def race_resumes(
    db: str,
    scenario: Scenario,
    thread_id: str,
    decisions: Mapping[str, Any],
    action: str = "resume",
) -> Race:
    """One child per ``{label: decision}`` resumes ``thread_id`` at the same moment (each is
    built and connected first; ``action="raw-resume"``: through the compiled graph). The
    winner is held inside the approved tool until the loser has finished, so the two really
    overlap; without a lock both would enter the tool and the loser would never finish (the
    race then fails on :data:`TIMEOUT`)."""
    gate = scenario.effects.parent / f"gate-{thread_id}"
    gate.mkdir()
    base = ("--db", db, "--effects", str(scenario.effects), "--gate", str(gate))
    procs = {
        label: start_child(*base, "--label", label, action, thread_id, json.dumps(decision))
        for label, decision in decisions.items()
    }
    try:
        for label, proc in procs.items():
            wait_for(gate / f"ready-{label}", proc)
        (gate / "go").touch()
        winner = race_winner(gate, procs)
        (loser,) = (label for label in procs if label != winner)
        lost = finish_child(procs[loser])  # while the winner is inside the approved tool
        (gate / "release").touch()
        won = finish_child(procs[winner])
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    return Race(winner, loser, won, lost, (gate / f"started-{loser}").exists())


def race_winner(gate: Path, procs: Mapping[str, Process]) -> str:
    """The label of the child that got into the approved tool (``gate/started-LABEL``) while
    the others raced it for the thread's lock. A loser may finish first (refused at once while
    the winner still reads the thread under the lock): then the winner is the child still
    running, and its marker is awaited."""
    deadline = time.monotonic() + TIMEOUT
    while True:
        for label in procs:
            if (gate / f"started-{label}").exists():
                return label
        running = [label for label, proc in procs.items() if proc.poll() is None]
        if len(running) < len(procs):
            if len(running) != 1:
                raise AssertionError(f"children {sorted(set(procs) - set(running))} exited")
            wait_for(gate / f"started-{running[0]}", procs[running[0]])
            return running[0]
        if time.monotonic() > deadline:
            raise AssertionError(f"no child reached the tool within {TIMEOUT} s")
        time.sleep(0.005)


def wait_for(path: Path, *procs: Process) -> None:
    """Wait until ``path`` exists; fail if a child exits first or it takes too long."""
    wait_for_any([path], *procs)


def wait_for_any(paths: Sequence[Path], *procs: Process) -> Path:
    """Wait until one of ``paths`` exists and return it (polling a file, not guessing a delay);
    fail if one of ``procs`` exits first or it takes longer than :data:`TIMEOUT`."""
    deadline = time.monotonic() + TIMEOUT
    while True:
        for path in paths:
            if path.exists():
                return path
        for proc in procs:
            if proc.poll() is not None and not any(p.exists() for p in paths):
                out, err = proc.communicate()
                raise AssertionError(
                    f"child exited ({proc.returncode}) before {paths}:\n{out}\n{err}"
                )
        if time.monotonic() > deadline:
            raise AssertionError(f"none of {paths} appeared within {TIMEOUT} s")
        time.sleep(0.005)
