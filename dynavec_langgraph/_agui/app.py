"""One AG-UI run of a graph (a new turn or a resume) and the ASGI app serving it."""

from __future__ import annotations

import dynavec_langgraph._agui.extra  # noqa: F401  (first: names the extra)

# isort: split

from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from ag_ui.core import (
    Message,
    MessagesSnapshotEvent,
    ResumeEntry,
    RunAgentInput,
    RunErrorEvent,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
    RunFinishedSuccessOutcome,
    RunStartedEvent,
    StateSnapshotEvent,
)
from ag_ui.core.events import BaseEvent
from ag_ui.encoder import EventEncoder
from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from dynavec_langgraph._agui.decisions import Refused, resume_decisions
from dynavec_langgraph._agui.events import (
    MESSAGES_KEY,
    graph_events,
    state_snapshot,
    to_agui,
    to_langchain,
)
from dynavec_langgraph._agui.pauses import pending_pauses, to_interrupt
from dynavec_langgraph._errors import DynavecError, InvalidInputError, InvalidOptionError
from dynavec_langgraph._exactly_once.shown import ain_nested, in_doubt_pauses
from dynavec_langgraph._pauses.decisions import explain_refusal
from dynavec_langgraph._persistence.locks import aresume_lock
from dynavec_langgraph._resuming.answers import Answer, refuse_if_paused
from dynavec_langgraph._resuming.guarded import GuardedResume, aresuming
from dynavec_langgraph._types import JSONMapping, UserPayload

if TYPE_CHECKING:
    from dynavec_langgraph._persistence.records import CheckpointerOption
from dynavec_langgraph.savers import resolve_checkpointer

AGUI_PROTOCOL_VERSION = "1.0"
"""The AG-UI protocol version this module speaks (``RUN_STARTED.protocolVersion``)."""

Approver = Callable[[Request, ResumeEntry], UserPayload]
"""Who answers a resume entry, for approvals with approvers or M-of-N (a name, or ``{"name",
"roles"}``; ``None``: nobody named): called with the HTTP request, so it reads your sign-in."""


def approver_from_metadata(request: Request, entry: ResumeEntry) -> UserPayload:
    """The approver a resume entry names in its ``metadata.approver`` (trusts the client: for
    demos and tests, or behind a proxy that sets it; read your sign-in otherwise).

    Example:
        >>> entry = ResumeEntry(interrupt_id="i", status="resolved", metadata={"approver": "ann"})
        >>> approver_from_metadata(None, entry)  # type: ignore[arg-type]
        'ann'
    """
    meta = entry.metadata if isinstance(entry.metadata, Mapping) else {}
    return meta.get("approver")


def _new_messages(given: Sequence[Message], stored: Sequence[BaseMessage]) -> list[BaseMessage]:
    known = {m.id for m in stored}
    new = [to_langchain(m) for m in given if m.id not in known]
    return [m for m in new if m is not None]


async def _ask_in_doubt(graph: Any, config: RunnableConfig, thread_id: str) -> None:
    """A pause whose approved call's run died (the call may have run): ask the call's
    in-doubt question now, under the thread's lock (nothing runs), as the guarded resume does
    before applying an answer (:func:`~dynavec_langgraph._resuming.guarded.aresuming`)."""
    saver = graph.checkpointer
    async with aresume_lock(saver, thread_id):
        snapshot = await graph.aget_state(config)
        if snapshot.interrupts and in_doubt_pauses(
            await saver.aget_tuple(config),
            snapshot.interrupts,
            await ain_nested(graph, saver, config, snapshot),  # an agent in a parent graph
        ):
            await graph.ainvoke(None, config)


async def _new_turn(
    graph: Any, run: RunAgentInput, config: RunnableConfig
) -> AsyncIterator[BaseEvent]:
    """A run without resume entries: a paused thread shows its pauses again (the in-doubt
    question first where a crash made one stale; a new message is refused); a thread whose
    run stopped without a pause (a crash) is continued first (a call with ``on_crash="ask"``
    pauses in doubt); then the new user messages run."""
    before = await graph.aget_state(config)
    if before.interrupts:
        await _ask_in_doubt(graph, config, run.thread_id)
        before = await graph.aget_state(config)
    stored = (before.values or {}).get(MESSAGES_KEY) or []
    new = _new_messages(run.messages, stored)
    if before.interrupts:
        if new:
            refuse_if_paused(run.thread_id, before.interrupts)
        return  # no new message: the run ends with the pending pauses' outcome
    if before.next or before.tasks:  # a run that stopped without a pause: continue it first
        resume = GuardedResume(graph, graph.checkpointer, run.thread_id, Answer(), config)
        async with aresuming(resume) as plan:
            async for event in graph_events(graph, plan.graph_input, config):
                yield event
            after = await graph.aget_state(config)
            plan.settle(after.interrupts)
        if after.interrupts:
            return  # the new messages wait: the client sends them again with its next run
    elif not new:
        raise InvalidInputError(
            "the run has no new user message and no resume entries: send a message, "
            "or answer the pending interrupts in 'resume'",
            "messages",
        )
    if new:
        async for event in graph_events(graph, {MESSAGES_KEY: new}, config):
            yield event


