"""The safe serializer's old path: it lives in :mod:`dynavec_langgraph._persistence.serde`."""

from __future__ import annotations

from dynavec_langgraph._persistence.serde import PACKAGE_TYPES, safe_serializer

__all__ = ["PACKAGE_TYPES", "safe_serializer"]
