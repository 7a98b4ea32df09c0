"""``create_react_agent``: dynavec's ReAct agent as a compiled LangGraph graph.

The graph has two nodes. ``agent`` calls the model; ``tools`` runs ONE tool call of the
model's turn per visit, in the model's order, so every call is its own superstep and is
checkpointed before the next one starts. On resume only the paused call runs again; calls
that finished never do, and calls after it run only once the decision is in.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Final, Literal, NotRequired, Required, TypedDict, get_args

from langchain_core.language_models import LanguageModelInput
from langchain_core.messages import AIMessage, AnyMessage, SystemMessage, ToolMessage
from langchain_core.messages.tool import ToolCall as LCToolCall
from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda
from langgraph.channels import DeltaChannel
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.store.base import BaseStore
from langgraph.types import Checkpointer

from dynavec_langgraph.interrupt import ToolCallRef, running_tool_call
from dynavec_langgraph.messages import (
    add_conversation,
    merge_conversation,
    pending_calls,
    run_steps,
)
from dynavec_langgraph.models import bind_model
from dynavec_langgraph.records import AgentState, TerminationReason
from dynavec_langgraph.tools import AgentTool, as_tools, unknown_tool_observation

__all__ = [
    "AGENT_NODE",
    "MODEL_KWARGS_KEY",
    "TOOLS_NODE",
    "MessageStorage",
    "ReActState",
    "create_react_agent",
]

AGENT_NODE: Final = "agent"
TOOLS_NODE: Final = "tools"
MODEL_KWARGS_KEY = "dynavec_model_kwargs"
"""``config["configurable"][MODEL_KWARGS_KEY]``: extra keyword arguments for the model call."""

MessageStorage = Literal["delta", "full"]
"""How checkpoints store ``messages``: ``"delta"`` stores each step's new messages
(LangGraph's ``DeltaChannel``; storage grows linearly), ``"full"`` the whole list each step."""

_RECURSION_LIMIT = 10_000  # max_steps bounds the loop; LangGraph's default (25) is too low


class ReActState(TypedDict, total=False):
    """The agent's state: messages first, so it fits any parent graph with ``messages``.

    Attributes:
        messages: the conversation (no system prompt; it is added at each model call).
        step: model calls made in the current run (since the last user message).
        termination_reason: ``"completed"`` or ``"max_steps_reached"`` once the run ended,
            ``None`` while it runs. A pause shows as the graph's interrupt instead.
        shared: the data of the ``AgentState`` shared with tools.
    """

    messages: Required[Annotated[list[AnyMessage], DeltaChannel(merge_conversation)]]
    step: NotRequired[int]
    termination_reason: NotRequired[TerminationReason | None]
    shared: NotRequired[dict[str, Any]]


class _FullReActState(TypedDict, total=False):
    messages: Required[Annotated[list[AnyMessage], add_conversation]]
    step: NotRequired[int]
    termination_reason: NotRequired[TerminationReason | None]
    shared: NotRequired[dict[str, Any]]


# --- decisions: plain functions ---------------------------------------------------------


def route_start(state: ReActState) -> Literal["agent", "tools"]:
    """A thread with unanswered calls (paused, or sent new input while paused) finishes them
    first; anything else goes to the model."""
    return TOOLS_NODE if pending_calls(state["messages"]) else AGENT_NODE


def route_after_agent(state: ReActState) -> Literal["tools", "__end__"]:
    """Tool calls go to the tool node; an answer ends the run."""
    return TOOLS_NODE if pending_calls(state["messages"]) else "__end__"


def _route_after_tools(max_steps: int) -> Any:
    def route_after_tools(state: ReActState) -> Literal["agent", "tools", "__end__"]:
        """Next call of the batch, else the model, else the end once ``max_steps`` is spent."""
        messages = state["messages"]
        if pending_calls(messages):
            return TOOLS_NODE
        return "__end__" if run_steps(messages) >= max_steps else AGENT_NODE

    return route_after_tools


def _after_model(state: ReActState, response: Any) -> dict[str, Any]:
    if not isinstance(response, AIMessage):
        raise TypeError(f"the model answered {type(response).__name__}, not an AIMessage")
    has_calls = bool(response.tool_calls or response.invalid_tool_calls)
    return {
        "messages": [response],
        "step": run_steps(state["messages"]) + 1,
        "termination_reason": None if has_calls else "completed",
    }


def _model_kwargs(config: RunnableConfig) -> dict[str, Any]:
    return dict((config.get("configurable") or {}).get(MODEL_KWARGS_KEY) or {})


class _Call:
    """The next pending call of the turn, resolved against the tools."""

    def __init__(self, state: ReActState, tools: dict[str, AgentTool], max_steps: int) -> None:
        messages = state["messages"]
        pending = pending_calls(messages)
        if not pending:
            raise RuntimeError("the tool node ran with no pending tool call")
        self.call: LCToolCall = pending[0]
        self.is_last = len(pending) == 1
        self.tool = tools.get(self.call["name"])
        self.shared = AgentState(dict(state.get("shared") or {}))
        self.ref: ToolCallRef = {
            "id": self.call["id"] or "",
            "name": self.call["name"],
            "args": dict(self.call["args"]),
        }
        self.out_of_steps = run_steps(messages) >= max_steps
        self.invalid = self._invalid_arguments(messages)

    def _invalid_arguments(self, messages: Sequence[AnyMessage]) -> str | None:
        for m in reversed(messages):
            if isinstance(m, AIMessage):
                for bad in m.invalid_tool_calls:
                    if bad.get("id") == self.call["id"]:
                        return (
                            f"Error executing tool '{self.call['name']}': the arguments are not "
                            f"valid JSON ({bad.get('error') or bad.get('args')})"
                        )
                return None
        return None

    def update(self, observation: str) -> dict[str, Any]:
        update: dict[str, Any] = {
            "messages": [
                ToolMessage(
                    content=observation, tool_call_id=self.ref["id"], name=self.call["name"]
                )
            ]
        }
        if self.tool is not None and self.tool.state_param is not None:
            update["shared"] = self.shared.data
        if self.is_last and self.out_of_steps:
            update["termination_reason"] = "max_steps_reached"
        return update


class _Nodes:
    """The two nodes, sync and async; they differ only in the line that does I/O."""

    def __init__(
        self,
        model: Runnable[LanguageModelInput, Any],
        tools: list[AgentTool],
        system_prompt: str | None,
        max_steps: int,
    ) -> None:
        self.model = model
        self.tools = {t.name: t for t in tools}
        self.prompt = [SystemMessage(content=system_prompt)] if system_prompt else []
        self.max_steps = max_steps

    def call_model(self, state: ReActState, config: RunnableConfig) -> dict[str, Any]:
        messages = self.prompt + list(state["messages"])
        return _after_model(state, self.model.invoke(messages, config, **_model_kwargs(config)))

    async def acall_model(self, state: ReActState, config: RunnableConfig) -> dict[str, Any]:
        messages = self.prompt + list(state["messages"])
        response = await self.model.ainvoke(messages, config, **_model_kwargs(config))
        return _after_model(state, response)

    def call_tool(self, state: ReActState) -> dict[str, Any]:
        call = _Call(state, self.tools, self.max_steps)
        if call.invalid or call.tool is None:
            return call.update(call.invalid or unknown_tool_observation(call.call["name"]))
        with running_tool_call(call.ref):
            return call.update(call.tool.execute(call.call["args"], state=call.shared))

    async def acall_tool(self, state: ReActState) -> dict[str, Any]:
        call = _Call(state, self.tools, self.max_steps)
        if call.invalid or call.tool is None:
            return call.update(call.invalid or unknown_tool_observation(call.call["name"]))
        with running_tool_call(call.ref):
            return call.update(await call.tool.aexecute(call.call["args"], state=call.shared))


def create_react_agent(
    model: Any,
    tools: Sequence[Any] | None = None,
    *,
    system_prompt: str | None = None,
    max_steps: int = 10,
    checkpointer: Checkpointer = None,
    store: BaseStore | None = None,
    name: str = "dynavec_agent",
    message_storage: MessageStorage = "delta",
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """Build dynavec's ReAct agent as a compiled LangGraph graph.

    Run it alone (``graph.invoke({"messages": [...]}, config)``) or add it as a node of a
    parent graph whose state has ``messages``. Tools may call
    :func:`dynavec_langgraph.interrupt` to pause for a person; answer with
    ``Command(resume=decision)``.

    Args:
        model: a LangChain chat model that can bind tools, a ``"provider:model"`` string,
            or a dynavec-style model (``invoke(messages, tools=...)``).
        tools: ``@tool`` functions, plain functions, LangChain tools or dynavec-style tools.
        system_prompt: added before the conversation at every model call (not stored).
        max_steps: model calls per run (per user message); below 1 counts as 1.
        checkpointer: a LangGraph saver; ``None`` when the graph is a subgraph (it uses the
            parent's). Interrupts need one to be resumed.
        store: a LangGraph store, passed to ``compile``.
        name: the graph's name (the node name Studio and parent graphs show).
        message_storage: ``"delta"`` (default; linear storage) or ``"full"``.

    Returns:
        The compiled graph. Its state is :class:`ReActState`.

    Raises:
        TypeError: a model that cannot call tools, or a tool that cannot be used.
        ValueError: an unknown ``message_storage`` or two tools with one name.

    Example:
        >>> from dynavec_langgraph.testing import ScriptedChatModel
        >>> graph = create_react_agent(ScriptedChatModel(turns=["Hi!"]), [])
        >>> graph.invoke({"messages": [("user", "hello")]})["messages"][-1].content
        'Hi!'
    """
    if message_storage not in get_args(MessageStorage):
        raise ValueError(
            f"message_storage={message_storage!r}: use one of {get_args(MessageStorage)}"
        )
    agent_tools = as_tools(tools)
    steps = max(1, int(max_steps))
    nodes = _Nodes(bind_model(model, agent_tools), agent_tools, system_prompt, steps)
    schema = ReActState if message_storage == "delta" else _FullReActState
    builder = StateGraph(schema)
    builder.add_node(AGENT_NODE, RunnableLambda(nodes.call_model, afunc=nodes.acall_model))
    builder.add_node(TOOLS_NODE, RunnableLambda(nodes.call_tool, afunc=nodes.acall_tool))
    builder.add_conditional_edges(START, route_start, [AGENT_NODE, TOOLS_NODE])
    builder.add_conditional_edges(AGENT_NODE, route_after_agent, [TOOLS_NODE, END])
    builder.add_conditional_edges(
        TOOLS_NODE, _route_after_tools(steps), [AGENT_NODE, TOOLS_NODE, END]
    )
    graph = builder.compile(checkpointer=checkpointer, store=store, name=name)
    return graph.with_config(recursion_limit=_RECURSION_LIMIT)
