"""A local, strict, OpenAI-compatible Chat Completions server for the tests (and a pytest plugin).

``ChatOpenAI(base_url=server.url, ...)`` talks real HTTP to it.  Responses are scripted: each
request consumes the next queued :data:`Turn` (or asks a policy function).  Requests are validated
with OpenAI's rules on tool-call ordering, so a malformed conversation fails as it would against
the real API: HTTP 400 with an OpenAI-style error body, recorded in :attr:`OpenAIServer.rejections`.
"""

from __future__ import annotations

import functools
import json
import re
import ssl
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, cast

import pytest

from tests.quiet_http import QuietHandler, QuietHTTPServer

if TYPE_CHECKING:  # imported where a model is made: this module is a plugin of every run
    import openai as openai_sdk
    from langchain_openai import ChatOpenAI

Turn = str | list[dict[str, Any]]
"""A text answer, or tool calls ``[{"name": str, "args": dict, "id": optional str}]``."""
Policy = Callable[[list[dict[str, Any]]], Turn]

ROLES = frozenset({"system", "developer", "user", "assistant", "tool"})
TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
UNANSWERED = (
    "An assistant message with 'tool_calls' must be followed by tool messages responding to "
    "each 'tool_call_id'. The following tool_call_ids did not have response messages: {}"
)
ORPHAN_TOOL = (
    "Invalid parameter: messages with role 'tool' must be a response to a preceeding message "
    "with 'tool_calls'."
)


class RequestError(Exception):
    """An invalid request, answered with HTTP 400 (``param`` is reported in the error body)."""

    def __init__(self, message: str, param: str | None = "messages") -> None:
        super().__init__(message)
        self.message, self.param = message, param


