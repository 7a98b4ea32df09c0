"""Exactly once across crashes: an idempotency key per tool call, and in-doubt calls.

**The key.** Every tool call the agent's tool node runs has an idempotency key,
:func:`idempotency_key`, derived from what the thread stores durably: the thread id, the
checkpoint namespace the agent runs in (node names only, without LangGraph's task ids), the
assistant message that made the call (its id, else its position) and the tool call id. So it
is the same on every re-run of that call (a resumed pause, a re-asked approval, a crash
continuation, a ``ToolRetryMiddleware`` retry, another process or server continuing the
thread) and differs for every other call (the same tool and arguments in a later turn, or in
another thread). A call run without a thread (no checkpointer) gets a random key per run.

**In-doubt calls.** A tool may declare what happens when its call was running when the
process died (``on_crash``, see :data:`OnCrash`). For ``"ask"`` and ``"fail"`` the tool node
writes a durable start mark before the tool body runs, as a pending write on the checkpoint
the node runs from (in the thread's own saver, with the machinery of
:mod:`dynavec_langgraph._claims`: a task id and a channel of its own, which LangGraph ignores
when it loads the checkpoint), and an end mark when the body ends (``done`` with the node's
update, ``closed`` when it paused, ``raised`` when it raised). A later run of the same call
from the same checkpoint that finds a start mark without an end finds the call in doubt:

- ``"retry"`` (the default): no mark is written at all; the call runs again, with the same key;
- ``"ask"``: the call becomes a pause "this call may or may not have run" (node id
  ``in_doubt_<tool>``), answered like any approval: approve = run it again (same key),
  respond = it ran and the message is its result, reject = skip it (the model is told);
- ``"fail"``: :class:`~dynavec_langgraph._errors.InDoubtCallError` names the call, its key and
  how to settle it; nothing runs.

A call whose ``done`` mark holds its update (the process died after the tool returned, before
LangGraph saved the result) is answered from that record and never runs again. Tools that
declare no ``on_crash`` write no mark and read none. Under LangGraph's default
``durability="async"`` every call (declared or not: undeclared is ``"retry"``) starts only
once the checkpoint it runs from is stored (LangGraph saves it in the background; the graph's
saver says when its save returns, :func:`_stored`): a crash then re-runs the same call, never
a new model turn with a new key.

**Notes for a server's views.** A LangGraph API server's thread state does not return pending
writes, so a client of the server cannot read the marks. While an ``"ask"`` call runs, the
tool node therefore also keeps a *note* in the run's store (``langgraph.config.get_store()``,
when the graph has one: every LangGraph API server gives it one), in the namespace
``(NOTE_NS, thread_id)`` under the call's key, written after the start mark and deleted after
the end mark. A note left behind (the process died while the call ran) on the checkpoint the
thread still shows tells a client (``RemoteReActAgent``, ``inbox --server``) that the pause it
shows for that call is stale: the call may have run (:func:`noted_in_doubt`).

The in-doubt pause is asked at a fixed position among the task's interrupts (how many
decisions the task had when the doubt was found, kept in a ``doubt`` mark), and re-read on
every later run of the task, so LangGraph's matching of resume values by position stays right
for the tool's own pauses after it. What it reads from LangGraph that is not a public name
(langgraph 1.2.24, pinned by ``tests/test_exactly_once.py``): the task config's
``"checkpoint_map"``, the namespace separators ``"|"`` and ``":"`` (the task id is the last
part), and the ``"__resume__"`` pending write of a task (``langgraph._internal._constants``).
"""

from __future__ import annotations

import asyncio
import hashlib
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Final, Literal, get_args

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.config import get_store
from langgraph.errors import GraphInterrupt
from langgraph.types import Interrupt

from dynavec_langgraph._call_ids import ToolCallRef
from dynavec_langgraph._decisions import Decision, decision_schema, read_decision
from dynavec_langgraph._errors import (
    InDoubtCallError,
    InvalidDecisionError,
    StorageError,
    ToolContextError,
)
from dynavec_langgraph._lg_names import NS_SEP, RESUME_WRITE
from dynavec_langgraph._pause import answer_slot, ask
from dynavec_langgraph._pause_value import DecisionKind, InterruptValue, pause_value
from dynavec_langgraph._persistence.stored import StoredCheckpoints
from dynavec_langgraph._run_data import IN_DOUBT_KEY, RunData

__all__ = [
    "IDEMPOTENCY_KEY",
    "IN_DOUBT_KEY",
    "NOTE_NS",
    "OnCrash",
    "aguarded",
    "call_key",
    "check_on_crash",
    "declared_on_crash",
    "guarded",
    "idempotency_key",
    "in_doubt_pauses",
    "keyed",
    "noted_in_doubt",
    "on_crash_of",
    "shown_first",
    "superseded",
    "with_key",
]

