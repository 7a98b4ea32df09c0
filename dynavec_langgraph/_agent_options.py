"""The options of the agent beyond the two-node graph (``create_agent``'s and the prebuilt
agent's), checked and resolved: what the factory reads to choose the plain graph or the
middleware graph (:mod:`dynavec_langgraph._middleware`, imported only for the latter)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import SystemMessage
from langchain_core.runnables import Runnable, RunnableLambda

__all__ = ["POST_MODEL_HOOK", "PRE_MODEL_HOOK", "AgentOptions", "resolve_prompt"]

PRE_MODEL_HOOK = "pre_model_hook"
POST_MODEL_HOOK = "post_model_hook"


@dataclass
class AgentOptions:
    """The options beyond the two-node graph, checked and resolved."""

    system_message: SystemMessage | None = None
    prompt: Runnable[Any, Any] | None = None
    """A callable or Runnable prompt: the state in, the model's input messages out."""
    response_format: Any = None
    state_schema: Any = None
    context_schema: Any = None
    pre_model_hook: Any = None
    post_model_hook: Any = None
    middleware: list[Any] = field(default_factory=list)

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


def resolve_prompt(
    system_prompt: Any, prompt: Any
) -> tuple[SystemMessage | None, Runnable[Any, Any] | None]:
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
