"""The factory on top: ``create_react_agent``'s options, the graph built from them (the plain
two-node graph here, the middleware graph by :mod:`dynavec_langgraph._middleware`) and compiled.

Nothing in the package imports this module back but the public faces (``create_react_agent``
re-exported by the package, ``create_agent``, ``ReActAgent``, the demo); it is the only importer
of the middleware code.
"""

from __future__ import annotations

import os
import re
import sys
import warnings
from collections.abc import AsyncIterator, Callable, Hashable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Final, Literal, NotRequired, TypedDict, cast, get_type_hints

import langchain_core
import langgraph.errors
from langchain_core.messages import SystemMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple
from langgraph.errors import UnknownInterruptError
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.store.base import BaseStore
from langgraph.types import Command, StateSnapshot

from dynavec_langgraph._errors import (
    UnappliedResumeWarning,
    UnkeyedResumeError,
    unapplied_resume_text,
    unkeyed_text,
)
from dynavec_langgraph._graph.binding import bind_model
from dynavec_langgraph._graph.messages import stamp_input_ids
from dynavec_langgraph._graph.nodes import NodeRunnable, OwnTools, ReActNodes
from dynavec_langgraph._graph.options import AgentOptions, resolve_options
from dynavec_langgraph._graph.routing import (
    route_after_agent,
    route_after_agent_parallel,
    route_after_task_parallel,
    route_start,
    route_start_parallel,
    tools_router,
)
from dynavec_langgraph._graph.spec import DEFAULT_VERSION, AgentSpec, prebuilt_options
from dynavec_langgraph._graph.state import BOOKKEEPING, FullReActState, MessageStorage, ReActState
from dynavec_langgraph._graph.tool_call import error_observation
from dynavec_langgraph._lg_names import INTERRUPT_WRITE, STRICT_RESUME, loaded_prebuilt
from dynavec_langgraph._names import AGENT_NODE, TOOLS_METADATA_KEY, TOOLS_NODE
from dynavec_langgraph._pauses.digest import decision_digest, review_digest
from dynavec_langgraph._pauses.value import describe_pending
from dynavec_langgraph._persistence.history import HistoryCache, keep_conversations
from dynavec_langgraph._storable import brief
from dynavec_langgraph._tools.adapters import as_tools, executable
from dynavec_langgraph._tools.agent_tool import AgentTool
from dynavec_langgraph._types import ToolArgs, UserContext, UserPayload, UserState

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool
    from langgraph.prebuilt import ToolNode

    from dynavec_langgraph._dynavec.registry import ToolsOption
    from dynavec_langgraph._pauses.policy.spec import ApprovalPolicyOption
    from dynavec_langgraph._persistence.records import CheckpointerOption
    from dynavec_langgraph._types import (
        AgentBuilder,
        CacheOption,
        CompiledAgent,
        GraphCommand,
        Hook,
        MiddlewareOption,
        ModelOption,
        PromptOption,
        ResponseFormatOption,
        SchemaOption,
        UserRunnable,
    )

__all__ = [
    "AgentGraph",
    "build_agent",
    "create_react_agent",
    "with_bookkeeping",
]


_RECURSION_LIMIT = 10_000  # max_steps bounds the loop; LangGraph's default (25) is too low
_SUPERSTEPS_PER_STEP = 1_000
"""LangGraph's recursion limit follows ``max_steps`` (a model call, then one superstep per tool
call of its turn), so a run ends at ``max_steps``, never at a limit the caller did not set."""


