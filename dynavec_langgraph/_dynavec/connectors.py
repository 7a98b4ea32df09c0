"""dynavec's tool connectors: an HTTP tool, a Python tool, and the tools of an MCP session.

Each returns :class:`~dynavec_langgraph.AgentTool` objects, which are LangChain tools as well,
so they run in ``ReActAgent``, ``create_react_agent`` and LangGraph's ``ToolNode`` alike
(docs/compatibility.md, K1-K4). ``dynavec_langgraph.agents.connectors`` re-exports them.

Example:
    >>> python = create_python_code_tool()
    >>> python.execute({"code": "print('hello')\\n2 + 3"})
    'hello\\n5\\n'
"""

from __future__ import annotations

import ast
import asyncio
import builtins
import contextlib
import inspect
import io
import json
import traceback
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Awaitable, Callable, Sequence

from dynavec_langgraph._tools.agent_tool import AgentTool
from dynavec_langgraph._types import ForeignObject, JSONSchema, ToolArgs

_HTTP_PARAMETERS: JSONSchema = {
    "type": "object",
    "properties": {
        "url": {"type": "string", "description": "The URL (joined to the base URL, if any)."},
        "method": {"type": "string", "description": "The HTTP method.", "default": "GET"},
        "headers": {"type": "object", "description": "Extra request headers."},
        "params": {"type": "object", "description": "Query parameters."},
        "json_data": {"type": "object", "description": "A JSON request body."},
    },
    "required": ["url"],
}


def _join(base_url: str | None, url: str) -> str:
    if not base_url:
        return url
    # dynavec joins even an absolute url to the base (docs/compatibility.md, K1)
    return f"{base_url.rstrip('/')}/{url.lstrip('/')}"


def create_http_tool(
    name: str = "http_request",
    description: str = "Make an HTTP request.",
    base_url: str | None = None,
    default_headers: dict[str, str] | None = None,
    timeout: float = 10.0,
    tags: Sequence[str] | None = None,
) -> AgentTool:
    """A tool that makes one HTTP request with ``urllib`` and returns the response body.

    The tool's arguments are ``url`` (required), ``method="GET"``, ``headers``, ``params``
    (urlencoded onto the url) and ``json_data`` (a UTF-8 JSON body). A JSON response is
    returned re-indented; failures are returned as text (``HTTP 404 Error: ...``,
    ``Connection Error: ...``, ``Timeout Error: ...``, ``Unexpected Error: ...``), never
    raised. ``urllib.request.urlopen`` is looked up at call time, so tests may patch it.
    """

    def http_request(
        url: str,
        method: str = "GET",
        headers: ToolArgs | None = None,
        params: ToolArgs | None = None,
        json_data: object = None,
    ) -> str:
        full_url = _join(base_url, url)
        if params:
            full_url += ("&" if "?" in full_url else "?") + urllib.parse.urlencode(params)
        merged = {**(default_headers or {}), **(headers or {})}
        data = None
        if json_data is not None:
            data = json.dumps(json_data).encode("utf-8")
            if not any(k.lower() == "content-type" for k in merged):
                merged["Content-Type"] = "application/json"
        try:
            request = urllib.request.Request(
                full_url, data=data, headers=merged, method=method.upper()
            )
            with urllib.request.urlopen(request, timeout=timeout) as response:
                body = str(response.read().decode("utf-8"))
        except urllib.error.HTTPError as error:
            text = error.read().decode("utf-8", errors="replace")
            return f"HTTP {error.code} Error: {error.reason}\n{text}"
        except TimeoutError:
            return f"Timeout Error: Request exceeded {timeout} seconds."
        except urllib.error.URLError as error:
            if isinstance(error.reason, TimeoutError):
                return f"Timeout Error: Request exceeded {timeout} seconds."
            return f"Connection Error: {error.reason}"
        except Exception as error:
            return f"Unexpected Error: {error}"
        try:
            return json.dumps(json.loads(body), indent=2, ensure_ascii=False)
        except ValueError:
            return body

    return AgentTool(
        http_request,
        name=name,
        description=description,
        parameters=_HTTP_PARAMETERS,
        tags=list(tags) if tags else None,
    )


def _run_python(code: str) -> str:
    """dynavec's Python tool: ``exec`` in process, the last expression's ``repr`` printed."""
    if not code.strip():
        return ""
    out = io.StringIO()
    scope: dict[str, object] = {"__builtins__": builtins, "__name__": "__main__"}
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        try:
            tree = ast.parse(code, mode="exec")
            last = tree.body[-1] if tree.body else None
            if isinstance(last, ast.Expr):
                head = ast.Module(body=tree.body[:-1], type_ignores=[])
                exec(compile(head, "<python_repl>", "exec"), scope)
                value = eval(compile(ast.Expression(last.value), "<python_repl>", "eval"), scope)
                if value is not None:
                    print(repr(value))
            else:
                exec(compile(tree, "<python_repl>", "exec"), scope)
        except (Exception, SystemExit):
            out.write(traceback.format_exc())
    return out.getvalue()


