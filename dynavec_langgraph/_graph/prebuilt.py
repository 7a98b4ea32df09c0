"""The prebuilt agent's options (``langgraph.prebuilt.create_react_agent``) on this package's graph.

:func:`dynavec_langgraph.create_react_agent` takes every parameter of LangGraph's prebuilt
agent. What needs more than passing an option on lives here:

- a callable model (``model=lambda state, runtime: ...``, sync or async), resolved at each
  model call (:class:`DynamicModel`);
- the state as the user's ``state_schema`` type (a pydantic model or a dataclass, else a dict
  without this package's bookkeeping) wherever it reaches user code: a callable model, a
  callable prompt, ``pre_model_hook`` / ``post_model_hook``, ``InjectedState`` /
  ``ToolRuntime.state`` (:class:`StateView`);
- a callable prompt's ``config``, ``store``, ``runtime`` and ``writer`` parameters
  (:class:`PromptRunnable`), and hooks annotated with any state type (:func:`hook_node`);
- the prebuilt agent's ``response_format``: after the run, one more model call through
  ``with_structured_output`` in a ``generate_structured_response`` node
  (:class:`StructuredResponseNode`); a ``(prompt, schema)`` tuple adds that system prompt.
"""

from __future__ import annotations

import dataclasses
import inspect
import sys
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, cast

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import SystemMessage
from langchain_core.runnables import (
    Runnable,
    RunnableBinding,
    RunnableConfig,
    RunnableSequence,
    ensure_config,
)
from langgraph.config import get_store, get_stream_writer
from langgraph.runtime import get_runtime
from pydantic import BaseModel

from dynavec_langgraph._graph.nodes import NodeRunnable, node_input
from dynavec_langgraph._graph.state import BOOKKEEPING
from dynavec_langgraph._types import NodeUpdate, StateUpdate, UserPayload, UserState

if TYPE_CHECKING:
    from dynavec_langgraph._types import (
        Hook,
        ModelOption,
        ResponseFormatOption,
        SchemaOption,
        UserRunnable,
    )

__all__ = [
    "STRUCTURED_NODE",
    "DynamicModel",
    "PromptRunnable",
    "StateView",
    "StructuredResponseNode",
    "hook_node",
    "is_dynamic_model",
    "is_strategy",
]

STRUCTURED_NODE = "generate_structured_response"
"""The node that makes the structured response (the prebuilt agent's name)."""
_HIDDEN = BOOKKEEPING | {"llm_input_messages"}
_ASYNC_ONLY = (
    "Async model callable provided but agent invoked synchronously. Use agent.ainvoke() or "
    "agent.astream(), or provide a sync model callable."
)


def is_dynamic_model(model: ModelOption) -> bool:
    """A callable that picks the model from the state (the prebuilt agent's rule): not a
    string, not a Runnable, not a dynavec-style model object (``invoke(messages, ...)``)."""
    return (
        not isinstance(model, str | Runnable)
        and callable(model)
        and not callable(getattr(model, "invoke", None))
    )


class StateView:
    """The graph state as user code sees it: an instance of a pydantic or dataclass
    ``state_schema`` (its defaults applied), else a dict without this package's bookkeeping."""

    def __init__(self, schema: SchemaOption) -> None:
        # read only when it is a pydantic or dataclass type (never None then)
        self.schema: type[UserState] = cast("type[UserState]", schema)
        self.pydantic = self.dataclass = False
        self.fields: frozenset[str] = frozenset()
        if isinstance(schema, type) and issubclass(schema, BaseModel):
            self.pydantic, self.fields = True, frozenset(schema.model_fields)
        elif isinstance(schema, type) and dataclasses.is_dataclass(schema):
            self.dataclass = True
            self.fields = frozenset(f.name for f in dataclasses.fields(schema))

    @property
    def typed(self) -> bool:
        """True when user code gets another type than a dict."""
        return self.pydantic or self.dataclass

    def __call__(self, state: UserState) -> UserState:
        if not isinstance(state, Mapping):
            return state
        if self.pydantic:
            return self.schema.model_construct(
                **{k: v for k, v in state.items() if k in self.fields}
            )
        if self.dataclass:
            try:
                return self.schema(**{k: v for k, v in state.items() if k in self.fields})
            except TypeError as error:
                raise ValueError(
                    f"state_schema={self.schema.__name__}: the state cannot be made into one "
                    f"({error}); give the field a default, or pass it in the input"
                ) from None
        return {k: v for k, v in state.items() if k not in _HIDDEN}


