"""dynavec's tools, registry and connectors, tested the way a dynavec user's tests are
(docs/compatibility.md T8-T12, R1-R7, K1-K4): ``AgentTool`` and ``tool`` additions, the
``ToolRegistry`` container, ``create_http_tool`` against a local HTTP server,
``create_python_code_tool``, and the MCP connectors with the ``mcp`` package's real client
talking to a stdio server this test starts."""

from __future__ import annotations

import asyncio
import contextvars
import functools
import json
import os
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from concurrent.futures import Future
from contextlib import AsyncExitStack
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import pytest

from dynavec_langgraph.agents import (
    AgentTool,
    ReActAgent,
    ToolRegistry,
    create_http_tool,
    create_python_code_tool,
    default_registry,
    interrupt,
    mcp_tools_from_session,
    mcp_tools_from_session_async,
    tool,
)
from dynavec_langgraph.chat import Tool
from dynavec_langgraph.exceptions import NodeInterrupt
from tests.dynavec_model import ScriptedDynavecModel
from tests.quiet_http import QuietHTTPServer

if TYPE_CHECKING:
    from mcp import ClientSession, StdioServerParameters

ROOT = Path(__file__).resolve().parents[2]

# --- §5.1 AgentTool -------------------------------------------------------------------------


def double(x: int) -> int:
    """Double it."""
    return 2 * x


def test_t8_agent_tool_positional_order_fn_tags_and_chat_tool() -> None:
    schema = {"type": "object", "properties": {"x": {"type": "integer"}}}
    made = AgentTool(double, "dbl", "Doubles.", schema, ["math"])
    assert (made.name, made.description, made.parameters, made.tags) == (
        "dbl", "Doubles.", schema, ["math"],
    )  # fmt: skip
    assert made.fn is double and AgentTool(double).tags == []
    assert made.to_chat_tool() == Tool("dbl", "Doubles.", schema)


def test_t9_names_partial_and_objects_with_a_name() -> None:
    assert AgentTool(functools.partial(double, 2)).name == "unnamed_tool"

    class Named:
        name = "from_attribute"

        def __call__(self, x: int) -> int:
            return x

    assert AgentTool(Named()).name == "from_attribute"
    assert AgentTool(double).name == "double" and AgentTool(double, name="n").name == "n"


async def test_t10_async_execution_rules() -> None:
    seen: contextvars.ContextVar[str] = contextvars.ContextVar("seen", default="unset")

    @tool
    async def fetch(url: str) -> str:
        return f"page {url}"

    @tool
    def sync_reader(key: str) -> str:
        return f"{key}={seen.get()}:{threading.current_thread().name != 'MainThread'}"

    assert await fetch.aexecute({"url": "a"}) == "page a"
    assert fetch.execute({"url": "b"}) == (
        "Error: Cannot execute async tool 'fetch' synchronously in a running event loop."
    )
    seen.set("copied")
    assert await sync_reader.aexecute({"key": "k"}) == "k=copied:True"  # to_thread: contextvars
    outside = await asyncio.to_thread(lambda: fetch.execute({"url": "c"}))
    assert outside == "page c"  # no running loop in that thread: asyncio.run


def test_t11_binding_rules() -> None:
    @tool
    def nothing() -> str:
        return "none taken"

    @tool
    def everything(**kwargs: Any) -> str:
        return json.dumps(kwargs, sort_keys=True)

    @tool
    def one(text: str) -> str:
        return f"got {text}"

    @tool
    def some(a: int, b: int = 0) -> int:
        return a + b

    @tool
    def some_and_rest(a: int, **rest: Any) -> str:
        return f"{a} {sorted(rest)}"

    assert nothing.execute({"x": 1}) == "none taken"  # 1. no parameters: none
    assert everything.execute({"x": 1, "y": "z"}) == '{"x": 1, "y": "z"}'  # 2. **kwargs only
    assert one.execute({"other": "value"}) == "got value"  # 3. one parameter, not a key
    assert some.execute({"a": 1, "b": 2, "unknown": 3}) == "3"  # 4. unknown keys dropped
    assert some_and_rest.execute({"a": 1, "x": 2, "y": 3}) == "1 ['x', 'y']"  # 4. **kwargs


