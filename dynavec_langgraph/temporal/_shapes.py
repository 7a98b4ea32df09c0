"""What travels through Temporal: the segment requests, their outcomes, the errors.

Plain dataclasses of JSON values (Temporal's default converter stores them as JSON in the
workflow's history), and the functions that turn the package's ``AgentResult`` and typed errors
into them and back. No Temporal import: the workflow, the worker and the client share these.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Final, Literal

from dynavec_langgraph import _errors, exceptions
from dynavec_langgraph._dynavec.records import AgentResult, AgentStep, Message, ToolCall
from dynavec_langgraph._types import JSONObject, UserPayload

__all__ = [
    "ANSWER",
    "EXPIRE",
    "RUN",
    "Carried",
    "ErrorInfo",
    "Outcome",
    "Pause",
    "SegmentRequest",
    "Start",
    "ThreadStatus",
    "decode_result",
    "encode_result",
    "error_info",
    "rebuild_error",
]

RUN: Final = "run"
"""A segment started by a goal: the run until its next pause or its end."""
ANSWER: Final = "answer"
"""A segment started by an accepted answer to the pending pause(s)."""
EXPIRE: Final = "expire"
"""A segment started by the workflow's timer: expired pauses settled with their default."""

ThreadStatus = Literal["running", "paused", "completed", "failed", "unknown"]
"""What :meth:`TemporalAgent.status` says of a thread: ``running`` (a segment is executing
on a worker), ``paused`` (waiting for a decision), ``completed`` (its last run ended; a new
``run`` adds a follow-up goal), ``failed`` (its last segment raised an error no retry settles,
e.g. ``InDoubtCallError``), ``unknown`` (no workflow has run it)."""


@dataclass
class Pause:
    """One pending interrupt as the workflow holds it (what its update validator checks).

    Attributes:
        interrupt_id: LangGraph's interrupt id.
        value: the interrupt's value (the package's pause value: ``node_id``, ``payload``,
            ``review_digest``, ``approval``, ...).
        since: when the segment that paused ended (ISO 8601, the workflow's clock).
    """

    interrupt_id: str
    value: UserPayload
    since: str = ""


@dataclass
class ErrorInfo:
    """A typed error of the package, as it crosses Temporal (:func:`rebuild_error`)."""

    type: str
    message: str
    attrs: JSONObject = field(default_factory=dict)


@dataclass
class Outcome:
    """The thread after one segment.

    Attributes:
        status: ``paused``, ``completed`` or ``failed`` (see :data:`ThreadStatus`).
        result: the ``AgentResult`` (:func:`encode_result`); ``None`` when the segment failed
            before the thread could be read.
        pauses: the pending interrupts (empty unless paused).
        checkpoint_id: the thread's latest checkpoint after the segment.
        error: the typed error the segment's caller gets (a refused decision, an expired
            approval with ``on_expire="raise"``, an in-doubt call with ``on_crash="fail"``);
            the thread's state is still ``status`` / ``result``.
        worker: the identity of the worker that ran the segment.
        attempt: the activity attempt that produced it (``> 1`` after a retry).
        segment: the segment's number in this workflow (0 is the run's first).
    """

    status: str
    result: JSONObject | None = None
    pauses: list[Pause] = field(default_factory=list)
    checkpoint_id: str | None = None
    error: ErrorInfo | None = None
    worker: str = ""
    attempt: int = 1
    segment: int = 0


@dataclass
class Carried:
    """What a thread's workflow hands to its next execution when it continues as new.

    Attributes:
        outcome: the thread after its last segment: the pending pause(s), with the approvals
            so far in their values, and the checkpoint it stopped at.
        segments: the segments run so far in the thread's run (numbers keep counting).
        notified: the interrupt ids already announced (a pause is announced once).
        runs: the executions so far (1 for the first continue).
    """

    outcome: Outcome
    segments: int
    notified: list[str] = field(default_factory=list)
    runs: int = 1


@dataclass
class Start:
    """The input of a thread's workflow.

    Attributes:
        thread_id: the LangGraph thread the workflow runs.
        goal: the user's request (a new message on a finished thread).
        notify: send each new pause to the worker's ``notify=`` target (an activity).
        heartbeat_timeout: seconds without a heartbeat of a segment's worker after which
            Temporal retries the segment on another worker (a crashed worker).
        segment_timeout: seconds one attempt of a segment may take at most.
        history_events: continue as new once the execution's history has this many events
            (``None``: when Temporal suggests it, about 4,000 events or 4 MB).
        carried: set on a continued execution: the state it goes on from (no first segment).
    """

    thread_id: str
    goal: str | None = None
    notify: bool = False
    heartbeat_timeout: float = 10.0
    segment_timeout: float = 3600.0
    history_events: int | None = None
    carried: Carried | None = None


