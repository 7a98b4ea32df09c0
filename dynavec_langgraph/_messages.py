"""The conversation: the provider-safe ``messages`` reducer and what nodes read from it.

:func:`merge_conversation` is the reducer (``add_messages`` semantics, kept valid for every
provider); :func:`pending_calls`, :func:`run_steps` and :func:`new_turn` are what the routers
and nodes ask of a conversation. Converting messages to and from dynavec's records lives in
:mod:`dynavec_langgraph._conversion`.

**No process-global state.** Answering those questions from scratch costs O(n) per step, so
the answers travel with the value: the reducer returns a :class:`Conversation`, a ``list``
that also carries an analysis of its messages (a ``_View`` on an append-only ``_Log`` that
every conversation grown from the same messages shares, each with its own lock). The graph's
``messages`` channel is a :class:`ConversationChannel`, so the value is a
:class:`Conversation` from the first step, also after loading a checkpoint. Nothing is kept in
this module: two agents, a parent graph and its subgraph, or two threads of one graph each
carry their own analysis, and a conversation nobody holds is garbage.

What this relies on from LangGraph (``langgraph`` 1.2), each pinned by
``tests/test_conversation_state.py``:

1. Nodes and conditional edges get the channel's value object itself (``read_channels``
   returns ``channel.get()``), so they read the analysis instead of recomputing it.
2. A router's fresh read applies the node's writes to ``channel.copy()``, and
   ``DeltaChannel.copy()`` copies the value with ``copy.copy`` (:meth:`Conversation.__copy__`
   keeps the analysis); the real update then applies the same writes again, which the shared
   log recognises (equal messages) instead of starting over.
3. ``DeltaChannel`` calls the reducer with its current value (or such a copy) as the base.
4. ``StateGraph`` rebuilds an annotation's ``DeltaChannel`` as
   ``cls(reducer, typ, snapshot_frequency=...)``, and ``copy()`` / ``from_checkpoint()`` build
   ``self.__class__`` the same way, so the subclass survives.

Checkpoints stay what ``DeltaChannel(merge_conversation)`` stores: the writes are the nodes'
own lists, and snapshots hold the value, which LangGraph's serializer (and pickle, through
:meth:`Conversation.__reduce__`) stores as a plain ``list`` (also pinned). If any reliance
breaks, results stay right and only the speed is lost: a value without a current analysis (a
plain list from a parent graph's ``add_messages`` state or ``get_state``, a list someone
changed in place) is analysed when first asked, in O(n).
"""

from __future__ import annotations

import operator
import threading
import uuid
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Final, Self, TypeVar

from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    ToolMessage,
    convert_to_messages,
)
from langchain_core.messages.tool import ToolCall as LCToolCall
from langgraph.channels import DeltaChannel
from langgraph.checkpoint.base import PendingWrite
from langgraph.graph.message import REMOVE_ALL_MESSAGES

__all__ = [
    "ORIGINAL_CALL_IDS_KEY",
    "Conversation",
    "ConversationChannel",
    "add_conversation",
    "calls_of",
    "converted",
    "merge_conversation",
    "new_turn",
    "pending_calls",
    "run_steps",
    "unique_call_ids",
]

T = TypeVar("T")
_ID_NAMESPACE = uuid.UUID("6f1c6a52-55a8-4d6b-9d0e-3c1f0c1e9a77")
_CALL_NAMESPACE = uuid.UUID("0b7e5a3c-2f4d-4c1e-9a8b-5d6e7f8a9b0c")
ORIGINAL_CALL_IDS_KEY: Final = "dynavec_original_tool_call_ids"
"""``AIMessage.response_metadata[ORIGINAL_CALL_IDS_KEY]``: ``{new id: the provider's id}`` for
the calls of that message whose id was replaced (see :func:`unique_call_ids`)."""


