"""dynavec's graph engine (``dynavec.agents.graph``), compiled to a LangGraph ``StateGraph``.

An :class:`AgentGraph` is built as in dynavec (nodes, edges with conditions, parallel branches,
join barriers, reducers on a :class:`GraphState`) and :meth:`AgentGraph.run` returns dynavec's
:class:`GraphResult` with its traces, errors and quirks (docs/compatibility.md, "Graph
engine"). Underneath, :meth:`AgentGraph.compile` turns it into a compiled LangGraph graph:

- every dynavec node is a LangGraph node of the same name; the nodes of one dynavec round
  (the batch of ready nodes) run in one LangGraph superstep, in parallel when there are
  several (``max_workers`` is LangGraph's ``max_concurrency``);
- after each round one routing node, ``__flow_dispatch__``, merges the round's results in
  batch order with the state's reducers, writes the traces and evaluates the edges (dynavec's
  dispatch and barrier rules, its per-node ``max_iterations``, the silent stop at
  ``max_steps``); ``__flow_start__`` starts a run. So a round costs two supersteps;
- the graph's state has three channels: ``flow_state`` (the dynavec state's values: the input
  and output), ``flow_result`` (``GraphResult.to_dict()`` once the run ended, an output) and
  the private ``flow_run`` / ``flow_outcomes`` (the run's bookkeeping, JSON only).

So the compiled graph runs with any LangGraph checkpointer, in ``langgraph dev`` and as a node
of another graph, and LangGraph's ``interrupt()`` (or this package's
:func:`~dynavec_langgraph.interrupt.interrupt`) inside a node pauses it: the run stops with the
interrupt, and ``Command(resume=decision)`` (or :meth:`AgentGraph.resume`) re-runs that node,
whose ``interrupt()`` then returns the decision, and carries on. Node exceptions are captured
in the result as dynavec does; LangGraph's interrupt exceptions never are.

Reducers are Python functions and are not stored in checkpoints: a run gets them from the
start state (:meth:`AgentGraph.run`), from ``compile(reducers=...)``, or, when resuming,
from ``resume(reducers=...)``.
"""

from __future__ import annotations

import ast
import itertools
import operator
import re
import time
import uuid
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, TypedDict, cast

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.errors import GraphBubbleUp, is_invalid_resume
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command, Interrupt, StateSnapshot

from dynavec_langgraph._errors import (
    CheckpointerConfigError,
    InvalidDecisionError,
    NothingToResumeError,
    ThreadPausedError,
    no_decision_text,
    not_paused_text,
)
from dynavec_langgraph.interrupt import interrupt_fields

__all__ = [
    "AgentGraph",
    "AgentState",
    "BaseNode",
    "Edge",
    "FlowGraph",
    "FlowState",
    "FunctionNode",
    "GraphCycleError",
    "GraphError",
    "GraphResult",
    "GraphState",
    "GraphValidationError",
    "MaxIterationsExceededError",
    "NodeTrace",
    "ReducerFn",
    "append_reducer",
    "default_reducer",
    "safe_eval_expr",
]

ReducerFn = Callable[[Any, Any], Any]
"""A reducer: ``(current, update) -> new value``."""

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
_CONTEXT_KEY = "dynavec_flow_context"
"""``config["configurable"]`` key of the in-process context of one invocation."""


# --- errors -------------------------------------------------------------------------------


class GraphError(Exception):
    """Base class of the graph engine's errors (not a ``DynavecError``, as in dynavec)."""


class GraphValidationError(GraphError):
    """The graph is malformed: no entry, unknown nodes on edges, a duplicate node name."""


class GraphCycleError(GraphError):
    """The graph has a cycle with no exit condition or guard."""


class MaxIterationsExceededError(GraphError):
    """A node was visited more than ``max_iterations`` times in one run."""


# --- reducers and state -------------------------------------------------------------------


