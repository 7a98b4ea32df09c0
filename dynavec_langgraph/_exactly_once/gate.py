"""The decision on a guarded call from its marks: run it, answer it, ask, or fail."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from dynavec_langgraph._errors import InDoubtCallError, InvalidDecisionError
from dynavec_langgraph._exactly_once.keys import OnCrash
from dynavec_langgraph._exactly_once.marks import Marks, MarkWrites, Where, mark
from dynavec_langgraph._graph.run_data import RunData
from dynavec_langgraph._names import START_CHANNEL, START_PREFIX
from dynavec_langgraph._pauses.ask import answer_slot, ask
from dynavec_langgraph._pauses.decisions import Decision, decision_schema, read_decision
from dynavec_langgraph._pauses.value import DecisionKind, InterruptValue, ToolCallRef, pause_value
from dynavec_langgraph._types import JSONSchema, NodeUpdate, TypeAnnotation, UserPayload

__all__ = ["STALE_TEXT", "Gate", "gate_of", "in_doubt_pause"]

_ALLOWED: Final[tuple[DecisionKind, ...]] = ("approve", "respond", "reject")
_PLAIN: Final[dict[str, DecisionKind]] = {"retry": "approve", "skip": "reject"}


@dataclass
class Gate:
    """One guarded call: what the marks say, and what to do."""

    call: ToolCallRef
    key: str
    policy: OnCrash
    where: Where
    override: str | None
    given: int | None = None
    """How many decisions the task has in this run (stored ones and this run's own), ``None``
    when LangGraph does not say."""
    keyed: int | None = None
    """How many of them are stored or given by interrupt id (the rest: a decision sent without
    one, taken by the task's next unanswered pause), ``None`` when LangGraph does not say."""
    sent_at: float | None = None
    """When the request that created this run reached the server (``RunData.sent_at``)."""
    marks: Marks = field(default_factory=Marks)

    @property
    def prefix(self) -> str:
        return f"{START_PREFIX}{self.key}:"

    @property
    def available(self) -> int:
        """The decisions the task can read in this run (stored, and this run's own)."""
        return self.marks.answered if self.given is None else self.given

    def new_doubt(self) -> MarkWrites | None:
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
        return mark(self.prefix, m.latest, "doubt", skip=skip, stale=stale, at=time.time())

    def late_answer(self) -> MarkWrites | None:
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

    def decide(self, answer: Callable[[str], NodeUpdate]) -> tuple[bool, NodeUpdate]:
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
    node_id, text, build = in_doubt_pause(call, key, stale)
    schema: JSONSchema = {
        "title": f"Decision for {node_id}",
        "description": text,
        "anyOf": [
            _schema_of(decision_schema(_ALLOWED)),
            {"enum": list(_PLAIN)},
        ],
    }

    def accept(raw: UserPayload) -> Decision:
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


def in_doubt_pause(
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


def _schema_of(shape: TypeAnnotation) -> JSONSchema:
    from pydantic import TypeAdapter

    schema: JSONSchema = TypeAdapter(shape).json_schema()
    return schema


def gate_of(data: RunData, call: ToolCallRef, key: str, where: Where, policy: OnCrash) -> Gate:
    override = data.in_doubt.get(call["id"])
    keyed = None if data.answers is None else len(data.answers)
    given = None if keyed is None else keyed + int(data.null_answer)
    return Gate(call, key, policy, where, override, given, keyed, data.sent_at)