OnCrash = Literal["retry", "ask", "fail"]
"""What happens to a tool call that was running when its process died (module doc)."""
IDEMPOTENCY_KEY: Final = "dynavec_idempotency_key"
"""``config["configurable"][IDEMPOTENCY_KEY]``: the running call's key, in the config a
LangChain tool gets (``ToolRuntime.config``, a ``config: RunnableConfig`` parameter)."""
START_CHANNEL: Final = "__dynavec_started__"
"""The channel of the start / end marks (no channel of the graph has this name)."""
_PREFIX: Final = "dynavec-start:"
_NS_SEP: Final = NS_SEP
_NS_END: Final = ":"
_RESUME: Final = RESUME_WRITE
_ALLOWED: Final[tuple[DecisionKind, ...]] = ("approve", "respond", "reject")
_PLAIN: Final[dict[str, DecisionKind]] = {"retry": "approve", "skip": "reject"}

_running_key: ContextVar[str | None] = ContextVar("dynavec_idempotency_key", default=None)


# --- the key -------------------------------------------------------------------------------


def call_key(data: RunData, call_id: str, turn: str) -> str:
    """The idempotency key of call ``call_id`` made by the assistant message ``turn`` (its id,
    or ``"#<position>"``), in the thread and namespace of the run ``data``."""
    thread = data.thread_id
    if thread is None:  # nothing durable: nothing re-runs this call, a key per run
        return f"dynavec-{uuid.uuid4().hex}"
    ns = data.checkpoint_ns
    parts = ns.split(_NS_SEP)[:-1]  # the graphs this agent runs in, not its own task
    path = _NS_SEP.join(p.split(_NS_END, 1)[0] for p in parts)
    text = "\x00".join((str(thread), path, turn, call_id))
    return f"dynavec-{hashlib.sha256(text.encode()).hexdigest()[:32]}"


def with_key(config: RunnableConfig, key: str) -> RunnableConfig:
    """``config`` with the call's key in ``configurable`` (what LangChain tools read)."""
    return {**config, "configurable": {**(config.get("configurable") or {}), IDEMPOTENCY_KEY: key}}


@contextmanager
def keyed(key: str) -> Iterator[None]:
    """While a call runs: :func:`idempotency_key` returns ``key``."""
    token = _running_key.set(key)
    try:
        yield
    finally:
        _running_key.reset(token)


def idempotency_key(source: Any = None) -> str:
    """The idempotency key of the tool call running now: the same on every re-run of that
    call (resumes, re-asked approvals, crash continuations, retries, another server), another
    one for every other call. Pass it to the service the tool calls (an ``Idempotency-Key``
    header) so a repeat after a crash does the work once.

    Args:
        source: nothing inside a tool (this package's ``@tool``, a plain function, a
            LangChain tool run by the agent), or a LangChain tool's ``ToolRuntime`` or
            ``RunnableConfig``.

    Raises:
        ToolContextError: called outside a tool call run by this package's agent.

    Example:
        >>> from dynavec_langgraph import idempotency_key, tool
        >>> @tool
        ... def pay(amount: int) -> str:
        ...     "Pay."
        ...     return f"charged {amount} under {idempotency_key()}"
    """
    if source is not None:
        config = getattr(source, "config", source)
        conf = config.get("configurable") if isinstance(config, Mapping) else None
        key = (conf or {}).get(IDEMPOTENCY_KEY)
        if isinstance(key, str):
            return key
    key = _running_key.get()
    if key is None:
        raise ToolContextError(
            "idempotency_key() was called outside a tool call of a dynavec_langgraph agent: "
            "call it inside the tool while the agent runs it (or pass the tool's ToolRuntime "
            "or RunnableConfig)"
        )
    return key


# --- the policy ----------------------------------------------------------------------------


def check_on_crash(value: Any, tool_name: str) -> OnCrash:
    """``value`` as an :data:`OnCrash`.

    Raises:
        ValueError: anything but ``"retry"``, ``"ask"`` or ``"fail"``.
    """
    if value not in get_args(OnCrash):
        raise ValueError(
            f"tool {tool_name!r}: on_crash={value!r}; use 'retry' (run again with the same "
            "idempotency key, the default), 'ask' (pause: it may or may not have run) or "
            "'fail' (stop with InDoubtCallError)"
        )
    result: OnCrash = value
    return result


