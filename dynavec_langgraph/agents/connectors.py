"""``dynavec.agents.connectors``: the same functions as :mod:`dynavec_langgraph.connectors`
(docs/compatibility.md, N6)."""

from __future__ import annotations

from dynavec_langgraph import connectors as _same
from dynavec_langgraph.connectors import *  # noqa: F403  (this face is that one under dynavec's name)

__all__ = _same.__all__