def _fresh_call_id(message_id: Any, position: int, taken: Callable[[str], bool]) -> str:
    """A call id derived from the message id and the call's position (so a replayed history
    gets the same ids), never a ``taken`` one."""
    attempt = 0
    while True:
        fresh = f"call_{uuid.uuid5(_CALL_NAMESPACE, f'{message_id}|{position}|{attempt}').hex[:24]}"
        if not taken(fresh):
            return fresh
        attempt += 1


def unique_call_ids(
    message: AIMessage, taken: Callable[[str], bool]
) -> tuple[AIMessage, list[tuple[Any, str]]]:
    """``message`` with a tool-call id that no other call of the thread has, for every call.

    Some providers number calls afresh each turn (``call_0``, ``call_1``, ...), repeat one id,
    or leave ids empty; answers are matched to calls by id, so such a call would look answered
    and be lost. A call whose id is empty or not a string, repeated within the message, or
    ``taken`` (used by another message of the thread) gets a fresh id derived from the message
    id and its position. The provider's originals are kept in
    ``response_metadata[ORIGINAL_CALL_IDS_KEY]``; providers are sent the new id on both the
    call and its answer, which every provider accepts.

    Returns:
        The message (the same object when nothing changed) and ``[(old id, new id), ...]``.
    """
    used: set[str] = set()
    renames: list[tuple[Any, str]] = []

    def blocked(cid: str) -> bool:
        return cid in used or taken(cid)

    def fix(call: Any, position: int) -> Any:
        cid = call.get("id")
        if isinstance(cid, str) and cid.strip() and not blocked(cid):
            used.add(cid)
            return call
        new = _fresh_call_id(message.id, position, blocked)
        used.add(new)
        renames.append((cid, new))
        return {**call, "id": new}

    calls = [fix(c, i) for i, c in enumerate(message.tool_calls)]
    invalid = [fix(c, len(calls) + i) for i, c in enumerate(message.invalid_tool_calls)]
    if not renames:
        return message, []
    originals = dict(message.response_metadata.get(ORIGINAL_CALL_IDS_KEY) or {})
    originals.update({new: old for old, new in renames})
    update = {
        "tool_calls": calls,
        "invalid_tool_calls": invalid,
        "response_metadata": {**message.response_metadata, ORIGINAL_CALL_IDS_KEY: originals},
    }
    return message.model_copy(update=update), renames


def calls_of(message: AIMessage) -> list[LCToolCall]:
    """All tool calls of ``message``, including calls whose arguments were not valid JSON
    (those get ``args == {}`` and are answered with an error observation)."""
    calls = list(message.tool_calls)
    for bad in message.invalid_tool_calls:
        if bad.get("id"):
            calls.append(
                {"name": bad.get("name") or "", "args": {}, "id": bad["id"], "type": "tool_call"}
            )
    return calls


def _flatten(writes: Iterable[Any]) -> Iterable[Any]:
    for write in writes:
        if isinstance(write, list | tuple) and not (
            isinstance(write, tuple) and len(write) == 2 and isinstance(write[0], str)
        ):
            yield from write
        else:
            yield write


def _canonical(messages: list[AnyMessage]) -> list[AnyMessage]:
    """Put each tool answer right after the assistant message that asked for it.

    Anything that arrived while calls were unanswered (a user message sent to a paused
    thread) moves after the answers, so no provider ever sees a tool call without its answer
    before another message. The relative order of all other messages is kept.
    """
    owners: set[str] = set()
    answers: dict[str, AnyMessage] = {}
    for m in messages:
        if isinstance(m, AIMessage) and (m.tool_calls or m.invalid_tool_calls):
            owners.update(c["id"] for c in calls_of(m) if c["id"])
        elif isinstance(m, ToolMessage):
            answers.setdefault(m.tool_call_id, m)
    if not owners:
        return messages
    out: list[AnyMessage] = []
    for m in messages:
        if isinstance(m, ToolMessage) and m.tool_call_id in owners:
            continue
        out.append(m)
        if isinstance(m, AIMessage) and (m.tool_calls or m.invalid_tool_calls):
            for call in calls_of(m):
                answer = answers.get(call["id"] or "")
                if answer is not None:
                    out.append(answer)
    return out


