"""``create_react_agent``: dynavec's ReAct agent as a compiled LangGraph graph.

The graph has two nodes. ``agent`` calls the model; ``tools`` runs ONE tool call of the
model's turn per visit, in the model's order, so every call is its own superstep and is
checkpointed before the next one starts. On resume only the paused call runs again; calls
that finished never do, and calls after it run only once the decision is in.
"""

from __future__ import annotations

import asyncio
import copy
import uuid
from collections.abc import Callable, Coroutine, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import (
    TYPE_CHECKING,
    Annotated,
    Any,
    Final,
    Literal,
    NotRequired,
    Required,
    TypedDict,
)

from langchain_core.language_models import LanguageModelInput
from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    convert_to_messages,
)
from langchain_core.messages.tool import ToolCall as LCToolCall
from langchain_core.runnables import Runnable, RunnableConfig, ensure_config
from langgraph.config import get_config
from langgraph.errors import GraphBubbleUp, GraphInterrupt, is_invalid_resume
from langgraph.graph import END
from langgraph.types import Command, Send

from dynavec_langgraph._claims import aclaimed, claimed
from dynavec_langgraph._errors import DamagedThreadError, InterruptCallError, damaged_text
from dynavec_langgraph._exactly_once import (
    OnCrash,
    aguarded,
    call_key,
    guarded,
    keyed,
    on_crash_of,
    with_key,
)
from dynavec_langgraph._messages import (
    ConversationChannel,
    add_conversation,
    calls_of,
    new_turn,
    pending_calls,
    run_steps,
)
from dynavec_langgraph._policy import policy_scope
from dynavec_langgraph._tools import (
    AgentTool,
    format_tool_error,
    running_in_agent,
    unknown_tool_observation,
)
from dynavec_langgraph.interrupt import ToolCallRef, current_tool_call, running_tool_call
from dynavec_langgraph.records import AgentState, TerminationReason

if TYPE_CHECKING:  # imported when a graph is built (it costs ~40 ms at import time)
    from langgraph.prebuilt import ToolNode


__all__ = [
    "AGENT_NODE",
    "BOOKKEEPING",
    "COMPLETED_CALLS_KEY",
    "MODEL_KWARGS_KEY",
    "PREBUILT_FACE",
    "TOOLS_METADATA_KEY",
    "TOOLS_NODE",
    "AgentFace",
    "CompletedCall",
    "FullReActState",
    "MessageStorage",
    "NodeRunnable",
    "ReActNodes",
    "ReActState",
    "completed_calls",
    "error_observation",
    "model_kwargs",
    "model_update",
    "node_input",
    "steps_in_run",
    "tools_router",
    "until_done",
]

AGENT_NODE: Final = "agent"
"""The name of the graph's model node."""
TOOLS_NODE: Final = "tools"
"""The name of the graph's tool node."""
MODEL_KWARGS_KEY = "dynavec_model_kwargs"
"""``config["configurable"][MODEL_KWARGS_KEY]``: extra keyword arguments for the model call."""
TOOLS_METADATA_KEY: Final = "dynavec_tools"
"""``graph.config["metadata"][TOOLS_METADATA_KEY]``: the names of the graph's tools (a list,
so it is never copied into checkpoint metadata)."""

MessageStorage = Literal["delta", "full"]
"""How checkpoints store ``messages``: ``"delta"`` stores each step's new messages
(LangGraph's ``DeltaChannel``; storage grows linearly), ``"full"`` the whole list each step."""


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


def _hold(old: list[str] | None, new: list[str] | None) -> list[str]:
    """``held`` reducer: ids added by tool tasks; ``None`` (a model call) clears."""
    return [] if new is None else [*(old or []), *new]


