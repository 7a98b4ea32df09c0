"""``create_react_agent``: dynavec's ReAct agent as a compiled LangGraph graph.

The graph has two nodes. ``agent`` calls the model; ``tools`` runs ONE tool call of the
model's turn per visit, in the model's order, so every call is its own superstep and is
checkpointed before the next one starts. On resume only the paused call runs again; calls
that finished never do, and calls after it run only once the decision is in.
"""

from __future__ import annotations

import copy
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Final, Literal, NotRequired, Required, TypedDict, get_args

from langchain_core.language_models import LanguageModelInput
from langchain_core.messages import AIMessage, AnyMessage, SystemMessage, ToolMessage
from langchain_core.messages.tool import ToolCall as LCToolCall
from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda
from langgraph.channels import DeltaChannel
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.store.base import BaseStore
from langgraph.types import Checkpointer, Send

from dynavec_langgraph.interrupt import ToolCallRef, running_tool_call
from dynavec_langgraph.messages import (
    add_conversation,
    merge_conversation,
    new_turn,
    pending_calls,
    run_steps,
)
from dynavec_langgraph.records import AgentState, TerminationReason
from dynavec_langgraph.tools import AgentTool, as_tools, unknown_tool_observation

__all__ = [
    "AGENT_NODE",
    "COMPLETED_CALLS_KEY",
    "MODEL_KWARGS_KEY",
    "TOOLS_METADATA_KEY",
    "TOOLS_NODE",
    "CompletedCall",
    "MessageStorage",
    "ReActState",
    "check_max_steps",
    "completed_calls",
    "create_react_agent",
]

AGENT_NODE: Final = "agent"
TOOLS_NODE: Final = "tools"
MODEL_KWARGS_KEY = "dynavec_model_kwargs"
"""``config["configurable"][MODEL_KWARGS_KEY]``: extra keyword arguments for the model call."""
TOOLS_METADATA_KEY: Final = "dynavec_tools"
"""``graph.config["metadata"][TOOLS_METADATA_KEY]``: the names of the graph's tools (a list,
so it is never copied into checkpoint metadata)."""

MessageStorage = Literal["delta", "full"]
"""How checkpoints store ``messages``: ``"delta"`` stores each step's new messages
(LangGraph's ``DeltaChannel``; storage grows linearly), ``"full"`` the whole list each step."""

_RECURSION_LIMIT = 10_000  # max_steps bounds the loop; LangGraph's default (25) is too low
_SUPERSTEPS_PER_STEP = 1_000
"""LangGraph's recursion limit follows ``max_steps`` (a model call, then one superstep per tool
call of its turn), so a run ends at ``max_steps``, never at a limit the caller did not set."""


def _last(_old: Any, new: Any) -> Any:
    return new


_SET, _DELETE = "dynavec_set", "dynavec_delete"


def _apply_shared(old: dict[str, Any] | None, new: dict[str, Any]) -> dict[str, Any]:
    """``shared`` reducer: a plain dict replaces; a tool's change set updates key by key, so
    tools running in parallel never overwrite each other's writes."""
    if set(new) == {_SET, _DELETE}:
        merged = dict(old or {})
        merged.update(new[_SET])
        for key in new[_DELETE]:
            merged.pop(key, None)
        return merged
    return dict(new)


def _shared_change(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any] | None:
    changed = {k: v for k, v in after.items() if k not in before or before[k] != v}
    deleted = [k for k in before if k not in after]
    return {_SET: changed, _DELETE: deleted} if changed or deleted else None


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
    step: NotRequired[Annotated[int, _last]]
    termination_reason: NotRequired[Annotated[TerminationReason | None, _last]]
    shared: NotRequired[Annotated[dict[str, Any], _apply_shared]]


class _FullReActState(TypedDict, total=False):
    messages: Required[Annotated[list[AnyMessage], add_conversation]]
    step: NotRequired[Annotated[int, _last]]
    termination_reason: NotRequired[Annotated[TerminationReason | None, _last]]
    shared: NotRequired[Annotated[dict[str, Any], _apply_shared]]