def test_t11_node_interrupt_is_re_raised() -> None:
    @tool
    def approve(amount: int) -> str:
        return str(interrupt("approve_it", {"amount": amount}))

    with pytest.raises(NodeInterrupt) as raised:
        approve.execute({"amount": 3})
    assert (raised.value.node_id, raised.value.payload) == ("approve_it", {"amount": 3})
    with pytest.raises(NodeInterrupt):
        asyncio.run(approve.aexecute({"amount": 3}))


# --- §5.2 tool ------------------------------------------------------------------------------


def test_t12_tool_forms_and_tool_on_an_agent_tool() -> None:
    bare = tool(double)
    assert tool()(double).name == "double" and tool("renamed")(double).name == "renamed"
    assert tool("positional", name="keyword")(double).name == "keyword"  # name= wins
    full = tool(name="f", description="d", parameters={"type": "object"}, tags=["t"])(double)
    assert (full.name, full.description, full.parameters, full.tags) == (
        "f", "d", {"type": "object"}, ["t"],
    )  # fmt: skip
    same = tool(name="again", description="changed")(bare)
    assert same is bare and (bare.name, bare.description) == ("again", "changed")
    assert len(default_registry) == 0  # tool registers nothing


# --- §5.3 - §5.5 the registry -----------------------------------------------------------------


def test_r1_register_mutates_wraps_and_replaces() -> None:
    registry = ToolRegistry()
    made = tool(double)
    assert registry.register(made, name="dbl", description="Doubles.", tags=["math"]) is made
    assert (made.name, made.description, made.tags) == ("dbl", "Doubles.", ["math"])
    assert registry.register(made, tags=None).tags == ["math"]  # tags kept when None

    def triple(x: int) -> int:
        return 3 * x

    wrapped = registry.register(triple, name="tri", tags=["math", "odd"])
    assert isinstance(wrapped, AgentTool) and wrapped.name == "tri"
    replacement = AgentTool(lambda x: -x, name="dbl")
    assert registry.register(replacement) is replacement  # a duplicate silently replaces
    assert registry["dbl"] is replacement and len(registry) == 2
    assert list(registry) == ["dbl", "tri"]  # iteration yields names, in order


def test_r2_lookup_listing_running_and_the_container() -> None:
    registry = ToolRegistry()
    registry.register(double, tags=["math"])
    registry.register(lambda text: text.upper(), name="shout", tags=["text"])
    assert registry.has("double") and not registry.has("nope") and "shout" in registry
    assert registry.get("nope") is None
    with pytest.raises(KeyError):
        registry["nope"]
    assert [t.name for t in registry.list_tools()] == ["double", "shout"]
    assert [t.name for t in registry.list_tools(tag="text")] == ["shout"]
    assert registry.to_chat_tools(tag="math") == [registry["double"].to_chat_tool()]
    assert registry.execute("double", {"x": 4}) == "8"
    assert registry.execute("double", '{"x": 5}') == "10"
    assert asyncio.run(registry.aexecute("shout", {"text": "hi"})) == "HI"
    assert registry.execute("nope") == "Error: Tool 'nope' is not registered."
    assert asyncio.run(registry.aexecute("nope")) == "Error: Tool 'nope' is not registered."
    assert registry.unregister("shout") and not registry.unregister("shout")
    other = ToolRegistry()
    other.register_all(registry)
    other.register_all([lambda: "pong"])
    assert list(other) == ["double", "<lambda>"]
    assert isinstance(default_registry, ToolRegistry) and len(default_registry) == 0


def test_r3_agent_snapshots_the_registry() -> None:
    registry = ToolRegistry()
    registry.register(double)
    model = ScriptedDynavecModel([[("double", {"x": 21}), ("late", {})], "42"])
    agent = ReActAgent(model, tools=registry)
    registry.register(lambda: "too late", name="late")
    result = agent.run("double 21")
    assert result.steps[0].observations == [
        "42",
        "Error: Tool 'late' is not registered in available tools.",
    ]
    assert [t.name for t in model.tools_seen[0]] == ["double"]