class ReActState(TypedDict, total=False):
    """The agent's state: messages first, so it fits any parent graph with ``messages``.
    Every key but ``messages`` is bookkeeping: in the thread state (``get_state``), not in
    ``invoke()`` / ``stream()`` output unless asked for (``output_keys=``).

    Attributes:
        messages: the conversation (no system prompt; it is added at each model call).
        step: model calls made in the current run (since the last user message).
        termination_reason: ``"completed"`` or ``"max_steps_reached"`` once the run ended,
            ``None`` while it runs. A pause shows as the graph's interrupt instead.
        shared: the data of the ``AgentState`` shared with tools.
        held: parallel mode: ids of the turn's calls that reached a pause while others ran
            (they pause for good in the next step, once the finished results are saved).
        continued_at: the id of the last message when ``ReActAgent.run`` continued a run
            that stopped at ``max_steps`` (dynavec's ``run()`` on an unfinished thread, no new
            user message): the run's steps count from there. Absent or ``None`` otherwise.
    """

    messages: Required[Annotated[list[AnyMessage], ConversationChannel()]]
    step: NotRequired[Annotated[int, _last]]
    termination_reason: NotRequired[Annotated[TerminationReason | None, _last]]
    shared: NotRequired[Annotated[dict[str, Any], _apply_shared]]
    held: NotRequired[Annotated[list[str], _hold]]
    continued_at: NotRequired[Annotated[str | None, _last]]


class FullReActState(TypedDict, total=False):
    messages: Required[Annotated[list[AnyMessage], add_conversation]]
    step: NotRequired[Annotated[int, _last]]
    termination_reason: NotRequired[Annotated[TerminationReason | None, _last]]
    shared: NotRequired[Annotated[dict[str, Any], _apply_shared]]
    held: NotRequired[Annotated[list[str], _hold]]
    continued_at: NotRequired[Annotated[str | None, _last]]


# --- decisions: plain functions ---------------------------------------------------------


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
        return _all_tasks(state, max_steps, nodes.direct, nodes.stateless) or AGENT_NODE

    return route_start


def route_after_agent_parallel(max_steps: int, nodes: ReActNodes) -> Any:
    def route_after_agent(state: Mapping[str, Any]) -> list[Send] | Literal["__end__"]:
        """Each tool call of the turn as its own task, all at once; no calls ends the run."""
        return _all_tasks(state, max_steps, nodes.direct, nodes.stateless) or "__end__"

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


def steps_in_run(state: Mapping[str, Any]) -> int:
    """Model calls made in the current run: since the last user message, or since the
    message where a run stopped at ``max_steps`` was continued (``continued_at``)."""
    messages = state["messages"]
    mark = state.get("continued_at")
    if not mark:
        return run_steps(messages)
    count = 0
    for m in reversed(messages):
        if m.id == mark or isinstance(m, HumanMessage):
            break
        if isinstance(m, AIMessage):
            count += 1
    return count


def model_update(state: ReActState, response: Any, name: str | None) -> dict[str, Any]:
    if not isinstance(response, AIMessage):
        raise TypeError(
            f"the model answered {response!r} ({type(response).__name__}), not an AIMessage: "
            "pass a LangChain chat model (or a dynavec model whose invoke returns an assistant "
            "message); nothing of this turn was saved"
        )
    response = new_turn(state["messages"], response)
    if response.name is None and name is not None:
        response.name = name  # as LangGraph's agents do: multi-agent tools find it by name
    has_calls = bool(response.tool_calls or response.invalid_tool_calls)
    return {
        "messages": [response],
        "step": steps_in_run(state) + 1,
        "termination_reason": None if has_calls else "completed",
    }


def model_kwargs(config: RunnableConfig) -> dict[str, Any]:
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
    hold: NotRequired[bool]
    """Parallel mode: reaching a pause holds the call until the other tasks' results are
    saved (its first run in a turn of several calls)."""
    closes: NotRequired[TerminationReason | None]
    """The ``termination_reason`` answering this call sets (the run ends after the batch)."""
    state: NotRequired[Mapping[str, Any] | None]
    """The graph state LangChain injects (``InjectedState``, ``ToolRuntime.state``)."""
    rest: NotRequired[list[LCToolCall]]
    """Sequential mode: the calls of the batch after this one."""
    turn: NotRequired[str]
    """Parallel mode: the id of the assistant message that made the call (its idempotency
    key's part, :mod:`dynavec_langgraph._exactly_once`), when the task carries no state."""