# --- decisions: plain functions ---------------------------------------------------------


def route_start(state: Mapping[str, Any]) -> Literal["agent", "tools"]:
    """A thread with unanswered calls (paused, or sent new input while paused) finishes them
    first; anything else goes to the model."""
    return TOOLS_NODE if pending_calls(state["messages"]) else AGENT_NODE


def route_after_agent(state: Mapping[str, Any]) -> Literal["tools", "__end__"]:
    """Tool calls go to the tool node; an answer ends the run."""
    return TOOLS_NODE if pending_calls(state["messages"]) else "__end__"


def _route_start_parallel(max_steps: int) -> Any:
    def route_start(state: Mapping[str, Any]) -> list[Send] | Literal["agent"]:
        """Unanswered calls each become a task; otherwise the model."""
        return _all_tasks(state, max_steps) or AGENT_NODE

    return route_start


def _route_after_agent_parallel(max_steps: int) -> Any:
    def route_after_agent(state: Mapping[str, Any]) -> list[Send] | Literal["__end__"]:
        """Each tool call of the turn as its own task, all at once; no calls ends the run."""
        return _all_tasks(state, max_steps) or "__end__"

    return route_after_agent


def _route_after_task(max_steps: int) -> Any:
    def route_after_task(state: Mapping[str, Any]) -> Literal["agent", "__end__"]:
        """After the turn's tasks: the model again, or the end once ``max_steps`` is spent."""
        return "__end__" if run_steps(state["messages"]) >= max_steps else AGENT_NODE

    return route_after_task


def _route_after_tools(max_steps: int) -> Any:
    def route_after_tools(state: Mapping[str, Any]) -> Literal["agent", "tools", "__end__"]:
        """Next call of the batch, else the model, else the end once ``max_steps`` is spent."""
        messages = state["messages"]
        if pending_calls(messages):
            return TOOLS_NODE
        return "__end__" if run_steps(messages) >= max_steps else AGENT_NODE

    return route_after_tools


def _after_model(state: ReActState, response: Any) -> dict[str, Any]:
    if not isinstance(response, AIMessage):
        raise TypeError(
            f"the model answered {response!r} ({type(response).__name__}), not an AIMessage: "
            "pass a LangChain chat model (or a dynavec model whose invoke returns an assistant "
            "message); nothing of this turn was saved"
        )
    response = new_turn(state["messages"], response)
    has_calls = bool(response.tool_calls or response.invalid_tool_calls)
    return {
        "messages": [response],
        "step": run_steps(state["messages"]) + 1,
        "termination_reason": None if has_calls else "completed",
    }


def _model_kwargs(config: RunnableConfig) -> dict[str, Any]:
    return dict((config.get("configurable") or {}).get(MODEL_KWARGS_KEY) or {})


def _invalid_arguments(messages: Sequence[AnyMessage], call: LCToolCall) -> str | None:
    """The observation for a call whose arguments were not valid JSON, else None."""
    for m in reversed(messages):
        if not isinstance(m, AIMessage):
            continue
        for bad in m.invalid_tool_calls:
            if bad.get("id") == call["id"]:
                return (
                    f"Error executing tool '{call['name']}': the arguments are not "
                    f"valid JSON ({bad.get('error') or bad.get('args')})"
                )
        if any(c["id"] == call["id"] for c in m.tool_calls):
            return None
    return None


class ToolTask(TypedDict):
    """What one tool task gets (the ``Send`` argument in parallel mode)."""

    call: LCToolCall
    shared: dict[str, Any]
    invalid: str | None
    ends_run: bool
    """True when answering this call ends the run at ``max_steps``."""


def _next_task(state: ReActState, max_steps: int) -> ToolTask:
    """Sequential mode: the first pending call of the turn."""
    messages = state["messages"]
    pending = pending_calls(messages)
    if not pending:
        raise RuntimeError("the tool node ran with no pending tool call")
    return {
        "call": pending[0],
        "shared": dict(state.get("shared") or {}),
        "invalid": _invalid_arguments(messages, pending[0]),
        "ends_run": len(pending) == 1 and run_steps(messages) >= max_steps,
    }


