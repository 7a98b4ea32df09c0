"""What the three chat providers share: the LangChain path, and the choice between it and
dynavec's direct SDK path (docs/compatibility.md, P1-P3).

A provider built by its own ``__init__`` holds a LangChain chat model (``ChatOpenAI``,
``ChatAnthropic``, ``ChatBedrockConverse``) and the SDK client that model uses, as
``self._client``. Every call goes through the LangChain model. When ``self._client`` is not
that client any more (user code replaced ``__init__`` with one that sets only ``self.model``
and ``self._client``, or assigned a client of its own), the provider speaks to
``self._client`` directly with dynavec's request and response conversions, which live in
each provider's module.
"""

from __future__ import annotations

import json
from abc import abstractmethod
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, SystemMessage
from langchain_core.runnables import Runnable

from dynavec_langgraph._dynavec.conversion import from_dynavec, to_dynavec
from dynavec_langgraph._extras import missing_extra
from dynavec_langgraph._types import ForeignObject, JSONObject, UserPayload
from dynavec_langgraph.chat.base import ChatChunk, ChatModel, ChatResult, Message, Tool, ToolCall

__all__ = [
    "ProviderChatModel",
    "field_of",
    "native_model",
    "parsed_arguments",
    "provider_imports",
    "tool_specs",
    "tools_or_none",
    "turns",
]


@contextmanager
def provider_imports(feature: str, sdk: str, langchain_package: str, extra: str) -> Iterator[None]:
    """Around a provider's imports: an ``ImportError`` becomes the error that names the
    missing package (the SDK when it is the one missing, else the LangChain package) and the
    extra to install."""
    try:
        yield
    except ImportError as error:
        missing = (error.name or "").split(".")[0]
        package = sdk if missing in ("", sdk) else langchain_package
        raise missing_extra(feature, package, extra) from None


def parsed_arguments(arguments: str | JSONObject) -> object:
    """A tool call's arguments as the object Anthropic and Bedrock requests carry:
    ``json.loads`` of the string, ``{}`` when it is empty, a dict as it is."""
    if isinstance(arguments, dict):
        return arguments
    if not arguments:
        return {}
    return json.loads(arguments)


def turns(
    messages: Sequence[Message],
    *,
    text: Callable[[str], JSONObject],
    tool_use: Callable[[ToolCall], JSONObject],
    tool_result: Callable[[Message], JSONObject],
) -> list[JSONObject]:
    """The turns of an Anthropic Messages or a Bedrock Converse request, each API's blocks
    drawn by ``text`` / ``tool_use`` / ``tool_result``; the system messages are left out (both
    APIs take them apart).

    A tool message is a user turn of its one result block (dynavec also sent the tool's text
    before it, which both APIs refuse: docs/compatibility.md, P5 and P6); any other message is
    an ``assistant`` (or ``user``) turn of its text block, if it has text, then one block per
    tool call.
    """
    out: list[JSONObject] = []
    for m in messages:
        if m.role == "system":
            continue
        if m.role == "tool":
            out.append({"role": "user", "content": [tool_result(m)]})
            continue
        blocks = [text(m.content)] if m.content else []
        blocks.extend(tool_use(c) for c in m.tool_calls)
        out.append({"role": "assistant" if m.role == "assistant" else "user", "content": blocks})
    return out


def field_of(obj: ForeignObject, name: str, default: object = None) -> ForeignObject:
    """An attribute of an SDK object, or the key of a dict shaped like one."""
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


def tool_specs(tools: Sequence[ForeignObject] | None) -> list[Tool]:
    """The tools of a call as :class:`Tool` records (``Tool`` objects, or objects / dicts with
    ``name``, ``description`` and ``parameters``)."""
    out: list[Tool] = []
    for t in tools or []:
        if isinstance(t, Tool):
            out.append(t)
        elif isinstance(t, dict) and isinstance(t.get("function"), dict):
            fn = t["function"]
            out.append(Tool(fn["name"], fn.get("description", ""), fn.get("parameters") or {}))
        else:
            out.append(
                Tool(
                    str(field_of(t, "name")),
                    str(field_of(t, "description", "") or ""),
                    dict(field_of(t, "parameters", None) or {}),
                )
            )
    return out