# --- §5.6 create_http_tool against a local server -------------------------------------------


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        """Print nothing."""

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length).decode() if length else ""
        if self.path.startswith("/missing"):
            payload, status, kind = b"no such page", 404, "text/plain"
        elif self.path.startswith("/slow"):
            time.sleep(1.0)
            payload, status, kind = b"late", 200, "text/plain"
        elif self.path.startswith("/text"):
            payload, status, kind = "plain text, not JSON: é".encode(), 200, "text/plain"
        else:
            seen = {
                "method": self.command,
                "path": self.path,
                "headers": {k.lower(): v for k, v in self.headers.items()},
                "body": body,
            }
            payload, status, kind = json.dumps(seen).encode(), 200, "application/json"
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_POST = do_PUT = do_DELETE = _answer


@pytest.fixture(scope="module")
def http_server() -> Iterator[str]:
    httpd = QuietHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()
    thread.join(timeout=5)


def test_k1_http_tool_requests(http_server: str) -> None:
    http = create_http_tool(base_url=http_server + "/", default_headers={"X-App": "dv"})
    assert (http.name, http.description) == ("http_request", "Make an HTTP request.")
    assert http.parameters["required"] == ["url"]
    assert set(http.parameters["properties"]) == {"url", "method", "headers", "params", "json_data"}
    answer = http.execute({"url": "/echo?x=1", "params": {"q": "a b"}, "headers": {"X-Mine": "1"}})
    assert answer.startswith("{\n  ")  # JSON re-dumped with indent=2
    seen = json.loads(answer)
    assert (seen["method"], seen["path"]) == ("GET", "/echo?x=1&q=a+b")
    assert seen["headers"]["x-app"] == "dv" and seen["headers"]["x-mine"] == "1"
    posted = json.loads(http.execute({"url": "echo", "method": "post", "json_data": {"k": "é"}}))
    assert posted["method"] == "POST" and json.loads(posted["body"]) == {"k": "é"}
    assert posted["headers"]["content-type"] == "application/json"
    own = {"content-type": "application/vnd.x+json"}
    kept = json.loads(http.execute({"url": "echo", "json_data": [1], "headers": own}))
    assert kept["headers"]["content-type"] == "application/vnd.x+json"
    assert http.execute({"url": "text"}) == "plain text, not JSON: é"
    # with a base URL, even an absolute url is joined to it (dynavec's quirk)
    joined = create_http_tool(base_url=http_server + "/echo")
    assert json.loads(joined.execute({"url": "http://elsewhere/x"}))["path"] == (
        "/echo/http://elsewhere/x"
    )


