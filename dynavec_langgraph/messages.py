"""Conversation helpers: the provider-safe message reducer and dynavec <-> LangChain records."""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Final

from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
    convert_to_messages,
)
from langchain_core.messages.tool import ToolCall as LCToolCall
from langgraph.graph.message import REMOVE_ALL_MESSAGES

from dynavec_langgraph.records import Message, ToolCall

__all__ = [
    "ORIGINAL_CALL_IDS_KEY",
    "add_conversation",
    "calls_of",
    "from_dynavec",
    "merge_conversation",
    "new_turn",
    "pending_calls",
    "run_steps",
    "to_dynavec",
    "unique_call_ids",
]

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
    seed = f"{position}:{message.type}:{message.content!r}"
    return message.model_copy(update={"id": str(uuid.uuid5(_ID_NAMESPACE, seed))})


_ids_by_list: dict[tuple[int, ...], tuple[Sequence[AnyMessage], set[str | None]]] = {}
_ids_lock = threading.Lock()


def _known_ids(state: Sequence[AnyMessage]) -> set[str | None]:
    """The ids in ``state``: a copy of the set remembered when the reducer made a list of the
    same message objects (LangGraph hands the reducer shallow copies of its own output)."""
    with _ids_lock:
        entry = _ids_by_list.get(tuple(map(id, state)))
    if entry is not None:
        return set(entry[1])
    known: set[str | None] = {m.id for m in state}
    for m in state:
        if isinstance(m, AIMessage):
            known.update(_CALL_KEY + str(c.get("id")) for c in _all_calls(m))
    return known


_CALL_KEY: Final = "\x00call:"
"""Tool-call ids share the known-id set with message ids under this prefix."""


def _all_calls(message: AIMessage) -> list[Any]:
    return [*message.tool_calls, *message.invalid_tool_calls]


def _new_call_keys(message: AIMessage, known: set[str | None]) -> list[str] | None:
    """The known-id keys of ``message``'s call ids, or ``None`` when one of them is empty,
    repeated or already in the thread (then the full merge gives it a fresh id)."""
    keys: list[str] = []
    for call in _all_calls(message):
        cid = call.get("id")
        if not isinstance(cid, str) or not cid.strip():
            return None
        key = _CALL_KEY + cid
        if key in known or key in keys:
            return None
        keys.append(key)
    return keys


def _remember_ids(messages: Sequence[AnyMessage], ids: set[str | None] | None) -> None:
    if ids is None:
        return
    with _ids_lock:
        while len(_ids_by_list) >= 4:
            del _ids_by_list[next(iter(_ids_by_list))]
        # the entry keeps the messages alive, so their ids in the key stay unique
        _ids_by_list[tuple(map(id, messages))] = (messages, ids)


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


def _appended(state: Sequence[AnyMessage], items: list[Any]) -> list[AnyMessage] | None:
    """The fast path of :func:`merge_conversation`: new messages appended to a conversation
    that stays in canonical order (the usual step). ``None`` when the full merge is needed."""
    open_calls = _open_calls(state)
    if open_calls is None:
        return None
    known: set[str | None] | None = None
    out: list[AnyMessage] = list(state)
    for item in items:
        if not isinstance(item, BaseMessage) or isinstance(item, RemoveMessage):
            return None
        if not item.id:  # the same deterministic id the full merge gives
            item = _with_id(item, len(out))
        if known is None:
            known = _known_ids(state)
        if item.id in known:
            return None
        known.add(item.id)
        if isinstance(item, ToolMessage):
            if not open_calls or item.tool_call_id != open_calls[0]:
                return None
            open_calls = open_calls[1:]
        elif open_calls:
            return None
        elif isinstance(item, AIMessage):
            keys = _new_call_keys(item, known)
            if keys is None:
                return None
            known.update(keys)
            open_calls = [c["id"] or "" for c in calls_of(item)]
        out.append(item)  # type: ignore[arg-type]
    _remember_ids(out, known)
    return out


def merge_conversation(state: Sequence[AnyMessage], writes: Sequence[Any]) -> list[AnyMessage]:
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
    return _canonical([m for m in messages if m is not None])


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


def add_conversation(left: Sequence[AnyMessage], right: Any) -> list[AnyMessage]:
    """Binary form of :func:`merge_conversation` for ``Annotated[list, add_conversation]``."""
    return merge_conversation(left or [], [right])