def on_crash_of(tool: Any) -> OnCrash:
    """A tool's declared ``on_crash`` (``@tool(on_crash=...)``, or ``metadata={"on_crash":
    ...}`` on a LangChain tool), ``"retry"`` if none."""
    return declared_on_crash(tool) or "retry"


def declared_on_crash(tool: Any) -> OnCrash | None:
    """A tool's declared ``on_crash``, ``None`` if it declares none (it then is ``"retry"``,
    writing no marks)."""
    for source in (tool, getattr(tool, "_origin", None)):
        metadata = getattr(source, "metadata", None)
        if isinstance(metadata, Mapping) and metadata.get("on_crash") is not None:
            return check_on_crash(metadata["on_crash"], str(getattr(tool, "name", "?")))
    return None


# --- the marks -----------------------------------------------------------------------------


@dataclass
class _Where:
    saver: BaseCheckpointSaver[Any]
    thread_id: str
    base: RunnableConfig
    task_id: str


def _where(data: RunData) -> _Where | None:
    saver, thread_id, ns = data.saver, data.thread_id, data.checkpoint_ns
    parent, checkpoint_id = data.parent_ns, data.parent_checkpoint_id
    if saver is None or thread_id is None or not checkpoint_id:
        return None
    base: RunnableConfig = {
        "configurable": {
            "thread_id": str(thread_id),
            "checkpoint_ns": parent,
            "checkpoint_id": checkpoint_id,
        }
    }
    return _Where(saver, str(thread_id), base, ns.rsplit(_NS_END, 1)[-1])


@dataclass
class _Marks:
    """What the checkpoint holds for one call: attempts, their ends, doubts."""

    started: set[int] = field(default_factory=set)
    ends: dict[int, dict[str, Any]] = field(default_factory=dict)
    doubts: dict[int, int] = field(default_factory=dict)  # attempt -> decisions before it
    stale: set[int] = field(default_factory=set)  # doubts found with a decision for a pause
    # shown before the crash (never applied: the in-doubt question says so)
    answered: int = 0  # decisions the task holds (its "__resume__" write)
    asked_at: dict[int, float] = field(default_factory=dict)  # attempt -> when its doubt was
    # found (time.time() of the run that found it; absent in doubt marks written before it
    # was kept)

    @property
    def latest(self) -> int:
        return max(self.started, default=-1)

    @property
    def in_doubt(self) -> bool:
        return self.latest >= 0 and self.latest not in self.ends

    def record(self) -> Any:
        for end in self.ends.values():
            if end.get("state") == "done" and isinstance(end.get("result"), dict):
                return end["result"]
        return None


def _read_marks(tup: Any, prefix: str, task_id: str, earlier: Sequence[Any] = ()) -> _Marks:
    """The call's marks on checkpoint ``tup`` (and, first, those of the ``earlier`` pending
    writes: a held call's step, :func:`_held_marks`); its decisions are ``tup``'s."""
    marks = _Marks()
    moved: dict[int, int] = {}
    writes = [*earlier, *((tup.pending_writes if tup is not None else None) or [])]
    for tid, channel, value in writes:
        if channel == _RESUME and tid == task_id and isinstance(value, list):
            marks.answered = len(value)
        if channel != START_CHANNEL or not tid.startswith(prefix) or not isinstance(value, dict):
            continue
        attempt, state = int(value.get("attempt", 0)), value.get("state")
        if state == "start":
            marks.started.add(attempt)
        elif state == "doubt":
            if attempt not in marks.doubts:  # the first doubt mark of an attempt holds
                marks.doubts[attempt] = int(value.get("skip", 0))
                if value.get("stale"):
                    marks.stale.add(attempt)
                at = value.get("at")
                if isinstance(at, int | float) and not isinstance(at, bool):
                    marks.asked_at[attempt] = float(at)
        elif state == "moved":
            moved[attempt] = max(moved.get(attempt, 0), int(value.get("skip", 0)))
        else:
            marks.ends[attempt] = value
    for attempt, skip in moved.items():  # a late answer took the question's slot: asked after it
        if attempt in marks.doubts and skip > marks.doubts[attempt]:
            marks.doubts[attempt] = skip
            marks.stale.add(attempt)
    return marks


HELD_DEPTH: Final = 3
"""How many checkpoints before its own a re-sent held call's marks are looked for: it was
held in the tool step two checkpoints back (that step, then the agent node's pass-through)."""


