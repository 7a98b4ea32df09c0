"""The cached view of a conversation: what the routers and nodes ask of it, answered without
re-reading it.

:class:`Conversation` is the ``messages`` value the reducer returns: a ``list`` that also
carries the analysis of its messages (a :class:`View` on an append-only ``_Log`` that every
conversation grown from the same messages shares, each with its own lock): pending calls
(:func:`pending_calls`), the current run's model calls (:func:`run_steps`), the known message
and call ids (:func:`new_turn`), and each message converted once (:func:`converted`). A step
costs O(new messages); a list without a current analysis (a plain list, a list changed in
place) is analysed when first asked, in O(n). Nothing is kept in this module: each
conversation carries its own analysis (see :mod:`dynavec_langgraph._graph.messages` for the channel
and what it relies on from LangGraph).
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Final, SupportsIndex, TypeVar, cast

from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.messages.tool import ToolCall as LCToolCall

from dynavec_langgraph._graph.call_ids import all_calls, calls_of, unique_call_ids

__all__ = [
    "CALL_KEY",
    "Conversation",
    "View",
    "analysis",
    "carried_view",
    "conversation_with",
    "converted",
    "new_turn",
    "pending_calls",
    "run_steps",
]

T = TypeVar("T")


CALL_KEY: Final = "\x00call:"
"""Tool-call ids share the known-id table with message ids under this prefix."""
_ANSWER_KEY: Final = "\x00answer:"
"""The ``tool_call_id`` of each answer, in the same table under this prefix."""


def _keys(message: BaseMessage) -> list[str | None]:
    """The known-id table keys ``message`` adds: its id, its calls' ids, the call it answers."""
    if isinstance(message, ToolMessage):
        return [message.id, _ANSWER_KEY + str(message.tool_call_id)]
    if isinstance(message, AIMessage):
        return [message.id, *(CALL_KEY + str(c.get("id")) for c in all_calls(message))]
    return [message.id]


class _Log:
    """The analysed messages of one conversation and of the conversations that grew from it
    by appending: an append-only list, and for each id (message ids, ``CALL_KEY`` call ids,
    ``_ANSWER_KEY`` answered call ids) the position where it first appears. A conversation of
    length ``n`` that this log describes knows an id when its position is below ``n``, so
    every such conversation shares one log and a step costs O(new messages)."""

    __slots__ = ("first", "lock", "memo", "messages")

    def __init__(self, messages: Iterable[BaseMessage] = ()) -> None:
        self.lock = threading.Lock()  # guards the check-then-append of a step
        self.messages: list[BaseMessage] = []
        self.first: dict[str | None, int] = {}
        self.memo: dict[Callable[[BaseMessage], object], list[object]] = {}  # see converted()
        for m in messages:
            self.append(m)

    def append(self, message: BaseMessage) -> None:
        position = len(self.messages)
        self.messages.append(message)
        for key in _keys(message):
            self.first.setdefault(key, position)

    def prefix(self, length: int) -> _Log:
        """A new log of the first ``length`` messages (a conversation that went another way)."""
        new = _Log()
        new.messages = self.messages[:length]
        new.first = dict(self.first)
        new.memo = {convert: done[:length] for convert, done in self.memo.items()}
        for m in self.messages[length:]:
            for key in _keys(m):
                if new.first.get(key, length) >= length:
                    new.first.pop(key, None)
        return new


class View:
    """The analysis of one conversation: the first ``length`` messages of ``log``, how many
    model calls the current run made, and its assistant messages with unanswered calls.
    Immutable; a longer conversation gets a new view on the same log."""

    __slots__ = ("length", "log", "open", "steps")

    def __init__(self, log: _Log, length: int, steps: int, open: tuple[AIMessage, ...]) -> None:
        self.log, self.length, self.steps, self.open = log, length, steps, open

    def has(self, key: str | None) -> bool:
        return self.log.first.get(key, self.length) < self.length

    def answered(self, cid: object) -> bool:
        return isinstance(cid, str) and self.has(_ANSWER_KEY + cid)

    def pending(self) -> list[LCToolCall]:
        if not self.open:
            return []
        return [c for c in calls_of(self.open[0]) if not self.answered(c["id"])]

    def extended(self, items: Sequence[BaseMessage]) -> tuple[View, list[BaseMessage]]:
        """The view of this conversation with ``items`` appended, and the message objects to
        append (the log's own objects where the log already went on with equal messages, as
        when LangGraph applies a step's writes to a copy for the routers and then for real)."""
        log, n, count = self.log, self.length, len(items)
        with log.lock:
            known = log.messages
            same = min(count, len(known) - n)
            for i in range(same):
                old = known[n + i]
                if old is not items[i] and old != items[i]:
                    log, same = log.prefix(n), 0
                    break
            for m in items[same:]:
                log.append(m)
            added = log.messages[n : n + count]
        steps, open = self.steps, self.open
        for m in added:
            if isinstance(m, AIMessage):
                steps += 1
                if m.tool_calls or m.invalid_tool_calls:
                    open += (m,)
            elif isinstance(m, HumanMessage):
                steps = 0
        view = View(log, n + count, steps, open)
        if open:
            view.open = tuple(
                m for m in open if any(not view.answered(c["id"]) for c in calls_of(m))
            )
        return view, added


