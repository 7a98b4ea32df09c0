"""Test doubles shipped to users: :class:`ScriptedChatModel`.

Use it to test approval flows offline, without a model provider::

    model = ScriptedChatModel(turns=[
        [{"name": "transfer_funds", "args": {"amount": 120}}],   # turn 1: a tool call
        "Rent paid.",                                           # turn 2: the answer
    ])
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.messages.tool import tool_call_chunk
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ConfigDict, Field, PrivateAttr

__all__ = ["ScriptedChatModel", "Turn"]

Turn = str | AIMessage | list[dict[str, Any]]
"""A scripted turn: answer text, a ready ``AIMessage``, or tool calls
``[{"name": ..., "args": {...}, "id": optional}]`` (an ``"id"`` given is kept as is, even
``""`` or ``None``, to script providers that send such ids; without one each call gets a fresh
id)."""

Policy = Callable[[list[BaseMessage]], Turn]


def _to_message(turn: Turn) -> AIMessage:
    if isinstance(turn, AIMessage):
        return turn.model_copy(update={"id": f"lc_run-{uuid.uuid4()}"})
    if isinstance(turn, str):
        return AIMessage(content=turn, id=f"lc_run-{uuid.uuid4()}")
    calls = [
        {
            "name": c["name"],
            "args": dict(c.get("args") or {}),
            "id": c["id"] if "id" in c else f"call_{uuid.uuid4().hex[:24]}",
            "type": "tool_call",
        }
        for c in turn
    ]
    return AIMessage(content="", tool_calls=calls, id=f"lc_run-{uuid.uuid4()}")


class ScriptedChatModel(BaseChatModel):
    """A chat model that answers from a script: no network, deterministic, tool-calling.

    Each call takes the next turn of ``turns`` (or asks ``policy`` when given), and every
    answer gets a fresh message id, so LangGraph's message reducers never merge two turns.
    It supports ``bind_tools``, sync, async and streaming (tool calls survive streaming).

    Attributes:
        turns: the scripted answers, used in order.
        policy: ``f(messages) -> Turn``; when set, it decides every answer instead of
            ``turns`` (handy when one script must serve several processes).
        calls: the messages of the most recent calls (at most ``max_recorded_calls``, oldest
            dropped first), for assertions.
        call_kwargs: the keyword arguments of the same calls (bound tools excluded).
        max_recorded_calls: how many calls ``calls`` / ``call_kwargs`` keep (default 100;
            ``0`` records none, ``None`` keeps every call). Each record holds the call's whole
            message list, so an unbounded record grows with the square of a long thread's
            length; :attr:`call_count` counts every call whatever the bound.

    Example:
        >>> model = ScriptedChatModel(turns=["hello"])
        >>> model.invoke("hi").content
        'hello'
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    turns: list[Any] = Field(default_factory=list)
    """The scripted answers (each a :data:`Turn`), used in order."""
    policy: Policy | None = None
    calls: list[list[BaseMessage]] = Field(default_factory=list)
    call_kwargs: list[dict[str, Any]] = Field(default_factory=list)
    max_recorded_calls: int | None = Field(default=100, ge=0)
    """How many of the latest calls ``calls`` and ``call_kwargs`` keep (``None``: all)."""
    _cursor: int = PrivateAttr(default=0)
    _count: int = PrivateAttr(default=0)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    @property
    def call_count(self) -> int:
        """How many times the model was called (all calls, also those no longer recorded)."""
        return self._count

    @property
    def remaining(self) -> int:
        """How many scripted turns are left."""
        return len(self.turns) - self._cursor

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Bind tools as a real provider would (they are recorded, not used)."""
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

    def _next(self, messages: list[BaseMessage], kwargs: dict[str, Any]) -> AIMessage:
        with self._lock:
            self._count += 1
            self._record(messages, kwargs)
            if self.policy is not None:
                return _to_message(self.policy(list(messages)))
            if self._cursor >= len(self.turns):
                raise RuntimeError(
                    f"ScriptedChatModel: the script has {len(self.turns)} turns and all were "
                    "used; add turns for this call"
                )
            turn = self.turns[self._cursor]
            self._cursor += 1
        return _to_message(turn)

    def _record(self, messages: list[BaseMessage], kwargs: dict[str, Any]) -> None:
        """Keep this call in ``calls`` / ``call_kwargs``, dropping the oldest beyond the bound."""
        limit = self.max_recorded_calls
        self.calls.append(list(messages))
        self.call_kwargs.append({k: v for k, v in kwargs.items() if k != "tools"})
        if limit is not None:
            for record in (self.calls, self.call_kwargs):
                if len(record) > limit:
                    del record[: len(record) - limit]

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self._next(messages, kwargs))])

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return self._generate(messages, stop, None, **kwargs)

    def _chunks(self, message: AIMessage) -> list[ChatGenerationChunk]:
        text = message.content if isinstance(message.content, str) else ""
        words = [w + " " for w in text.split(" ")]
        if words:
            words[-1] = words[-1][:-1]
        chunks = [AIMessageChunk(content=w, id=message.id) for w in words if w]
        for index, call in enumerate(message.tool_calls):
            chunks.append(
                AIMessageChunk(
                    content="",
                    id=message.id,
                    tool_call_chunks=[
                        tool_call_chunk(
                            name=call["name"],
                            args=_json(call["args"]),
                            id=call["id"],
                            index=index,
                        )
                    ],
                )
            )
        if not chunks:
            chunks.append(AIMessageChunk(content="", id=message.id))
        chunks[-1].chunk_position = "last"
        return [ChatGenerationChunk(message=c) for c in chunks]

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        for chunk in self._chunks(self._next(messages, kwargs)):
            if run_manager is not None:
                run_manager.on_llm_new_token(str(chunk.message.content), chunk=chunk)
            yield chunk

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        for chunk in self._chunks(self._next(messages, kwargs)):
            if run_manager is not None:
                await run_manager.on_llm_new_token(str(chunk.message.content), chunk=chunk)
            yield chunk


def _json(value: Any) -> str:
    import json

    return json.dumps(value, ensure_ascii=False)
