"""Mirrors ``langchain.agents.create_agent``'s graph assembly (checked against langchain 1.5.2): one
node per middleware hook in its order, their ``jump_to`` edges, ``_make_model_to_tools_edge``
and ``_make_tools_to_model_edge`` (pinned by digest in tests/test_create_agent.py), around this
package's model and tool nodes (tools still run one call per superstep)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import TYPE_CHECKING

from langchain_core.messages import AIMessage, ToolMessage
from langgraph.graph import END, START, StateGraph

from dynavec_langgraph._graph.call_ids import calls_of
from dynavec_langgraph._graph.conversation_view import pending_calls
from dynavec_langgraph._graph.nodes import NodeRunnable
from dynavec_langgraph._graph.options import POST_MODEL_HOOK, PRE_MODEL_HOOK, AgentOptions
from dynavec_langgraph._graph.routing import tools_router
from dynavec_langgraph._graph.spec import AgentSpec
from dynavec_langgraph._graph.state import steps_in_run
from dynavec_langgraph._middleware.face import visible_schemas
from dynavec_langgraph._middleware.hooks import (
    can_jump_to,
    hook_node,
    hook_trace_policy,
    last_ai_id,
    overrides,
)
from dynavec_langgraph._middleware.model_node import ExtendedNodes, runnable_calls
from dynavec_langgraph._middleware.options import HOOKS, JUMPS
from dynavec_langgraph._names import REVIEWED_KEY, TOOLS_NODE
from dynavec_langgraph._types import UserPayload, UserState

if TYPE_CHECKING:
    from dynavec_langgraph._types import AgentBuilder

__all__ = ["build_graph"]


def build_graph(
    schema: type[UserState],
    nodes: ExtendedNodes,
    spec: AgentSpec,
    options: AgentOptions,
    has_tools: bool,
    finish: NodeRunnable | None,
) -> AgentBuilder:
    """The graph of ``spec``'s agent with the middleware's nodes and edges, as create_agent
    wires them. ``finish``: a node the run ends through (the prebuilt agent's structured
    response)."""
    middleware, max_steps, face = options.middleware, spec.max_steps, spec.face
    names = [m.name for m in middleware]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ValueError(
            f"middleware: two middleware named {dupes}; create_agent refuses duplicates too. "
            "Pass each once (subclass or set a distinct `name` to use two of a kind)."
        )
    with_hook = {hook: [m for m in middleware if overrides(m, hook)] for hook in HOOKS}
    allowed = list(JUMPS if has_tools else JUMPS[::2])
    for hook, ms in with_hook.items():
        for m in ms:
            for jump in can_jump_to(m, hook):
                if jump not in JUMPS or (jump == "tools" and not has_tools):
                    raise ValueError(
                        f"middleware {m.name!r}: {hook} declares can_jump_to {jump!r}, but this "
                        f"agent has no such target (targets: {allowed}); "
                        + ("give the agent tools or " if jump == "tools" else "")
                        + "remove it from hook_config(can_jump_to=...)"
                    )
    model_node = face.model_node
    if face.create_agent:
        input_schema, output_schema = visible_schemas(schema)
        builder = StateGraph(
            schema,
            input_schema=input_schema,
            output_schema=output_schema,
            context_schema=options.context_schema,
        )
    else:
        builder = StateGraph(schema, context_schema=options.context_schema)
    builder.add_node(model_node, NodeRunnable(model_node, nodes.call_model, nodes.acall_model))
    builder.add_node(TOOLS_NODE, NodeRunnable(TOOLS_NODE, nodes.call_tool, nodes.acall_tool))
    for m in middleware:
        for hook in HOOKS:
            if m in with_hook[hook]:
                # the last after_model hook to run marks the turn as reviewed
                mark = hook == "after_model" and m is with_hook["after_model"][0]
                builder.add_node(
                    f"{m.name}.{hook}",
                    hook_node(m, hook, mark),
                    trace_policy=hook_trace_policy(m.trace_policy),
                )
    if options.pre_model_hook is not None:
        builder.add_node(PRE_MODEL_HOOK, options.pre_model_hook)
    if options.post_model_hook is not None:
        builder.add_node(POST_MODEL_HOOK, options.post_model_hook)

    before_agent = [f"{m.name}.before_agent" for m in with_hook["before_agent"]]
    before_model = [f"{m.name}.before_model" for m in with_hook["before_model"]]
    if options.pre_model_hook is not None:
        before_model.append(PRE_MODEL_HOOK)
    # after the model: the prebuilt agent's post_model_hook, then after_model in reverse
    after_model = [POST_MODEL_HOOK] if options.post_model_hook is not None else []
    after_model += [f"{m.name}.after_model" for m in reversed(with_hook["after_model"])]
    after_agent = [f"{m.name}.after_agent" for m in reversed(with_hook["after_agent"])]
    jumps_of: dict[str, list[str]] = {
        f"{m.name}.{hook}": can_jump_to(m, hook) for hook in HOOKS for m in with_hook[hook]
    }

    loop_entry = before_model[0] if before_model else model_node
    to_run = runnable_calls if face.create_agent else pending_calls
    exit_node = after_agent[0] if after_agent else END
    if finish is not None:
        builder.add_node(finish.name, finish)
        builder.add_edge(finish.name, exit_node)
        exit_node = finish.name
    review = after_model[0] if after_model else None

    def resolve(jump: UserPayload, state: UserState) -> str | None:
        if jump == "model":
            return loop_entry
        if jump == "end":
            return exit_node
        if jump == "tools":
            return TOOLS_NODE if to_run(state["messages"]) else loop_entry
        return None

    def targets(jumps: Sequence[str], default: str) -> list[str]:
        out = [default]
        for jump in jumps:
            dest = {"model": loop_entry, "end": exit_node, "tools": TOOLS_NODE}[jump]
            if dest not in out:
                out.append(dest)
        if "tools" in jumps and loop_entry not in out:
            out.append(loop_entry)
        return out

    def chain(node: str, default: str) -> None:
        jumps = jumps_of.get(node) or []
        if not jumps:
            builder.add_edge(node, default)
            return

        def jump_edge(state: UserState) -> str:
            return resolve(state.get("jump_to"), state) or default

        builder.add_conditional_edges(node, jump_edge, targets(jumps, default))

    def route_pending(state: UserState) -> str:
        """Unanswered calls finish first (a paused thread given new input); calls the
        after-model hooks have not passed yet (no answer in their turn) go through them."""
        messages = state["messages"]
        pending = to_run(messages)
        if not pending:
            return loop_entry
        if review is not None and state.get(REVIEWED_KEY) != last_ai_id(state):
            ids = {c["id"] for c in pending}
            turn = next(
                (m for m in reversed(messages) if isinstance(m, AIMessage) and calls_of(m)), None
            )
            if turn is not None and {c["id"] for c in calls_of(turn)} == ids:
                return review
        return TOOLS_NODE

    pending_targets = list(dict.fromkeys([loop_entry, TOOLS_NODE] + ([review] if review else [])))
    if not before_agent:
        builder.add_conditional_edges(START, route_pending, pending_targets)
    else:  # before_agent runs at the start of every invocation, as in create_agent
        builder.add_edge(START, before_agent[0])
        for node, nxt in itertools.pairwise(before_agent):
            chain(node, nxt)
        last_entry = before_agent[-1]
        entry_jumps = jumps_of.get(last_entry) or []

        def after_before_agent(state: UserState) -> str:
            jump = state.get("jump_to")
            if jump and jump in entry_jumps:
                return resolve(jump, state) or route_pending(state)
            return route_pending(state)

        builder.add_conditional_edges(
            last_entry,
            after_before_agent,
            list(dict.fromkeys(pending_targets + targets(entry_jumps, loop_entry))),
        )
    for node, nxt in zip(before_model, [*before_model[1:], model_node], strict=False):
        chain(node, nxt)
    if after_model:
        builder.add_edge(model_node, after_model[0])
        for node, nxt in itertools.pairwise(after_model):
            chain(node, nxt)
    last = after_model[-1] if after_model else model_node
    structured = nodes.structured

    def route_after_model(state: UserState) -> str:
        jump = state.get("jump_to")
        if jump and last in jumps_of and jump in jumps_of[last]:
            return resolve(jump, state) or exit_node
        messages = state["messages"]
        if to_run(messages):
            return TOOLS_NODE
        if structured is not None and state.get("structured_response") is not None:
            return exit_node
        ai = next((m for m in reversed(messages) if isinstance(m, AIMessage)), None)
        if ai is None or not (ai.tool_calls if face.create_agent else calls_of(ai)):
            return exit_node
        # calls answered without running (a structured-output retry, a rejection)
        return exit_node if steps_in_run(state) >= max_steps else loop_entry

    builder.add_conditional_edges(
        last, route_after_model, list(dict.fromkeys([TOOLS_NODE, exit_node, loop_entry]))
    )
    after_tools = tools_router(max_steps)
    structured_names = frozenset(structured.tools) if structured else frozenset()

    def route_after_tools(state: UserState) -> str:
        if face.create_agent:
            return create_agent_after_tools(state)
        where = after_tools(state)
        if where == TOOLS_NODE:
            if not to_run(state["messages"]):  # create_agent's face: malformed calls left
                return loop_entry
            return TOOLS_NODE
        if structured_names:
            ai = next((m for m in reversed(state["messages"]) if isinstance(m, AIMessage)), None)
            if (
                ai is not None
                and any(c["name"] in structured_names for c in calls_of(ai))
                and state.get("structured_response") is not None
            ):
                return exit_node
        return exit_node if where == END else loop_entry

    known_tools = nodes.executor.tools_by_name

    def create_agent_after_tools(state: UserState) -> str:
        """As create_agent's ``_make_tools_to_model_edge`` (langchain 1.5.2), one call at a
        time: the run ends when every tool that ran (the answer's name: a reviewer may have
        edited the call to another tool) is ``return_direct``, or a structured-output tool
        answered without error."""
        messages = state["messages"]
        if to_run(messages):
            return TOOLS_NODE
        index = next(
            (i for i in range(len(messages) - 1, -1, -1) if isinstance(messages[i], AIMessage)),
            -1,
        )
        if index < 0:
            return loop_entry
        ai = messages[index]
        answers = [m for m in messages[index + 1 :] if isinstance(m, ToolMessage)]
        ran = {m.tool_call_id: m.name for m in answers if m.name in known_tools}
        names = [
            n for c in ai.tool_calls if (n := ran.get(c["id"] or "", c["name"])) in known_tools
        ]
        if names and all(known_tools[n].return_direct for n in names):
            return exit_node
        if any(m.name in structured_names and m.status != "error" for m in answers):
            return exit_node
        return loop_entry

    builder.add_conditional_edges(
        TOOLS_NODE, route_after_tools, list(dict.fromkeys([TOOLS_NODE, exit_node, loop_entry]))
    )
    for node, nxt in zip(after_agent, [*after_agent[1:], END], strict=False):
        chain(node, nxt)
    return builder
