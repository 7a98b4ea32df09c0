"""dynavec's conversation memory (``dynavec.memory``): message helpers, trimming policies and
stores, for ``ReActAgent(memory=...)``.

A memory keeps one conversation per thread (goal / answer pairs, plus the system prompt of the
thread's first run) and a scratchpad dict. A policy decides what of it is kept and shown to the
model: :class:`WindowMemoryPolicy` (the last ``k`` messages), :class:`TokenBudgetMemoryPolicy`
(the newest messages that fit a token budget; both cut with LangChain's ``trim_messages``) and
:class:`SummaryMemoryPolicy` (older messages folded into one summary message).

With ``ReActAgent(model, tools, system_prompt, max_steps, checkpointer, memory)`` and a
``thread_id``, a run that does not continue a checkpoint starts from the memory's (trimmed)
history plus its goal, and its answer is appended when it completes. A paused run writes
nothing; the resume that completes it appends the answer, so a paused run resumes with the same
memory (docs/memory.md).

Example:
    >>> store = InMemoryMemoryStore(policy=WindowMemoryPolicy(k=2))
    >>> _ = store.append("t1", "Hello")
    >>> _ = store.append("t1", Message("assistant", "Hi!"))
    >>> [m.content for m in store.append("t1", "Tell me about AWS.")]
    ['Hi!', 'Tell me about AWS.']
"""

from __future__ import annotations

import json
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from decimal import Decimal
from typing import TYPE_CHECKING, cast

from langchain_core.messages import BaseMessage, HumanMessage, trim_messages

from dynavec_langgraph._dynavec.records import Message, Role, RoleName, ToolCall
from dynavec_langgraph._persistence.dynamodb.values import from_dynamo

if TYPE_CHECKING:
    from dynavec_langgraph._types import ForeignObject, JSONObject, UserValues


SUMMARY_PREFIX = "Summary of prior conversation:\n"
"""The start of the system message :class:`SummaryMemoryPolicy` writes."""


# --- message helpers ----------------------------------------------------------------------


def _role(role: Role | str) -> str:
    return role.value if isinstance(role, Role) else str(role)


def _arguments(arguments: object) -> str:
    """A tool call's arguments as text (a dict counts as already-parsed JSON)."""
    if isinstance(arguments, dict):
        return json.dumps(arguments, ensure_ascii=False)
    return "" if arguments is None else str(arguments)


def message_to_dict(msg: Message) -> JSONObject:
    """A message as ``{"role", "content", "tool_call_id", "tool_calls": [{"id", "name",
    "arguments"}]}`` (the checkpoint's message form).

    Example:
        >>> message_to_dict(Message("user", "hi"))
        {'role': 'user', 'content': 'hi', 'tool_call_id': None, 'tool_calls': []}
    """
    return {
        "role": _role(msg.role),
        "content": msg.content,
        "tool_call_id": msg.tool_call_id,
        "tool_calls": [
            {"id": c.id, "name": c.name, "arguments": _arguments(c.arguments)}
            for c in msg.tool_calls
        ],
    }


def dict_to_message(d: JSONObject) -> Message:
    """The reverse of :func:`message_to_dict`; every key but ``role`` may be missing.

    Example:
        >>> m = dict_to_message({"role": "assistant", "tool_calls": [{"id": "1", "name": "add"}]})
        >>> m.content, m.tool_calls
        (None, [ToolCall(id='1', name='add', arguments='')])
    """
    if not isinstance(d, dict) or "role" not in d:
        raise ValueError(f"{d!r:.80}: a message dict needs a 'role' key")
    # the message's fields as a checkpoint's message is read; its tool calls more leniently
    message = Message.from_dict({**d, "tool_calls": None})
    message.tool_calls = [
        ToolCall(str(c.get("id") or ""), str(c.get("name") or ""), _arguments(c.get("arguments")))
        for c in d.get("tool_calls") or []
    ]
    return message


