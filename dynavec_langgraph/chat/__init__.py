"""dynavec's chat types and providers (``dynavec.chat`` and ``dynavec.chat.base``).

The interface a dynavec chat model implements (:class:`ChatModel`: ``invoke`` and the
defaults built on it) and its records are those of :mod:`.base`, re-exported here (the same
objects); its docstring says how the agent uses such a model and shows one.

The three providers, :class:`OpenAIChatModel`, :class:`AnthropicChatModel` and
:class:`BedrockChatModel` (in :mod:`.openai`, :mod:`.anthropic`, :mod:`.bedrock`), are
loaded on first use: importing this package imports no provider SDK and no LangChain
provider package. See ``docs/compatibility.md`` (rows N2, P1-P12).

Example:
    >>> from dynavec_langgraph.chat import base
    >>> ChatModel is base.ChatModel and Message is base.Message
    True
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
