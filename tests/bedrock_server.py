"""A local, scripted, validating Amazon Bedrock Runtime **Converse** endpoint for the tests.

moto has no Converse API (only ``invoke_model``), so this serves the two operations boto3's
``bedrock-runtime`` client sends for ``converse`` and ``converse_stream``:
``POST /model/{modelId}/converse`` (JSON) and ``POST /model/{modelId}/converse-stream``
(the binary ``application/vnd.amazon.eventstream`` framing boto3 decodes, with its CRCs).
Point a client at it with ``AWS_ENDPOINT_URL_BEDROCK_RUNTIME=server.url`` (boto3's own
endpoint variable) or ``endpoint_url=``. Errors are AWS JSON errors
(``x-amzn-ErrorType``), which botocore raises as ``ClientError``. Requests are checked with
the Converse rules on tool use (each ``toolUse`` answered by a ``toolResult`` in the next user
message), a rejection is recorded in :attr:`BedrockServer.rejections`.
"""

from __future__ import annotations

import json
import re
import struct
import threading
import urllib.parse
import uuid
import zlib
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, cast

from tests.quiet_http import QuietHandler, QuietHTTPServer


@dataclass
class ErrorTurn:
    """Answer one request with an AWS error (``code`` such as ``ThrottlingException``)."""

    status: int
    code: str
    message: str


Turn = str | list[dict[str, Any]] | ErrorTurn


class ValidationError(Exception):
    """An invalid request (HTTP 400, ``ValidationException``)."""


def validate(body: dict[str, Any]) -> None:
    """Raise :class:`ValidationError` where Bedrock's Converse API refuses the request."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise ValidationError("A conversation must start with a user message.")
    if messages[0].get("role") != "user":
        raise ValidationError("A conversation must start with a user message.")
    for item in body.get("system") or []:
        if not item.get("text"):
            raise ValidationError("The text field in the SystemContentBlock is blank.")
    has_tools = bool((body.get("toolConfig") or {}).get("tools"))
    pending: list[str] = []
    for i, msg in enumerate(messages):
        blocks = msg.get("content") or []
        if not blocks:
            raise ValidationError(f"messages.{i}.content: the content field is empty.")
        results = [b["toolResult"]["toolUseId"] for b in blocks if "toolResult" in b]
        if pending and (msg.get("role") != "user" or sorted(results) != sorted(pending)):
            raise ValidationError(
                "Expected toolResult blocks at messages."
                f"{i}.content for the following Ids: {', '.join(pending)}"
            )
        pending = [b["toolUse"]["toolUseId"] for b in blocks if "toolUse" in b]
        if (pending or results) and not has_tools:
            raise ValidationError(
                "The toolConfig field must be defined when using toolUse and toolResult content "
                "blocks."
            )
        for b in blocks:
            if "text" in b and not b["text"]:
                raise ValidationError(f"messages.{i}: the text field in a ContentBlock is blank.")
    for spec in (body.get("toolConfig") or {}).get("tools") or []:
        schema = ((spec.get("toolSpec") or {}).get("inputSchema") or {}).get("json")
        if not isinstance(schema, dict):
            raise ValidationError("toolConfig.tools.toolSpec.inputSchema.json must be an object")


def _content(turn: str | list[dict[str, Any]]) -> list[dict[str, Any]]:
    if isinstance(turn, str):
        return [{"text": turn}]
    return [
        {
            "toolUse": {
                "toolUseId": call.get("id") or f"tooluse_{uuid.uuid4().hex[:22]}",
                "name": call["name"],
                "input": call.get("args", {}),
            }
        }
        for call in turn
    ]


def _usage() -> dict[str, int]:
    return {"inputTokens": 11, "outputTokens": 7, "totalTokens": 18}


def _response(content: list[dict[str, Any]]) -> dict[str, Any]:
    tool_use = any("toolUse" in b for b in content)
    return {
        "output": {"message": {"role": "assistant", "content": content}},
        "stopReason": "tool_use" if tool_use else "end_turn",
        "usage": _usage(),
        "metrics": {"latencyMs": 5},
    }


def _stream_events(content: list[dict[str, Any]]) -> Iterator[tuple[str, dict[str, Any]]]:
    yield "messageStart", {"role": "assistant"}
    for index, block in enumerate(content):
        if "text" in block:
            for piece in re.findall(r"\s*\S+\s*|\s+", block["text"]):
                yield "contentBlockDelta", {"delta": {"text": piece}, "contentBlockIndex": index}
        else:
            use = block["toolUse"]
            start = {"toolUse": {"toolUseId": use["toolUseId"], "name": use["name"]}}
            yield "contentBlockStart", {"start": start, "contentBlockIndex": index}
            args = json.dumps(use["input"])
            half = max(1, len(args) // 2)
            for part in (args[:half], args[half:]):
                delta = {"toolUse": {"input": part}}
                yield "contentBlockDelta", {"delta": delta, "contentBlockIndex": index}
        yield "contentBlockStop", {"contentBlockIndex": index}
    stop = "tool_use" if any("toolUse" in b for b in content) else "end_turn"
    yield "messageStop", {"stopReason": stop}
    yield "metadata", {"usage": _usage(), "metrics": {"latencyMs": 5}}


def _header(name: str, value: str) -> bytes:
    key, data = name.encode(), value.encode()
    return struct.pack("B", len(key)) + key + b"\x07" + struct.pack(">H", len(data)) + data


def event_message(event_type: str, payload: dict[str, Any]) -> bytes:
    """One frame of AWS's event stream encoding (prelude, headers, payload, two CRC32s)."""
    headers = (
        _header(":event-type", event_type)
        + _header(":content-type", "application/json")
        + _header(":message-type", "event")
    )
    body = json.dumps(payload).encode()
    prelude = struct.pack(">II", 12 + len(headers) + len(body) + 4, len(headers))
    head = prelude + struct.pack(">I", zlib.crc32(prelude) & 0xFFFFFFFF)
    frame = head + headers + body
    return frame + struct.pack(">I", zlib.crc32(frame) & 0xFFFFFFFF)


