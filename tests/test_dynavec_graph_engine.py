"""dynavec's graph engine (``dynavec.agents.graph``), tested the way a dynavec user's tests are:
plain dynavec code on ``AgentGraph``, ``GraphState`` and the rest. One test per row G* of
docs/compatibility.md; the LangGraph faces (a compiled ``StateGraph``, a node of another graph,
``interrupt()`` with a SQLite file checkpointer, ``langgraph.json``) at the end.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any, TypedDict

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command

from dynavec_langgraph import (
    CheckpointerConfigError,
    DynavecError,
    InvalidDecisionError,
    NothingToResumeError,
    ThreadPausedError,
)
from dynavec_langgraph.agents.graph import (
    AgentGraph,
    AgentState,
    BaseNode,
    Edge,
    FlowGraph,
    FlowState,
    FunctionNode,
    GraphCycleError,
    GraphError,
    GraphResult,
    GraphState,
    GraphValidationError,
    MaxIterationsExceededError,
    NodeTrace,
    append_reducer,
    default_reducer,
    safe_eval_expr,
)
from dynavec_langgraph.interrupt import interrupt

REPO = Path(__file__).resolve().parents[1]


class IncrementNode(BaseNode):
    """Simple node that increments a counter in state."""

    node_type = "increment"

    def __init__(self, key: str = "count", amount: int = 1, name: str = "") -> None:
        super().__init__(name=name)
        self.key = key
        self.amount = amount

    def execute(self, state: GraphState) -> dict[str, Any]:
        return {self.key: state.get(self.key, 0) + self.amount}


def _names(result: GraphResult) -> list[str]:
    return [t.node_name for t in result.trace]


# --- records ------------------------------------------------------------------------------


def test_g1_errors() -> None:
    for error in (GraphValidationError, GraphCycleError, MaxIterationsExceededError):
        assert issubclass(error, GraphError) and not issubclass(error, DynavecError)
    assert GraphError.__bases__ == (Exception,)
    assert FlowGraph is AgentGraph and FlowState is GraphState and AgentState is GraphState


def test_g2_reducers() -> None:
    assert default_reducer([1], [2]) == [2]
    assert append_reducer(None, [1, 2]) == [1, 2] and append_reducer(None, (1,)) == [1]
    assert append_reducer(None, "a") == ["a"]
    current = [1]
    merged = append_reducer(current, [2])
    assert merged == [1, 2] and merged is not current and current == [1]
    assert append_reducer([1], "x") == [1, "x"] and append_reducer([1], (2,)) == [1, (2,)]
    assert append_reducer("a", "b") == ["a", "b"] and append_reducer(1, [2]) == [1, [2]]


def test_g3_graph_state() -> None:
    def add(a: int, b: int) -> int:
        return a + b

    state = GraphState({"items": ["a"], "count": 10}, reducers={"items": append_reducer})
    assert state.register_reducer("count", add) is state and state.set("x", 1) is state
    assert state.reducers == {"items": append_reducer, "count": add}
    state.merge({"items": ["b"], "count": 5, "new": 1})
    assert state == {"items": ["a", "b"], "count": 15, "x": 1, "new": 1}
    # a reducer applies only to a key already present
    fresh = GraphState(reducers={"items": append_reducer}).merge({"items": "first"})
    assert fresh == {"items": "first"}
    # copy is shallow, with a copied reducer map
    clone = state.copy()
    assert isinstance(clone, GraphState) and clone == state and clone is not state
    assert clone["items"] is state["items"]
    clone.register_reducer("x", add)
    assert "x" not in state.reducers
    assert GraphState() == {} and GraphState({"a": 1}) == {"a": 1}


def test_g4_nodes() -> None:
    with pytest.raises(TypeError):
        BaseNode()  # type: ignore[abstract]
    node = IncrementNode(name="inc")
    assert node.to_dict() == {"name": "inc", "type": "increment"}
    assert BaseNode.node_type == "base" and FunctionNode.node_type == "function"

    def clean(state: GraphState) -> dict[str, Any]:
        return {"ok": True}

    assert FunctionNode(clean).name == "clean" and FunctionNode(clean, name="c").name == "c"
    assert FunctionNode(lambda s: s).name == "<lambda>"

    class Callable:
        def __call__(self, state: GraphState) -> None:
            return None

    assert FunctionNode(Callable()).name == "fn"
    assert FunctionNode(clean).execute(GraphState()) == {"ok": True}
    assert FunctionNode(clean).to_dict() == {"name": "clean", "type": "function"}


def test_g5_edges() -> None:
    state = GraphState({"n": 3})
    assert Edge("a", "b").evaluate(state) is True and not Edge("a", "b").is_conditional()
    assert Edge("a", "b", condition=lambda s: s["n"]).evaluate(state) is True
    assert Edge("a", "b", condition="n > 5").evaluate(state) is False
    with pytest.raises(TypeError):
        Edge("a", "b", condition=42).evaluate(state)  # type: ignore[arg-type]

    def is_big(s: GraphState) -> bool:
        return bool(s["n"] > 2)

    assert Edge("a", "b").to_dict() == {"source": "a", "target": "b"}
    assert Edge("a", "b", condition="n > 1", label="big").to_dict() == {
        "source": "a",
        "target": "b",
        "label": "big",
        "condition": "n > 1",
    }
    assert Edge("a", "b", condition=is_big).to_dict()["condition"] == "<callable:is_big>"
    assert Edge("a", "b", condition=is_big).is_conditional()


def test_g6_condition_language() -> None:
    class User:
        role = "admin"

    state = {"count": 2, "user": User(), "meta": {"tier": "gold"}, "tags": ["a"], "none": None}
    assert safe_eval_expr("  count == 2  ", state)
    assert safe_eval_expr("user.role == 'admin'", state)  # getattr on objects
    assert safe_eval_expr("meta.tier != 'silver'", state)
    assert safe_eval_expr("count >= 2 and count <= 2 and count < 3 and count > 1", state)
    assert safe_eval_expr("meta.tier in ['gold', 'platinum']", state)
    assert safe_eval_expr("count not in [1, 3]", state)
    assert not safe_eval_expr("missing.path == 1", state)
    assert safe_eval_expr("missing == None", state)
    # ordering operators are false on a missing (None) field
    assert not safe_eval_expr("missing > 0", state) and not safe_eval_expr("none < 1", state)
    # or binds loosest: "a and b or c" is "a and (b or c)"? no: split at the first " or "
    assert safe_eval_expr("count == 9 and count == 9 or count == 2", state)
    assert safe_eval_expr("count == 2 or boom", state)
    with pytest.raises(ValueError, match="Cannot parse condition expression: 'boom'"):
        safe_eval_expr("count == 3 or boom", state)
    with pytest.raises(ValueError, match="Cannot parse value 'nope' in expression: "):
        safe_eval_expr("count == nope", state)
    with pytest.raises(ValueError, match="Cannot parse condition expression"):
        safe_eval_expr("not count == 2", state)
    # [QUIRK] raised while edges are dispatched: out of run(), not into the result
    graph = (
        AgentGraph("bad-condition")
        .add_node("a", lambda s: {"x": 1})
        .add_node("b", lambda s: None)
        .add_edge("a", "b", condition="x === 1")
        .set_entry("a")
    )
    with pytest.raises(ValueError, match="Cannot parse"):
        graph.run()


# --- building and validating ----------------------------------------------------------------


def test_g7_builder() -> None:
    graph = AgentGraph()
    assert (graph.name, graph.description, graph.max_iterations) == ("dynaflow-graph", "", 25)
    node = IncrementNode(name="old")
    assert graph.add_node("inc", node) is graph and node.name == "inc"
    with pytest.raises(TypeError, match="Expected BaseNode or callable, got <class 'int'>"):
        graph.add_node("x", 3)  # type: ignore[arg-type]
    with pytest.raises(GraphValidationError, match="Duplicate node name: 'inc'"):
        graph.add_node("inc", lambda s: None)
    with pytest.raises(GraphValidationError, match="Entry node 'nope' not found in registered"):
        graph.set_entry("nope")
    calls: Counter[str] = Counter()

    def router(state: GraphState) -> Any:
        calls["router"] += 1
        return state.get("route")

    graph.add_node("a", lambda s: None).add_node("b", lambda s: None).add_node("c", lambda s: None)
    graph.add_edge("unknown", "a")  # nothing is checked before validate()
    assert graph.add_conditional_edges("inc", router, branches={"A": "a", 2: "b"}) is graph
    labels = [(e.target, e.label) for e in graph.edges if e.source == "inc"]
    assert labels == [("a", "A"), ("b", "2")]
    edge_a, edge_b = (e for e in graph.edges if e.source == "inc")
    assert edge_a.evaluate(GraphState({"route": "A"})) and not edge_b.evaluate({"route": "A"})
    assert edge_b.evaluate(GraphState({"route": [2, "x"]}))  # a list result: membership
    assert calls["router"] == 3  # once per edge evaluation
    with pytest.raises(GraphValidationError, match=r"requires the 'branches' mapping\."):
        graph.add_conditional_edges("inc", router)
    graph.add_conditional_edges("a", {"count > 1": "b", "count <= 1": "c"})
    assert [(e.target, e.condition) for e in graph.edges if e.source == "a"] == [
        ("b", "count > 1"),
        ("c", "count <= 1"),
    ]
    with pytest.raises(TypeError, match="Router mapping keys must be string condition"):
        graph.add_conditional_edges("a", {1: "b"})  # type: ignore[dict-item]
    before = len(graph.edges)
    graph.add_conditional_edges("a", 42)  # type: ignore[arg-type]
    assert len(graph.edges) == before
    graph.edges.clear()  # a copy
    assert len(graph.edges) == before
    assert graph.node_names == ["inc", "a", "b", "c"]
    parallel = AgentGraph("p").add_node("s", lambda s: None)
    for n in ("x", "y", "j"):
        parallel.add_node(n, lambda s: None)
    parallel.add_parallel_branches("s", ["x", "y"], join_at="j").set_entry("s")
    assert [(e.source, e.target) for e in parallel.edges] == [
        ("s", "x"),
        ("s", "y"),
        ("x", "j"),
        ("y", "j"),
    ]
    assert parallel.register_join_barrier("j") is parallel


def test_g7_to_dict() -> None:
    graph = (
        AgentGraph("serialize-test", description="Demo workflow", max_iterations=7)
        .add_node("fetch", lambda s: s)
        .add_node("format", IncrementNode())
        .add_edge("fetch", "format", condition="ready == True", label="on-ready")
        .set_entry("fetch")
    )
    assert graph.to_dict() == {
        "name": "serialize-test",
        "description": "Demo workflow",
        "entry": "fetch",
        "max_iterations": 7,
        "nodes": {
            "fetch": {"name": "fetch", "type": "function"},
            "format": {"name": "format", "type": "increment"},
        },
        "edges": [
            {
                "source": "fetch",
                "target": "format",
                "label": "on-ready",
                "condition": "ready == True",
            }
        ],
    }
    json.dumps(graph.to_dict())


def test_g8_validate() -> None:
    graph = AgentGraph("v").add_node("n1", lambda s: s)
    assert graph.validate() == ["No entry node set (call set_entry())"]
    graph.set_entry("n1").add_edge("ghost", "n1").add_edge("n1", "missing")
    graph.add_edge("n1", "n1")  # an unguarded cycle, not reported while there are errors
    assert graph.validate() == ["Edge source 'ghost' not found", "Edge target 'missing' not found"]
    cyc = (
        AgentGraph("c")
        .add_node("node_a", lambda s: s)
        .add_node("node_b", lambda s: s)
        .add_edge("node_a", "node_b")
        .add_edge("node_b", "node_a")
        .set_entry("node_a")
    )
    assert cyc.validate() == [
        "Malformed infinite cycle detected: node_a -> node_b -> node_a with no exit "
        "condition or guard."
    ]
    # guarded: a conditional edge in the cycle, or an edge leaving it
    cyc.add_node("out", lambda s: s).add_edge("node_b", "out")
    assert cyc.validate() == []
    loop = AgentGraph("l").add_node("step", lambda s: s).set_entry("step")
    assert loop.add_edge("step", "step", condition="count < 3").validate() == []
    assert AgentGraph("u").add_node("s", lambda s: s).set_entry("s").add_edge("s", "s").validate()


def test_g9_run_raises_on_a_malformed_graph() -> None:
    graph = AgentGraph("invalid-graph")
    graph.add_node("n1", lambda s: s)
    with pytest.raises(GraphValidationError, match=r"^No entry node set \(call set_entry\(\)\)$"):
        graph.run()
    graph.set_entry("n1")
    graph.add_edge("n1", "missing_node").add_edge("ghost", "n1")
    with pytest.raises(GraphValidationError) as error:
        graph.run()
    assert str(error.value) == "Edge target 'missing_node' not found; Edge source 'ghost' not found"
    cyc = (
        AgentGraph("c")
        .add_node("a", lambda s: s)
        .add_node("b", lambda s: s)
        .add_edge("a", "b")
        .add_edge("b", "a")
        .set_entry("a")
    )
    with pytest.raises(GraphCycleError, match="Malformed infinite cycle detected: a -> b -> a"):
        cyc.run()


# --- running ------------------------------------------------------------------------------


def test_g10_linear_run_and_start_state() -> None:
    def step1(state: GraphState) -> dict[str, Any]:
        return {"query": state["query"].strip().lower()}

    def step2(state: GraphState) -> dict[str, Any]:
        return {"tokens": state["query"].split()}

    def step3(state: GraphState) -> dict[str, Any]:
        return {"token_count": len(state["tokens"])}

    graph = (
        AgentGraph("test-linear")
        .add_node("clean", step1)
        .add_node("tokenize", step2)
        .add_node("count", step3)
        .add_edge("clean", "tokenize")
        .add_edge("tokenize", "count")
        .set_entry("clean")
    )
    result = graph.run({"query": "  Dynavec Vector DB  "})
    assert isinstance(result, GraphResult) and result.success is True and result.error is None
    assert result.nodes_executed == 3 and _names(result) == ["clean", "tokenize", "count"]
    assert result.state == {"query": "dynavec vector db", "tokens": ["dynavec", "vector", "db"],
                            "token_count": 3}  # fmt: skip
    assert result.output is result.state and isinstance(result.state, GraphState)
    # a GraphState is copied (the caller's object is not the run's); None is an empty state
    start = GraphState({"query": " A "})
    assert graph.run(start).state["query"] == "a" and start == {"query": " A "}
    assert AgentGraph("e").add_node("n", lambda s: {"k": 1}).set_entry("n").run().state == {"k": 1}
    # the state holds any Python object, as in dynavec (nothing is serialised)
    lock, client = threading.Lock(), object()
    objects = AgentGraph("o").add_node("a", lambda s: {"lock": lock, "fn": len})
    objects.add_node("b", lambda s: {"n": s["fn"]([s["client"]])}).add_edge("a", "b")
    out = objects.set_entry("a").run({"client": client}).state
    assert out["lock"] is lock and out["client"] is client and out["n"] == 1


def test_g11_batch_of_one_on_the_live_state() -> None:
    state = GraphState(
        {"items": ["a"], "count": 10},
        reducers={"items": append_reducer, "count": lambda a, b: a + b},
    )

    def node_append(s: GraphState) -> dict[str, Any]:
        return {"items": ["b", "c"], "count": 5}

    result = AgentGraph("r").add_node("append", node_append).set_entry("append").run(state)
    assert result.success and result.state == {"items": ["a", "b", "c"], "count": 15}
    assert result.state.reducers.keys() == {"items", "count"}

    def mutate(s: GraphState) -> None:
        s["seen"] = True  # returns None: in-place changes are the new state

    def replace(s: GraphState) -> GraphState:
        return GraphState({"only": 1}, reducers={"only": lambda a, b: a * 10 + b})

    def add_only(s: GraphState) -> dict[str, Any]:
        return {"only": 2}

    graph = (
        AgentGraph("kinds")
        .add_node("mutate", mutate)
        .add_node("replace", replace)
        .add_node("add", add_only)
        .add_edge("mutate", "replace", condition="seen == True")
        .add_edge("replace", "add")
        .set_entry("mutate")
    )
    out = graph.run({"x": 1})
    # the returned GraphState became the state, with its reducers
    assert _names(out) == ["mutate", "replace", "add"] and out.state == {"only": 12}
    assert [t.output_keys for t in out.trace] == [["x", "seen"], ["only"], ["only"]]
    assert [t.input_keys for t in out.trace] == [["x"], ["x", "seen"], ["only"]]

    # a batch of one runs on the live state: a reducer it registers stays
    def register(s: GraphState) -> dict[str, Any]:
        s.register_reducer("tags", append_reducer)
        return {"tags": "b"}

    live = AgentGraph("live").add_node("reg", register).add_node("more", lambda s: {"tags": "c"})
    kept = live.add_edge("reg", "more").set_entry("reg").run({"tags": ["a"]})
    assert kept.state == {"tags": ["a", "b", "c"]} and "tags" in kept.state.reducers
    # a node returning anything else is a captured error
    odd = AgentGraph("odd").add_node("n", lambda s: 42).set_entry("n").run()
    assert (
        odd.error == "TypeError: node 'n' returned int; return a dict of updates, a "
        "GraphState or None"
    )


def test_g12_node_exceptions_are_captured() -> None:
    ran: list[str] = []

    def boom(s: GraphState) -> dict[str, Any]:
        raise KeyError("missing")

    graph = (
        AgentGraph("err")
        .add_node("first", lambda s: {"a": 1})
        .add_node("boom", boom)
        .add_node("after", lambda s: ran.append("after"))
        .add_edge("first", "boom")
        .add_edge("boom", "after")
        .set_entry("first")
    )
    result = graph.run({"start": 0})
    assert result.success is False and result.error == "KeyError: 'missing'"
    assert _names(result) == ["first", "boom"] and ran == [] and result.nodes_executed == 2
    failed = result.trace[-1]
    assert failed.error == "KeyError: 'missing'" and failed.output_keys == failed.input_keys
    assert result.state == {"start": 0, "a": 1}
    assert result.to_dict()["error"] == "KeyError: 'missing'"


def test_g13_parallel_branches_fan_out_and_join() -> None:
    threads: set[int] = set()

    def branch_a(s: GraphState) -> dict[str, Any]:
        threads.add(threading.get_ident())
        time.sleep(0.05)
        s["private_a"] = True  # its own copy: branch_b never sees it
        return {"results": ["from_A"]}

    def branch_b(s: GraphState) -> dict[str, Any]:
        threads.add(threading.get_ident())
        time.sleep(0.05)
        return {"results": ["from_B"], "b_saw_a": "private_a" in s}

    def join_node(s: GraphState) -> dict[str, Any]:
        return {"joined": True, "total_results": len(s.get("results", []))}

    def graph(start: GraphState) -> GraphResult:
        return (
            AgentGraph("test-parallel-join")
            .add_node("start", lambda s: {"initialized": True})
            .add_node("branch_a", branch_a)
            .add_node("branch_b", branch_b)
            .add_node("join", join_node)
            .add_parallel_branches("start", ["branch_a", "branch_b"], join_at="join")
            .set_entry("start")
            .run(start)
        )

    started = time.perf_counter()
    result = graph(GraphState({"results": []}, reducers={"results": append_reducer}))
    assert result.success is True and result.state["joined"] is True
    assert sorted(result.state["results"]) == ["from_A", "from_B"]
    assert result.state["total_results"] == 2 and result.state["b_saw_a"] is False
    names = _names(result)
    assert (
        names[0] == "start" and names[-1] == "join" and set(names[1:3]) == {"branch_a", "branch_b"}
    )
    assert len(threads) == 2 and time.perf_counter() - started < 2.0  # in parallel
    # [QUIRK] the whole branch state goes through the reducers: inherited values again
    quirk = graph(GraphState({"results": ["x"]}, reducers={"results": append_reducer}))
    assert quirk.state["results"] == ["x", "x", "from_A", "x", "from_B"]


def test_g13_an_error_in_a_batch_stops_the_run() -> None:
    def bad(s: GraphState) -> None:
        raise RuntimeError("branch failed")

    graph = (
        AgentGraph("batch-error")
        .add_node("s", lambda s: None)
        .add_node("bad", bad)
        .add_node("good", lambda s: {"good": True})
        .add_node("join", lambda s: {"joined": True})
        .add_parallel_branches("s", ["bad", "good"], join_at="join")
        .set_entry("s")
    )
    result = graph.run()
    assert result.success is False and result.error == "RuntimeError: branch failed"
    # results are handled in batch order: "good" (after "bad") is not traced or merged
    assert _names(result) == ["s", "bad"] and "good" not in result.state
    assert result.nodes_executed == 2


def test_g14_dispatch_fan_out_and_barriers() -> None:
    runs: Counter[str] = Counter()

    def node(name: str) -> Any:
        def run(s: GraphState) -> dict[str, Any]:
            runs[name] += 1
            return {name: True}

        return run

    fan = AgentGraph("fan")
    for n in ("s", "a", "b", "c"):
        fan.add_node(n, node(n))
    fan.add_edge("s", "a").add_edge("s", "b", condition="s == True")
    fan.add_edge("s", "c", condition="s == False").set_entry("s")
    result = fan.run()
    assert _names(result) == ["s", "a", "b"] and runs["c"] == 0  # every true edge, in order
    # a barrier (two inbound edges) waits while its source activates another target ...
    runs.clear()
    barrier = AgentGraph("barrier")
    for n in ("s", "a", "j"):
        barrier.add_node(n, node(n))
    barrier.add_edge("s", "a").add_edge("s", "j").add_edge("a", "j").set_entry("s")
    assert _names(barrier.run()) == ["s", "a", "j"] and runs["j"] == 1
    # ... and is queued at once when it is the only target its source activated
    runs.clear()
    direct = AgentGraph("direct")
    for n in ("s", "a", "j"):
        direct.add_node(n, node(n))
    direct.add_edge("s", "j").add_edge("a", "j").set_entry("s")
    assert _names(direct.run()) == ["s", "j"]
    registered = AgentGraph("registered").add_node("s", node("s")).add_node("a", node("a"))
    registered.add_node("j", node("j")).register_join_barrier("j")
    registered.add_edge("s", "a").add_edge("s", "j").add_edge("a", "j").set_entry("s")
    assert _names(registered.run()) == ["s", "a", "j"]


def test_g15_loops_iteration_limit_and_max_steps() -> None:
    graph = (
        AgentGraph("test-loop-termination", max_iterations=10)
        .add_node("init", lambda s: {"count": 0})
        .add_node("step", IncrementNode("count", amount=1, name="step"))
        .add_node("done", lambda s: {"status": "FINISHED"})
        .add_edge("init", "step")
        .add_edge("step", "step", condition="count < 3")
        .add_edge("step", "done", condition="count >= 3")
        .set_entry("init")
    )
    result = graph.run()
    assert result.success and result.state == {"count": 3, "status": "FINISHED"}
    assert _names(result) == ["init", "step", "step", "step", "done"]
    runaway = (
        AgentGraph("test-infinite-loop", max_iterations=5)
        .add_node("step", IncrementNode("count", 1, name="step"))
        .add_node("exit", lambda s: {"done": True})
        .add_edge("step", "step", condition="count < 100")
        .add_edge("step", "exit", condition="count >= 100")
        .set_entry("step")
    )
    with pytest.raises(MaxIterationsExceededError) as error:
        runaway.run({"count": 0})
    assert str(error.value) == "Loop iteration limit (5) exceeded on node 'step'"
    # max_steps: a silent stop, success=True [QUIRK]
    capped = runaway.run({"count": 0}, max_steps=3)
    assert capped.success is True and capped.error is None
    assert capped.nodes_executed == 3 and capped.state["count"] == 3
    big = AgentGraph("big", max_iterations=200).add_node("step", IncrementNode(name="step"))
    big.add_edge("step", "step", condition="count < 150").set_entry("step")
    assert big.run({"count": 0}, max_steps=150).state["count"] == 150  # no recursion limit hit
    with pytest.raises(ValueError, match="max_steps=0"):
        graph.run(max_steps=0)


def test_g16_results_and_traces() -> None:
    graph = (
        AgentGraph("results")
        .add_node("start", lambda s: {"n": 1})
        .add_node("a", lambda s: {"a": 1})
        .add_node("b", lambda s: {"b": 1})
        .add_node("join", lambda s: {"j": 1})
        .add_parallel_branches("start", ["a", "b"], join_at="join")
        .set_entry("start")
    )
    result = graph.run(max_workers=1)
    names = _names(result)
    assert names[0] == "start" and set(names[1:3]) == {"a", "b"} and names[3] == "join"
    trace = result.trace[0]
    assert isinstance(trace, NodeTrace) and trace.node_type == "function"
    assert trace.ended_at >= trace.started_at and trace.duration_ms >= 0
    assert trace.to_dict() == {
        "node_name": "start",
        "node_type": "function",
        "duration_ms": round(trace.duration_ms, 3),
        "input_keys": [],
        "output_keys": ["n"],
        "error": None,
    }
    d = result.to_dict()
    assert list(d) == ["graph_name", "success", "total_ms", "nodes_executed", "trace", "state",
                       "error"]  # fmt: skip
    assert d["graph_name"] == "results" and d["nodes_executed"] == 4 and d["total_ms"] > 0
    assert d["state"] == {"n": 1, "a": 1, "b": 1, "j": 1} and type(d["state"]) is dict
    json.dumps(d)
    empty = GraphResult(GraphState())
    assert (empty.trace, empty.nodes_executed, empty.total_ms, empty.success) == ([], 0, 0.0, True)
    assert not hasattr(AgentGraph, "arun")  # no async API, as in dynavec


# --- the LangGraph faces --------------------------------------------------------------------


def _pay_graph(checkpointer: Any = None, runs: Counter[str] | None = None) -> AgentGraph:
    runs = runs if runs is not None else Counter()

    def prepare(s: GraphState) -> dict[str, Any]:
        runs["prepare"] += 1
        return {"amount": 120, "log": ["prepare"]}

    def approve(s: GraphState) -> dict[str, Any]:
        runs["approve"] += 1
        decision = interrupt("approve_transfer", {"amount": s["amount"]})
        return {"decision": decision, "log": ["approve"]}

    def pay(s: GraphState) -> dict[str, Any]:
        runs["pay"] += 1
        return {"paid": s["decision"] == "approved", "log": ["pay"]}

    return (
        AgentGraph("pay", checkpointer=checkpointer)
        .add_node("prepare", prepare)
        .add_node("approve", approve)
        .add_node("pay", pay)
        .add_edge("prepare", "approve")
        .add_edge("approve", "pay")
        .set_entry("prepare")
    )


def test_g17_a_dynavec_graph_is_a_compiled_langgraph_graph() -> None:
    graph = (
        AgentGraph("compiled")
        .add_node("double", lambda s: {"n": s["n"] * 2})
        .add_node("big", lambda s: {"size": "big"})
        .add_node("small", lambda s: {"size": "small"})
        .add_edge("double", "big", condition="n > 5")
        .add_edge("double", "small", condition="n <= 5")
        .set_entry("double")
    )
    compiled = graph.compile()
    assert isinstance(compiled, CompiledStateGraph) and compiled.name == "compiled"
    assert {"double", "big", "small"} <= set(compiled.get_graph().nodes)
    out = compiled.invoke({"flow_state": {"n": 4}})
    assert out["flow_state"] == {"n": 8, "size": "big"}
    expected = graph.run({"n": 4}).to_dict()
    for d in (expected, out["flow_result"]):
        d.pop("total_ms")
        for t in d["trace"]:
            t.pop("duration_ms")
    assert out["flow_result"] == expected
    # LangGraph's streaming names the dynavec nodes
    updates = [next(iter(u)) for u in compiled.stream({"flow_state": {"n": 1}})]
    assert [u for u in updates if not u.startswith("__flow")] == ["double", "small"]
    # the async face of the compiled graph (dynavec itself has none)
    aout = asyncio.run(compiled.ainvoke({"flow_state": {"n": 1}}))
    assert aout["flow_state"] == {"n": 2, "size": "small"}
    # reducers for a plain dict input come from compile(); a reserved node name is refused
    summing = AgentGraph("s").add_node("add", lambda s: {"total": 5}).set_entry("add")
    merged = summing.compile(reducers={"total": lambda a, b: a + b})
    assert merged.invoke({"flow_state": {"total": 1}})["flow_state"] == {"total": 6}
    for reserved in ("flow_state", "__end__", "a|b"):
        with pytest.raises(GraphValidationError, match="rename the node"):
            AgentGraph("r").add_node(reserved, lambda s: None).set_entry(reserved).compile()


def test_g18_interrupt_pauses_and_resumes_with_a_sqlite_file(tmp_path: Path) -> None:
    db = str(tmp_path / "flow.sqlite")
    runs: Counter[str] = Counter()
    start = GraphState({"log": []}, reducers={"log": append_reducer})
    with SqliteSaver.from_conn_string(db) as saver:
        paused = _pay_graph(saver, runs).run(start, thread_id="t1")
    assert paused.interrupted and paused.success is False and paused.error is None
    assert paused.interrupt_payload == {
        "thread_id": "t1",
        "node": "approve",
        "node_id": "approve_transfer",
        "payload": {"amount": 120},
        "interrupt_id": paused.interrupt_payload["interrupt_id"],  # type: ignore[index]
    }
    assert _names(paused) == ["prepare"] and paused.state == {"log": ["prepare"], "amount": 120}
    assert paused.to_dict()["interrupt_payload"]["node_id"] == "approve_transfer"
    # run() on the paused thread is refused and changes nothing
    with SqliteSaver.from_conn_string(db) as saver:
        refused = _pay_graph(saver, runs)
        with pytest.raises(ThreadPausedError, match=r"resume\(thread_id='t1'"):
            refused.run(start, thread_id="t1")
    # a fresh graph object on a fresh connection to the same file resumes it
    with SqliteSaver.from_conn_string(db) as saver:
        fresh = _pay_graph(saver, runs)
        with pytest.raises(GraphValidationError, match="pass them again"):
            fresh.resume("t1", "approved")  # the reducers are not stored with the run
        with pytest.raises(InvalidDecisionError, match="is no decision"):
            fresh.resume("t1", None)
        done = fresh.resume("t1", "approved", reducers={"log": append_reducer})
        assert done.success and done.interrupt_payload is None
        assert done.state == {"log": ["prepare", "approve", "pay"], "amount": 120,
                              "decision": "approved", "paid": True}  # fmt: skip
        assert _names(done) == ["prepare", "approve", "pay"] and done.nodes_executed == 3
        assert runs == Counter({"prepare": 1, "approve": 2, "pay": 1})  # approve re-ran once
        with pytest.raises(NothingToResumeError, match="is not paused"):
            fresh.resume("t1", "approved")
    # a run without thread_id writes nothing into the checkpointer
    with SqliteSaver.from_conn_string(db) as saver:
        before = len(list(saver.list(None)))
        assert _pay_graph(saver).run(GraphState({"log": []})).interrupted
        assert len(list(saver.list(None))) == before
    with pytest.raises(CheckpointerConfigError, match="LangGraph saver"):
        AgentGraph("x", checkpointer=f"sqlite:///{db}")
    # the same object resumes without being given the reducers again; no checkpointer needed
    own = _pay_graph()
    first = own.run(GraphState({"log": []}, reducers={"log": append_reducer}))
    assert first.thread_id is not None and first.interrupted
    with pytest.raises(ThreadPausedError):
        own.run({}, thread_id=first.thread_id)
    second = own.resume(first.thread_id, "rejected")
    assert second.state["paid"] is False and second.state["log"] == ["prepare", "approve", "pay"]


def test_g18_command_resume_on_the_compiled_graph(tmp_path: Path) -> None:
    with SqliteSaver.from_conn_string(str(tmp_path / "c.sqlite")) as saver:
        compiled = _pay_graph().compile(saver, reducers={"log": append_reducer})
        config: Any = {"configurable": {"thread_id": "c1"}}
        out = compiled.invoke({"flow_state": {"log": []}}, config)
        (pending,) = out["__interrupt__"]
        assert pending.value["node_id"] == "approve_transfer"
        assert pending.value["payload"] == {"amount": 120}
        done = compiled.invoke(Command(resume="approved"), config)
        assert done["flow_state"]["paid"] is True and done["flow_result"]["success"] is True
        assert [t["node_name"] for t in done["flow_result"]["trace"]] == ["prepare", "approve",
                                                                          "pay"]  # fmt: skip


def test_g18_a_pause_in_a_parallel_batch_keeps_the_finished_branch() -> None:
    runs: Counter[str] = Counter()

    def fast(s: GraphState) -> dict[str, Any]:
        runs["fast"] += 1
        return {"fast": True}

    def ask(s: GraphState) -> dict[str, Any]:
        runs["ask"] += 1
        return {"answer": interrupt("ask", {"q": "ok?"})}

    graph = (
        AgentGraph("par")
        .add_node("s", lambda s: None)
        .add_node("fast", fast)
        .add_node("ask", ask)
        .add_node("join", lambda s: {"joined": [s.get("fast"), s.get("answer")]})
        .add_parallel_branches("s", ["fast", "ask"], join_at="join")
        .set_entry("s")
    )
    client, pair = threading.Lock(), (1, 2)  # kept as they are across the pause
    paused = graph.run({"client": client, "pair": pair}, thread_id="p")
    assert paused.interrupt_payload is not None and paused.interrupt_payload["node"] == "ask"
    done = graph.resume("p", "yes")
    assert done.state["joined"] == [True, "yes"] and runs == Counter({"fast": 1, "ask": 2})
    assert done.state["client"] is client and done.state["pair"] == (1, 2)
    assert _names(done) == ["s", "fast", "ask", "join"]


class Parent(TypedDict, total=False):
    flow_state: dict[str, Any]
    flow_result: dict[str, Any] | None
    note: str


def test_g19_a_dynavec_graph_as_a_node_of_another_graph() -> None:
    runs: Counter[str] = Counter()
    builder = StateGraph(Parent)
    builder.add_node("before", lambda s: {"note": "x", "flow_state": {"log": []}})
    builder.add_node("payment", _pay_graph(runs=runs).compile(reducers={"log": append_reducer}))
    builder.add_node("after", lambda s: {"note": f"paid={s['flow_state']['paid']}"})
    builder.add_edge(START, "before")
    builder.add_edge("before", "payment")
    builder.add_edge("payment", "after")
    builder.add_edge("after", END)
    parent = builder.compile(checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "parent-1"}}
    out = parent.invoke({}, config)
    assert out["__interrupt__"][0].value["node_id"] == "approve_transfer"
    done = parent.invoke(Command(resume="approved"), config)
    assert done["note"] == "paid=True" and done["flow_result"]["success"] is True
    assert done["flow_state"]["log"] == ["prepare", "approve", "pay"]
    assert runs == Counter({"prepare": 1, "approve": 2, "pay": 1})


def test_g20_langgraph_json_serves_a_dynavec_graph() -> None:
    """The ``dynavec_flow`` entry of ``langgraph.json`` loads as ``langgraph dev`` loads it
    (compiled, no checkpointer of its own) and runs as a node of a checkpointed graph;
    ``tests/test_studio.py`` runs it on a real server."""
    config = json.loads((REPO / "langgraph.json").read_text())
    path, attribute = config["graphs"]["dynavec_flow"].split(":")
    assert path == "./dynavec_langgraph/studio.py"
    import dynavec_langgraph.studio as studio

    flow = getattr(studio, attribute)
    assert isinstance(flow, CompiledStateGraph) and flow.checkpointer is None
    small = flow.invoke({"flow_state": {"amount": 20}})
    assert small["flow_state"] == {"amount": 20, "needs_approval": False, "log": ["review", "book"],
                                   "booked": True}  # fmt: skip
    builder = StateGraph(Parent)
    builder.add_node("flow", flow)
    builder.add_edge(START, "flow")
    builder.add_edge("flow", END)
    parent = builder.compile(checkpointer=InMemorySaver())
    config_: Any = {"configurable": {"thread_id": "studio-1"}}
    out = parent.invoke({"flow_state": {"amount": 250}}, config_)
    assert out["__interrupt__"][0].value["payload"] == {"amount": 250}
    done = parent.invoke(Command(resume="rejected"), config_)
    assert done["flow_state"]["booked"] is False
    assert done["flow_result"]["success"] is True
