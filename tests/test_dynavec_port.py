"""A dynavec app ported by changing one import (the transfer-funds example of
docs/compatibility.md §6).

``APP`` is the app as its dynavec user wrote it; the only line that differs from the dynavec
original is ``from dynavec_langgraph import ReActAgent, interrupt, tool`` (it was
``from dynavec.agents import ...``). The tests load it as a module, give it a scripted model,
and drive both resume styles, in one process and across processes with a SQLite file.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from types import ModuleType
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, ToolMessage

from dynavec_langgraph import MemoryCheckpointer
from dynavec_langgraph.testing import ScriptedChatModel, Turn

APP = '''\
"""Rent payments with a human approval step."""

from dynavec_langgraph import ReActAgent, interrupt, tool

BALANCE = {"amount": 1000}
LEDGER = []  # transfers that really happened


@tool()
def get_balance():
    """Current balance of the account."""
    return f"Balance: {BALANCE['amount']}"


@tool()
def transfer_funds(amount: int) -> str:
    """Transfer money. A person must approve every transfer."""
    decision = interrupt("approve_transfer", {"amount": amount})
    if decision == "approved":
        BALANCE["amount"] -= amount
        LEDGER.append(amount)
        return f"Transferred {amount}."
    return "Cancelled."


def make_agent(model, checkpointer=None):
    return ReActAgent(
        model,
        tools=[get_balance, transfer_funds],
        system_prompt="You pay the user's bills. Check the balance first.",
        max_steps=5,
        checkpointer=checkpointer,
    )


def pay_rent(agent, approve, thread_id="rent"):
    """Run, and answer each approval on the thread."""
    result = agent.run("pay rent", thread_id=thread_id)
    while result.termination_reason == "interrupted":
        decision = approve(result.interrupt_payload["payload"])
        result = agent.resume(thread_id=thread_id, human_decision=decision)
    return result


def pay_rent_from_messages(new_agent, approve):
    """The older style: keep the paused messages and resume them in a new agent."""
    result = new_agent().run("pay rent")
    while result.termination_reason == "interrupted":
        saved_messages = result.interrupt_payload["messages"]
        start_step = result.interrupt_payload["start_step"]
        decision = approve(result.interrupt_payload["payload"])
        result = new_agent().resume(
            saved_messages, start_step=start_step, human_decision=decision
        )
    return result


def start_payment(agent, thread_id):
    """A web request: start the run; return what the approver must see (or the answer)."""
    result = agent.run("pay rent", thread_id=thread_id)
    if result.termination_reason == "interrupted":
        return {"waiting_for": result.interrupt_payload["payload"]}
    return {"answer": result.output}


def decide(agent, thread_id, decision):
    """Another web request, maybe another process: apply the approver's decision."""
    result = agent.resume(thread_id=thread_id, human_decision=decision)
    if result.termination_reason == "interrupted":
        return {"waiting_for": result.interrupt_payload["payload"]}
    return {"answer": result.output, "observations": result.steps[0].observations}