def _held_marks(saver: BaseCheckpointSaver[Any], tup: Any, prefix: str) -> list[Any]:
    """Parallel mode: a call held in an earlier step of its turn (``_tool_call.held``) is sent
    again from a later checkpoint, but its start mark (a crash while it ran in the held step)
    and its doubt mark are on the checkpoint of the step that held it: the call's marks on the
    checkpoints before ``tup``, newest first, up to :data:`HELD_DEPTH` (stops at the first
    that has any; the prefix holds the call's key, so no other call's marks match)."""
    for _ in range(HELD_DEPTH):
        parent = getattr(tup, "parent_config", None)
        if tup is None or parent is None:
            return []
        tup = saver.get_tuple(parent)
        found = _marks_in(tup, prefix)
        if found:
            return found
    return []


async def _aheld_marks(saver: BaseCheckpointSaver[Any], tup: Any, prefix: str) -> list[Any]:
    """Async twin of :func:`_held_marks`."""
    for _ in range(HELD_DEPTH):
        parent = getattr(tup, "parent_config", None)
        if tup is None or parent is None:
            return []
        tup = await saver.aget_tuple(parent)
        found = _marks_in(tup, prefix)
        if found:
            return found
    return []


def _marks_in(tup: Any, prefix: str) -> list[Any]:
    writes = (tup.pending_writes if tup is not None else None) or []
    return [w for w in writes if w[1] == START_CHANNEL and str(w[0]).startswith(prefix)]


def _mark(prefix: str, attempt: int, state: str, **extra: Any) -> tuple[str, list[Any]]:
    task_id = f"{prefix}{attempt}:{state}"
    return task_id, [(START_CHANNEL, {"state": state, "attempt": attempt, **extra})]


def _end(prefix: str, attempt: int, error: BaseException | None, result: Any) -> Any:
    if error is None:
        return _mark(prefix, attempt, "done", result=result if isinstance(result, dict) else None)
    return _mark(prefix, attempt, "closed" if isinstance(error, GraphInterrupt) else "raised")


@dataclass
class _Gate:
    """One guarded call: what the marks say, and what to do."""

    call: ToolCallRef
    key: str
    policy: OnCrash
    where: _Where
    override: Any
    given: int | None = None
    """How many decisions the task has in this run (stored ones and this run's own), ``None``
    when LangGraph does not say."""
    keyed: int | None = None
    """How many of them are stored or given by interrupt id (the rest: a decision sent without
    one, taken by the task's next unanswered pause), ``None`` when LangGraph does not say."""
    sent_at: float | None = None
    """When the request that created this run reached the server (``RunData.sent_at``)."""
    marks: _Marks = field(default_factory=_Marks)

    @property
    def prefix(self) -> str:
        return f"{_PREFIX}{self.key}:"

    @property
    def available(self) -> int:
        """The decisions the task can read in this run (stored, and this run's own)."""
        return self.marks.answered if self.given is None else self.given

    def new_doubt(self) -> tuple[str, list[Any]] | None:
        """The doubt mark to write (an ``ask`` call found in doubt for the first time).

        The in-doubt question comes after every decision the task has in this run. A
        decision this run brings (beyond the stored ones) was given for the pause a person
        saw before the crash (e.g. the tool's own approval, shown again by every door since
        the resumed run died): it is not applied to the in-doubt question (``stale``), which
        is asked after it and says so."""
        m = self.marks
        if self.policy != "ask" or not m.in_doubt or m.latest in m.doubts:
            return None
        skip = self.available
        stale = skip > m.answered
        m.doubts[m.latest] = skip
        if stale:
            m.stale.add(m.latest)
        return _mark(self.prefix, m.latest, "doubt", skip=skip, stale=stale, at=time.time())

    def late_answer(self) -> tuple[str, list[Any]] | None:
        """The mark moving the in-doubt question one slot on (written before it is asked),
        when this run's decision sent without an interrupt id would answer it but was sent
        before the question was asked: on a LangGraph API server a run sent to a busy thread
        waits for the running one (``multitask_strategy="enqueue"``, the server's default), so
        an approval UI's answer to the pause it showed (the approval, still listed while the
        killed run was in flight) runs after the re-claimed run asked the in-doubt question.
        Such an answer is not applied: it takes the question's slot, and the question is asked
        after it, saying so (``superseded``). ``None``: nothing to move (no such answer, the
        doubt found in this run (:meth:`new_doubt` handles it), or the run's or the doubt's
        time unknown: in process, Aegra, marks written before the doubt's time was kept)."""
        m = self.marks
        if self.policy != "ask" or not m.doubts or self.sent_at is None:
            return None
        attempt = max(m.doubts)
        asked = m.asked_at.get(attempt)
        skip = m.doubts[attempt]
        if asked is None or self.sent_at >= asked or self.given is None or self.keyed is None:
            return None
        if self.given <= self.keyed or self.keyed != skip:  # no unkeyed answer for its slot
            return None
        m.doubts[attempt] = skip + 1
        m.stale.add(attempt)
        task_id = f"{self.prefix}{attempt}:moved{skip + 1}"
        return task_id, [(START_CHANNEL, {"state": "moved", "attempt": attempt, "skip": skip + 1})]

    def decide(self, answer: Callable[[str], Any]) -> tuple[bool, Any]:
        """``(run, early)``: run the body, or return ``early`` (an update) instead. May
        pause (``ask``) or raise :class:`InDoubtCallError` (``fail``)."""
        m = self.marks
        record = m.record()
        if record is not None:  # it ran and returned; only its result was not saved
            return False, record
        if self.policy == "fail":
            if not m.in_doubt:
                return True, None
            if self.override == "retry":
                return True, None
            if self.override == "skip":
                return False, answer(_skipped(self.call, self.key))
            raise InDoubtCallError(
                self.where.thread_id, self.call["id"], self.call["name"], self.key
            )
        if not m.doubts:
            return True, None
        # replay the decisions before the latest doubt, then ask (or re-read) it
        attempt = max(m.doubts)
        for _ in range(min(m.doubts[attempt], self.available)):
            answer_slot(None)  # answered before: returns the stored decision
        decision = _ask_in_doubt(self.call, self.key, stale=attempt in m.stale)
        if decision.kind == "approve":
            return True, None
        if decision.kind == "respond":
            return False, answer(str(decision.message))
        return False, answer(_skipped(self.call, self.key, decision.message))


