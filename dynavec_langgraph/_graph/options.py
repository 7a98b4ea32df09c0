"""The options of the agent beyond the two-node graph (``create_agent``'s and the prebuilt
agent's), resolved from the agent's spec: what the factory reads to choose the plain graph or
the middleware graph (:mod:`dynavec_langgraph._middleware`, imported only for the latter)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from langchain_core.messages import SystemMessage
from langchain_core.runnables import Runnable, RunnableLambda

from dynavec_langgraph._graph.spec import AgentSpec

if TYPE_CHECKING:
    from dynavec_langgraph._graph.nodes import NodeRunnable
    from dynavec_langgraph._graph.prebuilt import StateView
    from dynavec_langgraph._types import (
        Middleware,
        PromptOption,
        ResponseFormatOption,
        SchemaOption,
        UserRunnable,
    )

__all__ = [
    "POST_MODEL_HOOK",
    "PRE_MODEL_HOOK",
    "AgentOptions",
    "resolve_options",
    "resolve_prompt",
]

PRE_MODEL_HOOK = "pre_model_hook"
POST_MODEL_HOOK = "post_model_hook"


@dataclass
class AgentOptions:
    """The options beyond the two-node graph, checked and resolved."""

    system_message: SystemMessage | None = None
    prompt: UserRunnable | None = None
    """A callable or Runnable prompt: the state in, the model's input messages out."""
    response_format: ResponseFormatOption = None
    """``create_agent``'s ``response_format`` (a strategy inside the loop); ``None`` when the
    agent has none or has the prebuilt agent's (:attr:`prebuilt_format`)."""
    state_schema: SchemaOption = None
    context_schema: SchemaOption = None
    pre_model_hook: NodeRunnable | None = None
    post_model_hook: NodeRunnable | None = None
    middleware: list[Middleware] = field(default_factory=list)
    view: StateView | None = None
    """The state as user code sees it (the ``state_schema``'s type)."""
    dynamic_model: bool = False
    """``model=`` is a callable picking the model at each call (the prebuilt agent's)."""
    prebuilt_format: bool = False
    """``response_format`` has the prebuilt agent's meaning (a structured-output call after
    the run)."""

    @property
    def extended(self) -> bool:
        return bool(
            self.middleware
            or self.response_format is not None
            or self.state_schema is not None
            or self.prompt is not None
            or self.pre_model_hook is not None
            or self.post_model_hook is not None
        )


def resolve_options(spec: AgentSpec) -> AgentOptions:
    """The options of ``spec`` beyond the two-node graph, resolved: the prompt, the model hooks
    as nodes, the meaning of ``response_format`` (:func:`prebuilt_response_format`)."""
    from dynavec_langgraph._graph import prebuilt as pb

    view = pb.StateView(spec.state_schema)
    dynamic = pb.is_dynamic_model(spec.model)
    prompt: PromptOption = spec.prompt
    if prompt is not None and not isinstance(prompt, str | SystemMessage):
        prompt = pb.PromptRunnable(prompt, view)  # the state as the user's type, the store
    prebuilt_format = not spec.face.create_agent and prebuilt_response_format(
        spec,
        prebuilt_only=dynamic
        or prompt is not None
        or spec.pre_model_hook is not None
        or spec.post_model_hook is not None,
    )
    system_message, prompt_runnable = resolve_prompt(spec.system_prompt, prompt)
    pre, post = spec.pre_model_hook, spec.post_model_hook
    return AgentOptions(
        system_message=system_message,
        prompt=prompt_runnable,
        response_format=None if prebuilt_format else spec.response_format,
        state_schema=spec.state_schema,
        context_schema=spec.context_schema,
        pre_model_hook=None if pre is None else pb.hook_node(PRE_MODEL_HOOK, pre, view),
        post_model_hook=None if post is None else pb.hook_node(POST_MODEL_HOOK, post, view),
        middleware=list(spec.middleware or ()),
        view=view,
        dynamic_model=dynamic,
        prebuilt_format=prebuilt_format,
    )


def prebuilt_response_format(spec: AgentSpec, *, prebuilt_only: bool) -> bool:
    """Whether ``response_format`` has the prebuilt agent's meaning (a structured-output call
    after the run, ``generate_structured_response``) rather than ``create_agent``'s (a
    strategy inside the loop): a ``(prompt, schema)`` tuple, or a schema with an option only
    the prebuilt agent has (``version=``, ``prompt=``, model hooks, a callable model) and no
    middleware. A ``ToolStrategy`` / ``ProviderStrategy`` is always ``create_agent``'s."""
    if spec.response_format is None:
        return False
    if isinstance(spec.response_format, tuple):
        return True
    from dynavec_langgraph._graph.prebuilt import is_strategy

    if is_strategy(spec.response_format) or spec.middleware:
        return False
    return spec.explicit_version or prebuilt_only


def resolve_prompt(
    system_prompt: str | SystemMessage | None, prompt: PromptOption
) -> tuple[SystemMessage | None, UserRunnable | None]:
    """``system_prompt`` / ``prompt`` as a system message or a prompt Runnable."""
    if system_prompt is not None and prompt is not None:
        raise ValueError(
            "pass either system_prompt= (create_agent) or prompt= (the prebuilt agent), not both"
        )
    value = prompt if prompt is not None else system_prompt
    option = "prompt" if prompt is not None else "system_prompt"
    if value is None or value == "":
        return None, None
    if isinstance(value, str):
        return SystemMessage(content=value), None
    if isinstance(value, SystemMessage):
        return value, None
    if option == "prompt" and isinstance(value, Runnable):
        return None, value
    if option == "prompt" and callable(value):
        return None, RunnableLambda(value, name="prompt")
    kinds = "a str or SystemMessage" + (
        ", a callable of the state or a Runnable" if option == "prompt" else ""
    )
    raise TypeError(f"{option}={value!r:.80}: pass {kinds}")
