"""``dynavec.agents.connectors``: the same functions as :mod:`dynavec_langgraph.connectors`
(docs/compatibility.md, N6)."""

from __future__ import annotations

from dynavec_langgraph._dynavec.connectors import (
    create_http_tool,
    create_python_code_tool,
    mcp_tools_from_session,
    mcp_tools_from_session_async,
)

__all__ = [
    "create_http_tool",
    "create_python_code_tool",
    "mcp_tools_from_session",
    "mcp_tools_from_session_async",
]
