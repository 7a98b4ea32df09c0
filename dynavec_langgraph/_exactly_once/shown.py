"""What a door that only reads shows of a call found in doubt: the pause it replaces."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from langchain_core.runnables import RunnableConfig
from langgraph.types import Interrupt, StateSnapshot

from dynavec_langgraph._exactly_once.gate import in_doubt_pause
from dynavec_langgraph._exactly_once.marks import Marks, read_marks
from dynavec_langgraph._names import START_CHANNEL, START_PREFIX
from dynavec_langgraph._pauses.value import InterruptValue, ToolCallRef
from dynavec_langgraph._types import JSONMapping

if TYPE_CHECKING:
    from langgraph.checkpoint.base import CheckpointTuple

    from dynavec_langgraph._types import CheckpointSaver

__all__ = [
    "ain_nested",
    "in_doubt_pauses",
    "in_nested",
    "noted_in_doubt",
    "shown_first",
    "superseded",
]


def in_doubt_pauses(
    tup: CheckpointTuple | None,
    interrupts: Sequence[Interrupt],
    nested: Sequence[CheckpointTuple | None] = (),
) -> dict[str, InterruptValue]:
    """The pending pauses that a crash made stale: ``{interrupt id: the in-doubt question}``
    for each pause in ``interrupts`` (a thread's ``Interrupt``s, as stored in checkpoint
    ``tup``) whose tool call started running after it and never ended (a start mark with no
    end and no doubt yet: the run that resumed it died). The thread still lists the pause,
    but the next run of the call asks the in-doubt question first (:class:`Gate`); a door
    that only reads shows that question instead (one read of ``tup``, done by the caller).
    ``nested``: the checkpoints of the thread's pending subgraphs (:func:`in_nested`), where an
    agent nested in a parent graph writes its marks (a parent's ``interrupts`` list its
    subgraphs' pauses)."""
    by_call: dict[str, tuple[str, Marks]] = {}
    for stored in (tup, *nested):
        for tid, channel, value in (stored.pending_writes if stored is not None else None) or []:
            if channel != START_CHANNEL or not str(tid).startswith(START_PREFIX):
                continue
            if not isinstance(value, dict) or value.get("state") != "start":
                continue
            if value.get("call") and value.get("policy") == "ask":  # "fail" stops the run
                key = str(tid)[len(START_PREFIX) :].rsplit(":", 2)[0]
                by_call[str(value["call"])] = (key, read_marks(stored, f"{START_PREFIX}{key}:", ""))
    found: dict[str, InterruptValue] = {}
    for pending in interrupts:
        value = getattr(pending, "value", None)
        call = value.get("tool_call") if isinstance(value, Mapping) else None
        if not isinstance(call, Mapping) or str(call.get("id")) not in by_call:
            continue
        key, marks = by_call[str(call.get("id"))]
        if not marks.in_doubt or marks.latest in marks.doubts:
            continue
        ref: ToolCallRef = {
            "id": str(call.get("id")),
            "name": str(call.get("name")),
            "args": dict(call.get("args") or {}),
        }
        found[str(pending.id)] = in_doubt_pause(ref, key, False)[2](None)
    return found


def _pending_subgraphs(snapshot: StateSnapshot) -> bool:
    """Whether ``snapshot`` (read without ``subgraphs=True``) has a task that is a subgraph:
    LangGraph sets such a task's ``state`` to the config of the subgraph's checkpoints."""
    return any(task.state is not None for task in snapshot.tasks)


def _subgraph_configs(snapshot: StateSnapshot) -> Iterator[RunnableConfig]:
    """The config (with its ``checkpoint_ns`` and ``checkpoint_id``) of each pending
    subgraph's latest checkpoint in ``snapshot`` read with ``subgraphs=True`` (each task's
    ``state`` is then the subgraph's ``StateSnapshot``), nested ones too."""
    for task in snapshot.tasks:
        if isinstance(task.state, StateSnapshot):
            yield task.state.config
            yield from _subgraph_configs(task.state)


def in_nested(
    graph: Any, saver: CheckpointSaver, config: RunnableConfig, snapshot: StateSnapshot
) -> list[CheckpointTuple | None]:
    """An agent nested in a parent graph (the package's compiled agent as a node of a parent
    ``StateGraph``) writes its marks on its subgraph's checkpoint, not the thread's: the
    latest checkpoint of each subgraph pending in ``snapshot`` (``graph``'s state of
    ``config``), for :func:`in_doubt_pauses`. Reads nothing for a thread without a paused
    subgraph (the package's own agent graph has none); else the state once more with
    ``subgraphs=True`` (LangGraph's public ``get_state``) and each subgraph's checkpoint."""
    if not snapshot.interrupts or not _pending_subgraphs(snapshot):
        return []
    deep = graph.get_state(config, subgraphs=True)
    return [saver.get_tuple(found) for found in _subgraph_configs(deep)]


async def ain_nested(
    graph: Any, saver: CheckpointSaver, config: RunnableConfig, snapshot: StateSnapshot
) -> list[CheckpointTuple | None]:
    """Async twin of :func:`in_nested`."""
    if not snapshot.interrupts or not _pending_subgraphs(snapshot):
        return []
    deep = await graph.aget_state(config, subgraphs=True)
    return [await saver.aget_tuple(found) for found in _subgraph_configs(deep)]


def shown_first(
    snapshot: StateSnapshot,
    tup: CheckpointTuple | None,
    nested: Sequence[CheckpointTuple | None] = (),
) -> StateSnapshot:
    """``snapshot`` (a thread's ``StateSnapshot``, read with its checkpoint ``tup``; ``nested``:
    its pending subgraphs', :func:`in_nested`) as a door that only reads shows it: each pause
    whose approved call's run died (the call may have run) replaced by the call's in-doubt
    question, which the next run asks first (:func:`in_doubt_pauses`); ``snapshot`` itself
    when there is none."""
    if not snapshot.interrupts:
        return snapshot
    stale = in_doubt_pauses(tup, snapshot.interrupts, nested)
    if not stale:
        return snapshot
    shown = tuple(
        Interrupt(value=stale[i.id], id=i.id) if i.id in stale else i for i in snapshot.interrupts
    )
    return snapshot._replace(interrupts=shown)


def noted_in_doubt(
    shown: Mapping[str, str],
    interrupts: Sequence[Interrupt | Mapping[str, object]],
    notes: Sequence[JSONMapping],
) -> dict[str, InterruptValue]:
    """What a server's thread state cannot say (see the module doc): ``{interrupt id: the
    in-doubt question}`` for each pause in ``interrupts`` (``Interrupt``s, or the server's
    ``{"id", "value"}`` dicts) of a call whose note (``notes``: the values stored under
    ``(NOTE_NS, thread_id)``) was left on the checkpoint the thread shows for the note's
    graph: ``shown`` maps each checkpoint namespace the thread state shows to its latest
    checkpoint id (``""``: the thread's own, the agent at the top; an agent nested in a parent
    graph notes its subgraph's namespace, which the state read with ``subgraphs=True``
    shows). The run that answered the pause died while the call ran. A pause that already is
    an in-doubt question is kept."""
    by_call: dict[str, JSONMapping] = {}
    for left in notes:
        made, ns = left.get("call"), left.get("checkpoint_ns")
        if not isinstance(made, Mapping) or not isinstance(ns, str) or ns not in shown:
            continue
        if left.get("checkpoint_id") == shown[ns]:
            by_call[str(made.get("id"))] = left
    found: dict[str, InterruptValue] = {}
    for pending in interrupts:
        pid = pending.get("id") if isinstance(pending, Mapping) else getattr(pending, "id", None)
        value = pending.get("value") if isinstance(pending, Mapping) else pending.value
        if not isinstance(value, Mapping) or pid is None:
            continue
        payload, call = value.get("payload"), value.get("tool_call")
        if isinstance(payload, Mapping) and payload.get("in_doubt"):
            continue
        note = by_call.get(str(call.get("id"))) if isinstance(call, Mapping) else None
        if note is None:
            continue
        noted = note["call"]
        ref: ToolCallRef = {
            "id": str(noted.get("id")),
            "name": str(noted.get("name")),
            "args": dict(noted.get("args") or {}),
        }
        found[str(pid)] = in_doubt_pause(ref, str(note.get("key")), False)[2](None)
    return found


def superseded(before: Sequence[object], after: Sequence[object]) -> str | None:
    """After a resume: the refusal of a decision given for a pause shown before a crash, when
    the run found the call in doubt instead (a new in-doubt pause in ``after`` whose payload
    says ``superseded``), or ``None``. ``before`` / ``after``: the pending ``Interrupt``s
    (``RemoteReActAgent`` makes them from the server's thread state)."""
    seen = {_interrupt_id(i) for i in before}
    asked = {_node_of(i) for i in before}
    for pending in after:
        value = getattr(pending, "value", pending)
        value = value if isinstance(value, Mapping) else {}
        payload = value.get("payload")
        if _interrupt_id(pending) in seen or not isinstance(payload, Mapping):
            continue
        if not (payload.get("in_doubt") and payload.get("superseded")):
            continue
        if value.get("node_id") in asked:  # it was shown: an answer to it was refused
            continue
        shown = ", ".join(repr(_node_of(i)) for i in before if _node_of(i) != value.get("node_id"))
        return (
            f"the decision was not applied: it was for the pause shown before the process "
            f"stopped ({shown or 'an earlier pause'}), but the call of `{payload.get('name')}` "
            "it led to was running then and may or may not have run (idempotency key "
            f"{payload.get('idempotency_key')}). Nothing ran. The thread now asks "
            f"{value.get('node_id')!r}: approve runs it again with the same key, respond "
            "gives its result (it ran), reject skips it; answer that first"
        )
    return None


def _interrupt_id(pending: object) -> object:
    return getattr(pending, "id", None)


def _node_of(pending: object) -> object:
    value = getattr(pending, "value", pending)
    return value.get("node_id") if isinstance(value, Mapping) else None