def _skipped(call: ToolCallRef, key: str, reason: str | None = None) -> str:
    why = f" Reason: {reason}" if reason else ""
    return (
        f"Not run again: the call of `{call['name']}` was running when the process stopped "
        f"and may or may not have run (idempotency key {key}); the user chose to skip it.{why}"
    )


STALE_TEXT: Final = (
    "The decision sent was for the pause shown before the process stopped, while this call "
    "ran: it was not applied. "
)
"""How the in-doubt question starts its ``error`` when the decision that found the doubt was
meant for an earlier pause (``payload["superseded"]`` is then ``True``)."""


def _ask_in_doubt(call: ToolCallRef, key: str, stale: bool = False) -> Decision:
    node_id, text, build = _in_doubt_pause(call, key, stale)
    schema: dict[str, Any] = {
        "title": f"Decision for {node_id}",
        "description": text,
        "anyOf": [
            _schema_of(decision_schema(_ALLOWED)),
            {"enum": list(_PLAIN)},
        ],
    }

    def accept(raw: Any) -> Decision:
        decision = read_decision(raw, call["name"])
        if decision is None:
            kind = _PLAIN.get(raw) if isinstance(raw, str) else None
            if kind is None:
                raise InvalidDecisionError(
                    f"{raw!r} is no answer to an in-doubt call: approve (or 'retry') runs it "
                    "again with the same key, respond gives its result, reject (or 'skip') "
                    "skips it"
                )
            decision = Decision(kind)
        if decision.kind not in _ALLOWED:
            raise InvalidDecisionError(
                f"{decision.kind!r} is not allowed for an in-doubt call; allowed: "
                f"{', '.join(_ALLOWED)}"
            )
        if decision.kind == "respond" and not decision.message:
            raise InvalidDecisionError("respond needs a message: the result the call had")
        return decision

    return ask(build, schema, accept)


def _in_doubt_pause(
    call: ToolCallRef, key: str, stale: bool
) -> tuple[str, str, Callable[[str | None], InterruptValue]]:
    """The in-doubt question of ``call``: its node id, text and value builder."""
    node_id = f"in_doubt_{call['name']}"
    text = (
        f"This call may or may not have run: {call['name']}({call['args']!r}) (call "
        f"{call['id']}, idempotency key {key}) was running when its process stopped. Approve: "
        "run it again with the same key; respond: it ran, your message is its result; "
        "reject: skip it (the model is told it may have run)."
    )
    payload = {
        "in_doubt": True,
        "name": call["name"],
        "args": call["args"],
        "tool_call_id": call["id"],
        "idempotency_key": key,
        "description": text,
    }
    if stale:
        payload["superseded"] = True
    first = STALE_TEXT + "Answer this question first." if stale else None

    def build(error: str | None) -> InterruptValue:
        return pause_value(
            node_id,
            payload,
            tool_call=call,
            name=call["name"],
            args=call["args"],
            description=text,
            allowed=_ALLOWED,
            error=error or first,
        )

    return node_id, text, build