@dataclass
class SegmentRequest:
    """What one segment activity does.

    Attributes:
        thread_id: the thread.
        kind: :data:`RUN`, :data:`ANSWER` or :data:`EXPIRE`.
        goal: for :data:`RUN`.
        decision / has_decision: the one decision of an answer (``has_decision`` tells a
            JSON ``null`` from no decision).
        decisions: ``{node_id or interrupt_id: decision}`` for several pauses.
        node: answer only this pause.
        approver: who answers (a name or ``{"name", "roles"}``).
        interrupt_ids: the pauses this segment answers (:data:`ANSWER`) or settles
            (:data:`EXPIRE`).
        before: the thread's latest checkpoint when the workflow asked for the segment: a
            retried attempt that finds another one knows an earlier attempt got further.
        segment: the segment's number in the workflow.
    """

    thread_id: str
    kind: str
    goal: str | None = None
    decision: UserPayload = None
    has_decision: bool = False
    decisions: dict[str, UserPayload] | None = None
    node: str | None = None
    approver: UserPayload = None
    interrupt_ids: list[str] = field(default_factory=list)
    before: str | None = None
    segment: int = 0


# --- AgentResult --------------------------------------------------------------------------


def _plain(value: UserPayload) -> UserPayload:
    dump = getattr(value, "model_dump", None)  # a structured response (pydantic)
    return dump(mode="json") if callable(dump) else value


def encode_result(result: AgentResult) -> JSONObject:
    """``result`` as JSON values.

    Example:
        >>> encode_result(AgentResult("done"))["output"]
        'done'
    """
    data = dataclasses.asdict(result)
    data["structured_response"] = _plain(result.structured_response)
    return data


def _payload(payload: UserPayload) -> UserPayload:
    """The pause's ``messages`` as ``Message`` records again, as ``ReActAgent`` gives them."""
    messages = payload.get("messages") if isinstance(payload, dict) else None
    if not isinstance(messages, list):
        return payload
    rebuilt = [Message.from_dict(m) if isinstance(m, dict) else m for m in messages]
    return {**payload, "messages": rebuilt}


def decode_result(data: JSONObject) -> AgentResult:
    """The ``AgentResult`` :func:`encode_result` gave.

    Example:
        >>> r = AgentResult("done", [AgentStep(1, "t", [ToolCall("c", "f", "{}")], ["o"])])
        >>> decode_result(encode_result(r)) == r
        True
        >>> paused = AgentResult("", interrupt_payload={"messages": [Message("user", "hi")]})
        >>> decode_result(encode_result(paused)).interrupt_payload["messages"]
        [Message(role='user', content='hi', tool_calls=[], tool_call_id=None)]
    """
    steps = [
        AgentStep(
            step_number=s["step_number"],
            thought=s.get("thought"),
            tool_calls=[ToolCall(**c) for c in s.get("tool_calls") or []],
            observations=list(s.get("observations") or []),
        )
        for s in data.get("steps") or []
    ]
    return AgentResult(
        output=data["output"],
        steps=steps,
        finished=data["finished"],
        termination_reason=data["termination_reason"],
        total_steps=data["total_steps"],
        tool_calls_count=data["tool_calls_count"],
        interrupt_payload=_payload(data.get("interrupt_payload")),
        structured_response=data.get("structured_response"),
    )


# --- errors -------------------------------------------------------------------------------

_KNOWN: Final[dict[str, type[Exception]]] = {
    name: cls
    for module in (_errors, exceptions)
    for name, cls in vars(module).items()
    if isinstance(cls, type) and issubclass(cls, _errors.DynavecError)
}


def _json_attrs(error: BaseException) -> JSONObject:
    out: JSONObject = {}
    for key, value in vars(error).items():
        if key.startswith("_"):
            continue
        if value is None or isinstance(value, str | int | float | bool):
            out[key] = value
        elif isinstance(value, list) and all(isinstance(v, str) for v in value):
            out[key] = list(value)
    return out


def error_info(error: BaseException) -> ErrorInfo:
    """``error`` as it crosses Temporal: its class name, message and plain attributes.

    Example:
        >>> info = error_info(_errors.InDoubtCallError("t", "c1", "pay", "k"))
        >>> info.type, info.attrs["key"]
        ('InDoubtCallError', 'k')
    """
    return ErrorInfo(type(error).__name__, str(error), _json_attrs(error))


def rebuild_error(info: ErrorInfo) -> Exception:
    """The package's error :func:`error_info` described: the same class, message and
    attributes (an unknown class name gives a ``RemoteRunError`` naming it).

    Example:
        >>> error = rebuild_error(error_info(_errors.ThreadPausedError("t", ["approve"])))
        >>> isinstance(error, RuntimeError), error.thread_id
        (True, 't')
    """
    cls = _KNOWN.get(info.type)
    if cls is None:
        return _errors.RemoteRunError(f"{info.type}: {info.message}")
    error = cls.__new__(cls)
    error.args = (info.message,)
    if isinstance(error, ImportError):
        error.msg = info.message
    for key, value in info.attrs.items():
        setattr(error, key, value)
    return error
