"""A webhook receiver on 127.0.0.1 for the notification tests, run as its own process.

``python -m tests.webhook --port PORT --out FILE`` answers every POST with 204 and appends
``{"headers": {...}, "body": ...}`` as one JSON line to FILE; ``--fail N`` answers the first N
POSTs with 503 instead. :class:`Receiver` starts it (and stops it by its PID).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tests.pg import _free_port

REPO = Path(__file__).resolve().parents[1]


class Receiver:
    """The receiver process: ``url``, ``start()``, ``stop()``, ``received()``."""

    def __init__(self, out: Path, port: int | None = None) -> None:
        self.out = out
        self.port = port or _free_port()
        self.url = f"http://127.0.0.1:{self.port}/hook"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, fail: int = 0) -> Receiver:
        argv = [sys.executable, "-m", "tests.webhook", "--port", str(self.port)]
        argv += ["--out", str(self.out), "--fail", str(fail)]
        self.proc = subprocess.Popen(argv, cwd=REPO, start_new_session=True)
        deadline = time.monotonic() + 30
        while True:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return self
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"no webhook receiver on port {self.port}") from None
                time.sleep(0.05)  # polling a starting server; nothing to wait on instead

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            self.proc.wait(timeout=15)
        self.proc = None

    def received(self) -> list[dict[str, Any]]:
        if not self.out.exists():
            return []
        return [json.loads(line) for line in self.out.read_text().splitlines()]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--fail", type=int, default=0)
    args = parser.parse_args()
    failures = [args.fail]

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", "0"))
            body = json.loads(self.rfile.read(length) or b"null")
            if failures[0] > 0:
                failures[0] -= 1
                self.send_response(503)
                self.end_headers()
                return
            with args.out.open("a") as f:
                f.write(json.dumps({"headers": dict(self.headers), "body": body}) + "\n")
            self.send_response(204)
            self.end_headers()

        def log_message(self, format: str, *items: Any) -> None:
            del format, items

    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)

    def stop(*_: Any) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