def _finish_reason(metadata: Mapping[str, object]) -> str | None:
    for key in ("finish_reason", "stop_reason", "stopReason"):
        value = metadata.get(key)
        if value:
            return str(value)
    return None


def _result(reply: BaseMessage) -> ChatResult:
    """A LangChain answer as dynavec's :class:`ChatResult`: text (``None`` when empty), tool
    calls with JSON arguments (calls LangChain could not parse keep their raw string)."""
    if not isinstance(reply, AIMessage):
        raise TypeError(f"the provider answered {type(reply).__name__}, not an AIMessage")
    usage = dict(reply.usage_metadata or {})
    return ChatResult(
        to_dynavec(reply),
        _finish_reason(reply.response_metadata),
        usage=usage,
        model=reply.response_metadata.get("model_name") or reply.response_metadata.get("model"),
        raw=reply,
    )


def _chunk(piece: BaseMessage) -> ChatChunk | None:
    """A LangChain stream chunk as a :class:`ChatChunk`; ``None`` when it carries nothing."""
    if not isinstance(piece, AIMessageChunk):
        return None
    text = piece.text
    calls = [
        ToolCall(c.get("id") or "", c.get("name") or "", c.get("args") or "")
        for c in piece.tool_call_chunks
    ]
    finish = _finish_reason(piece.response_metadata)
    if not text and not calls and finish is None:
        return None
    return ChatChunk(text or None, calls, finish_reason=finish)


class ProviderChatModel(ChatModel):
    """A dynavec provider backed by a LangChain chat model (see the module docstring)."""

    model: str
    _client: ForeignObject
    _langchain: BaseChatModel | None = None
    _backing_client: ForeignObject = None
    join_system_messages = False
    """Anthropic and Bedrock take one system text: all system messages are joined."""

    def _back_with(self, langchain_model: BaseChatModel, client: ForeignObject) -> None:
        self._langchain = langchain_model
        self._client = client
        self._backing_client = client

    def _backing(self) -> BaseChatModel | None:
        """The LangChain model, unless ``self._client`` was replaced by someone else."""
        attrs = vars(self)
        langchain_model = attrs.get("_langchain")
        if not isinstance(langchain_model, BaseChatModel):
            return None
        if attrs.get("_client") is not attrs.get("_backing_client"):
            return None
        return langchain_model

    @property
    def langchain_model(self) -> BaseChatModel | None:
        """The LangChain chat model behind this provider (``None`` on the direct SDK path)."""
        return self._backing()

    def _route(
        self, messages: Sequence[Message], tools: Sequence[ForeignObject] | None
    ) -> _LangChainCall | _SdkCall:
        """The path of one call: the LangChain model's (its tools bound, the messages
        converted) or, when there is none, dynavec's direct SDK path."""
        backing = self._backing()
        if backing is None:
            return _SdkCall(self, messages, tools)
        specs = tool_specs(tools)
        runnable: Runnable[LanguageModelInput, BaseMessage] = (
            backing.bind_tools([t.to_dict() for t in specs]) if specs else backing
        )
        converted = [from_dynavec(m) for m in messages]
        if self.join_system_messages:
            system = "\n".join(
                str(m.content) for m in converted if isinstance(m, SystemMessage)
            ).strip()
            rest = [m for m in converted if not isinstance(m, SystemMessage)]
            converted = [SystemMessage(system), *rest] if system else rest
        return _LangChainCall(runnable, converted)

    # --- the dynavec interface ---------------------------------------------------------

    def invoke(
        self,
        messages: Sequence[Message],
        tools: Sequence[ForeignObject] | None = None,
        **kwargs: UserPayload,
    ) -> ChatResult:
        """Answer the conversation (one request); SDK errors propagate unchanged."""
        return self._route(messages, tools).invoke(kwargs)

    def stream(
        self,
        messages: Sequence[Message],
        tools: Sequence[ForeignObject] | None = None,
        **kwargs: UserPayload,
    ) -> Iterator[ChatChunk]:
        """Stream the answer: text pieces and unassembled tool-call fragments."""
        yield from self._route(messages, tools).stream(kwargs)

    async def ainvoke(
        self,
        messages: Sequence[Message],
        tools: Sequence[ForeignObject] | None = None,
        **kwargs: UserPayload,
    ) -> ChatResult:
        """Native async through LangChain's async client (the direct SDK path: a thread)."""
        return await self._route(messages, tools).ainvoke(kwargs)

    async def astream(
        self,
        messages: Sequence[Message],
        tools: Sequence[ForeignObject] | None = None,
        **kwargs: UserPayload,
    ) -> AsyncIterator[ChatChunk]:
        """Native async streaming: chunks arrive as the provider sends them."""
        async for chunk in self._route(messages, tools).astream(kwargs):
            yield chunk

    # --- dynavec's direct SDK path (each provider) -------------------------------------

    @abstractmethod
    def _sdk_invoke(
        self, messages: Sequence[Message], tools: list[Tool] | None, kwargs: dict[str, UserPayload]
    ) -> ChatResult:
        """dynavec's request on ``self._client`` and its response conversion."""

    @abstractmethod
    def _sdk_stream(
        self, messages: Sequence[Message], tools: list[Tool] | None, kwargs: dict[str, UserPayload]
    ) -> Iterator[ChatChunk]:
        """dynavec's streaming request on ``self._client``."""