def _injected(func: Callable[..., UserPayload], config: RunnableConfig) -> dict[str, UserPayload]:
    """The keyword arguments LangGraph injects by parameter name into a node function
    (``config``, ``store``, ``runtime``, ``writer``), as its ``RunnableCallable`` does."""
    try:
        params = inspect.signature(func).parameters
    except (TypeError, ValueError):
        return {}
    kwargs: dict[str, UserPayload] = {}
    if "config" in params:
        kwargs["config"] = config
    if "store" in params:
        kwargs["store"] = get_store()
    if "runtime" in params:
        kwargs["runtime"] = get_runtime()
    if "writer" in params:
        kwargs["writer"] = get_stream_writer()
    return kwargs


def _call(func: Hook, view: StateView, state: UserState, config: RunnableConfig) -> UserPayload:
    if isinstance(func, Runnable):
        return func.invoke(view(state), config)
    if inspect.iscoroutinefunction(func):
        raise RuntimeError(
            f"{getattr(func, '__name__', func)!r} is async: run the agent with ainvoke/astream, "
            "or pass a sync function"
        )
    return func(view(state), **_injected(func, config))


async def _acall(
    func: Hook, view: StateView, state: UserState, config: RunnableConfig
) -> UserPayload:
    if isinstance(func, Runnable):
        return await func.ainvoke(view(state), config)
    result = func(view(state), **_injected(func, config))
    return await result if inspect.isawaitable(result) else result


class PromptRunnable(Runnable[UserState, UserPayload]):
    """A callable prompt (``prompt(state)``, ``prompt(state, config, *, store)``, async too)
    or a Runnable prompt, given the state as :class:`StateView` shows it."""

    def __init__(self, prompt: Hook, view: StateView) -> None:
        self.prompt, self.view = prompt, view
        self.name = "Prompt"

    def invoke(
        self, input: UserState, config: RunnableConfig | None = None, **kwargs: UserPayload
    ) -> UserPayload:
        config = ensure_config(config)
        out = _call(self.prompt, self.view, input, config)
        # a Runnable returned (e.g. `SystemMessage(...) + messages`, a ChatPromptTemplate) is
        # run on the state, as LangGraph's RunnableCallable does (langgraph 1.2)
        return out.invoke(self.view(input), config) if isinstance(out, Runnable) else out

    async def ainvoke(
        self, input: UserState, config: RunnableConfig | None = None, **kwargs: UserPayload
    ) -> UserPayload:
        config = ensure_config(config)
        out = await _acall(self.prompt, self.view, input, config)
        return await out.ainvoke(self.view(input), config) if isinstance(out, Runnable) else out


def hook_node(name: str, hook: Hook, view: StateView) -> NodeRunnable:
    """``pre_model_hook`` / ``post_model_hook`` as a node. LangGraph would read a function's
    state annotation as an input schema (an ``AgentState`` with ``add_messages`` clashes with
    this package's ``messages`` channel); the node gives the hook the state as
    :class:`StateView` shows it and the parameters it names."""

    def run(state: UserState, config: RunnableConfig) -> NodeUpdate:
        return _call(hook, view, state, config)

    async def arun(state: UserState, config: RunnableConfig) -> NodeUpdate:
        return await _acall(hook, view, state, config)

    return NodeRunnable(name, run, arun)


def _resolved(model: UserPayload) -> UserRunnable:
    if isinstance(model, str):
        from langchain.chat_models import init_chat_model

        return init_chat_model(model)
    if not isinstance(model, Runnable):
        raise TypeError(
            f"the model callable returned {model!r:.80}: return a LangChain chat model (with "
            "its tools bound, e.g. model.bind_tools(tools)) or a Runnable"
        )
    return model


