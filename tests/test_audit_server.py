"""The audit trail and notifications through a server deployment: the demo graph on a real
``langgraph dev`` server (the ``studio`` fixture of tests/test_studio.py), driven by
``RemoteReActAgent`` with ``audit=True`` and a webhook; the trail is read back with
``RemoteReActAgent.audit`` and ``dynavec-langgraph inbox history --server``."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import uuid
from pathlib import Path

from dynavec_langgraph import ConcurrentResumeError
from dynavec_langgraph._remote.audit import record_refusal
from dynavec_langgraph.audit import GENESIS, entry_hash
from dynavec_langgraph.remote import RemoteReActAgent, server_thread_id
from tests.langgraph_server import REPO
from tests.test_studio import GRAPH_ID, Studio, studio
from tests.webhook import Receiver

__all__ = ["studio"]  # the server fixture, shared with tests/test_studio.py


def test_the_server_records_the_trail_and_notifies_the_webhook(
    studio: Studio, tmp_path: Path
) -> None:
    thread = f"audited-{uuid.uuid4().hex}"  # langgraph dev keeps its threads between runs
    receiver = Receiver(tmp_path / "hook.jsonl").start()
    try:
        agent = RemoteReActAgent(studio.url, GRAPH_ID, timeout=60, audit=True, notify=receiver.url)
        paused = agent.run("Pay 75 to Alice", thread_id=thread)
        assert paused.termination_reason == "interrupted"
        deadline = time.monotonic() + 30
        while not receiver.received():
            assert time.monotonic() < deadline, "the server did not notify the webhook"
            time.sleep(0.1)  # the server's background delivery; nothing to wait on instead
        done = agent.resume({"decision": "approved", "comment": "ok"}, thread_id=thread)
        assert done.termination_reason == "completed"
        trail = agent.audit(thread)
        got = receiver.received()
    finally:
        receiver.stop()
    assert [(e.kind, e.surface, e.node_id) for e in trail] == [
        ("paused", "api", "approve_transfer"),
        ("decision", "api", "approve_transfer"),
    ]
    assert trail[1].decision == {"decision": "approved", "comment": "ok"}
    assert trail[1].comment == "ok" and trail[0].interrupt_id == trail[1].interrupt_id
    assert trail[0].thread_id == server_thread_id(thread)
    assert [(e.seq, e.prev_hash) for e in trail] == [(1, GENESIS), (2, trail[0].hash)]
    assert all(e.hash == entry_hash(e.as_dict()) for e in trail)  # chained in the server's store
    [note] = got
    assert note["body"]["event"] == "paused" and note["body"]["node_id"] == "approve_transfer"
    assert note["body"]["payload"] == {"amount": 75, "to": "Alice"}
    assert note["headers"]["X-Dynavec-Event-Id"] == note["body"]["event_id"]

    argv = [sys.executable, "-m", "dynavec_langgraph._cli", "inbox", "history", thread]
    shown = subprocess.run(
        [*argv, "--server", studio.url, "--json"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout) == [e.as_dict() for e in trail]

    # what only the client sees (a resume the server refused) is chained after the server's
    refused = ConcurrentResumeError("the server refused a second resume")
    record_refusal(agent.sync_client, server_thread_id(thread), "approved", refused)
    *_, last = agent.audit(thread)
    assert (last.kind, last.seq, last.prev_hash) == ("refused", 3, trail[1].hash)

    plain = RemoteReActAgent(studio.url, GRAPH_ID, timeout=60)
    plain.run("Pay 5 to Bob", thread_id=f"not-{thread}")
    assert plain.audit(f"not-{thread}") == []
