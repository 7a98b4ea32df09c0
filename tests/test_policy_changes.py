"""An approval policy changed while a thread waits at its pause (a deploy while paused).

The stored answers are read again under the policy as it is now: a stored approval is
re-checked (an approver no longer allowed does not count, a raised ``approvals_required``
needs more), and a newer answer is never dropped: ``approvals_required`` lowered from 2 to 1
with one approval stored, the next answer decides, a rejection too. A deadline is the policy's
current one. Through ``ReActAgent.resume``, the raw graph (``Command(resume=...)`` keyed and
unkeyed, ``invoke(None)``) and ``inbox answer`` in other processes, on SQLite and PostgreSQL
(docs/approvals-in-production.md#a-policy-changed-while-a-pause-waits).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import BaseMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.types import Command

from dynavec_langgraph import ApprovalPolicy, ReActAgent, tool
from dynavec_langgraph._cli.db import open_saver
from dynavec_langgraph.approval import approver_decision, require_approval
from dynavec_langgraph.testing import ScriptedChatModel, Turn
from tests.approvals_graph import REQUIRED_ENV
from tests.test_approvals_production import GRAPHS, _cli, _ledger, _paused, _state

ran: list[int] = []
CONFIG: RunnableConfig = {"configurable": {"thread_id": "t"}}
REJECTED = "User rejected the tool call for `pay`."


@pytest.fixture(autouse=True)
def _fresh() -> None:
    ran.clear()


@tool
def pay(amount: int, to: str) -> str:
    """Pay ``amount`` to ``to``."""
    ran.append(amount)
    return f"Paid {amount} to {to}."


def _turn(messages: list[BaseMessage]) -> Turn:
    if isinstance(messages[-1], ToolMessage):
        return f"done: {messages[-1].content}"
    return [{"name": "pay", "args": {"amount": 5, "to": "Ann"}}]


class Clock:
    """The real time plus an offset the test moves."""

    def __init__(self) -> None:
        self.offset = timedelta()

    def __call__(self) -> datetime:
        return datetime.now(UTC) + self.offset


def _agent(saver: BaseCheckpointSaver[Any], **options: Any) -> ReActAgent:
    """The agent as deployed with these options (a new deploy: a new agent on the thread)."""
    options.setdefault("approvers", ["alice", "bob", "carol"])
    policy = ApprovalPolicy(**options)
    return ReActAgent(
        ScriptedChatModel(policy=_turn), [require_approval(pay, policy=policy)], checkpointer=saver
    )


@contextmanager
def _paused_with(db: str, **options: Any) -> Iterator[BaseCheckpointSaver[Any]]:
    """A thread ``t`` paused at ``approve_pay`` under ``options``, alice's approval stored."""
    with open_saver(db, must_exist=False) as saver:
        agent = _agent(saver, **options)
        agent.run("pay Ann 5", thread_id="t")
        agent.resume(thread_id="t", human_decision="approved", approver="alice")
        assert _approved_by(agent) == ["alice"] and ran == []
        yield saver


def _approved_by(agent: ReActAgent) -> list[str] | None:
    pending = agent.graph.get_state(CONFIG).interrupts
    return list(pending[0].value["approval"]["approved_by"]) if pending else None


def _answers(agent: ReActAgent) -> list[str]:
    values = agent.graph.get_state(CONFIG).values["messages"]
    return [str(m.content) for m in values if isinstance(m, ToolMessage)]


# --- approvals_required lowered from 2 to 1 -------------------------------------------------