class DynamicModel(Runnable[UserPayload, UserPayload]):
    """``model=callable(state, runtime)``: the callable picks the model at each model call,
    as in the prebuilt agent (it returns a chat model with its tools bound, or a Runnable;
    an async callable needs ``ainvoke`` / ``astream``)."""

    def __init__(self, choose: Callable[..., UserPayload], view: StateView) -> None:
        self.choose, self.view = choose, view
        self.name = "dynamic_model"

    def resolve(self, state: UserState) -> UserRunnable:
        if inspect.iscoroutinefunction(self.choose):
            raise RuntimeError(_ASYNC_ONLY)
        return _resolved(self.choose(self.view(state), get_runtime()))

    async def aresolve(self, state: UserState) -> UserRunnable:
        picked = self.choose(self.view(state), get_runtime())
        return _resolved(await picked if inspect.isawaitable(picked) else picked)

    def invoke(
        self, input: UserPayload, config: RunnableConfig | None = None, **kwargs: UserPayload
    ) -> UserPayload:
        return self.resolve(node_input()).invoke(input, config, **kwargs)

    async def ainvoke(
        self, input: UserPayload, config: RunnableConfig | None = None, **kwargs: UserPayload
    ) -> UserPayload:
        model = await self.aresolve(node_input())
        return await model.ainvoke(input, config, **kwargs)


def _chat_model(model: UserRunnable) -> BaseChatModel:
    """The chat model under a binding or a sequence (the prebuilt agent's ``_get_model``)."""
    if isinstance(model, RunnableSequence):
        model = next(
            (s for s in model.steps if isinstance(s, RunnableBinding | BaseChatModel)), model
        )
    if isinstance(model, RunnableBinding):
        model = model.bound
    if not isinstance(model, BaseChatModel):
        raise TypeError(
            f"response_format needs a chat model with with_structured_output, got "
            f"{type(model).__name__}: pass a LangChain chat model or model.bind_tools(...)"
        )
    return model


class StructuredResponseNode:
    """The prebuilt agent's ``generate_structured_response`` node: one model call through
    ``with_structured_output`` on the conversation (after a ``(prompt, schema)`` tuple's
    system prompt); its result is ``structured_response``."""

    def __init__(self, response_format: ResponseFormatOption, model: UserRunnable) -> None:
        self.schema: dict[str, UserPayload] | type[UserPayload]
        if isinstance(response_format, tuple):
            prompt, self.schema = response_format
            self.prompt: list[SystemMessage] = [SystemMessage(content=prompt)]
        else:  # a schema: a strategy is create_agent's (_agent_options.prebuilt_response_format)
            self.schema = cast("dict[str, UserPayload] | type[UserPayload]", response_format)
            self.prompt = []
        self.model = model

    def _messages(self, state: Mapping[str, UserPayload]) -> list[UserPayload]:
        return [*self.prompt, *state["messages"]]

    def call(self, state: UserState, config: RunnableConfig) -> StateUpdate:
        model = self.model.resolve(state) if isinstance(self.model, DynamicModel) else self.model
        structured = _chat_model(model).with_structured_output(self.schema)
        return {"structured_response": structured.invoke(self._messages(state), config)}

    async def acall(self, state: UserState, config: RunnableConfig) -> StateUpdate:
        model = (
            await self.model.aresolve(state) if isinstance(self.model, DynamicModel) else self.model
        )
        structured = _chat_model(model).with_structured_output(self.schema)
        return {"structured_response": await structured.ainvoke(self._messages(state), config)}

    def node(self) -> NodeRunnable:
        return NodeRunnable(STRUCTURED_NODE, self.call, self.acall)


def is_strategy(response_format: ResponseFormatOption) -> bool:
    """Whether ``response_format`` is one of ``create_agent``'s structured-output strategies
    (``ToolStrategy``, ``ProviderStrategy``, ``AutoStrategy``). Without their module imported
    no such object can exist, so a schema never imports LangChain here."""
    module = sys.modules.get("langchain.agents.structured_output")
    if module is None:
        return False
    strategies = (module.ToolStrategy, module.ProviderStrategy, module.AutoStrategy)
    return isinstance(response_format, strategies)
