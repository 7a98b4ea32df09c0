"""Model resolution: LangChain chat models, ``"provider:model"`` strings, dynavec-style models."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable, RunnableBinding, RunnableSequence
from pydantic import ConfigDict, Field

from dynavec_langgraph._conversion import from_dynavec, to_dynavec
from dynavec_langgraph._extras import install_command
from dynavec_langgraph._tools import AgentTool
from dynavec_langgraph.chat import Tool
from dynavec_langgraph.chat._providers import native_model

__all__ = ["DynavecChatModel", "bind_model", "check_bound_tools"]


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

    def _chat_tools(self) -> list[Tool]:
        return [t.to_chat_tool() for t in self.tools]

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


def _is_dynavec_model(model: Any) -> bool:
    return not isinstance(model, Runnable) and callable(getattr(model, "invoke", None))


def check_bound_tools(
    model: Runnable[Any, Any], tools: Sequence[AgentTool], builtin: Sequence[dict[str, Any]] = ()
) -> None:
    """A model given with its tools already bound (``model.bind_tools(tools)``) must have
    bound the agent's tools, as ``langgraph.prebuilt.create_react_agent`` checks
    (``_should_bind_tools``, langgraph-prebuilt 1.1; same messages).

    Raises:
        ValueError: another number of tools, or a tool of ``tools=`` the model lacks.
    """
    if isinstance(model, RunnableSequence):
        model = next(
            (s for s in model.steps if isinstance(s, RunnableBinding | BaseChatModel)), model
        )
    if not isinstance(model, RunnableBinding) or "tools" not in model.kwargs:
        return
    bound = model.kwargs["tools"]
    if len(tools) != len(bound) - len(builtin):
        raise ValueError(
            "Number of tools in the model.bind_tools() and tools passed to create_react_agent "
            f"must match Got {len(tools)} tools, expected {len(bound) - len(builtin)}"
        )
    names = set()
    for spec in bound:
        if not isinstance(spec, dict):
            continue
        if spec.get("type") == "function":  # OpenAI-style
            names.add(spec["function"]["name"])
        elif spec.get("name"):  # Anthropic-style
            names.add(spec["name"])
    if missing := {t.name for t in tools} - names:
        raise ValueError(f"Missing tools '{missing}' in the model.bind_tools()")


def bind_model(
    model: Any, tools: Sequence[AgentTool], builtin: Sequence[dict[str, Any]] = ()
) -> Runnable[LanguageModelInput, Any]:
    """The model with the tools bound, ready to be called with the conversation.
    ``builtin``: provider built-in tools given as dicts (``{"type": "web_search_preview"}``),
    bound after the agent's tools and never run by the agent.

    Raises:
        TypeError: a model that cannot call tools, with what to pass instead.
        ValueError: a model with other tools already bound (:func:`check_bound_tools`).
    """
    if isinstance(model, str):
        try:
            from langchain.chat_models import init_chat_model
        except ImportError:  # pragma: no cover - depends on the installed extras
            raise TypeError(
                f"model={model!r}: a 'provider:model' string needs the `langchain` package "
                f"({install_command('all')}), or pass a chat model object"
            ) from None
        model = init_chat_model(model)
    elif _is_dynavec_model(model):
        # a dynavec provider (OpenAIChatModel, ...) is LangChain underneath: the agent calls
        # that model directly (tokens stream, callbacks see it); anything else is adapted
        native = native_model(model)
        model = native if native is not None else DynavecChatModel(inner=model)
    if not isinstance(model, BaseChatModel):
        if isinstance(model, Runnable):
            check_bound_tools(model, tools, builtin)
            return model  # already bound (e.g. model.bind_tools(...) done by the caller)
        raise TypeError(
            f"model={model!r} is not a chat model: pass a LangChain chat model, a "
            "'provider:model' string, or an object with invoke(messages, tools=...)"
        )
    if not tools and not builtin:
        return model
    try:
        return model.bind_tools([*tools, *builtin])
    except NotImplementedError:
        raise TypeError(
            f"{type(model).__name__} cannot call tools (no bind_tools); use a tool-calling "
            "chat model, or dynavec_langgraph.testing.ScriptedChatModel in tests"
        ) from None
