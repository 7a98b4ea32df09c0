"""Approvals with a policy answered in the approval UIs' formats, through ``langgraph dev``
serving tests/langgraph_ui.json (``expiring_agent``, ``two_approver_agent`` of
:mod:`tests.ui_graph`); tests/test_browser.py clicks the same pauses in the Agent Chat UI.

An expired approval answered by a UI is settled as expired (the tool never runs, the thread ends
idle); a UI's answer to a pause that needs named approvers is asked again with the reason and
what to do in ``error`` and ``description``; named approvers then answer it through the
package's doors (``RemoteReActAgent.aresume(approver=)``, ``inbox answer --server --as``).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from langgraph_sdk import get_client

from dynavec_langgraph.remote import RemoteReActAgent
from tests import ui_graph
from tests.review import says_why_first
from tests.test_approval_ui_gaps import _paused, _pending, _wait, ui_server
from tests.test_studio import Studio

__all__ = ["ui_server"]  # the langgraph dev fixture, shared with its test file

REPO = Path(__file__).resolve().parents[1]
ACCEPTS = {
    "Agent Chat UI template, Agent Inbox": [{"type": "accept", "args": None}],
    "current Agent Chat UI (LangChain HITL)": {"decisions": [{"type": "approve"}]},
}


COUNT = "Needs 2 approvals by different approvers: {} of 2 approvals in{}."
"""The first line of the two-approver pause's description (after a refusal's, if any)."""


def _ui_run(ui: str, pause: dict[str, Any]) -> dict[str, Any]:
    """The run a UI starts for its Accept: both Chat UIs send ``input: {}`` and an unkeyed
    resume (their ``thread.submit({}, {command: {resume}})``: the template's Agent Inbox
    list, the current UI's ``{decisions: [...]}``); Agent Inbox sends the same list unkeyed
    (``runs.create(..., {command: {resume}})``)."""
    return {"input": {}, "command": {"resume": ACCEPTS[ui]}}


async def test_an_expired_approval_answered_in_every_ui_format_never_runs(
    ui_server: Studio,
) -> None:
    client = get_client(url=ui_server.url)
    paused = [await _paused(ui_server, "expiring_agent") for _ in ACCEPTS]
    due = max(datetime.fromisoformat(p["value"]["expires_at"]) for _, p in paused)
    for _, pause in paused:
        due_text = datetime.fromisoformat(pause["value"]["expires_at"])
        when = due_text.strftime("%Y-%m-%d %H:%M:%S UTC")
        assert pause["value"]["description"].startswith(f"Expires at {when}: after that it ")
        (action,) = pause["value"]["action_requests"]
        assert action["description"] == pause["value"]["description"]
    left = (due - datetime.now(UTC)).total_seconds()
    assert 0 < left <= ui_graph.EXPIRES_IN
    await asyncio.sleep(left + 0.5)  # a real deadline: nothing to wait on but the clock
    for (thread_id, pause), accept in zip(paused, ACCEPTS.values(), strict=True):
        await _wait(client, thread_id, "expiring_agent", command={"resume": {pause["id"]: accept}})
        assert (await client.threads.get(thread_id))["status"] == "idle"
        state = await client.threads.get_state(thread_id)
        assert state["interrupts"] == []
        values = state["values"]
        assert isinstance(values, dict)
        (told,) = [m["content"] for m in values["messages"] if m["type"] == "tool"]
        expired_at = datetime.fromisoformat(pause["value"]["expires_at"]).isoformat()
        assert told == (
            "The approval of the tool call for `send_money` expired: the approval of "
            f"'approve_send_money' expired at {expired_at} (no decision in time). "
            "The tool was not executed."
        )
        assert values["messages"][-1]["content"] == f"Done: {told}"
        assert ui_server.entries(thread_id) == []


async def test_two_approvers_a_ui_answer_is_asked_again_then_named_approvers_run_it(
    ui_server: Studio,
) -> None:
    client = get_client(url=ui_server.url)
    thread_id, pause = await _paused(ui_server, "two_approver_agent")
    assert pause["value"]["description"].startswith(COUNT.format(0, ""))
    assert pause["value"]["config"]["allow_edit"] is False  # an edit cannot count as approval
    assert "edit" not in pause["value"]["review_configs"][0]["allowed_decisions"]
    for ui in ACCEPTS:
        await _wait(client, thread_id, "two_approver_agent", **_ui_run(ui, pause))
        again = await _pending(client, thread_id)
        assert again["id"] != pause["id"], ui
        error = again["value"]["error"]
        assert error.startswith("'approve_send_money' needs a named approver"), ui
        assert "inbox answer --server URL --assistant GRAPH_ID --thread ID" in error
        assert says_why_first(again["value"])
        assert again["value"]["description"].split("\n\n")[1] == COUNT.format(0, "")
        assert again["value"]["approval"]["approved_by"] == []
        pause = again
    assert ui_server.entries(thread_id) == []

    agent = RemoteReActAgent(ui_server.url, "two_approver_agent", timeout=120)
    first = await agent.aresume("approved", thread_id=thread_id, approver="alice")
    assert first.termination_reason == "interrupted"
    partial = await _pending(client, thread_id)
    assert partial["value"]["approval"]["approved_by"] == ["alice"]
    # the template's unkeyed resume stays in the step's pending writes and LangGraph replays it
    # to the next ask of every later run: that re-ask shows its (old) refusal again, but
    # alice's approval is counted and her door reports no refusal (approval_recorded)
    assert COUNT.format(1, " (alice)") in partial["value"]["description"].split("\n\n")[:2]

    argv: list[Any] = [sys.executable, "-m", "dynavec_langgraph._cli", "inbox", "answer"]
    argv += ["--server", ui_server.url, "--assistant", "two_approver_agent"]
    proc = await asyncio.create_subprocess_exec(
        *argv,
        *["--thread", thread_id, "--approve", "--as", "bob"],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), timeout=180)
    assert proc.returncode == 0, err.decode()
    assert "Answer: Done: sent 10 to Ann" in out.decode(), out.decode()
    assert (await client.threads.get(thread_id))["status"] == "idle"
    assert [(e["amount"], e["to"]) for e in ui_server.entries(thread_id)] == [(10, "Ann")]
