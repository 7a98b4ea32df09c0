"""One tool call as the tool node runs it: resolved against the tools, keyed, answered (the
observation, the shared-state change, the end of the run), and recorded in the caller's record
of the calls that ran (:attr:`._run_data.RunData.completed`; :data:`COMPLETED_CALLS_KEY` and
:class:`CompletedCall` live in :mod:`._run_data` and are re-exported here)."""

from __future__ import annotations

import copy
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import TYPE_CHECKING

from langchain_core.messages import AIMessage, AnyMessage, ToolMessage, convert_to_messages
from langchain_core.runnables import RunnableConfig
from langgraph.errors import GraphBubbleUp, GraphInterrupt, is_invalid_resume
from langgraph.graph import END
from langgraph.types import Command, Send

from dynavec_langgraph._dynavec.records import AgentState
from dynavec_langgraph._errors import ApprovalPolicyError, InterruptCallError, InvalidOptionError
from dynavec_langgraph._exactly_once.keys import call_key, keyed, with_key
from dynavec_langgraph._graph.call_ids import ToolCallRef
from dynavec_langgraph._graph.messages import calls_of
from dynavec_langgraph._graph.run_data import CompletedCall, RunData
from dynavec_langgraph._graph.state import shared_change
from dynavec_langgraph._graph.tasks import ToolTask, turn_of
from dynavec_langgraph._names import AGENT_NODE, TOOLS_NODE
from dynavec_langgraph._pauses.ask import current_tool_call, running_tool_call
from dynavec_langgraph._pauses.policy.scope import policy_scope
from dynavec_langgraph._tools.agent_tool import AgentTool, running_in_agent
from dynavec_langgraph._tools.calls import format_tool_error, unknown_tool_observation
from dynavec_langgraph._types import (
    JSONObject,
    NodeUpdate,
    StateUpdate,
    UserPayload,
    UserState,
    UserValues,
)

if TYPE_CHECKING:
    from dynavec_langgraph._types import GraphCommand

__all__ = [
    "CompletedCall",
    "ToolCallRun",
    "error_observation",
    "remember",
]


def error_observation(error: Exception) -> str:
    """A tool's exception is the observation ``Error executing tool '<name>': ...``
    (docs/compatibility.md §3; the tool node runs one call at a time, so the running call
    names the tool)."""
    if isinstance(error, InterruptCallError | InvalidOptionError | ApprovalPolicyError):
        raise error  # the tool's or its policy's bug: for the developer, not the model
    running = current_tool_call()
    return format_tool_error(running["name"] if running else "unknown", error)


class ToolCallRun:
    """One tool call being run, resolved against the tools."""

    def __init__(
        self,
        task: ToolTask,
        tools: dict[str, AgentTool],
        view: Callable[[UserState], UserState] | None = None,
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
    def request(self) -> dict[str, object]:
        """The call as LangGraph's ``ToolNode`` takes one task of it (``create_agent``'s
        ``Send`` payload): the full tool call plus the state to inject."""
        return {
            "__type": "tool_call_with_context",
            "tool_call": {**self.call, "type": "tool_call"},
            "state": self._turn_state() if self.view is None else self.view(self._turn_state()),
        }

    def _turn_state(self) -> UserValues:
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
    def tool_call(self) -> JSONObject:
        return {**self.call, "type": "tool_call"}

    def own_error(self, error: Exception) -> StateUpdate:
        """A package tool's exception answered as ``ToolNode`` answers one
        (docs/compatibility.md §3)."""
        if isinstance(
            error, GraphBubbleUp | InterruptCallError | InvalidOptionError | ApprovalPolicyError
        ):
            raise error
        if is_invalid_resume(error):
            raise error
        message = ToolMessage(
            content=format_tool_error(self.call["name"], error),
            name=self.call["name"],
            tool_call_id=self.ref["id"],
            status="error",
        )
        return {"messages": [message]}

    @property
    def resent(self) -> bool:
        """Parallel mode: the call was held in an earlier step of its turn (:meth:`held`)
        and runs again now."""
        return bool(self.task.get("resent"))

    def held(self, pause: GraphInterrupt) -> StateUpdate:
        """The call's pause in parallel mode, when its task holds it (``_nodes``): the
        update that holds the call; ``pause`` is raised when the task does not hold it."""
        if not self.task.get("hold"):
            raise pause
        return {"held": [self.ref["id"]]}

    def keyed(self, run: RunData, config: RunnableConfig) -> RunnableConfig:
        """Set the call's idempotency key (``self.key``) in the thread and namespace of
        ``run``; ``config`` with it, for the tool."""
        turn = self.task.get("turn")
        if turn is None:
            turn = turn_of((self.task.get("state") or {}).get("messages") or [], self.ref["id"])
        self.key = call_key(run, self.ref["id"], turn)
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

    def _extra(self) -> StateUpdate:
        extra: StateUpdate = {}
        if self.tool is not None and self.tool.state_param is not None:
            change = shared_change(self.task["shared"], self.shared.data)
            if change is not None:
                extra["shared"] = change
        closes = self.task.get("closes")
        if closes is None and self.task["ends_run"]:
            closes = "max_steps_reached"
        if closes is not None:
            extra["termination_reason"] = closes
        return extra

    def answer(self, observation: str) -> StateUpdate:
        message = ToolMessage(
            content=observation,
            tool_call_id=self.ref["id"],
            name=self.call["name"],
            id=f"tool-{self.ref['id'] or uuid.uuid4()}",
        )
        return {"messages": [message], **self._extra()}

    def finish(self, output: UserPayload) -> NodeUpdate:
        """The node's update from ``ToolNode``'s output: its messages (or the ``Command``s a
        tool returned, which LangGraph applies) plus the shared-state change and the end."""
        extra = self._extra()
        if isinstance(output, dict):
            for message in output.get("messages") or []:
                if isinstance(message, ToolMessage) and message.id is None:
                    message.id = f"tool-{message.tool_call_id or uuid.uuid4()}"
            return {**output, **extra}
        updates: list[object] = []
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

    def _own_goto(self, command: GraphCommand) -> GraphCommand:
        """A ``goto`` inside this agent. Its own routing already goes to the model once the
        batch is answered, so ``goto`` the agent or tools node is dropped: followed while
        other calls wait, it would send the model a call without its answer. A node the
        agent lacks is an error (LangGraph only logs it) that says what to do instead."""
        gotos = command.goto if isinstance(command.goto, list | tuple) else [command.goto]
        kept: list[object] = []
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

    def _handoff(self, command: GraphCommand) -> GraphCommand:
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


def remember(run: RunData, call: ToolCallRun, update: NodeUpdate) -> NodeUpdate:
    """Record in the caller's record of the run (:attr:`RunData.completed`) that ``call``
    ran and returned ``update``; ``update``."""
    run.completed[call.ref["id"]] = CompletedCall(call.ref, update)
    return update
