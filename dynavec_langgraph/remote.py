"""``RemoteReActAgent``: dynavec's run / resume API against a LangGraph API deployment.

The agent runs on LangGraph API servers (``langgraph dev``, ``langhost serve``, LangSmith
Deployment) that serve a graph of :func:`dynavec_langgraph.create_react_agent`; this client
talks to them over ``langgraph_sdk`` (the ``studio`` extra) and returns the same
:class:`~dynavec_langgraph.records.AgentResult` and errors as
:class:`~dynavec_langgraph._agent.ReActAgent`.

How a resume stays single when several callers (or servers) answer the same pause:

- the decision is keyed by the pending interrupt's id (``{interrupt_id: decision}``), so a late
  decision never answers a newer pause of the thread;
- runs are sent with ``multitask_strategy="reject"``: while another run of the thread is in
  flight the server answers HTTP 409, raised as :class:`ConcurrentResumeError`;
- runs of a thread never overlap then, so after the run, a run created between this caller's
  read of the pause and its own run that answered the same interrupt (and did not fail) means
  another caller resumed first (:class:`ConcurrentResumeError`; this decision was not applied:
  its interrupt id was no longer pending).

Runs use ``durability="sync"`` (each step's checkpoint is written before the next step), so a
server that dies mid-run leaves the last finished tool call saved; another server of the
deployment re-claims the run after the heartbeat and finishes it.

Errors of this module beside the package's: :class:`ServerUnavailableError`
(``ConnectionError``: refused connection or timeout) and :class:`RemoteRunError`
(``RuntimeError``: the run failed on the server).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import httpx
from langchain_core.messages import BaseMessage, convert_to_messages
from langgraph.types import Interrupt

from dynavec_langgraph._digest import refuse_stale
from dynavec_langgraph._errors import (
    ConcurrentResumeError,
    InvalidDecisionError,
    NothingToResumeError,
    RemoteRunError,
    ServerUnavailableError,
)
from dynavec_langgraph._resuming import (
    MISSING,
    Answer,
    brief,
    check_text,
    refuse_if_asked_again,
    refuse_if_paused,
    schema_refusal,
)
from dynavec_langgraph._view import build_result
from dynavec_langgraph.records import AgentResult, AgentState

if TYPE_CHECKING:
    from langgraph_sdk.client import LangGraphClient, SyncLangGraphClient

__all__ = [
    "DEFAULT_TIMEOUT",
    "RemoteReActAgent",
    "RemoteRunError",
    "ServerUnavailableError",
    "server_thread_id",
]

DEFAULT_TIMEOUT = 120.0
"""Seconds to wait for one answer of the server (a run's whole wait included)."""
_EXTRA = "pip install 'dynavec-langgraph[studio]'"
_RUNS_PAGE = 20
_INTERRUPT_ID = re.compile(r"[0-9a-f]{32}")


# --- plain functions: what is sent, what came back ------------------------------------------


@dataclass(frozen=True)
class _Seen:
    """A thread as the server showed it: its latest checkpoint and pending interrupts."""

    exists: bool
    checkpoint_id: str | None
    interrupts: list[Interrupt]
    values: dict[str, Any]
    busy: bool = False
    last_run_id: str | None = None
    """The thread's newest run when it was read: the runs after it answered or moved it."""


def _seen(
    state: Mapping[str, Any] | None, status: str | None = None, last_run: str | None = None
) -> _Seen:
    if state is None:
        return _Seen(False, None, [], {})
    checkpoint = state.get("checkpoint") or {}
    interrupts = [
        Interrupt(value=i.get("value"), id=str(i["id"])) for i in state.get("interrupts") or []
    ]
    values = state.get("values")
    return _Seen(
        True,
        checkpoint.get("checkpoint_id"),
        interrupts,
        dict(values) if isinstance(values, Mapping) else {},
        status == "busy",
        last_run,
    )


def _check_input(
    thread_id: str | None,
    goal: Any = None,
    state: AgentState | None = None,
    decision: Any = MISSING,
    decisions: Mapping[str, Any] | None = None,
) -> None:
    """Refuse, before anything is sent, text the server's saver would store changed (a lone
    surrogate: ``InvalidInputError`` / ``InvalidDecisionError`` naming the field)."""
    if isinstance(thread_id, str):
        check_text(thread_id, "thread_id")
    if isinstance(goal, str):
        check_text(goal, "goal")
    if state is not None:
        check_text(state.data, "state.data")
    if decision is not MISSING:
        check_text(decision, "human_decision", InvalidDecisionError)
    if isinstance(decisions, Mapping):
        for key, value in decisions.items():
            check_text(value, f"decisions[{brief(key, 40)}]", InvalidDecisionError)


def _run_input(goal: str, state: AgentState | None) -> dict[str, Any]:
    graph_input: dict[str, Any] = {"messages": [{"role": "user", "content": goal}]}
    if state is not None:
        graph_input["shared"] = dict(state.data)
    return graph_input


def _resume_map(
    thread_id: str, seen: _Seen, decision: Any, decisions: Mapping[str, Any] | None
) -> dict[str, Any]:
    """``{interrupt_id: decision}`` for the pauses ``seen`` shows.

    Raises:
        NothingToResumeError: an unknown thread, or one that is not paused.
        InvalidDecisionError: no decision, ``None``, several pending for one decision, both
            ``human_decision`` and ``decisions``, or ``decisions`` naming what is not pending.
    """
    if not seen.exists or seen.checkpoint_id is None:
        raise NothingToResumeError(
            f"unknown thread {thread_id!r} on the server: nothing to resume (check the thread "
            "id and the server URL)"
        )
    if not seen.interrupts and seen.busy:
        raise _busy(thread_id)
    if not seen.interrupts:
        raise NothingToResumeError(
            f"thread {thread_id!r} is not paused: nothing to resume; call run() to continue it"
        )
    # the decision checks of the guarded resume (the server holds the thread's lock)
    resume = dict(Answer(decision, decisions).command(seen.interrupts, None).resume or {})
    refuse_stale(thread_id, seen.interrupts, resume)
    return resume


def _lost(thread_id: str) -> ConcurrentResumeError:
    return ConcurrentResumeError(
        f"another caller resumed thread {thread_id!r} first; its decision was applied and yours "
        "was not. Read the thread again (result(thread_id)) before deciding again"
    )


def _busy(thread_id: str) -> ConcurrentResumeError:
    return ConcurrentResumeError(
        f"thread {thread_id!r} is running another run (another caller's run or resume); "
        "nothing was sent. Read the thread again (result(thread_id)) when that run is done"
    )


def _check_run(thread_id: str, run: Mapping[str, Any], joined: Any, seen: _Seen) -> None:
    """Raise what a failed run means: a decision its schema refused, or the server's error."""
    if run.get("status") == "success":
        return
    error = joined.get("__error__") if isinstance(joined, Mapping) else None
    error = error if isinstance(error, Mapping) else {}
    name, message = str(error.get("error", "")), str(error.get("message", run.get("status")))
    if name == "ValidationError" and seen.interrupts:
        raise schema_refusal(seen.interrupts, message)
    raise RemoteRunError(
        f"run {run.get('run_id')} of thread {thread_id!r} ended with status "
        f"{run.get('status')!r}: {name + ': ' if name else ''}{message}"
    )


def _answers_any(run: Mapping[str, Any], interrupt_ids: Collection[str]) -> bool:
    """Whether ``run`` may have answered one of ``interrupt_ids`` (True unless its command
    names other interrupt ids only)."""
    command = (run.get("kwargs") or {}).get("command") or {}
    resume = command.get("resume") if isinstance(command, Mapping) else None
    if isinstance(resume, Mapping) and all(_INTERRUPT_ID.fullmatch(str(k)) for k in resume):
        return bool(set(map(str, resume)) & set(interrupt_ids))
    return True  # new input, a plain resume value, or no command: it moved the thread


def _runs_between(
    runs: Sequence[Mapping[str, Any]],
    run_id: str,
    since: str | None,
    interrupt_ids: Collection[str],
    *,
    complete: bool,
) -> bool | None:
    """Whether a run created after ``since`` and before ``run_id`` answered one of
    ``interrupt_ids`` first (``runs`` newest first); None when more runs must be read."""
    ids = [str(r["run_id"]) for r in runs]
    if run_id not in ids:
        return None if not complete else True
    for run in runs[ids.index(run_id) + 1 :]:
        if since is not None and str(run["run_id"]) == since:
            return False
        # a failed run (a decision its schema refused) applied nothing
        if run.get("status") != "error" and _answers_any(run, interrupt_ids):
            return True
    return None if not complete and since is not None else False


def _messages(values: Mapping[str, Any]) -> list[BaseMessage]:
    return convert_to_messages(values.get("messages") or [])


def _result(thread_id: str, seen: _Seen, max_steps: int, state: AgentState | None) -> AgentResult:
    values = {**seen.values, "messages": _messages(seen.values)}
    if state is not None and isinstance(values.get("shared"), Mapping):
        state.data.clear()
        state.data.update(values["shared"])
    return build_result(
        values, seen.interrupts, thread_id=thread_id, max_steps=max_steps, system_prompt=None
    )


@contextmanager
def _translated(url: str, thread_id: str | None, doing: str) -> Iterator[None]:
    """HTTP failures -> this package's errors, with what to do next."""
    try:
        yield
    except httpx.HTTPStatusError as error:
        status = error.response.status_code
        if status == 409 and thread_id is not None:
            raise _busy(thread_id) from error
        try:
            body = error.response.text
        except httpx.ResponseNotRead:
            body = ""
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


def _not_found(error: httpx.HTTPStatusError) -> bool:
    return error.response.status_code == 404


class RemoteReActAgent:
    """dynavec's ``run`` / ``resume`` against an agent served by a LangGraph API deployment.

    Args:
        url: the server (or load balancer), e.g. ``"http://127.0.0.1:2024"``.
        assistant_id: the graph id of ``langgraph.json`` (e.g. ``"dynavec_agent"``) or an
            assistant's id.
        api_key: sent as ``x-api-key``; ``None`` sends none (environment keys are not read).
        headers: extra HTTP headers for every request.
        timeout: seconds to wait for one answer of the server, a run's wait included.
        max_steps: the graph's step budget, reported as ``total_steps`` when a run runs out.

    Raises:
        ImportError: ``langgraph_sdk`` is missing (install the ``studio`` extra).

    Example:
        >>> agent = RemoteReActAgent("http://127.0.0.1:2024", "dynavec_agent")
        >>> agent.assistant_id
        'dynavec_agent'
    """

    def __init__(
        self,
        url: str,
        assistant_id: str,
        *,
        api_key: str | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_steps: int = 10,
    ) -> None:
        try:
            from langgraph_sdk import get_client, get_sync_client
        except ImportError as error:
            raise ImportError(
                f"RemoteReActAgent needs langgraph_sdk, which the 'studio' extra installs: {_EXTRA}"
            ) from error
        self.url = url.rstrip("/")
        self.assistant_id = assistant_id
        self.max_steps = max_steps
        connect = min(timeout, 5.0)
        limits = (connect, timeout, timeout, connect)  # connect, read, write, pool
        kwargs: dict[str, Any] = {"url": self.url, "api_key": api_key, "headers": headers}
        self.client: LangGraphClient = get_client(**kwargs, timeout=limits)
        """The ``langgraph_sdk`` async client (for what this class does not wrap)."""
        self.sync_client: SyncLangGraphClient = get_sync_client(**kwargs, timeout=limits)
        """The ``langgraph_sdk`` sync client."""

    # --- run --------------------------------------------------------------------------

    def run(
        self, goal: str, *, thread_id: str | None = None, state: AgentState | None = None
    ) -> AgentResult:
        """Run the agent on ``goal`` in ``thread_id`` (a new thread when None).

        Raises:
            ThreadPausedError: the thread waits for a decision; call :meth:`resume`.
            ConcurrentResumeError: another run of the thread is in flight (nothing sent).
            ServerUnavailableError: the server cannot be reached or did not answer in time.
            RemoteRunError: the run failed on the server.
        """
        _check_input(thread_id, goal, state)
        tid = thread_id or str(uuid.uuid4())
        sid = server_thread_id(tid)
        with _translated(self.url, tid, f"running thread {tid!r}"):
            self.sync_client.threads.create(thread_id=sid, if_exists="do_nothing")
            seen = _seen(self.sync_client.threads.get_state(sid))
            refuse_if_paused(tid, seen.interrupts)
            run = self.sync_client.runs.create(
                sid, self.assistant_id, input=_run_input(goal, state), **_RUN_OPTIONS
            )
            joined = self.sync_client.runs.join(sid, run["run_id"])
            _check_run(tid, self.sync_client.runs.get(sid, run["run_id"]), joined, seen)
            after = _seen(self.sync_client.threads.get_state(sid))
            refuse_if_asked_again(seen.interrupts, after.interrupts)
        return _result(tid, after, self.max_steps, state)

    async def arun(
        self, goal: str, *, thread_id: str | None = None, state: AgentState | None = None
    ) -> AgentResult:
        """Async twin of :meth:`run`."""
        _check_input(thread_id, goal, state)
        tid = thread_id or str(uuid.uuid4())
        sid = server_thread_id(tid)
        with _translated(self.url, tid, f"running thread {tid!r}"):
            await self.client.threads.create(thread_id=sid, if_exists="do_nothing")
            seen = _seen(await self.client.threads.get_state(sid))
            refuse_if_paused(tid, seen.interrupts)
            run = await self.client.runs.create(
                sid, self.assistant_id, input=_run_input(goal, state), **_RUN_OPTIONS
            )
            joined = await self.client.runs.join(sid, run["run_id"])
            _check_run(tid, await self.client.runs.get(sid, run["run_id"]), joined, seen)
            after = _seen(await self.client.threads.get_state(sid))
            refuse_if_asked_again(seen.interrupts, after.interrupts)
        return _result(tid, after, self.max_steps, state)

    # --- resume -----------------------------------------------------------------------

    def resume(
        self,
        human_decision: Any = MISSING,
        *,
        thread_id: str | None = None,
        decisions: Mapping[str, Any] | None = None,
        state: AgentState | None = None,
    ) -> AgentResult:
        """Answer the pause of ``thread_id`` with ``human_decision`` (or ``decisions={node_id
        or interrupt_id: decision}`` when several are pending), then let the run go on.

        Raises:
            NothingToResumeError: no thread id, an unknown thread, or one not paused.
            InvalidDecisionError: no decision, several pending for one decision, decisions
                naming what is not pending, or one the pause's ``response_schema`` refuses
                (nothing saved, still paused).
            ConcurrentResumeError: another caller is resuming (or just resumed) the thread;
                this decision was not applied.
            ServerUnavailableError: the server cannot be reached or did not answer in time.
            RemoteRunError: the run failed on the server.
        """
        _check_input(thread_id, decision=human_decision, decisions=decisions)
        tid = _thread(thread_id)
        sid = server_thread_id(tid)
        with _translated(self.url, tid, f"resuming thread {tid!r}"):
            seen = self._state(sid)
            resume = _resume_map(tid, seen, human_decision, decisions)
            run = self.sync_client.runs.create(
                sid, self.assistant_id, command={"resume": resume}, **_RUN_OPTIONS
            )
            joined = self.sync_client.runs.join(sid, run["run_id"])
            _check_run(tid, self.sync_client.runs.get(sid, run["run_id"]), joined, seen)
            self._check_won(sid, tid, seen, str(run["run_id"]), resume)
            after = _seen(self.sync_client.threads.get_state(sid))
            refuse_if_asked_again(seen.interrupts, after.interrupts)
        return _result(tid, after, self.max_steps, state)

    async def aresume(
        self,
        human_decision: Any = MISSING,
        *,
        thread_id: str | None = None,
        decisions: Mapping[str, Any] | None = None,
        state: AgentState | None = None,
    ) -> AgentResult:
        """Async twin of :meth:`resume`."""
        _check_input(thread_id, decision=human_decision, decisions=decisions)
        tid = _thread(thread_id)
        sid = server_thread_id(tid)
        with _translated(self.url, tid, f"resuming thread {tid!r}"):
            seen = await self._astate(sid)
            resume = _resume_map(tid, seen, human_decision, decisions)
            run = await self.client.runs.create(
                sid, self.assistant_id, command={"resume": resume}, **_RUN_OPTIONS
            )
            joined = await self.client.runs.join(sid, run["run_id"])
            _check_run(tid, await self.client.runs.get(sid, run["run_id"]), joined, seen)
            await self._acheck_won(sid, tid, seen, str(run["run_id"]), resume)
            after = _seen(await self.client.threads.get_state(sid))
            refuse_if_asked_again(seen.interrupts, after.interrupts)
        return _result(tid, after, self.max_steps, state)

    # --- reading ----------------------------------------------------------------------

    def result(self, thread_id: str) -> AgentResult:
        """The thread's result as it stands (paused, finished or still running); runs nothing.

        Raises:
            NothingToResumeError: an unknown thread.
        """
        with _translated(self.url, thread_id, f"reading thread {thread_id!r}"):
            seen = self._state(server_thread_id(thread_id))
        return _result(thread_id, _known(thread_id, seen), self.max_steps, None)

    async def aresult(self, thread_id: str) -> AgentResult:
        """Async twin of :meth:`result`."""
        with _translated(self.url, thread_id, f"reading thread {thread_id!r}"):
            seen = await self._astate(server_thread_id(thread_id))
        return _result(thread_id, _known(thread_id, seen), self.max_steps, None)

    # --- connections ------------------------------------------------------------------

    def close(self) -> None:
        """Close the sync client's connections (the async ones: :meth:`aclose`)."""
        self.sync_client.close()

    async def aclose(self) -> None:
        """Close the connections of both clients."""
        self.sync_client.close()
        await self.client.aclose()

    def __enter__(self) -> RemoteReActAgent:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> RemoteReActAgent:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # --- the I/O lines of the twins ---------------------------------------------------

    def _state(self, thread_id: str) -> _Seen:
        """The thread's state (its status too when nothing is pending; its newest run, read
        first); unknown thread: ``exists`` False."""
        try:
            last = self.sync_client.runs.list(thread_id, limit=1, select=["run_id"])
            state = self.sync_client.threads.get_state(thread_id)
            status = None if state.get("interrupts") else self.sync_client.threads.get(thread_id)
        except httpx.HTTPStatusError as error:
            if _not_found(error):
                return _seen(None)
            raise
        return _seen(state, status and status.get("status"), _run_id(last))

    async def _astate(self, thread_id: str) -> _Seen:
        try:
            last = await self.client.runs.list(thread_id, limit=1, select=["run_id"])
            state = await self.client.threads.get_state(thread_id)
            status = None if state.get("interrupts") else await self.client.threads.get(thread_id)
        except httpx.HTTPStatusError as error:
            if _not_found(error):
                return _seen(None)
            raise
        return _seen(state, status and status.get("status"), _run_id(last))

    def _check_won(
        self, sid: str, thread_id: str, seen: _Seen, run_id: str, answered: Collection[str]
    ) -> None:
        """Raise ConcurrentResumeError when another run answered the pause ``seen`` first:
        with ``multitask_strategy="reject"`` runs of a thread never overlap, so a run created
        between the read of the pause and this one (and not failed) came first."""
        runs: list[Mapping[str, Any]] = []
        while True:
            page = self.sync_client.runs.list(sid, limit=_RUNS_PAGE, offset=len(runs))
            runs += page
            found = _runs_between(
                runs, run_id, seen.last_run_id, answered, complete=len(page) < _RUNS_PAGE
            )
            if found is not None:
                break
        if found:
            raise _lost(thread_id)

    async def _acheck_won(
        self, sid: str, thread_id: str, seen: _Seen, run_id: str, answered: Collection[str]
    ) -> None:
        runs: list[Mapping[str, Any]] = []
        while True:
            page = await self.client.runs.list(sid, limit=_RUNS_PAGE, offset=len(runs))
            runs += page
            found = _runs_between(
                runs, run_id, seen.last_run_id, answered, complete=len(page) < _RUNS_PAGE
            )
            if found is not None:
                break
        if found:
            raise _lost(thread_id)


def _run_id(runs: Sequence[Mapping[str, Any]]) -> str | None:
    return str(runs[0]["run_id"]) if runs else None


_RUN_OPTIONS: dict[str, Any] = {"multitask_strategy": "reject", "durability": "sync"}


def server_thread_id(thread_id: str) -> str:
    """The server's id for ``thread_id``: itself when it is a UUID (the server's ids are),
    else a UUID derived from it, so ``thread_id="t1"`` names the same thread every time.

    >>> server_thread_id("t1") == server_thread_id("t1") != server_thread_id("t2")
    True
    >>> server_thread_id("1f1ed19a-2c98-6658-8002-e533ae5ca1a4")
    '1f1ed19a-2c98-6658-8002-e533ae5ca1a4'
    """
    try:
        return str(uuid.UUID(thread_id))
    except ValueError:
        return str(uuid.uuid5(_THREAD_NAMESPACE, thread_id))


_THREAD_NAMESPACE = uuid.UUID("6f1c5b0e-4d1a-5c3e-9a57-1d2f0e6b7a10")


def _thread(thread_id: str | None) -> str:
    if thread_id is None:
        raise NothingToResumeError(
            "nothing to resume: pass thread_id= of a paused thread (RemoteReActAgent resumes "
            "threads kept by the server)"
        )
    return thread_id


def _known(thread_id: str, seen: _Seen) -> _Seen:
    if not seen.exists:
        raise NothingToResumeError(f"unknown thread {thread_id!r} on the server")
    return seen