def in_doubt_pauses(tup: Any, interrupts: Sequence[Any]) -> dict[str, InterruptValue]:
    """The pending pauses that a crash made stale: ``{interrupt id: the in-doubt question}``
    for each pause in ``interrupts`` (a thread's ``Interrupt``s, as stored in checkpoint
    ``tup``) whose tool call started running after it and never ended (a start mark with no
    end and no doubt yet: the run that resumed it died). The thread still lists the pause,
    but the next run of the call asks the in-doubt question first (:class:`_Gate`); a door
    that only reads shows that question instead (one read of ``tup``, done by the caller)."""
    by_call: dict[str, tuple[str, _Marks]] = {}
    for tid, channel, value in (tup.pending_writes if tup is not None else None) or []:
        if channel != START_CHANNEL or not str(tid).startswith(_PREFIX):
            continue
        if not isinstance(value, dict) or value.get("state") != "start":
            continue
        if value.get("call") and value.get("policy") == "ask":  # "fail" stops the run instead
            key = str(tid)[len(_PREFIX) :].rsplit(":", 2)[0]
            by_call[str(value["call"])] = (key, _read_marks(tup, f"{_PREFIX}{key}:", ""))
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
        found[str(pending.id)] = _in_doubt_pause(ref, key, False)[2](None)
    return found


def shown_first(snapshot: Any, tup: Any) -> Any:
    """``snapshot`` (a thread's ``StateSnapshot``, read with its checkpoint ``tup``) as a door
    that only reads shows it: each pause whose approved call's run died (the call may have
    run) replaced by the call's in-doubt question, which the next run asks first
    (:func:`in_doubt_pauses`); ``snapshot`` itself when there is none."""
    if not snapshot.interrupts:
        return snapshot
    stale = in_doubt_pauses(tup, snapshot.interrupts)
    if not stale:
        return snapshot
    shown = tuple(
        Interrupt(value=stale[i.id], id=i.id) if i.id in stale else i for i in snapshot.interrupts
    )
    return snapshot._replace(interrupts=shown)


NOTE_NS: Final = "dynavec_in_doubt"
"""The store namespace ``(NOTE_NS, thread_id)`` of the notes of running ``"ask"`` calls."""


def _note(where: _Where, call: ToolCallRef, key: str, attempt: int) -> dict[str, Any]:
    conf = where.base["configurable"]
    return {
        "call": {"id": call["id"], "name": call["name"], "args": dict(call["args"])},
        "key": key,
        "checkpoint_ns": conf["checkpoint_ns"],
        "checkpoint_id": conf["checkpoint_id"],
        "attempt": attempt,
    }


def _run_store() -> Any:
    """The run's store (``None``: the graph has none, e.g. in process without ``store=``)."""
    try:
        return get_store()
    except RuntimeError:  # not inside a LangGraph run (the tool node always is)
        return None


def noted_in_doubt(
    checkpoint_id: str | None, interrupts: Sequence[Any], notes: Sequence[Mapping[str, Any]]
) -> dict[str, InterruptValue]:
    """What a server's thread state cannot say (see the module doc): ``{interrupt id: the
    in-doubt question}`` for each pause in ``interrupts`` (``Interrupt``s, or the server's
    ``{"id", "value"}`` dicts) of a call whose note (``notes``: the values stored under
    ``(NOTE_NS, thread_id)``) was left on checkpoint ``checkpoint_id``, the thread's latest
    (a note of the agent at the top of the thread, ``checkpoint_ns`` ``""``): the run that
    answered the pause died while the call ran. A pause that already is an in-doubt question
    is kept."""
    by_call: dict[str, Mapping[str, Any]] = {}
    for left in notes:
        made = left.get("call")
        if not isinstance(made, Mapping) or left.get("checkpoint_ns") != "":
            continue
        if checkpoint_id is not None and left.get("checkpoint_id") == checkpoint_id:
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
        found[str(pid)] = _in_doubt_pause(ref, str(note.get("key")), False)[2](None)
    return found


def superseded(before: Sequence[Any], after: Sequence[Any]) -> str | None:
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


def _interrupt_id(pending: Any) -> Any:
    return getattr(pending, "id", None)


def _node_of(pending: Any) -> Any:
    value = getattr(pending, "value", pending)
    return value.get("node_id") if isinstance(value, Mapping) else None


def _schema_of(shape: Any) -> dict[str, Any]:
    from pydantic import TypeAdapter

    schema: dict[str, Any] = TypeAdapter(shape).json_schema()
    return schema


