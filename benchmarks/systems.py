"""The four systems under test, built on ONE scripted model and the same tools.

Every system gets its own :class:`~dynavec_langgraph.testing.ScriptedChatModel` whose policy is
a :class:`Script`: ``steps`` model turns of ``calls`` tool calls each (``lookup``), then, when
``approval`` is set, one ``transfer`` call that pauses for a person, then the answer ``"done"``.
Framework modules are imported inside the builders, so a fresh process (the resume benchmark)
imports only what the system it resumes needs.
"""

from __future__ import annotations

import asyncio
import uuid
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from typing_extensions import TypedDict

from dynavec_langgraph.testing import ScriptedChatModel, Turn

SystemName = Literal["dynavec_graph", "dynavec_ReActAgent", "create_agent", "prebuilt_react_v2"]
SYSTEMS: Final[tuple[SystemName, ...]] = (
    "dynavec_graph",
    "dynavec_ReActAgent",
    "create_agent",
    "prebuilt_react_v2",
)
VariantName = Literal[SystemName, "dynavec_graph_sync", "dynavec_create_agent", "floor"]
SYNC_GRAPH: Final = "dynavec_graph_sync"
"""The package's graph invoked with ``durability="sync"``, as ``ReActAgent`` invokes it: the
like-for-like baseline of the ReActAgent overhead (timed only where there is a checkpointer)."""
FLOOR: Final = "floor"
"""A minimal LangGraph graph (model node, tool node, ``add_messages``) making the same model and
tool calls with the same checkpoints as the package's graph (one checkpointed step per model
turn and per tool call) and nothing else: what LangGraph itself costs (time per step only)."""
TIMED: Final[tuple[VariantName, ...]] = (*SYSTEMS, SYNC_GRAPH, FLOOR)
BOOKKEEPING: Final = "bookkeeping"
"""The storage part's floor: LangGraph alone making the same checkpoints as the package's
graph for the same steps and storing no message (:func:`bookkeeping_graph`): what LangGraph's
own checkpoint records take, before any conversation is stored."""
CREATE_AGENT_FACE: Final = "dynavec_create_agent"
"""``dynavec_langgraph.create_agent`` (create_agent's face of the package's factory), built with
the same tools and middleware as ``langchain.agents.create_agent``: the middleware part."""
BASELINE: Final[SystemName] = "create_agent"
LABELS: Final[dict[str, str]] = {
    "dynavec_graph": "dynavec_langgraph.create_react_agent",
    "dynavec_ReActAgent": "dynavec_langgraph.ReActAgent",
    "create_agent": "langchain.agents.create_agent",
    "prebuilt_react_v2": "langgraph.prebuilt.create_react_agent (v2)",
    SYNC_GRAPH: 'dynavec_langgraph.create_react_agent invoked with durability="sync" '
    "(as ReActAgent does; time per step only)",
    CREATE_AGENT_FACE: "dynavec_langgraph.create_agent (with middleware only)",
    FLOOR: "a minimal LangGraph StateGraph (a model node, a tool node running one call per "
    "step, add_messages): the same model and tool calls and checkpoints, nothing else "
    "(time per step only)",
}
SYSTEM_PROMPT: Final = "You are a benchmark agent. Use the tools, then answer."
GOAL: Final = "Look things up, then answer."
DECISION: Final = "approved"
ANSWER: Final = "done"
RECURSION_LIMIT: Final = 100_000
MAX_STEPS: Final = 100_000


@dataclass
class Script:
    """The scripted conversation: the model's policy (shared by all systems)."""

    steps: int = 1
    calls: int = 1
    approval: bool = False

    def __call__(self, messages: list[BaseMessage]) -> Turn:
        turn = 0
        for m in reversed(messages):
            if isinstance(m, HumanMessage):
                break
            if isinstance(m, AIMessage):
                turn += 1
        if turn < self.steps:
            return [
                {"name": "lookup", "args": {"query": f"q{turn}.{j}"}} for j in range(self.calls)
            ]
        if self.approval and turn == self.steps:
            return [{"name": "transfer", "args": {"amount": 120}}]
        return ANSWER


