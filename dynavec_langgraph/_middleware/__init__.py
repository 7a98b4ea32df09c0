"""``create_agent``'s options and LangChain middleware on dynavec's agent graph.

:func:`dynavec_langgraph.create_react_agent` builds its two-node graph when none of these is
used. With ``middleware``, ``response_format``, ``state_schema``, a callable ``prompt`` or the
prebuilt agent's ``pre_model_hook`` / ``post_model_hook``, :func:`build_graph` here wires them
as ``langchain.agents.create_agent`` does (one node per middleware hook, in its order, with its
``jump_to`` edges; ``wrap_model_call`` around the model call; ``wrap_tool_call`` around each
call in LangGraph's ``ToolNode``), around the same ``agent`` and ``tools`` nodes: tools still run
one call per superstep, each checkpointed before the next, so the human-in-the-loop guarantees
hold with middleware in place.

LangChain (``langchain``) is an optional dependency: it is imported when an option needs it.

The mirror of ``create_agent``'s internals, one file per part, each headed by the LangChain
functions it mirrors and the version checked: ``options`` (options, state schema), ``hooks``
(middleware hooks as nodes), ``structured`` (structured output), ``model_node``
(``wrap_model_call``, the bound model), ``tool_calls`` (``wrap_tool_call``),
``per_call_review`` (``HumanInTheLoopMiddleware``'s per-call review), ``graph`` (the graph's
nodes and edges) and ``face`` (``create_agent``'s schemas, transformers and run config).
:mod:`dynavec_langgraph._graph.factory` is the only importer of this package.
"""

from __future__ import annotations

from dynavec_langgraph._middleware.face import (
    create_agent_config,
    create_agent_tool_node,
    create_agent_transformers,
    default_transformers,
)
from dynavec_langgraph._middleware.graph import build_graph
from dynavec_langgraph._middleware.hooks import hook_trace_policy
from dynavec_langgraph._middleware.model_node import ExtendedNodes, patch_invalid_calls
from dynavec_langgraph._middleware.options import (
    EXTRA_HINT,
    POST_MODEL_HOOK,
    PRE_MODEL_HOOK,
    AgentOptions,
    merged_state,
    need_langchain,
    resolve_prompt,
)
from dynavec_langgraph._middleware.tool_calls import tool_wrappers

__all__ = [
    "EXTRA_HINT",
    "POST_MODEL_HOOK",
    "PRE_MODEL_HOOK",
    "AgentOptions",
    "ExtendedNodes",
    "build_graph",
    "create_agent_config",
    "create_agent_tool_node",
    "create_agent_transformers",
    "default_transformers",
    "hook_trace_policy",
    "merged_state",
    "need_langchain",
    "patch_invalid_calls",
    "resolve_prompt",
    "tool_wrappers",
]