class _Analysis:
    """What the routers and the tool node need from a conversation, kept up to date as the
    conversation grows (each step appends to the previous list), so a step costs O(new)."""

    def __init__(self) -> None:
        self.messages: Sequence[BaseMessage] = ()  # kept alive, so the ids below stay unique
        self.key: tuple[int, ...] = ()
        self.answered: set[str | None] = set()
        self.open: list[AIMessage] = []  # assistant messages with unanswered calls, in order
        self.steps = 0
        self.ids: set[str | None] = set()  # message ids and (under _CALL_KEY) tool-call ids

    def extend(self, messages: Sequence[BaseMessage], key: tuple[int, ...]) -> None:
        for m in messages[len(self.key) :]:
            self.ids.add(m.id)
            if isinstance(m, ToolMessage):
                self.answered.add(m.tool_call_id)
            elif isinstance(m, AIMessage):
                self.ids.update(_CALL_KEY + str(c.get("id")) for c in _all_calls(m))
                self.steps += 1
                if m.tool_calls or m.invalid_tool_calls:
                    self.open.append(m)
            elif isinstance(m, HumanMessage):
                self.steps = 0
        answered = self.answered
        self.open = [m for m in self.open if any(c["id"] not in answered for c in calls_of(m))]
        self.messages, self.key = messages, key

    def pending(self) -> list[LCToolCall]:
        if not self.open:
            return []
        return [c for c in calls_of(self.open[0]) if c["id"] not in self.answered]


_analysis = _Analysis()
_analysis_lock = threading.Lock()


def _analysed(messages: Sequence[BaseMessage]) -> _Analysis:
    """The analysis of ``messages`` (call under ``_analysis_lock``)."""
    global _analysis
    key = tuple(map(id, messages))
    current = _analysis
    if key[: len(current.key)] != current.key:
        current = _analysis = _Analysis()
    if current.key != key:
        current.extend(messages, key)
    return current


def _analyse(messages: Sequence[BaseMessage]) -> tuple[list[LCToolCall], int]:
    """``(pending_calls, run_steps)`` of ``messages``."""
    with _analysis_lock:
        current = _analysed(messages)
        return current.pending(), current.steps


def new_turn(messages: Sequence[BaseMessage], response: AIMessage) -> AIMessage:
    """The model's ``response`` ready to join ``messages``: a message id and tool-call ids
    that the conversation does not have yet (see :func:`unique_call_ids`); a provider that
    repeats either would otherwise replace an earlier turn or have its calls look answered."""
    with _analysis_lock:
        ids = _analysed(messages).ids
        if not response.id or response.id in ids:
            response = response.model_copy(update={"id": f"run-{uuid.uuid4()}"})
        if not _all_calls(response):
            return response
        return unique_call_ids(response, lambda cid: _CALL_KEY + cid in ids)[0]


def pending_calls(messages: Sequence[BaseMessage]) -> list[LCToolCall]:
    """The unanswered calls of the earliest assistant message that still has some, in order.

    Usually that is the latest assistant message. An older one can be left with unanswered
    calls when a parent graph routed new messages elsewhere while the agent was paused; those
    calls are answered first, so the model never sees a call without its answer.
    """
    return list(_analyse(messages)[0])


def run_steps(messages: Sequence[BaseMessage]) -> int:
    """How many model calls the current run made: assistant messages after the last user one."""
    return _analyse(messages)[1]


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for block in content or []:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict) and block.get("type") == "text":
            parts.append(str(block.get("text", "")))
    return "".join(parts)


def to_dynavec(message: BaseMessage) -> Message:
    """A LangChain message as a dynavec :class:`Message`."""
    if isinstance(message, AIMessage):
        calls = [
            ToolCall(c["id"] or "", c["name"], json.dumps(c["args"], ensure_ascii=False))
            for c in message.tool_calls
        ] + [
            ToolCall(c.get("id") or "", c.get("name") or "", c.get("args") or "")
            for c in message.invalid_tool_calls
        ]
        return Message("assistant", _text(message.content) or None, calls)
    if isinstance(message, ToolMessage):
        return Message("tool", _text(message.content), tool_call_id=message.tool_call_id)
    if isinstance(message, SystemMessage):
        return Message("system", _text(message.content))
    return Message("user", _text(message.content))


def from_dynavec(message: Message | BaseMessage | dict[str, Any]) -> BaseMessage:
    """A dynavec :class:`Message`, its dict form, or a LangChain message, as LangChain's."""
    if isinstance(message, BaseMessage):
        return message
    if isinstance(message, dict):
        if "role" not in message or (
            message.get("tool_calls") and "function" in (message["tool_calls"][0] or {})
        ):
            return convert_to_messages([message])[0]
        message = Message.from_dict(message)
    if not isinstance(message, Message):
        raise TypeError(f"not a message: {message!r}")
    content = message.content or ""
    if message.role == "assistant":
        calls: list[LCToolCall] = []
        for c in message.tool_calls:
            try:
                args = json.loads(c.arguments) if c.arguments.strip() else {}
            except ValueError:
                args = {"input": c.arguments}
            if not isinstance(args, dict):
                args = {"input": args}
            calls.append({"name": c.name, "args": args, "id": c.id, "type": "tool_call"})
        return AIMessage(content=content, tool_calls=calls)
    if message.role == "tool":
        return ToolMessage(content=content, tool_call_id=message.tool_call_id or "")
    if message.role == "system":
        return SystemMessage(content=content)
    if message.role == "user":
        return HumanMessage(content=content)
    raise ValueError(f"unknown message role {message.role!r}: use system, user, assistant or tool")