def default_reducer(current: Any, update: Any) -> Any:
    """The update replaces the current value.

    Example:
        >>> default_reducer([1], [2])
        [2]
    """
    del current
    return update


def append_reducer(current: Any, update: Any) -> Any:
    """Collect values into a list.

    Example:
        >>> append_reducer(None, (1, 2)), append_reducer([1], [2]), append_reducer([1], 2)
        ([1, 2], [1, 2], [1, 2])
        >>> append_reducer("a", "b")
        ['a', 'b']
    """
    if current is None:
        return list(update) if isinstance(update, list | tuple) else [update]
    if isinstance(current, list):
        return current + update if isinstance(update, list) else [*current, update]
    return [current, update]


class GraphState(dict[str, Any]):
    """A dynavec graph's state: a ``dict`` with a reducer per key.

    Example:
        >>> s = GraphState({"items": ["a"]}, reducers={"items": append_reducer})
        >>> s.merge({"items": ["b"], "n": 1}) == {"items": ["a", "b"], "n": 1}
        True
    """

    def __init__(
        self,
        initial: Mapping[str, Any] | None = None,
        *,
        reducers: Mapping[str, ReducerFn] | None = None,
    ) -> None:
        super().__init__(initial or {})
        self.reducers: dict[str, ReducerFn] = dict(reducers or {})
        """The live reducer map (key -> reducer)."""

    def register_reducer(self, key: str, fn: ReducerFn) -> GraphState:
        """Merge updates of ``key`` with ``fn``; returns ``self``."""
        self.reducers[key] = fn
        return self

    def set(self, key: str, value: Any) -> GraphState:
        """``self[key] = value``; returns ``self``."""
        self[key] = value
        return self

    def copy(self) -> GraphState:
        """A shallow copy: a new state with the same values and a copy of the reducer map."""
        return GraphState(self, reducers=self.reducers)

    def merge(self, updates: Mapping[str, Any]) -> GraphState:
        """Apply ``updates``: a key already present that has a reducer gets
        ``reducer(current, value)``, any other key is set. Returns ``self``."""
        for key, value in updates.items():
            reducer = self.reducers.get(key)
            if key in self and reducer is not None:
                self[key] = reducer(self[key], value)
            else:
                self[key] = value
        return self


# --- nodes and edges ----------------------------------------------------------------------


class BaseNode(ABC):
    """A graph node: implement :meth:`execute`.

    ``execute`` returns a ``dict`` of updates (merged with the reducers), a
    :class:`GraphState` (which becomes the state) or ``None`` (the state as the node left it).
    """

    node_type: str = "base"

    def __init__(self, name: str = "") -> None:
        self.name = name

    @abstractmethod
    def execute(self, state: GraphState) -> GraphState | dict[str, Any] | None:
        """Run the node on ``state``."""

    def to_dict(self) -> dict[str, Any]:
        """``{"name", "type"}``."""
        return {"name": self.name, "type": self.node_type}


class FunctionNode(BaseNode):
    """A node running ``fn(state)``; the name defaults to the function's."""

    node_type = "function"

    def __init__(self, fn: Callable[[GraphState], Any], name: str = "") -> None:
        super().__init__(name=name or getattr(fn, "__name__", "") or "fn")
        self.fn = fn

    def execute(self, state: GraphState) -> Any:
        """``fn(state)``."""
        return self.fn(state)


Condition = Callable[[GraphState], Any] | str | None


