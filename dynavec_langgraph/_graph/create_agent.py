"""``create_agent``: ``langchain.agents.create_agent``'s face of this package's agent factory.

The same graph as :func:`dynavec_langgraph.create_react_agent` builds (one tool call per
checkpointed step, so an approval pauses once and finished calls never run again), with
``create_agent``'s signature, defaults and behaviour: the model node is ``model``, a tool's
exception is raised unless middleware handles it, the model's message is named only when
``name`` is given, and the graph carries ``create_agent``'s stream transformers, input and
output schemas and run config.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from langchain_core.messages import SystemMessage
from langgraph.store.base import BaseStore
from langgraph.types import Checkpointer

from dynavec_langgraph._errors import install_command
from dynavec_langgraph._extras import missing_extra
from dynavec_langgraph._graph.factory import build_agent
from dynavec_langgraph._graph.spec import AgentFace, AgentSpec
from dynavec_langgraph._names import CREATE_AGENT_MODEL_NODE
from dynavec_langgraph._types import ToolArgs, UserPayload

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.tools import BaseTool

    from dynavec_langgraph._types import (
        AgentResponseFormat,
        CacheOption,
        CompiledAgent,
        MiddlewareOption,
        SchemaOption,
    )

__all__ = ["create_agent"]

_UNBOUNDED_STEPS = 10**9  # create_agent bounds a run by its recursion limit only


def create_agent(
    model: str | BaseChatModel,
    tools: Sequence[BaseTool | Callable[..., UserPayload] | ToolArgs] | None = None,
    *,
    system_prompt: str | SystemMessage | None = None,
    middleware: MiddlewareOption = (),
    response_format: AgentResponseFormat = None,
    state_schema: SchemaOption = None,
    context_schema: SchemaOption = None,
    checkpointer: Checkpointer | None = None,
    store: BaseStore | None = None,
    interrupt_before: list[str] | None = None,
    interrupt_after: list[str] | None = None,
    debug: bool = False,
    name: str | None = None,
    cache: CacheOption = None,
    transformers: Sequence[UserPayload] | None = None,
) -> CompiledAgent:
    """``langchain.agents.create_agent`` with this package's human-in-the-loop guarantee.

    Change ``from langchain.agents import create_agent`` to ``from dynavec_langgraph import
    create_agent``: the arguments, defaults and behaviour are ``create_agent``'s (see its
    documentation), and the calls of a turn run one at a time, each checkpointed before the
    next, so a pause (``interrupt()`` in a tool, ``HumanInTheLoopMiddleware``) resumes once
    and calls that finished never run again. docs/create_agent.md lists the differences.

    Args:
        model: a LangChain chat model or a ``"provider:model"`` string.
        tools: tools, plain functions, or provider built-in tools (dicts, bound to the model
            only).
        system_prompt: a str or ``SystemMessage`` added before the conversation.
        middleware: LangChain ``AgentMiddleware`` instances.
        response_format: a schema, ``ToolStrategy`` or ``ProviderStrategy``.
        state_schema / context_schema: as ``create_agent``'s.
        checkpointer / store / interrupt_before / interrupt_after / debug / cache: passed to
            ``compile``.
        name: the graph's name; also set on the model's messages and in the run metadata
            (``lc_agent_name``).
        transformers: stream transformer factories added after ``create_agent``'s own and the
            middleware's.

    Returns:
        The compiled graph.

    Raises:
        ImportError: ``langchain`` is not installed (``pip install
            'dynavec-langgraph[middleware]'``).

    Example:
        >>> from dynavec_langgraph.testing import ScriptedChatModel
        >>> agent = create_agent(ScriptedChatModel(turns=["Hi!"]))
        >>> agent.invoke({"messages": [("user", "hello")]})["messages"][-1].content
        'Hi!'
    """
    try:
        import langchain.agents  # noqa: F401
    except ImportError:
        raise missing_extra(
            "create_agent()",
            "langchain",
            "middleware",
            text="create_agent() is LangChain's create_agent and needs the `langchain` package: "
            f"{install_command('middleware')} (or '[all]'); without it, use create_react_agent()",
        ) from None
    listed = list(tools or ())
    face = AgentFace(
        "create_agent",
        model_node=CREATE_AGENT_MODEL_NODE,
        create_agent=True,
        transformers=tuple(transformers or ()),
        builtin_tools=tuple(t for t in listed if isinstance(t, dict)),
    )
    spec = AgentSpec(
        face=face,
        model=model,
        tools=[t for t in listed if not isinstance(t, dict)],
        system_prompt=system_prompt,
        max_steps=_UNBOUNDED_STEPS,
        checkpointer=checkpointer,
        store=store,
        name=name,
        response_format=response_format,
        middleware=middleware,
        state_schema=state_schema,
        context_schema=context_schema,
        interrupt_before=interrupt_before,
        interrupt_after=interrupt_after,
        debug=debug,
        cache=cache,
    )
    return build_agent(spec)