def _gate(data: RunData, call: ToolCallRef, key: str, where: _Where, policy: OnCrash) -> _Gate:
    override = data.in_doubt.get(call["id"])
    keyed = None if data.answers is None else len(data.answers)
    given = None if keyed is None else keyed + int(data.null_answer)
    return _Gate(call, key, policy, where, override, given, keyed, data.sent_at)


STORED_WAIT: Final = 30.0
"""Seconds a tool call waits for the checkpoint it runs from to be stored."""
_STORED_POLL: Final = (0.00025, 0.0005, 0.001, 0.002)
"""The pauses between two reads of that checkpoint: short first (the save takes about a
millisecond), then every 2 ms. With the graph's saver they follow a read that found nothing;
before the first read (:data:`_FIRST_READ`) a sync call sleeps until the save of its
checkpoint here returns, an async one until a save here starts or returns, on no timer."""
_FIRST_READ: Final = 0.02
"""Seconds a call waits for the saves of its own process before it reads a checkpoint the
graph's saver does not know. In a run that is LangGraph's background save of it not started
yet (it waits for the save of the step before, 1-3 ms on PostgreSQL): a read then would only
queue behind those saves on the saver's connection. A checkpoint stored by another process is
known once LangGraph has read it at the start of the run."""


def _saved_in_background(data: RunData) -> bool:
    """Whether the run saves its checkpoints in the background (LangGraph's default
    ``durability="async"``): then a task may start before the checkpoint it runs from is
    stored. ``"sync"`` stores it first; ``"exit"`` stores none per step (nothing to wait for)."""
    return data.durability == "async"


def _not_stored(where: _Where, call: ToolCallRef) -> StorageError:
    return StorageError(
        f"thread {where.thread_id!r}: the checkpoint call {call['id']!r} ({call['name']}) runs "
        f"from was not stored within {STORED_WAIT:.0f} s, so the call did not run (its "
        "idempotency key and crash marks rest on that checkpoint). Check the checkpointer, "
        "then run the thread again (it is unchanged)",
        where.thread_id,
        [],
    )


def _marks_of(saver: BaseCheckpointSaver[Any]) -> StoredCheckpoints | None:
    """What the package's saver knows is stored (a graph's ``HistoryCache`` keeps it as
    ``stored``), else ``None``."""
    marks = getattr(saver, "stored", None)
    return marks if isinstance(marks, StoredCheckpoints) else None


def _stored(where: _Where, call: ToolCallRef, *, read: bool = True) -> Any:
    """The checkpoint the call runs from, once the saver holds it (see
    :func:`_saved_in_background`); ``read=False``: only wait for it (returns ``None``).

    A checkpoint the graph's saver knows stored (its ``put`` here returned, or it was read)
    needs no read to know it, and while its ``put`` runs here the call waits for that ``put``
    to return. One it does not know yet is LangGraph's save not started yet: the call waits
    for the saves here, and reads the checkpoint from the saver only after
    :data:`_FIRST_READ` (another process may have stored it); with any other saver it reads
    the checkpoint until it is there. The usual case is one sleep: until the ``put`` of it
    here returns (``wait_saved``), not woken as that ``put`` starts."""
    marks = _marks_of(where.saver)
    start = time.monotonic()
    deadline, tries = start + STORED_WAIT, 0
    next_read = start
    if marks is not None:
        if marks.wait_saved(where.base, _FIRST_READ) and not read:
            return None
        next_read = start + _FIRST_READ
    while True:
        known = marks is not None and marks.wait(where.base, deadline - time.monotonic())
        if known and not read:
            return None
        now = time.monotonic()
        if known or now >= next_read:
            if (found := where.saver.get_tuple(where.base)) is not None:
                return found
            next_read = now
        if now > deadline:
            raise _not_stored(where, call)
        pause = _STORED_POLL[min(tries, 3)]  # LangGraph's background save of it
        if marks is not None:  # until the read, woken as a save here starts or returns
            marks.nap(max(next_read - now, pause))
        else:
            time.sleep(pause)
        tries += 1


async def _astored(where: _Where, call: ToolCallRef, *, read: bool = True) -> Any:
    """Async twin of :func:`_stored`: the same waits, on the event loop (a save running here
    wakes the call as it returns, on whichever thread or loop it runs; nothing polls it)."""
    marks = _marks_of(where.saver)
    start = time.monotonic()
    deadline, tries = start + STORED_WAIT, 0
    next_read = start if marks is None else start + _FIRST_READ
    while True:
        known = marks is not None and await marks.await_stored(
            where.base, deadline - time.monotonic()
        )
        if known and not read:
            return None
        now = time.monotonic()
        if known or now >= next_read:
            if (found := await where.saver.aget_tuple(where.base)) is not None:
                return found
            next_read = now
        if now > deadline:
            raise _not_stored(where, call)
        pause = _STORED_POLL[min(tries, 3)]  # LangGraph's background save of it
        if marks is not None:  # until the read, woken as a save here starts or returns
            await marks.anap(max(next_read - now, pause))
        else:
            await asyncio.sleep(pause)
        tries += 1


