"""``RemoteReActAgent``: dynavec's run / resume API against a LangGraph API deployment."""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, nullcontext, suppress
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import httpx

from dynavec_langgraph._audit.entries import AuditEvent
from dynavec_langgraph._audit.switch import check_audit
from dynavec_langgraph._audit.verify import TrailReport
from dynavec_langgraph._dynavec.records import AgentResult, AgentState
from dynavec_langgraph._errors import ConcurrentResumeError, install_command
from dynavec_langgraph._extras import missing_extra
from dynavec_langgraph._pauses.policy.doors import expiry_command, refuse_approver
from dynavec_langgraph._remote.audit import (
    aread_items,
    read_items,
    record_refusal,
    run_config,
    verify_items,
)
from dynavec_langgraph._remote.errors import (
    access_refused,
    create_refused,
    require_thread,
    translated,
)
from dynavec_langgraph._remote.expiry import approval_timeout, not_yet, settling
from dynavec_langgraph._remote.requests import (
    RUN_OPTIONS,
    check_input,
    check_server_url,
    link_refusals,
    link_resume,
    link_thread,
    reports_strict_resume,
    resume_map,
    run_input,
    sdk_strict_resume,
    server_thread_id,
)
from dynavec_langgraph._remote.runs import check_run, tagged
from dynavec_langgraph._remote.server import Plan, ServerThreads, call
from dynavec_langgraph._remote.threads import Seen, agent_result, settled, thread_seen
from dynavec_langgraph._resuming.answers import (
    MISSING,
    Answer,
    refuse_if_asked_again,
    refuse_if_paused,
)
from dynavec_langgraph._types import ForeignObject, JSONMapping, JSONObject, UserPayload

if TYPE_CHECKING:
    from langgraph_sdk.client import LangGraphClient, SyncLangGraphClient

    from dynavec_langgraph._types import Approver

DEFAULT_TIMEOUT = 120.0
"""Seconds to wait for one answer of the server (a run's whole wait included)."""


