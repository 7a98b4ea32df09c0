"""Approvals in production through a LangGraph API server (``langgraph dev`` serving
the graphs of ``tests/approvals_graph.py``): the approver policy is enforced by the paused tool
on the server and at ``RemoteReActAgent.resume(approver=)``; two approvers answer through two
clients; a run after a real deadline settles the expired approval first.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from dynavec_langgraph import ApproverRefusedError, ApproverRequiredError, StaleDecisionError
from dynavec_langgraph.approval import approver_decision
from dynavec_langgraph.remote import RemoteReActAgent, server_thread_id
from tests.langgraph_server import langgraph_dev

GRAPHS = Path(__file__).with_name("approvals_graph.py")
GRAPH = "pay_two"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """``langgraph dev`` on the approvals config; one that does not come up fails the test."""
    work = tmp_path_factory.mktemp("approvals_server")
    # in a fresh directory: langgraph dev keeps its threads in ./.langgraph_api and reads
    # graph paths relative to where it runs
    graphs = {"pay_two": f"{GRAPHS}:two_approvers", "pay_short": f"{GRAPHS}:short_deadline"}
    config = {"dependencies": [str(GRAPHS.parent)], "graphs": graphs}
    with langgraph_dev(work, config, first_on_path=()) as running:
        yield running.url, running.ledger


def _ran(ledger: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in ledger.read_text().splitlines()] if ledger.exists() else []


@pytest.mark.service
def test_two_approvers_through_the_server_with_the_policy_enforced_there(
    server: tuple[str, Path],
) -> None:
    url, ledger = server
    first, second = RemoteReActAgent(url, GRAPH, timeout=60), RemoteReActAgent(url, GRAPH)
    paused = first.run("pay 5 to Ann", thread_id="srv")
    assert paused.termination_reason == "interrupted"

    with pytest.raises(ApproverRefusedError, match="'mallory'"):  # the client's check
        first.resume("approved", thread_id="srv", approver="mallory")
    with pytest.raises(ApproverRequiredError) as required:  # no approver named: asked again
        second.resume("approved", thread_id="srv")
    assert not isinstance(required.value, StaleDecisionError)  # it was bound to no other pause
    assert str(required.value).startswith("'approve_pay' needs a named approver")
    assert _ran(ledger) == []

    # the server's check: a raw resume with a refused approver is asked again, nothing runs
    sid = server_thread_id("srv")
    state = first.sync_client.threads.get_state(sid)
    (pending,) = state["interrupts"]
    first.sync_client.runs.wait(
        sid,
        GRAPH,
        command={"resume": {pending["id"]: approver_decision("approved", "eve")}},
    )
    (again,) = first.sync_client.threads.get_state(sid)["interrupts"]
    assert again["value"]["approval"]["refused_approver"] == "eve"
    assert again["value"]["error"] == "approver 'eve' may not approve 'approve_pay'"
    assert _ran(ledger) == []

    # alice answers from the command line, in another process, through the server's API
    argv = [sys.executable, "-m", "dynavec_langgraph._cli", "inbox", "answer", "--server", url]
    answered = subprocess.run(
        [*argv, "--thread", "srv", "--as", "alice", "--approve"],
        env=dict(os.environ),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert answered.returncode == 0, answered.stderr
    assert "still paused" in answered.stdout
    (now,) = first.sync_client.threads.get_state(sid)["interrupts"]
    assert now["value"]["approval"]["approved_by"] == ["alice"]
    with pytest.raises(ApproverRefusedError, match="already approved"):
        second.resume("approved", thread_id="srv", approver="alice")

    done = second.resume("approved", thread_id="srv", approver="bob")
    assert done.termination_reason == "completed"
    assert _ran(ledger) == [{"tool": "pay", "to": "Ann", "decision": "ran"}]


@pytest.mark.service
def test_run_through_the_server_settles_an_expired_approval_first(
    server: tuple[str, Path],
) -> None:
    url, ledger = server
    agent = RemoteReActAgent(url, "pay_short", timeout=60)
    assert agent.run("pay 3 to Di", thread_id="late").termination_reason == "interrupted"
    sid = server_thread_id("late")
    (pending,) = agent.sync_client.threads.get_state(sid)["interrupts"]
    deadline = datetime.fromisoformat(pending["value"]["expires_at"])
    time.sleep(max(0.0, (deadline - datetime.now(UTC)).total_seconds()) + 0.3)

    again = agent.run("pay 4 to Ed", thread_id="late")

    values: Any = agent.sync_client.threads.get_state(sid)["values"]
    messages: list[dict[str, Any]] = values["messages"]
    answers = [m["content"] for m in messages if m["type"] == "tool"]
    assert len(answers) == 1 and "expired" in answers[0]
    assert again.termination_reason == "interrupted"  # the new message's call pauses
    assert [e for e in _ran(ledger) if e["to"] in ("Di", "Ed")] == []
