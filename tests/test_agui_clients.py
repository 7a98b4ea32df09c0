"""``dynavec_langgraph.agui`` through a real server and real clients: uvicorn on 127.0.0.1
serving ``tests.agui_graph:app`` on a SQLite file, driven by ``@ag-ui/client`` from Node
(``tests/agui_client/drive.mjs``: pause, resume one, several, cancel, stale, expiry,
concurrent answers, M-of-N). Each check reads the server's ledger: the side effect ran exactly
as decided. The npm packages are installed by ``npm ci`` from the committed lock into a cache
outside the clone (tests/agui_npm.py); a missing node/npm fails the test."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.agui_npm import prepared

pytestmark = pytest.mark.service

REPO = Path(__file__).resolve().parents[1]


@dataclass
class AguiServer:
    """The test graphs' AG-UI endpoints (``{url}/agents/<name>/``) and their ledger."""

    url: str
    ledger: Path

    def sent(self, thread: str) -> list[tuple[int, str]]:
        if not self.ledger.exists():
            return []
        rows = [json.loads(line) for line in self.ledger.read_text().splitlines()]
        return [(r["amount"], r["to"]) for r in rows if r["thread_id"] == thread]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def agui_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AguiServer]:
    work = tmp_path_factory.mktemp("agui")
    port = _free_port()
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "DYNAVEC_AGUI_DB": str(work / "agui.db"),
        "DYNAVEC_DEMO_LEDGER": str(work / "ledger.jsonl"),
    }
    argv = [
        sys.executable, "-m", "uvicorn", "tests.agui_graph:app", "--host", "127.0.0.1",
        "--port", str(port), "--log-level", "warning",
    ]  # fmt: skip
    log = work / "server.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            argv, cwd=REPO, env=env, stdin=subprocess.DEVNULL, stdout=out,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"the AG-UI server did not start:\n{log.read_text()[-3000:]}")
                time.sleep(0.1)
        yield AguiServer(f"http://127.0.0.1:{port}", work / "ledger.jsonl")
    finally:
        proc.kill()  # by its PID
        proc.wait(timeout=10)


@pytest.fixture(scope="module")
def node_client() -> Path:
    """``tests/agui_client`` with its packages installed (cached)."""
    return prepared("agui_client")


def drive(node_client: Path, server: AguiServer, scenario: str) -> dict[str, Any]:
    node = shutil.which("node")
    assert node is not None, "node not found: `make browser-tools` installs Node.js"
    done = subprocess.run(
        [node, "drive.mjs", server.url, scenario], cwd=node_client, capture_output=True,
        text=True, timeout=120, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    report: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return report


def test_node_pause_resume_one_then_stale_and_unknown_answers(
    node_client: Path, agui_server: AguiServer
) -> None:
    report = drive(node_client, agui_server, "pause_resume_one")
    paused = report["paused"]
    assert paused["error"] is None
    assert paused["events"][0] == "RUN_STARTED" and paused["events"][-1] == "RUN_FINISHED"
    assert "TOOL_CALL_START" in paused["events"]
    [pause] = paused["interrupts"]
    assert pause["reason"] == "tool_call" and pause["toolCallId"]
    assert [o["title"] for o in pause["responseSchema"]["oneOf"]] == [
        "approve", "edit", "reject", "respond",
    ]  # fmt: skip
    resumed = report["resumed"]
    assert resumed["error"] is None and resumed["interrupts"] == []
    assert resumed["lastText"] == "Done: sent 10 to Ann"
    assert "TEXT_MESSAGE_CONTENT" in resumed["events"] and "TOOL_CALL_RESULT" in resumed["events"]
    assert report["stale"]["error"]["code"] == "STALE_INTERRUPT"
    assert report["unknown"]["error"]["code"] == "STALE_INTERRUPT"
    assert agui_server.sent(report["thread"]) == [(10, "Ann")]


def test_node_resumes_several_interrupts_at_once_each_applied_once(
    node_client: Path, agui_server: AguiServer
) -> None:
    report = drive(node_client, agui_server, "resume_several")
    assert len(report["paused"]["interrupts"]) == 2
    resumed = report["resumed"]
    assert resumed["error"] is None and resumed["interrupts"] == []
    assert resumed["events"].count("TOOL_CALL_RESULT") == 2
    assert sorted(agui_server.sent(report["thread"])) == [(3, "Bob"), (10, "Ann")]


def test_node_an_invalid_edit_runs_nothing_and_cancelled_tells_the_model(
    node_client: Path, agui_server: AguiServer
) -> None:
    report = drive(node_client, agui_server, "invalid_then_cancel")
    assert report["invalid"]["error"]["code"] == "INVALID_ARGUMENTS"
    assert report["invalid"]["events"] == ["RUN_STARTED", "RUN_ERROR"]
    cancelled = report["cancelled"]
    assert cancelled["error"] is None and "not today" in cancelled["lastText"]
    assert agui_server.sent(report["thread"]) == []


def test_node_a_late_answer_to_an_expiring_approval_is_refused(
    node_client: Path, agui_server: AguiServer
) -> None:
    report = drive(node_client, agui_server, "expiry")
    [pause] = report["paused"]["interrupts"]
    assert pause["expiresAt"] and pause["metadata"]["approval"]["expires_at"] == pause["expiresAt"]
    assert report["expiredOnClient"] is True  # @ag-ui/client's isInterruptExpired agrees
    # @ag-ui/client itself refuses to answer it; the server refuses a client that does
    assert "expired" in report["clientRefuses"]["error"]["message"]
    assert report["late"]["error"]["code"] == "INTERRUPT_EXPIRED"
    assert report["closed"]["error"] is None and report["closed"]["interrupts"] == []
    assert agui_server.sent(report["thread"]) == []


def test_node_concurrent_answers_one_applies_the_others_are_refused(
    node_client: Path, agui_server: AguiServer
) -> None:
    report = drive(node_client, agui_server, "concurrent")
    errors = [a["error"] for a in report["answers"]]
    assert sum(e is None for e in errors) == 1, errors
    refused = {e["code"] for e in errors if e is not None}
    assert refused <= {"ConcurrentResumeError", "STALE_INTERRUPT"}, errors
    assert agui_server.sent(report["thread"]) == [(10, "Ann")]


def test_node_m_of_n_two_distinct_approvers(node_client: Path, agui_server: AguiServer) -> None:
    report = drive(node_client, agui_server, "two_approvers")
    assert report["nobody"]["error"]["code"] == "APPROVER_REQUIRED"
    assert report["ann"]["error"] is None
    [second] = report["ann"]["interrupts"]
    assert second["metadata"]["approval"]["approved_by"] == ["ann"]
    assert report["annAgain"]["error"]["code"] == "ApproverRefusedError"
    assert report["bob"]["error"] is None and report["bob"]["interrupts"] == []
    assert agui_server.sent(report["thread"]) == [(10, "Ann")]