@pytest.mark.parametrize("door", ["agent", "graph-keyed", "graph-unkeyed"])
def test_lowered_the_newer_rejection_still_rejects(db: str, door: str) -> None:
    with _paused_with(db, approvals_required=2) as saver:
        agent = _agent(saver, approvals_required=1)  # the deploy
        if door == "agent":
            agent.resume(thread_id="t", human_decision="rejected", approver="bob")
        else:
            answer = approver_decision("rejected", "bob")
            (pause,) = agent.graph.get_state(CONFIG).interrupts
            resume = {pause.id: answer} if door == "graph-keyed" else answer
            agent.graph.invoke(Command(resume=resume), CONFIG)
        assert ran == []
        (answer_text,) = _answers(agent)
        assert answer_text.startswith(REJECTED)
        assert agent.graph.get_state(CONFIG).interrupts == ()


def test_lowered_the_newer_approval_runs_the_call_once(db: str) -> None:
    with _paused_with(db, approvals_required=2) as saver:
        agent = _agent(saver, approvals_required=1)
        done = agent.resume(thread_id="t", human_decision="approved", approver="bob")
        assert ran == [5] and done.output == "done: Paid 5 to Ann."


def test_lowered_and_continued_without_an_answer_the_pause_is_asked_again(db: str) -> None:
    """No newer answer (``invoke(None)``): the stored approval alone does not end a pause that
    waited for more; it is asked again, showing it, and the next answer decides."""
    with _paused_with(db, approvals_required=2) as saver:
        agent = _agent(saver, approvals_required=1)
        agent.graph.invoke(None, CONFIG)
        assert ran == [] and _answers(agent) == []
        (pause,) = agent.graph.get_state(CONFIG).interrupts
        assert pause.value["node_id"] == "approve_pay"
        assert pause.value["approval"]["approved_by"] == ["alice"]
        assert pause.value["approval"]["approvals_required"] == 1
        done = agent.resume(thread_id="t", human_decision="approved", approver="bob")
        assert ran == [5] and done.output == "done: Paid 5 to Ann."


def test_lowered_from_3_to_2_a_rejection_after_two_approvals_rejects(tmp_path: Path) -> None:
    with _paused_with(str(tmp_path / "agent.db"), approvals_required=3) as saver:
        three = _agent(saver, approvals_required=3)
        three.resume(thread_id="t", human_decision="approved", approver="bob")
        assert _approved_by(three) == ["alice", "bob"]
        two = _agent(saver, approvals_required=2)
        two.resume(thread_id="t", human_decision="rejected", approver="carol")
        assert ran == [] and _answers(two)[0].startswith(REJECTED)


# --- approvals_required raised, approvers changed ---------------------------------------------


def test_raised_the_stored_approval_counts_and_more_are_needed(db: str) -> None:
    with _paused_with(db, approvals_required=2) as saver:
        agent = _agent(saver, approvals_required=3)
        agent.resume(thread_id="t", human_decision="approved", approver="bob")
        assert ran == [] and _approved_by(agent) == ["alice", "bob"]
        (pause,) = agent.graph.get_state(CONFIG).interrupts
        assert pause.value["approval"]["approvals_required"] == 3
        agent.resume(thread_id="t", human_decision="approved", approver="carol")
        assert ran == [5]


def test_an_approver_removed_while_paused_no_longer_counts(db: str) -> None:
    with _paused_with(db, approvals_required=2) as saver:
        agent = _agent(saver, approvals_required=2, approvers=["bob", "carol"])
        agent.resume(thread_id="t", human_decision="approved", approver="bob")
        assert ran == [] and _approved_by(agent) == ["bob"]  # alice's approval is not counted
        agent.resume(thread_id="t", human_decision="approved", approver="carol")
        assert ran == [5]


# --- the deadline changed -------------------------------------------------------------------


@pytest.mark.parametrize("change", ["shortened", "lengthened"])
def test_a_changed_deadline_is_the_one_applied(tmp_path: Path, change: str) -> None:
    clock = Clock()
    before, after = (3600, 60) if change == "shortened" else (60, 3600)
    with open_saver(str(tmp_path / "agent.db"), must_exist=False) as saver:
        agent = _agent(saver, expires_in=before, clock=clock)
        agent.run("pay Ann 5", thread_id="t")
        clock.offset = timedelta(seconds=120)  # past the shorter deadline, not the longer one
        deployed = _agent(saver, expires_in=after, clock=clock)
        done = deployed.resume(thread_id="t", human_decision="approved", approver="alice")
        if change == "shortened":
            assert ran == [] and "expired" in _answers(deployed)[0]
        else:
            assert ran == [5] and done.output == "done: Paid 5 to Ann."