def create_react_agent(
    model: ModelOption,
    tools: ToolsOption = None,
    *,
    system_prompt: str | SystemMessage | None = None,
    max_steps: int = 10,
    checkpointer: CheckpointerOption = None,
    store: BaseStore | None = None,
    name: str | None = None,
    message_storage: MessageStorage = "delta",
    parallel_tool_calls: bool = False,
    prompt: PromptOption = None,
    response_format: ResponseFormatOption = None,
    middleware: MiddlewareOption = (),
    state_schema: SchemaOption = None,
    context_schema: SchemaOption = None,
    pre_model_hook: Hook | None = None,
    post_model_hook: Hook | None = None,
    interrupt_before: list[str] | None = None,
    interrupt_after: list[str] | None = None,
    debug: bool = False,
    cache: CacheOption = None,
    version: Literal["v1", "v2"] = DEFAULT_VERSION,
    approval_policy: ApprovalPolicyOption = None,
    **unknown: UserPayload,
) -> CompiledAgent:
    """Build dynavec's ReAct agent as a compiled LangGraph graph.

    Run it alone (``graph.invoke({"messages": [...]}, config)``) or add it as a node of a
    parent graph whose state has ``messages``. Tools may call
    :func:`dynavec_langgraph.interrupt` to pause for a person; answer with
    ``Command(resume=decision)``.

    Args:
        model: a LangChain chat model that can bind tools, a ``"provider:model"`` string,
            or a dynavec-style model (``invoke(messages, tools=...)``).
        tools: ``@tool`` functions, plain functions, LangChain tools or dynavec-style tools,
            or a LangGraph ``ToolNode`` (its tools and its ``handle_tool_errors``).
        system_prompt: a str or ``SystemMessage``, added before the conversation at every
            model call (not stored).
        max_steps: model calls per run (per user message); below 1 counts as 1.
        checkpointer: a LangGraph saver, or what ``ReActAgent`` takes (a connection string,
            a dynavec checkpointer such as ``DynamoDBCheckpointer``; a connection opened
            from a string stays open for the process); ``None`` when the graph is a
            subgraph (it uses the parent's). Interrupts need one to be resumed.
        store: a LangGraph store, passed to ``compile``.
        name: the graph's name (the node name Studio and parent graphs show), also set as
            the ``name`` of the agent's ``AIMessage``s (as the prebuilt agent does; multi-agent
            tools find an agent's messages by it). ``None`` (the default): no name on the
            messages and LangGraph's default graph name.
        message_storage: ``"delta"`` (default; linear storage) or ``"full"``.
        parallel_tool_calls: run the calls of a turn concurrently, each as its own task
            (several approvals can be pending at once). The default runs them one at a
            time in the model's order, each checkpointed before the next starts.
        prompt: the prebuilt agent's ``prompt``: a str or ``SystemMessage`` (as
            ``system_prompt``), or a callable / Runnable taking the state and returning the
            model's input messages.
        response_format: as ``create_agent``'s: a pydantic model, dataclass, TypedDict,
            JSON-schema dict, ``ToolStrategy`` or ``ProviderStrategy``; the result is in
            ``state["structured_response"]``. Needs ``langchain``.
        middleware: LangChain ``AgentMiddleware`` instances (and decorator forms), wired as
            ``create_agent`` wires them. Needs ``langchain``.
        state_schema: a state with ``messages`` (e.g. LangChain's ``AgentState`` or the
            prebuilt agent's state) whose other keys the graph keeps.
        context_schema: the type of ``invoke(..., context=...)``; tools read it through
            ``ToolRuntime.context`` or ``get_runtime()``.
        pre_model_hook / post_model_hook: the prebuilt agent's hooks: a node run before
            each model call (it may return ``llm_input_messages``, the model's input for
            that call, not stored) and one run after it.
        interrupt_before / interrupt_after / debug / cache: passed to ``compile``.
        version: the prebuilt agent's ``"v1"`` / ``"v2"`` (default); both keep this
            package's tool node (one call per superstep, or ``parallel_tool_calls=True``),
            see docs/prebuilt.md.
        approval_policy: an ``ApprovalPolicy`` (or ``{node_id: ApprovalPolicy}``) for the
            pauses of the tools (expiry, who may approve, several approvers;
            docs/approvals-in-production.md); ``tools`` must be a list.

    Returns:
        The compiled graph (an :class:`AgentGraph`). Its state is :class:`ReActState` (plus
        the ``state_schema``'s keys); ``invoke`` and ``stream`` give the state schema's keys
        only, as the prebuilt agent's; the bookkeeping (:data:`BOOKKEEPING`) is in
        ``get_state`` and in the output when asked for (``output_keys=``).

    Raises:
        TypeError: a model that cannot call tools, or a tool that cannot be used.
        ValueError: an unknown ``message_storage`` or two tools with one name.

    Example:
        >>> from dynavec_langgraph.testing import ScriptedChatModel
        >>> graph = create_react_agent(ScriptedChatModel(turns=["Hi!"]), [])
        >>> graph.invoke({"messages": [("user", "hello")]})["messages"][-1].content
        'Hi!'
    """
    given = prebuilt_options({**unknown, "context_schema": context_schema}, stacklevel=2)
    context_schema = given["context_schema"]
    spec = AgentSpec(
        model=model,
        tools=tools,
        system_prompt=system_prompt,
        max_steps=max_steps,
        checkpointer=checkpointer,
        store=store,
        name=name,
        message_storage=message_storage,
        parallel_tool_calls=parallel_tool_calls,
        prompt=prompt,
        response_format=response_format,
        middleware=middleware,
        state_schema=state_schema,
        context_schema=context_schema,
        pre_model_hook=pre_model_hook,
        post_model_hook=post_model_hook,
        interrupt_before=interrupt_before,
        interrupt_after=interrupt_after,
        debug=debug,
        cache=cache,
        version=version,
        approval_policy=approval_policy,
    )
    return build_agent(spec)