def _with_id(message: BaseMessage, position: int) -> BaseMessage:
    """``message`` with the deterministic id of its position. A message whose id is ``None``
    gets it in place, as LangGraph's loop stamps the messages written to a ``DeltaChannel``
    (``langgraph.pregel._messages.ensure_message_ids``, langgraph 1.2): the id this step
    reads is then the one that is stored, also when a router's fresh read meets the write
    before the loop stamps it (else the stored message would get another id than the run
    used, and the history kept between calls would part from the live one every run)."""
    seed = f"{position}:{message.type}:{message.content!r}"
    fresh = str(uuid.uuid5(_ID_NAMESPACE, seed))
    if message.id is None:
        message.id = fresh
        return message
    return message.model_copy(update={"id": fresh})


_CALL_KEY: Final = "\x00call:"
"""Tool-call ids share the known-id table with message ids under this prefix."""
_ANSWER_KEY: Final = "\x00answer:"
"""The ``tool_call_id`` of each answer, in the same table under this prefix."""


def _all_calls(message: AIMessage) -> list[Any]:
    return [*message.tool_calls, *message.invalid_tool_calls]


def _keys(message: BaseMessage) -> list[Any]:
    """The known-id table keys ``message`` adds: its id, its calls' ids, the call it answers."""
    if isinstance(message, ToolMessage):
        return [message.id, _ANSWER_KEY + str(message.tool_call_id)]
    if isinstance(message, AIMessage):
        return [message.id, *(_CALL_KEY + str(c.get("id")) for c in _all_calls(message))]
    return [message.id]


class _Log:
    """The analysed messages of one conversation and of the conversations that grew from it
    by appending: an append-only list, and for each id (message ids, ``_CALL_KEY`` call ids,
    ``_ANSWER_KEY`` answered call ids) the position where it first appears. A conversation of
    length ``n`` that this log describes knows an id when its position is below ``n``, so
    every such conversation shares one log and a step costs O(new messages)."""

    __slots__ = ("first", "lock", "memo", "messages")

    def __init__(self, messages: Iterable[BaseMessage] = ()) -> None:
        self.lock = threading.Lock()  # guards the check-then-append of a step
        self.messages: list[BaseMessage] = []
        self.first: dict[Any, int] = {}
        self.memo: dict[Callable[[Any], Any], list[Any]] = {}  # see converted()
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


class _View:
    """The analysis of one conversation: the first ``length`` messages of ``log``, how many
    model calls the current run made, and its assistant messages with unanswered calls.
    Immutable; a longer conversation gets a new view on the same log."""

    __slots__ = ("length", "log", "open", "steps")

    def __init__(self, log: _Log, length: int, steps: int, open: tuple[AIMessage, ...]) -> None:
        self.log, self.length, self.steps, self.open = log, length, steps, open

    def has(self, key: Any) -> bool:
        return self.log.first.get(key, self.length) < self.length

    def answered(self, cid: Any) -> bool:
        return isinstance(cid, str) and self.has(_ANSWER_KEY + cid)

    def pending(self) -> list[LCToolCall]:
        if not self.open:
            return []
        return [c for c in calls_of(self.open[0]) if not self.answered(c["id"])]

    def extended(self, items: Sequence[BaseMessage]) -> tuple[_View, list[BaseMessage]]:
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
        view = _View(log, n + count, steps, open)
        if open:
            view.open = tuple(
                m for m in open if any(not view.answered(c["id"]) for c in calls_of(m))
            )
        return view, added


def _carried(messages: Sequence[BaseMessage]) -> _View | None:
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


def _analysis(messages: Sequence[BaseMessage]) -> _View:
    """The view of ``messages``: the one it carries, else computed (O(n)) and, on a
    :class:`Conversation`, kept on it."""
    view = _carried(messages)
    if view is not None:
        return view
    view = _View(_Log(), 0, 0, ()).extended(list(messages))[0]
    if isinstance(messages, Conversation):
        messages._view = view
    return view


