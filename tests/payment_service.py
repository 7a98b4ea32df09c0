"""A fake payment service: a local HTTP server (127.0.0.1) that honours ``Idempotency-Key``.

``POST /charges`` with a JSON body ``{"amount": N}`` and an ``Idempotency-Key`` header charges
once per key: the first request with a key creates a charge, every later one with the same key
gets that charge back (``"replayed": true``). ``GET /stats`` gives every request seen (key and
amount, in order) and the charges made. A request without a key is refused (400).

Run as its own process (``python -m tests.payment_service PORT_FILE``), so a test can SIGKILL
the agent's process while the service keeps its count; :class:`PaymentService` starts it,
reads the port it bound and stops it by PID.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT = 60.0


class _State:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.requests: list[dict[str, Any]] = []
        self.charges: dict[str, dict[str, Any]] = {}


class _Handler(BaseHTTPRequestHandler):
    state: _State

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        return

    def _send(self, code: int, body: Any) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        if self.path != "/stats":
            self._send(404, {"error": "unknown path"})
            return
        with self.state.lock:
            self._send(
                200,
                {
                    "requests": list(self.state.requests),
                    "charges": list(self.state.charges.values()),
                },
            )

    def do_POST(self) -> None:
        if self.path != "/charges":
            self._send(404, {"error": "unknown path"})
            return
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        key = self.headers.get("Idempotency-Key")
        if not key:
            self._send(400, {"error": "an Idempotency-Key header is required"})
            return
        with self.state.lock:
            self.state.requests.append({"key": key, "amount": body.get("amount")})
            charge = self.state.charges.get(key)
            if charge is not None:
                self._send(200, {**charge, "replayed": True})
                return
            charge = {"id": f"ch_{len(self.state.charges) + 1}", "amount": body.get("amount")}
            self.state.charges[key] = charge
            self._send(200, {**charge, "replayed": False})


def serve(port_file: Path) -> None:
    """Serve on a free port of 127.0.0.1; write the port to ``port_file`` once listening."""
    handler = type("Handler", (_Handler,), {"state": _State()})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    tmp = port_file.with_suffix(".tmp")
    tmp.write_text(str(server.server_address[1]))
    tmp.rename(port_file)
    server.serve_forever()


class PaymentService:
    """The service in a process of its own: ``url``, ``stats()``, stopped by PID."""

    def __init__(self, folder: Path) -> None:
        self.port_file = folder / "payment-port"
        self.proc: subprocess.Popen[bytes] | None = None
        self.url = ""

    def start(self) -> PaymentService:
        """Start the service; one already running is returned as it is (``with
        PaymentService(folder).start() as service`` starts one process, not two)."""
        if self.proc is not None and self.proc.poll() is None:
            return self
        self.port_file.unlink(missing_ok=True)  # an earlier run's port is not this one's
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.payment_service", str(self.port_file)], cwd=ROOT
        )
        deadline = time.monotonic() + TIMEOUT
        while not self.port_file.exists():
            if self.proc.poll() is not None:
                raise AssertionError(f"the payment service exited ({self.proc.returncode})")
            if time.monotonic() > deadline:
                raise AssertionError("the payment service did not start")
            time.sleep(0.01)
        self.url = f"http://127.0.0.1:{self.port_file.read_text()}"
        return self

    def stats(self) -> dict[str, Any]:
        with urllib.request.urlopen(f"{self.url}/stats", timeout=TIMEOUT) as response:
            result: dict[str, Any] = json.loads(response.read())
        return result

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)

    def __enter__(self) -> PaymentService:
        return self.start()  # once: a started service is entered as it is

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def charge(url: str, amount: int, key: str) -> dict[str, Any]:
    """What the tools send: one charge under ``key``."""
    request = urllib.request.Request(
        f"{url}/charges",
        data=json.dumps({"amount": amount}).encode(),
        headers={"Idempotency-Key": key, "Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
        result: dict[str, Any] = json.loads(response.read())
    return result


if __name__ == "__main__":
    serve(Path(sys.argv[1]))
