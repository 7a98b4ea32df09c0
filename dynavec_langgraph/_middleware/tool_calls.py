"""Mirrors ``langchain.agents.factory._chain_tool_call_wrappers`` (checked against
langchain 1.5.2): the ``wrap_tool_call`` middleware composed for LangGraph's ``ToolNode``, first
in the list outermost; a call a reviewer's edit redirected to another gated tool is reviewed by
that tool's own rule (:mod:`dynavec_langgraph._middleware.per_call_review`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from langchain_core.messages import AIMessage, ToolMessage

from dynavec_langgraph._middleware.hooks import overrides

if TYPE_CHECKING:
    from langgraph.prebuilt.tool_node import (
        AsyncToolCallWrapper,
        ToolCallRequest,
        ToolCallWrapper,
    )

    from dynavec_langgraph._types import GraphCommand, Middleware

    ToolResult = ToolMessage | GraphCommand

__all__ = ["review_redirect", "tool_wrappers"]


def _model_call_name(request: ToolCallRequest) -> str | None:
    """The name the model gave the call ``request`` runs (the AI message keeps the model's
    call when a reviewer's edit redirected it), or ``None``."""
    state = getattr(request, "state", None)
    messages = state.get("messages") if isinstance(state, Mapping) else None
    call_id = request.tool_call.get("id")
    for message in reversed(messages or []):
        if isinstance(message, AIMessage):
            for call in message.tool_calls:
                if call.get("id") == call_id:
                    return str(call["name"])
            return None
    return None


def review_redirect(
    middleware: Sequence[Middleware], request: ToolCallRequest
) -> ToolCallRequest | ToolMessage:
    """A call a reviewer's edit redirected to another tool is judged by that tool's own rule:
    when a ``HumanInTheLoopMiddleware`` gates the tool it now names, that middleware asks about
    it as a call of its own (its allowed decisions, its ``when``; the edit there cannot switch
    tools again) before it runs. Returns the request to run, or the ``ToolMessage`` answering
    the call instead (rejected, or responded to). Any other call is returned unchanged.

    The review is :func:`dynavec_langgraph._middleware.per_call_review.review_call`, a mirror of
    ``HumanInTheLoopMiddleware._resolve_per_call`` (langchain 1.5.2), pinned by
    tests/test_review_digest.py.
    """
    name = request.tool_call.get("name")
    asked = _model_call_name(request)
    if asked is None or asked == name:
        return request
    from langchain.agents.middleware import HumanInTheLoopMiddleware

    from dynavec_langgraph._middleware.per_call_review import (
        review_call,  # needs langchain, as here
    )

    for m in middleware:
        if isinstance(m, HumanInTheLoopMiddleware) and name in m.interrupt_on:
            return review_call(m, request)
    return request


def tool_wrappers(
    middleware: Sequence[Middleware],
) -> tuple[ToolCallWrapper | None, AsyncToolCallWrapper | None]:
    """The ``wrap_tool_call`` middleware composed for LangGraph's ``ToolNode`` (first in the
    list outermost, as in create_agent)."""
    wrapping = [m for m in middleware if overrides(m, "wrap_tool_call")]
    if not wrapping:
        return None, None

    def wrap(
        request: ToolCallRequest, execute: Callable[[ToolCallRequest], ToolResult]
    ) -> ToolResult:
        def layer(i: int, req: ToolCallRequest) -> ToolResult:
            if i == len(wrapping):
                reviewed = review_redirect(middleware, req)
                return reviewed if isinstance(reviewed, ToolMessage) else execute(reviewed)
            return wrapping[i].wrap_tool_call(req, lambda r: layer(i + 1, r))

        return layer(0, request)

    async def awrap(
        request: ToolCallRequest, execute: Callable[[ToolCallRequest], Awaitable[ToolResult]]
    ) -> ToolResult:
        async def layer(i: int, req: ToolCallRequest) -> ToolResult:
            if i == len(wrapping):
                reviewed = review_redirect(middleware, req)
                return reviewed if isinstance(reviewed, ToolMessage) else await execute(reviewed)
            return await wrapping[i].awrap_tool_call(req, lambda r: layer(i + 1, r))

        return await layer(0, request)

    return wrap, awrap
