"""The conversation's reducer: the provider-safe ``messages`` reducer and its channel.

:func:`merge_conversation` is the reducer (``add_messages`` semantics, kept valid for every
provider) and :class:`ConversationChannel` the channel that holds its value. What the routers
and nodes ask of a conversation (:func:`pending_calls`, :func:`run_steps`, :func:`new_turn`)
is answered by the cached view, :mod:`dynavec_langgraph._graph.conversation_view`; the tool-call ids
are :mod:`dynavec_langgraph._graph.call_ids`'s. Converting messages to and from dynavec's records
lives in :mod:`dynavec_langgraph._dynavec.conversion`.

**No process-global state.** Answering those questions from scratch costs O(n) per step, so
the answers travel with the value: the reducer returns a :class:`Conversation`, a ``list``
that also carries an analysis of its messages (a ``View`` on an append-only ``_Log`` that
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
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Self

from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    MessageLikeRepresentation,
    RemoveMessage,
    ToolMessage,
    convert_to_messages,
)
from langgraph.channels import DeltaChannel
from langgraph.checkpoint.base import PendingWrite
from langgraph.graph.message import REMOVE_ALL_MESSAGES

from dynavec_langgraph._graph.call_ids import (
    Taken,
    all_calls,
    answer_renamed,
    calls_of,
    unique_call_ids,
)
from dynavec_langgraph._graph.conversation_view import (
    CALL_KEY,
    Conversation,
    View,
    analysis,
    carried_view,
    conversation_with,
    converted,
    new_turn,
    pending_calls,
    run_steps,
)

__all__ = [
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
]  # the reducer and its channel; the rest re-exported for the modules that import it from here

Write = MessageLikeRepresentation | Sequence[MessageLikeRepresentation]
"""One write of the ``messages`` channel: a message (LangChain's message-like forms: a
message, a dict, a ``(role, content)`` pair, a text) or a list of them (``add_messages``'s)."""

_ID_NAMESPACE = uuid.UUID("6f1c6a52-55a8-4d6b-9d0e-3c1f0c1e9a77")


def _flatten(writes: Iterable[Write]) -> Iterator[Any]:
    """The messages of ``writes`` one by one, as nodes wrote them (a list is its messages, a
    ``(role, content)`` pair one message): a node may write anything, which
    ``convert_to_messages`` refuses."""
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


def stamp_input_ids(input: object) -> None:
    """Give the message objects of a run's input (``{"messages": ...}``) an id, in place,
    before the run starts, as ``add_messages`` gives a new message one.

    The input is held by LangGraph's ``__start__`` channel, which the loop saves in a
    background thread while the first task runs; stamped later (by :func:`_with_id`, when
    ``__start__``'s router reads its write), the object could change while it is being saved,
    and the checkpoint would differ from the one the run used."""
    if not isinstance(input, dict):
        return
    value = input.get("messages")
    for message in value if isinstance(value, list | tuple) else (value,):
        if isinstance(message, BaseMessage) and not message.id:
            message.id = str(uuid.uuid4())


def _new_call_keys(message: AIMessage, view: View, added: set[str | None]) -> list[str] | None:
    """The known-id keys of ``message``'s call ids, or ``None`` when one of them is empty,
    repeated or already in the thread (then the full merge gives it a fresh id)."""
    keys: list[str] = []
    for call in all_calls(message):
        cid = call.get("id")
        if not isinstance(cid, str) or not cid.strip():
            return None
        key = CALL_KEY + cid
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


def _appended(
    state: Sequence[AnyMessage], items: list[MessageLikeRepresentation]
) -> Conversation | None:
    """The fast path of :func:`merge_conversation`: new messages appended to a conversation
    that stays in canonical order (the usual step). ``None`` when the full merge is needed."""
    if not items:
        return conversation_with(state, carried_view(state))
    open_calls = _open_calls(state)
    if open_calls is None:
        return None
    view = analysis(state)
    added: set[str | None] = set()
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
    return conversation_with(state, view, new)


def merge_conversation(state: Sequence[AnyMessage], writes: Sequence[Write]) -> Conversation:
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
        c.get("id"): m.id for m in state if isinstance(m, AIMessage) for c in all_calls(m)
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
        if isinstance(message, AIMessage) and all_calls(message):
            message = unique_call_ids(message, Taken(owners, key))[0]
            owners.update((c["id"], key) for c in all_calls(message))
        elif isinstance(message, ToolMessage):
            if message.tool_call_id in answered or message.tool_call_id not in owners:
                message = answer_renamed(message, messages, answered)
            answered.add(message.tool_call_id)
        if key in index:
            messages[index[key]] = message  # type: ignore[call-overload]
        else:
            index[key] = len(messages)
            messages.append(message)  # type: ignore[arg-type]
    merged = _canonical([m for m in messages if m is not None])
    view, n = carried_view(state), len(state)
    if view is not None and len(merged) >= n and all(map(operator.is_, merged[:n], state)):
        view, added = view.extended(merged[n:])  # new messages reordered among themselves
        return conversation_with(state, view, added)
    result = Conversation(merged)
    analysis(result)  # computed once here; the next steps extend it
    return result


def add_conversation(left: Sequence[AnyMessage], right: Write) -> Conversation:
    """Binary form of :func:`merge_conversation` for ``Annotated[list, add_conversation]``."""
    return merge_conversation(left or [], [right])


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
        reducer: Callable[
            [Sequence[AnyMessage], Sequence[Write]], Sequence[AnyMessage]
        ] = merge_conversation,
        typ: type[list[AnyMessage]] | None = None,
        *,
        snapshot_frequency: int = 100,
    ) -> None:
        super().__init__(reducer, typ, snapshot_frequency=snapshot_frequency)

    def _wrap(self) -> None:
        if type(self.value) is list:
            self.value = Conversation(self.value)

    def from_checkpoint(self, checkpoint: object) -> Self:
        new = super().from_checkpoint(checkpoint)
        new._wrap()
        return new

    def replay_writes(self, writes: Sequence[PendingWrite]) -> None:
        super().replay_writes(writes)
        self._wrap()