def _turn(messages: Sequence[AnyMessage], call_id: str | None) -> tuple[list[LCToolCall], bool]:
    """The calls of the assistant turn that holds ``call_id``, and whether a user message
    came after it (new input: the run goes on to the model whatever the tools say)."""
    human_after = False
    for m in reversed(messages):
        if isinstance(m, AIMessage):
            calls = calls_of(m)
            if any(c["id"] == call_id for c in calls):
                return calls, human_after
        elif isinstance(m, HumanMessage):
            human_after = True
    return [], human_after


def _closes(
    messages: Sequence[AnyMessage], call: LCToolCall, direct: frozenset[str], ends: bool
) -> TerminationReason | None:
    """``"completed"`` when the turn has a ``return_direct`` tool (the run ends on the tools'
    answers, as in LangGraph's prebuilt agent), ``"max_steps_reached"`` when the step budget
    is spent, else ``None``."""
    if direct:
        calls, human_after = _turn(messages, call["id"])
        if not human_after and any(c["name"] in direct for c in calls):
            return "completed"
    return "max_steps_reached" if ends else None


def _next_task(state: ReActState, max_steps: int, direct: frozenset[str] = frozenset()) -> ToolTask:
    """Sequential mode: the first pending call of the turn."""
    messages = state["messages"]
    pending = pending_calls(messages)
    if not pending:  # only a damaged thread gets here (the graph's routes never do)
        thread = str((get_config().get("configurable") or {}).get("thread_id"))
        raise DamagedThreadError(
            damaged_text(thread, "its tool node ran with no unanswered tool call"), thread, []
        )
    last = len(pending) == 1
    ends = last and steps_in_run(state) >= max_steps
    return {
        "call": pending[0],
        "shared": dict(state.get("shared") or {}),
        "invalid": _invalid_arguments(messages, pending[0]),
        "ends_run": ends,
        "closes": _closes(messages, pending[0], direct, ends) if last else None,
        "state": state,
        "rest": pending[1:],
    }


def _foreign_task(payload: Any) -> ToolTask | None:
    """The task of a tool call that LangGraph's prebuilt agent or LangChain's ``create_agent``
    sent to its ``tools`` node before its thread paused, when this graph resumes the thread.

    Mirrors the ``Send`` arguments of ``langgraph.prebuilt.chat_agent_executor``'s
    ``should_continue`` (version "v2": ``ToolCallWithContext``, langgraph-prebuilt 1.1) and of
    ``langchain.agents.factory``'s model router (``[tool_call]``, langchain 1.5); pinned by
    tests/test_adversarial_2.py. ``None`` for anything else.
    """
    state: Mapping[str, Any] | None = None
    if isinstance(payload, dict) and payload.get("__type") == "tool_call_with_context":
        call, state = payload.get("tool_call"), payload.get("state")
    elif isinstance(payload, list) and len(payload) == 1:
        call = payload[0]
    else:
        return None
    if not isinstance(call, dict) or not isinstance(call.get("name"), str):
        return None
    state = state if isinstance(state, Mapping) else None
    return {
        "call": {"name": call["name"], "args": dict(call.get("args") or {}), "id": call.get("id")},
        "shared": dict((state or {}).get("shared") or {}),
        "invalid": None,
        "ends_run": False,
        "closes": None,
        "state": state,
        "rest": [],
    }


def _all_tasks(
    state: Mapping[str, Any],
    max_steps: int,
    direct: frozenset[str] = frozenset(),
    stateless: frozenset[str] = frozenset(),
) -> list[Send]:
    """Parallel mode: every pending call as its own task. A task carries the graph state only
    when its tool may have it injected (``stateless`` tools never do)."""
    messages = state["messages"]
    ends = steps_in_run(state) >= max_steps
    shared = dict(state.get("shared") or {})
    pending = pending_calls(messages)
    held = set(state.get("held") or ())
    turn = _turn_of(messages, pending[0]["id"]) if pending else ""
    return [
        Send(
            TOOLS_NODE,
            ToolTask(
                call=c,
                shared=shared,
                invalid=_invalid_arguments(messages, c),
                ends_run=ends,
                closes=_closes(messages, c, direct, ends),
                state=None if c["name"] in stateless else dict(state),
                hold=len(pending) > 1 and c["id"] not in held,
                turn=turn,
            ),
        )
        for c in pending
    ]


