"""dynavec's chat types and providers (``dynavec.chat`` and ``dynavec.chat.base``).

A dynavec chat model subclasses :class:`ChatModel` and implements ``invoke(messages,
tools=None, **kwargs) -> ChatResult``; ``stream``, ``ainvoke`` and ``astream`` have defaults
built on it. Such a model can be passed to :class:`~dynavec_langgraph.ReActAgent` and
:func:`~dynavec_langgraph.create_react_agent` as is: the agent adapts it to LangChain,
calls ``invoke`` from ``run`` / ``resume`` and ``ainvoke`` from ``arun`` / ``aresume``.

The three providers, :class:`OpenAIChatModel`, :class:`AnthropicChatModel` and
:class:`BedrockChatModel` (in :mod:`.openai`, :mod:`.anthropic`, :mod:`.bedrock`), are
loaded on first use: importing this package imports no provider SDK and no LangChain
provider package. See ``docs/compatibility.md`` (rows N2, P1-P12).

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

import importlib
from typing import TYPE_CHECKING, Any

from dynavec_langgraph.chat.base import (
    ChatChunk,
    ChatModel,
    ChatResult,
    Message,
    Role,
    Tool,
    ToolCall,
)

if TYPE_CHECKING:
    from dynavec_langgraph.chat.anthropic import AnthropicChatModel
    from dynavec_langgraph.chat.bedrock import BedrockChatModel
    from dynavec_langgraph.chat.openai import OpenAIChatModel

__all__ = [
    "AnthropicChatModel",
    "BedrockChatModel",
    "ChatChunk",
    "ChatModel",
    "ChatResult",
    "Message",
    "OpenAIChatModel",
    "Role",
    "Tool",
    "ToolCall",
]

_PROVIDERS = {
    "OpenAIChatModel": "openai",
    "AnthropicChatModel": "anthropic",
    "BedrockChatModel": "bedrock",
}


def __getattr__(name: str) -> Any:
    """The providers, imported from their submodule on first use."""
    module = _PROVIDERS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
