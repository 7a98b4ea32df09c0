"""The workflow of one thread: it runs segments as activities and holds the pause.

One workflow execution per thread run (id :func:`workflow_id`): its first segment runs the goal
to the next pause or the end; while paused it waits for an **update** (``answer``) whose
validator checks the answer against the pause it holds (the package's own checks, on workflow
state only: deterministic) and for the **timer** of the earliest approval deadline, which
settles the expired pause with its default outcome with no client running. Each accepted
answer is one more segment. When the thread's run ends the workflow ends; a later goal on the
same thread starts a new execution with the same id.

A paused execution whose history passes its budget (``Start.history_events``, or when
Temporal suggests it: about 4,000 events) **continues as new** under the same id, carrying the
pending pause (its approvals so far), the segment count and the pauses announced: clients see
one thread throughout.
"""

from __future__ import annotations

import dynavec_langgraph.temporal._temporalio  # noqa: F401  (first: names the extra)

# isort: split

import asyncio
import dataclasses
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Final, NoReturn

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ApplicationError
from temporalio.workflow import ParentClosePolicy

with workflow.unsafe.imports_passed_through():
    from langgraph.types import Interrupt

    from dynavec_langgraph._errors import (
        ConcurrentResumeError,
        DynavecError,
        NothingToResumeError,
        not_paused_text,
    )
    from dynavec_langgraph._names import (
        NOTIFY_ACTIVITY,
        NOTIFY_WORKFLOW_ID_PREFIX,
        NOTIFY_WORKFLOW_NAME,
        SEGMENT_ACTIVITY,
        THREAD_WORKFLOW_ID_PREFIX,
        WORKFLOW_NAME,
    )
    from dynavec_langgraph._pauses.digest import refuse_stale
    from dynavec_langgraph._pauses.policy.doors import expired_pauses
    from dynavec_langgraph._resuming.answers import MISSING, Answer
    from dynavec_langgraph.exceptions import ApprovalTimeoutError
    from dynavec_langgraph.temporal._shapes import (
        ANSWER,
        EXPIRE,
        RUN,
        Carried,
        Outcome,
        Pause,
        SegmentRequest,
        Start,
        error_info,
    )

__all__ = [
    "AnswerInput",
    "Notice",
    "NotifyWorkflow",
    "ThreadWorkflow",
    "workflow_id",
]

_RETRY: Final = RetryPolicy(
    initial_interval=timedelta(seconds=0.5),
    backoff_coefficient=2.0,
    maximum_interval=timedelta(seconds=30),
)
"""Segments are retried until they end: a typed error of the package comes back in the
:class:`Outcome`, so only a crash, a lost worker or a storage fault is retried."""
_SETTLE_AGAIN: Final = 1.0
"""Seconds before an expiry the tool refused (its clock behind the server's) is tried again."""


def workflow_id(thread_id: str) -> str:
    """The workflow id of ``thread_id``'s runs.

    Example:
        >>> workflow_id("rent")
        'dynavec-thread:rent'
    """
    return f"{THREAD_WORKFLOW_ID_PREFIX}{thread_id}"


@dataclass
class AnswerInput:
    """An answer sent to a paused thread (the ``answer`` update).

    Attributes:
        seen: the interrupt ids the sender saw pending; another set pending now means another
            answer got there first (``ConcurrentResumeError``). ``None``: not checked.
        decision / has_decision, decisions, node, approver: as ``ReActAgent.resume``.
    """

    seen: list[str] | None = None
    decision: Any = None
    has_decision: bool = False
    decisions: dict[str, Any] | None = None
    node: str | None = None
    approver: Any = None


def _refuse(error: DynavecError) -> NoReturn:
    info = error_info(error)
    raise ApplicationError(info.message, info.attrs, type=info.type, non_retryable=True) from None


def _interrupts(pauses: list[Pause]) -> list[Interrupt]:
    return [Interrupt(value=p.value, id=p.interrupt_id) for p in pauses]


def _deadline(pause: Pause) -> datetime | None:
    value = pause.value if isinstance(pause.value, dict) else {}
    approval = value.get("approval")
    raw = approval.get("expires_at") if isinstance(approval, dict) else None
    try:
        return datetime.fromisoformat(raw) if isinstance(raw, str) else None
    except ValueError:
        return None


