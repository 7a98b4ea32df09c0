"""dynavec's ``Planner``: a model splits a goal into a :class:`Plan` of steps, and (an
extension) an agent carries them out one by one (docs/compatibility.md, rows L1-L5).

The code is in ``dynavec_langgraph._dynavec.planner``; this module is its public import path.
"""

from dynavec_langgraph._dynavec.planner import (
    DEFAULT_PLANNER_PROMPT,
    DEFAULT_PLANNER_SYSTEM_PROMPT,
    Plan,
    Planner,
    PlanStep,
    parse_plan,
    planning_messages,
)

__all__ = [
    "DEFAULT_PLANNER_PROMPT",
    "DEFAULT_PLANNER_SYSTEM_PROMPT",
    "Plan",
    "PlanStep",
    "Planner",
    "parse_plan",
    "planning_messages",
]
