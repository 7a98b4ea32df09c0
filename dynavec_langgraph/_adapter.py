"""The adapter's old path: :class:`DynavecCheckpointSaver` lives in
:mod:`dynavec_langgraph._persistence.adapter`."""

from __future__ import annotations

from dynavec_langgraph._persistence.adapter import DynavecCheckpointSaver
from dynavec_langgraph._persistence.base import ThreadedAsyncSaver

__all__ = ["DynavecCheckpointSaver", "ThreadedAsyncSaver"]
