"""``TemporalAgent``: the ``ReActAgent`` verbs over the thread workflows of a task queue."""

from __future__ import annotations

import dynavec_langgraph.temporal._temporalio  # noqa: F401  (first: names the extra)

# isort: split

import asyncio
import functools
import threading
import uuid
from collections.abc import Callable, Coroutine, Mapping
from typing import TYPE_CHECKING, Concatenate, ParamSpec, TypeVar

from temporalio.client import (
    Client,
    WithStartWorkflowOperation,
    WorkflowExecutionStatus,
    WorkflowHandle,
    WorkflowUpdateFailedError,
)
from temporalio.common import WorkflowIDConflictPolicy, WorkflowIDReusePolicy
from temporalio.exceptions import ApplicationError, WorkflowAlreadyStartedError
from temporalio.service import RPCError, RPCStatusCode

from dynavec_langgraph._approvals.inbox import PendingApproval
from dynavec_langgraph._dynavec.records import AgentResult
from dynavec_langgraph._errors import (
    ConcurrentResumeError,
    InvalidOptionError,
    NothingToResumeError,
    RemoteRunError,
    ServerUnavailableError,
    ThreadPausedError,
    not_paused_text,
)
from dynavec_langgraph._names import WORKFLOW_NAME
from dynavec_langgraph._resuming.answers import MISSING
from dynavec_langgraph._storable import check_id
from dynavec_langgraph.temporal._shapes import (
    ErrorInfo,
    Outcome,
    Start,
    ThreadStatus,
    decode_result,
    rebuild_error,
)
from dynavec_langgraph.temporal._workflow import AnswerInput, ThreadWorkflow, workflow_id

if TYPE_CHECKING:
    from dynavec_langgraph._types import Approver, UserPayload

__all__ = ["MIN_HISTORY_EVENTS", "TemporalAgent"]

T = TypeVar("T")
P = ParamSpec("P")
MIN_HISTORY_EVENTS = 5
"""The smallest ``history_events``: an execution that starts from a carried pause has about
four events before it can wait for an answer."""


def _unknown(thread_id: str, consequence: str) -> NothingToResumeError:
    return NothingToResumeError(
        f"unknown thread {thread_id!r}: {consequence} (no workflow of this task queue's "
        "namespace has run it: check the thread id, the namespace and the task queue)"
    )


def _raise_or_result(outcome: Outcome) -> AgentResult:
    if outcome.error is not None:
        raise rebuild_error(outcome.error)
    if outcome.result is None:
        raise RemoteRunError(f"the segment on {outcome.worker!r} gave no result")
    return decode_result(outcome.result)


def _refusal(error: WorkflowUpdateFailedError) -> Exception:
    cause = error.cause
    if isinstance(cause, ApplicationError) and cause.type:
        attrs = cause.details[0] if cause.details and isinstance(cause.details[0], dict) else {}
        return rebuild_error(ErrorInfo(cause.type, cause.message, attrs))
    return RemoteRunError(f"the answer failed on the workflow: {cause}")