def _all_tasks(state: Mapping[str, Any], max_steps: int) -> list[Send]:
    """Parallel mode: every pending call as its own task."""
    messages = state["messages"]
    ends = run_steps(messages) >= max_steps
    shared = dict(state.get("shared") or {})
    return [
        Send(
            TOOLS_NODE,
            ToolTask(call=c, shared=shared, invalid=_invalid_arguments(messages, c), ends_run=ends),
        )
        for c in pending_calls(messages)
    ]


class _Call:
    """One tool call being run, resolved against the tools."""

    def __init__(self, task: ToolTask, tools: dict[str, AgentTool]) -> None:
        self.task = task
        self.call = task["call"]
        self.tool = tools.get(self.call["name"])
        needs_state = self.tool is not None and self.tool.state_param is not None
        self.shared = AgentState(copy.deepcopy(task["shared"]) if needs_state else {})
        self.ref: ToolCallRef = {
            "id": self.call["id"] or "",
            "name": self.call["name"],
            "args": dict(self.call["args"]),
        }

    @property
    def skip(self) -> str | None:
        """The observation when the call cannot run (bad arguments, unknown tool)."""
        if self.task["invalid"]:
            return self.task["invalid"]
        return unknown_tool_observation(self.call["name"]) if self.tool is None else None

    def update(self, observation: str) -> dict[str, Any]:
        update: dict[str, Any] = {
            "messages": [
                ToolMessage(
                    content=observation,
                    tool_call_id=self.ref["id"],
                    name=self.call["name"],
                    id=f"tool-{self.ref['id'] or uuid.uuid4()}",
                )
            ]
        }
        if self.tool is not None and self.tool.state_param is not None:
            change = _shared_change(self.task["shared"], self.shared.data)
            if change is not None:
                update["shared"] = change
        if self.task["ends_run"]:
            update["termination_reason"] = "max_steps_reached"
        return update


COMPLETED_CALLS_KEY: Final = "dynavec_completed_calls"
"""``config["configurable"][COMPLETED_CALLS_KEY]``: a dict the caller owns, ``{call id:
CompletedCall}``. The tool node records each call that ran there before LangGraph saves its
result, and answers a call found there from the record instead of running it again. So when
saving fails after a tool ran (database down, disk read-only), the caller knows which calls ran,
and a retry with the same dict does not repeat them. ``ReActAgent`` keeps one per thread."""


@dataclass(frozen=True)
class CompletedCall:
    """A tool call that ran: what ran, and the state update the tool node returned."""

    call: ToolCallRef
    update: dict[str, Any]

    def describe(self) -> str:
        """``"transfer_funds({'amount': 120}) (call call_1)"``, for error messages."""
        return f"{self.call['name']}({self.call['args']!r}) (call {self.call['id']})"


def completed_calls(config: RunnableConfig) -> dict[str, CompletedCall]:
    """The caller's record of finished calls (a throwaway dict when there is none)."""
    record = (config.get("configurable") or {}).get(COMPLETED_CALLS_KEY)
    return record if isinstance(record, dict) else {}


def _remember(
    done: dict[str, CompletedCall], call: _Call, update: dict[str, Any]
) -> dict[str, Any]:
    done[call.ref["id"]] = CompletedCall(call.ref, update)
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

    def _task(self, state_or_task: Any) -> _Call:
        task = (
            state_or_task if "call" in state_or_task else _next_task(state_or_task, self.max_steps)
        )
        return _Call(task, self.tools)

    def call_tool(self, state_or_task: Any, config: RunnableConfig) -> dict[str, Any]:
        call = self._task(state_or_task)
        done = completed_calls(config)
        if call.ref["id"] in done:
            return done[call.ref["id"]].update
        if call.skip is not None or call.tool is None:
            return call.update(call.skip or "")
        with running_tool_call(call.ref):
            update = call.update(call.tool.execute(call.call["args"], state=call.shared))
        return _remember(done, call, update)

    async def acall_tool(self, state_or_task: Any, config: RunnableConfig) -> dict[str, Any]:
        call = self._task(state_or_task)
        done = completed_calls(config)
        if call.ref["id"] in done:
            return done[call.ref["id"]].update
        if call.skip is not None or call.tool is None:
            return call.update(call.skip or "")
        with running_tool_call(call.ref):
            update = call.update(await call.tool.aexecute(call.call["args"], state=call.shared))
        return _remember(done, call, update)