def lookup(query: str) -> str:
    """Look up a query."""
    return f"result for {query}"


def _transfer_tool(framework: Literal["dynavec", "langgraph"], io_latency: float | None) -> Any:
    """The approval tool: pauses for a decision, then (async variant) awaits ``io_latency``."""
    if framework == "dynavec":
        from dynavec_langgraph import interrupt as dynavec_interrupt
        from dynavec_langgraph import tool

        def ask(amount: int) -> Any:
            return dynavec_interrupt("approve_transfer", {"amount": amount})

        wrap: Callable[[Callable[..., Any]], Any] = tool(
            name="transfer", description="Transfer money after a person approves."
        )
    else:
        from langchain_core.tools import StructuredTool
        from langgraph.types import interrupt as langgraph_interrupt

        def ask(amount: int) -> Any:
            return langgraph_interrupt({"node_id": "approve_transfer", "amount": amount})

        def wrap(fn: Callable[..., Any]) -> Any:
            description = "Transfer money after a person approves."
            if asyncio.iscoroutinefunction(fn):
                return StructuredTool.from_function(
                    coroutine=fn, name="transfer", description=description
                )
            return StructuredTool.from_function(func=fn, name="transfer", description=description)

    if io_latency is None:

        def transfer(amount: int) -> str:
            return f"transferred {amount}: {ask(amount)}"

        return wrap(transfer)

    async def atransfer(amount: int) -> str:
        decision = ask(amount)
        await asyncio.sleep(io_latency)  # the approved action's I/O
        return f"transferred {amount}: {decision}"

    return wrap(atransfer)


@dataclass
class Outcome:
    """What a run or resume produced, read the same way for every system."""

    interrupted: bool
    answer: str | None
    observations: list[str] = field(default_factory=list)


def _outcome(values: dict[str, Any]) -> Outcome:
    messages: Sequence[BaseMessage] = values.get("messages") or []
    start = 0
    for i in range(len(messages) - 1, -1, -1):
        if isinstance(messages[i], HumanMessage):
            start = i + 1
            break
    run = messages[start:]
    observations = [str(m.content) for m in run if isinstance(m, ToolMessage)]
    last = run[-1] if run else None
    answer = str(last.content) if isinstance(last, AIMessage) and not last.tool_calls else None
    return Outcome(bool(values.get("__interrupt__")), answer, observations)


def config(thread_id: str) -> dict[str, Any]:
    """The run config every system gets."""
    return {"configurable": {"thread_id": thread_id}, "recursion_limit": RECURSION_LIMIT}


@dataclass
class System:
    """One system under test: run a conversation, resume a paused one (sync and async)."""

    name: VariantName
    script: Script
    model: ScriptedChatModel
    saver: Any = None
    graph: Any = None
    agent: Any = None
    invoke_kwargs: dict[str, Any] = field(default_factory=dict)

    def run(self, thread_id: str | None = None) -> Outcome:
        tid = thread_id or uuid.uuid4().hex
        try:
            if self.agent is not None:
                return _agent_outcome(self.agent.run(GOAL, thread_id=tid))
            return _outcome(
                self.graph.invoke(
                    {"messages": [HumanMessage(GOAL)]}, config(tid), **self.invoke_kwargs
                )
            )
        finally:
            self.model.calls.clear()

    async def arun(self, thread_id: str | None = None) -> Outcome:
        tid = thread_id or uuid.uuid4().hex
        try:
            if self.agent is not None:
                return _agent_outcome(await self.agent.arun(GOAL, thread_id=tid))
            values = await self.graph.ainvoke(
                {"messages": [HumanMessage(GOAL)]}, config(tid), **self.invoke_kwargs
            )
            return _outcome(values)
        finally:
            self.model.calls.clear()

    def resume(self, thread_id: str) -> Outcome:
        from langgraph.types import Command

        try:
            if self.agent is not None:
                return _agent_outcome(
                    self.agent.resume(thread_id=thread_id, human_decision=DECISION)
                )
            return _outcome(
                self.graph.invoke(Command(resume=DECISION), config(thread_id), **self.invoke_kwargs)
            )
        finally:
            self.model.calls.clear()

    async def aresume(self, thread_id: str) -> Outcome:
        from langgraph.types import Command

        try:
            if self.agent is not None:
                result = await self.agent.aresume(thread_id=thread_id, human_decision=DECISION)
                return _agent_outcome(result)
            values = await self.graph.ainvoke(
                Command(resume=DECISION), config(thread_id), **self.invoke_kwargs
            )
            return _outcome(values)
        finally:
            self.model.calls.clear()


