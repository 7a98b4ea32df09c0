"""The AG-UI app as a LangGraph server custom route (issue 37): a real ``langgraph dev`` whose
``langgraph.json`` names ``tests.agui_graph:app`` in ``"http": {"app": ...}`` (the endpoints of
the AG-UI test graphs on the SQLite file ``$DYNAVEC_AGUI_DB``). Driven over HTTP with httpx and
with ``@ag-ui/client`` from Node (tests/agui_client), each check reading the tool's ledger.
The same app under uvicorn: tests/test_agui_clients.py.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.langgraph_server import REPO, langgraph_dev
from tests.test_agui_clients import AguiServer, drive, node_client
from tests.test_approvals_auth_server import GRAPHS

__all__ = ["node_client"]  # the Node client's fixture, shared with tests/test_agui_clients.py

pytestmark = pytest.mark.service


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AguiServer]:
    """``langgraph dev`` serving a graph of its own and the AG-UI app as its custom route."""
    work = tmp_path_factory.mktemp("agui_langgraph_dev")
    config = {
        "dependencies": [str(REPO)],
        "graphs": {"agent": f"{GRAPHS}:alice_or_bob"},
        "http": {"app": "tests.agui_graph:app"},
    }
    with pytest.MonkeyPatch.context() as env:
        env.setenv("DYNAVEC_AGUI_DB", str(work / "agui.db"))  # the checkpointer the app is given
        with langgraph_dev(work, config) as running:
            yield AguiServer(running.url, running.ledger)


def _run(server: AguiServer, agent: str, thread: str, **body: Any) -> list[dict[str, Any]]:
    """One AG-UI run over HTTP: its events, as the server streamed them."""
    body = {"threadId": thread, "runId": str(uuid.uuid4()), "messages": [], **body}
    with httpx.stream("POST", f"{server.url}/agents/{agent}/", json=body, timeout=90) as reply:
        assert reply.status_code == 200, reply.read()
        assert reply.headers["content-type"].startswith("text/event-stream")
        lines = [line for line in reply.iter_lines() if line]
    assert all(line.startswith("data: ") for line in lines), lines
    return [json.loads(line[len("data: ") :]) for line in lines]


def test_pause_and_resume_through_the_custom_route_over_http(server: AguiServer) -> None:
    thread = str(uuid.uuid4())
    message = {"id": "m1", "role": "user", "content": "pay Ann"}
    paused = _run(server, "approval", thread, messages=[message])
    assert paused[0]["type"] == "RUN_STARTED" and paused[-1]["type"] == "RUN_FINISHED"
    [pause] = paused[-1]["outcome"]["interrupts"]
    assert pause["reason"] == "tool_call" and pause["metadata"]["nodeId"] == "approve_send_money"
    assert server.sent(thread) == []

    entry = {"interruptId": pause["id"], "status": "resolved", "payload": {"type": "approve"}}
    done = _run(server, "approval", thread, resume=[entry])
    assert done[-1]["type"] == "RUN_FINISHED" and done[-1]["outcome"] == {"type": "success"}
    results = [e["content"] for e in done if e["type"] == "TOOL_CALL_RESULT"]
    assert results == ["sent 10 to Ann"]
    assert server.sent(thread) == [(10, "Ann")]

    again = _run(server, "approval", thread, resume=[entry])
    assert [e["type"] for e in again] == ["RUN_STARTED", "RUN_ERROR"]
    assert again[-1]["code"] == "STALE_INTERRUPT"
    assert server.sent(thread) == [(10, "Ann")]


def test_the_server_keeps_its_own_routes_beside_the_custom_one(server: AguiServer) -> None:
    """The route does not hide the server's API: its graph is still listed."""
    found = httpx.post(f"{server.url}/assistants/search", json={}, timeout=30)
    assert found.status_code == 200, found.text
    assert "agent" in {a["graph_id"] for a in found.json()}


def test_node_client_resumes_several_at_once_through_the_custom_route(
    node_client: Path, server: AguiServer
) -> None:
    report = drive(node_client, server, "resume_several")
    assert len(report["paused"]["interrupts"]) == 2
    resumed = report["resumed"]
    assert resumed["error"] is None and resumed["interrupts"] == []
    assert resumed["events"].count("TOOL_CALL_RESULT") == 2
    assert sorted(server.sent(report["thread"])) == [(3, "Bob"), (10, "Ann")]
