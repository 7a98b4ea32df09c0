"""What the tests' local HTTP servers share (the scripted OpenAI, Anthropic and Bedrock servers,
the HTTP tools' echo server): a threading HTTP server that prints nothing and stops at once, and
a kept-alive request handler that answers without delay."""

from __future__ import annotations

from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["QuietHTTPServer", "QuietHandler"]


class QuietHTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Print nothing (e.g. a client that hung up mid-response)."""

    def serve_forever(self, poll_interval: float = 0.01) -> None:
        """Serve until :meth:`shutdown`, which returns within ``poll_interval``: the standard
        library's 0.5 s is what every stop of a server would wait."""
        super().serve_forever(poll_interval)


class QuietHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # The headers and the body leave in two writes on a kept-alive connection. With Nagle's
    # algorithm on, the body waits for the client's delayed ACK: 40 ms for every response.
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        """Print nothing."""