def validate(body: dict[str, Any]) -> None:
    """Raise :class:`RequestError` if ``body`` breaks one of OpenAI's request rules."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise RequestError("'messages' must be a non-empty array.")
    seen: set[str] = set()  # every tool call id in the conversation
    pending: set[str] = set()  # unanswered call ids of the preceding assistant message
    for i, msg in enumerate(messages):
        role = msg.get("role") if isinstance(msg, dict) else None
        if role not in ROLES:
            raise RequestError(f"Invalid value for 'messages[{i}].role': {role!r}.")
        if role == "tool":
            call_id = msg.get("tool_call_id")
            if not isinstance(call_id, str) or not call_id:
                raise RequestError(f"Missing required parameter: 'messages[{i}].tool_call_id'.")
            if call_id not in pending:  # answers nothing in the block, or answers twice
                raise RequestError(ORPHAN_TOOL)
            pending.discard(call_id)
            continue
        if pending:
            raise RequestError(UNANSWERED.format(", ".join(sorted(pending))))
        if role == "assistant" and msg.get("tool_calls"):
            for j, call in enumerate(msg["tool_calls"]):
                call_id = call.get("id") if isinstance(call, dict) else None
                if not isinstance(call_id, str) or not call_id:
                    raise RequestError(
                        f"Missing required parameter: 'messages[{i}].tool_calls[{j}].id'."
                    )
                if call_id in seen:
                    raise RequestError(f"Duplicate tool call id in 'messages[{i}]': {call_id!r}.")
                seen.add(call_id)
                pending.add(call_id)
    if pending:
        raise RequestError(UNANSWERED.format(", ".join(sorted(pending))))
    _validate_tools(body.get("tools"))


def _validate_tools(tools: Any) -> None:
    if tools is None:
        return
    if not isinstance(tools, list):
        raise RequestError("'tools' must be an array.", "tools")
    for i, tool in enumerate(tools):
        fn = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(tool, dict) or tool.get("type") != "function" or not isinstance(fn, dict):
            raise RequestError(f"Invalid 'tools[{i}]': expected a function tool.", "tools")
        name = fn.get("name")
        if not isinstance(name, str) or not TOOL_NAME.match(name):
            msg = f"Invalid 'tools[{i}].function.name': does not match pattern {TOOL_NAME.pattern}."
            raise RequestError(msg, "tools")
        params = fn.get("parameters")
        if not isinstance(params, dict) or params.get("type") != "object":
            msg = f"Invalid schema for function '{name}': must be a JSON Schema of type 'object'."
            raise RequestError(msg, "tools")


def _tool_calls(turn: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """OpenAI ``tool_calls`` for a turn: fresh ``call_...`` ids unless given, JSON arguments."""
    return [
        {
            "id": call.get("id") or f"call_{uuid.uuid4().hex[:24]}",
            "type": "function",
            "function": {"name": call["name"], "arguments": json.dumps(call.get("args", {}))},
        }
        for call in turn
    ]


def _usage(body: dict[str, Any], turn: Turn) -> dict[str, int]:
    """Rough token counts (characters / 4)."""
    prompt, completion = len(json.dumps(body["messages"])) // 4 + 1, len(json.dumps(turn)) // 4 + 1
    return dict(
        prompt_tokens=prompt, completion_tokens=completion, total_tokens=prompt + completion
    )


def _completion(body: dict[str, Any], turn: Turn) -> dict[str, Any]:
    """The non-streaming ``chat.completion`` object answering with ``turn``."""
    message: dict[str, Any] = {"role": "assistant", "content": None, "refusal": None}
    if isinstance(turn, str):
        message["content"] = turn
    else:
        message["tool_calls"] = _tool_calls(turn)
    finish = "stop" if isinstance(turn, str) else "tool_calls"
    choice = {"index": 0, "message": message, "logprobs": None, "finish_reason": finish}
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "gpt-test"),
        "choices": [choice],
        "usage": _usage(body, turn),
        "system_fingerprint": None,
    }


def _chunks(body: dict[str, Any], turn: Turn) -> Iterator[dict[str, Any]]:
    """The ``chat.completion.chunk`` objects streaming ``turn``."""
    base = {
        "id": f"chatcmpl-{uuid.uuid4().hex}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": body.get("model", "gpt-test"),
        "system_fingerprint": None,
    }
    with_usage = bool((body.get("stream_options") or {}).get("include_usage"))

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return {**base, "choices": [choice], **({"usage": None} if with_usage else {})}

    if isinstance(turn, str):
        yield chunk({"role": "assistant", "content": ""})
        for piece in re.findall(r"\s*\S+\s*|\s+", turn):  # per word, spaces kept
            yield chunk({"content": piece})
        yield chunk({}, "stop")
    else:
        yield chunk({"role": "assistant", "content": None})
        for index, call in enumerate(_tool_calls(turn)):
            fn, args = call["function"], call["function"]["arguments"]
            head = {**call, "index": index, "function": {"name": fn["name"], "arguments": ""}}
            yield chunk({"tool_calls": [head]})
            half = max(1, len(args) // 2)
            for part in (args[:half], args[half:]):
                yield chunk({"tool_calls": [{"index": index, "function": {"arguments": part}}]})
        yield chunk({}, "tool_calls")
    if with_usage:
        yield {**base, "choices": [], "usage": _usage(body, turn)}


class _HTTPServer(QuietHTTPServer):
    owner: OpenAIServer


class _Handler(QuietHandler):
    def _send(self, status: int, payload: bytes, content_type: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def _error(self, status: int, message: str, kind: str, param: str | None = None) -> None:
        error = {"message": message, "type": kind, "param": param, "code": None}
        self._send(status, json.dumps({"error": error}).encode())

    def do_GET(self) -> None:
        if self.path.rstrip("/") == "/v1/models":
            model = {"id": "gpt-test", "object": "model", "created": 0, "owned_by": "tests"}
            self._send(200, json.dumps({"object": "list", "data": [model]}).encode())
        else:
            self._error(404, f"Unknown path {self.path}", "invalid_request_error")

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._error(404, f"Unknown path {self.path}", "invalid_request_error")
            return
        owner = cast(_HTTPServer, self.server).owner
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        try:
            with owner.lock:
                if not isinstance(body, dict):
                    owner.requests.append({"_invalid_body": raw.decode(errors="replace")})
                    raise RequestError("We could not parse the JSON body of your request.", None)
                owner.requests.append(body)
                validate(body)
        except RequestError as exc:
            with owner.lock:
                owner.rejections.append(exc.message)
            self._error(400, exc.message, "invalid_request_error", exc.param)
            return
        try:
            turn = owner.next_turn(body["messages"])
            if body.get("stream"):
                events = [f"data: {json.dumps(c)}\n\n" for c in _chunks(body, turn)]
                payload, kind = "".join(events) + "data: [DONE]\n\n", "text/event-stream"
            else:
                payload, kind = json.dumps(_completion(body, turn)), "application/json"
        except Exception as exc:  # exhausted script, failing policy, malformed turn: fail loudly
            self._error(500, f"OpenAIServer: {type(exc).__name__}: {exc}", "server_error")
            return
        self._send(200, payload.encode(), kind)


class OpenAIServer:
    """A scripted, strictly validating OpenAI Chat Completions server on ``127.0.0.1``."""

    url: str
    requests: list[dict[str, Any]]
    rejections: list[str]

    def __init__(self) -> None:
        self.url = ""
        self.lock = threading.Lock()
        self.requests, self.rejections = [], []
        self._queue: deque[Turn] = deque()
        self._policy: Policy | None = None
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> OpenAIServer:
        """Bind a free port, serve in a daemon thread, and set :attr:`url`."""
        httpd = _HTTPServer(("127.0.0.1", 0), _Handler)
        httpd.owner = self
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever, name="openai-server", daemon=True
        )
        self._thread.start()
        self.url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
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

    def __enter__(self) -> OpenAIServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def script(self, *turns: Turn) -> None:
        """Append ``turns`` to the FIFO queue of responses."""
        with self.lock:
            self._queue.extend(turns)

    def set_policy(self, fn: Policy | None) -> None:
        """Answer with ``fn(messages)`` instead of the queue (``None`` returns to the queue)."""
        with self.lock:
            self._policy = fn

    def reset(self) -> None:
        """Clear the queue, the policy, the recorded requests and rejections."""
        with self.lock:
            self._queue.clear()
            self._policy = None
            self.requests.clear()
            self.rejections.clear()

    def next_turn(self, messages: list[dict[str, Any]]) -> Turn:
        """The answer to a valid request: the policy's, else the next queued turn."""
        with self.lock:
            policy = self._policy
            if policy is None:
                if not self._queue:
                    raise LookupError("script exhausted: no queued turn and no policy")
                return self._queue.popleft()
        return policy(messages)


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """The default TLS context (system CA bundle), built once per process: loading the bundle
    takes ~50 ms of CPU, once per HTTP client otherwise, and the local servers speak plain
    HTTP (it is never used for a handshake)."""
    return ssl.create_default_context()