class _HTTPServer(QuietHTTPServer):
    owner: BedrockServer


class _Handler(QuietHandler):
    def _send(self, status: int, payload: bytes, content_type: str, **headers: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        self.send_header("x-amzn-RequestId", str(uuid.uuid4()))
        for key, value in headers.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(payload)

    def _error(self, status: int, code: str, message: str) -> None:
        payload = json.dumps({"message": message}).encode()
        self._send(status, payload, "application/json", **{"x-amzn-ErrorType": code})

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        owner = cast(_HTTPServer, self.server).owner
        match = re.fullmatch(r"/model/([^/]+)/(converse|converse-stream)", self.path)
        if match is None:
            self._error(404, "UnknownOperationException", f"Unknown path {self.path}")
            return
        if "Signature=" not in (self.headers.get("Authorization") or ""):
            self._error(403, "UnrecognizedClientException", "The request is not signed.")
            return
        model_id = urllib.parse.unquote(match.group(1))
        try:
            body = json.loads(raw)
            with owner.lock:
                owner.requests.append({"modelId": model_id, **body})
            validate(body)
        except (ValueError, KeyError, ValidationError) as exc:
            with owner.lock:
                owner.rejections.append(str(exc))
            self._error(400, "ValidationException", str(exc))
            return
        try:
            turn = owner.next_turn()
        except LookupError as exc:
            self._error(500, "InternalServerException", f"BedrockServer: {exc}")
            return
        if isinstance(turn, ErrorTurn):
            self._error(turn.status, turn.code, turn.message)
            return
        content = _content(turn)
        if match.group(2) == "converse":
            self._send(200, json.dumps(_response(content)).encode(), "application/json")
        else:
            frames = b"".join(event_message(t, p) for t, p in _stream_events(content))
            self._send(200, frames, "application/vnd.amazon.eventstream")


class BedrockServer:
    """A scripted, validating Bedrock Runtime Converse endpoint on ``127.0.0.1``."""

    def __init__(self) -> None:
        self.url = ""
        self.lock = threading.Lock()
        self.requests: list[dict[str, Any]] = []
        self.rejections: list[str] = []
        self._queue: deque[Turn] = deque()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> BedrockServer:
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

    def __enter__(self) -> BedrockServer:
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