def build_agent(spec: AgentSpec) -> CompiledAgent:
    """The one factory behind ``create_react_agent``, ``create_agent`` and ``ReActAgent``: the
    graph ``spec`` describes, built and compiled."""
    face, tools = spec.face, spec.tools
    if spec.approval_policy is not None:
        from dynavec_langgraph._tools.policies import attach_policy

        tools = attach_policy(tools, spec.approval_policy)
    options = resolve_options(spec)
    if options.extended or face.create_agent:  # the middleware graph: its code imported here
        from dynavec_langgraph import _middleware as mw
    if options.middleware:
        mw.need_langchain("middleware")
    if options.response_format is not None:
        mw.need_langchain("response_format")
    if options.extended and spec.parallel_tool_calls:
        raise ValueError(
            "parallel_tool_calls=True is not available with middleware, response_format, "
            "state_schema, a callable prompt or pre/post model hooks yet: drop one of them"
        )
    extra_tools = [t for m in options.middleware for t in getattr(m, "tools", None) or ()]
    builtin: list[ToolArgs] = []
    wrap, awrap = mw.tool_wrappers(options.middleware) if options.middleware else (None, None)
    executor: ToolNode | OwnTools
    if _is_tool_node(tools):  # as the prebuilt agent: its tools and error handling
        if extra_tools or wrap is not None:
            raise ValueError(
                "tools=ToolNode(...) cannot take middleware tools or wrap_tool_call "
                "middleware: pass the tools as a list"
            )
        executor = cast("ToolNode", tools)
        agent_tools = as_tools(list(executor.tools_by_name.values()))
    else:
        if isinstance(tools, list | tuple):  # provider built-in tools (dicts): bound to the
            builtin = [t for t in tools if isinstance(t, dict)]  # model, never run
            tools = [t for t in tools if not isinstance(t, dict)]
        agent_tools = as_tools(tools)
        if extra_tools:  # create_agent: the middleware's tools come first
            agent_tools = as_tools([*extra_tools, *agent_tools])
        runs = [executable(t) for t in agent_tools]
        if not (options.extended or face.create_agent) and all(
            isinstance(t, AgentTool) for t in runs
        ):
            executor = OwnTools(agent_tools)  # the tool node runs them all itself
        else:
            from langgraph.prebuilt import ToolNode

            from dynavec_langgraph._graph.tool_errors import wrapped_error_observation

            executor = ToolNode(
                runs,
                handle_tool_errors=error_observation if wrap is None else wrapped_error_observation,
                wrap_tool_call=wrap,
                awrap_tool_call=awrap,
            )
            if face.create_agent:  # ToolNode's default: bad arguments answered, exceptions raised
                executor = mw.create_agent_tool_node(executor, wrap, awrap)
    model_runnable = _model_runnable(spec, options, agent_tools, builtin)
    finish = _structured_response_node(spec, model_runnable) if options.prebuilt_format else None
    system_message = options.system_message
    own = not _is_tool_node(tools) and wrap is None and not face.create_agent
    base: type[UserState] = ReActState if spec.message_storage == "delta" else FullReActState
    if finish is not None:  # the prebuilt agent's structured_response
        fields = {
            **get_type_hints(base, include_extras=True),
            "structured_response": NotRequired[UserPayload],
        }
        base = TypedDict("DynavecStructuredState", fields, total=False)  # type: ignore[misc,no-redef]
    if options.extended or face.create_agent:
        ext = mw.ExtendedNodes(
            spec, model_runnable, agent_tools, executor, system_message, own_executor=own
        )
        view = options.view
        ext.state_view = view if view is not None and view.typed else None
        request_tools: list[BaseTool | ToolArgs] = [executable(t) for t in agent_tools]
        request_tools += face.builtin_tools
        ext.setup(spec, options, _chat_model(spec.model), request_tools)
        builder = mw.build_graph(
            mw.merged_state(base, options),
            ext,
            spec,
            options,
            has_tools=bool(agent_tools) or (face.create_agent and wrap is not None),
            finish=finish,
        )
    else:
        nodes = ReActNodes(
            spec, model_runnable, agent_tools, executor, system_message, own_executor=own
        )
        builder = _plain_graph(nodes, base, spec, finish)
    graph = _compile(
        builder,
        spec,
        _dynavec_saver(spec.checkpointer, system_message),
        agent_tools,
        transformers=mw.create_agent_transformers(options.middleware, face.transformers)
        if face.create_agent
        else None,
        # create_agent's own input/output schemas already say what invoke() gives
        hide_bookkeeping=not face.create_agent,
    )
    return mw.create_agent_config(graph, spec.name) if face.create_agent else graph