def _turn_of(messages: Sequence[AnyMessage], call_id: str | None) -> str:
    """The assistant message that made call ``call_id``: its id, else ``"#<position>"``."""
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if isinstance(m, AIMessage) and any(c["id"] == call_id for c in calls_of(m)):
            return m.id or f"#{i}"
    return ""


def error_observation(error: Exception) -> str:
    """A tool's exception is the observation ``Error executing tool '<name>': ...``
    (docs/compatibility.md §3; the tool node runs one call at a time, so the running call
    names the tool)."""
    if isinstance(error, InterruptCallError):  # the tool's bug: for the developer (_errors)
        raise error
    running = current_tool_call()
    return format_tool_error(running["name"] if running else "unknown", error)


class _Call:
    """One tool call being run, resolved against the tools."""

    def __init__(
        self,
        task: ToolTask,
        tools: dict[str, AgentTool],
        view: Callable[[Any], Any] | None = None,
        run_unknown: bool = False,
    ) -> None:
        self.task = task
        self.view = view
        self.call = task["call"]
        self.tool = tools.get(self.call["name"])
        self.run_unknown = run_unknown
        needs_state = self.tool is not None and self.tool.state_param is not None
        self.shared = AgentState(copy.deepcopy(task["shared"]) if needs_state else {})
        self.ref: ToolCallRef = {
            "id": self.call["id"] or "",
            "name": self.call["name"],
            "args": dict(self.call["args"]),
        }
        self.key = ""
        """The call's idempotency key (set by :meth:`keyed`)."""

    @property
    def skip(self) -> str | None:
        """The observation when the call cannot run (bad arguments, unknown tool)."""
        if self.task["invalid"]:
            return self.task["invalid"]
        if self.tool is None and not self.run_unknown:
            return unknown_tool_observation(self.call["name"])
        return None

    @property
    def request(self) -> dict[str, Any]:
        """The call as LangGraph's ``ToolNode`` takes one task of it (``create_agent``'s
        ``Send`` payload): the full tool call plus the state to inject."""
        return {
            "__type": "tool_call_with_context",
            "tool_call": {**self.call, "type": "tool_call"},
            "state": self._turn_state() if self.view is None else self.view(self._turn_state()),
        }

    def _turn_state(self) -> dict[str, Any]:
        """The state as every call of the turn sees it in LangGraph's agents: the conversation
        up to the assistant message that made the call (tools such as langgraph-supervisor's
        handoff read ``state["messages"][-1]`` as that message), not the answers given so far
        in sequential mode nor input that arrived while paused."""
        state = dict(self.task.get("state") or {})
        messages: Sequence[AnyMessage] = state.get("messages") or []
        turn = self._turn_index(messages)
        if turn >= 0:
            state["messages"] = list(messages[: turn + 1])
        return state

    def _turn_index(self, messages: Sequence[AnyMessage]) -> int:
        for i in range(len(messages) - 1, -1, -1):
            m = messages[i]
            if isinstance(m, AIMessage) and any(c["id"] == self.call["id"] for c in calls_of(m)):
                return i
        return -1

    @property
    def tool_call(self) -> dict[str, Any]:
        return {**self.call, "type": "tool_call"}

    def own_error(self, error: Exception) -> dict[str, Any]:
        """A package tool's exception answered as ``ToolNode`` answers one
        (docs/compatibility.md §3)."""
        if isinstance(error, GraphBubbleUp | InterruptCallError) or is_invalid_resume(error):
            raise error
        message = ToolMessage(
            content=format_tool_error(self.call["name"], error),
            name=self.call["name"],
            tool_call_id=self.ref["id"],
            status="error",
        )
        return {"messages": [message]}

    def own_result(self, run: Callable[[], Any]) -> dict[str, Any]:
        try:
            return {"messages": [run()]}
        except Exception as error:
            return self.own_error(error)

    def keyed(self, config: RunnableConfig) -> RunnableConfig:
        """Set the call's idempotency key (``self.key``); ``config`` with it, for the tool."""
        turn = self.task.get("turn")
        if turn is None:
            turn = _turn_of((self.task.get("state") or {}).get("messages") or [], self.ref["id"])
        self.key = call_key(config, self.ref["id"], turn)
        return with_key(config, self.key)

    @contextmanager
    def running(self) -> Iterator[None]:
        """``interrupt()`` names this call; this package's tools see the shared state and
        the call's idempotency key (:meth:`keyed` first)."""
        with (
            running_tool_call(self.ref),
            running_in_agent(self.shared),
            policy_scope(self.tool),
            keyed(self.key),
        ):
            yield

    def _extra(self) -> dict[str, Any]:
        extra: dict[str, Any] = {}
        if self.tool is not None and self.tool.state_param is not None:
            change = _shared_change(self.task["shared"], self.shared.data)
            if change is not None:
                extra["shared"] = change
        closes = self.task.get("closes")
        if closes is None and self.task["ends_run"]:
            closes = "max_steps_reached"
        if closes is not None:
            extra["termination_reason"] = closes
        return extra

    def answer(self, observation: str) -> dict[str, Any]:
        message = ToolMessage(
            content=observation,
            tool_call_id=self.ref["id"],
            name=self.call["name"],
            id=f"tool-{self.ref['id'] or uuid.uuid4()}",
        )
        return {"messages": [message], **self._extra()}

    def finish(self, output: Any) -> Any:
        """The node's update from ``ToolNode``'s output: its messages (or the ``Command``s a
        tool returned, which LangGraph applies) plus the shared-state change and the end."""
        extra = self._extra()
        if isinstance(output, dict):
            for message in output.get("messages") or []:
                if isinstance(message, ToolMessage) and message.id is None:
                    message.id = f"tool-{message.tool_call_id or uuid.uuid4()}"
            return {**output, **extra}
        updates: list[Any] = []
        answered = False
        for item in output:
            if isinstance(item, Command) and item.graph == Command.PARENT:
                updates.append(self._handoff(item))
                answered = True  # the parent takes over; the tool's update answers there
                continue
            if isinstance(item, Command):
                item = self._own_goto(item)
            update = item.update if isinstance(item, Command) else item
            if isinstance(update, dict):
                answered = answered or any(
                    isinstance(m, ToolMessage) and m.tool_call_id == self.ref["id"]
                    for m in convert_to_messages(update.get("messages") or [])
                )
            updates.append(item)
        if not answered:  # e.g. Command(goto=...) alone: the call still gets its answer
            updates.append(
                {
                    "messages": [
                        ToolMessage(
                            content=format_tool_error(
                                self.call["name"],
                                ValueError("it returned a Command that does not answer its call"),
                            ),
                            tool_call_id=self.ref["id"],
                            name=self.call["name"],
                            status="error",
                            id=f"tool-{self.ref['id'] or uuid.uuid4()}",
                        )
                    ]
                }
            )
        return [*updates, extra] if extra else updates

    def _own_goto(self, command: Command[Any]) -> Command[Any]:
        """A ``goto`` inside this agent. Its own routing already goes to the model once the
        batch is answered, so ``goto`` the agent or tools node is dropped: followed while
        other calls wait, it would send the model a call without its answer. A node the
        agent lacks is an error (LangGraph only logs it) that says what to do instead."""
        gotos = command.goto if isinstance(command.goto, list | tuple) else [command.goto]
        kept: list[Any] = []
        for goto in gotos:
            target = goto.node if isinstance(goto, Send) else goto
            if not target or target in (AGENT_NODE, TOOLS_NODE):
                continue
            if target != END:
                raise ValueError(
                    f"tool {self.call['name']!r} returned Command(goto={target!r}), but this "
                    f"agent has no node {target!r} (its nodes: {AGENT_NODE!r}, "
                    f"{TOOLS_NODE!r}). To hand off to a node of the parent graph, return "
                    "Command(goto=..., graph=Command.PARENT)."
                )
            kept.append(goto)
        return replace(command, goto=kept) if len(kept) != len(gotos) else command

    def _handoff(self, command: Command[Any]) -> Command[Any]:
        """A handoff to the parent in the middle of a batch, in sequential mode: the parent
        gets the answers already given in this batch, and the calls that will not run get one
        ("Not run"), so the agent taking over sees a valid conversation."""
        update = command.update
        messages = (self.task.get("state") or {}).get("messages") or []
        rest = self.task.get("rest") or []
        if not isinstance(update, dict) or "messages" not in update or not messages:
            return command
        given = list(update["messages"])
        have = {m.tool_call_id for m in convert_to_messages(given) if isinstance(m, ToolMessage)}
        turn = self._turn_index(messages)
        ids = {c["id"] for c in calls_of(messages[turn])} if turn >= 0 else set()
        earlier = [
            m
            for m in messages[turn + 1 :]
            if isinstance(m, ToolMessage) and m.tool_call_id in ids - have
        ]
        skipped = [
            ToolMessage(
                content=f"Not run: the conversation was handed off by {self.call['name']!r}.",
                tool_call_id=c["id"] or "",
                name=c["name"],
                id=f"tool-{c['id']}",
            )
            for c in rest
            if c["id"] not in have
        ]
        if not earlier and not skipped:
            return command
        return replace(command, update={**update, "messages": [*given, *earlier, *skipped]})


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
    update: Any
    """What the tool node returned: an update, or the tool's ``Command``s."""

    def describe(self) -> str:
        """``"transfer_funds({'amount': 120}) (call call_1)"``, for error messages."""
        return f"{self.call['name']}({self.call['args']!r}) (call {self.call['id']})"


