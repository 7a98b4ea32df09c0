"""The server calls a remote agent's twins make: a thread's state and notes, a run's wait, who
answered a pause first.

Each is written once, as a plan (:data:`Plan`: a generator of the requests it makes, given each
answer); :meth:`ServerThreads.sent` makes them with ``langgraph_sdk``'s sync client and
:meth:`ServerThreads.asent` with its async one, the way httpx builds ``Client`` and
``AsyncClient`` on one core."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Collection, Generator, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

import httpx

from dynavec_langgraph._names import NOTE_NS
from dynavec_langgraph._plans import PlanRun
from dynavec_langgraph._remote.errors import lost, not_found
from dynavec_langgraph._remote.runs import (
    HISTORY_PAGE,
    HISTORY_PAGES,
    IN_FLIGHT,
    POLL,
    RECENT,
    RUNS_PAGE,
    failures_since_last_result,
    refusal,
    runs_between,
    unsettled,
    writer_after,
)
from dynavec_langgraph._remote.threads import (
    NOTES_LIMIT,
    Listed,
    Seen,
    asked,
    note_values,
    thread_seen,
)
from dynavec_langgraph._resuming.answers import Answer, in_doubt_first
from dynavec_langgraph._types import ForeignObject, JSONMapping, JSONObject

if TYPE_CHECKING:
    from langgraph_sdk.client import LangGraphClient, SyncLangGraphClient

__all__ = ["Call", "Plan", "ServerThreads", "call"]

T = TypeVar("T")


@dataclass(frozen=True)
class Call:
    """One request of a plan: ``client.<group>.<method>(*args, **kwargs)``, the same on
    ``langgraph_sdk``'s sync and async clients (``threads``, ``runs``, ``store``, ``http``)."""

    group: str
    method: str
    args: tuple[object, ...]
    kwargs: Mapping[str, object]

    def on(self, client: ForeignObject) -> ForeignObject:
        """The call on ``client``: its answer (the async client's: to await)."""
        return getattr(getattr(client, self.group), self.method)(*self.args, **self.kwargs)


@dataclass(frozen=True)
class _Pause:
    """A plan's wait before it polls again."""

    seconds: float


Plan = Generator[Call | _Pause, ForeignObject, T]
"""A server exchange written once: it yields its requests (:func:`call`) and waits
(:data:`POLL`), is sent each answer (the SDK's JSON) or has the request's error thrown in,
and returns what it read."""


def call(group: str, method: str, /, *args: object, **kwargs: object) -> Call:
    return Call(group, method, args, kwargs)


def _poll() -> _Pause:
    return _Pause(POLL)


@contextmanager
def _answering(run: PlanRun[Call | _Pause, T]) -> Iterator[None]:
    """A request's failure goes back into the plan, which handles it or raises it on."""
    try:
        yield
    except Exception as error:
        run.error = error


