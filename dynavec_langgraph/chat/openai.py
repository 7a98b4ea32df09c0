"""``OpenAIChatModel``: dynavec's OpenAI provider, backed by ``langchain_openai.ChatOpenAI``.

Example:
    >>> model = OpenAIChatModel("gpt-4o-mini", api_key="sk-test", base_url="http://127.0.0.1:9/v1")
    >>> model.model, type(model.langchain_model).__name__
    ('gpt-4o-mini', 'ChatOpenAI')
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from dynavec_langgraph._dynavec.records import arguments_json
from dynavec_langgraph._types import JSONObject, UserPayload
from dynavec_langgraph.chat._providers import (
    ProviderChatModel,
    field_of,
    provider_imports,
)
from dynavec_langgraph.chat.base import ChatChunk, ChatResult, Message, Tool, ToolCall

__all__ = ["OpenAIChatModel"]


class OpenAIChatModel(ProviderChatModel):
    """OpenAI's Chat Completions through ``ChatOpenAI`` (docs/compatibility.md, P4).

    Args:
        model: the model id (``self.model``).
        api_key: the key; ``None`` lets the SDK read ``OPENAI_API_KEY`` (no key at all raises
            ``openai.OpenAIError`` here).
        base_url: another endpoint; ``None`` lets the SDK read ``OPENAI_BASE_URL``.

    Raises:
        MissingDependencyError: ``openai`` / ``langchain-openai`` are not installed.
    """

    def __init__(
        self, model: str = "gpt-4o", api_key: str | None = None, base_url: str | None = None
    ) -> None:
        super().__init__()
        with provider_imports("OpenAIChatModel", "openai", "langchain-openai", "openai"):
            import openai
            from langchain_openai import ChatOpenAI
        self.model = model
        options: JSONObject = {"model": model}
        if api_key is not None:
            options["api_key"] = api_key
        if base_url is not None:
            options["base_url"] = base_url
        # each model owns its async HTTP client: langchain-openai otherwise shares one per
        # process, which cannot be used from a later event loop
        options["http_async_client"] = openai.DefaultAsyncHttpxClient()
        backing = ChatOpenAI(**options)
        self._back_with(backing, backing.root_client)

    # --- dynavec's direct SDK path -----------------------------------------------------

    @staticmethod
    def _messages(messages: Sequence[Message]) -> list[JSONObject]:
        out: list[JSONObject] = []
        for m in messages:
            item: JSONObject = {"role": str(m.role)}
            if m.content is not None:
                item["content"] = m.content
            if m.tool_calls:
                item["tool_calls"] = [
                    {
                        "id": c.id,
                        "type": "function",
                        "function": {"name": c.name, "arguments": arguments_json(c.arguments)},
                    }
                    for c in m.tool_calls
                ]
            if m.tool_call_id:
                item["tool_call_id"] = m.tool_call_id
                item["name"] = "tool"
            out.append(item)
        return out

    def _request(
        self, messages: Sequence[Message], tools: list[Tool] | None, kwargs: dict[str, UserPayload]
    ) -> JSONObject:
        args: JSONObject = {"model": self.model, "messages": self._messages(messages)}
        if tools:
            args["tools"] = [t.to_dict() for t in tools]
        return args

    def _sdk_invoke(
        self, messages: Sequence[Message], tools: list[Tool] | None, kwargs: dict[str, UserPayload]
    ) -> ChatResult:
        args = {**self._request(messages, tools, kwargs), **kwargs}
        response = self._client.chat.completions.create(**args)
        choice = response.choices[0]
        m = choice.message
        calls = [ToolCall(c.id, c.function.name, c.function.arguments) for c in m.tool_calls or []]
        message = Message(m.role or "assistant", m.content, calls)
        return ChatResult(message, choice.finish_reason, raw=response)

    def _sdk_stream(
        self, messages: Sequence[Message], tools: list[Tool] | None, kwargs: dict[str, UserPayload]
    ) -> Iterator[ChatChunk]:
        args = {**self._request(messages, tools, kwargs), "stream": True, **kwargs}
        for chunk in self._client.chat.completions.create(**args):
            choices = field_of(chunk, "choices")
            if not choices:
                continue
            delta = field_of(choices[0], "delta")
            calls = []
            for c in field_of(delta, "tool_calls") or []:
                fn = field_of(c, "function")
                calls.append(
                    ToolCall(
                        field_of(c, "id") or "",
                        field_of(fn, "name") or "",
                        field_of(fn, "arguments") or "",
                    )
                )
            yield ChatChunk(field_of(delta, "content"), calls)