class RemoteReActAgent(ServerThreads):
    """dynavec's ``run`` / ``resume`` against an agent served by a LangGraph API deployment.

    Args:
        url: the server (or load balancer), e.g. ``"http://127.0.0.1:2024"``.
        assistant_id: the graph id of ``langgraph.json`` (e.g. ``"dynavec_agent"``) or an
            assistant's id.
        api_key: sent as ``x-api-key``; ``None`` sends none (environment keys are not read).
        headers: extra HTTP headers for every request.
        timeout: seconds to wait for one answer of the server, a run's wait included.
        max_steps: the graph's step budget, reported as ``total_steps`` when a run runs out.
        audit: the server's graph records the trail of the runs this client sends (in the
            server's store); read it with :meth:`audit` (docs/audit-and-notifications.md).
        notify: a webhook URL the server's graph notifies of every new pause; implies
            ``audit``.
        client: a ``langgraph_sdk`` async client to use for the async methods instead of one
            for ``url`` (``get_client()`` inside the server reaches it in process: the
            approval-link endpoint, ``dynavec_langgraph.links``).

    Raises:
        ImportError: ``langgraph_sdk`` is missing (install the ``studio`` extra).
        InvalidOptionError: ``url`` is no http(s) URL, ``audit`` no bool.

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
        audit: bool = False,
        notify: str | None = None,
        client: LangGraphClient | None = None,
    ) -> None:
        self.url = check_server_url(url)
        check_audit(audit)
        try:
            from langgraph_sdk import get_client, get_sync_client
        except ImportError as error:
            raise missing_extra(
                "RemoteReActAgent",
                "langgraph_sdk",
                "studio",
                text="RemoteReActAgent needs langgraph_sdk, which the 'studio' extra installs: "
                + install_command("studio"),
            ) from error
        config = run_config(audit, notify)
        self._run_options = {**RUN_OPTIONS, **({"config": config} if config else {})}
        self._audit = config is not None
        self.assistant_id = assistant_id
        self.max_steps = max_steps
        self.timeout = float(timeout)
        """Seconds to wait for one answer, and for a run still in flight."""
        connect = min(timeout, 5.0)
        limits = (connect, timeout, timeout, connect)  # connect, read, write, pool
        kwargs: JSONObject = {"url": self.url, "api_key": api_key, "headers": headers}
        self.client: LangGraphClient = client or get_client(**kwargs, timeout=limits)
        """The ``langgraph_sdk`` async client (for what this class does not wrap)."""
        self.sync_client: SyncLangGraphClient = get_sync_client(**kwargs, timeout=limits)
        """The ``langgraph_sdk`` sync client."""
        self._strict: bool | None = None  # the server reports strict resume (asked once)

    def strict_resume(self) -> bool:
        """Whether this client's resumes ask the server for strict resume: its ``/info``
        reports it (:func:`reports_strict_resume`) and ``langgraph_sdk`` can send it. Read
        once, then cached; a server without ``/info`` (HTTP error) does not report it.

        Raises:
            ServerUnavailableError: the server cannot be reached.
        """
        return self.sent(self._strictness())

    async def astrict_resume(self) -> bool:
        """Async twin of :meth:`strict_resume` (one cache for both)."""
        return await self.asent(self._strictness())

    def _strictness(self) -> Plan[bool]:
        if self._strict is not None:
            return self._strict
        with translated(self.url, None, "reading /info"):
            try:
                info = yield call("http", "get", "/info")
            except httpx.HTTPStatusError:
                info = None
        self._strict = reports_strict_resume(info) and sdk_strict_resume(self.sync_client.runs)
        return self._strict

    def _resume_options(self, resume: JSONMapping, strict: bool) -> JSONObject:
        """The run options of a resume: the agent's, its config tagged with the interrupt ids
        the resume answers (:func:`tagged`), and ``strict_resume=True`` when ``strict``
        (:meth:`strict_resume`)."""
        config = {**self._run_options.get("config", {})}
        config["tags"] = [*config.get("tags", []), *tagged(resume)["tags"]]
        return {
            **self._run_options,
            "config": config,
            **({"strict_resume": True} if strict else {}),
        }

    # --- run --------------------------------------------------------------------------

    def run(
        self, goal: str, *, thread_id: str | None = None, state: AgentState | None = None
    ) -> AgentResult:
        """Run the agent on ``goal`` in ``thread_id`` (a new thread when None).

        Raises:
            ThreadPausedError: the thread waits for a decision; call :meth:`resume`.
            ConcurrentResumeError: another run of the thread is in flight (nothing sent).
            ThreadAccessError: the thread exists, but the server's auth rules keep it from
                these credentials (nothing sent).
            ServerUnavailableError: the server cannot be reached or did not answer in time.
            RemoteRunError: the run failed on the server.
            ApprovalTimeoutError: the thread's pause had expired and its policy says
                ``on_expire="raise"``: the paused tool settled it (the call did not run)
                and ``goal`` was not sent, as ``ReActAgent.run`` does.
        """
        return self.sent(self._running(goal, thread_id, state))

    async def arun(
        self, goal: str, *, thread_id: str | None = None, state: AgentState | None = None
    ) -> AgentResult:
        """Async twin of :meth:`run`."""
        return await self.asent(self._running(goal, thread_id, state))

    def _running(
        self, goal: str, thread_id: str | None, state: AgentState | None
    ) -> Plan[AgentResult]:
        check_input(thread_id, goal, state)
        tid = thread_id or str(uuid.uuid4())
        sid = server_thread_id(tid)
        with translated(self.url, tid, f"running thread {tid!r}"):
            try:
                yield call("threads", "create", thread_id=sid, if_exists="do_nothing")
            except httpx.HTTPStatusError as error:
                if create_refused(error):
                    raise access_refused(tid) from None
                raise
            seen = yield from self.viewing(sid)
            settle = expiry_command(seen.interrupts, self._now())
            if settle is not None:  # an expired approval: the paused tool settles it first
                yield from self._sent_and_waited(sid, settle.resume)
                before, seen = seen, thread_seen((yield call("threads", "get_state", sid)))
                expired = approval_timeout(tid, before.interrupts, settle.resume, seen)
                if expired is not None:  # on_expire="raise": settled, the goal is not run
                    raise expired
            refuse_if_paused(tid, seen.interrupts)
            given = run_input(goal, state)
            run = yield call(
                "runs", "create", sid, self.assistant_id, input=given, **self._run_options
            )
            joined, done = yield from self.waiting(sid, str(run["run_id"]))
            after = thread_seen((yield call("threads", "get_state", sid)))
            check_run(tid, done, joined, seen, after)
            refuse_if_asked_again(seen.interrupts, after.interrupts)
        return agent_result(tid, after, self.max_steps, state)

    def _sent_and_waited(
        self, sid: str, resume: JSONMapping
    ) -> Plan[tuple[str, tuple[ForeignObject, JSONMapping]]]:
        """Send the resume ``resume`` and wait for its run: the run's id, and its join and
        run as :meth:`waiting` returns them."""
        options = self._resume_options(resume, (yield from self._strictness()))
        command = {"resume": resume}
        run = yield call("runs", "create", sid, self.assistant_id, command=command, **options)
        return str(run["run_id"]), (yield from self.waiting(sid, str(run["run_id"])))

    # --- resume -----------------------------------------------------------------------

    def resume(
        self,
        human_decision: UserPayload = MISSING,
        *,
        thread_id: str | None = None,
        decisions: JSONMapping | None = None,
        state: AgentState | None = None,
        approver: Approver = None,
        link: str | None = None,
    ) -> AgentResult:
        """Answer the pause of ``thread_id`` with ``human_decision`` (or ``decisions={node_id
        or interrupt_id: decision}`` when several are pending), then let the run go on.

        ``link``: a signed approval link's token (``dynavec_langgraph.links``) answers the
        pause it was signed for with its decision and approver (``thread_id`` defaults to
        its thread); the paused tool on the server verifies it.

        Raises:
            NothingToResumeError: no thread id, an unknown thread (or one the server's auth
                rules keep from these credentials: the server answers both alike), or one not
                paused.
            InvalidDecisionError: no decision, several pending for one decision, decisions
                naming what is not pending, or one the pause's ``response_schema`` refuses
                (nothing saved, still paused).
            ConcurrentResumeError: another caller is resuming (or just resumed) the thread;
                this decision was not applied.
            ServerUnavailableError: the server cannot be reached or did not answer in time.
            RemoteRunError: the run failed on the server.
            ApproverRefusedError: ``approver`` may not answer the pause (its approval
                policy, checked here and by the paused tool on the server); nothing ran.
            InvalidLinkError: ``link`` is malformed, forged, expired, used, or for a pause
                that is not pending (answered, expired, another one); nothing ran.
            ApprovalTimeoutError: the pause had expired and its policy says
                ``on_expire="raise"``: the paused tool settled it (the call did not run) and
                the run went on, as ``ReActAgent.resume`` does. A pause this client sees
                expired is answered with the expiry answer; a decision the server's tool got
                after the deadline is recognised by the tool's answer (``require_approval``'s
                says why; a plain ``interrupt()`` tool's answer is its own: then the result
                is returned, docs/approvals-in-production.md).

        ``approver`` (a name or ``{"name", "roles"}``) travels in the resume value to a
        pause with an approval policy (docs/approvals-in-production.md).
        """
        given = (human_decision, thread_id, decisions, state, approver, link)
        return self.sent(self._resuming(*given, record_refusal=True))

    def _now(self) -> datetime:
        """The time an approval's deadline is compared with before anything is sent (the
        paused tool on the server compares it with its own clock again)."""
        return datetime.now(UTC)

    async def aresume(
        self,
        human_decision: UserPayload = MISSING,
        *,
        thread_id: str | None = None,
        decisions: JSONMapping | None = None,
        state: AgentState | None = None,
        approver: Approver = None,
        link: str | None = None,
    ) -> AgentResult:
        """Async twin of :meth:`resume`."""
        given = (human_decision, thread_id, decisions, state, approver, link)
        return await self.asent(self._resuming(*given, record_refusal=False))

    def _resuming(
        self,
        human_decision: UserPayload,
        thread_id: str | None,
        decisions: JSONMapping | None,
        state: AgentState | None,
        approver: Approver,
        link: str | None,
        *,
        record_refusal: bool,
    ) -> Plan[AgentResult]:
        """:meth:`resume` (``record_refusal``: a refused resume is recorded, the sync twin's
        part): the thread and its state after."""
        if link is not None:
            other = decisions is not None or approver is not None
            thread_id, human_decision = link_thread(link, thread_id, human_decision, other)
        check_input(thread_id, decision=human_decision, decisions=decisions)
        tid = require_thread(thread_id)
        sid = server_thread_id(tid)
        given = decisions if decisions is not None else human_decision
        with (
            link_refusals(link),
            translated(self.url, tid, f"resuming thread {tid!r}"),
            self._refusals(sid, given) if record_refusal else nullcontext(),
        ):
            seen = yield from self.reading(sid)
            if seen.stale and link is None:  # its in-doubt question comes first
                answer = Answer(human_decision, decisions, approver=approver)
                seen = yield from self.asking_first(sid, tid, seen, answer)
            if link is not None:
                decided = link_resume(tid, seen, link, self._now())
            else:
                decided = resume_map(tid, seen, human_decision, decisions, approver)
            resume, due = settling(seen, decided, self._now())
            after = yield from self._sending(sid, tid, seen, resume)
            again, settled = not_yet(seen, due, decided, after)
            answered = [i for i in seen.interrupts if i.id in resume]
            if again:  # the server's clock: not expired yet; the decision goes as given
                seen = yield from self.reading(sid)
                after = yield from self._sending(sid, tid, seen, again)
                answered += [i for i in seen.interrupts if i.id in again]
            refuse_approver(seen.interrupts, after.interrupts)
            refuse_if_asked_again(seen.interrupts, after.interrupts)
            expired = approval_timeout(tid, answered, settled, after)
            if expired is not None:  # on_expire="raise": settled, the call did not run
                raise expired
        return agent_result(tid, after, self.max_steps, state)

    def _sending(self, sid: str, tid: str, seen: Seen, resume: JSONMapping) -> Plan[Seen]:
        """Send the resume ``resume`` of the pauses ``seen`` showed, wait for its run, check
        it won; the thread afterwards."""
        run_id, (joined, done) = yield from self._sent_and_waited(sid, resume)
        check_run(tid, done, joined, seen, thread_seen((yield call("threads", "get_state", sid))))
        yield from self.checking_won(sid, tid, seen, run_id, resume)
        return thread_seen((yield call("threads", "get_state", sid)))

    # --- reading ----------------------------------------------------------------------

    def result(self, thread_id: str) -> AgentResult:
        """The thread's result as it stands (paused or finished); runs nothing.

        Raises:
            NothingToResumeError: an unknown thread.
            RemoteRunError: the thread is busy (a run in flight, or one whose server died on
                an engine without run recovery) or its last run failed: there is no result to
                report (never a ``completed`` one).
        """
        return self.sent(self._result(thread_id))

    async def aresult(self, thread_id: str) -> AgentResult:
        """Async twin of :meth:`result`."""
        return await self.asent(self._result(thread_id))

    def _result(self, thread_id: str) -> Plan[AgentResult]:
        with translated(self.url, thread_id, f"reading thread {thread_id!r}"):
            seen = yield from self.reading(server_thread_id(thread_id))
        return agent_result(thread_id, settled(thread_id, seen), self.max_steps, None)

    # --- connections ------------------------------------------------------------------

    def audit(self, thread_id: str) -> list[AuditEvent]:
        """The audit trail of ``thread_id`` on the server, oldest first (recorded by its
        graph when this client, or the deployment's ``DYNAVEC_AUDIT=1``, turned it on).

        Raises:
            ServerUnavailableError: the server cannot be reached or did not answer in time.
        """
        sid = server_thread_id(thread_id)
        with translated(self.url, thread_id, f"reading the audit trail of {thread_id!r}"):
            return read_items(self.sync_client, sid)

    def verify_audit(self, thread_id: str | None = None) -> TrailReport:
        """Verify the hash chain of ``thread_id``'s audit trail on the server (every trail in
        its store when ``None``), read through the server's API (``dynavec-langgraph audit
        verify --server``): names every entry edited, deleted, reordered or inserted
        (docs/audit-and-notifications.md). Reads only; the report names server thread ids.

        Raises:
            ServerUnavailableError: the server cannot be reached or did not answer in time.
            RemoteRunError: the server refused (its auth handler may keep the store from
                these credentials: HTTP 403).
        """
        sid = server_thread_id(thread_id) if thread_id is not None else None
        with translated(self.url, thread_id, "verifying the audit trail"):
            return verify_items(self.sync_client, sid)

    async def aaudit(self, thread_id: str) -> list[AuditEvent]:
        """Async twin of :meth:`audit`."""
        sid = server_thread_id(thread_id)
        with translated(self.url, thread_id, f"reading the audit trail of {thread_id!r}"):
            return await aread_items(self.client, sid)

    @contextmanager
    def _refusals(self, sid: str, decision: UserPayload) -> Iterator[None]:
        """Record a resume refused as concurrent (when recording), then raise it on."""
        try:
            yield
        except ConcurrentResumeError as error:
            if self._audit:
                with suppress(httpx.HTTPError):  # the refusal is what the caller must get
                    record_refusal(self.sync_client, sid, decision, error)
            raise

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