def completed_calls(config: RunnableConfig) -> dict[str, CompletedCall]:
    """The caller's record of finished calls (a throwaway dict when there is none)."""
    record = (config.get("configurable") or {}).get(COMPLETED_CALLS_KEY)
    return record if isinstance(record, dict) else {}


def _remember(done: dict[str, CompletedCall], call: _Call, update: Any) -> Any:
    done[call.ref["id"]] = CompletedCall(call.ref, update)
    return update


class ReActNodes:
    """The two nodes, sync and async; they differ only in the line that does I/O."""

    run_unknown = False
    """A call of a tool the agent does not have goes to the executor (``create_agent``'s face:
    ``wrap_tool_call`` middleware may run tools a ``wrap_model_call`` added) instead of being
    answered "not registered"."""

    def __init__(
        self,
        model: Runnable[LanguageModelInput, Any],
        tools: list[AgentTool],
        executor: ToolNode,
        system_prompt: str | SystemMessage | None,
        max_steps: int,
        name: str | None,
        parallel: bool,
        own_executor: bool = True,
    ) -> None:
        self.model = model
        self.name = name
        self.parallel = parallel
        self.tools = {t.name: t for t in tools}
        self.executor = executor
        self.direct = frozenset(n for n, t in executor.tools_by_name.items() if t.return_direct)
        # this package's tools get no LangGraph state injected: their tasks need not carry it
        self.stateless = frozenset(
            n for n, t in executor.tools_by_name.items() if isinstance(t, AgentTool)
        )
        # this package's tools, run without ToolNode (unless the user passed a ToolNode, whose
        # error handling and wrappers then apply to every call)
        self.own: dict[str, AgentTool] = (
            {}
            if own_executor is False
            else {n: t for n, t in executor.tools_by_name.items() if isinstance(t, AgentTool)}
        )
        if isinstance(system_prompt, SystemMessage):
            self.prompt = [system_prompt]
        else:
            self.prompt = [SystemMessage(content=system_prompt)] if system_prompt else []
        self.max_steps = max_steps
        for t in executor.tools_by_name.values():
            on_crash_of(t)  # a bad on_crash= is refused when the agent is built
        self.state_view: Callable[[Any], Any] | None = None
        """Turns the state into the user's ``state_schema`` type for ``InjectedState``."""

    def call_model(self, state: ReActState, config: RunnableConfig) -> dict[str, Any]:
        if self.parallel and pending_calls(state["messages"]):
            return {}  # held calls: the router sends them again; no model call
        messages = self.prompt + list(state["messages"])
        response = self.model.invoke(messages, config, **model_kwargs(config))
        return self._after_model(state, response)

    async def acall_model(self, state: ReActState, config: RunnableConfig) -> dict[str, Any]:
        if self.parallel and pending_calls(state["messages"]):
            return {}
        messages = self.prompt + list(state["messages"])
        response = await self.model.ainvoke(messages, config, **model_kwargs(config))
        return self._after_model(state, response)

    def _after_model(self, state: ReActState, response: Any) -> dict[str, Any]:
        update = model_update(state, response, self.name)
        if self.parallel and state.get("held"):
            update["held"] = None  # a new turn: its calls may be held once each
        return update

    def on_crash(self, call: _Call) -> OnCrash:
        """The call's ``on_crash`` policy (:mod:`dynavec_langgraph._exactly_once`)."""
        tool = call.tool or self.executor.tools_by_name.get(call.call["name"])
        return "retry" if tool is None else on_crash_of(tool)

    def _task(self, state_or_task: Any) -> _Call:
        task = _foreign_task(state_or_task)
        if task is None:
            task = (
                state_or_task
                if "call" in state_or_task
                else _next_task(state_or_task, self.max_steps, self.direct)
            )
        return _Call(task, self.tools, self.state_view, self.run_unknown)

    # Every call goes through LangChain's tool-call path with the whole tool call and the run's
    # config: a LangChain tool through LangGraph's ToolNode, one call per run of it, which
    # injects (InjectedState/Store/ToolCallId, ToolRuntime), calls back, keeps artifacts and
    # returns a tool's Command, exactly as in LangGraph's own agents. This package's own tools
    # take nothing LangGraph injects and return text only; for them ToolNode would add nothing
    # but a new worker thread per call (0.5-1 ms a call on 2 CPUs), so they are invoked with
    # the same tool call and config here, and their errors answered as the ToolNode would.
    #
    # Parallel mode, a turn of several calls: a call that reaches a pause is held (its
    # GraphInterrupt is not raised in this step, and only then), so the step completes and the
    # results of the calls that finished are saved in the checkpoint. The held call is sent
    # again in the next step and pauses for good there. Raised in the first step, the pause
    # would leave those results as pending writes, which LangGraph drops when new input
    # reaches the paused thread, and the finished calls would run again.
    def call_tool(self, state_or_task: Any, config: RunnableConfig) -> Any:
        call = self._task(state_or_task)
        done = completed_calls(config)
        if call.ref["id"] in done:  # ran before its result could be saved: not again
            return done[call.ref["id"]].update
        if call.skip is not None:
            return call.answer(call.skip)
        own = self.own.get(call.call["name"])
        tool_config = call.keyed(config)
        with call.running():
            try:
                with claimed(config, call.ref):  # a resumed call: once per decision

                    def run() -> Any:
                        if own is not None:
                            return call.finish(
                                call.own_result(lambda: own.invoke(call.tool_call, tool_config))
                            )
                        return call.finish(self.executor.invoke(call.request, tool_config))

                    policy = self.on_crash(call)
                    result = guarded(config, call.ref, call.key, policy, run, call.answer)
                    # recorded before the claim is marked done: if that write fails, the
                    # caller's error still says the call ran (and a retry does not repeat it)
                    return _remember(done, call, result)
            except GraphInterrupt:
                if not call.task.get("hold"):
                    raise
                return {"held": [call.ref["id"]]}

    async def acall_tool(self, state_or_task: Any, config: RunnableConfig) -> Any:
        call = self._task(state_or_task)
        done = completed_calls(config)
        if call.ref["id"] in done:  # ran before its result could be saved: not again
            return done[call.ref["id"]].update
        if call.skip is not None:
            return call.answer(call.skip)
        own = self.own.get(call.call["name"])
        # a call that started runs to its end even if the caller is cancelled (until_done)
        return await until_done(self._arun_call(call, own, config, done))

    async def _arun_call(
        self,
        call: _Call,
        own: AgentTool | None,
        config: RunnableConfig,
        done: dict[str, CompletedCall],
    ) -> Any:
        tool_config = call.keyed(config)
        with call.running():
            try:
                async with aclaimed(config, call.ref):  # a resumed call: once per decision

                    async def run() -> Any:
                        if own is not None:
                            try:
                                message = await own.ainvoke(call.tool_call, tool_config)
                            except Exception as error:
                                return call.finish(call.own_error(error))
                            return call.finish({"messages": [message]})
                        return call.finish(await self.executor.ainvoke(call.request, tool_config))

                    policy = self.on_crash(call)
                    result = await aguarded(config, call.ref, call.key, policy, run, call.answer)
                    return _remember(done, call, result)  # before the claim is marked done
            except GraphInterrupt:
                if not call.task.get("hold"):
                    raise
                return {"held": [call.ref["id"]]}