def _model_runnable(
    spec: AgentSpec, options: AgentOptions, agent_tools: list[AgentTool], builtin: list[ToolArgs]
) -> UserRunnable:
    """The model the model node calls: a callable model resolved at each call, else the model
    with the agent's tools (and the provider's built-in tools) bound."""
    if options.dynamic_model:
        from dynavec_langgraph._graph.prebuilt import DynamicModel

        assert options.view is not None  # resolve_options sets it
        return DynamicModel(cast("Callable[..., UserPayload]", spec.model), options.view)
    return bind_model(spec.model, agent_tools, builtin)


def _structured_response_node(spec: AgentSpec, model: UserRunnable) -> NodeRunnable:
    """The prebuilt agent's ``generate_structured_response`` node (``response_format=``)."""
    from dynavec_langgraph._graph.prebuilt import StructuredResponseNode

    return StructuredResponseNode(spec.response_format, model).node()


def _is_tool_node(tools: ToolsOption) -> bool:
    """Whether ``tools`` is LangGraph's ``ToolNode`` (without importing it)."""
    tool_node = loaded_prebuilt("ToolNode")
    return tool_node is not None and isinstance(tools, tool_node)


def _plain_graph(
    nodes: ReActNodes, schema: type[UserState], spec: AgentSpec, finish: NodeRunnable | None
) -> AgentBuilder:
    """The two-node graph (no middleware, no create_agent option that needs more nodes);
    ``finish``: a node the run ends through (the prebuilt agent's structured response)."""
    steps = spec.max_steps
    builder = StateGraph(schema, context_schema=spec.context_schema)
    builder.add_node(AGENT_NODE, NodeRunnable(AGENT_NODE, nodes.call_model, nodes.acall_model))
    builder.add_node(TOOLS_NODE, NodeRunnable(TOOLS_NODE, nodes.call_tool, nodes.acall_tool))
    end: str = END
    if finish is not None:
        builder.add_node(finish.name, finish)
        builder.add_edge(finish.name, END)
        end = finish.name

    def paths(*names: str) -> dict[Hashable, str]:
        return {n: end if n == END else n for n in names}

    if spec.parallel_tool_calls:
        builder.add_conditional_edges(
            START, route_start_parallel(steps, nodes), [AGENT_NODE, TOOLS_NODE]
        )
        builder.add_conditional_edges(
            AGENT_NODE, route_after_agent_parallel(steps, nodes), paths(TOOLS_NODE, END)
        )
        builder.add_conditional_edges(
            TOOLS_NODE, route_after_task_parallel(steps), paths(AGENT_NODE, END)
        )
    else:
        builder.add_conditional_edges(START, route_start, [AGENT_NODE, TOOLS_NODE])
        builder.add_conditional_edges(AGENT_NODE, route_after_agent, paths(TOOLS_NODE, END))
        builder.add_conditional_edges(
            TOOLS_NODE, tools_router(steps), paths(AGENT_NODE, TOOLS_NODE, END)
        )
    return builder


