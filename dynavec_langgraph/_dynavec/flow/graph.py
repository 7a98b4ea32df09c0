"""``AgentGraph``: building a dynavec graph, validating it, compiling it to LangGraph, running
and resuming it, and the pause it reports."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Checkpointer, Command, Interrupt, StateSnapshot

from dynavec_langgraph._dynavec.flow.in_process import InProcessSerde
from dynavec_langgraph._dynavec.flow.parts import (
    BaseNode,
    Condition,
    Edge,
    FunctionNode,
    GraphCycleError,
    GraphState,
    GraphValidationError,
    ReducerFn,
)
from dynavec_langgraph._dynavec.flow.results import GraphResult
from dynavec_langgraph._dynavec.flow.rounds import (
    DISPATCH_NODE,
    RESERVED_NAMES,
    RUN_KEY,
    START_NODE,
    STATE_KEY,
    FlowChannels,
    FlowInput,
    FlowOutput,
    FlowSpec,
    RunContext,
    trace_from,
)
from dynavec_langgraph._errors import (
    CheckpointerConfigError,
    InvalidDecisionError,
    NothingToResumeError,
    ThreadPausedError,
    no_decision_text,
    not_paused_text,
)
from dynavec_langgraph._names import FLOW_CONTEXT_KEY
from dynavec_langgraph._pauses.value import interrupt_fields
from dynavec_langgraph._types import JSONObject, UserPayload, UserValues

if TYPE_CHECKING:
    from dynavec_langgraph._types import CompiledGraph

__all__ = ["AgentGraph", "AgentState", "FlowGraph", "FlowState"]

# --- the builder --------------------------------------------------------------------------


def _check_positive(name: str, value: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{name}={value!r}: pass a whole number of at least 1")
    return value


class AgentGraph:
    """dynavec's workflow graph; :meth:`compile` gives the LangGraph graph it runs on.

    Every builder method returns ``self``.

    Example:
        >>> g = (
        ...     AgentGraph("demo")
        ...     .add_node("double", lambda s: {"n": s["n"] * 2})
        ...     .add_node("big", lambda s: {"size": "big"})
        ...     .add_edge("double", "big", condition="n > 5")
        ...     .set_entry("double")
        ... )
        >>> result = g.run({"n": 4})
        >>> result.state, [t.node_name for t in result.trace]
        ({'n': 8, 'size': 'big'}, ['double', 'big'])

    Args:
        name: the graph's name (also the compiled LangGraph graph's).
        description: free text, in :meth:`to_dict`.
        max_iterations: visits allowed per node and run; one more raises
            :class:`MaxIterationsExceededError`.
        checkpointer: a LangGraph saver for runs given a ``thread_id`` (their pauses then
            resume from any process; the state's values must be storable by it). Other runs
            keep their state in an in-process saver of their own, holding the values as they
            are (any Python object), so that :meth:`resume` works on this object.

    Raises:
        ValueError: ``max_iterations`` below 1.
        CheckpointerConfigError: ``checkpointer`` is no LangGraph saver.
    """

    def __init__(
        self,
        name: str = "dynaflow-graph",
        *,
        description: str = "",
        max_iterations: int = 25,
        checkpointer: object = None,
    ) -> None:
        self.name = name
        self.description = description
        self.max_iterations = _check_positive("max_iterations", max_iterations)
        if checkpointer is not None and not isinstance(checkpointer, BaseCheckpointSaver):
            raise CheckpointerConfigError(
                f"checkpointer={checkpointer!r:.80}: pass a LangGraph saver (SqliteSaver, "
                "PostgresSaver, InMemorySaver, ...) or None"
            )
        self.checkpointer: BaseCheckpointSaver[Any] | None = checkpointer
        self._in_process: dict[str, InMemorySaver] = {}
        """The in-process saver of each paused (or running) run that has no checkpointer."""
        self._nodes: dict[str, BaseNode] = {}
        self._edges: list[Edge] = []
        self._barriers: list[str] = []
        self._entry: str | None = None
        self._paused_reducers: dict[str, dict[str, ReducerFn]] = {}
        """The reducers of this object's paused runs, by thread (they are not stored)."""

    # --- building -------------------------------------------------------------------------

    def add_node(
        self, name: str, node: BaseNode | Callable[[GraphState], UserPayload]
    ) -> AgentGraph:
        """Add ``node`` (a :class:`BaseNode`, or a callable wrapped in a
        :class:`FunctionNode`) under ``name``.

        Raises:
            TypeError: ``node`` is neither.
            GraphValidationError: ``name`` is taken.
        """
        if isinstance(node, BaseNode):
            node.name = name
            built: BaseNode = node
        elif callable(node):
            built = FunctionNode(node, name=name)
        else:
            raise TypeError(f"Expected BaseNode or callable, got {type(node)}")
        if name in self._nodes:
            raise GraphValidationError(f"Duplicate node name: '{name}'")
        self._nodes[name] = built
        return self

    def add_edge(
        self, source: str, target: str, *, condition: Condition = None, label: str = ""
    ) -> AgentGraph:
        """Add an edge (checked by :meth:`validate`, not here)."""
        self._edges.append(Edge(source, target, condition, label))
        return self

    def add_conditional_edges(
        self,
        source: str,
        router: Callable[[GraphState], object] | Mapping[str, str],
        *,
        branches: Mapping[UserPayload, str] | None = None,
    ) -> AgentGraph:
        """Route from ``source``: a router function with ``branches`` (``{result: target}``,
        one edge each, taken when the router returns that result or a list holding it), or a
        mapping ``{condition string: target}``.

        Raises:
            GraphValidationError: a router function without ``branches``.
            TypeError: a mapping key that is not a condition string.
        """
        if callable(router):
            if branches is None:
                raise GraphValidationError(
                    "add_conditional_edges with a router function requires the 'branches' mapping."
                )
            fn = router
            for key, target in branches.items():
                self.add_edge(source, target, condition=_router_condition(fn, key), label=str(key))
        elif isinstance(router, Mapping):
            for condition, target in router.items():
                if not isinstance(condition, str):
                    raise TypeError("Router mapping keys must be string condition expressions")
                self.add_edge(source, target, condition=condition)
        return self

    def add_parallel_branches(
        self, source: str, targets: Iterable[str], *, join_at: str | None = None
    ) -> AgentGraph:
        """Fan out from ``source`` to each target; with ``join_at``, that node becomes a join
        barrier reached from every target (it runs once, on the merged state)."""
        names = list(targets)
        for target in names:
            self.add_edge(source, target)
        if join_at is not None:
            self.register_join_barrier(join_at)
            for target in names:
                self.add_edge(target, join_at)
        return self

    def register_join_barrier(self, name: str) -> AgentGraph:
        """Make ``name`` a join barrier (nodes with several inbound edges are ones anyway)."""
        if name not in self._barriers:
            self._barriers.append(name)
        return self

    def set_entry(self, name: str) -> AgentGraph:
        """The node a run starts at.

        Raises:
            GraphValidationError: no node ``name``.
        """
        if name not in self._nodes:
            raise GraphValidationError(f"Entry node '{name}' not found in registered nodes")
        self._entry = name
        return self

    @property
    def node_names(self) -> list[str]:
        """The node names, in insertion order."""
        return list(self._nodes)

    @property
    def edges(self) -> list[Edge]:
        """A copy of the edge list."""
        return list(self._edges)

    def to_dict(self) -> JSONObject:
        """``{"name", "description", "entry", "max_iterations", "nodes", "edges"}``."""
        return {
            "name": self.name,
            "description": self.description,
            "entry": self._entry,
            "max_iterations": self.max_iterations,
            "nodes": {name: node.to_dict() for name, node in self._nodes.items()},
            "edges": [e.to_dict() for e in self._edges],
        }

    # --- validation -----------------------------------------------------------------------

    def validate(self) -> list[str]:
        """The graph's problems (an empty list when it can run); never raises."""
        errors: list[str] = []
        if self._entry is None:
            errors.append("No entry node set (call set_entry())")
        elif self._entry not in self._nodes:
            errors.append(f"Entry node '{self._entry}' not found")
        for edge in self._edges:
            if edge.source not in self._nodes:
                errors.append(f"Edge source '{edge.source}' not found")
            if edge.target not in self._nodes:
                errors.append(f"Edge target '{edge.target}' not found")
        if errors:
            return errors
        for cycle in self._cycles():
            if not self._guarded(cycle):
                errors.append(
                    f"Malformed infinite cycle detected: {' -> '.join(cycle)} with no exit "
                    "condition or guard."
                )
        return errors

    def _cycles(self) -> list[list[str]]:
        cycles: list[list[str]] = []
        visited: set[str] = set()

        def visit(name: str, path: list[str]) -> None:
            visited.add(name)
            path.append(name)
            for edge in self._edges:
                if edge.source != name:
                    continue
                if edge.target in path:
                    cycles.append([*path[path.index(edge.target) :], edge.target])
                elif edge.target not in visited:
                    visit(edge.target, path)
            path.pop()

        for name in self._nodes:
            if name not in visited:
                visit(name, [])
        return cycles

    def _guarded(self, cycle: list[str]) -> bool:
        members = set(cycle)
        return any(
            e.is_conditional() or e.target not in members
            for e in self._edges
            if e.source in members
        )

    def _check(self) -> None:
        errors = self.validate()
        if errors:
            message = "; ".join(errors)
            if any("Malformed infinite cycle" in e for e in errors):
                raise GraphCycleError(message)
            raise GraphValidationError(message)
        reserved = sorted(set(self._nodes) & RESERVED_NAMES)
        bad = [n for n in self._nodes if "|" in n or ":" in n]
        if reserved or bad:
            names = ", ".join(repr(n) for n in reserved + bad)
            raise GraphValidationError(
                f"Node name {names} cannot be a LangGraph node name (the compiled graph uses "
                f"{', '.join(sorted(RESERVED_NAMES))}, and '|' and ':' separate subgraph "
                "namespaces): rename the node"
            )

    # --- the LangGraph graph ------------------------------------------------------------------

    def _spec(self, reducers: Mapping[str, ReducerFn] | None, max_steps: int) -> FlowSpec:
        self._check()
        assert self._entry is not None
        inbound: dict[str, int] = {}
        for edge in self._edges:
            inbound[edge.target] = inbound.get(edge.target, 0) + 1
        barriers = set(self._barriers) | {n for n, count in inbound.items() if count > 1}
        return FlowSpec(
            name=self.name,
            entry=self._entry,
            max_iterations=self.max_iterations,
            nodes=dict(self._nodes),
            edges=list(self._edges),
            barriers=frozenset(barriers),
            inbound=inbound,
            reducers=dict(reducers or {}),
            max_steps=max_steps,
        )

    def compile(
        self,
        checkpointer: Checkpointer = None,
        *,
        reducers: Mapping[str, ReducerFn] | None = None,
        max_steps: int = 100,
        max_workers: int = 4,
        **compile_kwargs: UserPayload,
    ) -> CompiledGraph:
        """The LangGraph graph: input ``{"flow_state": {...}}``, output ``{"flow_state",
        "flow_result"}`` (``GraphResult.to_dict()``), one LangGraph node per dynavec node.

        Args:
            checkpointer: passed to ``StateGraph.compile`` (``None`` as a subgraph or in
                ``langgraph dev``, which bring theirs).
            reducers: the reducers of the state's keys (a plain dict input has none).
            max_steps: node executions per run (the run then stops, successfully).
            max_workers: nodes of one round run at most this many at once.
            compile_kwargs: other ``StateGraph.compile`` options (``interrupt_before``...).

        Raises:
            GraphValidationError / GraphCycleError: as :meth:`run`.
        """
        steps = _check_positive("max_steps", max_steps)
        workers = _check_positive("max_workers", max_workers)
        spec = self._spec(reducers, steps)
        builder: StateGraph[FlowChannels, None, FlowInput, FlowOutput] = StateGraph(
            FlowChannels, input_schema=FlowInput, output_schema=FlowOutput
        )
        names = list(spec.nodes)
        builder.add_node(START_NODE, spec.start)
        builder.add_node(DISPATCH_NODE, spec.dispatch)
        for name in names:
            builder.add_node(name, spec.execute(name))
            builder.add_edge(name, DISPATCH_NODE)
        builder.add_edge(START, START_NODE)
        # every conditional edge lists its targets, so Studio draws the graph as it runs
        targets = [n for n in names if n in spec.inbound]
        builder.add_conditional_edges(START_NODE, spec.route, [spec.entry])
        builder.add_conditional_edges(DISPATCH_NODE, spec.route, [*targets, END])
        compiled = builder.compile(checkpointer=checkpointer, name=self.name, **compile_kwargs)
        # a round is two supersteps (its nodes, then the dispatch), plus the start
        return compiled.with_config(
            recursion_limit=_recursion_limit(steps), max_concurrency=workers
        )

    # --- running --------------------------------------------------------------------------

    def _new_saver(self, thread_id: str | None) -> tuple[str, BaseCheckpointSaver[Any]]:
        """The thread and saver of a new run: the checkpointer for a named thread, else an
        in-process saver of its own, which keeps the state's objects as they are (no
        serialisation: a dynavec state may hold any Python object) and is dropped when the
        run ends unpaused."""
        if thread_id is not None and self.checkpointer is not None:
            return thread_id, self.checkpointer
        tid = thread_id or uuid.uuid4().hex
        saver = InMemorySaver(serde=InProcessSerde())
        self._in_process[tid] = saver
        return tid, saver

    def _config(
        self, thread_id: str, ctx: RunContext, max_steps: int, max_workers: int
    ) -> RunnableConfig:
        return {
            "configurable": {"thread_id": thread_id, FLOW_CONTEXT_KEY: ctx},
            "recursion_limit": _recursion_limit(max_steps),
            "max_concurrency": max_workers,
        }

    def run(
        self,
        initial_state: GraphState | Mapping[str, UserPayload] | None = None,
        *,
        max_steps: int = 100,
        max_workers: int = 4,
        thread_id: str | None = None,
    ) -> GraphResult:
        """Run the graph from its entry.

        Args:
            initial_state: a :class:`GraphState` (copied: its reducers apply), a dict (no
                reducers) or ``None``.
            max_steps: node executions after which the run stops (``success=True``).
            max_workers: nodes of one round that run at once.
            thread_id: the LangGraph thread, stored in the graph's checkpointer (default: a new
                one, in process only); a paused run is resumed by it.

        Raises:
            GraphValidationError / GraphCycleError: the graph is malformed (:meth:`validate`).
            MaxIterationsExceededError: a node's visits exceed ``max_iterations``.
            ThreadPausedError: ``thread_id`` is paused (answer it with :meth:`resume`).
            ValueError: a condition string that cannot be parsed.
        """
        steps = _check_positive("max_steps", max_steps)
        workers = _check_positive("max_workers", max_workers)
        if thread_id is not None and (not isinstance(thread_id, str) or not thread_id):
            raise TypeError(f"thread_id={thread_id!r}: pass a non-empty string, or None")
        start = (
            initial_state.copy()
            if isinstance(initial_state, GraphState)
            else GraphState(initial_state or {})
        )
        ctx = RunContext(reducers=dict(start.reducers), max_steps=steps)
        if thread_id is not None:
            self._refuse_if_paused(thread_id)
        tid, saver = self._new_saver(thread_id)
        compiled = self.compile(saver, max_steps=steps, max_workers=workers)
        config = self._config(tid, ctx, steps, workers)
        try:
            compiled.invoke({STATE_KEY: dict(start)}, config)
        except BaseException:
            self._in_process.pop(tid, None)
            raise
        return self._result(compiled, config, tid, ctx)

    def resume(
        self,
        thread_id: str,
        human_decision: UserPayload,
        *,
        reducers: Mapping[str, ReducerFn] | None = None,
        max_workers: int = 4,
    ) -> GraphResult:
        """Answer a paused run: the paused node runs again and its ``interrupt()`` returns
        ``human_decision`` (LangGraph's ``Command(resume=human_decision)``); the run goes on.

        Args:
            thread_id: ``GraphResult.thread_id`` of the paused run.
            human_decision: the decision (not ``None``).
            reducers: the state's reducers, when resuming in a process that did not start
                the run (reducers are functions and are not stored in checkpoints).
            max_workers: nodes of one round that run at once.

        Raises:
            NothingToResumeError: the thread is not paused (a ``ValueError``).
            InvalidDecisionError: ``human_decision`` is ``None`` (a ``ValueError``).
            GraphValidationError: the run registered reducers that ``reducers`` lacks.
        """
        workers = _check_positive("max_workers", max_workers)
        if human_decision is None:
            raise InvalidDecisionError(no_decision_text("human_decision=None"))
        saver = self._in_process.get(thread_id, self.checkpointer)
        config: RunnableConfig = {"configurable": {"thread_id": thread_id}}
        snapshot = self.compile(saver).get_state(config) if saver is not None else None
        if snapshot is None or not snapshot.interrupts:
            raise NothingToResumeError(
                not_paused_text(thread_id, " (run() starts a run)", graph=self.name)
            )
        run = snapshot.values.get(RUN_KEY) or {}
        known = self._paused_reducers.get(thread_id)
        chosen = dict(reducers) if reducers is not None else known
        if chosen is None:
            missing = list(run.get("reducer_keys") or [])
            if missing:
                raise GraphValidationError(
                    f"the paused run has reducers for {', '.join(repr(k) for k in missing)}, "
                    "which are not stored with it: pass them again, "
                    "resume(thread_id, decision, reducers={...})"
                )
            chosen = {}
        steps = int(run.get("max_steps") or 100)
        ctx = RunContext(reducers=chosen, max_steps=steps)
        compiled = self.compile(saver, max_steps=steps, max_workers=workers)
        config = self._config(thread_id, ctx, steps, workers)
        compiled.invoke(Command(resume=human_decision), config)
        return self._result(compiled, config, thread_id, ctx)

    def _refuse_if_paused(self, thread_id: str) -> None:
        """``run()`` on a paused thread would drop its pause: refused, nothing changed."""
        saver = self._in_process.get(thread_id, self.checkpointer)
        if saver is None:
            return
        snapshot = self.compile(saver).get_state({"configurable": {"thread_id": thread_id}})
        if snapshot.interrupts:
            nodes = [interrupt_fields(i).node_id or "?" for i in snapshot.interrupts]
            raise ThreadPausedError(thread_id, nodes)

    def _result(
        self,
        compiled: CompiledGraph,
        config: RunnableConfig,
        thread_id: str,
        ctx: RunContext,
    ) -> GraphResult:
        snapshot = compiled.get_state(config)
        values = snapshot.values
        run = values.get(RUN_KEY) or {}
        reducers = ctx.reducers if ctx.reducers is not None else {}
        state = GraphState(values.get(STATE_KEY) or {}, reducers=reducers)
        result = GraphResult(
            state=state,
            trace=[trace_from(t) for t in run.get("trace", [])],
            nodes_executed=int(run.get("executed", 0)),
            total_ms=(time.time() - float(run.get("started", time.time()))) * 1000.0,
            graph_name=self.name,
            success=run.get("error") is None and bool(run.get("done")),
            error=run.get("error"),
            thread_id=thread_id,
        )
        if snapshot.interrupts:
            result.interrupt_payload = _pause(snapshot, thread_id)
            self._paused_reducers[thread_id] = dict(reducers)
        else:
            self._paused_reducers.pop(thread_id, None)
            self._in_process.pop(thread_id, None)
        return result


def _router_condition(
    router: Callable[[GraphState], object], key: UserPayload
) -> Callable[[GraphState], bool]:
    def condition(state: GraphState) -> bool:
        result = router(state)
        return key in result if isinstance(result, list) else bool(result == key)

    condition.__name__ = getattr(router, "__name__", "router")
    return condition


def _recursion_limit(max_steps: int) -> int:
    return 2 * max_steps + 4


def _pause(snapshot: StateSnapshot, thread_id: str) -> UserValues:
    first: Interrupt = snapshot.interrupts[0]
    node = next((t.name for t in snapshot.tasks if t.interrupts), None)
    fields = interrupt_fields(first)
    return {
        "thread_id": thread_id,
        "node": node,
        "node_id": fields.node_id if fields.node_id is not None else node,
        "payload": fields.payload,
        "interrupt_id": first.id,
    }


FlowGraph = AgentGraph
"""dynavec's other name for :class:`AgentGraph`."""
FlowState = GraphState
"""dynavec's other name for :class:`GraphState`."""
AgentState = GraphState
"""The graph branch's alias of :class:`GraphState` (only in ``agents.graph``; the package's
``AgentState`` is the shared-state record)."""
