"""The server calls a remote agent's twins make: a thread's state and notes, a run's wait, who
answered a pause first."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Any

import httpx

from dynavec_langgraph._exactly_once.marks import NOTE_NS
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
from dynavec_langgraph._types import JSONMapping, JSONObject

if TYPE_CHECKING:
    from langgraph_sdk.client import LangGraphClient, SyncLangGraphClient


class ServerThreads:
    """The server calls of ``RemoteReActAgent``'s sync and async twins: a thread's state and
    notes, a run's wait, the in-doubt question asked first, who answered a pause first."""

    sync_client: SyncLangGraphClient
    client: LangGraphClient
    assistant_id: str
    timeout: float
    _run_options: JSONObject

    def _wait(self, sid: str, run_id: str) -> tuple[Any, JSONMapping]:
        """Join the run until it is no longer in flight (a join may return early: Aegra's
        returns after 30 s, or at once when another server runs it), at most ``timeout``."""
        deadline = time.monotonic() + self.timeout
        while True:
            joined = self.sync_client.runs.join(sid, run_id)
            run = self.sync_client.runs.get(sid, run_id)
            if run.get("status") not in IN_FLIGHT or time.monotonic() > deadline:
                return joined, run
            time.sleep(POLL)

    async def _await(self, sid: str, run_id: str) -> tuple[Any, JSONMapping]:
        deadline = time.monotonic() + self.timeout
        while True:
            joined = await self.client.runs.join(sid, run_id)
            run = await self.client.runs.get(sid, run_id)
            if run.get("status") not in IN_FLIGHT or time.monotonic() > deadline:
                return joined, run
            await asyncio.sleep(POLL)

    def _state(self, thread_id: str) -> Seen:
        """The thread's state (its status too when nothing is pending; its newest run, read
        first); unknown thread: ``exists`` False."""
        try:
            last = self.sync_client.runs.list(thread_id, limit=1, select=["run_id"])
            state = self.sync_client.threads.get_state(thread_id, subgraphs=True)
            status = None if state.get("interrupts") else self.sync_client.threads.get(thread_id)
            now = status and status.get("status")
            if now == "error" and self._was_refused(thread_id):
                now = "idle"
            notes = self._notes(thread_id, state)
        except httpx.HTTPStatusError as error:
            if not_found(error):
                return thread_seen(None)
            raise
        return thread_seen(state, now, _run_id(last), notes)

    def _notes(self, thread_id: str, state: JSONMapping) -> list[JSONMapping]:
        """The notes of ``"ask"`` calls left in the server's store for a paused thread (none
        read when nothing is pending). A server that keeps its store from these credentials
        (HTTP 403 / 404) gives none: its views then show the thread state as it is."""
        if not state.get("interrupts"):
            return []
        try:
            found = self.sync_client.store.search_items((NOTE_NS, thread_id), limit=NOTES_LIMIT)
        except httpx.HTTPStatusError as error:
            if error.response.status_code in (403, 404):
                return []
            raise
        return note_values(found)

    async def _anotes(self, thread_id: str, state: JSONMapping) -> list[JSONMapping]:
        """Async twin of :meth:`_notes`."""
        if not state.get("interrupts"):
            return []
        try:
            found = await self.client.store.search_items((NOTE_NS, thread_id), limit=NOTES_LIMIT)
        except httpx.HTTPStatusError as error:
            if error.response.status_code in (403, 404):
                return []
            raise
        return note_values(found)

    def _viewed(self, thread_id: str) -> Seen:
        """The thread state as the views show it (:func:`thread_seen` with the notes)."""
        state = self.sync_client.threads.get_state(thread_id, subgraphs=True)
        return thread_seen(state, notes=self._notes(thread_id, state))

    async def _aviewed(self, thread_id: str) -> Seen:
        state = await self.client.threads.get_state(thread_id, subgraphs=True)
        return thread_seen(state, notes=await self._anotes(thread_id, state))

    def _ask_first(self, sid: str, tid: str, seen: Seen, answer: Answer) -> Seen:
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
        run = self.sync_client.runs.create(
            sid, self.assistant_id, command={"update": {"messages": []}}, **self._run_options
        )
        self._wait(sid, str(run["run_id"]))
        after = self._state(sid)
        in_doubt_first(answer, tid, Listed(seen.stale), asked(seen), Listed(after.interrupts))
        return after

    async def _aask_first(self, sid: str, tid: str, seen: Seen, answer: Answer) -> Seen:
        """Async twin of :meth:`_ask_first`."""
        run = await self.client.runs.create(
            sid, self.assistant_id, command={"update": {"messages": []}}, **self._run_options
        )
        await self._await(sid, str(run["run_id"]))
        after = await self._astate(sid)
        in_doubt_first(answer, tid, Listed(seen.stale), asked(seen), Listed(after.interrupts))
        return after

    def _was_refused(self, sid: str) -> bool:
        """Whether the failed runs that may have left the thread's ``error`` status are all
        resumes the tool node's claim refused: then the state is the winner's, valid."""
        failed = failures_since_last_result(self.sync_client.runs.list(sid, limit=RECENT))
        for run in failed:
            rid = str(run["run_id"])
            joined = None if run.get("error_message") else self.sync_client.runs.join(sid, rid)
            if not refusal(run, joined):
                return False
        return bool(failed)

    async def _awas_refused(self, sid: str) -> bool:
        failed = failures_since_last_result(await self.client.runs.list(sid, limit=RECENT))
        for run in failed:
            rid = str(run["run_id"])
            joined = None if run.get("error_message") else await self.client.runs.join(sid, rid)
            if not refusal(run, joined):
                return False
        return bool(failed)

    async def _astate(self, thread_id: str) -> Seen:
        try:
            last = await self.client.runs.list(thread_id, limit=1, select=["run_id"])
            state = await self.client.threads.get_state(thread_id, subgraphs=True)
            status = None if state.get("interrupts") else await self.client.threads.get(thread_id)
            now = status and status.get("status")
            if now == "error" and await self._awas_refused(thread_id):
                now = "idle"
            notes = await self._anotes(thread_id, state)
        except httpx.HTTPStatusError as error:
            if not_found(error):
                return thread_seen(None)
            raise
        return thread_seen(state, now, _run_id(last), notes)

    def _check_won(
        self, sid: str, thread_id: str, seen: Seen, run_id: str, answered: Collection[str]
    ) -> None:
        """Raise ConcurrentResumeError when another run answered the pause ``seen`` first:
        with ``multitask_strategy="reject"`` runs of a thread never overlap, so a run created
        between the read of the pause and this one (and not failed) came first."""
        deadline = time.monotonic() + self.timeout
        while True:
            runs: list[JSONMapping] = []
            while True:
                page = self.sync_client.runs.list(sid, limit=RUNS_PAGE, offset=len(runs))
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
            time.sleep(POLL)  # an overlapping run (Aegra): its outcome decides
        writer = self._first_writer(sid, seen.checkpoint_id)
        if writer is not None:
            found = writer != run_id
        if found:
            raise lost(thread_id)

    def _first_writer(self, sid: str, paused: str | None) -> str | None:
        """The run that wrote the first checkpoint after the paused one (see
        :func:`writer_after`)."""
        before: str | None = None
        writer: str | None = None
        for _ in range(HISTORY_PAGES):
            page = self.sync_client.threads.get_history(sid, limit=HISTORY_PAGE, before=before)
            writer, before = writer_after(page, paused, writer)
            if before is None:
                break
        return writer

    async def _afirst_writer(self, sid: str, paused: str | None) -> str | None:
        before: str | None = None
        writer: str | None = None
        for _ in range(HISTORY_PAGES):
            page = await self.client.threads.get_history(sid, limit=HISTORY_PAGE, before=before)
            writer, before = writer_after(page, paused, writer)
            if before is None:
                break
        return writer

    async def _acheck_won(
        self, sid: str, thread_id: str, seen: Seen, run_id: str, answered: Collection[str]
    ) -> None:
        deadline = time.monotonic() + self.timeout
        while True:
            runs: list[JSONMapping] = []
            while True:
                page = await self.client.runs.list(sid, limit=RUNS_PAGE, offset=len(runs))
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
            await asyncio.sleep(POLL)
        writer = await self._afirst_writer(sid, seen.checkpoint_id)
        if writer is not None:
            found = writer != run_id
        if found:
            raise lost(thread_id)


def _run_id(runs: Sequence[JSONMapping]) -> str | None:
    return str(runs[0]["run_id"]) if runs else None
