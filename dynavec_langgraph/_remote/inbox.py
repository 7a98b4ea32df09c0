"""The approvals inbox against a LangGraph API deployment (``inbox ... --server URL``).

The same rows and refusals as the database inbox (:mod:`dynavec_langgraph._approvals.inbox`), read
and answered through the server's API, never by touching its database: listing searches the
interrupted threads (with the caller's credentials, so a server with auth applies its thread
rules and lists only the threads the signed-in user may read), answering goes through
:class:`~dynavec_langgraph.remote.RemoteReActAgent` (one run keyed by the interrupt id, refused
when another caller answered first). Needs ``langgraph_sdk`` (the ``studio`` extra).
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import httpx
from langgraph.types import Interrupt

from dynavec_langgraph._approvals.inbox import SEVERAL_HINT, InboxError, PendingApproval
from dynavec_langgraph._dynavec.records import AgentResult
from dynavec_langgraph._errors import NothingToResumeError, not_paused_text
from dynavec_langgraph._names import PROG
from dynavec_langgraph._pauses.digest import review_digest
from dynavec_langgraph._pauses.value import interrupt_fields
from dynavec_langgraph._remote.agent import RemoteReActAgent
from dynavec_langgraph._remote.errors import unknown_thread_text
from dynavec_langgraph._remote.requests import check_server_url, server_thread_id
from dynavec_langgraph._remote.threads import thread_seen
from dynavec_langgraph._resuming.answers import Answer
from dynavec_langgraph._types import JSONMapping, UserPayload

if TYPE_CHECKING:
    from dynavec_langgraph._types import Approver

__all__ = ["ServerInbox"]

_PAGE = 100


def _rows(thread_id: str, state: JSONMapping, shown: Sequence[Interrupt]) -> list[PendingApproval]:
    """The rows of the pauses ``shown`` (the thread's, as the views show them)."""
    rows: list[PendingApproval] = []
    for item in shown:
        fields = interrupt_fields(item.value)
        rows.append(
            PendingApproval(
                thread_id=thread_id,
                node_id=fields.node_id or "",
                payload=fields.payload,
                since=str(state.get("created_at") or ""),
                tool_call=fields.tool_call,
                interrupt_id=str(item.id),
                review_digest=review_digest(item.value),
            )
        )
    return rows


def _doubts(seen: Any) -> list[Interrupt]:
    """The pauses ``seen`` shows as in-doubt questions."""
    stale = {i.id for i in seen.stale}
    return [i for i in seen.interrupts if i.id in stale]


def _runs_assistant(thread: JSONMapping, assistant: str) -> bool:
    metadata = thread.get("metadata") or {}
    return assistant in (metadata.get("graph_id"), metadata.get("assistant_id"))


class ServerInbox:
    """The pending approvals of a deployment, and answers to them.

    Args:
        url: the LangGraph API server.
        assistant: list only threads run by this graph id / assistant id, and answer with
            it; ``None``: every thread, each answered with the assistant that ran it.
        api_key: sent as ``x-api-key``.
        headers: extra HTTP headers for every request, e.g. ``{"Authorization": "Bearer
            TOKEN"}`` for a server with custom auth (whose signed-in user is the approver).
    """

    def __init__(
        self,
        url: str,
        assistant: str | None = None,
        *,
        api_key: str | None = None,
        headers: Mapping[str, str] | None = None,
    ):
        self.url = check_server_url(url, "--server")
        self.assistant = assistant
        self.api_key = api_key
        self.headers = dict(headers) if headers else None
        try:  # the reader only reads; answers go through a RemoteReActAgent of the assistant
            self._reader = RemoteReActAgent(
                self.url, assistant or "", api_key=api_key, headers=self.headers
            )
        except ImportError as error:
            raise InboxError(f"--server: {error}") from None

    def _list_hint(self) -> str:
        return f"`{PROG} inbox list --server {shlex.quote(self.url)}` shows the paused threads"

    def pending(self) -> list[PendingApproval]:
        """Every pending approval, newest thread first: the paused threads' pauses, each
        whose approved call's run died while the call ran shown as the call's in-doubt
        question (``RemoteReActAgent``'s views), and the in-doubt questions of busy threads
        (a run that died stays in flight on an engine without run recovery).

        Raises:
            InboxError: the server cannot be reached or refused the request.
        """
        rows: list[PendingApproval] = []
        with _as_inbox_errors():
            for status in ("interrupted", "busy"):
                rows += self._pending(status)
        return rows

    def _pending(self, status: str) -> list[PendingApproval]:
        client = self._reader.sync_client
        rows: list[PendingApproval] = []
        offset = 0
        while True:
            threads = client.threads.search(
                status=status,  # type: ignore[arg-type]
                limit=_PAGE,
                offset=offset,
                sort_by="updated_at",
                sort_order="desc",
            )
            for thread in threads:
                if self.assistant is not None and not _runs_assistant(thread, self.assistant):
                    continue
                tid = str(thread["thread_id"])
                state = client.threads.get_state(tid, subgraphs=True)
                if status == "busy" and not state.get("interrupts"):
                    continue
                seen = thread_seen(state, notes=self._reader.sent(self._reader.noting(tid, state)))
                shown = seen.interrupts if status != "busy" else _doubts(seen)
                rows += _rows(tid, state, shown)
            if len(threads) < _PAGE:
                return rows
            offset += _PAGE

    def answer(
        self,
        thread_id: str,
        decision: UserPayload,
        node: str | None,
        *,
        before: Callable[[], None] | None = None,
        approver: Approver = None,
        link: str | None = None,
    ) -> AgentResult:
        """Answer one approval of ``thread_id`` (``node``: which, when several are pending;
        ``link``: a signed approval link's token, which names its pause and approver).

        ``before`` is called once the checks passed, right before the answer is sent.

        Raises:
            NothingToResumeError: an unknown thread, or one not paused.
            InvalidDecisionError: several pending and no ``node``, a ``node`` not pending,
                or a decision the pause's schema refuses (see ``inbox.resume_graph``).
            ConcurrentResumeError: another caller answered first.
            InboxError: a server that cannot be reached or refused the request, or a thread
                that records no graph; nothing was changed.
        """
        client = self._reader.sync_client
        with _as_inbox_errors():
            sid = server_thread_id(thread_id)
            try:
                thread = client.threads.get(sid)
            except httpx.HTTPStatusError as error:
                if error.response.status_code == 404:
                    raise NothingToResumeError(
                        f"{unknown_thread_text(thread_id, 'nothing to resume')}. "
                        f"{self._list_hint()}"
                    ) from None
                raise
            state = client.threads.get_state(sid, subgraphs=True)
            seen = thread_seen(state, notes=self._reader.sent(self._reader.noting(sid, state)))
            interrupts = seen.interrupts
            if not interrupts:
                raise NothingToResumeError(not_paused_text(thread_id, f". {self._list_hint()}"))
            if link is None:  # the decision checks of the guarded resume
                Answer(decision, node=node, several=SEVERAL_HINT, approver=approver).command(
                    interrupts, None
                )
            key = node if node is not None else interrupts[0].id
            assistant = self.assistant or (thread.get("metadata") or {}).get("graph_id")
            if not assistant:
                raise InboxError(
                    f"thread {thread_id!r} records no graph: pass --assistant ID (the graph id "
                    "of langgraph.json); nothing was changed"
                )
            with RemoteReActAgent(
                self.url, str(assistant), api_key=self.api_key, headers=self.headers
            ) as agent:
                if before is not None:
                    before()
                if link is not None:  # the link's pause, found by its review digest
                    return agent.resume(thread_id=thread_id, link=link)
                if seen.stale and node is None:  # its in-doubt question comes first: an
                    # answer naming neither is refused there (StaleDecisionError)
                    return agent.resume(decision, thread_id=thread_id, approver=approver)
                return agent.resume(
                    thread_id=thread_id, decisions={key: decision}, approver=approver
                )


@contextmanager
def _as_inbox_errors() -> Iterator[None]:
    """HTTP failures -> :class:`InboxError` (printed by the command line, exit code 2); the
    package's errors (ConcurrentResumeError, InvalidDecisionError...) stay what they are."""
    try:
        yield
    except httpx.HTTPStatusError as error:
        raise InboxError(
            f"the server answered {error.response.status_code} ({error}); nothing was changed"
        ) from None
    except httpx.TransportError as error:
        raise InboxError(
            f"cannot reach the LangGraph API server ({error!r}): check --server and that the "
            "server runs; nothing was changed"
        ) from None
