"""dynavec's exception names (``dynavec.exceptions``), for code that swaps the import.

Every error of the package (:mod:`dynavec_langgraph._errors`) plus the three names dynavec code
catches that the LangGraph port adds here::

    DynavecError
    ├── NodeInterrupt(RuntimeError)           interrupt() called outside a running agent
    ├── ApprovalTimeoutError(TimeoutError)    no decision arrived in time
    ├── MissingDependencyError(ImportError)   a feature whose optional extra is not installed
    ├── ConfigurationError(ValueError)        dynavec's names, for its except clauses:
    ├── ProvisioningError(RuntimeError)         the package raises the precise errors of
    ├── EmbeddingError(RuntimeError)            dynavec_langgraph._errors instead
    ├── DimensionMismatchError(ValueError)
    ├── NotFoundError(LookupError)
    ├── ItemTooLargeError(ValueError)         (doc_id, namespace, size_bytes, limit_bytes)
    └── ConflictError(RuntimeError)           (doc_id, namespace, expected_version)

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
    install_command,
)

__all__ = [
    "ApprovalTimeoutError",
    "CheckpointNotFoundError",
    "CheckpointerConfigError",
    "ConcurrentResumeError",
    "ConfigurationError",
    "ConflictError",
    "DimensionMismatchError",
    "DynavecError",
    "EmbeddingError",
    "InvalidDecisionError",
    "ItemTooLargeError",
    "MissingDependencyError",
    "NodeInterrupt",
    "NotFoundError",
    "NothingToResumeError",
    "ProvisioningError",
    "ThreadPausedError",
]


class NodeInterrupt(DynavecError, RuntimeError):
    """``interrupt(node_id, payload)`` was called where no agent runs (HITL v1's pause).

    ``NodeInterrupt(thread_id, node_id, payload=None)``, dynavec's argument order and message
    (docs/compatibility.md, E2).

    Attributes:
        thread_id: the thread id given to v1's ``interrupt(thread_id, node_id, payload)``
            (``None`` for ``interrupt(node_id, payload)``).
        node_id: the approval point named by the tool.
        payload: what the person would need to decide (``payload or {}``).

    Example:
        >>> str(NodeInterrupt("t1", "approve"))
        "Execution interrupted at node 'approve' for thread 't1'. Awaiting human input."
    """

    def __init__(self, thread_id: str | None, node_id: str, payload: Any = None) -> None:
        self.thread_id = thread_id
        self.node_id = node_id
        self.payload = payload or {}
        super().__init__(
            f"Execution interrupted at node {node_id!r} for thread {thread_id!r}. "
            "Awaiting human input."
        )


class ApprovalTimeoutError(DynavecError, TimeoutError):
    """No human decision arrived within the time the caller allowed.

    ``ApprovalTimeoutError(thread_id, node_id, timeout_seconds)`` as in dynavec; a single
    message (``ApprovalTimeoutError("...")``) works too (docs/compatibility.md, E3).

    Example:
        >>> str(ApprovalTimeoutError("t1", "approve", 30))
        "Approval request at node 'approve' for thread 't1' timed out after 30 seconds."
    """

    def __init__(self, *args: Any) -> None:
        self.thread_id: str | None = None
        self.node_id: str | None = None
        self.timeout_seconds: float | None = None
        if len(args) == 3:
            self.thread_id, self.node_id, self.timeout_seconds = args
            super().__init__(
                f"Approval request at node {self.node_id!r} for thread {self.thread_id!r} "
                f"timed out after {self.timeout_seconds} seconds."
            )
        else:
            super().__init__(*args)


class MissingDependencyError(DynavecError, ImportError):
    """A feature needs an optional package that is not installed; the message names the extra.

    ``MissingDependencyError(feature, package, extra)``, dynavec's order (docs/compatibility.md,
    E4).

    Example:
        >>> error = MissingDependencyError("BedrockChatModel", "boto3", "bedrock")
        >>> error.package, error.extra
        ('boto3', 'bedrock')
        >>> str(error).split("  ")[1]
        "pip install 'dynavec-langgraph[bedrock]'"
    """

    def __init__(self, feature: str, package: str, extra: str) -> None:
        self.feature = feature
        self.package = package
        self.extra = extra
        super().__init__(
            f"{feature} requires the {package!r} package. Install it with:  "
            + install_command(extra)
        )


class ConfigurationError(DynavecError, ValueError):
    """dynavec's name for a setting that cannot be used (the package raises the more precise
    errors above; the name exists so dynavec's ``except`` clauses import)."""


class ProvisioningError(DynavecError, RuntimeError):
    """dynavec's name for a storage resource that could not be created or reached."""


class EmbeddingError(DynavecError, RuntimeError):
    """dynavec's name for a failed embedding call (dynavec's vector store; unused here)."""


class DimensionMismatchError(DynavecError, ValueError):
    """dynavec's name for a vector of the wrong dimension (dynavec's vector store)."""


class NotFoundError(DynavecError, LookupError):
    """dynavec's name for a document or record that does not exist."""


class _ItemError(DynavecError):
    """An error about one stored item: keeps its ``doc_id`` and ``namespace`` and names it so
    in its text (``what``: the rest of the sentence)."""

    def __init__(self, doc_id: str, namespace: str, what: str) -> None:
        self.doc_id = doc_id
        self.namespace = namespace
        super().__init__(f"Item {doc_id!r} in namespace {namespace!r} {what}.")


class ItemTooLargeError(_ItemError, ValueError):
    """An item over the storage's size limit: ``(doc_id, namespace, size_bytes, limit_bytes)``.

    Example:
        >>> str(ItemTooLargeError("d1", "default", 500_000, 400_000))
        "Item 'd1' in namespace 'default' is 500000 bytes, over the limit of 400000 bytes."
    """

    def __init__(self, doc_id: str, namespace: str, size_bytes: int, limit_bytes: int) -> None:
        self.size_bytes = size_bytes
        self.limit_bytes = limit_bytes
        over = f"is {size_bytes} bytes, over the limit of {limit_bytes} bytes"
        super().__init__(doc_id, namespace, over)


class ConflictError(_ItemError, RuntimeError):
    """A write that expected another version: ``(doc_id, namespace, expected_version)``.

    Example:
        >>> str(ConflictError("d1", "default", 3))
        "Item 'd1' in namespace 'default' is not at the expected version 3."
    """

    def __init__(self, doc_id: str, namespace: str, expected_version: int | None) -> None:
        self.expected_version = expected_version
        super().__init__(doc_id, namespace, f"is not at the expected version {expected_version}")