@dataclass
class Edge:
    """An edge; ``condition`` is ``None`` (always), a callable of the state or a condition
    string (:func:`safe_eval_expr`)."""

    source: str
    target: str
    condition: Condition = None
    label: str = ""

    def evaluate(self, state: Mapping[str, Any]) -> bool:
        """Whether the edge is taken for ``state``."""
        if self.condition is None:
            return True
        if isinstance(self.condition, str):
            return safe_eval_expr(self.condition, state)
        if callable(self.condition):
            return bool(self.condition(cast(GraphState, state)))
        raise TypeError(
            f"Edge {self.source!r} -> {self.target!r}: condition {self.condition!r} is neither "
            "None, a callable of the state nor a condition string"
        )

    def is_conditional(self) -> bool:
        """Whether the edge has a condition."""
        return self.condition is not None

    def to_dict(self) -> dict[str, Any]:
        """``{"source", "target"}`` plus ``label`` (when set) and ``condition`` (when set)."""
        out: dict[str, Any] = {"source": self.source, "target": self.target}
        if self.label:
            out["label"] = self.label
        if isinstance(self.condition, str):
            out["condition"] = self.condition
        elif self.condition is not None:
            out["condition"] = f"<callable:{getattr(self.condition, '__name__', 'condition')}>"
        return out


# --- the condition language ---------------------------------------------------------------

_LEAF = re.compile(
    r"^(?P<field>[\w][\w.]*)\s*(?P<op>==|!=|>=|<=|>|<|\s+not\s+in\s+|\s+in\s+)\s*(?P<value>.+)$",
    re.DOTALL,
)
_ORDERING: dict[str, Callable[[Any, Any], bool]] = {
    ">=": operator.ge,
    "<=": operator.le,
    ">": operator.gt,
    "<": operator.lt,
}


def _read_field(state: Any, path: str) -> Any:
    value = state
    for part in path.split("."):
        if value is None:
            return None
        value = value.get(part) if isinstance(value, dict) else getattr(value, part, None)
    return value


def safe_eval_expr(expr: str, state: Mapping[str, Any]) -> bool:
    """Evaluate a condition string on ``state`` without ``eval``.

    ``FIELD OP VALUE`` leaves (``FIELD`` a dotted path, ``OP`` one of ``== != >= <= > < in``
    and ``not in``, ``VALUE`` a Python literal) joined by ``and`` / ``or`` (``or`` binds
    loosest; no parentheses, no ``not``). Ordering operators are false on a missing field.

    Example:
        >>> state = {"count": 1, "user": {"role": "admin"}}
        >>> safe_eval_expr("count < 3 and user.role == 'admin'", state)
        True
        >>> safe_eval_expr("missing > 1 or tag in ['a', 'b']", {"tag": "b"})
        True

    Raises:
        ValueError: a part that is not ``FIELD OP VALUE``, or a value that is no literal.
    """
    text = expr.strip()
    if " or " in text:
        left, right = text.split(" or ", 1)
        return safe_eval_expr(left, state) or safe_eval_expr(right, state)
    if " and " in text:
        left, right = text.split(" and ", 1)
        return safe_eval_expr(left, state) and safe_eval_expr(right, state)
    match = _LEAF.match(text)
    if match is None:
        raise ValueError(f"Cannot parse condition expression: {text!r}")
    op = " ".join(match["op"].split())
    raw = match["value"].strip()
    try:
        value = ast.literal_eval(raw)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        raise ValueError(f"Cannot parse value {raw!r} in expression: {text!r}") from None
    current = _read_field(state, match["field"])
    if op == "==":
        return bool(current == value)
    if op == "!=":
        return bool(current != value)
    if op == "in":
        return bool(current in value)
    if op == "not in":
        return bool(current not in value)
    if current is None:
        return False
    return bool(_ORDERING[op](current, value))


# --- results ------------------------------------------------------------------------------


