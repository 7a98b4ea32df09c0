"""A local, scripted, validating Anthropic Messages API server for the tests.

``anthropic.Anthropic(base_url=server.url)`` (and so ``ChatAnthropic`` and
``AnthropicChatModel`` with ``ANTHROPIC_BASE_URL=server.url``) talks real HTTP to it:
``POST /v1/messages``, plain JSON or server-sent events (``stream: true``), with the API's
error bodies. Each request consumes the next queued turn: answer text, tool calls
``[{"name", "args", "id"?}]``, or an :class:`ErrorTurn`. Requests are checked with the rules
the real API applies to tool use (every ``tool_use`` answered by a ``tool_result`` in the next
user message, the results first), so a malformed conversation fails as it would there: HTTP
400, recorded in :attr:`AnthropicServer.rejections`.
"""

from __future__ import annotations

import json
import re
import threading
import uuid
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, cast

from tests.quiet_http import QuietHandler, QuietHTTPServer


@dataclass
class ErrorTurn:
    """Answer one request with an API error (``kind`` is Anthropic's error type)."""

    status: int
    kind: str
    message: str


Turn = str | list[dict[str, Any]] | ErrorTurn


class RequestError(Exception):
    """An invalid request (HTTP 400, ``invalid_request_error``)."""


def validate(body: dict[str, Any]) -> None:
    """Raise :class:`RequestError` where the real Messages API refuses the request."""
    if not isinstance(body.get("max_tokens"), int):
        raise RequestError("max_tokens: Field required")
    if not isinstance(body.get("model"), str):
        raise RequestError("model: Field required")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise RequestError("messages: at least one message is required")
    system = body.get("system")
    if system is not None and not isinstance(system, str | list):
        raise RequestError("system: Input should be a valid string or list")
    pending: list[str] = []
    for i, msg in enumerate(messages):
        role = msg.get("role")
        if role not in ("user", "assistant"):
            raise RequestError(f"messages.{i}.role: Input should be 'user' or 'assistant'")
        content = msg.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if not isinstance(blocks, list):
            raise RequestError(f"messages.{i}.content: Input should be a valid list")
        if pending:
            results = [b.get("tool_use_id") for b in blocks if b.get("type") == "tool_result"]
            if role != "user" or sorted(map(str, results)) != sorted(pending):
                raise RequestError(
                    f"messages.{i}: `tool_use` ids were found without `tool_result` blocks "
                    f"immediately after: {', '.join(pending)}. Each `tool_use` block must have "
                    "a corresponding `tool_result` block in the next message."
                )
            kinds = [b.get("type") for b in blocks]
            if kinds[: len(results)] != ["tool_result"] * len(results):
                raise RequestError(
                    f"messages.{i}: tool_result blocks must come FIRST in the content array, "
                    "before any other content."
                )
            pending = []
        for block in blocks:
            if block.get("type") == "text" and not block.get("text"):
                raise RequestError(f"messages.{i}: text content blocks must be non-empty")
            if block.get("type") == "tool_use":
                if role != "assistant":
                    raise RequestError(f"messages.{i}: tool_use blocks are for assistant turns")
                if not isinstance(block.get("input"), dict):
                    raise RequestError(f"messages.{i}: tool_use.input: Input should be a dict")
                pending.append(str(block.get("id")))
    if pending:
        raise RequestError("the last assistant message has tool_use blocks without results")
    for i, tool in enumerate(body.get("tools") or []):
        schema = tool.get("input_schema")
        if not re.match(r"^[a-zA-Z0-9_-]{1,64}$", str(tool.get("name"))):
            raise RequestError(f"tools.{i}.name: String should match pattern")
        if not isinstance(schema, dict) or schema.get("type") != "object":
            raise RequestError(f"tools.{i}.input_schema: type must be 'object'")


def _blocks(turn: str | list[dict[str, Any]]) -> list[dict[str, Any]]:
    if isinstance(turn, str):
        return [{"type": "text", "text": turn}]
    return [
        {
            "type": "tool_use",
            "id": call.get("id") or f"toolu_{uuid.uuid4().hex[:24]}",
            "name": call["name"],
            "input": call.get("args", {}),
        }
        for call in turn
    ]


def _message(body: dict[str, Any], blocks: list[dict[str, Any]]) -> dict[str, Any]:
    tool_use = any(b["type"] == "tool_use" for b in blocks)
    return {
        "id": f"msg_{uuid.uuid4().hex[:24]}",
        "type": "message",
        "role": "assistant",
        "model": body["model"],
        "content": blocks,
        "stop_reason": "tool_use" if tool_use else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": len(json.dumps(body)) // 4 + 1, "output_tokens": 7},
    }


