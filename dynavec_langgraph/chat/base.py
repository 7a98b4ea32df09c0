"""dynavec's chat records and the :class:`ChatModel` interface (``dynavec.chat.base``).

:mod:`dynavec_langgraph.chat` re-exports every name of this module (the same objects), so
``dynavec.chat.base`` and ``dynavec.chat`` both become ``dynavec_langgraph.chat``.

A dynavec chat model subclasses :class:`ChatModel` and implements ``invoke(messages,
tools=None, **kwargs) -> ChatResult``; ``stream``, ``ainvoke`` and ``astream`` have defaults
built on it. Such a model can be passed to :class:`~dynavec_langgraph.ReActAgent` and
:func:`~dynavec_langgraph.create_react_agent` as is: the agent adapts it to LangChain
(:class:`~dynavec_langgraph._dynavec.models.DynavecChatModel`), calls ``invoke`` from ``run`` /
``resume`` and ``ainvoke`` from ``arun`` / ``aresume``. See ``docs/compatibility.md``.

Example:
    >>> class Echo(ChatModel):
    ...     def invoke(self, messages, tools=None, **kwargs):
    ...         return ChatResult(Message(Role.ASSISTANT, f"echo: {messages[-1].content}"))
    >>> Echo().invoke([Message("user", "hi")]).message.content
    'echo: hi'
    >>> [c.content for c in Echo().stream([Message("user", "hi")])]
    ['echo: hi']
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass, field

from dynavec_langgraph._dynavec.records import Message, Role, ToolCall
from dynavec_langgraph._types import ForeignObject, JSONObject, JSONSchema, UserPayload

__all__ = ["ChatChunk", "ChatModel", "ChatResult", "Message", "Role", "Tool", "ToolCall"]


@dataclass
class Tool:
    """A tool as a chat model sees it: name, description and the JSON Schema of its arguments.

    ``AgentTool.to_chat_tool()`` returns one; the agent passes these to a dynavec model's
    ``invoke(messages, tools=...)``.
    """

    name: str
    description: str = ""
    parameters: JSONSchema = field(default_factory=lambda: {"type": "object", "properties": {}})

    def to_dict(self) -> JSONObject:
        """The OpenAI-style function description."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }


@dataclass
class ChatResult:
    """What ``ChatModel.invoke`` returns: the assistant message and what the provider said."""

    message: Message
    finish_reason: str | None = None
    usage: JSONObject = field(default_factory=dict)
    model: str | None = None
    raw: ForeignObject = None

    @property
    def content(self) -> str | None:
        """The assistant text (``message.content``)."""
        return self.message.content

    @property
    def tool_calls(self) -> list[ToolCall]:
        """The tool calls the model asked for (``message.tool_calls``)."""
        return self.message.tool_calls


@dataclass
class ChatChunk:
    """One piece of a streamed answer: a text delta and/or tool-call fragments.

    ``content`` is ``None`` when the piece carries no text (dynavec's default). The providers
    stream tool calls as unassembled fragments, as dynavec does (docs/compatibility.md, P6).
    """

    content: str | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)
    finish_reason: str | None = None
    usage: JSONObject = field(default_factory=dict)

    @property
    def delta(self) -> str:
        """The text of this piece (``""`` when there is none)."""
        return self.content or ""


class ChatModel(ABC):
    """dynavec's chat model interface: implement :meth:`invoke`; the rest has defaults.

    It takes no constructor arguments (subclasses call ``super().__init__()``). ``stream``
    is concrete here (one chunk holding ``invoke``'s answer), a compatible extension.
    """

    @abstractmethod
    def invoke(
        self,
        messages: Sequence[Message],
        tools: Sequence[Tool] | None = None,
        **kwargs: UserPayload,
    ) -> ChatResult:
        """Answer the conversation; ``tools`` are the tools the model may call."""

    def stream(
        self,
        messages: Sequence[Message],
        tools: Sequence[Tool] | None = None,
        **kwargs: UserPayload,
    ) -> Iterator[ChatChunk]:
        """Default: one chunk holding :meth:`invoke`'s whole answer."""
        result = self.invoke(messages, tools, **kwargs)
        yield ChatChunk(
            content=result.message.content,
            tool_calls=list(result.message.tool_calls),
            finish_reason=result.finish_reason,
            usage=dict(result.usage),
        )

    async def ainvoke(
        self,
        messages: Sequence[Message],
        tools: Sequence[Tool] | None = None,
        **kwargs: UserPayload,
    ) -> ChatResult:
        """Default: :meth:`invoke` in a worker thread (the event loop is never blocked)."""
        return await asyncio.to_thread(lambda: self.invoke(messages, tools, **kwargs))

    async def astream(
        self,
        messages: Sequence[Message],
        tools: Sequence[Tool] | None = None,
        **kwargs: UserPayload,
    ) -> AsyncIterator[ChatChunk]:
        """Default: :meth:`stream`, read in a worker thread."""
        chunks = await asyncio.to_thread(lambda: list(self.stream(messages, tools, **kwargs)))
        for chunk in chunks:
            yield chunk
