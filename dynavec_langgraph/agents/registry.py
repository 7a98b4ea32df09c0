"""``dynavec.agents.registry``: the same objects as :mod:`dynavec_langgraph.registry`
(docs/compatibility.md, N6)."""

from __future__ import annotations

from dynavec_langgraph._dynavec.registry import ToolRegistry, default_registry

__all__ = ["ToolRegistry", "default_registry"]
