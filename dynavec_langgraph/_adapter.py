"""The adapter's old path: :class:`DynavecCheckpointSaver` lives in
:mod:`dynavec_langgraph._persistence.adapter`."""

from __future__ import annotations

from dynavec_langgraph._persistence.adapter import DynavecCheckpointSaver, ThreadedAsyncSaver

__all__ = ["DynavecCheckpointSaver", "ThreadedAsyncSaver"]