class Conversation(list[AnyMessage]):
    """The ``messages`` value this package's reducer returns: a plain ``list`` of messages
    that also carries the analysis of its messages (pending calls, run steps, known ids), so
    nodes and the next reducer call read it instead of recomputing it (O(n) per step).

    Any change to the list drops the analysis (it is recomputed when asked for). Copies keep
    it (``copy.copy``, as LangGraph's channels copy their value); pickling and serializers
    store a plain list, so checkpoints hold exactly what a ``list`` would.
    """

    __slots__ = ("_view",)

    def __init__(self, messages: Iterable[AnyMessage] = ()) -> None:
        super().__init__(messages)
        self._view: _View | None = None

    @property
    def analysed(self) -> bool:
        """Whether the list carries the current analysis of its messages: then
        :func:`pending_calls`, :func:`run_steps` and :func:`new_turn` read it in O(1) and the
        next step extends it; otherwise the first of them computes it (O(n)) and keeps it."""
        return _carried(self) is not None

    def __copy__(self) -> Conversation:
        new = Conversation(self)
        new._view = self._view
        return new

    def __reduce__(self) -> tuple[Any, ...]:
        return (list, (list(self),))

    def _changed(self) -> None:
        self._view = None

    def __setitem__(self, index: Any, value: Any) -> None:
        self._changed()
        super().__setitem__(index, value)

    def __delitem__(self, index: Any) -> None:
        self._changed()
        super().__delitem__(index)

    def __iadd__(self, other: Iterable[AnyMessage]) -> Conversation:  # type: ignore[override,misc]
        self._changed()
        return super().__iadd__(other)

    def __imul__(self, count: Any) -> Conversation:  # type: ignore[misc]
        self._changed()
        return super().__imul__(count)

    def append(self, message: AnyMessage) -> None:
        self._changed()
        super().append(message)

    def extend(self, messages: Iterable[AnyMessage]) -> None:
        self._changed()
        super().extend(messages)

    def insert(self, index: Any, message: AnyMessage) -> None:
        self._changed()
        super().insert(index, message)

    def pop(self, index: Any = -1) -> AnyMessage:
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


def _conversation(
    messages: Sequence[BaseMessage], view: _View | None, new: Sequence[BaseMessage] = ()
) -> Conversation:
    """``messages + new`` as a :class:`Conversation` carrying ``view``."""
    out = Conversation(messages)  # type: ignore[arg-type]
    if new:
        list.extend(out, new)  # type: ignore[misc]
    out._view = view
    return out


def _new_call_keys(message: AIMessage, view: _View, added: set[Any]) -> list[str] | None:
    """The known-id keys of ``message``'s call ids, or ``None`` when one of them is empty,
    repeated or already in the thread (then the full merge gives it a fresh id)."""
    keys: list[str] = []
    for call in _all_calls(message):
        cid = call.get("id")
        if not isinstance(cid, str) or not cid.strip():
            return None
        key = _CALL_KEY + cid
        if key in added or key in keys or view.has(key):
            return None
        keys.append(key)
    return keys


def _open_calls(state: Sequence[AnyMessage]) -> list[str] | None:
    """Unanswered call ids of the last assistant message, in call order, when the tail after
    it holds only its answers in call order; ``None`` when the tail needs a closer look."""
    for i in range(len(state) - 1, -1, -1):
        m = state[i]
        if isinstance(m, ToolMessage):
            continue
        if not isinstance(m, AIMessage):
            return [] if i == len(state) - 1 else None
        ids = [c["id"] or "" for c in calls_of(m)]
        answered = [t.tool_call_id for t in state[i + 1 :] if isinstance(t, ToolMessage)]
        return ids[len(answered) :] if ids[: len(answered)] == answered else None
    return [] if not state else None


