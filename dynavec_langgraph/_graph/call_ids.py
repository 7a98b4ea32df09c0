"""Tool-call ids: every call of a thread gets an id no other call of it has.

Some providers number calls afresh each turn, repeat an id or leave it empty; answers are
matched to calls by id, so such a call would look answered and be lost. :func:`unique_call_ids`
gives a fresh id (derived from the message id and the call's position, so a replayed history
gets the same ids) and keeps the provider's under :data:`ORIGINAL_CALL_IDS_KEY`;
:func:`answer_renamed` points an answer that names a call by the provider's id at the call's
new id. Used by the reducer (:mod:`dynavec_langgraph._graph.messages`) and by
:func:`~dynavec_langgraph._graph.conversation_view.new_turn`. :class:`ToolCallRef` is how the rest
of the package names one call (a pause, the crash guard, the run's record of finished calls);
public through :mod:`dynavec_langgraph.interrupt`.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.messages import AIMessage, AnyMessage, ToolMessage
from langchain_core.messages.tool import ToolCall as LCToolCall
from typing_extensions import TypedDict

from dynavec_langgraph._names import ORIGINAL_CALL_IDS_KEY

__all__ = [
    "Taken",
    "ToolCallRef",
    "all_calls",
    "answer_renamed",
    "calls_of",
    "unique_call_ids",
]


class ToolCallRef(TypedDict):
    """The tool call that paused: its id, tool name and arguments."""

    id: str
    name: str
    args: dict[str, Any]


_CALL_NAMESPACE = uuid.UUID("0b7e5a3c-2f4d-4c1e-9a8b-5d6e7f8a9b0c")


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


def all_calls(message: AIMessage) -> list[Any]:
    return [*message.tool_calls, *message.invalid_tool_calls]


class Taken:
    """A call id is taken when another message of the thread made a call with it."""

    def __init__(self, owners: dict[Any, Any], key: str) -> None:
        self.owners, self.key = owners, key

    def __call__(self, cid: str) -> bool:
        return bool(self.owners.get(cid, self.key) != self.key)


def answer_renamed(
    answer: ToolMessage, messages: Sequence[AnyMessage | None], answered: set[str]
) -> ToolMessage:
    """An answer that names a call by the provider's id after that call got a fresh one (a
    history with repeated ids, sent as input): it answers the latest unanswered call that had
    that id. Found from the messages alone, so the reducer stays batching-invariant."""
    for m in reversed(messages):
        if not isinstance(m, AIMessage):
            continue
        originals = m.response_metadata.get(ORIGINAL_CALL_IDS_KEY) or {}
        for call in all_calls(m):
            cid = call.get("id")
            original = originals.get(cid, answer) if cid not in answered else answer
            if original is not answer and (original or "") == (answer.tool_call_id or ""):
                return answer.model_copy(update={"tool_call_id": cid})
    return answer
