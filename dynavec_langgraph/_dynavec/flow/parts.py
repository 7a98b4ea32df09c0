"""The parts of a dynavec graph: its errors, reducers and state, nodes and edges."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import cast

from dynavec_langgraph._dynavec.flow.conditions import safe_eval_expr
from dynavec_langgraph._types import JSONObject, UserPayload, UserValues

__all__ = [
    "BaseNode",
    "Condition",
    "Edge",
    "FunctionNode",
    "GraphCycleError",
    "GraphError",
    "GraphState",
    "GraphValidationError",
    "MaxIterationsExceededError",
    "ReducerFn",
    "append_reducer",
    "default_reducer",
]

ReducerFn = Callable[[UserPayload, UserPayload], UserPayload]
"""A reducer: ``(current, update) -> new value``."""


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


def default_reducer(current: UserPayload, update: UserPayload) -> UserPayload:
    """The update replaces the current value.

    Example:
        >>> default_reducer([1], [2])
        [2]
    """
    del current
    return update


def append_reducer(current: UserPayload, update: UserPayload) -> UserPayload:
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


class GraphState(dict[str, UserPayload]):
    """A dynavec graph's state: a ``dict`` with a reducer per key.

    Example:
        >>> s = GraphState({"items": ["a"]}, reducers={"items": append_reducer})
        >>> s.merge({"items": ["b"], "n": 1}) == {"items": ["a", "b"], "n": 1}
        True
    """

    def __init__(
        self,
        initial: Mapping[str, UserPayload] | None = None,
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

    def set(self, key: str, value: UserPayload) -> GraphState:
        """``self[key] = value``; returns ``self``."""
        self[key] = value
        return self

    def copy(self) -> GraphState:
        """A shallow copy: a new state with the same values and a copy of the reducer map."""
        return GraphState(self, reducers=self.reducers)

    def merge(self, updates: Mapping[str, UserPayload]) -> GraphState:
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
    def execute(self, state: GraphState) -> GraphState | UserValues | None:
        """Run the node on ``state``."""

    def to_dict(self) -> JSONObject:
        """``{"name", "type"}``."""
        return {"name": self.name, "type": self.node_type}


class FunctionNode(BaseNode):
    """A node running ``fn(state)``; the name defaults to the function's."""

    node_type = "function"

    def __init__(self, fn: Callable[[GraphState], UserPayload], name: str = "") -> None:
        super().__init__(name=name or getattr(fn, "__name__", "") or "fn")
        self.fn = fn

    def execute(self, state: GraphState) -> UserPayload:
        """``fn(state)``."""
        return self.fn(state)


Condition = Callable[[GraphState], object] | str | None


@dataclass
class Edge:
    """An edge; ``condition`` is ``None`` (always), a callable of the state or a condition
    string (:func:`safe_eval_expr`)."""

    source: str
    target: str
    condition: Condition = None
    label: str = ""

    def evaluate(self, state: Mapping[str, object]) -> bool:
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

    def to_dict(self) -> JSONObject:
        """``{"source", "target"}`` plus ``label`` (when set) and ``condition`` (when set)."""
        out: JSONObject = {"source": self.source, "target": self.target}
        if self.label:
            out["label"] = self.label
        if isinstance(self.condition, str):
            out["condition"] = self.condition
        elif self.condition is not None:
            out["condition"] = f"<callable:{getattr(self.condition, '__name__', 'condition')}>"
        return out
