"""dynavec's ``ToolRegistry`` and the process-wide ``default_registry``.

The code is in ``dynavec_langgraph._dynavec.registry``; this module is its public import path.
"""

from dynavec_langgraph._dynavec.registry import (
    ToolRegistry,
    default_registry,
    unregistered_observation,
)

__all__ = [
    "ToolRegistry",
    "default_registry",
    "unregistered_observation",
]
