"""A graph that tells where the server it runs on imported this package from (the graph
``installed`` of ``tests/langgraph_cluster.json``; tests/test_cluster.py checks that it is the
built wheel, installed in the server's virtualenv, and nothing of the clone).

Input: ``clone``, the clone's path. Output: ``package`` (``dynavec_langgraph.__file__``),
``graph`` (this module's file), ``source`` (the installed distribution's ``direct_url.json``:
the wheel's URL and hash), ``modules_from_clone`` (every imported module whose file is in the
clone) and ``path_from_clone`` (every ``sys.path`` entry in the clone).
"""

from __future__ import annotations

import importlib.metadata
import sys
from pathlib import Path
from typing import TypedDict

from langgraph.graph import START, StateGraph

import dynavec_langgraph

__all__ = ["Where", "graph"]


class Where(TypedDict, total=False):
    clone: str
    package: str
    graph: str
    source: str
    modules_from_clone: list[str]
    path_from_clone: list[str]


def _in(clone: Path, file: object) -> bool:
    return isinstance(file, str) and bool(file) and Path(file).resolve().is_relative_to(clone)


def where(state: Where) -> Where:
    clone = Path(state["clone"]).resolve()
    modules = list(sys.modules.items())
    source = importlib.metadata.distribution("dynavec-langgraph").read_text("direct_url.json")
    return {
        "package": str(dynavec_langgraph.__file__),
        "graph": str(Path(__file__).resolve()),
        "source": source or "",
        "modules_from_clone": sorted(
            name for name, module in modules if _in(clone, getattr(module, "__file__", None))
        ),
        "path_from_clone": [entry for entry in sys.path if _in(clone, entry)],
    }


graph = StateGraph(Where).add_node("where", where).add_edge(START, "where").compile()
