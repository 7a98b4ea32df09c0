"""``RemoteReActAgent`` and ``inbox --server`` ask for LangGraph's strict resume where the server
reports it in ``GET /info`` (``langgraph_sdk``'s ``runs.create(..., strict_resume=True)``), and
only there.

- not reported: a real ``langgraph dev`` (langgraph-api 0.16.7 reports no ``strict_resume``;
  the ``studio`` fixture of tests/test_studio.py): no request carries ``strict_resume``;
- reported: the same server behind a small local proxy whose ``/info`` adds
  ``flags.strict_resume``; every other request goes through to the server unchanged, and the
  proxy records what the client sent. The resume carries ``strict_resume: true`` (the 0.16.7
  server accepts the field and ignores it); a new run does not.

The answer of ``/info`` is read once per client and cached.
"""

from __future__ import annotations

import asyncio
import json
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest

from dynavec_langgraph import ConcurrentResumeError
from dynavec_langgraph._remote.inbox import ServerInbox
from dynavec_langgraph.remote import RemoteReActAgent, reports_strict_resume
from tests.test_studio import GRAPH_ID, Studio, studio

__all__ = ["studio"]  # the server fixture, shared with tests/test_studio.py


@dataclass
class Proxy:
    """A local HTTP server answering ``/info`` itself (``info``; ``None``: HTTP 404) and
    forwarding every other request to ``upstream`` (``None``: HTTP 502)."""

    info: dict[str, Any] | None
    upstream: str | None = None
    requests: list[tuple[str, str, Any]] = field(default_factory=list)
    url: str = ""

    def bodies(self, method: str, path_end: str) -> list[Any]:
        return [b for m, p, b in self.requests if m == method and p.endswith(path_end)]

    def info_reads(self) -> int:
        return sum(1 for m, p, _ in self.requests if m == "GET" and p == "/info")