def check_max_steps(max_steps: Any) -> int:
    """``max_steps`` as the number of model calls per run (below 1 counts as 1).

    Raises:
        TypeError: anything but a whole number (``2.7``, ``"3"``, ``None``, ``True``).
    """
    if isinstance(max_steps, bool) or not isinstance(max_steps, int):
        raise TypeError(
            f"max_steps={max_steps!r}: pass a whole number of model calls per run (e.g. 10)"
        )
    return max(1, max_steps)


def create_react_agent(
    model: Any,
    tools: Sequence[Any] | None = None,
    *,
    system_prompt: str | None = None,
    max_steps: int = 10,
    checkpointer: Checkpointer | str | Any = None,
    store: BaseStore | None = None,
    name: str = "dynavec_agent",
    message_storage: MessageStorage = "delta",
    parallel_tool_calls: bool = False,
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
        checkpointer: a LangGraph saver, or what ``ReActAgent`` takes (a connection string,
            a dynavec checkpointer such as ``DynamoDBCheckpointer``; a connection opened
            from a string stays open for the process); ``None`` when the graph is a
            subgraph (it uses the parent's). Interrupts need one to be resumed.
        store: a LangGraph store, passed to ``compile``.
        name: the graph's name (the node name Studio and parent graphs show).
        message_storage: ``"delta"`` (default; linear storage) or ``"full"``.
        parallel_tool_calls: run the calls of a turn concurrently, each as its own task
            (several approvals can be pending at once). The default runs them one at a
            time in the model's order, each checkpointed before the next starts.

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
    from dynavec_langgraph.models import bind_model  # chat-model machinery: imported on use

    agent_tools = as_tools(tools)
    steps = check_max_steps(max_steps)
    nodes = _Nodes(bind_model(model, agent_tools), agent_tools, system_prompt, steps)
    schema = ReActState if message_storage == "delta" else _FullReActState
    builder = StateGraph(schema)
    builder.add_node(AGENT_NODE, RunnableLambda(nodes.call_model, afunc=nodes.acall_model))
    builder.add_node(TOOLS_NODE, RunnableLambda(nodes.call_tool, afunc=nodes.acall_tool))
    if parallel_tool_calls:
        builder.add_conditional_edges(START, _route_start_parallel(steps), [AGENT_NODE, TOOLS_NODE])
        builder.add_conditional_edges(
            AGENT_NODE, _route_after_agent_parallel(steps), [TOOLS_NODE, END]
        )
        builder.add_conditional_edges(TOOLS_NODE, _route_after_task(steps), [AGENT_NODE, END])
    else:
        builder.add_conditional_edges(START, route_start, [AGENT_NODE, TOOLS_NODE])
        builder.add_conditional_edges(AGENT_NODE, route_after_agent, [TOOLS_NODE, END])
        builder.add_conditional_edges(
            TOOLS_NODE, _route_after_tools(steps), [AGENT_NODE, TOOLS_NODE, END]
        )
    if not isinstance(checkpointer, bool | None | BaseCheckpointSaver):
        # a dynavec checkpointer or a connection string, as ReActAgent takes them
        from dynavec_langgraph.savers import resolve_checkpointer

        checkpointer = resolve_checkpointer(checkpointer)
    graph = builder.compile(checkpointer=checkpointer, store=store, name=name)
    return graph.with_config(
        recursion_limit=max(_RECURSION_LIMIT, steps * _SUPERSTEPS_PER_STEP),
        metadata={TOOLS_METADATA_KEY: [t.name for t in agent_tools]},
    )