async def until_done(run: Coroutine[Any, Any, Any]) -> Any:
    """Await ``run`` to its end even when the caller is cancelled, then re-raise the
    cancellation: a tool call that started always runs to its end, and cancelling the caller
    (an ``asyncio`` timeout, a dropped web request) takes effect when it has.

    A sync tool goes on in its worker thread when the task awaiting it is cancelled (Python
    cannot stop the thread), and an async tool stopped half-way may have done its side effect
    (the payment request sent, the answer not read). Letting the cancellation through at once
    would end the run, and release the thread's resume lock, while the call still runs or
    with its effect unrecorded, and a retry would run it a second time. Waiting keeps the lock
    held until the call really ended, and its result is recorded (the caller's
    :data:`COMPLETED_CALLS_KEY` record, which ``ReActAgent`` saves to the thread before it
    lets the cancellation go on) so the retry uses it instead of running the tool again.
    """
    task = asyncio.ensure_future(run)
    cancelled = False
    while not task.done():
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            cancelled = cancelled or not task.done()  # this wait was cancelled, not the call
        except BaseException:
            pass  # the call's own error: task.result() raises it below
    if cancelled:
        if not task.cancelled():
            task.exception()  # retrieved: the call's error, if any, is in its result
        raise asyncio.CancelledError
    return task.result()