def _chat_model(model: ModelOption) -> ModelOption:
    """The chat model a ``ModelRequest`` carries (a ``"provider:model"`` string resolved)."""
    if isinstance(model, str):
        from langchain.chat_models import init_chat_model

        return init_chat_model(model)
    return model


def _dynavec_saver(
    checkpointer: CheckpointerOption, system_message: SystemMessage | None
) -> CheckpointerOption:
    """``checkpointer``; a dynavec checkpointer as a saver whose records' messages start with
    the agent's system message, as dynavec's own records do (its text prompt; a saver
    given as such is used as it is)."""
    if isinstance(checkpointer, bool | None | BaseCheckpointSaver):
        return checkpointer
    from dynavec_langgraph.savers import resolve_checkpointer

    saver = resolve_checkpointer(checkpointer)  # a dynavec checkpointer or a connection string
    if system_message is not None and isinstance(system_message.content, str):
        from dynavec_langgraph._persistence.adapter import DynavecCheckpointSaver

        if isinstance(saver, DynavecCheckpointSaver):
            saver.system_prompt = system_message.content or None
    return saver


def _compile(
    builder: AgentBuilder,
    spec: AgentSpec,
    checkpointer: CheckpointerOption,
    agent_tools: list[AgentTool],
    transformers: Sequence[UserPayload] | None,
    hide_bookkeeping: bool,
) -> CompiledAgent:
    if not isinstance(checkpointer, bool | None | BaseCheckpointSaver):
        # a dynavec checkpointer or a connection string, as ReActAgent takes them
        from dynavec_langgraph.savers import resolve_checkpointer

        checkpointer = resolve_checkpointer(checkpointer)
    interrupt_before, interrupt_after = spec.interrupt_before, spec.interrupt_after
    for option, nodes in (
        ("interrupt_before", interrupt_before),
        ("interrupt_after", interrupt_after),
    ):
        unknown = [n for n in nodes or () if n != "*" and n not in builder.nodes]
        if unknown:
            raise ValueError(
                f"{option}={nodes!r}: the agent has no node {unknown}; its nodes are "
                f"{sorted(builder.nodes)} (the model node is {AGENT_NODE!r}; create_agent "
                "calls it 'model')"
            )
    if isinstance(checkpointer, BaseCheckpointSaver):
        checkpointer = keep_conversations(checkpointer, builder.channels)
    compiled = builder.compile(
        checkpointer=checkpointer,
        store=spec.store,
        name=spec.name,
        interrupt_before=interrupt_before,
        interrupt_after=interrupt_after,
        debug=spec.debug,
        cache=spec.cache,
        transformers=transformers,
    )
    graph: CompiledAgent = compiled
    if hide_bookkeeping:
        # Pregel.copy() builds `self.__class__(**attrs)` from the instance's attributes
        # (langgraph 1.2); AgentGraph is built the same way (tests/test_graph.py pins its
        # outputs)
        attrs = {k: v for k, v in compiled.__dict__.items() if k != "__orig_class__"}
        attrs["output_channels"] = [
            k for k in compiled.stream_channels_list if k not in BOOKKEEPING | _MODEL_INPUT
        ]
        graph = AgentGraph(**attrs)
    return graph.with_config(
        recursion_limit=max(_RECURSION_LIMIT, spec.max_steps * _SUPERSTEPS_PER_STEP),
        metadata={TOOLS_METADATA_KEY: [t.name for t in agent_tools]},
    )


_MODEL_INPUT: Final = frozenset({"llm_input_messages"})  # pre_model_hook's, not stored


_INTERRUPT_ID = re.compile(r"[0-9a-f]{32}")
_OURS = tuple(
    str(Path(path).parent) + os.sep
    for path in (langgraph.errors.__file__, langchain_core.__file__, __file__)
    if path is not None
)
"""Where LangGraph's, LangChain's and this package's frames come from: a warning skips them."""


