"""Mirrors how ``langchain.agents.create_agent`` makes middleware hooks into nodes (checked
against langchain 1.5.2): which hooks a middleware overrides, their ``can_jump_to``, the
node's trace policy (``_node_trace_policy``, ``_trace_policy._resolve``); and the reviewed
marker the last ``after_model`` hook sets."""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable
from typing import Any

from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableConfig
from langgraph.runtime import get_runtime
from langgraph.types import Command

from dynavec_langgraph._graph.nodes import NodeRunnable
from dynavec_langgraph._names import REVIEWED_KEY

__all__ = [
    "can_jump_to",
    "hook_node",
    "hook_trace_policy",
    "last_ai_id",
    "overrides",
]


def overrides(m: Any, hook: str) -> bool:
    from langchain.agents.middleware import AgentMiddleware

    cls = type(m)
    return bool(
        getattr(cls, hook) is not getattr(AgentMiddleware, hook)
        or getattr(cls, "a" + hook) is not getattr(AgentMiddleware, "a" + hook)
    )


def can_jump_to(m: Any, hook: str) -> list[str]:
    from langchain.agents.middleware import AgentMiddleware

    for name in (hook, "a" + hook):
        method = getattr(type(m), name, None)
        if method is not None and method is not getattr(AgentMiddleware, name):
            jumps = getattr(method, "__can_jump_to__", None)
            if jumps:
                return list(jumps)
    return []


def _effective_trace_policy(own: Any) -> Any:
    """The middleware's own ``trace_policy``, else the process-wide default of
    ``langchain.agents.middleware.configure_trace_policy``. Mirrors ``_resolve`` of
    ``langchain.agents.middleware._trace_policy`` (langchain 1.5.2), which keeps that default
    in its ``_DEFAULT_TRACE_POLICY`` (no public getter; pinned by
    tests/test_create_agent.py)."""
    if own is not None:
        return own
    module = importlib.import_module("langchain.agents.middleware._trace_policy")
    return getattr(module, "_DEFAULT_TRACE_POLICY", None)


def hook_trace_policy(own: Any) -> Any:
    """The ``TracePolicy`` of a middleware hook's node, resolved when the span is recorded
    (so ``configure_trace_policy`` after the agent is built applies), as create_agent's
    ``_node_trace_policy`` (langchain 1.5.2)."""
    from langgraph.types import TracePolicy

    def transform(field: str) -> Callable[[Any], Any]:
        def process(value: Any) -> Any:
            effective = _effective_trace_policy(own)
            fn = getattr(effective, field, None) if effective is not None else None
            return fn(value) if fn is not None else value

        return process

    return TracePolicy(
        process_inputs=transform("process_inputs"), process_outputs=transform("process_outputs")
    )


def last_ai_id(state: Any) -> str | None:
    for m in reversed(state.get("messages") or ()):
        if isinstance(m, AIMessage):
            return m.id
    return None


def _marked(result: Any, ai_id: str | None) -> Any:
    """The hook's update plus the reviewed marker (a Command's update, a dict, or None)."""
    if isinstance(result, Command):
        update = result.update if isinstance(result.update, dict) else None
        if update is None and result.update is not None:
            return result
        return dataclasses.replace(result, update={**(update or {}), REVIEWED_KEY: ai_id})
    if result is None or isinstance(result, dict):
        return {**(result or {}), REVIEWED_KEY: ai_id}
    return result


def hook_node(m: Any, hook: str, mark: bool = False) -> NodeRunnable:
    from langchain.agents.middleware import AgentMiddleware

    cls = type(m)
    sync = getattr(m, hook) if getattr(cls, hook) is not getattr(AgentMiddleware, hook) else None
    asyn = (
        getattr(m, "a" + hook)
        if getattr(cls, "a" + hook) is not getattr(AgentMiddleware, "a" + hook)
        else None
    )
    name = f"{m.name}.{hook}"

    def run(state: Any, config: RunnableConfig) -> Any:
        if sync is None:
            raise TypeError(
                f"middleware {m.name!r} has only an async {hook}: run the agent with "
                "ainvoke/astream"
            )
        result = sync(state, get_runtime())
        return _marked(result, last_ai_id(state)) if mark else result

    async def arun(state: Any, config: RunnableConfig) -> Any:
        if asyn is None:
            return run(state, config)
        result = await asyn(state, get_runtime())
        return _marked(result, last_ai_id(state)) if mark else result

    return NodeRunnable(name, run, arun)