@dataclass(frozen=True)
class _LangChainCall:
    """One call on the LangChain path: the model with the call's tools bound, the messages as
    LangChain's; each method is one request, its answer converted to dynavec's records."""

    runnable: Runnable[LanguageModelInput, BaseMessage]
    messages: list[BaseMessage]

    def invoke(self, kwargs: dict[str, UserPayload]) -> ChatResult:
        return _result(self.runnable.invoke(self.messages, **kwargs))

    async def ainvoke(self, kwargs: dict[str, UserPayload]) -> ChatResult:
        return _result(await self.runnable.ainvoke(self.messages, **kwargs))

    def stream(self, kwargs: dict[str, UserPayload]) -> Iterator[ChatChunk]:
        for piece in self.runnable.stream(self.messages, **kwargs):
            chunk = _chunk(piece)
            if chunk is not None:
                yield chunk

    async def astream(self, kwargs: dict[str, UserPayload]) -> AsyncIterator[ChatChunk]:
        async for piece in self.runnable.astream(self.messages, **kwargs):
            chunk = _chunk(piece)
            if chunk is not None:
                yield chunk


@dataclass(frozen=True)
class _SdkCall:
    """One call on dynavec's direct SDK path: the provider's own request on ``_client``; the
    async methods are :class:`ChatModel`'s defaults (the sync call in a worker thread)."""

    model: ProviderChatModel
    messages: Sequence[Message]
    tools: Sequence[ForeignObject] | None

    def invoke(self, kwargs: dict[str, UserPayload]) -> ChatResult:
        return self.model._sdk_invoke(self.messages, tools_or_none(self.tools), kwargs)

    async def ainvoke(self, kwargs: dict[str, UserPayload]) -> ChatResult:
        return await ChatModel.ainvoke(self.model, self.messages, self.tools, **kwargs)

    def stream(self, kwargs: dict[str, UserPayload]) -> Iterator[ChatChunk]:
        return self.model._sdk_stream(self.messages, tools_or_none(self.tools), kwargs)

    async def astream(self, kwargs: dict[str, UserPayload]) -> AsyncIterator[ChatChunk]:
        async for chunk in ChatModel.astream(self.model, self.messages, self.tools, **kwargs):
            yield chunk


def native_model(model: object) -> BaseChatModel | None:
    """The LangChain chat model an agent may call in place of ``model``: a provider on its
    LangChain path whose ``invoke`` / ``ainvoke`` no subclass overrides (so nothing of the
    user's runs in them); else ``None`` (the agent then calls ``model.invoke``)."""
    if not isinstance(model, ProviderChatModel):
        return None
    cls = type(model)
    if cls.invoke is not ProviderChatModel.invoke or cls.ainvoke is not ProviderChatModel.ainvoke:
        return None
    return model.langchain_model


def tools_or_none(tools: Sequence[ForeignObject] | None) -> list[Tool] | None:
    """The call's tools as records, ``None`` when there are none (the request omits them)."""
    specs = tool_specs(tools)
    return specs or None