def _resume_of(input: UserPayload, config: RunnableConfig | None) -> tuple[str, UserPayload] | None:
    """``(thread_id, resume)`` when ``input`` is a ``Command(resume=...)`` sent to a thread
    (not a subgraph's call, which never gets one); else ``None``."""
    if not isinstance(input, Command) or input.resume is None:
        return None
    configurable = (config or {}).get("configurable") or {}
    thread_id = configurable.get("thread_id")
    if thread_id is None or configurable.get("checkpoint_ns"):
        return None
    return str(thread_id), input.resume


def _one_pause(saved: CheckpointTuple | None) -> bool:
    """The thread's checkpoint holds exactly one pause (one interrupt written by a task of its
    next step): then its state snapshot has that task, so :func:`_unapplied` is false and
    :func:`_keyed` has nothing to bind, without building the snapshot (LangGraph's
    ``get_state`` prepares every task of the step and reads every channel: 16% of a resume's
    CPU). Several pauses take the snapshot, to bind an unkeyed answer to one of them."""
    if saved is None:
        return False
    values = [w[2] for w in saved.pending_writes or () if w[1] == INTERRUPT_WRITE]
    count = sum(len(v) if isinstance(v, (list, tuple)) else 1 for v in values)
    return count == 1


def _unapplied(snapshot: StateSnapshot) -> bool:
    """A thread with no pause to answer and no step to continue (a static breakpoint, or a
    run that stopped, has one: a resume continues it, as LangGraph's strict resume allows)."""
    return not snapshot.interrupts and not snapshot.next and not snapshot.tasks


def _caller_level() -> int:
    """The ``stacklevel`` of the first frame outside LangGraph, LangChain and this package
    (the caller's ``invoke`` / ``stream`` line), so the warning points there."""
    level, frame = 1, sys._getframe(1)
    while frame.f_back is not None and frame.f_code.co_filename.startswith(_OURS):
        frame, level = frame.f_back, level + 1
    return level


def _is_map(resume: UserPayload) -> bool:
    return isinstance(resume, dict) and all(
        isinstance(k, str) and _INTERRUPT_ID.fullmatch(k) for k in resume
    )


def _keyed(
    input: GraphCommand,
    snapshot: StateSnapshot,
    found: tuple[str, UserPayload],
    config: RunnableConfig | None,
) -> GraphCommand:
    """``input`` for a thread with several pauses pending: a resume with no interrupt id (what
    the Agent Chat UI and Agent Inbox send) bound to one of them by its review digest is sent
    to that one (keyed by its id); any other is refused with :class:`UnkeyedResumeError`
    before anything runs (LangGraph would refuse it too, with a ``RuntimeError`` that does not
    say what to do). Under strict resume LangGraph's ``UnknownInterruptError`` stays."""
    thread_id, resume = found
    pending = snapshot.interrupts
    strict = ((config or {}).get("configurable") or {}).get(STRICT_RESUME)
    if len(pending) < 2 or _is_map(resume) or strict:
        return input
    _, digest = decision_digest(resume)
    bound = [i for i in pending if digest is not None and review_digest(i) == digest]
    if len(bound) == 1:
        return replace(input, resume={bound[0].id: resume})  # the tool checks the digest again
    raise UnkeyedResumeError(unkeyed_text(thread_id, describe_pending(pending), len(pending)))


def _refuse_or_warn(thread_id: str, resume: UserPayload, config: RunnableConfig | None) -> None:
    """A resume of a thread with nothing to answer: under strict resume (LangGraph 1.2.20+)
    LangGraph's ``UnknownInterruptError`` (a map of interrupt ids is refused by LangGraph
    itself; a single value too, here: the thread is at no breakpoint), else
    :class:`UnappliedResumeWarning`. The graph then runs as LangGraph runs it."""
    is_map = _is_map(resume)
    if ((config or {}).get("configurable") or {}).get(STRICT_RESUME):
        if is_map:
            return  # LangGraph refuses it, with its own reason (not_pending / empty_map)
        text = unapplied_resume_text(thread_id, brief(resume, 80))
        raise UnknownInterruptError(text, reason="not_pending")
    warning = UnappliedResumeWarning(thread_id, brief(resume, 80))
    warnings.warn(warning, stacklevel=_caller_level())


