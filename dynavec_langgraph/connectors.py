"""dynavec's tool connectors: an HTTP tool, a Python tool, and the tools of an MCP session.

The code is in ``dynavec_langgraph._dynavec.connectors``; this module is its public import path.
"""

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
