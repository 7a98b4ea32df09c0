"""``dynavec.agents.react``: :class:`~dynavec_langgraph.ReActAgent` and its default prompt.

The same objects as :mod:`dynavec_langgraph.agents` (docs/compatibility.md, N6).
"""

from __future__ import annotations

from dynavec_langgraph._agent.agent import ReActAgent
from dynavec_langgraph._agent.core import DEFAULT_SYSTEM_PROMPT

__all__ = ["DEFAULT_REACT_SYSTEM_PROMPT", "ReActAgent"]

DEFAULT_REACT_SYSTEM_PROMPT = DEFAULT_SYSTEM_PROMPT
"""The system prompt a ``ReActAgent`` uses when ``system_prompt=None``."""