def _appended(state: Sequence[AnyMessage], items: list[Any]) -> Conversation | None:
    """The fast path of :func:`merge_conversation`: new messages appended to a conversation
    that stays in canonical order (the usual step). ``None`` when the full merge is needed."""
    if not items:
        return _conversation(state, _carried(state))
    open_calls = _open_calls(state)
    if open_calls is None:
        return None
    view = _analysis(state)
    added: set[Any] = set()
    new: list[BaseMessage] = []
    for item in items:
        if not isinstance(item, BaseMessage) or isinstance(item, RemoveMessage):
            return None
        if not item.id:  # the same deterministic id the full merge gives
            item = _with_id(item, len(state) + len(new))
        if item.id in added or view.has(item.id):
            return None
        added.add(item.id)
        if isinstance(item, ToolMessage):
            if not open_calls or item.tool_call_id != open_calls[0]:
                return None
            open_calls = open_calls[1:]
        elif open_calls:
            return None
        elif isinstance(item, AIMessage):
            keys = _new_call_keys(item, view, added)
            if keys is None:
                return None
            added.update(keys)
            open_calls = [c["id"] or "" for c in calls_of(item)]
        new.append(item)
    view, new = view.extended(new)
    return _conversation(state, view, new)


def merge_conversation(state: Sequence[AnyMessage], writes: Sequence[Any]) -> Conversation:
    """The ``messages`` reducer: ``add_messages`` semantics, kept valid for every provider.

    Messages with a known id replace it; ``RemoveMessage`` removes (``REMOVE_ALL_MESSAGES``
    clears); new messages are appended, then :func:`_canonical` ordering is applied. It takes
    a batch of writes and is batching-invariant, as LangGraph's ``DeltaChannel`` requires;
    messages without an id get a deterministic one, so a replayed history is identical.
    """
    items = list(_flatten(writes))
    fast = _appended(state, items)
    if fast is not None:
        return fast
    messages: list[AnyMessage | None] = list(state)
    index = {m.id: i for i, m in enumerate(messages) if m is not None and m.id}
    owners = {  # tool-call id -> id of the message that made the call
        c.get("id"): m.id for m in state if isinstance(m, AIMessage) for c in _all_calls(m)
    }
    answered = {m.tool_call_id for m in state if isinstance(m, ToolMessage)}
    for item in items:
        if isinstance(item, BaseMessage):
            message: BaseMessage = item
        else:
            message = convert_to_messages([item])[0]
        if isinstance(message, RemoveMessage):
            if message.id == REMOVE_ALL_MESSAGES:
                messages, index, owners = [], {}, {}
            elif message.id in index:
                messages[index.pop(message.id)] = None
            continue
        if not message.id:
            message = _with_id(message, len(messages))
        key = str(message.id)
        if isinstance(message, AIMessage) and _all_calls(message):
            message = unique_call_ids(message, _Taken(owners, key))[0]
            owners.update((c["id"], key) for c in _all_calls(message))
        elif isinstance(message, ToolMessage):
            if message.tool_call_id in answered or message.tool_call_id not in owners:
                message = _answer_renamed(message, messages, answered)
            answered.add(message.tool_call_id)
        if key in index:
            messages[index[key]] = message  # type: ignore[call-overload]
        else:
            index[key] = len(messages)
            messages.append(message)  # type: ignore[arg-type]
    merged = _canonical([m for m in messages if m is not None])
    view, n = _carried(state), len(state)
    if view is not None and len(merged) >= n and all(map(operator.is_, merged[:n], state)):
        view, added = view.extended(merged[n:])  # new messages reordered among themselves
        return _conversation(state, view, added)
    result = Conversation(merged)
    _analysis(result)  # computed once here; the next steps extend it
    return result


class _Taken:
    """A call id is taken when another message of the thread made a call with it."""

    def __init__(self, owners: dict[Any, Any], key: str) -> None:
        self.owners, self.key = owners, key

    def __call__(self, cid: str) -> bool:
        return bool(self.owners.get(cid, self.key) != self.key)


