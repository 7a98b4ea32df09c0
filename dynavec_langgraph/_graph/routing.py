"""The graph's routes: after the start, the model and the tool node (every conditional edge
lists its targets, so Studio draws them). Plain functions of the state."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

from langgraph.types import Send

from dynavec_langgraph._graph.conversation_view import pending_calls

if TYPE_CHECKING:
    from dynavec_langgraph._graph.nodes import ReActNodes
from dynavec_langgraph._graph.state import steps_in_run
from dynavec_langgraph._graph.tasks import all_tasks
from dynavec_langgraph._names import AGENT_NODE, TOOLS_NODE

__all__ = [
    "route_after_agent",
    "route_after_agent_parallel",
    "route_after_task_parallel",
    "route_start",
    "route_start_parallel",
    "tools_router",
]


def route_start(state: Mapping[str, Any]) -> Literal["agent", "tools"]:
    """A thread with unanswered calls (paused, or sent new input while paused) finishes them
    first; anything else goes to the model."""
    return TOOLS_NODE if pending_calls(state["messages"]) else AGENT_NODE


def route_after_agent(state: Mapping[str, Any]) -> Literal["tools", "__end__"]:
    """Tool calls go to the tool node; an answer ends the run."""
    return TOOLS_NODE if pending_calls(state["messages"]) else "__end__"


def route_start_parallel(max_steps: int, nodes: ReActNodes) -> Any:
    def route_start(state: Mapping[str, Any]) -> list[Send] | Literal["agent"]:
        """Unanswered calls each become a task; otherwise the model."""
        return all_tasks(state, max_steps, nodes.direct, nodes.stateless) or AGENT_NODE

    return route_start


def route_after_agent_parallel(max_steps: int, nodes: ReActNodes) -> Any:
    def route_after_agent(state: Mapping[str, Any]) -> list[Send] | Literal["__end__"]:
        """Each tool call of the turn as its own task, all at once; no calls ends the run."""
        return all_tasks(state, max_steps, nodes.direct, nodes.stateless) or "__end__"

    return route_after_agent


def route_after_task_parallel(max_steps: int) -> Any:
    def route_after_task(state: Mapping[str, Any]) -> Literal["agent", "__end__"]:
        """After the turn's tasks: the model again, or the end once ``max_steps`` is spent or
        a ``return_direct`` tool answered. Held calls go back through the agent node, which
        sends them again without calling the model."""
        if any(c["id"] in (state.get("held") or ()) for c in pending_calls(state["messages"])):
            return AGENT_NODE
        if state.get("termination_reason") == "completed":
            return "__end__"
        return "__end__" if steps_in_run(state) >= max_steps else AGENT_NODE

    return route_after_task


def tools_router(max_steps: int) -> Any:
    def route_after_tools(state: Mapping[str, Any]) -> Literal["agent", "tools", "__end__"]:
        """Next call of the batch, else the model, else the end once ``max_steps`` is spent."""
        messages = state["messages"]
        if pending_calls(messages):
            return TOOLS_NODE
        if state.get("termination_reason") == "completed":  # a return_direct tool answered
            return "__end__"
        return "__end__" if steps_in_run(state) >= max_steps else AGENT_NODE

    return route_after_tools