def create_python_code_tool(
    name: str = "python_repl",
    description: str = "Execute Python code in a restricted sandbox and return the output.",
    tags: Sequence[str] | None = None,
) -> AgentTool:
    """A tool that runs Python code and returns what it printed.

    **There is no sandbox** (dynavec's description says otherwise): the code runs in this
    process with the real builtins, no timeout and no resource limit, and stdout/stderr are
    redirected process-wide while it runs. If the last statement is an expression, its
    ``repr`` is printed (unless ``None``); an exception appends its traceback. Give it only
    to agents whose every input you trust (docs/compatibility.md, K2).
    """

    def python_repl(code: str) -> str:
        return _run_python(code)

    return AgentTool(
        python_repl,
        name=name,
        description=description,
        parameters={
            "type": "object",
            "properties": {"code": {"type": "string", "description": "Python code to run."}},
            "required": ["code"],
        },
        tags=list(tags) if tags else None,
    )


# --- MCP ------------------------------------------------------------------------------------


def _get(obj: ForeignObject, key: str) -> ForeignObject:
    value = getattr(obj, key, None)
    if value is None and isinstance(obj, dict):
        value = obj.get(key)
    return value


_NO_SCHEMA: JSONSchema = {
    "type": "object",
    "properties": {"kwargs": {"type": "string"}},
    "required": ["kwargs"],
}
"""What dynavec shows for an MCP tool without a schema (the schema of ``fn(**kwargs)``)."""


def _schema(item: ForeignObject) -> JSONSchema:
    schema = getattr(item, "inputSchema", None)
    if schema is None:
        schema = getattr(item, "input_schema", None)
    if schema is None and isinstance(item, dict):
        schema = item.get("inputSchema")
    return dict(schema) if schema else dict(_NO_SCHEMA)


def _listed(listing: ForeignObject) -> list[tuple[str, str, JSONSchema]]:
    """``(name, description, schema)`` of each named tool of a ``list_tools()`` answer."""
    items = _get(listing, "tools")
    if items is None:
        items = listing
    out = []
    for item in items or []:
        name = _get(item, "name")
        if not name:
            continue
        out.append((str(name), str(_get(item, "description") or ""), _schema(item)))
    return out


def _is_error(result: ForeignObject) -> bool:
    """``result.isError`` (mcp 1.x), or ``result.is_error`` (mcp 2.x names it so)."""
    flag = _get(result, "isError")
    if flag is None:
        flag = _get(result, "is_error")
    return bool(flag)


def _result_text(result: ForeignObject) -> str:
    """The text of a ``call_tool()`` result: its parts' texts joined by blank lines."""
    content = _get(result, "content")
    if content is None:
        content = result
    if isinstance(content, list | tuple):
        texts = [str(t) for part in content if (t := _get(part, "text"))]
        return "\n\n".join(texts)
    return str(result)


def _tool(
    name: str,
    description: str,
    schema: JSONSchema,
    fn: Callable[..., object],
    tags: Sequence[str] | None,
) -> AgentTool:
    fn.__name__ = name
    fn.__doc__ = description
    return AgentTool(
        fn, name=name, description=description, parameters=schema, tags=list(tags or [])
    )


def mcp_tools_from_session(
    session: ForeignObject, tags: Sequence[str] | None = None
) -> list[AgentTool]:
    """The tools of a synchronous MCP session (``list_tools()`` and ``call_tool(name, args)``
    answering directly), as ``AgentTool`` objects.

    A tool's result is the text of its content parts, joined by blank lines.

    Raises:
        ValueError: ``session.list_tools()`` is async (an ``mcp.ClientSession``): use
            ``await mcp_tools_from_session_async(session)``.
    """
    listing = session.list_tools()
    if inspect.isawaitable(listing):
        if asyncio.iscoroutine(listing):
            listing.close()  # never awaited: close it instead of leaving a warning
        raise ValueError(
            "session.list_tools() is async (an mcp ClientSession): use "
            "mcp_tools_from_session_async() instead, as `await "
            "mcp_tools_from_session_async(session)`"
        )
    tools = []
    for name, description, schema in _listed(listing):

        def call(_name: str, **kwargs: object) -> str:
            return _result_text(session.call_tool(_name, kwargs))  # the dict positional

        tools.append(_tool(name, description, schema, _bound(call, name), tags))
    return tools


def _bound(call: Callable[..., object], name: str) -> Callable[..., object]:
    """``call`` with its tool name fixed, as a ``**kwargs`` function."""

    def fn(**kwargs: object) -> object:
        return call(name, **kwargs)

    return fn


async def mcp_tools_from_session_async(
    session: ForeignObject, tags: Sequence[str] | None = None
) -> list[AgentTool]:
    """The tools of an async MCP session (``mcp.ClientSession``), as ``AgentTool`` objects
    whose functions are coroutines: run them with ``aexecute`` / ``ReActAgent.arun``.

    A result whose ``isError`` is set is prefixed with ``"Error: "``.

    Example (a real session over stdio)::

        async with stdio_client(StdioServerParameters(command="python", args=["server.py"])) \\
                as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            tools = await mcp_tools_from_session_async(session)
            result = await ReActAgent(model, tools=tools).arun("...")
    """
    listing = await session.list_tools()
    tools = []
    for name, description, schema in _listed(listing):

        async def call(_name: str, **kwargs: object) -> str:
            result = await session.call_tool(_name, arguments=kwargs)
            text = _result_text(result)
            return f"Error: {text}" if _is_error(result) else text

        tools.append(_tool(name, description, schema, _abound(call, name), tags))
    return tools


def _abound(call: Callable[..., Awaitable[object]], name: str) -> Callable[..., Awaitable[object]]:
    async def fn(**kwargs: object) -> object:
        return await call(name, **kwargs)

    return fn
