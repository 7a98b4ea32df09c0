"""Model resolution: LangChain chat models, ``"provider:model"`` strings, dynavec-style models
(adapted by :mod:`dynavec_langgraph._dynavec.models`, imported only for them), the agent's tools
bound."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from langchain_core.runnables import Runnable, RunnableBinding, RunnableSequence

from dynavec_langgraph._tools.agent_tool import AgentTool

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel, LanguageModelInput

__all__ = ["bind_model", "check_bound_tools"]


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
            (s for s in model.steps if isinstance(s, RunnableBinding | _chat_model_class())),
            model,
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
            from dynavec_langgraph._errors import install_command

            raise TypeError(
                f"model={model!r}: a 'provider:model' string needs the `langchain` package "
                f"({install_command('all')}), or pass a chat model object"
            ) from None
        model = init_chat_model(model)
    elif _is_dynavec_model(model):
        # a dynavec provider (OpenAIChatModel, ...) is LangChain underneath: the agent calls
        # that model directly (tokens stream, callbacks see it); anything else is adapted
        from dynavec_langgraph.chat._providers import native_model

        native = native_model(model)
        if native is None:
            from dynavec_langgraph._dynavec.models import DynavecChatModel

            native = DynavecChatModel(inner=model)
        model = native
    if not isinstance(model, _chat_model_class()):
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


def _chat_model_class() -> type[BaseChatModel]:
    """LangChain's ``BaseChatModel`` (``langchain_core.language_models.chat_models``, 50-150 ms
    to import, which ``import langchain_core.language_models`` alone does not load): imported
    when an agent is built, where the model given has usually loaded it already."""
    from langchain_core.language_models import BaseChatModel

    return BaseChatModel
