"""The graph's nodes: the model node and the tool node (sync and async twins), the runnable
they are wrapped in; built by the factory (:mod:`._factory`) from the agent's spec.

The graph has two nodes. ``agent`` calls the model; ``tools`` runs ONE tool call of the
model's turn per visit, in the model's order, so every call is its own superstep and is
checkpointed before the next one starts. On resume only the paused call runs again; calls
that finished never do, and calls after it run only once the decision is in.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from contextvars import ContextVar
from typing import TYPE_CHECKING, Final, TypeVar

from langchain_core.language_models import LanguageModelInput
from langchain_core.messages import AIMessage, SystemMessage
from langchain_core.runnables import Runnable, RunnableConfig, ensure_config
from langchain_core.tools import BaseTool
from langgraph.errors import GraphInterrupt

from dynavec_langgraph._audit.hooks import recorder
from dynavec_langgraph._exactly_once.claims import aclaimed, claimed
from dynavec_langgraph._exactly_once.guarded import aguarded, guarded
from dynavec_langgraph._exactly_once.keys import OnCrash, declared_on_crash, on_crash_of
from dynavec_langgraph._graph.messages import new_turn, pending_calls
from dynavec_langgraph._graph.run_data import RunData
from dynavec_langgraph._graph.spec import AgentSpec
from dynavec_langgraph._graph.state import ReActState, steps_in_run
from dynavec_langgraph._graph.tasks import foreign_task, next_task
from dynavec_langgraph._graph.tool_call import ToolCallRun, remember
from dynavec_langgraph._tools.agent_tool import AgentTool
from dynavec_langgraph._types import NodeUpdate, StateUpdate, UserPayload, UserState

if TYPE_CHECKING:  # imported by the factory, which builds the ToolNode these nodes run
    from langgraph.prebuilt import ToolNode

__all__ = [
    "NodeRunnable",
    "OwnTools",
    "ReActNodes",
    "model_kwargs",
    "model_update",
    "node_input",
    "until_done",
]


def model_update(state: ReActState, response: UserPayload, name: str | None) -> StateUpdate:
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


def model_kwargs(config: RunnableConfig) -> dict[str, UserPayload]:
    """The run's extra keyword arguments for the model call (:attr:`RunData.model_kwargs`)."""
    return dict(RunData.of(config).model_kwargs)


class OwnTools:
    """The tool executor of a plain agent whose every tool is this package's own
    (:class:`AgentTool`, what ``@tool`` and plain functions become): :class:`ReActNodes` runs
    those itself (see :meth:`ReActNodes.call_tool`), so such an agent needs no LangGraph
    ``ToolNode`` (nor ``langgraph.prebuilt``'s import, 50-100 ms). Any other tool, a
    ``tools=ToolNode(...)``, ``wrap_tool_call`` middleware or ``create_agent``'s face get the
    ``ToolNode``."""

    def __init__(self, tools: Sequence[AgentTool]) -> None:
        self.tools_by_name: Mapping[str, BaseTool] = {t.name: t for t in tools}

    def invoke(self, request: UserPayload, config: RunnableConfig | None = None) -> NodeUpdate:
        raise RuntimeError(
            f"OwnTools runs no tool: the tool node runs {sorted(self.tools_by_name)} itself"
        )

    async def ainvoke(
        self, request: UserPayload, config: RunnableConfig | None = None
    ) -> NodeUpdate:
        return self.invoke(request, config)


