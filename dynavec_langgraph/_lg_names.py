"""LangGraph's internal names the package reads, in one place (langgraph 1.2; pinned by
``tests/test_claims.py`` and ``tests/test_exactly_once.py``).

- ``CHECKPOINT_MAP``: the task config's ``configurable`` key holding the checkpoint each
  namespace runs from;
- ``NS_SEP``: the separator of a namespace's levels (``parent|child``);
- ``DURABILITY``: the task config's ``configurable`` key holding the run's ``durability``
  (absent: LangGraph's default, ``"async"``);
- ``RESUMING``: the task config's ``configurable`` key that is true while the run resumes;
- ``SCRATCHPAD``: the task config's ``configurable`` key holding the task's scratchpad, whose
  ``resume`` list is the answers the task has for its pauses in this run (those recorded when
  the run loaded the checkpoint, then the one this run gives, if it answers the task);
- ``RESUME_MAP``: the run config's ``configurable`` key holding a run's decisions given by
  interrupt id (``Command(resume={id: value})``; ``langgraph._internal._constants.
  CONFIG_KEY_RESUME_MAP``, set by ``langgraph.pregel._loop`` for the run and seen by every
  subgraph it runs). Such a run carries no decision without an id, so a decision without one
  that its checkpoint still holds is left over from an earlier run. Pinned by
  ``tests/test_stale_plain_answer.py``.
- ``INTERRUPT_WRITE`` / ``RESUME_WRITE``: the pending-write channels of a paused task (its
  interrupts, the decisions given to it) (``langgraph._internal._constants``);
- ``STRICT_RESUME``: the run config's ``configurable`` key that switches on strict resume
  (``langgraph._internal._constants.CONFIG_KEY_STRICT_RESUME``, langgraph 1.2.20+; a server
  sets it for a run created with ``strict_resume=True``). Pinned by
  ``tests/test_strict_resume.py``.
- ``SENT_AT``: the run config's ``configurable`` key where a LangGraph API server keeps when
  the request that created the run arrived, in milliseconds of the server's clock
  (``langgraph_api.models.run.create_valid_run``, langgraph-api 0.11.1 and 0.16.7; absent in
  process and on Aegra 0.6.0). Pinned by ``tests/test_cluster.py`` (langhost: without it the
  stale answers of
  ``test_sigkill_after_the_approval_each_ui_s_stale_answer_asks_the_in_doubt_question`` are
  taken).
"""

from __future__ import annotations

import sys
from typing import Any, Final

__all__ = [
    "CHECKPOINT_MAP",
    "DURABILITY",
    "INTERRUPT_WRITE",
    "NS_SEP",
    "RESUME_MAP",
    "RESUME_WRITE",
    "RESUMING",
    "SCRATCHPAD",
    "SENT_AT",
    "STRICT_RESUME",
    "loaded_prebuilt",
]

CHECKPOINT_MAP: Final = "checkpoint_map"
DURABILITY: Final = "__pregel_durability"
NS_SEP: Final = "|"
INTERRUPT_WRITE: Final = "__interrupt__"
RESUME_WRITE: Final = "__resume__"
RESUME_MAP: Final = "__pregel_resume_map"
RESUMING: Final = "__pregel_resuming"
SCRATCHPAD: Final = "__pregel_scratchpad"
STRICT_RESUME: Final = "__pregel_strict_resume"  # langgraph 1.2.20+ (read from 1.2.24)
SENT_AT: Final = "__request_start_time_ms__"  # langgraph-api's, not langgraph's


def loaded_prebuilt(name: str) -> Any:
    """``langgraph.prebuilt``'s ``name`` (``ToolNode``, ``ToolRuntime``) if that module is loaded,
    else None. An object is an instance of one of its classes, or an annotation is one, only
    once it is loaded: checking so lets an agent of this package's own tools never import it
    (50-100 ms at import)."""
    module = sys.modules.get("langgraph.prebuilt")
    return None if module is None else getattr(module, name, None)