# --- the command line: a deploy between two answers -------------------------------------------


@pytest.mark.service  # the command line in other processes
def test_inbox_answer_after_a_deploy_lowering_the_approvals(db: str, tmp_path: Path) -> None:
    spec = f"{GRAPHS}:configured"
    two, one = {REQUIRED_ENV: "2"}, {REQUIRED_ENV: "1"}
    _paused(db, spec, tmp_path, **two)
    base = ("inbox", "answer", "--db", db, "--graph", spec, "--thread", "t")
    first = _cli(tmp_path, *base, "--as", "alice", "--approve", **two)
    assert first.returncode == 0 and "still paused" in first.stdout, first.stderr

    rejected = _cli(tmp_path, *base, "--as", "bob", "--reject", **one)  # after the deploy
    assert rejected.returncode == 0, rejected.stderr
    assert _ledger(tmp_path) == []  # not run
    state = _state(db, spec)
    assert state.interrupts == ()
    tool_answers = [m.content for m in state.values["messages"] if isinstance(m, ToolMessage)]
    assert len(tool_answers) == 1 and str(tool_answers[0]).startswith(REJECTED)


# --- the policy unchanged: nothing held ------------------------------------------------------


def test_unchanged_unkeyed_answers_complete_at_the_newest_answer(db: str) -> None:
    """Two approvals sent unkeyed (as the Agent Chat UI does): the second runs the call, with
    no pause more (the unkeyed answer of the run is counted once it is read)."""
    with open_saver(db, must_exist=False) as saver:
        graph = _agent(saver, approvals_required=2).graph
        graph.invoke({"messages": [("user", "pay Ann 5")]}, CONFIG)
        graph.invoke(Command(resume=approver_decision("approved", "alice")), CONFIG)
        assert ran == []
        out = graph.invoke(Command(resume=approver_decision("approved", "bob")), CONFIG)
        assert ran == [5] and "__interrupt__" not in out
        assert out["messages"][-1].content == "done: Paid 5 to Ann."


def test_an_approval_followed_by_another_ask_of_the_call_is_not_held(tmp_path: Path) -> None:
    """A call that asks twice (a policy approval, then a plain question): the answers after
    the approval belong to the second ask, so the approval ends its own pause."""
    from dynavec_langgraph import create_react_agent, interrupt

    @tool
    def deploy(service: str) -> str:
        """Deploy once approved, then confirmed."""
        approved = interrupt("approve_deploy", {"service": service}, approvers=["alice"])
        confirmed = interrupt("confirm_deploy", {"service": service})
        ran.append(1)
        return f"{service}: {approved}, {confirmed}"

    def turn(messages: list[BaseMessage]) -> Turn:
        if isinstance(messages[-1], ToolMessage):
            return f"done: {messages[-1].content}"
        return [{"name": "deploy", "args": {"service": "api"}}]

    with open_saver(str(tmp_path / "agent.db"), must_exist=False) as saver:
        graph = create_react_agent(ScriptedChatModel(policy=turn), [deploy], checkpointer=saver)
        graph.invoke({"messages": [("user", "deploy api")]}, CONFIG)
        out = graph.invoke(Command(resume=approver_decision("approved", "alice")), CONFIG)
        assert [i.value["node_id"] for i in out["__interrupt__"]] == ["confirm_deploy"]
        out = graph.invoke(Command(resume="yes"), CONFIG)
        assert ran == [1] and out["messages"][-1].content == "done: api: approved, yes"
