"""Mirrors what ``langchain.agents.create_agent`` gives its compiled graph (checked against
langchain 1.5.2): the input and output schemas (``_resolve_schema``, ``_extract_metadata``),
the tool node, the stream transformers (``_dedupe_transformers``) and the run config
(recursion limit, metadata); the mirrored sources are pinned by digest in
tests/test_create_agent.py."""

from __future__ import annotations

from collections.abc import Sequence
from typing import (
    TYPE_CHECKING,
    Annotated,
    NotRequired,
    Required,
    get_args,
    get_origin,
    get_type_hints,
)

from typing_extensions import TypedDict as ExtTypedDict

from dynavec_langgraph._graph.subagent_cause import with_tool_call_cause
from dynavec_langgraph._names import REVIEWED_KEY
from dynavec_langgraph._types import UserPayload, UserState

if TYPE_CHECKING:
    from langgraph.prebuilt import ToolNode
    from langgraph.prebuilt.tool_node import AsyncToolCallWrapper, ToolCallWrapper

    from dynavec_langgraph._types import CompiledAgent, Middleware

__all__ = [
    "CREATE_AGENT_RECURSION_LIMIT",
    "DEFAULT_TRANSFORMERS",
    "PACKAGE_KEYS",
    "create_agent_config",
    "create_agent_tool_node",
    "create_agent_transformers",
    "default_transformers",
    "visible_schemas",
]


# --- create_agent's face ----------------------------------------------------------------------

PACKAGE_KEYS = frozenset(
    {"step", "termination_reason", "shared", "held", "continued_at", REVIEWED_KEY}
)
"""This package's state keys: ``create_agent``'s face neither takes them as input nor returns
them (its state is ``create_agent``'s)."""


def visible_schemas(schema: type[UserState]) -> tuple[type[UserState], type[UserState]]:
    """The input and output schemas as ``create_agent`` resolves them (its
    ``_resolve_schema``, langchain 1.5.2: a field annotated ``OmitFromSchema(input=True)`` /
    ``(output=True)`` is left out of that side; ``PrivateStateAttr`` is both), without this
    package's keys."""
    from langchain.agents.middleware.types import OmitFromSchema

    hints = get_type_hints(schema, include_extras=True)

    def side(flag: str, name: str) -> type[UserState]:
        kept = {
            key: hint
            for key, hint in hints.items()
            if key not in PACKAGE_KEYS
            and not any(
                isinstance(meta, OmitFromSchema) and getattr(meta, flag) is True
                for meta in _metadata(hint)
            )
        }
        # typing_extensions' TypedDict: pydantic (input/output JSON schemas) needs it on 3.11
        result: type[UserState] = ExtTypedDict(name, kept, total=False)  # type: ignore[misc]
        return result

    return side("input", "InputSchema"), side("output", "OutputSchema")


def _metadata(hint: object) -> list[object]:
    """The ``Annotated`` metadata of a field, under ``Required`` / ``NotRequired`` too (as
    create_agent's ``_extract_metadata``, langchain 1.5.2)."""
    if get_origin(hint) in (Required, NotRequired):
        hint = get_args(hint)[0]
    if get_origin(hint) is Annotated:
        return list(get_args(hint)[1:])
    return []


def create_agent_tool_node(
    executor: ToolNode, wrap: ToolCallWrapper | None, awrap: AsyncToolCallWrapper | None
) -> ToolNode:
    """The tool node as ``create_agent`` makes it: LangGraph's ``ToolNode`` with its default
    error handling (bad arguments answered, a tool's exception raised) around the
    ``wrap_tool_call`` middleware."""
    from langgraph.prebuilt import ToolNode

    return ToolNode(
        list(executor.tools_by_name.values()), wrap_tool_call=wrap, awrap_tool_call=awrap
    )


DEFAULT_TRANSFORMERS = ("ToolCallTransformer", "SubagentTransformer")
"""The stream transformers ``langchain.agents.create_agent`` registers first on every agent,
in its order (mirrors the ``transformers=`` list of ``create_agent``'s ``compile`` call in
``langchain.agents.factory``, langchain 1.5.2; tests/test_create_agent.py pins it against an
agent the installed ``create_agent`` builds)."""


def default_transformers() -> tuple[UserPayload, ...]:
    """``create_agent``'s default stream transformers, as its module names them."""
    from langchain.agents import factory

    return tuple(getattr(factory, name) for name in DEFAULT_TRANSFORMERS)


def create_agent_transformers(
    middleware: Sequence[Middleware], extra: Sequence[UserPayload]
) -> list[UserPayload]:
    """``create_agent``'s transformers in its order (its defaults, each middleware's
    ``transformers``, then ``transformers=``), each once (its ``_dedupe_transformers``), with
    :class:`~dynavec_langgraph._graph.subagent_cause.ToolCallCause` just before its
    ``SubagentTransformer`` (the ``cause`` of a nested agent, docs/compatibility.md CA6)."""
    seen: set[int] = set()
    out: list[UserPayload] = []
    for factory in (
        *default_transformers(),
        *(t for m in middleware for t in getattr(m, "transformers", ())),
        *extra,
    ):
        if id(factory) not in seen:
            seen.add(id(factory))
            out.append(factory)
    return with_tool_call_cause(out)


CREATE_AGENT_RECURSION_LIMIT = 9_999
"""``create_agent``'s default recursion limit (langchain 1.5.2)."""


def create_agent_config(graph: CompiledAgent, name: str | None) -> CompiledAgent:
    """The run config ``create_agent`` gives its graph: its recursion limit and metadata
    (``ls_integration``; ``lc_agent_name`` when named, which tags the model's streamed
    messages)."""
    metadata: dict[str, UserPayload] = {"ls_integration": "langchain_create_agent"}
    if name:
        metadata["lc_agent_name"] = name
    return graph.with_config(recursion_limit=CREATE_AGENT_RECURSION_LIMIT, metadata=metadata)
