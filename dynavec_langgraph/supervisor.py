"""dynavec's ``Supervisor``, ``Handoff`` and ``AgentLike``, plus a pausing, handoff-driven
supervisor (:class:`HandoffSupervisor`, an extension; docs/compatibility.md, rows S1-S8).

The code is in ``dynavec_langgraph._dynavec.supervisor``; this module is its public import path.
"""

from dynavec_langgraph._dynavec.supervisor import (
    AgentLike,
    Handoff,
    HandoffRecord,
    HandoffSupervisor,
    ResumableAgent,
    Supervisor,
    default_handoff,
)

__all__ = [
    "AgentLike",
    "Handoff",
    "HandoffRecord",
    "HandoffSupervisor",
    "ResumableAgent",
    "Supervisor",
    "default_handoff",
]
