"""dynavec's exception names (``dynavec.exceptions``), for code that swaps the import.

Every error of the package (:mod:`dynavec_langgraph._errors`) plus the three names dynavec code
catches that the LangGraph port adds here::

    DynavecError
    ├── NodeInterrupt(RuntimeError)           interrupt() called outside a running agent
    ├── ApprovalTimeoutError(TimeoutError)    no decision arrived in time
    └── MissingDependencyError(ImportError)   a feature whose optional extra is not installed

``NodeInterrupt`` is what HITL v1 raised: ``AgentTool.execute()`` lets it through (a tool run
by hand, outside an agent, that calls ``interrupt()``), so the caller sees the node id and the
payload. Inside an agent ``interrupt()`` raises LangGraph's ``GraphInterrupt`` instead (never
catch that one). See ``docs/compatibility.md``.
"""

from __future__ import annotations

from typing import Any

from dynavec_langgraph._errors import (
    CheckpointerConfigError,
    CheckpointNotFoundError,
    ConcurrentResumeError,
    DynavecError,
    InvalidDecisionError,
    NothingToResumeError,
    ThreadPausedError,
)

__all__ = [
    "ApprovalTimeoutError",
    "CheckpointNotFoundError",
    "CheckpointerConfigError",
    "ConcurrentResumeError",
    "DynavecError",
    "InvalidDecisionError",
    "MissingDependencyError",
    "NodeInterrupt",
    "NothingToResumeError",
    "ThreadPausedError",
]


class NodeInterrupt(DynavecError, RuntimeError):
    """``interrupt(node_id, payload)`` was called where no agent runs (HITL v1's pause).

    Attributes:
        node_id: the approval point named by the tool.
        payload: what the person would need to decide.
        thread_id: the thread id given to v1's ``interrupt(thread_id, node_id, payload)``.
    """

    def __init__(self, node_id: str, payload: Any = None, thread_id: str | None = None) -> None:
        self.node_id = node_id
        self.payload = payload
        self.thread_id = thread_id
        super().__init__(
            f"interrupt({node_id!r}) was called outside a running agent, so nothing can wait "
            "for the decision: run the tool through a dynavec_langgraph agent (ReActAgent or "
            "create_react_agent), whose run pauses there and resume() answers it"
        )


class ApprovalTimeoutError(DynavecError, TimeoutError):
    """No human decision arrived within the time the caller allowed."""


class MissingDependencyError(DynavecError, ImportError):
    """A feature needs an optional extra that is not installed; the message names it."""

    def __init__(self, feature: str, extra: str, package: str) -> None:
        self.feature = feature
        self.extra = extra
        self.package = package
        super().__init__(
            f"{feature} needs the {package!r} package: pip install 'dynavec-langgraph[{extra}]'"
        )
