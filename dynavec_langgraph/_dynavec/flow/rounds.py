"""The compiled graph's channels and LangGraph nodes: a dynavec round as two supersteps, its
bookkeeping in JSON."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated, TypedDict

from langchain_core.runnables import RunnableConfig
from langgraph.errors import GraphBubbleUp, is_invalid_resume
from langgraph.graph import END, START

from dynavec_langgraph._dynavec.flow.parts import (
    BaseNode,
    Edge,
    GraphState,
    MaxIterationsExceededError,
    ReducerFn,
)
from dynavec_langgraph._dynavec.flow.results import NodeTrace
from dynavec_langgraph._names import FLOW_CONTEXT_KEY
from dynavec_langgraph._types import JSONObject, StateUpdate, UserValues

__all__ = [
    "DISPATCH_NODE",
    "RESERVED_NAMES",
    "RESULT_KEY",
    "RUN_KEY",
    "START_NODE",
    "STATE_KEY",
    "FlowChannels",
    "FlowInput",
    "FlowOutput",
    "FlowSpec",
    "RunContext",
    "trace_from",
]

START_NODE = "__flow_start__"
"""The LangGraph node that starts a run (the entry's round)."""
DISPATCH_NODE = "__flow_dispatch__"
"""The LangGraph node that ends each round: merges, traces, evaluates the edges."""
STATE_KEY = "flow_state"
"""The channel holding the dynavec state's values (input and output)."""
RESULT_KEY = "flow_result"
"""The channel holding ``GraphResult.to_dict()`` once the run ended (output)."""
RUN_KEY = "flow_run"
OUTCOMES_KEY = "flow_outcomes"
RESERVED_NAMES = frozenset(
    {START, END, START_NODE, DISPATCH_NODE, STATE_KEY, RESULT_KEY, RUN_KEY, OUTCOMES_KEY}
)
"""Names a dynavec node cannot take: the LangGraph graph's own nodes and state keys."""


# --- the run's bookkeeping (JSON, in the flow_run channel) ----------------------------------


class _Outcome(TypedDict):
    """What one node task writes: its trace and what it returned."""

    node: str
    index: int
    kind: str  # "state" | "update" | "none" | "error"
    values: UserValues  # the state the node ran on, as it left it (or the returned one)
    update: UserValues
    trace: JSONObject


def _collect(current: list[_Outcome] | None, update: list[_Outcome] | None) -> list[_Outcome]:
    """``flow_outcomes`` reducer: the round's outcomes; ``None`` clears."""
    return [] if update is None else [*(current or []), *update]


class FlowChannels(TypedDict, total=False):
    """The compiled graph's state."""

    flow_state: UserValues
    flow_result: JSONObject | None
    flow_run: JSONObject
    flow_outcomes: Annotated[list[_Outcome], _collect]


class FlowInput(TypedDict):
    """The compiled graph's input: the start state's values."""

    flow_state: UserValues


class FlowOutput(TypedDict, total=False):
    """The compiled graph's output: the state's values and the result."""

    flow_state: UserValues
    flow_result: JSONObject | None


@dataclass
class RunContext:
    """One invocation's in-process part (``config["configurable"]``): what JSON cannot hold."""

    reducers: dict[str, ReducerFn] | None = None
    max_steps: int | None = None
    returned: dict[str, dict[str, ReducerFn]] = field(default_factory=dict)
    """Reducers of a ``GraphState`` a node returned, by node name (this round)."""


def _context(config: RunnableConfig) -> RunContext:
    found = (config.get("configurable") or {}).get(FLOW_CONTEXT_KEY)
    return found if isinstance(found, RunContext) else RunContext()


def trace_from(data: JSONObject) -> NodeTrace:
    return NodeTrace(
        node_name=data["node_name"],
        node_type=data["node_type"],
        started_at=float(data["started_at"]),
        ended_at=float(data["ended_at"]),
        duration_ms=float(data["duration_ms"]),
        input_keys=list(data["input_keys"]),
        output_keys=list(data["output_keys"]),
        error=data["error"],
    )


def _trace(
    node: BaseNode, started: float, ended: float, before: list[str], after: list[str], error: object
) -> JSONObject:
    return {
        "node_name": node.name,
        "node_type": node.node_type,
        "started_at": started,
        "ended_at": ended,
        "duration_ms": (ended - started) * 1000.0,
        "input_keys": before,
        "output_keys": after,
        "error": error,
    }


def _run_node(node: BaseNode, state: GraphState, index: int, ctx: RunContext) -> _Outcome:
    """Run one dynavec node; its exceptions become the outcome's error, LangGraph's
    interrupt (and other control-flow) exceptions go through."""
    before = list(state.keys())
    reducers = dict(state.reducers)
    started = time.perf_counter()
    try:
        returned = node.execute(state)
    except Exception as error:
        if isinstance(error, GraphBubbleUp) or is_invalid_resume(error):
            raise  # a pause (or LangGraph's own control flow) is never a node error
        text = f"{type(error).__name__}: {error}"
        trace = _trace(node, started, time.perf_counter(), before, before, text)
        return _Outcome(
            node=node.name, index=index, kind="error", values={}, update={}, trace=trace
        )
    ended = time.perf_counter()
    if isinstance(returned, GraphState):
        ctx.returned[node.name] = dict(returned.reducers)
        kind, values, update = "state", dict(returned), {}
    elif isinstance(returned, dict) or returned is None:
        if state.reducers != reducers:  # registered on the state it ran on
            ctx.returned[node.name] = dict(state.reducers)
        kind, values = ("update", "none")[returned is None], dict(state)
        update = dict(returned or {})
    else:
        text = (
            f"TypeError: node {node.name!r} returned {type(returned).__name__}; return a dict "
            "of updates, a GraphState or None"
        )
        trace = _trace(node, started, ended, before, before, text)
        return _Outcome(
            node=node.name, index=index, kind="error", values={}, update={}, trace=trace
        )
    after = list({**values, **update}.keys())
    trace = _trace(node, started, ended, before, after, None)
    return _Outcome(
        node=node.name, index=index, kind=kind, values=values, update=update, trace=trace
    )


@dataclass(frozen=True)
class FlowSpec:
    """What a compiled graph runs: a snapshot of the builder (later edits do not reach it)."""

    name: str
    entry: str
    max_iterations: int
    nodes: dict[str, BaseNode]
    edges: list[Edge]
    barriers: frozenset[str]
    inbound: dict[str, int]
    reducers: dict[str, ReducerFn]
    max_steps: int

    def outgoing(self, source: str) -> list[Edge]:
        return [e for e in self.edges if e.source == source]

    def reducers_for(self, ctx: RunContext) -> dict[str, ReducerFn]:
        return dict(self.reducers if ctx.reducers is None else ctx.reducers)

    # --- LangGraph nodes ------------------------------------------------------------------

    def start(self, state: FlowChannels, config: RunnableConfig) -> StateUpdate:
        """``__flow_start__``: a new run on the input state; the entry is the first round."""
        ctx = _context(config)
        run: JSONObject = {
            "graph_name": self.name,
            "max_steps": self.max_steps if ctx.max_steps is None else ctx.max_steps,
            "reducer_keys": sorted(self.reducers_for(ctx)),
            "queue": [self.entry],
            "batch": [],
            "visits": {},
            "arrivals": {},
            "trace": [],
            "executed": 0,
            "error": None,
            "done": False,
            "started": time.time(),
        }
        return self._next_round(run, dict(state.get("flow_state") or {}))

    def execute(self, name: str) -> _NodeTask:
        """The LangGraph node of dynavec node ``name``."""
        return _NodeTask(self, self.nodes[name])

    def dispatch(self, state: FlowChannels, config: RunnableConfig) -> StateUpdate:
        """``__flow_dispatch__``: merge the round's results in batch order, trace them and
        schedule the targets of the edges that hold; then the next round (or the end)."""
        ctx = _context(config)
        run = _copy_run(state["flow_run"])
        live = GraphState(state.get("flow_state") or {}, reducers=self.reducers_for(ctx))
        outcomes = sorted(state.get("flow_outcomes") or [], key=lambda o: o["index"])
        single = len(run["batch"]) == 1
        for outcome in outcomes:
            run["trace"].append(outcome["trace"])
            run["executed"] += 1
            if outcome["kind"] == "error":
                run["error"] = outcome["trace"]["error"]
                break
            branch = self._branch_state(outcome, live, ctx, single)
            if single:
                live = branch
            else:  # the whole branch state, inherited values too, through the reducers
                live.merge(dict(branch))
            self._dispatch_edges(outcome["node"], live, run)
        ctx.returned.clear()
        if ctx.reducers is not None:
            ctx.reducers = dict(live.reducers)  # a node may have returned a GraphState
        return self._next_round(run, dict(live), live.reducers)

    # --- plain decisions --------------------------------------------------------------------

    def _branch_state(
        self, outcome: _Outcome, state: GraphState, ctx: RunContext, single: bool
    ) -> GraphState:
        """The state a node left: a returned ``GraphState`` with its reducers; else the state
        it ran on (the live one for a batch of one, whose reducer changes therefore last),
        with a returned dict merged."""
        returned = ctx.returned.get(outcome["node"])
        if outcome["kind"] == "state" or single:
            reducers = returned if returned is not None else state.reducers
        else:
            reducers = state.reducers
        branch = GraphState(outcome["values"], reducers=reducers)
        return branch.merge(outcome["update"]) if outcome["kind"] == "update" else branch

    def _dispatch_edges(self, source: str, state: GraphState, run: JSONObject) -> None:
        """Schedule every target whose edge holds (insertion order, no duplicates); a join
        barrier waits for as many arrivals as it has inbound edges, unless it is the only
        target its source activated (dynavec's rule)."""
        taken = [e.target for e in self.outgoing(source) if e.evaluate(state)]
        only = len(set(taken)) == 1
        queue: list[str] = run["queue"]
        for target in taken:  # an arrival per edge taken
            if target in self.barriers:
                arrived = run["arrivals"].get(target, 0) + 1
                if arrived >= self.inbound.get(target, 0) or only:
                    run["arrivals"][target] = 0
                else:
                    run["arrivals"][target] = arrived
                    continue
            if target not in queue:
                queue.append(target)

    def _next_round(
        self,
        run: JSONObject,
        state: UserValues,
        reducers: Mapping[str, ReducerFn] | None = None,
    ) -> StateUpdate:
        update: StateUpdate = {STATE_KEY: state, OUTCOMES_KEY: None}
        if reducers is not None:
            run["reducer_keys"] = sorted(reducers)
        if run["error"] is not None or not run["queue"] or run["executed"] >= run["max_steps"]:
            run["done"], run["batch"] = True, []
            update[RESULT_KEY] = _result_dict(run, state)
        else:
            run["batch"], run["queue"] = list(run["queue"]), []
            for name in run["batch"]:
                visits = run["visits"].get(name, 0) + 1
                run["visits"][name] = visits
                if visits > self.max_iterations:
                    raise MaxIterationsExceededError(
                        f"Loop iteration limit ({self.max_iterations}) exceeded on node '{name}'"
                    )
            update[RESULT_KEY] = None
        update[RUN_KEY] = run
        return update

    @staticmethod
    def route(state: FlowChannels) -> list[str] | str:
        """After ``__flow_start__`` / ``__flow_dispatch__``: the round's batch, or the end."""
        run = state["flow_run"]
        return END if run["done"] else list(run["batch"])


class _NodeTask:
    """The LangGraph node of one dynavec node: runs it and writes its outcome."""

    def __init__(self, spec: FlowSpec, node: BaseNode) -> None:
        self.spec = spec
        self.node = node
        self.__name__ = node.name

    def __call__(self, state: FlowChannels, config: RunnableConfig) -> StateUpdate:
        ctx = _context(config)
        batch = state["flow_run"]["batch"]
        live = GraphState(state.get("flow_state") or {}, reducers=self.spec.reducers_for(ctx))
        # a batch of one runs on the live state, several each on their own copy: both are
        # a new GraphState over the channel's values (a shallow copy), as in dynavec
        return {OUTCOMES_KEY: [_run_node(self.node, live, batch.index(self.node.name), ctx)]}


def _copy_run(run: JSONObject) -> JSONObject:
    out = dict(run)
    for key in ("queue", "batch", "trace", "reducer_keys"):
        out[key] = list(run[key])
    for key in ("visits", "arrivals"):
        out[key] = dict(run[key])
    return out


def _result_dict(run: JSONObject, state: Mapping[str, object]) -> JSONObject:
    return {
        "graph_name": run["graph_name"],
        "success": run["error"] is None,
        "total_ms": round((time.time() - run["started"]) * 1000.0, 3),
        "nodes_executed": run["executed"],
        "trace": [trace_from(t).to_dict() for t in run["trace"]],
        "state": dict(state),
        "error": run["error"],
    }