@dataclass
class NodeTrace:
    """One node execution: times are ``time.perf_counter()`` values, the key lists are the
    state's keys before and after (after an error both are the keys before)."""

    node_name: str
    node_type: str
    started_at: float
    ended_at: float
    duration_ms: float
    input_keys: list[str] = field(default_factory=list)
    output_keys: list[str] = field(default_factory=list)
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The trace without its times, ``duration_ms`` rounded to 3 places."""
        return {
            "node_name": self.node_name,
            "node_type": self.node_type,
            "duration_ms": round(self.duration_ms, 3),
            "input_keys": list(self.input_keys),
            "output_keys": list(self.output_keys),
            "error": self.error,
        }


@dataclass
class GraphResult:
    """What :meth:`AgentGraph.run` returns.

    ``success`` means the run ended with no error anywhere. A paused run (a node called
    ``interrupt()``) has ``success=False``, ``error=None`` and ``interrupt_payload`` set
    (``thread_id``, ``node``: the paused graph node, ``node_id`` / ``payload``: what
    ``interrupt()`` was given, ``interrupt_id``); :meth:`AgentGraph.resume` carries it on.
    """

    state: GraphState
    trace: list[NodeTrace] = field(default_factory=list)
    nodes_executed: int = 0
    total_ms: float = 0.0
    graph_name: str = ""
    success: bool = True
    error: str | None = None
    interrupt_payload: dict[str, Any] | None = None
    thread_id: str | None = None

    @property
    def output(self) -> GraphState:
        """The final state."""
        return self.state

    @property
    def interrupted(self) -> bool:
        """Whether the run is paused at an ``interrupt()``."""
        return self.interrupt_payload is not None

    def to_dict(self) -> dict[str, Any]:
        """``{graph_name, success, total_ms, nodes_executed, trace, state, error}`` (plus
        ``interrupt_payload`` when paused)."""
        out: dict[str, Any] = {
            "graph_name": self.graph_name,
            "success": self.success,
            "total_ms": round(self.total_ms, 3),
            "nodes_executed": self.nodes_executed,
            "trace": [t.to_dict() for t in self.trace],
            "state": dict(self.state),
            "error": self.error,
        }
        if self.interrupt_payload is not None:
            out["interrupt_payload"] = self.interrupt_payload
        return out


# --- the run's bookkeeping (JSON, in the flow_run channel) ----------------------------------


class _Outcome(TypedDict):
    """What one node task writes: its trace and what it returned."""

    node: str
    index: int
    kind: str  # "state" | "update" | "none" | "error"
    values: dict[str, Any]  # the state the node ran on, as it left it (or the returned one)
    update: dict[str, Any]
    trace: dict[str, Any]


def _collect(current: list[_Outcome] | None, update: list[_Outcome] | None) -> list[_Outcome]:
    """``flow_outcomes`` reducer: the round's outcomes; ``None`` clears."""
    return [] if update is None else [*(current or []), *update]


class FlowChannels(TypedDict, total=False):
    """The compiled graph's state."""

    flow_state: dict[str, Any]
    flow_result: dict[str, Any] | None
    flow_run: dict[str, Any]
    flow_outcomes: Annotated[list[_Outcome], _collect]


class FlowInput(TypedDict):
    """The compiled graph's input: the start state's values."""

    flow_state: dict[str, Any]


class FlowOutput(TypedDict, total=False):
    """The compiled graph's output: the state's values and the result."""

    flow_state: dict[str, Any]
    flow_result: dict[str, Any] | None


@dataclass
class _Context:
    """One invocation's in-process part (``config["configurable"]``): what JSON cannot hold."""

    reducers: dict[str, ReducerFn] | None = None
    max_steps: int | None = None
    returned: dict[str, dict[str, ReducerFn]] = field(default_factory=dict)
    """Reducers of a ``GraphState`` a node returned, by node name (this round)."""


def _context(config: RunnableConfig) -> _Context:
    found = (config.get("configurable") or {}).get(_CONTEXT_KEY)
    return found if isinstance(found, _Context) else _Context()


def _trace_from(data: Mapping[str, Any]) -> NodeTrace:
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
    node: BaseNode, started: float, ended: float, before: list[str], after: list[str], error: Any
) -> dict[str, Any]:
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