class ServerThreads:
    """The server calls of ``RemoteReActAgent``'s sync and async twins, each a :data:`Plan`
    that :meth:`sent` and :meth:`asent` run: a thread's state and notes, a run's wait, the
    in-doubt question asked first, who answered a pause first."""

    sync_client: SyncLangGraphClient
    client: LangGraphClient
    assistant_id: str
    timeout: float
    _run_options: JSONObject

    def sent(self, plan: Plan[T]) -> T:
        """Run ``plan`` on the sync client."""
        run = PlanRun(plan)
        for step in run:
            with _answering(run):
                run.answer = _sleep(step) if isinstance(step, _Pause) else step.on(self.sync_client)
        return run.result

    async def asent(self, plan: Plan[T]) -> T:
        """Run ``plan`` on the async client."""
        run = PlanRun(plan)
        for step in run:
            with _answering(run):
                run.answer = await (
                    _asleep(step) if isinstance(step, _Pause) else step.on(self.client)
                )
        return run.result

    def waiting(self, sid: str, run_id: str) -> Plan[tuple[ForeignObject, JSONMapping]]:
        """Join the run until it is no longer in flight (a join may return early: Aegra's
        returns after 30 s, or at once when another server runs it), at most ``timeout``."""
        deadline = time.monotonic() + self.timeout
        while True:
            joined = yield call("runs", "join", sid, run_id)
            run = yield call("runs", "get", sid, run_id)
            if run.get("status") not in IN_FLIGHT or time.monotonic() > deadline:
                return joined, run
            yield _poll()

    def reading(self, thread_id: str) -> Plan[Seen]:
        """The thread's state (its status too when nothing is pending; its newest run, read
        first); unknown thread: ``exists`` False."""
        try:
            last = yield call("runs", "list", thread_id, limit=1, select=["run_id"])
            state = yield call("threads", "get_state", thread_id, subgraphs=True)
            status = None if state.get("interrupts") else (yield call("threads", "get", thread_id))
            now = status and status.get("status")
            if now == "error" and (yield from self._refused(thread_id)):
                now = "idle"
            notes = yield from self.noting(thread_id, state)
        except httpx.HTTPStatusError as error:
            if not_found(error):
                return thread_seen(None)
            raise
        return thread_seen(state, now, _run_id(last), notes)

    def noting(self, thread_id: str, state: JSONMapping) -> Plan[list[JSONMapping]]:
        """The notes of ``"ask"`` calls left in the server's store for a paused thread (none
        read when nothing is pending). A server that keeps its store from these credentials
        (HTTP 403 / 404) gives none: its views then show the thread state as it is."""
        if not state.get("interrupts"):
            return []
        try:
            found = yield call("store", "search_items", (NOTE_NS, thread_id), limit=NOTES_LIMIT)
        except httpx.HTTPStatusError as error:
            if error.response.status_code in (403, 404):
                return []
            raise
        return note_values(found)

    def viewing(self, thread_id: str) -> Plan[Seen]:
        """The thread state as the views show it (:func:`thread_seen` with the notes)."""
        state = yield call("threads", "get_state", thread_id, subgraphs=True)
        return thread_seen(state, notes=(yield from self.noting(thread_id, state)))

    def asking_first(self, sid: str, tid: str, seen: Seen, answer: Answer) -> Plan[Seen]:
        """``seen`` shows an in-doubt question the server's state does not list yet (the run
        that answered the pause died while the approved call ran): continue the thread first,
        without a decision (the server's run asks that question; nothing runs: a command that
        adds no message, like ``graph.invoke(None, config)``, as Aegra refuses ``input=None``
        and LangGraph an empty command), then let
        ``answer`` go on only if it names that question, as ``ReActAgent.resume`` does.

        Raises:
            StaleDecisionError: ``answer`` does not name the in-doubt question; nothing was
                applied, nothing ran, and the question is pending now.
        """
        command: JSONObject = {"update": {"messages": []}}
        run = yield call(
            "runs", "create", sid, self.assistant_id, command=command, **self._run_options
        )
        yield from self.waiting(sid, str(run["run_id"]))
        after = yield from self.reading(sid)
        in_doubt_first(answer, tid, Listed(seen.stale), asked(seen), Listed(after.interrupts))
        return after

    def _refused(self, sid: str) -> Plan[bool]:
        """Whether the failed runs that may have left the thread's ``error`` status are all
        resumes the tool node's claim refused: then the state is the winner's, valid."""
        failed = failures_since_last_result((yield call("runs", "list", sid, limit=RECENT)))
        for run in failed:
            rid = str(run["run_id"])
            joined = None if run.get("error_message") else (yield call("runs", "join", sid, rid))
            if not refusal(run, joined):
                return False
        return bool(failed)

    def checking_won(
        self, sid: str, thread_id: str, seen: Seen, run_id: str, answered: Collection[str]
    ) -> Plan[None]:
        """Raise ConcurrentResumeError when another run answered the pause ``seen`` first:
        with ``multitask_strategy="reject"`` runs of a thread never overlap, so a run created
        between the read of the pause and this one (and not failed) came first."""
        deadline = time.monotonic() + self.timeout
        while True:
            runs: list[JSONMapping] = []
            while True:
                page = yield call("runs", "list", sid, limit=RUNS_PAGE, offset=len(runs))
                runs += page
                found = runs_between(
                    runs, run_id, seen.last_run_id, answered, complete=len(page) < RUNS_PAGE
                )
                if found is not None:
                    break
            if not found or not unsettled(runs, run_id, seen.last_run_id):
                break
            if time.monotonic() > deadline:
                break
            yield _poll()  # an overlapping run (Aegra): its outcome decides
        writer = yield from self._first_writer(sid, seen.checkpoint_id)
        if writer is not None:
            found = writer != run_id
        if found:
            raise lost(thread_id)

    def _first_writer(self, sid: str, paused: str | None) -> Plan[str | None]:
        """The run that wrote the first checkpoint after the paused one (see
        :func:`writer_after`)."""
        before: str | None = None
        writer: str | None = None
        for _ in range(HISTORY_PAGES):
            page = yield call("threads", "get_history", sid, limit=HISTORY_PAGE, before=before)
            writer, before = writer_after(page, paused, writer)
            if before is None:
                break
        return writer


def _sleep(pause: _Pause) -> ForeignObject:
    """Wait ``pause`` (its answer: nothing)."""
    time.sleep(pause.seconds)
    return None


async def _asleep(pause: _Pause) -> None:
    await asyncio.sleep(pause.seconds)


def _run_id(runs: Sequence[JSONMapping]) -> str | None:
    return str(runs[0]["run_id"]) if runs else None
