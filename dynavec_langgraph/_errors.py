"""Errors raised by dynavec_langgraph.

Every error is a :class:`DynavecError`; each also subclasses the builtin a caller of
``dynavec.agents`` would already catch, so existing ``except`` clauses keep working::

    DynavecError
    ├── ThreadPausedError(RuntimeError)      run() on a thread waiting for a decision
    ├── ConcurrentResumeError(RuntimeError)  another caller answered the same pause first
    ├── NothingToResumeError(ValueError)     resume() with no paused call to answer
    ├── InvalidDecisionError(ValueError)     a decision that does not fit what is pending
    ├── CheckpointNotFoundError(ValueError)  resume_from= / checkpoint_id= unknown
    ├── CheckpointerConfigError(ValueError)  a checkpointer argument that cannot be used
    ├── StorageError(RuntimeError)           the checkpointer failed to read or write
    ├── ServerUnavailableError(ConnectionError)  RemoteReActAgent: no answer from the server
    ├── RemoteRunError(RuntimeError)         RemoteReActAgent: the run failed on the server
    └── InboxError(ValueError)               an inbox request that cannot be served (a
                                             --graph that does not load, a server that
                                             cannot be reached)

Every caller gets the same error for the same case: ``ReActAgent``, the inbox and the
command line all answer a pause through :mod:`dynavec_langgraph._resuming`, and the command
line prints the error it gets (exit code 2) without re-wrapping it.

LangGraph's own interrupt exceptions (``GraphInterrupt`` and the rest of ``GraphBubbleUp``)
are never caught or wrapped by this package.
"""

from __future__ import annotations

__all__ = [
    "CheckpointNotFoundError",
    "CheckpointerConfigError",
    "ConcurrentResumeError",
    "DynavecError",
    "InboxError",
    "InvalidDecisionError",
    "NothingToResumeError",
    "RemoteRunError",
    "ServerUnavailableError",
    "StorageError",
    "ThreadPausedError",
]


class DynavecError(Exception):
    """Base class of every error this package raises."""


class ThreadPausedError(DynavecError, RuntimeError):
    """``run()`` was called on a thread that is paused at an interrupt.

    Nothing was written: answer the pause with ``resume()`` (or ``Command(resume=...)``).
    """

    def __init__(self, thread_id: str, node_ids: list[str]) -> None:
        self.thread_id = thread_id
        self.node_ids = node_ids
        pending = ", ".join(repr(n) for n in node_ids)
        super().__init__(
            f"Thread {thread_id!r} is paused at {pending} and waits for a human decision. "
            f"Call resume(thread_id={thread_id!r}, human_decision=...) to answer it; "
            "run() changed nothing."
        )


class ConcurrentResumeError(DynavecError, RuntimeError):
    """Another caller resumed the same paused thread first; this decision was not applied."""


class NothingToResumeError(DynavecError, ValueError):
    """``resume()`` found no paused tool call to answer."""


class InvalidDecisionError(DynavecError, ValueError):
    """A decision that does not match what is pending (several pauses, unknown node id...)."""


class CheckpointNotFoundError(DynavecError, ValueError):
    """A checkpoint id that the thread does not have."""


class CheckpointerConfigError(DynavecError, ValueError):
    """A ``checkpointer=`` argument that cannot be used."""


class StorageError(DynavecError, RuntimeError):
    """The checkpointer failed to read or write (database down, file or folder read-only).

    The message names the storage and says what happened to the thread: unchanged (nothing
    ran), or which tool calls ran before their results could be saved (``completed``). The
    ``ReActAgent`` that raised it remembers those results: resuming the thread with the same
    agent once the storage works again answers them from memory instead of running them again.

    Attributes:
        thread_id: the thread.
        completed: ``"tool(args) (call id)"`` for each call that ran but was not saved.
    """

    def __init__(self, message: str, thread_id: str | None, completed: list[str]) -> None:
        super().__init__(message)
        self.thread_id = thread_id
        self.completed = completed


class ServerUnavailableError(DynavecError, ConnectionError):
    """``RemoteReActAgent``: the server refused the connection or did not answer in time."""


class RemoteRunError(DynavecError, RuntimeError):
    """``RemoteReActAgent``: the run failed on the server (the message carries its error)."""


class InboxError(DynavecError, ValueError):
    """An inbox request that cannot be served: a ``--graph`` that does not load, a server
    that cannot be reached or refused the request. Nothing was changed. (Refused decisions,
    unknown or unpaused threads and concurrent answers raise the errors above, as they do
    for ``ReActAgent``.)"""