class AgentGraph(CompiledStateGraph[UserState, UserContext, UserState, UserState]):
    """The compiled agent: a ``CompiledStateGraph`` whose ``stream`` / ``astream`` give the
    state schema's keys only by default (as ``invoke`` does, and as the prebuilt agent's
    output), not this package's bookkeeping (:data:`BOOKKEEPING`, still in ``get_state``).
    ``output_keys=`` picks other keys, as in LangGraph.

    A ``Command(resume=decision)`` with no interrupt id sent to a thread with several pauses
    pending is sent to the one its review digest binds it to, else refused with
    :class:`~dynavec_langgraph._errors.UnkeyedResumeError` before anything runs.

    A ``Command(resume=...)`` sent to a thread with no pause to answer and no step to
    continue (a late answer: another caller's finished the thread first) is not silent: it
    warns :class:`~dynavec_langgraph._errors.UnappliedResumeWarning`, or, under strict
    resume, raises LangGraph's ``UnknownInterruptError`` (``reason="not_pending"``) before
    anything is written (docs/human-in-the-loop.md, "A late answer")."""

    def _check_resume(
        self, input: UserPayload, config: RunnableConfig | None
    ) -> tuple[UserPayload, CheckpointTuple | None]:
        """``input`` as the run gets it, and the checkpoint read to check it when the run's
        own first read may take it (:meth:`HistoryCache.hand_over`: read once, not twice)."""
        found, saver = _resume_of(input, config), self.checkpointer
        if found is None or config is None or not isinstance(saver, BaseCheckpointSaver):
            return input, None
        saved = saver.get_tuple(config)
        if _one_pause(saved):
            return input, saved  # the usual resume: one read, not a whole state snapshot
        snapshot = self.get_state(config)
        if _unapplied(snapshot):
            _refuse_or_warn(*found, config)
        return _keyed(input, snapshot, found, config), None

    async def _acheck_resume(
        self, input: UserPayload, config: RunnableConfig | None
    ) -> tuple[UserPayload, CheckpointTuple | None]:
        found, saver = _resume_of(input, config), self.checkpointer
        if found is None or config is None or not isinstance(saver, BaseCheckpointSaver):
            return input, None
        saved = await saver.aget_tuple(config)
        if _one_pause(saved):
            return input, saved
        snapshot = await self.aget_state(config)
        if _unapplied(snapshot):
            _refuse_or_warn(*found, config)
        return _keyed(input, snapshot, found, config), None

    def stream(
        self, input: UserPayload, config: RunnableConfig | None = None, **kwargs: UserPayload
    ) -> Iterator[UserPayload]:
        if kwargs.get("output_keys") is None:
            kwargs["output_keys"] = self.output_channels
        input, saved = self._check_resume(input, config)
        stamp_input_ids(input)
        chunks = super().stream(input, config, **kwargs)
        saver = self.checkpointer
        if saved is None or config is None or not isinstance(saver, HistoryCache):
            return chunks
        return _handing(chunks, saver, config, saved)

    async def astream(
        self, input: UserPayload, config: RunnableConfig | None = None, **kwargs: UserPayload
    ) -> AsyncIterator[UserPayload]:
        if kwargs.get("output_keys") is None:
            kwargs["output_keys"] = self.output_channels
        input, saved = await self._acheck_resume(input, config)
        stamp_input_ids(input)
        saver = self.checkpointer
        handle = None
        if saved is not None and config is not None and isinstance(saver, HistoryCache):
            handle = saver.hand_over(config, saved)
        try:
            async for chunk in super().astream(input, config, **kwargs):
                yield chunk
        finally:
            if handle is not None and isinstance(saver, HistoryCache):
                saver.take_back(handle)


def _handing(
    chunks: Iterator[UserPayload],
    saver: HistoryCache,
    config: RunnableConfig,
    saved: CheckpointTuple,
) -> Iterator[UserPayload]:
    """``chunks``, with the checkpoint the resume check read handed to the run's first read
    of it (on the thread that iterates: LangGraph's loop reads there), taken back at the end."""
    handle = saver.hand_over(config, saved)
    try:
        yield from chunks
    finally:
        saver.take_back(handle)


def with_bookkeeping(graph: CompiledAgent) -> CompiledAgent:
    """``graph`` whose ``invoke`` / ``stream`` output also has :data:`BOOKKEEPING` (what
    ``ReActAgent`` and the package's own served graphs read from a run)."""
    return graph.copy({"output_channels": list(graph.stream_channels_list)})
