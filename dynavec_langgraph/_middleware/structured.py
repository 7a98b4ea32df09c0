"""Mirrors ``langchain.agents.factory._supports_provider_strategy`` and ``create_agent``'s
structured-output strategies and their error handling (``AutoStrategy`` / ``ToolStrategy`` /
``ProviderStrategy``, ``ToolStrategy.handle_errors``), checked against langchain 1.5.2; the mirrored
sources are pinned by digest in tests/test_create_agent.py."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel

__all__ = ["Structured", "structured_error", "supports_provider_strategy"]


class Structured:
    """``response_format`` resolved as ``create_agent`` resolves it."""

    def __init__(self, response_format: Any, model: Any) -> None:
        from langchain.agents.structured_output import (
            AutoStrategy,
            OutputToolBinding,
            ProviderStrategy,
            ToolStrategy,
        )

        from dynavec_langgraph._dynavec.models import DynavecChatModel  # a dynavec model, adapted

        if not isinstance(model, BaseChatModel) or isinstance(model, DynavecChatModel):
            raise TypeError(
                f"response_format={response_format!r:.80} needs a LangChain chat model (a "
                f"BaseChatModel that can bind tools); the model given ({type(model).__name__}) "
                "cannot serve structured output. Pass e.g. ChatOpenAI(...) or a "
                "'provider:model' string."
            )
        if isinstance(response_format, ToolStrategy | ProviderStrategy | AutoStrategy):
            self.initial: Any = response_format
        else:
            try:
                self.initial = AutoStrategy(schema=response_format)
                ToolStrategy(schema=response_format)
            except Exception as error:
                raise TypeError(
                    f"response_format={response_format!r:.80}: pass a pydantic model, dataclass, "
                    f"TypedDict, JSON-schema dict, ToolStrategy or ProviderStrategy ({error})"
                ) from None
        self.tool_strategy: Any = None
        if isinstance(self.initial, AutoStrategy):
            self.tool_strategy = ToolStrategy(schema=self.initial.schema)
        elif isinstance(self.initial, ToolStrategy):
            self.tool_strategy = self.initial
        self.tools: dict[str, Any] = {}
        if self.tool_strategy is not None:
            for spec in self.tool_strategy.schema_specs:
                binding = OutputToolBinding.from_schema_spec(spec)
                self.tools[binding.tool.name] = binding


def supports_provider_strategy(model: Any, tools: Sequence[Any]) -> bool:
    """As ``create_agent`` decides (its model profile, else its list of known models)."""
    from langchain.agents.factory import FALLBACK_MODELS_WITH_STRUCTURED_OUTPUT

    name = (
        getattr(model, "model_name", None)
        or getattr(model, "model", None)
        or getattr(model, "model_id", "")
    )
    profile = getattr(model, "profile", None)
    if (
        profile
        and profile.get("structured_output")
        and not (
            tools
            and isinstance(name, str)
            and "gemini" in name.lower()
            and "gemini-3" not in name.lower()
        )
    ):
        return True
    if not isinstance(name, str) or not name:
        return False
    return any(re.search(p, name.lower()) for p in FALLBACK_MODELS_WITH_STRUCTURED_OUTPUT)


def structured_error(exception: Exception, strategy: Any) -> tuple[bool, str]:
    """``(retry, message)`` for a structured-output error, as ``ToolStrategy.handle_errors``
    says (create_agent's rules)."""
    from langchain.agents.factory import STRUCTURED_OUTPUT_ERROR_TEMPLATE
    from langchain.agents.structured_output import ToolStrategy

    if not isinstance(strategy, ToolStrategy):
        return False, ""
    handle = strategy.handle_errors
    default = STRUCTURED_OUTPUT_ERROR_TEMPLATE.format(error=str(exception))
    if handle is False:
        return False, ""
    if handle is True:
        return True, default
    if isinstance(handle, str):
        return True, handle
    if isinstance(handle, type):
        return (True, default) if isinstance(exception, handle) else (False, "")
    if isinstance(handle, tuple):
        return (True, default) if isinstance(exception, handle) else (False, "")
    return True, handle(exception)