def async_http_client() -> openai_sdk.DefaultAsyncHttpxClient:
    """A new async HTTP client, as ``openai.DefaultAsyncHttpxClient()`` builds it, on the
    process's one TLS context (:func:`_tls_context`)."""
    import openai as openai_sdk

    return openai_sdk.DefaultAsyncHttpxClient(verify=_tls_context())


def chat_openai(server: OpenAIServer, **kw: Any) -> ChatOpenAI:
    """A ``ChatOpenAI`` talking to ``server`` (no retries, 10 s timeout).

    Each model gets its own async HTTP client (:func:`async_http_client`): langchain-openai
    otherwise shares one per process, which breaks once the event loop of an earlier async
    test has closed.
    """
    from langchain_openai import ChatOpenAI
    from pydantic import SecretStr

    key = SecretStr("test-key")
    kw.setdefault("http_async_client", async_http_client())
    return ChatOpenAI(
        base_url=server.url, api_key=key, model="gpt-test", max_retries=0, timeout=10, **kw
    )


@pytest.fixture(scope="session")
def openai_server() -> Iterator[OpenAIServer]:
    """One server for the whole session."""
    with OpenAIServer() as server:
        yield server


@pytest.fixture
def openai(openai_server: OpenAIServer) -> OpenAIServer:
    """The session server, reset for this test.

    Teardown checks nothing: tests assert on ``requests``/``rejections`` themselves.
    """
    openai_server.reset()
    return openai_server