def _agent_outcome(result: Any) -> Outcome:
    observations = [o for step in result.steps for o in step.observations]
    interrupted = result.termination_reason == "interrupted"
    answer = result.output if result.finished else None
    return Outcome(interrupted, answer, observations)


def import_system(name: VariantName) -> None:
    """Import the modules ``name`` needs (the resume benchmark times this separately)."""
    if name == FLOOR:  # what floor_graph and its tools use
        import langchain_core.tools  # noqa: F401
        import langgraph.graph
    elif name.startswith("dynavec"):
        from dynavec_langgraph import ReActAgent, create_react_agent  # noqa: F401
    elif name == "create_agent":
        import langchain.agents  # noqa: F401
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            import langgraph.prebuilt
    import langgraph.types  # noqa: F401


MIDDLEWARE_LABEL: Final = "ModelRetryMiddleware + ToolRetryMiddleware"


def two_middleware() -> list[Any]:
    """One model-level and one tool-level middleware (``wrap_model_call``, ``wrap_tool_call``),
    both pass-through when nothing fails: the cost of the middleware machinery itself."""
    from langchain.agents.middleware import ModelRetryMiddleware, ToolRetryMiddleware

    return [ModelRetryMiddleware(max_retries=1), ToolRetryMiddleware(max_retries=1)]


def build(
    name: VariantName,
    checkpointer: Any,
    *,
    script: Script | None = None,
    io_latency: float | None = None,
    middleware: bool = False,
) -> System:
    """Build ``name`` with its own scripted model, the shared tools and ``checkpointer``.

    ``io_latency`` makes ``transfer`` async, awaiting that many seconds after the decision.
    ``SYNC_GRAPH`` is the package's graph, invoked with ``durability="sync"``.
    ``middleware`` gives ``dynavec_graph`` and ``create_agent`` the same two LangChain
    middleware (:func:`two_middleware`: one model-level, one tool-level).
    """
    extra: dict[str, Any] = {"middleware": two_middleware()} if middleware else {}
    script = script or Script()
    model = ScriptedChatModel(policy=script)
    system = System(name, script, model, checkpointer)
    if name == FLOOR:
        if io_latency is not None:
            raise ValueError("the floor is timed synchronously only (no io_latency)")
        system.graph = floor_graph(model, checkpointer)
        return system
    if name == CREATE_AGENT_FACE:  # the drop-in: create_agent's arguments, LangChain tools
        from dynavec_langgraph import create_agent as dynavec_create_agent

        system.graph = dynavec_create_agent(
            model,
            [lookup, _transfer_tool("langgraph", io_latency)],
            system_prompt=SYSTEM_PROMPT,
            checkpointer=checkpointer,
            **extra,
        )
        return system
    if name.startswith("dynavec"):
        from dynavec_langgraph import ReActAgent, create_react_agent

        tools = [lookup, _transfer_tool("dynavec", io_latency)]
        if name == "dynavec_ReActAgent":
            system.agent = ReActAgent(
                model, tools, SYSTEM_PROMPT, max_steps=MAX_STEPS, checkpointer=checkpointer
            )
        else:
            system.graph = create_react_agent(
                model,
                tools,
                system_prompt=SYSTEM_PROMPT,
                max_steps=MAX_STEPS,
                checkpointer=checkpointer,
                **extra,
            )
            if name == SYNC_GRAPH:
                system.invoke_kwargs = {"durability": "sync"}
        return system
    lc_tools = [lookup, _transfer_tool("langgraph", io_latency)]
    if name == "create_agent":
        from langchain.agents import create_agent

        system.graph = create_agent(
            model, lc_tools, system_prompt=SYSTEM_PROMPT, checkpointer=checkpointer, **extra
        )
        return system
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from langgraph.prebuilt import create_react_agent as prebuilt_react_agent

        system.graph = prebuilt_react_agent(
            model, lc_tools, prompt=SYSTEM_PROMPT, checkpointer=checkpointer, version="v2"
        )
    return system