def _events(body: dict[str, Any], blocks: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    whole = _message(body, blocks)
    start = {**whole, "content": [], "stop_reason": None, "usage": {**whole["usage"]}}
    yield {"type": "message_start", "message": start}
    for index, block in enumerate(blocks):
        if block["type"] == "text":
            yield {
                "type": "content_block_start",
                "index": index,
                "content_block": {"type": "text", "text": ""},
            }
            for piece in re.findall(r"\s*\S+\s*|\s+", block["text"]):
                delta = {"type": "text_delta", "text": piece}
                yield {"type": "content_block_delta", "index": index, "delta": delta}
        else:
            head = {**block, "input": {}}
            yield {"type": "content_block_start", "index": index, "content_block": head}
            args = json.dumps(block["input"])
            half = max(1, len(args) // 2)
            for part in (args[:half], args[half:]):
                delta = {"type": "input_json_delta", "partial_json": part}
                yield {"type": "content_block_delta", "index": index, "delta": delta}
        yield {"type": "content_block_stop", "index": index}
    stop = {"stop_reason": whole["stop_reason"], "stop_sequence": None}
    yield {"type": "message_delta", "delta": stop, "usage": {"output_tokens": 7}}
    yield {"type": "message_stop"}


class _HTTPServer(QuietHTTPServer):
    owner: AnthropicServer


class _Handler(QuietHandler):
    def _send(self, status: int, payload: bytes, content_type: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        self.send_header("request-id", f"req_{uuid.uuid4().hex[:12]}")
        self.end_headers()
        self.wfile.write(payload)

    def _error(self, status: int, kind: str, message: str) -> None:
        body = {"type": "error", "error": {"type": kind, "message": message}}
        self._send(status, json.dumps(body).encode())

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        owner = cast(_HTTPServer, self.server).owner
        if self.path.split("?")[0].rstrip("/") != "/v1/messages":
            self._error(404, "not_found_error", f"Unknown path {self.path}")
            return
        auth = self.headers.get("x-api-key") or self.headers.get("Authorization")
        if not auth:  # the SDK sends one of the two, depending on its version
            self._error(401, "authentication_error", "x-api-key header is required")
            return
        try:
            body = json.loads(raw)
            if not isinstance(body, dict):
                raise RequestError("The request body is not a JSON object")
            with owner.lock:
                owner.requests.append(body)
            validate(body)
        except (ValueError, RequestError) as exc:
            with owner.lock:
                owner.rejections.append(str(exc))
            self._error(400, "invalid_request_error", str(exc))
            return
        try:
            turn = owner.next_turn()
        except LookupError as exc:
            self._error(500, "api_error", f"AnthropicServer: {exc}")
            return
        if isinstance(turn, ErrorTurn):
            self._error(turn.status, turn.kind, turn.message)
            return
        blocks = _blocks(turn)
        if body.get("stream"):
            events = [
                f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in _events(body, blocks)
            ]
            self._send(200, "".join(events).encode(), "text/event-stream")
        else:
            self._send(200, json.dumps(_message(body, blocks)).encode())


class AnthropicServer:
    """A scripted, validating Anthropic Messages API on ``127.0.0.1`` (:attr:`url`)."""

    def __init__(self) -> None:
        self.url = ""
        self.lock = threading.Lock()
        self.requests: list[dict[str, Any]] = []
        self.rejections: list[str] = []
        self._queue: deque[Turn] = deque()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> AnthropicServer:
        """Bind a free port and serve in a daemon thread."""
        httpd = _HTTPServer(("127.0.0.1", 0), _Handler)
        httpd.owner = self
        self._httpd = httpd
        self._thread = threading.Thread(target=httpd.serve_forever, daemon=True)
        self._thread.start()
        self.url = f"http://127.0.0.1:{httpd.server_address[1]}"
        return self

    def stop(self) -> None:
        """Shut the server down (idempotent)."""
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> AnthropicServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def script(self, *turns: Turn) -> None:
        """Queue the answers to the next requests."""
        with self.lock:
            self._queue.extend(turns)

    def reset(self) -> None:
        """Forget the queue, the requests and the rejections."""
        with self.lock:
            self._queue.clear()
            self.requests.clear()
            self.rejections.clear()

    def next_turn(self) -> Turn:
        """The next queued answer (``LookupError`` when the script is exhausted)."""
        with self.lock:
            if not self._queue:
                raise LookupError("script exhausted: no queued turn")
            return self._queue.popleft()