class _Loop:
    """An event loop in a thread of its own, for the sync verbs (never ``asyncio.run``
    inside a caller's running loop)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def call(self, coro: Coroutine[object, None, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=5)


def _blocking(
    averb: Callable[Concatenate[TemporalAgent, P], Coroutine[object, None, T]], doc: str
) -> Callable[Concatenate[TemporalAgent, P], T]:
    """The sync verb of the async ``averb`` (``run`` of ``arun``, ...): the same call, with the
    same parameters, run to its end on the agent's loop thread; ``doc`` is its docstring."""

    def verb(self: TemporalAgent, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return self._call(averb(self, *args, **kwargs))

    functools.update_wrapper(verb, averb)  # its signature is ``averb``'s (``__wrapped__``)
    verb.__name__ = averb.__name__.removeprefix("a")
    verb.__qualname__ = f"TemporalAgent.{verb.__name__}"
    verb.__doc__ = doc
    return verb


class TemporalAgent:
    """``ReActAgent``'s verbs for an agent whose threads run on Temporal workers.

    The workers (``python -m dynavec_langgraph.temporal ...`` or :func:`create_worker`) build
    the agent with the checkpointer they share; this client only talks to Temporal. Each thread
    is a workflow (id ``dynavec-thread:<thread_id>``); each run or answer is a segment the
    workflow runs on a worker; a pause is held by the workflow, and an answer is a Temporal
    update whose validator refuses what cannot apply before it reaches the history.

    Args:
        address: the Temporal frontend, ``"host:port"``.
        task_queue: the queue the agent's workers poll.
        namespace: the Temporal namespace.
        notify: ask the workers to notify each new pause (their ``notify=`` target).
        heartbeat_timeout: seconds of silence after which a segment's worker is taken for
            dead and the segment retried on another one.
        client: an already connected ``temporalio.client.Client`` for the async verbs (the
            sync verbs connect their own).
        history_events: a thread's workflow, while paused, continues as new (the same id,
            the pause and its approvals so far carried over) once its history has this many
            events; ``None`` (the default): when Temporal suggests it (about 4,000 events).
            For threads this client starts.

    Example::

        agent = TemporalAgent("127.0.0.1:7233", "payments")
        paused = agent.run("Pay 120 to my landlord", thread_id="rent")
        final = agent.resume("approved", thread_id="rent")
    """

    def __init__(
        self,
        address: str,
        task_queue: str,
        *,
        namespace: str = "default",
        notify: bool = False,
        heartbeat_timeout: float = 10.0,
        client: Client | None = None,
        history_events: int | None = None,
    ) -> None:
        if not isinstance(address, str) or ":" not in address:
            raise InvalidOptionError(
                f"address={address!r}: pass the Temporal frontend as 'host:port', e.g. "
                "'127.0.0.1:7233'",
                "address",
            )
        check_id(task_queue, "task_queue")
        if history_events is not None and (
            isinstance(history_events, bool)
            or not isinstance(history_events, int)
            or history_events < MIN_HISTORY_EVENTS
        ):
            raise InvalidOptionError(
                f"history_events={history_events!r}: pass a whole number of history events "
                f"of at least {MIN_HISTORY_EVENTS} (a paused thread's workflow continues as new "
                "past it), or None to continue when Temporal suggests it",
                "history_events",
            )
        self.history_events = history_events
        self.address = address
        self.task_queue = task_queue
        self.namespace = namespace
        self.notify = notify
        self.heartbeat_timeout = float(heartbeat_timeout)
        self._clients: dict[asyncio.AbstractEventLoop, Client] = {}
        self._given = client
        self._sync: _Loop | None = None
        self._lock = threading.Lock()

    # --- connections ------------------------------------------------------------------

    async def _client(self) -> Client:
        if self._given is not None:
            return self._given
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            try:
                client = await Client.connect(self.address, namespace=self.namespace)
            except RuntimeError as error:  # the bridge's "Failed client connect"
                raise ServerUnavailableError(
                    f"Temporal at {self.address!r} did not answer ({error}); start it or check "
                    "the address"
                ) from None
            self._clients[loop] = client
        return client

    def _call(self, coro: Coroutine[object, None, T]) -> T:
        with self._lock:
            if self._sync is None:
                self._sync = _Loop()
        return self._sync.call(coro)

    def close(self) -> None:
        """Stop the loop of the sync verbs (the connections close with it)."""
        if self._sync is not None:
            self._sync.close()
            self._sync = None

    def __enter__(self) -> TemporalAgent:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def _handle(self, thread_id: str) -> WorkflowHandle[ThreadWorkflow, Outcome]:
        check_id(thread_id, "thread_id")
        client = await self._client()
        return client.get_workflow_handle(workflow_id(thread_id), result_type=Outcome)

    async def _status(
        self, handle: WorkflowHandle[ThreadWorkflow, Outcome]
    ) -> WorkflowExecutionStatus | None:
        try:
            description = await handle.describe()
        except RPCError as error:
            if error.status == RPCStatusCode.NOT_FOUND:
                return None
            raise ServerUnavailableError(f"Temporal at {self.address!r}: {error}") from None
        return description.status

    # --- run --------------------------------------------------------------------------

    async def arun(self, goal: str, *, thread_id: str | None = None) -> AgentResult:
        """Async twin of :meth:`run`."""
        if not isinstance(goal, str):
            raise TypeError(f"goal={goal!r:.80}: pass the user's request as a string")
        tid = thread_id or uuid.uuid4().hex
        client = await self._client()
        start = WithStartWorkflowOperation(
            ThreadWorkflow.run,
            Start(
                tid, goal, self.notify, self.heartbeat_timeout, history_events=self.history_events
            ),
            id=workflow_id(tid),
            task_queue=self.task_queue,
            id_conflict_policy=WorkflowIDConflictPolicy.FAIL,
            id_reuse_policy=WorkflowIDReusePolicy.ALLOW_DUPLICATE,
        )
        try:
            outcome = await client.execute_update_with_start_workflow(
                "outcome", 0, start_workflow_operation=start, result_type=Outcome
            )
        except WorkflowAlreadyStartedError:
            raise await self._busy_error(tid) from None
        return _raise_or_result(outcome)

    run = _blocking(
        arun,
        """Run the agent on ``goal`` in ``thread_id`` (a new thread when ``None``): one
        segment on a worker, to the next pause or the end.

        Raises:
            ThreadPausedError: the thread waits for a decision; call :meth:`resume`.
            ConcurrentResumeError: a segment of the thread is running.
        """,
    )

    async def _busy_error(self, thread_id: str) -> Exception:
        handle = await self._handle(thread_id)
        state: Outcome | None = await handle.query(ThreadWorkflow.state)
        if (
            state is not None
            and state.status == "paused"
            and not await handle.query(ThreadWorkflow.busy)
        ):
            nodes = [str((p.value or {}).get("node_id", p.interrupt_id)) for p in state.pauses]
            return ThreadPausedError(thread_id, nodes)
        return ConcurrentResumeError(
            f"thread {thread_id!r} is running on a worker (a run or an answer in progress): "
            "nothing was started; read it with result() once it ends"
        )

    # --- resume -----------------------------------------------------------------------

    async def aresume(
        self,
        human_decision: UserPayload = MISSING,
        *,
        thread_id: str,
        decisions: Mapping[str, UserPayload] | None = None,
        approver: Approver = None,
    ) -> AgentResult:
        """Async twin of :meth:`resume`."""
        handle = await self._handle(thread_id)
        status = await self._status(handle)
        if status is None:
            raise _unknown(thread_id, "nothing to resume")
        if status != WorkflowExecutionStatus.RUNNING:
            raise NothingToResumeError(not_paused_text(thread_id, "; run() sends a new message"))
        state: Outcome | None = await handle.query(ThreadWorkflow.state)
        seen = [p.interrupt_id for p in state.pauses] if state is not None else []
        given = AnswerInput(
            seen=seen,
            decision=None if human_decision is MISSING else human_decision,
            has_decision=human_decision is not MISSING,
            decisions=dict(decisions) if decisions is not None else None,
            approver=approver,
        )
        try:
            outcome = await handle.execute_update("answer", given, result_type=Outcome)
        except WorkflowUpdateFailedError as error:
            raise _refusal(error) from None
        except RPCError as error:
            if error.status == RPCStatusCode.NOT_FOUND:  # another answer ended the run
                raise ConcurrentResumeError(
                    f"thread {thread_id!r}: the pause this answer was given for was answered "
                    "by another caller, whose answer ended the run; nothing was applied: read "
                    "it with result()"
                ) from None
            raise ServerUnavailableError(f"Temporal at {self.address!r}: {error}") from None
        return _raise_or_result(outcome)

    resume = _blocking(
        aresume,
        """Answer the thread's pause; the workflow runs the next segment on a worker.

        The answer is checked by the workflow before it is accepted (an update validator):
        refused answers never reach the thread or the workflow's history.

        Raises:
            NothingToResumeError: an unknown thread, or one that is not paused.
            ConcurrentResumeError: another answer (or the run) is being applied, or the pause
                this caller saw was answered by another caller first.
            InvalidDecisionError: no decision, one decision for several pauses, decisions
                naming what is not pending; ``StaleDecisionError`` for a decision bound to
                another pause; ``ApproverRefusedError`` for an approver the pause does not
                allow or who approved it already (nothing ran, still paused).
            ApprovalTimeoutError: the pause is past its deadline (the workflow's timer
                applies its ``on_expire``), or its expiry with ``on_expire="raise"``.
            InDoubtCallError: a call with ``on_crash="fail"`` was cut off by a crash.
        """,
    )

    # --- reads ------------------------------------------------------------------------

    async def _outcome(self, thread_id: str) -> Outcome | None:
        handle = await self._handle(thread_id)
        status = await self._status(handle)
        if status is None:
            return None
        if status == WorkflowExecutionStatus.RUNNING:
            state: Outcome | None = await handle.query(ThreadWorkflow.state)
            return state
        if status == WorkflowExecutionStatus.COMPLETED:
            done: Outcome = await handle.result()
            return done
        raise RemoteRunError(
            f"the workflow of thread {thread_id!r} is {status.name}: it was stopped outside "
            "this package (terminated, cancelled or timed out); the thread's checkpoints are "
            "intact: run() continues it"
        )

    async def aresult(self, thread_id: str) -> AgentResult:
        """Async twin of :meth:`result`."""
        outcome = await self._outcome(thread_id)
        if outcome is None:
            raise _unknown(thread_id, "nothing to read")
        return _raise_or_result(outcome)

    result = _blocking(
        aresult,
        """The thread's ``AgentResult`` as of its last segment (read only).

        Raises:
            NothingToResumeError: an unknown thread.
            the error its last segment gave (``InDoubtCallError``, ``ApprovalTimeoutError``).
        """,
    )

    async def astatus(self, thread_id: str) -> ThreadStatus:
        """Async twin of :meth:`status`."""
        handle = await self._handle(thread_id)
        status = await self._status(handle)
        if status is None:
            return "unknown"
        if status == WorkflowExecutionStatus.RUNNING:
            if await handle.query(ThreadWorkflow.busy):
                return "running"
            state: Outcome | None = await handle.query(ThreadWorkflow.state)
            return "paused" if state is not None and state.status == "paused" else "running"
        outcome = await self._outcome(thread_id)
        return "failed" if outcome is None or outcome.status == "failed" else "completed"

    status = _blocking(
        astatus,
        """``running``, ``paused``, ``completed``, ``failed`` or ``unknown``.""",
    )

    # --- the inbox --------------------------------------------------------------------

    async def apending(self) -> list[PendingApproval]:
        """Async twin of :meth:`pending`."""
        client = await self._client()
        query = (
            f"WorkflowType = '{WORKFLOW_NAME}' AND ExecutionStatus = 'Running' "
            f"AND TaskQueue = '{self.task_queue}'"
        )
        rows: list[PendingApproval] = []
        async for found in client.list_workflows(query):
            handle = client.get_workflow_handle(found.id, run_id=found.run_id)
            try:
                state: Outcome | None = await handle.query(ThreadWorkflow.state)
                busy = await handle.query(ThreadWorkflow.busy)
            except RPCError:
                continue  # it ended between the list and the query
            if state is None or busy or state.status != "paused":
                continue
            tid = found.id.split(":", 1)[1]
            for pause in state.pauses:
                value = pause.value if isinstance(pause.value, dict) else {}
                rows.append(
                    PendingApproval(
                        thread_id=tid,
                        node_id=str(value.get("node_id") or ""),
                        payload=value.get("payload"),
                        since=pause.since,
                        tool_call=value.get("tool_call"),
                        interrupt_id=pause.interrupt_id,
                        review_digest=value.get("review_digest"),
                    )
                )
        return sorted(rows, key=lambda r: (r.since, r.thread_id))

    pending = _blocking(
        apending,
        """The pending approvals of the task queue's paused threads (Temporal's visibility
        lists the running workflows; each is asked for its pause), oldest first. Answer one
        with :meth:`resume`. Visibility lags a write by up to a second.""",
    )
