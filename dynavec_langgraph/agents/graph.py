"""``dynavec.agents.graph``: dynavec's graph engine (``AgentGraph`` and its nodes, edges,
reducers, traces, results and errors), compiled to a LangGraph ``StateGraph``; here
``AgentState`` is the graph state (``GraphState``), as in dynavec's graph branch
(docs/compatibility.md, part 2 §4)."""

from __future__ import annotations

from dynavec_langgraph._dynavec.flow.conditions import safe_eval_expr
from dynavec_langgraph._dynavec.flow.graph import AgentGraph, AgentState, FlowGraph, FlowState
from dynavec_langgraph._dynavec.flow.parts import (
    BaseNode,
    Edge,
    FunctionNode,
    GraphCycleError,
    GraphError,
    GraphState,
    GraphValidationError,
    MaxIterationsExceededError,
    ReducerFn,
    append_reducer,
    default_reducer,
)
from dynavec_langgraph._dynavec.flow.results import GraphResult, NodeTrace

__all__ = [
    "AgentGraph",
    "AgentState",
    "BaseNode",
    "Edge",
    "FlowGraph",
    "FlowState",
    "FunctionNode",
    "GraphCycleError",
    "GraphError",
    "GraphResult",
    "GraphState",
    "GraphValidationError",
    "MaxIterationsExceededError",
    "NodeTrace",
    "ReducerFn",
    "append_reducer",
    "default_reducer",
    "safe_eval_expr",
]
