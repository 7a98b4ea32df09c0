"""``AnthropicChatModel``: dynavec's Anthropic provider, backed by
``langchain_anthropic.ChatAnthropic`` (extra ``anthropic``).

Example:
    >>> model = AnthropicChatModel(api_key="sk-ant-test")
    >>> model.model, type(model.langchain_model).__name__
    ('claude-3-5-sonnet-20240620', 'ChatAnthropic')
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Iterator, Sequence

from dynavec_langgraph._types import JSONObject, UserPayload
from dynavec_langgraph.chat._providers import (
    ProviderChatModel,
    field_of,
    parsed_arguments,
    provider_imports,
    turns,
)
from dynavec_langgraph.chat.base import ChatChunk, ChatResult, Message, Tool, ToolCall

__all__ = ["AnthropicChatModel"]

MAX_TOKENS = 1024
"""``max_tokens`` of every request unless the call passes its own."""


class AnthropicChatModel(ProviderChatModel):
    """Anthropic's Messages API through ``ChatAnthropic`` (docs/compatibility.md, P5).

    Args:
        model: the model id (``self.model``).
        api_key: the key; ``None`` lets the SDK read ``ANTHROPIC_API_KEY``. The endpoint is
            the SDK's (``ANTHROPIC_BASE_URL``).

    Raises:
        MissingDependencyError: ``anthropic`` / ``langchain-anthropic`` are not installed
            (``pip install 'dynavec-langgraph[anthropic]'``).
    """

    join_system_messages = True

    def __init__(
        self, model: str = "claude-3-5-sonnet-20240620", api_key: str | None = None
    ) -> None:
        super().__init__()
        with provider_imports(
            "AnthropicChatModel", "anthropic", "langchain-anthropic", "anthropic"
        ):
            # The SDK must be there, before LangChain's package (which imports it): looked up,
            # not imported, so a missing langchain-anthropic is reported at once (importing
            # the SDK takes seconds).
            if importlib.util.find_spec("anthropic") is None:
                raise ImportError("No module named 'anthropic'", name="anthropic")
            from langchain_anthropic import ChatAnthropic
        self.model = model
        options: JSONObject = {"model": model, "max_tokens": MAX_TOKENS}
        if api_key is not None:
            options["api_key"] = api_key
        backing = ChatAnthropic(**options)
        self._back_with(backing, backing._client)

    # --- dynavec's direct SDK path -----------------------------------------------------

    def _request(
        self, messages: Sequence[Message], tools: list[Tool] | None, kwargs: dict[str, UserPayload]
    ) -> JSONObject:
        system = "\n".join(m.content or "" for m in messages if m.role == "system").strip()
        out = turns(
            messages,
            text=lambda text: {"type": "text", "text": text},
            tool_use=lambda c: {
                "type": "tool_use",
                "id": c.id,
                "name": c.name,
                "input": parsed_arguments(c.arguments),
            },
            tool_result=lambda m: {
                "type": "tool_result",
                "tool_use_id": m.tool_call_id,
                "content": m.content or "",
            },
        )
        args: JSONObject = {"model": self.model, "max_tokens": MAX_TOKENS, "messages": out}
        if system:
            args["system"] = system
        if tools:
            args["tools"] = [
                {"name": t.name, "description": t.description, "input_schema": t.parameters}
                for t in tools
            ]
        return {**args, **kwargs}

    def _sdk_invoke(
        self, messages: Sequence[Message], tools: list[Tool] | None, kwargs: dict[str, UserPayload]
    ) -> ChatResult:
        response = self._client.messages.create(**self._request(messages, tools, kwargs))
        text, calls = "", []
        for block in field_of(response, "content") or []:
            kind = field_of(block, "type")
            if kind == "text":
                text += field_of(block, "text") or ""
            elif kind == "tool_use":
                calls.append(
                    ToolCall(
                        field_of(block, "id"),
                        field_of(block, "name"),
                        json.dumps(field_of(block, "input")),
                    )
                )
        message = Message("assistant", text or None, calls)
        return ChatResult(message, field_of(response, "stop_reason"), raw=response)

    def _sdk_stream(
        self, messages: Sequence[Message], tools: list[Tool] | None, kwargs: dict[str, UserPayload]
    ) -> Iterator[ChatChunk]:
        with self._client.messages.stream(**self._request(messages, tools, kwargs)) as events:
            for event in events:
                if field_of(event, "type") != "content_block_delta":
                    continue
                delta = field_of(event, "delta")
                kind = field_of(delta, "type")
                if kind == "text_delta":
                    yield ChatChunk(content=field_of(delta, "text"))
                elif kind == "input_json_delta":
                    partial = field_of(delta, "partial_json") or ""
                    yield ChatChunk(tool_calls=[ToolCall("", "", partial)])
