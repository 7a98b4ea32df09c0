"""A remote agent's failures as the package's errors, each saying what to do next: the server's HTTP
answers, a thread it does not show or refuses, a resume another caller won."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import httpx

from dynavec_langgraph._errors import (
    ConcurrentResumeError,
    NothingToResumeError,
    RemoteRunError,
    ServerUnavailableError,
    ThreadAccessError,
)


def lost(thread_id: str) -> ConcurrentResumeError:
    return ConcurrentResumeError(
        f"another caller resumed thread {thread_id!r} first; its decision was applied and yours "
        "was not. Read the thread again (result(thread_id)) before deciding again"
    )


def busy(thread_id: str) -> ConcurrentResumeError:
    return ConcurrentResumeError(
        f"thread {thread_id!r} is running another run (another caller's run or resume); "
        "nothing was sent. Read the thread again (result(thread_id)) when that run is done"
    )


@contextmanager
def translated(url: str, thread_id: str | None, doing: str) -> Iterator[None]:
    """HTTP failures -> this package's errors, with what to do next."""
    try:
        yield
    except httpx.HTTPStatusError as error:
        status = error.response.status_code
        if status == 409 and thread_id is not None:
            raise busy(thread_id) from error
        try:
            body = error.response.text
        except httpx.ResponseNotRead:
            body = ""
        if status == 400 and thread_id is not None and _NOT_PAUSED in body:
            # Aegra checks that the thread is paused when a resume is created
            raise ConcurrentResumeError(
                f"the server refused this resume: thread {thread_id!r} is no longer paused "
                "(another caller resumed it first, or a run of it is in flight); nothing was "
                "applied. Read the thread again (result(thread_id)) before deciding again"
            ) from error
        raise RemoteRunError(
            f"the server at {url} answered {status} while {doing}: {body or error}"
        ) from error
    except httpx.TimeoutException as error:
        raise ServerUnavailableError(
            f"the server at {url} did not answer in time while {doing} ({error!r}). If a run "
            "was sent it may still finish on the deployment: read the thread "
            "(result(thread_id)) before resuming again; a repeated resume of an answered pause "
            "is refused, never applied twice"
        ) from error
    except httpx.TransportError as error:
        raise ServerUnavailableError(
            f"cannot reach the LangGraph API server at {url} while {doing} ({error!r}): check "
            "the URL and that the server runs. If a run was sent it may still finish on the "
            "deployment: read the thread (result(thread_id)) before resuming again"
        ) from error


_NOT_PAUSED = "thread is not in interrupted state"
"""Aegra's answer to a resume of a thread that is not paused (HTTP 400)."""


def not_found(error: httpx.HTTPStatusError) -> bool:
    return error.response.status_code == 404


def require_thread(thread_id: str | None) -> str:
    if thread_id is None:
        raise NothingToResumeError(
            "nothing to resume: pass thread_id= of a paused thread (RemoteReActAgent resumes "
            "threads kept by the server)"
        )
    return thread_id


def unknown_thread_text(thread_id: str, consequence: str) -> str:
    """The text of a thread the server does not show (HTTP 404): unknown, or kept from the
    caller by the server's auth rules, which answer both alike."""
    return (
        f"unknown thread {thread_id!r} on the server, or one its auth rules do not let these "
        f"credentials see: {consequence} (check the thread id, the server URL and the token)"
    )


def access_refused(thread_id: str) -> ThreadAccessError:
    return ThreadAccessError(
        f"thread {thread_id!r} exists on the server, but its auth rules do not let these "
        "credentials use it: nothing was sent. Use a thread of your own (another thread id), "
        "or the token of a user the thread is shared with"
    )


def create_refused(error: httpx.HTTPStatusError) -> bool:
    """A ``threads.create(..., if_exists="do_nothing")`` answered 409: the thread exists but
    the server's auth rules hide it (a thread the caller may read comes back as it is)."""
    return error.response.status_code == 409
