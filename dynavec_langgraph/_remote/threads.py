"""A thread as the server showed it (its state, pending pauses, notes) and the result read
from it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import BaseMessage, convert_to_messages
from langgraph.types import Interrupt

from dynavec_langgraph._dynavec.records import AgentResult, AgentState
from dynavec_langgraph._dynavec.view import build_result
from dynavec_langgraph._errors import NothingToResumeError, RemoteRunError
from dynavec_langgraph._exactly_once.shown import noted_in_doubt
from dynavec_langgraph._remote.errors import unknown_thread_text
from dynavec_langgraph._types import JSONMapping, JSONObject


@dataclass(frozen=True)
class Seen:
    """A thread as the server showed it: its latest checkpoint and pending interrupts."""

    exists: bool
    checkpoint_id: str | None
    interrupts: list[Interrupt]
    values: JSONObject
    busy: bool = False
    last_run_id: str | None = None
    """The thread's newest run when it was read: the runs after it answered or moved it."""
    status: str | None = None
    """The thread's status (read when nothing is pending): idle, busy, error, interrupted."""
    stale: list[Interrupt] = field(default_factory=list)
    """The pauses the server's state lists that ``interrupts`` shows as in-doubt questions
    (their approved call's run died while it ran: :func:`thread_seen`); empty when none."""


def thread_seen(
    state: JSONMapping | None,
    status: str | None = None,
    last_run: str | None = None,
    notes: Sequence[JSONMapping] = (),
) -> Seen:
    """The thread as its views show it: ``state`` (the server's thread state, read with
    ``subgraphs=True`` so that a paused subgraph's checkpoint shows), each pause of a call
    whose note (``notes``, :func:`_notes`) says its run died while it ran shown as the call's
    in-doubt question (``_exactly_once.shown.noted_in_doubt``), as ``ReActAgent`` does."""
    if state is None:
        return Seen(False, None, [], {})
    checkpoint = state.get("checkpoint") or {}
    listed = [
        Interrupt(value=i.get("value"), id=str(i["id"])) for i in state.get("interrupts") or []
    ]
    doubts = noted_in_doubt(shown_checkpoints(state), listed, notes) if notes else {}
    interrupts = [Interrupt(value=doubts[i.id], id=i.id) if i.id in doubts else i for i in listed]
    values = state.get("values")
    return Seen(
        True,
        checkpoint.get("checkpoint_id"),
        interrupts,
        dict(values) if isinstance(values, Mapping) else {},
        status == "busy",
        last_run,
        status,
        [i for i in listed if i.id in doubts],
    )


def shown_checkpoints(state: JSONMapping) -> dict[str, str]:
    """``{checkpoint namespace: checkpoint id}`` of the checkpoints a thread state shows: its
    own (namespace ``""``) and, read with ``subgraphs=True`` (``ThreadTask.state``: the
    subgraph's state, with its ``checkpoint``), each pending subgraph's, at any depth."""
    found: dict[str, str] = {}
    checkpoint = state.get("checkpoint")
    if isinstance(checkpoint, Mapping) and checkpoint.get("checkpoint_id"):
        ns = checkpoint.get("checkpoint_ns") or ""
        found[str(ns)] = str(checkpoint["checkpoint_id"])
    for task in state.get("tasks") or []:
        sub = task.get("state") if isinstance(task, Mapping) else None
        if isinstance(sub, Mapping):
            found.update(shown_checkpoints(sub))
    return found


def note_values(found: Any) -> list[JSONMapping]:
    items = found.get("items") if isinstance(found, Mapping) else None
    return [i["value"] for i in items or [] if isinstance(i.get("value"), Mapping)]


NOTES_LIMIT = 100
"""Notes read per thread (one per ``"ask"`` call whose run died; a thread has a few)."""


def messages_of(values: JSONMapping) -> list[BaseMessage]:
    return convert_to_messages(values.get("messages") or [])


def agent_result(
    thread_id: str, seen: Seen, max_steps: int, state: AgentState | None
) -> AgentResult:
    values = {**seen.values, "messages": messages_of(seen.values)}
    if state is not None and isinstance(values.get("shared"), Mapping):
        state.data.clear()
        state.data.update(values["shared"])
    return build_result(
        values, seen.interrupts, thread_id=thread_id, max_steps=max_steps, system_prompt=None
    )


@dataclass(frozen=True)
class Listed:
    """Pending ``Interrupt``s where ``_resuming._in_doubt_first`` reads a snapshot's."""

    interrupts: list[Interrupt]


def asked(seen: Seen) -> JSONObject:
    """``{interrupt id: in-doubt question}`` for the pauses ``seen`` shows as one."""
    return {i.id: i.value for i in seen.interrupts if i.id in {s.id for s in seen.stale}}


def _known(thread_id: str, seen: Seen) -> Seen:
    if not seen.exists:
        raise NothingToResumeError(unknown_thread_text(thread_id, "no result to read"))
    return seen


def settled(thread_id: str, seen: Seen) -> Seen:
    """``seen`` when it holds a result (paused, or done); a busy or failed thread has none."""
    seen = _known(thread_id, seen)
    if seen.interrupts or seen.status not in {"busy", "error"}:
        return seen
    if seen.status == "busy":
        raise RemoteRunError(
            f"thread {thread_id!r} is busy: a run of it is in flight (run "
            f"{seen.last_run_id}), so it has no result yet; read it again when the run is "
            "done. A run whose server died stays in flight on an engine without run recovery "
            "(Aegra 0.6.0): then the thread stays busy and needs an operator"
        )
    raise RemoteRunError(
        f"thread {thread_id!r}: its last run (run {seen.last_run_id}) failed on the server, so "
        "it has no result; its state is that of its last saved checkpoint. Read the run's error "
        "on the server, then run or resume the thread again"
    )