def carried_view(messages: Sequence[BaseMessage]) -> View | None:
    """The view ``messages`` carries, if it is a :class:`Conversation` with a current one."""
    if type(messages) is Conversation or isinstance(messages, Conversation):
        try:
            view = messages._view
        except AttributeError:  # an instance made without __init__
            return None
        if view is not None and view.length == len(messages):
            n = view.length
            if n == 0 or messages[-1] is view.log.messages[n - 1]:
                return view
    return None


def analysis(messages: Sequence[BaseMessage]) -> View:
    """The view of ``messages``: the one it carries, else computed (O(n)) and, on a
    :class:`Conversation`, kept on it."""
    view = carried_view(messages)
    if view is not None:
        return view
    view = View(_Log(), 0, 0, ()).extended(list(messages))[0]
    if isinstance(messages, Conversation):
        messages._view = view
    return view


class Conversation(list[AnyMessage]):
    """The ``messages`` value this package's reducer returns: a plain ``list`` of messages
    that also carries the analysis of its messages (pending calls, run steps, known ids), so
    nodes and the next reducer call read it instead of recomputing it (O(n) per step).

    Every change to the list drops the analysis (it is recomputed when asked for). Copies keep
    it (``copy.copy``, as LangGraph's channels copy their value); pickling and serializers
    store a plain list, so checkpoints hold exactly what a ``list`` would.
    """

    __slots__ = ("_view",)

    def __init__(self, messages: Iterable[AnyMessage] = ()) -> None:
        super().__init__(messages)
        self._view: View | None = None

    @property
    def analysed(self) -> bool:
        """Whether the list carries the current analysis of its messages: then
        :func:`pending_calls`, :func:`run_steps` and :func:`new_turn` read it in O(1) and the
        next step extends it; otherwise the first of them computes it (O(n)) and keeps it."""
        return carried_view(self) is not None

    def __copy__(self) -> Conversation:
        new = Conversation(self)
        new._view = self._view
        return new

    def __reduce__(self) -> tuple[object, ...]:
        return (list, (list(self),))

    def _changed(self) -> None:
        self._view = None

    def __setitem__(self, index: Any, value: Any) -> None:
        self._changed()
        super().__setitem__(index, value)

    def __delitem__(self, index: SupportsIndex | slice) -> None:
        self._changed()
        super().__delitem__(index)

    def __iadd__(self, other: Iterable[AnyMessage]) -> Conversation:  # type: ignore[override,misc]
        self._changed()
        return super().__iadd__(other)

    def __imul__(self, count: SupportsIndex) -> Conversation:
        self._changed()
        return super().__imul__(count)

    def append(self, message: AnyMessage) -> None:
        self._changed()
        super().append(message)

    def extend(self, messages: Iterable[AnyMessage]) -> None:
        self._changed()
        super().extend(messages)

    def insert(self, index: SupportsIndex, message: AnyMessage) -> None:
        self._changed()
        super().insert(index, message)

    def pop(self, index: SupportsIndex = -1) -> AnyMessage:
        self._changed()
        return super().pop(index)

    def remove(self, message: AnyMessage) -> None:
        self._changed()
        super().remove(message)

    def clear(self) -> None:
        self._changed()
        super().clear()

    def sort(self, *args: Any, **kwargs: Any) -> None:
        self._changed()
        super().sort(*args, **kwargs)

    def reverse(self) -> None:
        self._changed()
        super().reverse()


def conversation_with(
    messages: Sequence[BaseMessage], view: View | None, new: Sequence[BaseMessage] = ()
) -> Conversation:
    """``messages + new`` as a :class:`Conversation` carrying ``view``."""
    out = Conversation(messages)  # type: ignore[arg-type]
    if new:
        list.extend(out, new)  # type: ignore[misc]
    out._view = view
    return out


def new_turn(messages: Sequence[BaseMessage], response: AIMessage) -> AIMessage:
    """The model's ``response`` ready to join ``messages``: a message id and tool-call ids
    that the conversation does not have yet (see :func:`unique_call_ids`); a provider that
    repeats either would otherwise replace an earlier turn or have its calls look answered."""
    view = analysis(messages)
    if not response.id or view.has(response.id):
        response = response.model_copy(update={"id": f"run-{uuid.uuid4()}"})
    if not all_calls(response):
        return response
    return unique_call_ids(response, lambda cid: view.has(CALL_KEY + cid))[0]


def converted(messages: Sequence[BaseMessage], convert: Callable[[BaseMessage], T]) -> list[T]:
    """``[convert(m) for m in messages]``, each message of an analysed conversation converted
    once: the results are kept with its log (shared by the conversations grown from it), so a
    long thread pays only for its new messages. ``convert`` must be a pure function of the
    message, and callers must not change what it returns (copy it before handing it out)."""
    view = carried_view(messages)
    if view is None:
        return [convert(m) for m in messages]
    log, n = view.log, view.length
    with log.lock:
        done = log.memo.setdefault(convert, [])
        done.extend(convert(m) for m in log.messages[len(done) : n])
        return cast("list[T]", done[:n])  # the memo of ``convert`` holds its results


def pending_calls(messages: Sequence[BaseMessage]) -> list[LCToolCall]:
    """The unanswered calls of the earliest assistant message that still has some, in order.

    Usually that is the latest assistant message. An older one can be left with unanswered
    calls when a parent graph routed new messages elsewhere while the agent was paused; those
    calls are answered first, so the model never sees a call without its answer.
    """
    return analysis(messages).pending()


def run_steps(messages: Sequence[BaseMessage]) -> int:
    """How many model calls the current run made: assistant messages after the last user one."""
    return analysis(messages).steps