def _run_node(node: BaseNode, state: GraphState, index: int, ctx: _Context) -> _Outcome:
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
class _Spec:
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

    def reducers_for(self, ctx: _Context) -> dict[str, ReducerFn]:
        return dict(self.reducers if ctx.reducers is None else ctx.reducers)

    # --- LangGraph nodes ------------------------------------------------------------------

    def start(self, state: FlowChannels, config: RunnableConfig) -> dict[str, Any]:
        """``__flow_start__``: a new run on the input state; the entry is the first round."""
        ctx = _context(config)
        run: dict[str, Any] = {
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

    def dispatch(self, state: FlowChannels, config: RunnableConfig) -> dict[str, Any]:
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
        self, outcome: _Outcome, state: GraphState, ctx: _Context, single: bool
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

    def _dispatch_edges(self, source: str, state: GraphState, run: dict[str, Any]) -> None:
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
        run: dict[str, Any],
        state: dict[str, Any],
        reducers: Mapping[str, ReducerFn] | None = None,
    ) -> dict[str, Any]:
        update: dict[str, Any] = {STATE_KEY: state, OUTCOMES_KEY: None}
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

    def __init__(self, spec: _Spec, node: BaseNode) -> None:
        self.spec = spec
        self.node = node
        self.__name__ = node.name

    def __call__(self, state: FlowChannels, config: RunnableConfig) -> dict[str, Any]:
        ctx = _context(config)
        batch = state["flow_run"]["batch"]
        live = GraphState(state.get("flow_state") or {}, reducers=self.spec.reducers_for(ctx))
        # a batch of one runs on the live state, several each on their own copy: both are
        # a new GraphState over the channel's values (a shallow copy), as in dynavec
        return {OUTCOMES_KEY: [_run_node(self.node, live, batch.index(self.node.name), ctx)]}


