"""A small MCP server over stdio (the ``mcp`` package's ``MCPServer``), started by the tests as a
child process: ``python -m tests.mcp_server``. It writes each call to the file named by
``MCP_CALL_LOG`` (one JSON line per call) so tests can see what really reached it."""

from __future__ import annotations

import json
import os

from mcp.server.mcpserver import MCPServer

server = MCPServer("dynavec-test-tools")


def _log(name: str, arguments: dict[str, object]) -> None:
    path = os.environ.get("MCP_CALL_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as log:
            log.write(json.dumps({"tool": name, "arguments": arguments}) + "\n")


@server.tool()
def add(a: int, b: int) -> str:
    """Add two numbers."""
    _log("add", {"a": a, "b": b})
    return str(a + b)


@server.tool()
def shout(text: str) -> list[str]:
    """Upper-case a text, in two parts."""
    _log("shout", {"text": text})
    return [text.upper(), "!"]


@server.tool()
def explode(reason: str) -> str:
    """Always fails."""
    _log("explode", {"reason": reason})
    raise ValueError(f"exploded: {reason}")


if __name__ == "__main__":
    server.run("stdio")