class ReActNodes:
    """The two nodes, sync and async; they differ only in the line that does I/O."""

    run_unknown = False
    """A call of a tool the agent does not have goes to the executor (``create_agent``'s face:
    ``wrap_tool_call`` middleware may run tools a ``wrap_model_call`` added) instead of being
    answered "not registered"."""

    def __init__(
        self,
        spec: AgentSpec,
        model: Runnable[LanguageModelInput, UserPayload],
        tools: list[AgentTool],
        executor: ToolNode | OwnTools,
        system_message: SystemMessage | None,
        own_executor: bool = True,
    ) -> None:
        """The nodes of the agent ``spec`` describes: ``model`` with its tools bound, the
        agent's ``tools`` and their ``executor``; ``system_message``, the prompt's (added
        before the conversation at each model call); ``own_executor``: this package's tools
        run here, not through the executor."""
        self.model = model
        self.name = spec.name
        self.parallel = spec.parallel_tool_calls
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
        self.prompt = [system_message] if system_message is not None else []
        self.max_steps = spec.max_steps
        for t in executor.tools_by_name.values():
            on_crash_of(t)  # a bad on_crash= is refused when the agent is built
        self.state_view: Callable[[UserState], UserState] | None = None
        """Turns the state into the user's ``state_schema`` type for ``InjectedState``."""

    def call_model(self, state: ReActState, config: RunnableConfig) -> StateUpdate:
        if self.parallel and pending_calls(state["messages"]):
            return {}  # held calls: the router sends them again; no model call
        messages = self.prompt + list(state["messages"])
        response = self.model.invoke(messages, config, **model_kwargs(config))
        return self._after_model(state, response)

    async def acall_model(self, state: ReActState, config: RunnableConfig) -> StateUpdate:
        if self.parallel and pending_calls(state["messages"]):
            return {}  # held calls: the router sends them again; no model call
        messages = self.prompt + list(state["messages"])
        response = await self.model.ainvoke(messages, config, **model_kwargs(config))
        return self._after_model(state, response)

    def _after_model(self, state: ReActState, response: UserPayload) -> StateUpdate:
        update = model_update(state, response, self.name)
        if self.parallel and state.get("held"):
            update["held"] = None  # a new turn: its calls may be held once each
        return update

    def on_crash(self, call: ToolCallRun) -> OnCrash | None:
        """The call's declared ``on_crash`` policy, ``None`` if its tool declares none
        (:mod:`dynavec_langgraph._exactly_once`)."""
        tool = call.tool or self.executor.tools_by_name.get(call.call["name"])
        return None if tool is None else declared_on_crash(tool)

    def _task(self, state_or_task: UserState) -> ToolCallRun:
        task = foreign_task(state_or_task)
        if task is None:
            task = (
                state_or_task
                if "call" in state_or_task
                else next_task(state_or_task, self.max_steps, self.direct)
            )
        return ToolCallRun(task, self.tools, self.state_view, self.run_unknown)

    def _ready(
        self, state_or_task: UserState, config: RunnableConfig
    ) -> tuple[ToolCallRun, RunData, NodeUpdate]:
        """The call of this visit and the run's data, or the answer it gets without running:
        its recorded result (it ran before its result could be saved: not again) or the
        answer of a call that cannot run; :data:`_RUN` when it runs."""
        call = self._task(state_or_task)
        run = RunData.of(config)
        if call.ref["id"] in run.completed:
            return call, run, run.completed[call.ref["id"]].update
        if call.skip is not None:
            return call, run, call.answer(call.skip)
        return call, run, _RUN

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
    def call_tool(self, state_or_task: UserState, config: RunnableConfig) -> NodeUpdate:
        call, run, early = self._ready(state_or_task, config)
        if early is not _RUN:
            return early
        own = self.own.get(call.call["name"])
        tool_config = call.keyed(run, config)
        with call.running():
            try:
                with claimed(run, call.ref):  # a resumed call: once per decision

                    def body() -> NodeUpdate:
                        if own is None:
                            return call.finish(self.executor.invoke(call.request, tool_config))
                        try:
                            message = own.invoke(call.tool_call, tool_config)
                        except Exception as error:
                            return call.finish(call.own_error(error))
                        return call.finish({"messages": [message]})

                    policy = self.on_crash(call)
                    result = guarded(
                        run, call.ref, call.key, policy, body, call.answer, call.resent
                    )
                    # recorded before the claim is marked done: if that write fails, the
                    # caller's error still says the call ran (and a retry does not repeat it)
                    return remember(run, call, result)
            except GraphInterrupt as pause:
                return call.held(pause)

    async def acall_tool(self, state_or_task: UserState, config: RunnableConfig) -> NodeUpdate:
        call, run, early = self._ready(state_or_task, config)
        if early is not _RUN:
            return early
        # a call that started runs to its end even if the caller is cancelled (until_done)
        return await until_done(self._arun_call(call, run, config))

    async def _arun_call(
        self, call: ToolCallRun, run: RunData, config: RunnableConfig
    ) -> NodeUpdate:
        try:
            return await self._arun_tool(call, run, config)
        finally:  # the trail entries a task of this loop writes (a server's store): written
            await recorder().written()

    async def _arun_tool(
        self, call: ToolCallRun, run: RunData, config: RunnableConfig
    ) -> NodeUpdate:
        own = self.own.get(call.call["name"])
        tool_config = call.keyed(run, config)
        with call.running():
            try:
                async with aclaimed(run, call.ref):  # a resumed call: once per decision

                    async def body() -> NodeUpdate:
                        if own is None:
                            return call.finish(
                                await self.executor.ainvoke(call.request, tool_config)
                            )
                        try:
                            message = await own.ainvoke(call.tool_call, tool_config)
                        except Exception as error:
                            return call.finish(call.own_error(error))
                        return call.finish({"messages": [message]})

                    policy = self.on_crash(call)
                    result = await aguarded(
                        run, call.ref, call.key, policy, body, call.answer, call.resent
                    )
                    # recorded before the claim is marked done: if that write fails, the
                    # caller's error still says the call ran (and a retry does not repeat it)
                    return remember(run, call, result)
            except GraphInterrupt as pause:
                return call.held(pause)


_RUN: Final = object()
"""What :meth:`ReActNodes._ready` returns for a call that runs (no early answer)."""


_T = TypeVar("_T")


async def until_done(run: Coroutine[object, object, _T]) -> _T:
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


class NodeRunnable(Runnable[UserState, NodeUpdate]):
    """A node with sync and async twins. LangGraph traces every node run itself; a
    ``RunnableLambda`` would add a second, nested run to each step, and its cost."""

    name: str

    def __init__(
        self,
        name: str,
        func: Callable[[UserState, RunnableConfig], NodeUpdate],
        afunc: Callable[[UserState, RunnableConfig], Awaitable[NodeUpdate]],
    ) -> None:
        self.name = name
        self.func, self.afunc = func, afunc

    def invoke(
        self, input: UserState, config: RunnableConfig | None = None, **kwargs: UserPayload
    ) -> NodeUpdate:
        token = _NODE_INPUT.set(input)
        try:
            return self.func(input, ensure_config(config))
        finally:
            _NODE_INPUT.reset(token)

    async def ainvoke(
        self, input: UserState, config: RunnableConfig | None = None, **kwargs: UserPayload
    ) -> NodeUpdate:
        token = _NODE_INPUT.set(input)
        try:
            return await self.afunc(input, ensure_config(config))
        finally:
            _NODE_INPUT.reset(token)


_NODE_INPUT: ContextVar[UserState] = ContextVar("dynavec_node_input", default=None)


def node_input() -> UserState:
    """The state the running node of the agent got (a callable model reads it)."""
    return _NODE_INPUT.get()
