"""Approvals in production: expiry, who may approve, several approvers.

See docs/approvals-in-production.md.

In-process tests drive the deadline with an injected clock; ``test_sweeper_settles_a_real_short
_deadline`` waits for a real one; the two-approver tests answer from two other processes on
SQLite and PostgreSQL.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.config import get_config
from langgraph.types import Command, Interrupt

from dynavec_langgraph import (
    ApprovalPolicy,
    ApprovalTimeoutError,
    ApproverRefusedError,
    InvalidDecisionError,
    ReActAgent,
    StaleDecisionError,
    create_react_agent,
    interrupt,
    tool,
)
from dynavec_langgraph._cli.db import open_saver
from dynavec_langgraph._pauses.policy.spec import _uuid_time
from dynavec_langgraph.approval import (
    EXPIRE,
    ApprovalEvent,
    add_approval_listener,
    approver_decision,
    require_approval,
)
from dynavec_langgraph.audit import wait_for_deliveries
from dynavec_langgraph.interrupt import bind_decision
from dynavec_langgraph.testing import ScriptedChatModel
from tests.children.warm import run as warm_run

GRAPHS = Path(__file__).with_name("approvals_graph.py")


class Clock:
    """A controllable clock: the real time plus an offset the test moves."""

    def __init__(self) -> None:
        self.offset = timedelta()

    def __call__(self) -> datetime:
        return datetime.now(UTC) + self.offset

    def advance(self, **delta: float) -> None:
        self.offset += timedelta(**delta)


ran: list[dict[str, Any]] = []


@tool
def pay(amount: int, to: str) -> str:
    """Pay ``amount`` to ``to``."""
    ran.append({"amount": amount, "to": to})
    return f"Paid {amount} to {to}."


@pytest.fixture(autouse=True)
def _fresh_ledger() -> None:
    ran.clear()


def _calls(*amounts: int) -> ScriptedChatModel:
    turns: list[Any] = []
    for i, amount in enumerate(amounts):
        call = {"name": "pay", "args": {"amount": amount, "to": "Ann"}, "id": f"c{i}"}
        turns += [AIMessage("", tool_calls=[call]), f"done {i}"]
    return ScriptedChatModel(turns=turns)


def _agent(policy: ApprovalPolicy | None = None, tools: Any = None, *amounts: int) -> ReActAgent:
    return ReActAgent(
        _calls(*(amounts or (5,))),
        tools if tools is not None else [require_approval(pay)],
        checkpointer=InMemorySaver(),
        approval_policy=policy,
    )


def _pending(agent: ReActAgent, thread_id: str = "t") -> list[Interrupt]:
    return list(agent.graph.get_state({"configurable": {"thread_id": thread_id}}).interrupts)


def _tool_answers(agent: ReActAgent, thread_id: str = "t") -> list[str]:
    state = agent.graph.get_state({"configurable": {"thread_id": thread_id}})
    return [str(m.content) for m in state.values["messages"] if isinstance(m, ToolMessage)]


# --- expiry --------------------------------------------------------------------------------


def test_the_deadline_is_in_the_pause_value_and_an_answer_after_it_settles_as_expired() -> None:
    clock = Clock()
    agent = _agent(ApprovalPolicy(expires_in=timedelta(minutes=5), clock=clock))
    before = datetime.now(UTC)
    assert agent.run("pay", thread_id="t").termination_reason == "interrupted"
    (pause,) = _pending(agent)
    deadline = datetime.fromisoformat(pause.value["expires_at"])
    assert pause.value["approval"]["expires_at"] == pause.value["expires_at"]
    assert deadline.tzinfo is not None
    assert before + timedelta(minutes=5) - timedelta(seconds=5) <= deadline
    assert deadline <= datetime.now(UTC) + timedelta(minutes=5)
    when = deadline.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    assert pause.value["description"].startswith(f"Expires at {when}: after that it can no")

    clock.advance(minutes=6)
    result = agent.resume(thread_id="t", human_decision="approved")

    assert ran == []  # the action never runs after its deadline
    assert result.termination_reason == "completed"
    (answer,) = _tool_answers(agent)
    assert "expired" in answer and pause.value["expires_at"] in answer
    assert "The tool was not executed" in answer


def test_an_answer_before_the_deadline_runs_the_call() -> None:
    clock = Clock()
    agent = _agent(ApprovalPolicy(expires_in=300, clock=clock))
    agent.run("pay", thread_id="t")
    clock.advance(minutes=4)
    agent.resume(thread_id="t", human_decision="approved")
    assert ran == [{"amount": 5, "to": "Ann"}]


def test_run_on_a_thread_whose_approval_expired_settles_it_first() -> None:
    clock = Clock()
    agent = _agent(ApprovalPolicy(expires_in=60, clock=clock), None, 5, 6)
    agent.run("pay", thread_id="t")
    clock.advance(minutes=2)

    result = agent.run("and pay again", thread_id="t")

    assert ran == []
    assert "expired" in _tool_answers(agent)[0]
    # the settled thread went on with the new message: the model's next call pauses
    assert result.termination_reason == "interrupted"
    (pause,) = _pending(agent)
    assert pause.value["tool_call"]["args"] == {"amount": 6, "to": "Ann"}


def test_on_expire_raise_gives_dynavecs_approval_timeout_error_after_settling() -> None:
    clock = Clock()
    agent = _agent(ApprovalPolicy(expires_in=30, on_expire=EXPIRE, clock=clock))
    agent.run("pay", thread_id="t")
    clock.advance(seconds=31)

    with pytest.raises(ApprovalTimeoutError) as caught:
        agent.resume(thread_id="t", human_decision="approved")

    assert str(caught.value) == (
        "Approval request at node 'approve_pay' for thread 't' timed out after 30 seconds."
    )
    assert (caught.value.thread_id, caught.value.node_id) == ("t", "approve_pay")
    assert ran == []
    assert _pending(agent) == []  # settled: the tool was answered, the run went on
    assert "expired" in _tool_answers(agent)[0]


def test_plain_interrupt_takes_a_deadline_and_an_expiry_value() -> None:
    clock = Clock()
    deadline = (datetime.now(UTC) + timedelta(hours=1)).isoformat()

    @tool
    def ask_first(amount: int, to: str) -> str:
        """Pay after an approval."""
        answer = interrupt("approve_x", {"amount": amount}, expires_at=deadline, on_expire="late")
        return f"answer: {answer}"

    model = ScriptedChatModel(
        turns=[
            AIMessage(
                "", tool_calls=[{"name": "ask_first", "args": {"amount": 1, "to": "A"}, "id": "c"}]
            ),
            "ok",
        ]
    )
    agent = ReActAgent(
        model,
        [ask_first],
        checkpointer=InMemorySaver(),
        approval_policy=ApprovalPolicy(clock=clock),
    )
    agent.run("go", thread_id="t")
    (pause,) = _pending(agent)
    assert datetime.fromisoformat(pause.value["expires_at"]) == datetime.fromisoformat(deadline)
    clock.advance(hours=2)
    agent.resume(thread_id="t", human_decision="approved")
    assert _tool_answers(agent) == ["answer: late"]


def test_a_duration_counts_from_the_step_and_stays_put_across_re_asks() -> None:
    """Pins the mirrored LangGraph task config key ``checkpoint_map`` (langgraph 1.2): its
    checkpoint ids do not change when the task is resumed, so the deadline does not move."""
    seen: list[Any] = []

    @tool
    def probe(amount: int, to: str) -> str:
        """Read the task config."""
        seen.append(dict(get_config()["configurable"]["checkpoint_map"]))
        return str(interrupt("approve_probe", {}, expires_in=600, approvals_required=2))

    model = ScriptedChatModel(
        turns=[
            AIMessage(
                "", tool_calls=[{"name": "probe", "args": {"amount": 1, "to": "A"}, "id": "c"}]
            ),
            "ok",
        ]
    )
    agent = ReActAgent(model, [probe], checkpointer=InMemorySaver())
    agent.run("go", thread_id="t")
    first = _pending(agent)[0].value["expires_at"]
    time.sleep(0.05)
    agent.resume(thread_id="t", human_decision="approved", approver="alice")
    (again,) = _pending(agent)
    assert again.value["approval"]["approved_by"] == ["alice"]
    assert again.value["expires_at"] == first
    assert len(seen) == 2 and seen[0] == seen[1] and seen[0]
    stamp = max(t for t in (_uuid_time(v) for v in seen[0].values()) if t is not None)
    assert datetime.fromisoformat(first) == stamp + timedelta(seconds=600)


def test_bad_expiry_options_are_refused_with_what_to_do() -> None:
    with pytest.raises(ValueError, match="not both"):
        ApprovalPolicy(expires_in=1, expires_at="2030-01-01T00:00:00+00:00")
    with pytest.raises(ValueError, match="positive duration"):
        ApprovalPolicy(expires_in=0)
    with pytest.raises(ValueError, match="aware datetime"):
        ApprovalPolicy(expires_at=datetime(2030, 1, 1))
    with pytest.raises(ValueError, match="ISO 8601"):
        ApprovalPolicy(expires_at="tomorrow")
    with pytest.raises(ValueError, match="approvals_required"):
        ApprovalPolicy(approvals_required=0)
    with pytest.raises(ValueError, match="list of names"):
        ApprovalPolicy(approvers="alice")
    with pytest.raises(TypeError, match="needs the tools as a list or a ToolRegistry"):
        create_react_agent(_calls(1), None, approval_policy=ApprovalPolicy(expires_in=1))


# --- who may approve -------------------------------------------------------------------------


def test_a_refused_approver_gets_a_typed_error_nothing_runs_and_the_pause_stays() -> None:
    agent = _agent(ApprovalPolicy(approvers=["alice", "role:finance"]))
    agent.run("pay", thread_id="t")
    (pause,) = _pending(agent)
    assert pause.value["approval"]["approvers"] == ["alice", "role:finance"]

    with pytest.raises(ApproverRefusedError, match="'mallory' may not answer 'approve_pay'"):
        agent.resume(thread_id="t", human_decision="approved", approver="mallory")
    assert ran == []
    assert [i.id for i in _pending(agent)] == [pause.id]  # checked before anything ran

    with pytest.raises(InvalidDecisionError, match="needs a named approver"):
        agent.resume(thread_id="t", human_decision="approved")
    assert ran == []

    agent.resume(
        thread_id="t", human_decision="approved", approver={"name": "carol", "roles": ["finance"]}
    )
    assert ran == [{"amount": 5, "to": "Ann"}]


def test_the_graph_enforces_the_policy_for_raw_resumes_and_config_approvers() -> None:
    graph = create_react_agent(
        _calls(5),
        [require_approval(pay, approvers=["alice"])],
        checkpointer=InMemorySaver(),
    )
    config: Any = {"configurable": {"thread_id": "g"}}
    graph.invoke({"messages": [("user", "pay")]}, config)
    (pause,) = graph.get_state(config).interrupts

    graph.invoke(Command(resume={pause.id: approver_decision("approved", "mallory")}), config)
    (again,) = graph.get_state(config).interrupts
    assert again.id != pause.id and ran == []
    assert again.value["error"] == "approver 'mallory' may not approve 'approve_pay'"
    assert again.value["approval"]["refused_approver"] == "mallory"

    allowed: Any = {"configurable": {"thread_id": "g", "approver": "alice"}}
    graph.invoke(Command(resume={again.id: "approved"}), allowed)
    assert ran == [{"amount": 5, "to": "Ann"}]
    assert graph.get_state(config).interrupts == ()


def test_a_callable_rule_gets_the_approver_and_the_pause() -> None:
    asked: list[tuple[str, Any]] = []

    def rule(approver: Any, pause: Any) -> bool:
        asked.append((approver["name"], pause["tool_call"]["args"]["amount"]))
        return bool(approver["name"] != pause["tool_call"]["args"]["to"].lower())

    agent = _agent(ApprovalPolicy(approvers=rule))
    agent.run("pay", thread_id="t")
    assert _pending(agent)[0].value["approval"]["approvers"] == "callable"
    with pytest.raises(ApproverRefusedError, match="'ann'"):
        agent.resume(thread_id="t", human_decision="approved", approver="ann")
    assert ran == []
    agent.resume(thread_id="t", human_decision="approved", approver="bob")
    assert ran == [{"amount": 5, "to": "Ann"}]
    assert ("ann", 5) in asked and ("bob", 5) in asked


def test_policies_per_node_id_apply_to_their_node_only() -> None:
    @tool(asks=["approve_other"])  # its node id declared: the key is known (not called here)
    def other() -> str:
        """Another approval."""
        return str(interrupt("approve_other", {}))

    policy: Any = {"approve_other": ApprovalPolicy(approvers=["alice"])}
    agent = _agent(policy, [require_approval(pay), other])
    agent.run("pay", thread_id="t")
    assert "approval" not in _pending(agent)[0].value
    agent.resume(thread_id="t", human_decision="approved", approver="anyone")
    assert ran == [{"amount": 5, "to": "Ann"}]


# --- several approvers -----------------------------------------------------------------------


def test_two_approvers_partial_approval_is_in_the_pause_and_a_duplicate_is_refused() -> None:
    events: list[ApprovalEvent] = []
    remove = add_approval_listener(events.append)
    try:
        agent = _agent(ApprovalPolicy(approvals_required=2))
        agent.run("pay", thread_id="t")
        (first,) = _pending(agent)
        assert first.value["approval"]["approved_by"] == []
        result = agent.resume(thread_id="t", human_decision="approved", approver="alice")
        assert result.termination_reason == "interrupted" and ran == []
        (second,) = _pending(agent)
        assert second.value["approval"]["approved_by"] == ["alice"]
        assert second.value["error"] is None
        assert second.value["description"].startswith(
            "Needs 2 approvals by different approvers: 1 of 2 approvals in (alice).\n\n"
            "Who may approve: any named approver."
        )

        with pytest.raises(ApproverRefusedError, match="already approved"):
            agent.resume(thread_id="t", human_decision="approved", approver="alice")
        agent.resume(thread_id="t", human_decision={"type": "approve"}, approver="bob")
    finally:
        remove()
    assert ran == [{"amount": 5, "to": "Ann"}]
    assert [(e.kind, e.approver, e.approved_by) for e in events] == [
        ("approved", "alice", ("alice",))
    ]


def test_any_rejection_rejects_and_an_edit_is_refused_with_several_approvers() -> None:
    agent = _agent(ApprovalPolicy(approvals_required=2))
    agent.run("pay", thread_id="t")
    agent.resume(thread_id="t", human_decision="approved", approver="alice")
    edit = {"type": "edit", "edited_action": {"name": "pay", "args": {"amount": 1, "to": "Bo"}}}
    with pytest.raises(InvalidDecisionError, match="an edit cannot be approved by 2 approvers"):
        agent.resume(thread_id="t", human_decision=edit, approver="bob")
    assert _pending(agent)[0].value["approval"]["approved_by"] == ["alice"]
    agent.resume(thread_id="t", human_decision="rejected", approver="bob")
    assert ran == []
    assert "rejected" in _tool_answers(agent)[0]


def test_a_pause_without_options_is_the_plain_pause() -> None:
    agent = _agent()
    agent.run("pay", thread_id="t")
    (pause,) = _pending(agent)
    assert "approval" not in pause.value and "expires_at" not in pause.value
    agent.resume(thread_id="t", human_decision="approved", approver="whoever")
    assert ran == [{"amount": 5, "to": "Ann"}]


# --- other processes: the command line on SQLite and PostgreSQL -------------------------------


def _cli(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return warm_run(
        [sys.executable, "-m", "dynavec_langgraph._cli", *args],
        cwd=tmp_path,
        env={**os.environ, "DYNAVEC_DEMO_LEDGER": str(tmp_path / "ledger.jsonl"), **env},
        timeout=180,
    )


def _paused(db: str, spec: str, tmp_path: Path, **env: str) -> None:
    """Start the thread ``t`` in another process: it pauses at ``approve_pay``."""
    code = (
        "import sys; from dynavec_langgraph._approvals.inbox import graph_on, load_graph; "
        "from dynavec_langgraph._cli.db import open_saver\n"
        "with open_saver(sys.argv[1], must_exist=False) as saver:\n"
        "    app = graph_on(load_graph(sys.argv[2]), saver)\n"
        "    app.invoke({'messages': [('user', 'pay 5 to Ann')]}, "
        "{'configurable': {'thread_id': 't'}})\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, db, spec],
        cwd=tmp_path,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr


def _ledger(tmp_path: Path) -> list[dict[str, Any]]:
    path = tmp_path / "ledger.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _state(db: str, spec: str) -> Any:
    from dynavec_langgraph._approvals.inbox import graph_on, load_graph

    with open_saver(db, must_exist=True) as saver:
        return graph_on(load_graph(spec), saver).get_state({"configurable": {"thread_id": "t"}})


def test_two_approvers_in_two_processes(db: str, tmp_path: Path) -> None:
    spec = f"{GRAPHS}:two_approvers"
    _paused(db, spec, tmp_path)
    base = ("inbox", "answer", "--db", db, "--graph", spec, "--thread", "t")

    refused = _cli(tmp_path, *base, "--as", "mallory", "--approve")
    assert refused.returncode == 2, refused.stdout
    assert "approver 'mallory' may not answer 'approve_pay'" in refused.stderr

    first = _cli(tmp_path, *base, "--as", "alice", "--approve")
    assert first.returncode == 0, first.stderr
    assert "still paused" in first.stdout
    (pause,) = _state(db, spec).interrupts
    assert pause.value["approval"]["approved_by"] == ["alice"]
    assert _ledger(tmp_path) == []

    again = _cli(tmp_path, *base, "--as", "alice", "--approve")
    assert again.returncode == 2 and "already approved" in again.stderr

    second = _cli(tmp_path, *base, "--as", "bob", "--approve")
    assert second.returncode == 0, second.stderr
    assert _ledger(tmp_path) == [{"tool": "pay", "to": "Ann", "decision": "ran"}]
    assert _state(db, spec).interrupts == ()


@pytest.mark.service
@pytest.mark.timing  # a real 10 s deadline: run on a quiet machine
def test_sweeper_settles_a_real_short_deadline(tmp_path: Path) -> None:
    db = str(tmp_path / "agent.db")
    spec = f"{GRAPHS}:short_deadline"
    _paused(db, spec, tmp_path, DYNAVEC_TEST_EXPIRES_IN="10")
    (pause,) = _state(db, spec).interrupts
    deadline = datetime.fromisoformat(pause.value["expires_at"])

    short = {"DYNAVEC_TEST_EXPIRES_IN": "10"}
    early = _cli(tmp_path, "inbox", "expire", "--db", db, "--graph", spec, "--json", **short)
    assert early.returncode == 0, early.stderr
    assert json.loads(early.stdout) == []  # not yet expired: nothing touched
    assert [i.id for i in _state(db, spec).interrupts] == [pause.id]

    time.sleep(max(0.0, (deadline - datetime.now(UTC)).total_seconds()) + 0.2)
    swept = _cli(tmp_path, "inbox", "expire", "--db", db, "--graph", spec, **short)
    assert swept.returncode == 0, swept.stderr
    assert "1 expired approval(s) settled." in swept.stdout
    after = _state(db, spec)
    assert after.interrupts == ()
    answers = [m.content for m in after.values["messages"] if isinstance(m, ToolMessage)]
    assert len(answers) == 1 and "expired" in str(answers[0])
    assert _ledger(tmp_path) == []

    late = _cli(
        tmp_path,
        "inbox",
        "answer",
        "--db",
        db,
        "--graph",
        spec,
        "--thread",
        "t",
        "--approve",
        **short,
    )
    assert late.returncode == 2 and "not paused" in late.stderr
    assert _ledger(tmp_path) == []


@pytest.mark.service
@pytest.mark.timing  # a real 10 s deadline: run on a quiet machine
def test_an_answer_through_the_inbox_after_a_real_deadline_is_settled(tmp_path: Path) -> None:
    db = str(tmp_path / "agent.db")
    spec = f"{GRAPHS}:short_deadline"
    _paused(db, spec, tmp_path, DYNAVEC_TEST_EXPIRES_IN="0.5")
    time.sleep(0.8)
    done = _cli(
        tmp_path,
        "inbox",
        "answer",
        "--db",
        db,
        "--graph",
        spec,
        "--thread",
        "t",
        "--approve",
        DYNAVEC_TEST_EXPIRES_IN="0.5",
    )
    assert done.returncode == 0, done.stderr
    assert "expired" in done.stdout
    assert _ledger(tmp_path) == []


async def test_the_async_and_streaming_doors_take_the_approver() -> None:
    agent = _agent(ApprovalPolicy(approvers=["alice", "carol"], approvals_required=2), None, 5)
    await agent.arun("pay", thread_id="t")
    with pytest.raises(ApproverRefusedError):
        await agent.aresume(thread_id="t", human_decision="approved", approver="bob")
    await agent.aresume(thread_id="t", human_decision="approved", approver="alice")
    assert _pending(agent)[0].value["approval"]["approved_by"] == ["alice"]
    with pytest.raises(ApproverRefusedError, match="already approved"):
        list(agent.stream_resume(thread_id="t", human_decision="approved", approver="alice"))
    assert ran == []


def test_with_several_approvers_the_config_approver_is_not_used() -> None:
    """Earlier answers are replayed under the latest run's config: only the resume value may
    say who gave them."""
    graph = create_react_agent(
        _calls(5), [require_approval(pay, approvals_required=2)], checkpointer=InMemorySaver()
    )
    config: Any = {"configurable": {"thread_id": "g", "approver": "alice"}}
    graph.invoke({"messages": [("user", "pay")]}, config)
    (pause,) = graph.get_state(config).interrupts
    graph.invoke(Command(resume={pause.id: "approved"}), config)
    (again,) = graph.get_state(config).interrupts
    assert "needs a named approver" in again.value["error"]
    assert again.value["approval"]["approved_by"] == []
    assert ran == []


def test_a_policy_for_the_paused_node_applies_from_the_agent() -> None:
    agent = _agent({"approve_pay": ApprovalPolicy(approvers=["role:ops"])})  # type: ignore[arg-type]
    agent.run("pay", thread_id="t")
    assert _pending(agent)[0].value["approval"]["approvers"] == ["role:ops"]
    with pytest.raises(ApproverRefusedError):
        agent.resume(thread_id="t", human_decision="approved", approver="bob")
    agent.resume(thread_id="t", human_decision="approved", approver={"name": "o", "roles": ["ops"]})
    assert ran == [{"amount": 5, "to": "Ann"}]


# --- with the audit trail and notification (docs/audit-and-notifications.md) ---------------


def test_policy_pauses_are_audited_and_notified() -> None:
    """A pause with a policy is recorded and notified like any other: the pause, each partial
    approval with its approver, a refused approver, the last approval; an expiry too."""
    sent: list[dict[str, Any]] = []
    agent = ReActAgent(
        _calls(5),
        [require_approval(pay)],
        checkpointer=InMemorySaver(),
        approval_policy=ApprovalPolicy(approvals_required=2, approvers=["alice", "bob"]),
        audit=True,
        notify=sent.append,
    )
    agent.run("pay", thread_id="t")
    agent.resume(thread_id="t", human_decision="approved", approver="alice")
    with pytest.raises(ApproverRefusedError):
        agent.resume(thread_id="t", human_decision="approved", approver="mallory")
    agent.resume(thread_id="t", human_decision="approved", approver="bob")
    assert ran == [{"amount": 5, "to": "Ann"}]
    trail = [(e.kind, e.who, e.outcome) for e in agent.audit("t")]
    assert trail[0][0] == "paused"
    assert ("decision", "alice", "approval 1 of 2") in trail
    assert ("decision", "bob", "approval 2 of 2") in trail
    assert ("refused", "mallory", "approver 'mallory' refused") in trail
    wait_for_deliveries()
    first, second = (b for b in sent if b["event"] in ("paused", "reasked"))
    assert first["node_id"] == second["node_id"] == "approve_pay"
    assert first["approvals"] == {"approved_by": [], "required": 2}
    assert second["approvals"] == {"approved_by": ["alice"], "required": 2}

    clock = Clock()
    ran.clear()
    expiring = ReActAgent(
        _calls(7),
        [require_approval(pay)],
        checkpointer=InMemorySaver(),
        approval_policy=ApprovalPolicy(expires_in=60, clock=clock),
        audit=True,
        notify=sent.append,
    )
    sent.clear()
    expiring.run("pay", thread_id="e")
    clock.advance(minutes=2)
    expiring.resume(thread_id="e", human_decision="approved")
    assert ran == []
    kinds = [(e.kind, e.outcome) for e in expiring.audit("e")]
    assert kinds[0][0] == "paused" and kinds[-1][0] == "expired" and "expired" in kinds[-1][1]
    wait_for_deliveries()
    assert [b["event"] for b in sent] == ["paused", "expired"]
    assert sent[0]["deadline"] and sent[1]["deadline"] == sent[0]["deadline"]


def test_policy_pauses_carry_the_review_digest_and_refuse_a_stale_decision() -> None:
    """A pause with a policy is bound like any other (docs/approval-uis.md, the review digest):
    a decision bound to another pause is refused at the door and in the paused tool, with the
    approver's envelope outside or inside the binding; the audit trail carries the digest."""
    agent = ReActAgent(
        _calls(5),
        [require_approval(pay)],
        checkpointer=InMemorySaver(),
        approval_policy=ApprovalPolicy(approvals_required=2),
        audit=True,
    )
    paused = agent.run("pay", thread_id="t")
    assert paused.interrupt_payload is not None
    digest = paused.interrupt_payload["review_digest"]
    other = "0" * 32
    with pytest.raises(StaleDecisionError):
        agent.resume(thread_id="t", human_decision=bind_decision("approved", other), approver="a")
    config: Any = {"configurable": {"thread_id": "t"}}
    (pending,) = agent.graph.get_state(config).interrupts
    for stale in (  # raw resumes reach the paused tool: refused there, the same digest again
        approver_decision(bind_decision("approved", other), "a"),
        bind_decision(approver_decision("approved", "a"), other),
    ):
        agent.graph.invoke(Command(resume={pending.id: stale}), config)
        (pending,) = agent.graph.get_state(config).interrupts
        assert pending.value["review_digest"] == digest and "stale" in pending.value["error"]
        assert pending.value["approval"]["approved_by"] == [] and ran == []
    agent.resume(thread_id="t", human_decision=bind_decision("approved", digest), approver="a")
    (pending,) = agent.graph.get_state(config).interrupts
    assert pending.value["approval"]["approved_by"] == ["a"]
    agent.resume(thread_id="t", human_decision="approved", approver="b")
    assert ran == [{"amount": 5, "to": "Ann"}]
    assert {e.digest for e in agent.audit("t") if e.kind == "paused"} == {digest}


async def test_on_expire_raise_from_the_streaming_doors() -> None:
    """``stream_resume`` / ``astream_resume`` raise ``ApprovalTimeoutError`` as ``resume`` does,
    after the events of the run that settled the pause."""
    for name in ("sync", "async"):
        ran.clear()
        clock = Clock()
        agent = _agent(ApprovalPolicy(expires_in=30, on_expire=EXPIRE, clock=clock))
        agent.run("pay", thread_id=name)
        clock.advance(seconds=31)
        events: list[Any] = []
        with pytest.raises(ApprovalTimeoutError, match="timed out after 30 seconds"):
            if name == "sync":
                events.extend(agent.stream_resume(thread_id=name, human_decision="approved"))
            else:
                async for event in agent.astream_resume(thread_id=name, human_decision="approved"):
                    events.append(event)
        assert events and ran == [] and _pending(agent, name) == []