@workflow.defn(name=WORKFLOW_NAME)
class ThreadWorkflow:
    """One thread's run on Temporal (see the module docstring)."""

    @workflow.init
    def __init__(self, start: Start) -> None:
        self._start = start
        self._outcome: Outcome | None = None
        self._busy = True  # a segment is executing
        self._request: SegmentRequest | None = None  # an accepted answer for the loop
        self._replies: dict[int, Outcome] = {}
        self._segments = 0
        self._notified: set[str] = set()
        self._runs = 0  # the executions before this one (continue-as-new)
        carried = start.carried
        if carried is not None:  # a continued execution: the pause it holds, answerable at once
            self._outcome, self._busy = carried.outcome, False
            self._segments, self._runs = carried.segments, carried.runs
            self._notified = set(carried.notified)
            self._replies[carried.outcome.segment] = carried.outcome

    # --- the loop -----------------------------------------------------------------------

    @workflow.run
    async def run(self, start: Start) -> Outcome:
        """Run the goal, then answer pauses and settle expiries until the run ends; continue
        as new when the history grows past its budget while paused."""
        if self._outcome is not None:
            outcome = self._outcome
        else:
            outcome = await self._execute(
                SegmentRequest(thread_id=start.thread_id, kind=RUN, goal=start.goal, segment=0)
            )
        while outcome.status == "paused":
            await self._notify(outcome)
            await self._continue_as_new_if_due(outcome)
            waited = await self._wait_for_answer(outcome)
            if waited is None:  # the timer: settle what expired
                now = workflow.now()
                due = [i.id for i in expired_pauses(_interrupts(outcome.pauses), now)]
                request = self._next(EXPIRE, interrupt_ids=due)
                outcome = await self._execute(request)
                if outcome.pauses and expired_pauses(_interrupts(outcome.pauses), now):
                    await asyncio.sleep(_SETTLE_AGAIN)  # the tool's clock said "not yet"
                continue
            outcome = await self._execute(waited)
        await workflow.wait_condition(workflow.all_handlers_finished)
        return outcome

    def _history_full(self) -> bool:
        info = workflow.info()
        budget = self._start.history_events
        if budget is not None and info.get_current_history_length() >= budget:
            return True
        return info.is_continue_as_new_suggested()

    async def _continue_as_new_if_due(self, outcome: Outcome) -> None:
        """A paused execution whose history is full hands the pause to a new execution of
        the same workflow id (the thread): the pending pause with its approvals so far, the
        segment count, the pauses announced. Only between segments, once every update
        handler has replied; an answer accepted meanwhile is run here first."""
        if not self._history_full():
            return
        await workflow.wait_condition(
            lambda: workflow.all_handlers_finished() or self._request is not None
        )
        if self._request is not None:
            return
        carried = Carried(outcome, self._segments, sorted(self._notified), self._runs + 1)
        workflow.continue_as_new(dataclasses.replace(self._start, goal=None, carried=carried))

    async def _wait_for_answer(self, outcome: Outcome) -> SegmentRequest | None:
        deadlines = [d for d in map(_deadline, outcome.pauses) if d is not None]
        timeout = None
        if deadlines:
            left = (min(deadlines) - workflow.now()).total_seconds()
            timeout = max(left, 0.001)
        try:
            await workflow.wait_condition(lambda: self._request is not None, timeout=timeout)
        except TimeoutError:
            if self._request is None:  # an answer accepted before the deadline still wins
                self._busy = True
                return None
        request, self._request = self._request, None
        return request

    def _next(self, kind: str, **fields: Any) -> SegmentRequest:
        self._segments += 1
        before = self._outcome.checkpoint_id if self._outcome is not None else None
        return SegmentRequest(
            thread_id=self._start.thread_id,
            kind=kind,
            before=before,
            segment=self._segments,
            **fields,
        )

    async def _execute(self, request: SegmentRequest) -> Outcome:
        self._busy = True
        outcome: Outcome = await workflow.execute_activity(
            SEGMENT_ACTIVITY,
            request,
            result_type=Outcome,
            start_to_close_timeout=timedelta(seconds=self._start.segment_timeout),
            heartbeat_timeout=timedelta(seconds=self._start.heartbeat_timeout),
            retry_policy=_RETRY,
        )
        outcome.segment = request.segment
        if outcome.status == "paused":
            now = workflow.now().isoformat()
            outcome.pauses = [Pause(p.interrupt_id, p.value, now) for p in outcome.pauses]
        self._outcome = outcome
        self._replies[request.segment] = outcome
        self._busy = False
        return outcome

    async def _notify(self, outcome: Outcome) -> None:
        """Each new pause to the worker's ``notify=`` target, by a child workflow the thread
        does not wait for (it outlives the thread's run: a pause answered at once is still
        announced) whose activity Temporal retries until delivered: the outbox."""
        new = [p for p in outcome.pauses if p.interrupt_id not in self._notified]
        if not self._start.notify or not new:
            return
        self._notified.update(p.interrupt_id for p in new)
        tid = self._start.thread_id
        await workflow.start_child_workflow(
            NotifyWorkflow.run,
            Notice(tid, new),
            id=f"{NOTIFY_WORKFLOW_ID_PREFIX}{tid}:{new[0].interrupt_id}",
            parent_close_policy=ParentClosePolicy.ABANDON,
        )

    # --- what clients call --------------------------------------------------------------

    @workflow.query(name="state")
    def state(self) -> Outcome | None:
        """The thread as of its last segment (``None`` before the first one ends)."""
        return self._outcome

    @workflow.query(name="runs")
    def runs(self) -> int:
        """The executions of this thread's run before this one (each continue-as-new)."""
        return self._runs

    @workflow.query(name="busy")
    def busy(self) -> bool:
        """A segment is executing (or an accepted answer waits for the loop)."""
        return self._busy or self._request is not None

    @workflow.update(name="outcome")
    async def wait_outcome(self, segment: int) -> Outcome:
        """The outcome of segment ``segment`` (0: the run's first), once it ends."""
        await workflow.wait_condition(lambda: segment in self._replies)
        return self._replies[segment]

    @workflow.update(name="answer")
    async def answer(self, given: AnswerInput) -> Outcome:
        """Answer the pending pause(s): one more segment; its outcome is the reply."""
        self._busy = True  # before any await: a second answer's validator sees it
        assert self._outcome is not None
        ids = [p.interrupt_id for p in self._outcome.pauses]
        request = self._next(
            ANSWER,
            decision=given.decision,
            has_decision=given.has_decision,
            decisions=given.decisions,
            node=given.node,
            approver=given.approver,
            interrupt_ids=ids,
        )
        self._request = request
        await workflow.wait_condition(lambda: request.segment in self._replies)
        return self._replies[request.segment]

    @answer.validator
    def check_answer(self, given: AnswerInput) -> None:
        """Refuse, before it reaches the history, an answer that cannot apply: the thread
        busy or not paused, another pause than the one the sender saw, a malformed decision,
        an approver the pause does not allow (or who approved it already), a decision bound
        to another pause (its review digest), a pause past its deadline."""
        try:
            self._check(given)
        except DynavecError as error:
            _refuse(error)

    def _check(self, given: AnswerInput) -> None:
        tid = self._start.thread_id
        outcome = self._outcome
        if self._busy or self._request is not None:
            raise ConcurrentResumeError(
                f"thread {tid!r} is running a segment (another answer or its run): nothing "
                "was applied; read it with result() and answer the pause it shows then"
            )
        paused = outcome is not None and outcome.status == "paused"
        pending = [p.interrupt_id for p in outcome.pauses] if paused and outcome else []
        if given.seen and sorted(given.seen) != sorted(pending):
            raise ConcurrentResumeError(
                f"thread {tid!r}: the pause this answer was given for was answered by another "
                "caller first; nothing was applied: read the thread with result() before "
                "answering again"
            )
        if outcome is None or not paused:
            raise NothingToResumeError(not_paused_text(tid, "; run() sends it a new message"))
        interrupts = _interrupts(outcome.pauses)
        answer = Answer(
            decision=given.decision if given.has_decision else MISSING,
            decisions=given.decisions,
            node=given.node,
            approver=given.approver,
        )
        command = answer.command(interrupts, None)
        refuse_stale(tid, interrupts, command.resume)
        answered = command.resume if isinstance(command.resume, dict) else {}
        chosen = [i for i in interrupts if i.id in answered] or interrupts
        for item in expired_pauses(chosen, workflow.now()):
            value = item.value if isinstance(item.value, dict) else {}
            approval = value.get("approval") or {}
            error = ApprovalTimeoutError(
                f"Approval request at node {value.get('node_id')!r} for thread {tid!r} expired "
                f"at {approval.get('expires_at')}: the answer was not applied; the workflow's "
                "timer applies the pause's on_expire outcome (read it with result())"
            )
            error.thread_id, error.node_id = tid, value.get("node_id")
            error.timeout_seconds = approval.get("expires_in")
            raise error


@dataclass
class Notice:
    """The pauses one notification workflow announces."""

    thread_id: str
    pauses: list[Pause]


@workflow.defn(name=NOTIFY_WORKFLOW_NAME)
class NotifyWorkflow:
    """Deliver a notice: its activity is retried (at most a minute apart) for a day."""

    @workflow.run
    async def run(self, notice: Notice) -> None:
        """Send ``notice`` through the worker's ``notify=`` target."""
        await workflow.execute_activity(
            NOTIFY_ACTIVITY,
            args=[notice.thread_id, notice.pauses],
            start_to_close_timeout=timedelta(seconds=60),
            schedule_to_close_timeout=timedelta(days=1),
            retry_policy=RetryPolicy(maximum_interval=timedelta(seconds=60)),
        )