'''

DRIVER = """\
import json
import sqlite3
import sys

from langgraph.checkpoint.sqlite import SqliteSaver

import rent_app
from dynavec_langgraph.testing import ScriptedChatModel
from tests.test_dynavec_port import bank_policy

command, db, thread_id = sys.argv[1:4]
saver = SqliteSaver(sqlite3.connect(db, check_same_thread=False))
agent = rent_app.make_agent(ScriptedChatModel(policy=bank_policy), checkpointer=saver)
if command == "start":
    out = rent_app.start_payment(agent, thread_id)
else:
    out = rent_app.decide(agent, thread_id, sys.argv[4])
print(json.dumps({"out": out, "ledger": rent_app.LEDGER}))
"""


def bank_policy(messages: list[BaseMessage]) -> Turn:
    """The model: check the balance and pay rent and deposit in one turn, then report."""
    if isinstance(messages[-1], HumanMessage):
        return [
            {"name": "get_balance", "args": {}},
            {"name": "transfer_funds", "args": {"amount": 700}},
            {"name": "transfer_funds", "args": {"amount": 100}},
        ]
    results = [m.content for m in messages if isinstance(m, ToolMessage)]
    return "Rent paid." if "Transferred 700." in results else "Rent not paid."


def load_app(tmp_path: Path) -> ModuleType:
    """The app as a fresh module (its own balance and ledger)."""
    path = tmp_path / "rent_app.py"
    path.write_text(APP)
    spec = importlib.util.spec_from_file_location(f"rent_app_{uuid.uuid4().hex}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Approver:
    """Approves the rent, refuses anything else, and remembers what it was asked."""

    def __init__(self) -> None:
        self.asked: list[Any] = []

    def __call__(self, payload: Any) -> str:
        self.asked.append(payload)
        return "approved" if payload == {"amount": 700} else "rejected"


def test_the_app_differs_from_dynavec_only_by_the_import() -> None:
    lines = [line for line in APP.splitlines() if "dynavec" in line]
    assert lines == ["from dynavec_langgraph import ReActAgent, interrupt, tool"]


def test_port_resumes_on_the_thread(tmp_path: Path) -> None:
    app, approve = load_app(tmp_path), Approver()
    model = ScriptedChatModel(policy=bank_policy)
    result = app.pay_rent(app.make_agent(model), approve)
    assert approve.asked == [{"amount": 700}, {"amount": 100}]
    assert (result.output, result.finished, result.termination_reason) == (
        "Rent paid.",
        True,
        "completed",
    )
    assert result.steps[0].observations == ["Balance: 1000", "Transferred 700.", "Cancelled."]
    assert (result.total_steps, result.tool_calls_count) == (2, 3)
    assert app.LEDGER == [700] and app.BALANCE == {"amount": 300}
    assert len(model.calls) == 2


def test_port_resumes_from_saved_messages(tmp_path: Path) -> None:
    app, approve = load_app(tmp_path), Approver()
    agents: list[Any] = []

    def new_agent() -> Any:
        agents.append(app.make_agent(ScriptedChatModel(policy=bank_policy)))
        return agents[-1]

    result = app.pay_rent_from_messages(new_agent, approve)
    assert len(agents) == 3  # the run, then one fresh agent per decision
    assert approve.asked == [{"amount": 700}, {"amount": 100}]
    assert result.output == "Rent paid."
    assert result.steps[0].observations == ["Balance: 1000", "Transferred 700.", "Cancelled."]
    assert (result.total_steps, result.tool_calls_count) == (2, 3)
    assert app.LEDGER == [700]


def test_port_with_a_dynavec_checkpointer_and_a_new_agent_per_request(tmp_path: Path) -> None:
    app = load_app(tmp_path)
    store = MemoryCheckpointer()

    def agent() -> Any:
        return app.make_agent(ScriptedChatModel(policy=bank_policy), checkpointer=store)

    assert app.start_payment(agent(), "rent-1") == {"waiting_for": {"amount": 700}}
    assert app.decide(agent(), "rent-1", "approved") == {"waiting_for": {"amount": 100}}
    assert app.LEDGER == [700]
    assert app.decide(agent(), "rent-1", "rejected") == {
        "answer": "Rent paid.",
        "observations": ["Balance: 1000", "Transferred 700.", "Cancelled."],
    }
    assert app.LEDGER == [700]
    assert store.list("rent-1"), "the dynavec checkpointer recorded nothing"


def test_port_across_processes_with_a_sqlite_file(tmp_path: Path) -> None:
    (tmp_path / "rent_app.py").write_text(APP)
    (tmp_path / "driver.py").write_text(DRIVER)
    db = str(tmp_path / "payments.sqlite")
    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(root)])}

    def process(*args: str) -> dict[str, Any]:
        done = subprocess.run(
            [sys.executable, str(tmp_path / "driver.py"), *args],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
        return result

    assert process("start", db, "rent") == {"out": {"waiting_for": {"amount": 700}}, "ledger": []}
    assert process("decide", db, "rent", "approved") == {
        "out": {"waiting_for": {"amount": 100}},
        "ledger": [700],
    }
    # a third process: the rent transfer (finished in process 2) is not run again
    assert process("decide", db, "rent", "rejected") == {
        "out": {
            "answer": "Rent paid.",
            "observations": ["Balance: 1000", "Transferred 700.", "Cancelled."],
        },
        "ledger": [],
    }