def floor_graph(model: ScriptedChatModel, checkpointer: Any) -> Any:
    """The floor: a plain LangGraph ``StateGraph`` making the package's model and tool calls.

    A model node (the system prompt, then the thread's messages, to the model with the tools
    bound once) and a tool node (plain synchronous functions) that runs the first unanswered
    call of the last model turn, one call per step, as the package does; ``add_messages`` as
    the reducer. No views, no policy, no digests, no claims: every checkpoint the package
    writes, and nothing else.
    """
    from langchain_core.messages import SystemMessage
    from langgraph.graph import END, START, MessagesState, StateGraph

    transfer = _transfer_tool("langgraph", None)
    tools: dict[str, Any] = {"lookup": lookup, "transfer": transfer.func}
    bound = model.bind_tools([lookup, transfer])
    system = SystemMessage(SYSTEM_PROMPT)

    def pending(messages: Sequence[BaseMessage]) -> list[dict[str, Any]]:
        answered: set[str] = set()
        for m in reversed(messages):
            if isinstance(m, AIMessage):
                return [dict(c) for c in m.tool_calls if c["id"] not in answered]
            if isinstance(m, ToolMessage):
                answered.add(m.tool_call_id)
        return []

    def agent(state: dict[str, Any]) -> dict[str, Any]:
        return {"messages": [bound.invoke([system, *state["messages"]])]}

    def run_tool(state: dict[str, Any]) -> dict[str, Any]:
        call = pending(state["messages"])[0]
        result = tools[call["name"]](**call["args"])
        return {"messages": [ToolMessage(str(result), tool_call_id=call["id"], name=call["name"])]}

    def route(state: dict[str, Any]) -> str:
        return "tools" if pending(state["messages"]) else "agent"

    def after_agent(state: dict[str, Any]) -> str:
        return "tools" if pending(state["messages"]) else END

    graph: Any = StateGraph(MessagesState)  # nodes take the state as a plain dict
    graph.add_node("agent", agent)
    graph.add_node("tools", run_tool)
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", after_agent, ["tools", END])
    graph.add_conditional_edges("tools", route, ["tools", "agent"])
    return graph.compile(checkpointer=checkpointer)


class Count(TypedDict):
    """The storage floor's whole state: a step counter."""

    n: int


def bookkeeping_graph(steps: int, checkpointer: Any) -> Any:
    """The storage floor: a plain LangGraph ``StateGraph`` of two nodes ("agent" and "tools",
    as the package's graph) passing a step counter, making the checkpoints the package's graph
    makes for ``steps`` steps of one call each (a model turn and a tool call per step, then the
    answer) and storing nothing else. Run it with ``{"n": 0}`` and a recursion limit above
    ``2 * steps + 2``."""
    from langgraph.graph import END, START, StateGraph

    def agent(state: Count) -> Count:
        return {"n": state["n"] + 1}

    def tools(state: Count) -> Count:
        return {"n": state["n"]}

    def after_agent(state: Count) -> str:
        return "tools" if state["n"] <= steps else END

    graph = StateGraph(Count)
    graph.add_node("agent", agent)
    graph.add_node("tools", tools)
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", after_agent, ["tools", END])
    graph.add_edge("tools", "agent")
    return graph.compile(checkpointer=checkpointer)