def _copy_run(run: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(run)
    for key in ("queue", "batch", "trace", "reducer_keys"):
        out[key] = list(run[key])
    for key in ("visits", "arrivals"):
        out[key] = dict(run[key])
    return out


def _result_dict(run: Mapping[str, Any], state: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "graph_name": run["graph_name"],
        "success": run["error"] is None,
        "total_ms": round((time.time() - run["started"]) * 1000.0, 3),
        "nodes_executed": run["executed"],
        "trace": [_trace_from(t).to_dict() for t in run["trace"]],
        "state": dict(state),
        "error": run["error"],
    }


# --- the builder --------------------------------------------------------------------------


def _check_positive(name: str, value: Any) -> int:
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
        checkpointer: Any = None,
    ) -> None:
        self.name = name
        self.description = description
        self.max_iterations = _check_positive("max_iterations", max_iterations)
        if checkpointer is not None and not isinstance(checkpointer, BaseCheckpointSaver):
            raise CheckpointerConfigError(
                f"checkpointer={checkpointer!r:.80}: pass a LangGraph saver (SqliteSaver, "
                "PostgresSaver, InMemorySaver, ...) or None"
            )
        self.checkpointer = checkpointer
        self._in_process: dict[str, InMemorySaver] = {}
        """The in-process saver of each paused (or running) run that has no checkpointer."""
        self._nodes: dict[str, BaseNode] = {}
        self._edges: list[Edge] = []
        self._barriers: list[str] = []
        self._entry: str | None = None
        self._paused_reducers: dict[str, dict[str, ReducerFn]] = {}
        """The reducers of this object's paused runs, by thread (they are not stored)."""

    # --- building -------------------------------------------------------------------------

    def add_node(self, name: str, node: BaseNode | Callable[[GraphState], Any]) -> AgentGraph:
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
        router: Callable[[GraphState], Any] | Mapping[str, str],
        *,
        branches: Mapping[Any, str] | None = None,
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

    def to_dict(self) -> dict[str, Any]:
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

    def _spec(self, reducers: Mapping[str, ReducerFn] | None, max_steps: int) -> _Spec:
        self._check()
        assert self._entry is not None
        inbound: dict[str, int] = {}
        for edge in self._edges:
            inbound[edge.target] = inbound.get(edge.target, 0) + 1
        barriers = set(self._barriers) | {n for n, count in inbound.items() if count > 1}
        return _Spec(
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
        checkpointer: Any = None,
        *,
        reducers: Mapping[str, ReducerFn] | None = None,
        max_steps: int = 100,
        max_workers: int = 4,
        **compile_kwargs: Any,
    ) -> CompiledStateGraph[Any, Any, Any, Any]:
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
        builder: StateGraph[Any, Any, Any, Any] = StateGraph(
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

    def _new_saver(self, thread_id: str | None) -> tuple[str, Any]:
        """The thread and saver of a new run: the checkpointer for a named thread, else an
        in-process saver of its own, which keeps the state's objects as they are (no
        serialisation: a dynavec state may hold any Python object) and is dropped when the
        run ends unpaused."""
        if thread_id is not None and self.checkpointer is not None:
            return thread_id, self.checkpointer
        tid = thread_id or uuid.uuid4().hex
        saver = InMemorySaver(serde=_InProcessSerde())
        self._in_process[tid] = saver
        return tid, saver

    def _config(
        self, thread_id: str, ctx: _Context, max_steps: int, max_workers: int
    ) -> RunnableConfig:
        return {
            "configurable": {"thread_id": thread_id, _CONTEXT_KEY: ctx},
            "recursion_limit": _recursion_limit(max_steps),
            "max_concurrency": max_workers,
        }

    def run(
        self,
        initial_state: GraphState | Mapping[str, Any] | None = None,
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
        ctx = _Context(reducers=dict(start.reducers), max_steps=steps)
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
        human_decision: Any,
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
        ctx = _Context(reducers=chosen, max_steps=steps)
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
        compiled: CompiledStateGraph[Any, Any, Any, Any],
        config: RunnableConfig,
        thread_id: str,
        ctx: _Context,
    ) -> GraphResult:
        snapshot = compiled.get_state(config)
        values = snapshot.values
        run = values.get(RUN_KEY) or {}
        reducers = ctx.reducers if ctx.reducers is not None else {}
        state = GraphState(values.get(STATE_KEY) or {}, reducers=reducers)
        result = GraphResult(
            state=state,
            trace=[_trace_from(t) for t in run.get("trace", [])],
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


class _InProcessSerde(SerializerProtocol):
    """The serializer of a run's in-process saver: plain data (what LangGraph itself writes:
    checkpoints, metadata, JSON state) goes through LangGraph's serializer, so every load is
    a fresh object, as LangGraph expects; anything else is kept by reference, so a state may
    hold what no serializer can store (clients, locks, functions), as in dynavec."""

    def __init__(self) -> None:
        self._plain = JsonPlusSerializer()
        self._objects: dict[bytes, Any] = {}
        self._ids = itertools.count()

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        if _is_plain(obj):
            return self._plain.dumps_typed(obj)
        key = str(next(self._ids)).encode()
        self._objects[key] = obj
        return "in-process", key

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        if data[0] == "in-process":
            return self._objects[data[1]]
        return self._plain.loads_typed(data)


def _is_plain(value: Any, depth: int = 0) -> bool:
    if value is None or isinstance(value, bool | int | float | str | bytes):
        return True
    if depth > 50:
        return False
    if type(value) is list:
        return all(_is_plain(v, depth + 1) for v in value)
    if type(value) is dict:
        return all(isinstance(k, str) and _is_plain(v, depth + 1) for k, v in value.items())
    return False


def _router_condition(router: Callable[[GraphState], Any], key: Any) -> Callable[[Any], bool]:
    def condition(state: Any) -> bool:
        result = router(state)
        return key in result if isinstance(result, list) else bool(result == key)

    condition.__name__ = getattr(router, "__name__", "router")
    return condition


def _recursion_limit(max_steps: int) -> int:
    return 2 * max_steps + 4


def _pause(snapshot: StateSnapshot, thread_id: str) -> dict[str, Any]:
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