def _handler(proxy: Proxy) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # quiet
            return

        def _answer(self, status: int, body: bytes, content_type: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _forward(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            body = json.loads(raw) if raw else None
            proxy.requests.append((self.command, self.path, body))
            if self.path == "/info":
                if proxy.info is None:
                    self._answer(404, b'{"detail": "Not Found"}', "application/json")
                else:
                    self._answer(200, json.dumps(proxy.info).encode(), "application/json")
                return
            if proxy.upstream is None:
                self._answer(502, b'{"detail": "no upstream"}', "application/json")
                return
            headers = {"Content-Type": self.headers.get("Content-Type") or "application/json"}
            with httpx.Client(base_url=proxy.upstream, timeout=120) as client:
                got = client.request(self.command, self.path, content=raw, headers=headers)
            kind = got.headers.get("content-type", "application/json")
            self._answer(got.status_code, got.content, kind)

        do_GET = do_POST = do_PATCH = do_DELETE = do_PUT = _forward

    return Handler


@pytest.fixture
def proxy_for() -> Iterator[Any]:
    """``proxy_for(info, upstream)``: a started :class:`Proxy` (stopped after the test)."""
    servers: list[ThreadingHTTPServer] = []

    def start(info: dict[str, Any] | None, upstream: str | None = None) -> Proxy:
        proxy = Proxy(info, upstream)
        server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(proxy))
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        proxy.url = f"http://127.0.0.1:{server.server_address[1]}"
        return proxy

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


STRICT_INFO = {"version": "0.17.0", "flags": {"assistants": True, "strict_resume": True}}
PLAIN_INFO = {"version": "0.16.7", "flags": {"assistants": True, "crons": True}}


def test_what_reports_strict_resume() -> None:
    assert reports_strict_resume(STRICT_INFO)
    assert reports_strict_resume({"strict_resume": True})
    refused: list[object] = [PLAIN_INFO, {"flags": {"strict_resume": "yes"}}, {"flags": None}]
    for info in [*refused, None, []]:
        assert not reports_strict_resume(info), info


@pytest.mark.parametrize(
    ("info", "expected"), [(STRICT_INFO, True), (PLAIN_INFO, False), (None, False)]
)
def test_the_answer_of_info_is_read_once_per_client(
    proxy_for: Any, info: dict[str, Any] | None, expected: bool
) -> None:
    proxy = proxy_for(info)
    with RemoteReActAgent(proxy.url, GRAPH_ID, timeout=10) as agent:
        assert agent.strict_resume() is expected
        assert agent.strict_resume() is expected
        assert asyncio.run(agent.astrict_resume()) is expected
    assert proxy.info_reads() == 1
    with RemoteReActAgent(proxy.url, GRAPH_ID, timeout=10) as other:  # another client
        assert asyncio.run(other.astrict_resume()) is expected
        assert other.strict_resume() is expected
    assert proxy.info_reads() == 2


def test_a_run_refused_by_strict_resume_is_a_concurrent_resume() -> None:
    """The server's ``UnknownInterruptError`` (the interrupt id was answered by another
    caller; nothing ran) is raised as ``ConcurrentResumeError``, as the claim's refusal is."""
    from dynavec_langgraph._remote.runs import check_run
    from dynavec_langgraph._remote.threads import Seen

    run = {"run_id": "r1", "status": "error"}
    joined = {"__error__": {"error": "UnknownInterruptError", "message": "Unknown or already"}}
    with pytest.raises(ConcurrentResumeError, match="the server refused this resume"):
        check_run("t", run, joined, Seen(True, None, [], {}))


def _paused_thread(agent: RemoteReActAgent) -> str:
    thread = f"strict-{uuid.uuid4().hex}"  # langgraph dev keeps its threads between runs
    paused = agent.run("Pay 75 to Alice", thread_id=thread)
    assert paused.termination_reason == "interrupted"
    return thread


def _runs_sent(proxy: Proxy) -> list[Any]:
    return proxy.bodies("POST", "/runs")


def test_a_server_that_does_not_report_it_gets_no_strict_resume(
    studio: Studio, proxy_for: Any
) -> None:
    """langgraph-api 0.16.7 itself: its /info has no ``strict_resume``."""
    info = httpx.get(f"{studio.url}/info", timeout=30).json()
    assert not reports_strict_resume(info), info
    # where langgraph-api reports what a server supports: booleans under "flags" (read where
    # reports_strict_resume looks); 0.16.7 names strict resume nowhere in its answer
    flags = info["flags"]
    assert isinstance(flags, dict) and flags and all(isinstance(v, bool) for v in flags.values())
    assert "strict_resume" not in json.dumps(info), info
    with RemoteReActAgent(studio.url, GRAPH_ID, timeout=60) as direct:
        assert direct.strict_resume() is False
    proxy = proxy_for(info, studio.url)  # the server's own /info, passed on unchanged
    with RemoteReActAgent(proxy.url, GRAPH_ID, timeout=60) as agent:
        thread = _paused_thread(agent)
        done = agent.resume("approved", thread_id=thread)
    assert done.termination_reason == "completed"
    sent = _runs_sent(proxy)
    assert len(sent) == 2 and "command" in sent[1]  # the run, then the resume
    assert all("strict_resume" not in body for body in sent)
    assert proxy.info_reads() == 1


def test_a_server_that_reports_it_gets_strict_resume_on_every_resume(
    studio: Studio, proxy_for: Any
) -> None:
    proxy = proxy_for(STRICT_INFO, studio.url)
    with RemoteReActAgent(proxy.url, GRAPH_ID, timeout=60) as agent:
        thread = _paused_thread(agent)
        done = agent.resume("approved", thread_id=thread)
        assert done.termination_reason == "completed"
        again = _paused_thread(agent)
        asyncio.run(agent.aresume("rejected", thread_id=again))
    sent = _runs_sent(proxy)
    resumes = [b for b in sent if "command" in b]
    assert len(resumes) == 2 and all(b["strict_resume"] is True for b in resumes)
    assert all("strict_resume" not in b for b in sent if "command" not in b)  # new runs: no
    assert proxy.info_reads() == 1  # one client, one read


def test_the_server_inbox_asks_for_it_where_reported(studio: Studio, proxy_for: Any) -> None:
    for info, expected in ((STRICT_INFO, True), (PLAIN_INFO, False)):
        proxy = proxy_for(info, studio.url)
        with RemoteReActAgent(proxy.url, GRAPH_ID, timeout=60) as agent:
            thread = _paused_thread(agent)
        done = ServerInbox(proxy.url, GRAPH_ID).answer(thread, "approved", None)
        assert done.termination_reason == "completed"
        [resume] = [b for b in _runs_sent(proxy) if "command" in b]
        assert resume.get("strict_resume", False) is expected, info


def test_the_command_line_inbox_asks_for_it_where_reported(
    studio: Studio, proxy_for: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """``dynavec-langgraph inbox answer --server URL`` (in process): the same client."""
    from dynavec_langgraph._cli import main

    for info, expected in ((STRICT_INFO, True), (PLAIN_INFO, False)):
        proxy = proxy_for(info, studio.url)
        with RemoteReActAgent(proxy.url, GRAPH_ID, timeout=60) as agent:
            thread = _paused_thread(agent)
        argv = ["inbox", "answer", "--server", proxy.url, "--assistant", GRAPH_ID,
                "--thread", thread, "--approve"]  # fmt: skip
        assert main(argv) == 0, capsys.readouterr().err
        [resume] = [b for b in _runs_sent(proxy) if "command" in b]
        assert resume.get("strict_resume", False) is expected, info
