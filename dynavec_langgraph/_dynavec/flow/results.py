"""What a run of a dynavec graph returns: its node traces and its result."""

from __future__ import annotations

from dataclasses import dataclass, field

from dynavec_langgraph._dynavec.flow.parts import GraphState
from dynavec_langgraph._types import JSONObject, UserValues

__all__ = ["GraphResult", "NodeTrace"]

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

    def to_dict(self) -> JSONObject:
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
    interrupt_payload: UserValues | None = None
    thread_id: str | None = None

    @property
    def output(self) -> GraphState:
        """The final state."""
        return self.state

    @property
    def interrupted(self) -> bool:
        """Whether the run is paused at an ``interrupt()``."""
        return self.interrupt_payload is not None

    def to_dict(self) -> JSONObject:
        """``{graph_name, success, total_ms, nodes_executed, trace, state, error}`` (plus
        ``interrupt_payload`` when paused)."""
        out: JSONObject = {
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