def default_token_counter(message: Message) -> int:
    """About four characters a token: ``max(1, len(text) // 4)`` over the content plus
    ``" {name} {arguments}"`` per tool call.

    Example:
        >>> default_token_counter(Message("user", "A" * 80))
        20
    """
    text = (message.content or "") + "".join(
        f" {c.name} {_arguments(c.arguments)}" for c in message.tool_calls
    )
    return max(1, len(text) // 4)


# --- policies -----------------------------------------------------------------------------


class MemoryPolicy(ABC):
    """What of a conversation is kept: :meth:`apply` returns a new list, never mutating its
    input."""

    @abstractmethod
    def apply(self, messages: Sequence[Message]) -> list[Message]:
        """The messages to keep."""


def _split_system(
    messages: Sequence[Message], preserve_system: bool
) -> tuple[Message | None, list[Message]]:
    """The first ``system`` message (only when preserved) and the others, in order."""
    if preserve_system:
        for i, message in enumerate(messages):
            if _role(message.role) == "system":
                return message, [*messages[:i], *messages[i + 1 :]]
    return None, list(messages)


def _newest_that_fit(
    messages: list[Message], max_tokens: int, count: Callable[[Message], int]
) -> list[Message]:
    """LangChain's ``trim_messages`` (``strategy="last"``) with dynavec's costs: the newest
    messages whose total fits ``max_tokens``, stopping at the first that does not (nothing is
    skipped). The messages travel as id-only proxies, so the originals come back as they are."""
    proxies = [HumanMessage(content="", id=str(i)) for i in range(len(messages))]

    def cost(batch: list[BaseMessage]) -> int:
        return sum(count(messages[int(str(m.id))]) for m in batch)

    kept = trim_messages(proxies, max_tokens=max_tokens, token_counter=cost, strategy="last")
    return [messages[int(str(m.id))] for m in kept]


class _SystemFirstPolicy(MemoryPolicy):
    """What the three policies share: a conversation of at most :meth:`_kept_whole` messages
    stays as it is; a longer one becomes its first system message (when ``preserve_system``),
    then what :meth:`_keep` keeps of the other messages."""

    def __init__(self, *, preserve_system: bool) -> None:
        self.preserve_system = preserve_system

    def _kept_whole(self) -> int:
        """The most messages kept as they are, the policy not applied."""
        return 0

    @abstractmethod
    def _keep(self, others: list[Message], system: Message | None) -> list[Message]:
        """What is kept of the messages but the preserved system message."""

    def apply(self, messages: Sequence[Message]) -> list[Message]:
        """The messages as they are when few enough; otherwise the system message, then what
        the policy keeps of the others."""
        if len(messages) <= self._kept_whole():
            return list(messages)
        system, others = _split_system(messages, self.preserve_system)
        return ([system] if system is not None else []) + self._keep(others, system)


class WindowMemoryPolicy(_SystemFirstPolicy):
    """The last ``k`` messages (``k`` at least 1), after the system message; unchanged when
    there are at most ``k`` messages (the system message counts).

    Example:
        >>> msgs = [Message("system", "S")] + [Message("user", f"m{i}") for i in range(1, 5)]
        >>> [m.content for m in WindowMemoryPolicy(k=2).apply(msgs)]
        ['S', 'm3', 'm4']
    """

    def __init__(self, k: int = 10, *, preserve_system: bool = True) -> None:
        super().__init__(preserve_system=preserve_system)
        self.k = max(1, int(k))

    def _kept_whole(self) -> int:
        return self.k

    def _keep(self, others: list[Message], system: Message | None) -> list[Message]:
        return _newest_that_fit(others, self.k, lambda _: 1)


class TokenBudgetMemoryPolicy(_SystemFirstPolicy):
    """The newest messages that fit ``max_tokens`` (at least 1) with the system message; the
    newest one is always kept.

    Example:
        >>> msgs = [Message("system", "System"), Message("user", "A" * 80)]
        >>> msgs.append(Message("user", "C" * 20))
        >>> [m.content for m in TokenBudgetMemoryPolicy(max_tokens=15).apply(msgs)]
        ['System', 'CCCCCCCCCCCCCCCCCCCC']
    """

    def __init__(
        self,
        max_tokens: int = 2048,
        *,
        token_counter: Callable[[Message], int] | None = None,
        preserve_system: bool = True,
    ) -> None:
        super().__init__(preserve_system=preserve_system)
        self.max_tokens = max(1, int(max_tokens))
        self.token_counter = token_counter or default_token_counter

    def _keep(self, others: list[Message], system: Message | None) -> list[Message]:
        """Walk newest to oldest, keep what fits the budget left by the system message."""
        budget = self.max_tokens - (self.token_counter(system) if system is not None else 0)
        kept = _newest_that_fit(others, max(0, budget), self.token_counter)
        return kept if kept or not others else [others[-1]]  # the newest always survives


def _default_summarizer(messages: list[Message]) -> str:
    lines = []
    for message in messages:
        text = (message.content or "").strip()
        if len(text) > 120:
            text = text[:117] + "..."
        lines.append(f"- {_role(message.role).capitalize()}: {text}")
    return "\n".join(lines)


class SummaryMemoryPolicy(_SystemFirstPolicy):
    """Over ``max_messages`` (at least 2): the older messages become one system message
    ``"Summary of prior conversation:\\n..."``, the newest ``max_messages // 2`` stay.

    ``summarizer(messages) -> str`` writes the summary (default: one ``- Role: text`` line per
    message, each cut at 120 characters). Applied again, the earlier summary is summarised too.
    """

    def __init__(
        self,
        max_messages: int = 6,
        *,
        summarizer: Callable[[list[Message]], str] | None = None,
        preserve_system: bool = True,
    ) -> None:
        super().__init__(preserve_system=preserve_system)
        self.max_messages = max(2, int(max_messages))
        self.summarizer = summarizer or _default_summarizer

    def _kept_whole(self) -> int:
        return self.max_messages

    def _keep(self, others: list[Message], system: Message | None) -> list[Message]:
        """The summary of the older messages, then the newest ones."""
        cutoff = max(0, len(others) - self.max_messages // 2)
        summary = Message("system", SUMMARY_PREFIX + self.summarizer(others[:cutoff]))
        return [summary, *others[cutoff:]]


# --- stores -------------------------------------------------------------------------------


def _as_messages(messages: Message | Sequence[Message] | str, role: str) -> list[Message]:
    if isinstance(messages, str):
        return [Message(cast(RoleName, role), messages)]
    if isinstance(messages, Message):
        return [messages]
    items = list(messages)
    for item in items:
        if not isinstance(item, Message):
            raise TypeError(
                f"append() got {type(item).__name__} {item!r:.60}: pass a Message, a list of "
                "Messages or a str"
            )
    return items


class BaseMemory(ABC):
    """A conversation memory: one history and one scratchpad per thread (the thread id always
    comes first)."""

    policy: MemoryPolicy | None = None

    def _apply(self, messages: Sequence[Message]) -> list[Message]:
        return self.policy.apply(messages) if self.policy is not None else list(messages)

    @abstractmethod
    def append(
        self, thread_id: str, messages: Message | Sequence[Message] | str, *, role: str = "user"
    ) -> list[Message]:
        """Add messages (a ``str`` becomes ``Message(role, text)``); returns the stored
        history after the policy."""

    @abstractmethod
    def get_messages(self, thread_id: str) -> list[Message]:
        """The thread's history, the policy applied (``[]`` for an unknown thread)."""

    @abstractmethod
    def clear(self, thread_id: str) -> None:
        """Drop the thread's history and scratchpad."""

    @abstractmethod
    def trim(self, thread_id: str) -> list[Message]:
        """Apply the policy to the stored history and store the result."""

    @abstractmethod
    def get_scratchpad(self, thread_id: str) -> UserValues:
        """The thread's scratchpad (``{}`` if none)."""

    @abstractmethod
    def set_scratchpad(self, thread_id: str, scratchpad: UserValues) -> None:
        """Replace the thread's scratchpad."""


class InMemoryMemoryStore(BaseMemory):
    """A memory in this process (one lock): ``append`` stores the policy's result,
    ``get_messages`` applies the policy to a copy without storing it."""

    def __init__(self, policy: MemoryPolicy | None = None) -> None:
        self.policy = policy
        self._lock = threading.RLock()
        self._messages: dict[str, list[Message]] = {}
        self._scratchpads: dict[str, UserValues] = {}

    def append(
        self, thread_id: str, messages: Message | Sequence[Message] | str, *, role: str = "user"
    ) -> list[Message]:
        """Extend the history, then store the policy's result."""
        new = _as_messages(messages, role)
        with self._lock:
            stored = self._apply([*self._messages.get(thread_id, []), *new])
            self._messages[thread_id] = stored
            return list(stored)

    def get_messages(self, thread_id: str) -> list[Message]:
        """The policy applied to a copy of the history."""
        with self._lock:
            return self._apply(list(self._messages.get(thread_id, [])))

    def clear(self, thread_id: str) -> None:
        """Drop the history and the scratchpad."""
        with self._lock:
            self._messages.pop(thread_id, None)
            self._scratchpads.pop(thread_id, None)

    def trim(self, thread_id: str) -> list[Message]:
        """Store the policy's result."""
        with self._lock:
            stored = self._apply(self._messages.get(thread_id, []))
            self._messages[thread_id] = stored
            return list(stored)

    def get_scratchpad(self, thread_id: str) -> UserValues:
        """A shallow copy of the scratchpad."""
        with self._lock:
            return dict(self._scratchpads.get(thread_id, {}))

    def set_scratchpad(self, thread_id: str, scratchpad: UserValues) -> None:
        """Store a shallow copy."""
        with self._lock:
            self._scratchpads[thread_id] = dict(scratchpad)


def _to_dynamo(value: object) -> object:
    """dynavec's DynamoDB value encoding of memory items: floats as ``Decimal(str(x))``,
    tuples as lists, read back by ``from_dynamo``. Not the checkpointer's ``to_dynamo``: as
    dynavec's memory, it passes a ``Decimal`` and a NaN on, and its error names the memory."""
    if isinstance(value, bool) or value is None or isinstance(value, int | str | Decimal):
        return value
    if isinstance(value, float):
        return Decimal(str(value))
    if isinstance(value, dict):
        return {str(k): _to_dynamo(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_to_dynamo(v) for v in value]
    raise TypeError(
        f"{type(value).__name__} {value!r:.60} cannot be stored in DynamoDB: use dicts, lists, "
        "strings, numbers, booleans or None"
    )


def _now() -> str:
    return datetime.now(UTC).isoformat()


class DynamoDBMemoryStore(BaseMemory):
    """dynavec's memory items in a DynamoDB table (partition key ``pk`` only, as dynavec's
    tables; one may also hold its checkpoints and documents). The table is never created here.

    One item per thread: ``pk = "{namespace}#memory#{thread_id}"``, ``ns``, ``type =
    "conversation_memory"``, ``thread_id``, ``messages`` (a list of :func:`message_to_dict`
    maps), ``scratchpad`` (a map, optional), ``updated_at`` (UTC ISO time). No TTL.

    Args:
        table: a boto3 ``dynamodb.Table`` resource.
        namespace: the prefix of the item keys.
        policy: what is kept (applied on read and on ``append``).
    """

    def __init__(
        self,
        table: ForeignObject,
        *,
        namespace: str = "default",
        policy: MemoryPolicy | None = None,
    ) -> None:
        for method in ("get_item", "put_item", "update_item", "delete_item"):
            if not callable(getattr(table, method, None)):
                raise TypeError(
                    f"table={table!r:.60}: pass a boto3 DynamoDB Table resource "
                    '(boto3.resource("dynamodb").Table(name))'
                )
        self.table = table
        self.namespace = namespace
        self.policy = policy

    def _key(self, thread_id: str) -> dict[str, str]:
        return {"pk": f"{self.namespace}#memory#{thread_id}"}

    def _item(self, thread_id: str) -> JSONObject | None:
        item = self.table.get_item(Key=self._key(thread_id)).get("Item")
        return from_dynamo(item) if item is not None else None

    def get_messages(self, thread_id: str) -> list[Message]:
        """The stored messages, the policy applied, without storing it."""
        item = self._item(thread_id)
        if item is None or not item.get("messages"):
            return []
        return self._apply([dict_to_message(m) for m in item["messages"]])

    def append(
        self, thread_id: str, messages: Message | Sequence[Message] | str, *, role: str = "user"
    ) -> list[Message]:
        """Read (policy applied), extend, apply the policy, and put the whole item (keeping
        its scratchpad). Not atomic: the last writer wins, as in dynavec."""
        new = _as_messages(messages, role)
        stored = self._apply([*self.get_messages(thread_id), *new])
        item: JSONObject = {
            **self._key(thread_id),
            "ns": self.namespace,
            "type": "conversation_memory",
            "thread_id": thread_id,
            "messages": [message_to_dict(m) for m in stored],
            "updated_at": _now(),
        }
        old = self._item(thread_id)
        if old is not None and "scratchpad" in old:
            item["scratchpad"] = old["scratchpad"]
        self.table.put_item(Item=_to_dynamo(item))
        return stored

    def trim(self, thread_id: str) -> list[Message]:
        """Store the policy's result (an UpdateItem of ``messages``)."""
        stored = self.get_messages(thread_id)
        self.table.update_item(
            Key=self._key(thread_id),
            UpdateExpression="SET #m = :m, updated_at = :ts",
            ExpressionAttributeNames={"#m": "messages"},
            ExpressionAttributeValues=_to_dynamo(
                {":m": [message_to_dict(m) for m in stored], ":ts": _now()}
            ),
        )
        return stored

    def clear(self, thread_id: str) -> None:
        """Delete the thread's item."""
        self.table.delete_item(Key=self._key(thread_id))

    def get_scratchpad(self, thread_id: str) -> UserValues:
        """The item's scratchpad (``{}`` if none)."""
        item = self._item(thread_id)
        scratchpad = (item or {}).get("scratchpad")
        return dict(scratchpad) if isinstance(scratchpad, dict) else {}

    def set_scratchpad(self, thread_id: str, scratchpad: UserValues) -> None:
        """Set the scratchpad (an UpdateItem: creates a bare item if there is none)."""
        self.table.update_item(
            Key=self._key(thread_id),
            UpdateExpression="SET scratchpad = :s, updated_at = :ts",
            ExpressionAttributeValues=_to_dynamo({":s": dict(scratchpad), ":ts": _now()}),
        )