class NodeRunnable(Runnable[Any, Any]):
    """A node with sync and async twins. LangGraph traces every node run itself; a
    ``RunnableLambda`` would add a second, nested run to each step, and its cost."""

    name: str

    def __init__(
        self,
        name: str,
        func: Callable[[Any, RunnableConfig], Any],
        afunc: Callable[[Any, RunnableConfig], Coroutine[Any, Any, Any]],
    ) -> None:
        self.name = name
        self.func, self.afunc = func, afunc

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        token = _NODE_INPUT.set(input)
        try:
            return self.func(input, ensure_config(config))
        finally:
            _NODE_INPUT.reset(token)

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        token = _NODE_INPUT.set(input)
        try:
            return await self.afunc(input, ensure_config(config))
        finally:
            _NODE_INPUT.reset(token)


_NODE_INPUT: ContextVar[Any] = ContextVar("dynavec_node_input", default=None)


def node_input() -> Any:
    """The state the running node of the agent got (a callable model reads it)."""
    return _NODE_INPUT.get()


@dataclass(frozen=True)
class AgentFace:
    """What differs between the two faces of the one factory (:func:`build_agent`):
    ``create_react_agent`` (the prebuilt agent's signature, this package's defaults) and
    ``create_agent`` (``langchain.agents.create_agent``'s)."""

    function: str
    """The public function's name, for error messages."""
    model_node: str = AGENT_NODE
    """The name of the model node (``create_agent`` calls it ``"model"``)."""
    create_agent: bool = False
    """``create_agent``'s behaviour: the middleware graph always, a tool's exception raised
    unless middleware handles it, the model's message named only when ``name`` is given,
    ``create_agent``'s stream transformers, schemas and run config."""
    transformers: tuple[Any, ...] = ()
    """``create_agent(transformers=...)``."""
    builtin_tools: tuple[dict[str, Any], ...] = ()
    """``create_agent``'s provider built-in tools (dicts): bound to the model, never run."""


PREBUILT_FACE: Final = AgentFace("create_react_agent")
"""``create_react_agent``'s face."""


BOOKKEEPING: Final = frozenset(
    {"step", "termination_reason", "shared", "held", "continued_at", "dynavec_reviewed"}
)
"""The state keys this package keeps for itself: in the thread state (``get_state``), not in
``invoke()`` / ``stream()`` output unless asked for (:func:`with_bookkeeping`)."""