def _answer_renamed(
    answer: ToolMessage, messages: Sequence[AnyMessage | None], answered: set[str]
) -> ToolMessage:
    """An answer that names a call by the provider's id after that call got a fresh one (a
    history with repeated ids, sent as input): it answers the latest unanswered call that had
    that id. Found from the messages alone, so the reducer stays batching-invariant."""
    for m in reversed(messages):
        if not isinstance(m, AIMessage):
            continue
        originals = m.response_metadata.get(ORIGINAL_CALL_IDS_KEY) or {}
        for call in _all_calls(m):
            cid = call.get("id")
            original = originals.get(cid, answer) if cid not in answered else answer
            if original is not answer and (original or "") == (answer.tool_call_id or ""):
                return answer.model_copy(update={"tool_call_id": cid})
    return answer


def add_conversation(left: Sequence[AnyMessage], right: Any) -> Conversation:
    """Binary form of :func:`merge_conversation` for ``Annotated[list, add_conversation]``."""
    return merge_conversation(left or [], [right])


def new_turn(messages: Sequence[BaseMessage], response: AIMessage) -> AIMessage:
    """The model's ``response`` ready to join ``messages``: a message id and tool-call ids
    that the conversation does not have yet (see :func:`unique_call_ids`); a provider that
    repeats either would otherwise replace an earlier turn or have its calls look answered."""
    view = _analysis(messages)
    if not response.id or view.has(response.id):
        response = response.model_copy(update={"id": f"run-{uuid.uuid4()}"})
    if not _all_calls(response):
        return response
    return unique_call_ids(response, lambda cid: view.has(_CALL_KEY + cid))[0]


def converted(messages: Sequence[BaseMessage], convert: Callable[[BaseMessage], T]) -> list[T]:
    """``[convert(m) for m in messages]``, each message of an analysed conversation converted
    once: the results are kept with its log (shared by the conversations grown from it), so a
    long thread pays only for its new messages. ``convert`` must be a pure function of the
    message, and callers must not change what it returns (copy it before handing it out)."""
    view = _carried(messages)
    if view is None:
        return [convert(m) for m in messages]
    log, n = view.log, view.length
    with log.lock:
        done = log.memo.setdefault(convert, [])
        done.extend(convert(m) for m in log.messages[len(done) : n])
        return done[:n]


def pending_calls(messages: Sequence[BaseMessage]) -> list[LCToolCall]:
    """The unanswered calls of the earliest assistant message that still has some, in order.

    Usually that is the latest assistant message. An older one can be left with unanswered
    calls when a parent graph routed new messages elsewhere while the agent was paused; those
    calls are answered first, so the model never sees a call without its answer.
    """
    return _analysis(messages).pending()


def run_steps(messages: Sequence[BaseMessage]) -> int:
    """How many model calls the current run made: assistant messages after the last user one."""
    return _analysis(messages).steps


class ConversationChannel(DeltaChannel[list[AnyMessage]]):
    """LangGraph's ``DeltaChannel`` with :func:`merge_conversation`, whose value is a
    :class:`Conversation` (the reducer's result, or the list a checkpoint held), so the
    analysis is computed at most once per loaded thread and then kept up to date step by
    step. (After an ``Overwrite`` the value is the given list until the next write; reads
    of it compute the analysis.)

    Use it as ``messages: Annotated[list[AnyMessage], ConversationChannel()]``. It stores
    exactly what ``DeltaChannel(merge_conversation)`` stores.
    """

    __slots__ = ()

    def __init__(
        self,
        reducer: Callable[[Any, Sequence[Any]], Any] = merge_conversation,
        typ: Any = None,
        *,
        snapshot_frequency: int = 100,
    ) -> None:
        super().__init__(reducer, typ, snapshot_frequency=snapshot_frequency)

    def _wrap(self) -> None:
        if type(self.value) is list:
            self.value = Conversation(self.value)

    def from_checkpoint(self, checkpoint: Any) -> Self:
        new = super().from_checkpoint(checkpoint)
        new._wrap()
        return new

    def replay_writes(self, writes: Sequence[PendingWrite]) -> None:
        super().replay_writes(writes)
        self._wrap()
