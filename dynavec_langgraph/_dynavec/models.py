"""A dynavec-style chat model as a LangChain chat model (:class:`DynavecChatModel`); imported
only when an agent is given such a model (:func:`dynavec_langgraph._graph.binding.bind_model`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from pydantic import ConfigDict, Field

from dynavec_langgraph._dynavec.conversion import from_dynavec, to_dynavec
from dynavec_langgraph._tools.agent_tool import AgentTool
from dynavec_langgraph.chat import Tool

__all__ = ["DynavecChatModel"]


class DynavecChatModel(BaseChatModel):
    """Adapts a dynavec-style chat model to LangChain.

    dynavec models (:class:`dynavec_langgraph.chat.ChatModel` subclasses, or any object with
    such an ``invoke``) have ``invoke(messages, tools=...)`` taking dynavec ``Message`` records
    and the agent's tools as :class:`dynavec_langgraph.chat.Tool` records, and return a result
    whose ``.message`` is a dynavec ``Message`` (or a dict of one). The async path calls the
    model's ``ainvoke`` when it has one (``ChatModel`` always does), else ``invoke`` in a
    worker thread.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    inner: Any
    tools: list[AgentTool] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "dynavec"

    def bind_tools(  # type: ignore[override]
        self, tools: Sequence[AgentTool], **kwargs: Any
    ) -> Runnable[LanguageModelInput, AIMessage]:
        return self.model_copy(update={"tools": list(tools)}).bind(**kwargs)

    def _chat_tools(self) -> list[Tool] | None:
        """The agent's tools as the model takes them: ``None`` when there are none, as dynavec's
        agent sends them (``CONTRACT-2`` 9.6: ``tools`` is ``None`` when there are none)."""
        return [t.to_chat_tool() for t in self.tools] or None

    @staticmethod
    def _reply(result: Any) -> ChatResult:
        try:
            reply = from_dynavec(getattr(result, "message", result))
        except (TypeError, ValueError):
            reply = result
        if not isinstance(reply, AIMessage):
            raise TypeError(
                f"a dynavec model must answer an assistant message (a result whose .message is "
                f"a Message with role 'assistant', or such a Message or dict), got {reply!r:.120}"
            )
        return ChatResult(generations=[ChatGeneration(message=reply)])

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        converted = [to_dynavec(m) for m in messages]
        return self._reply(self.inner.invoke(converted, tools=self._chat_tools(), **kwargs))

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        ainvoke = getattr(self.inner, "ainvoke", None)
        if not callable(ainvoke):
            return await super()._agenerate(messages, stop, run_manager, **kwargs)
        converted = [to_dynavec(m) for m in messages]
        return self._reply(await ainvoke(converted, tools=self._chat_tools(), **kwargs))