def guarded(
    data: RunData,
    call: ToolCallRef,
    key: str,
    policy: OnCrash | None,
    run: Callable[[], Any],
    answer: Callable[[str], Any],
    resent: bool = False,
) -> Any:
    """Run ``run()`` (one call's body and the node's update) under its ``on_crash`` policy
    (``None``: the tool declares none, which is ``"retry"``: it writes no marks);
    ``answer(text)`` is the update that answers the call with ``text`` without running it.

    No call starts before the checkpoint it runs from is stored (under ``durability="async"``
    LangGraph saves it in the background): a crash after the start then re-runs the same call
    from that checkpoint, with the same key, never a new model turn. ``resent``: a held call of a
    parallel batch sent again (:func:`_held_marks`)."""
    where = _where(data)
    if where is None:  # no saver: nothing is durable, nothing to mark
        return run()
    background = _saved_in_background(data)
    if policy is None or policy == "retry":
        if background:
            _stored(where, call, read=False)
        return run()
    gate = _gate(data, call, key, where, policy)
    saver, base = where.saver, where.base
    found = _stored(where, call) if background else saver.get_tuple(base)
    earlier = _held_marks(saver, found, gate.prefix) if resent else []
    gate.marks = _read_marks(found, gate.prefix, where.task_id, earlier)
    for mark in (gate.new_doubt(), gate.late_answer()):
        if mark is not None:
            saver.put_writes(base, mark[1], mark[0])
    go, early = gate.decide(answer)
    if not go:
        return early
    attempt = gate.marks.latest + 1
    task_id, writes = _mark(gate.prefix, attempt, "start", call=call["id"], policy=policy)
    saver.put_writes(base, writes, task_id)
    store = _run_store() if policy == "ask" else None
    if store is not None:  # for a server's views (module doc): after the start mark
        store.put((NOTE_NS, where.thread_id), key, _note(where, call, key, attempt))
    try:
        result = run()
    except BaseException as error:
        saver.put_writes(base, *_swap(_end(gate.prefix, attempt, error, None)))
        if store is not None:
            store.delete((NOTE_NS, where.thread_id), key)
        raise
    saver.put_writes(base, *_swap(_end(gate.prefix, attempt, None, result)))
    if store is not None:
        store.delete((NOTE_NS, where.thread_id), key)
    return result


async def aguarded(
    data: RunData,
    call: ToolCallRef,
    key: str,
    policy: OnCrash | None,
    run: Callable[[], Awaitable[Any]],
    answer: Callable[[str], Any],
    resent: bool = False,
) -> Any:
    """Async twin of :func:`guarded`."""
    where = _where(data)
    if where is None:
        return await run()
    background = _saved_in_background(data)
    if policy is None or policy == "retry":
        if background:
            await _astored(where, call, read=False)
        return await run()
    gate = _gate(data, call, key, where, policy)
    saver, base = where.saver, where.base
    found = await _astored(where, call) if background else await saver.aget_tuple(base)
    earlier = await _aheld_marks(saver, found, gate.prefix) if resent else []
    gate.marks = _read_marks(found, gate.prefix, where.task_id, earlier)
    for mark in (gate.new_doubt(), gate.late_answer()):
        if mark is not None:
            await saver.aput_writes(base, mark[1], mark[0])
    go, early = gate.decide(answer)
    if not go:
        return early
    attempt = gate.marks.latest + 1
    task_id, writes = _mark(gate.prefix, attempt, "start", call=call["id"], policy=policy)
    await saver.aput_writes(base, writes, task_id)
    store = _run_store() if policy == "ask" else None
    if store is not None:  # as in guarded()
        await store.aput((NOTE_NS, where.thread_id), key, _note(where, call, key, attempt))
    try:
        result = await run()
    except BaseException as error:
        await saver.aput_writes(base, *_swap(_end(gate.prefix, attempt, error, None)))
        if store is not None:
            await store.adelete((NOTE_NS, where.thread_id), key)
        raise
    await saver.aput_writes(base, *_swap(_end(gate.prefix, attempt, None, result)))
    if store is not None:
        await store.adelete((NOTE_NS, where.thread_id), key)
    return result


def _swap(mark: tuple[str, list[Any]]) -> tuple[list[Any], str]:
    return mark[1], mark[0]
