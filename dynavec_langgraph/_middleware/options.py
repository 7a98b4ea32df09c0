"""Mirrors ``langchain.agents.create_agent``'s options (checked against langchain 1.5.2):
``system_prompt``, the state schema merged from the user's ``state_schema`` and each
middleware's ``state_schema`` (as ``create_agent`` collects its ``state_schemas``), the
``structured_response`` key of ``response_format``; also the prebuilt agent's ``prompt`` and
model hooks, and the one check that LangChain is installed when an option needs it."""

from __future__ import annotations

from typing import Annotated, NotRequired, TypedDict, get_type_hints

from langchain_core.messages import AnyMessage
from langgraph.channels import EphemeralValue

from dynavec_langgraph._errors import install_command
from dynavec_langgraph._extras import missing_extra
from dynavec_langgraph._graph.options import (
    POST_MODEL_HOOK,
    PRE_MODEL_HOOK,
    AgentOptions,
    resolve_prompt,
)
from dynavec_langgraph._middleware.hooks import overrides
from dynavec_langgraph._names import REVIEWED_KEY
from dynavec_langgraph._types import UserPayload, UserState

__all__ = [
    "EXTRA_HINT",
    "HOOKS",
    "JUMPS",
    "POST_MODEL_HOOK",
    "PRE_MODEL_HOOK",
    "AgentOptions",
    "merged_state",
    "need_langchain",
    "resolve_prompt",
]


EXTRA_HINT = f"{install_command('middleware')} (or '[all]')"
"""How to install the extra LangChain middleware needs."""
HOOKS = ("before_agent", "before_model", "after_model", "after_agent")
JUMPS = ("model", "tools", "end")


def need_langchain(option: str) -> None:
    """Raise the missing-extra error (an ``ImportError``) when ``langchain`` is not installed."""
    try:
        import langchain.agents.middleware
        import langchain.agents.structured_output  # noqa: F401
    except ImportError:
        raise missing_extra(
            f"{option}=",
            "langchain",
            "middleware",
            text=f"{option}= needs the `langchain` package (LangChain's middleware and "
            f"structured-output types): {EXTRA_HINT}. The agent works without it when "
            f"{option}= is not used.",
        ) from None


# --- state schema -----------------------------------------------------------------------------


def _hints(schema: type[UserState], option: str) -> dict[str, UserPayload]:
    try:
        return dict(get_type_hints(schema, include_extras=True))
    except Exception as error:
        raise TypeError(
            f"{option}={schema!r}: pass a TypedDict (or class with annotations) with a "
            f"'messages' key, e.g. LangChain's AgentState or a subclass ({error})"
        ) from None


def merged_state(base: type[UserState], options: AgentOptions) -> type[UserState]:
    """The graph's state: the user's ``state_schema`` and the middleware's schemas, with this
    package's keys (its ``messages`` reducer keeps tool-call ids unique in a thread)."""
    middleware = options.middleware
    fields: dict[str, UserPayload] = {}
    if options.state_schema is not None:
        user = _hints(options.state_schema, "state_schema")
        if "messages" not in user:
            raise ValueError(
                f"state_schema={options.state_schema!r} has no 'messages' key: the agent keeps "
                "its conversation there. Subclass LangChain's AgentState (or add "
                "`messages: Annotated[list[AnyMessage], add_messages]`)."
            )
        fields.update(user)
    for m in middleware:
        schema = getattr(m, "state_schema", None)
        if schema is not None:
            fields.update(_hints(schema, f"middleware {m.name!r} state_schema"))
    if options.response_format is not None and "structured_response" not in fields:
        fields["structured_response"] = NotRequired[UserPayload]
    if any(overrides(m, "after_model") for m in middleware):
        fields[REVIEWED_KEY] = NotRequired[str | None]
    if options.pre_model_hook is not None:
        fields["llm_input_messages"] = NotRequired[Annotated[list[AnyMessage], EphemeralValue]]
    fields.update(get_type_hints(base, include_extras=True))
    state: type[UserState] = TypedDict("DynavecAgentState", fields, total=False)  # type: ignore[misc]
    return state
