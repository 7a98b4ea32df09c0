"""A failure inside an approval policy's own callables (a clock, an approver rule that raises).

The answer being checked is not applied: the caller who answered gets ``ApprovalPolicyError``
(a ``RuntimeError`` whose cause is the policy's exception), nothing runs, the model is told
nothing, the pause stays pending, and the same answer given again once the policy is fixed
runs the call once. Through ``ReActAgent.resume`` / ``aresume``, the raw graph's
``Command(resume=...)`` and ``dynavec-langgraph inbox answer`` (another process), on SQLite and
PostgreSQL (docs/approvals-in-production.md#when-the-policy-itself-fails).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.types import Command

from dynavec_langgraph import (
    ApprovalPolicy,
    ApprovalPolicyError,
    ReActAgent,
    create_react_agent,
    interrupt,
    tool,
)
from dynavec_langgraph._cli.db import open_saver
from dynavec_langgraph.approval import approver_decision, require_approval
from dynavec_langgraph.testing import ScriptedChatModel
from tests.approvals_graph import RULE_DOWN_ENV
from tests.test_approvals_production import GRAPHS, _cli, _ledger, _paused, _state

ran: list[int] = []
down: dict[str, bool] = {"rule": False, "clock": False}


@pytest.fixture(autouse=True)
def _fresh() -> None:
    ran.clear()
    down.update(rule=False, clock=False)


@tool
def pay(amount: int, to: str) -> str:
    """Pay ``amount`` to ``to``."""
    ran.append(amount)
    return f"Paid {amount} to {to}."


def rule(approver: Any, pause: Any) -> bool:
    """An approver directory that can be down."""
    if down["rule"]:
        raise ConnectionError("the approver directory is down")
    return bool(approver["name"] in ("alice", "bob"))


def clock() -> datetime:
    """A clock that can fail."""
    if down["clock"]:
        raise OSError("the time service is down")
    return datetime.now(UTC)


def _model() -> ScriptedChatModel:
    call = {"name": "pay", "args": {"amount": 5, "to": "Ann"}, "id": "c0"}
    return ScriptedChatModel(turns=[AIMessage("", tool_calls=[call]), "done"])


@contextmanager
def _saver(db: str) -> Iterator[BaseCheckpointSaver[Any]]:
    with open_saver(db, must_exist=False) as saver:
        yield saver


def _tool_messages(graph: Any) -> list[ToolMessage]:
    state = graph.get_state({"configurable": {"thread_id": "t"}})
    return [m for m in state.values["messages"] if isinstance(m, ToolMessage)]


def _pending(graph: Any) -> list[str]:
    state = graph.get_state({"configurable": {"thread_id": "t"}})
    return [i.value["node_id"] for i in state.interrupts]


POLICIES = {
    "rule": ApprovalPolicy(approvers=rule),
    "clock": ApprovalPolicy(expires_in=3600, clock=clock),
}


@pytest.mark.parametrize("part", ["rule", "clock"])
def test_agent_resume_raises_and_the_same_answer_works_once_fixed(db: str, part: str) -> None:
    with _saver(db) as saver:
        agent = ReActAgent(
            _model(), [require_approval(pay, policy=POLICIES[part])], checkpointer=saver
        )
        paused = agent.run("pay Ann 5", thread_id="t")
        assert paused.interrupt_payload is not None
        down[part] = True
        with pytest.raises(ApprovalPolicyError) as raised:
            agent.resume(thread_id="t", human_decision="approved", approver="alice")
        error = raised.value
        assert isinstance(error, RuntimeError)
        assert error.node_id == "approve_pay" and error.part == (
            "approvers" if part == "rule" else "clock"
        )
        assert isinstance(error.__cause__, ConnectionError if part == "rule" else OSError)
        assert "nothing ran" in str(error) and "answer again" in str(error)
        assert ran == [] and _tool_messages(agent.graph) == []  # the model is told nothing
        assert _pending(agent.graph) == ["approve_pay"]  # the pause stays

        down[part] = False
        done = agent.resume(thread_id="t", human_decision="approved", approver="alice")
        assert done.output == "done" and ran == [5]
        assert [m.content for m in _tool_messages(agent.graph)] == ["Paid 5 to Ann."]


def test_the_agents_policy_clock_raising_at_the_door(tmp_path: Path) -> None:
    """``approval_policy=`` on the agent: its doors read the clock before they answer (the
    deadline check) and the paused tool reads it: raising in either, the pause stays."""
    with _saver(str(tmp_path / "agent.db")) as saver:
        agent = ReActAgent(
            _model(), [require_approval(pay)], checkpointer=saver,
            approval_policy=ApprovalPolicy(expires_in=3600, clock=clock),
        )  # fmt: skip
        agent.run("pay Ann 5", thread_id="t")
        down["clock"] = True
        with pytest.raises(
            ApprovalPolicyError, match=r"approval policy .*failed: its clock raised OSError"
        ):
            agent.resume(thread_id="t", human_decision="approved")
        with pytest.raises(ApprovalPolicyError, match="the agent's approval policy failed"):
            agent.run("pay Bob 3", thread_id="t")  # run() settles expired pauses first
        assert ran == [] and _pending(agent.graph) == ["approve_pay"]
        down["clock"] = False
        assert agent.resume(thread_id="t", human_decision="approved").output == "done"
        assert ran == [5]


async def test_aresume_raises_the_same_error(tmp_path: Path) -> None:
    with _saver(str(tmp_path / "agent.db")) as saver:
        agent = ReActAgent(_model(), [require_approval(pay, approvers=rule)], checkpointer=saver)
        agent.run("pay Ann 5", thread_id="t")
        down["rule"] = True
        with pytest.raises(ApprovalPolicyError):
            await agent.aresume(thread_id="t", human_decision="approved", approver="bob")
        assert ran == [] and _pending(agent.graph) == ["approve_pay"]
        down["rule"] = False
        done = await agent.aresume(thread_id="t", human_decision="approved", approver="bob")
        assert done.output == "done" and ran == [5]


def test_raw_graph_resume_raises_and_the_pause_stays(db: str) -> None:
    """``Command(resume=...)``, keyed and unkeyed; a plain ``interrupt()`` with a policy too."""

    @tool
    def refund(amount: int) -> str:
        """Refund once approved."""
        answer = interrupt("approve_refund", {"amount": amount}, approvers=rule)
        ran.append(-amount)
        return f"refund {answer}"

    turns = [
        AIMessage("", tool_calls=[{"name": "refund", "args": {"amount": 7}, "id": "r0"}]),
        "refunded",
    ]
    config: RunnableConfig = {"configurable": {"thread_id": "t"}}
    with _saver(db) as saver:
        graph = create_react_agent(ScriptedChatModel(turns=turns), [refund], checkpointer=saver)
        graph.invoke({"messages": [("user", "refund 7")]}, config)
        (pause,) = graph.get_state(config).interrupts
        down["rule"] = True
        answer = approver_decision("approved", "alice")
        for resume in (answer, {pause.id: answer}):
            with pytest.raises(ApprovalPolicyError):
                graph.invoke(Command(resume=resume), config)
            assert ran == [] and _tool_messages(graph) == []
            assert [i.id for i in graph.get_state(config).interrupts] == [pause.id]
        down["rule"] = False
        out = graph.invoke(Command(resume={pause.id: answer}), config)
        assert out["messages"][-1].content == "refunded" and ran == [-7]


@pytest.mark.service  # the command line in other processes
def test_inbox_answer_exits_2_and_answering_again_works(db: str, tmp_path: Path) -> None:
    """``inbox answer`` in another process: one line, exit 2, the pause listed again."""
    spec = f"{GRAPHS}:configured"
    _paused(db, spec, tmp_path)
    base = ("inbox", "answer", "--db", db, "--graph", spec, "--thread", "t", "--as", "alice")

    failed = _cli(tmp_path, *base, "--approve", **{RULE_DOWN_ENV: "1"})
    assert failed.returncode == 2, failed.stdout + failed.stderr
    assert "approval policy of 'approve_pay' failed" in failed.stderr
    assert "ConnectionError: the approver directory is down" in failed.stderr
    assert "Traceback" not in failed.stderr and _ledger(tmp_path) == []
    (pending,) = _state(db, spec).interrupts
    assert pending.value["node_id"] == "approve_pay"

    assert RULE_DOWN_ENV not in os.environ  # the directory is back
    done = _cli(tmp_path, *base, "--approve")
    assert done.returncode == 0, done.stderr
    assert _ledger(tmp_path) == [{"tool": "pay", "to": "Ann", "decision": "ran"}]
    assert _state(db, spec).interrupts == ()