async def stream_run(
    graph: Any,
    run: RunAgentInput,
    *,
    tools: Sequence[BaseTool] = (),
    approver: str | JSONMapping | None = None,
    now: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> AsyncIterator[BaseEvent]:
    """The AG-UI events of one run of ``graph`` (compiled with a checkpointer) on
    ``run.thread_id``: a new turn from ``run.messages``, or the answers of ``run.resume``.

    Ends with ``RUN_FINISHED`` (``outcome`` ``interrupt`` with every pending pause, or
    ``success``) or ``RUN_ERROR`` (``code``: ``STALE_INTERRUPT``, ``DUPLICATE_RESUME``,
    ``INTERRUPT_EXPIRED``, ``INVALID_DECISION``, ``DECISION_NOT_ALLOWED``,
    ``INVALID_ARGUMENTS``, or the package error's class name: ``ConcurrentResumeError``,
    ``ThreadPausedError``, ...). An error before the graph runs leaves the thread as it was.
    """
    yield RunStartedEvent(
        thread_id=run.thread_id, run_id=run.run_id, protocol_version=AGUI_PROTOCOL_VERSION
    )
    by_name = {t.name: t for t in tools}
    config: RunnableConfig = {"configurable": {"thread_id": run.thread_id}}
    try:
        if run.resume:
            pending = await pending_pauses(graph, config, by_name)
            decisions = resume_decisions(run.resume, pending, now(), approver)
            answer = Answer(decisions=decisions, approver=approver)
            resume = GuardedResume(
                graph, graph.checkpointer, run.thread_id, answer, config, crashed="refuse"
            )
            async with aresuming(resume) as plan:
                async for event in graph_events(graph, plan.graph_input, config):
                    yield event
                after = await graph.aget_state(config)
                plan.settle(after.interrupts)
        else:
            async for event in _new_turn(graph, run, config):
                yield event
    except DynavecError as error:
        code = error.code if isinstance(error, Refused) else type(error).__name__
        yield RunErrorEvent(message=str(error), code=code)
        return
    state = await graph.aget_state(config)
    messages = [m for m in map(to_agui, (state.values or {}).get(MESSAGES_KEY) or []) if m]
    yield MessagesSnapshotEvent(messages=messages)
    yield StateSnapshotEvent(snapshot=state_snapshot(state.values))
    pending = await pending_pauses(graph, config, by_name)
    outcome: RunFinishedInterruptOutcome | RunFinishedSuccessOutcome
    if pending:
        outcome = RunFinishedInterruptOutcome(interrupts=[to_interrupt(p) for p in pending])
    else:
        outcome = RunFinishedSuccessOutcome()
    yield RunFinishedEvent(thread_id=run.thread_id, run_id=run.run_id, outcome=outcome)


# --- the app ----------------------------------------------------------------------------------


def create_agui_app(
    graph: Any,
    *,
    checkpointer: CheckpointerOption = None,
    tools: Sequence[BaseTool] = (),
    approver: Approver | None = None,
    path: str = "/",
) -> Starlette:
    """An ASGI app serving ``graph`` over AG-UI 1.0 at ``POST path`` (an AG-UI ``HttpAgent``'s
    ``url``): mount it in FastAPI / Starlette (``app.mount("/agui", create_agui_app(graph))``)
    or name it in ``langgraph.json``'s ``"http": {"app": "./server.py:app"}``.

    Args:
        graph: a compiled graph of the package (``create_react_agent``, ``create_agent``, or a
            graph holding one), compiled with a checkpointer, or give ``checkpointer``.
        checkpointer: the saver (anything ``checkpointer=`` takes: a saver,
            ``"sqlite:///file.db"``, ``"postgresql://..."``), when ``graph`` has none.
        tools: the agent's tools: an edit's ``args`` in a ``responseSchema`` is the tool's
            schema and edited arguments are validated by it before anything runs (without
            them: by the paused arguments' keys and JSON types).
        approver: who answers, for approvals with approvers or M-of-N (called with the
            request and the resume entry; see :func:`approver_from_metadata`).
        path: where the endpoint is, in the app.

    Raises:
        InvalidOptionError: ``graph`` has no checkpointer and none is given (a pause could
            not be resumed), or is no compiled graph.
    """
    if not hasattr(graph, "astream") or not hasattr(graph, "aget_state"):
        raise InvalidOptionError(
            f"create_agui_app() takes a compiled graph (create_react_agent(...)), got "
            f"{graph!r:.80}",
            "graph",
        )
    if checkpointer is not None:
        graph = graph.copy(update={"checkpointer": resolve_checkpointer(checkpointer)})
    if graph.checkpointer is None or isinstance(graph.checkpointer, bool):
        raise InvalidOptionError(
            "the graph has no checkpointer, so a pause could not be resumed: compile it with "
            "one or pass create_agui_app(graph, checkpointer='sqlite:///agui.db')",
            "checkpointer",
        )
    encoder = EventEncoder()

    async def endpoint(request: Request) -> Response:
        try:
            run = RunAgentInput.model_validate(await request.json())
        except (ValueError, ValidationError) as error:
            text = explain_refusal(error) if isinstance(error, ValidationError) else str(error)
            return JSONResponse(
                {"error": f"the body is no AG-UI RunAgentInput: {text}"}, status_code=422
            )
        who = None
        if approver is not None and run.resume:
            who = approver(request, run.resume[0])

        async def body() -> AsyncIterator[str]:
            async for event in stream_run(graph, run, tools=tools, approver=who):
                yield encoder.encode(event)

        return StreamingResponse(body(), media_type=encoder.get_content_type())

    return Starlette(routes=[Route(path, endpoint, methods=["POST"])])
