"""The tool-error handler of LangGraph's ``ToolNode`` when ``wrap_tool_call`` middleware is in
place: :func:`wrapped_error_observation`.

``ToolNode`` reads the handler's annotation (``inspect.signature``, ``get_type_hints``) to know
which errors it answers, so the annotation must be the class itself: this module does not use
``from __future__ import annotations``, and it imports ``ToolInvocationError`` at its top. The
factory imports it when it builds a graph (LangGraph's prebuilt tool node costs ~40 ms to
import, so nothing imports it at package import time).
"""

from langgraph.prebuilt.tool_node import ToolInvocationError

from dynavec_langgraph._graph.tool_call import error_observation

__all__ = ["wrapped_error_observation"]


def wrapped_error_observation(error: ToolInvocationError) -> str:
    """With ``wrap_tool_call`` middleware: inside the wrappers ``ToolNode`` answers only bad
    arguments (the annotation tells it so), so the wrappers see a tool's exceptions (retries
    need them); what leaves the wrappers is answered as docs/compatibility.md §3 says."""
    return error_observation(error)