def test_k1_http_tool_failures_are_returned(
    http_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    http = create_http_tool(name="web", timeout=0.2, tags=["net"])
    assert http.tags == ["net"]
    missing = http.execute({"url": f"{http_server}/missing"})
    assert missing == "HTTP 404 Error: Not Found\nno such page"
    assert http.execute({"url": f"{http_server}/slow"}) == (
        "Timeout Error: Request exceeded 0.2 seconds."
    )
    closed = http.execute({"url": "http://127.0.0.1:9/"})
    assert closed.startswith("Connection Error: ")
    assert http.execute({"url": "not a url"}).startswith("Unexpected Error: unknown url type")
    calls: list[tuple[str, str, float]] = []

    def fake_urlopen(req: urllib.request.Request, timeout: float) -> Any:
        calls.append((req.full_url, str(req.method), timeout))
        raise OSError("patched at call time")

    monkeypatch.setattr(urllib.request, "urlopen", fake_urlopen)
    assert http.execute({"url": "http://x/y", "method": "delete"}) == (
        "Unexpected Error: patched at call time"
    )
    assert calls == [("http://x/y", "DELETE", 0.2)]


def test_k1_http_tool_in_an_agent(http_server: str) -> None:
    http = create_http_tool(base_url=http_server)
    model = ScriptedDynavecModel([[("http_request", {"url": "/text"})], "fetched"])
    result = ReActAgent(model, tools=[http]).run("fetch the page")
    assert result.steps[0].observations == ["plain text, not JSON: é"]


# --- §5.7 create_python_code_tool -----------------------------------------------------------


def test_k2_python_tool() -> None:
    python = create_python_code_tool()
    assert python.name == "python_repl"
    assert python.description == (
        "Execute Python code in a restricted sandbox and return the output."
    )
    assert python.parameters["required"] == ["code"]
    assert python.execute({"code": "print('hello')\n2 + 3"}) == "hello\n5\n"
    assert python.execute({"code": ""}) == ""
    assert python.execute({"code": "x = 1\nNone"}) == ""  # None is not printed
    assert python.execute({"code": "import os\nos.getpid() == " + str(os.getpid())}) == "True\n"
    failed = python.execute({"code": "print('before')\n1 / 0"})
    assert failed.startswith("before\nTraceback") and "ZeroDivisionError" in failed
    assert "SyntaxError" in python.execute({"code": "def broken(:"})
    assert create_python_code_tool(name="py", tags=["code"]).tags == ["code"]


# --- §5.8 / §5.9 MCP, with the real client over stdio ---------------------------------------


@pytest.fixture
def call_log(tmp_path: Path) -> Path:
    return tmp_path / "mcp_calls.jsonl"


def _server(call_log: Path) -> StdioServerParameters:
    from mcp import StdioServerParameters  # imported by the tests that start the server

    env = {**os.environ, "MCP_CALL_LOG": str(call_log), "PYTHONPATH": str(ROOT)}
    return StdioServerParameters(
        command=sys.executable, args=["-m", "tests.mcp_server"], env=env, cwd=str(ROOT)
    )


async def _session(stack: AsyncExitStack, call_log: Path) -> ClientSession:
    from mcp import ClientSession
    from mcp.client.stdio import stdio_client

    errlog = stack.enter_context(call_log.with_suffix(".stderr").open("w"))
    read, write = await stack.enter_async_context(stdio_client(_server(call_log), errlog=errlog))
    session = await stack.enter_async_context(ClientSession(read, write))
    await session.initialize()
    return session


def _calls(call_log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in call_log.read_text().splitlines()]


async def test_k3_mcp_tools_from_a_real_async_session(call_log: Path) -> None:
    async with AsyncExitStack() as stack:
        session = await _session(stack, call_log)
        await _check_async_tools(session, call_log)


async def _check_async_tools(mcp_session: ClientSession, call_log: Path) -> None:
    tools = await mcp_tools_from_session_async(mcp_session, tags=["mcp"])
    assert [t.name for t in tools] == ["add", "shout", "explode"]
    add, shout, explode = tools
    assert add.description == "Add two numbers." and add.tags == ["mcp"]
    assert add.parameters["required"] == ["a", "b"]
    assert add.fn.__name__ == "add" and add.fn.__doc__ == "Add two numbers."
    assert await add.aexecute({"a": 2, "b": 3}) == "5"
    assert await shout.aexecute({"text": "hi"}) == "HI\n\n!"  # parts joined by a blank line
    failed = await explode.aexecute({"reason": "boom"})
    assert failed.startswith("Error: ") and "explode" in failed  # isError prefixed
    assert _calls(call_log) == [
        {"tool": "add", "arguments": {"a": 2, "b": 3}},
        {"tool": "shout", "arguments": {"text": "hi"}},
        {"tool": "explode", "arguments": {"reason": "boom"}},
    ]
    assert add.execute({"a": 1, "b": 1}) == (
        "Error: Cannot execute async tool 'add' synchronously in a running event loop."
    )


async def test_k3_mcp_tools_run_in_an_agent(call_log: Path) -> None:
    async with AsyncExitStack() as stack:
        session = await _session(stack, call_log)
        tools = await mcp_tools_from_session_async(session)
        model = ScriptedDynavecModel([[("add", {"a": 40, "b": 2})], "It is 42."])
        result = await ReActAgent(model, tools=tools).arun("40 + 2?")
    assert (result.output, result.steps[0].observations) == ("It is 42.", ["42"])
    assert _calls(call_log) == [{"tool": "add", "arguments": {"a": 40, "b": 2}}]


async def test_k4_the_sync_connector_refuses_an_async_session(call_log: Path) -> None:
    async with AsyncExitStack() as stack:
        session = await _session(stack, call_log)
        with pytest.raises(ValueError, match=r"mcp_tools_from_session_async\(\)"):
            mcp_tools_from_session(session)


class SyncSession:
    """A synchronous MCP session (as dynavec's sync connector expects): the real client runs
    on its own event loop in a background thread, opened and closed by one task there;
    ``call_tool`` takes the dict positionally."""

    def __init__(self, call_log: Path) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.ready: Future[ClientSession] = Future()
        self.positional: list[dict[str, Any]] = []
        self.done = self._run_later(self._hold(call_log))
        self.session = self.ready.result(timeout=60)

    async def _hold(self, call_log: Path) -> None:
        self.closing = asyncio.Event()
        try:
            async with AsyncExitStack() as stack:
                self.ready.set_result(await _session(stack, call_log))
                await self.closing.wait()
        except BaseException as error:
            if not self.ready.done():
                self.ready.set_exception(error)
            raise

    def _run_later(self, coro: Any) -> Future[Any]:
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def _run(self, coro: Any) -> Any:
        return self._run_later(coro).result(timeout=60)

    def list_tools(self) -> Any:
        return self._run(self.session.list_tools())

    def call_tool(self, name: str, arguments: dict[str, Any], /) -> Any:
        self.positional.append(arguments)
        return self._run(self.session.call_tool(name, arguments))

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.closing.set)
        self.done.result(timeout=60)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)
        self.loop.close()


def test_k4_mcp_tools_from_a_sync_session(call_log: Path) -> None:
    session = SyncSession(call_log)
    try:
        tools = mcp_tools_from_session(session)
        add = next(t for t in tools if t.name == "add")
        assert add.execute({"a": 1, "b": 2}) == "3"
        assert session.positional == [{"a": 1, "b": 2}]
        model = ScriptedDynavecModel([[("shout", {"text": "ok"})], "done"])
        result = ReActAgent(model, tools=tools).run("shout ok")
        assert result.steps[0].observations == ["OK\n\n!"]
        explode = next(t for t in tools if t.name == "explode")
        assert not explode.execute({"reason": "x"}).startswith("Error: ")  # isError ignored
    finally:
        session.close()


def test_k4_listings_as_dicts_and_objects() -> None:
    class Listing:
        tools: ClassVar[list[Any]] = [
            {"name": "a", "description": "A.", "inputSchema": {"type": "object"}},
            {"description": "nameless: skipped"},
            type("T", (), {"name": "b", "input_schema": {"type": "object", "properties": {}}})(),
        ]

    class Session:
        def __init__(self) -> None:
            self.calls: list[tuple[str, dict[str, Any]]] = []

        def list_tools(self) -> Any:
            return Listing()

        def call_tool(self, name: str, arguments: dict[str, Any]) -> Any:
            self.calls.append((name, arguments))
            return {"content": [{"text": "one"}, {"text": ""}, {"type": "image"}, {"text": "two"}]}

    session = Session()
    tools = mcp_tools_from_session(session)
    # an empty description gets the package's default (docs/compatibility.md K4)
    assert [(t.name, t.description) for t in tools] == [("a", "A."), ("b", "Execute b")]
    assert tools[0].execute({"x": 1}) == "one\n\ntwo" and session.calls == [("a", {"x": 1})]

    class Bare:
        def list_tools(self) -> Any:
            return [{"name": "plain"}]

        def call_tool(self, name: str, arguments: dict[str, Any]) -> Any:
            return 42

    (plain,) = mcp_tools_from_session(Bare())
    assert plain.parameters == {
        "type": "object", "properties": {"kwargs": {"type": "string"}}, "required": ["kwargs"],
    }  # fmt: skip
    assert plain.execute({}) == "42"  # neither content nor a list: str(result)
