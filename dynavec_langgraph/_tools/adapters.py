"""The tools an agent is given, as :class:`AgentTool`s: LangChain tools, dynavec-style tools,
plain functions."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Annotated, Any, cast, get_args, get_origin, get_type_hints

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, InjectedToolArg
from langchain_core.tools import tool as langchain_tool
from pydantic import BaseModel

from dynavec_langgraph._lg_names import loaded_prebuilt
from dynavec_langgraph._tools.agent_tool import AgentTool, tool
from dynavec_langgraph._tools.calls import ToolFunc
from dynavec_langgraph._tools.schemas import json_schema
from dynavec_langgraph._types import ForeignObject

__all__ = ["as_tools", "executable"]


def _is_injected(annotation: object) -> bool:
    """A parameter LangChain fills in itself (``InjectedState``, ``InjectedStore``,
    ``InjectedToolCallId``, ``ToolRuntime``, ...), never shown to the model."""
    if isinstance(annotation, type) and issubclass(annotation, InjectedToolArg):
        return True
    runtime = loaded_prebuilt("ToolRuntime")
    base = get_origin(annotation) or annotation
    if runtime is not None and isinstance(base, type) and issubclass(base, runtime):
        return True
    if get_origin(annotation) is Annotated:
        return any(
            isinstance(m, InjectedToolArg)
            or (isinstance(m, type) and issubclass(m, InjectedToolArg))
            for m in get_args(annotation)[1:]
        )
    return False


def _uses_injection(func: Callable[..., object]) -> bool:
    try:
        hints = get_type_hints(func, include_extras=True)
    except Exception:
        return False
    return any(
        _is_injected(h) or h is RunnableConfig for name, h in hints.items() if name != "return"
    )


def executable(agent_tool: AgentTool) -> BaseTool:
    """The tool the agent's tool node runs for ``agent_tool``: the LangChain tool it was
    made from (so LangChain injects, calls back and keeps its result), else itself."""
    return agent_tool._origin or agent_tool


def _from_langchain(lc_tool: BaseTool) -> AgentTool:
    schema = lc_tool.tool_call_schema
    params = schema if isinstance(schema, dict) else json_schema(cast(type[BaseModel], schema))

    def run(**kwargs: object) -> object:
        return lc_tool.invoke(kwargs)

    async def arun(**kwargs: object) -> object:
        return await lc_tool.ainvoke(kwargs)

    result = AgentTool(
        name=lc_tool.name,
        description=lc_tool.description or f"Execute {lc_tool.name}",
        parameters=params,
        func=run,
        coroutine=arun,
        tags=lc_tool.tags,
        return_direct=lc_tool.return_direct,
        metadata=lc_tool.metadata,
    )
    result._origin = lc_tool
    result._schema_bound = True
    if isinstance(lc_tool.metadata, dict) and "asks" in lc_tool.metadata:
        from dynavec_langgraph._pauses.policy.scope import declared_asks

        declared_asks(result)  # metadata={"asks": [...]}: checked when the tool is taken
    return result


def _from_dynavec(obj: ForeignObject) -> AgentTool:
    def run(**kwargs: object) -> object:
        return obj.execute(kwargs)

    result = AgentTool(
        name=str(obj.name),
        description=str(obj.description or f"Execute {obj.name}"),
        parameters=dict(obj.parameters or {"type": "object", "properties": {}}),
        func=run,
        tags=list(getattr(obj, "tags", None) or []) or None,
    )
    result._schema_bound = True
    return result


def _is_sequence(tools: object) -> bool:
    return (
        tools is None
        or isinstance(tools, list | tuple)
        or (hasattr(tools, "__iter__") and not isinstance(tools, dict))
    )


def as_tools(tools: ForeignObject) -> list[AgentTool]:
    """Coerce ``tools=`` entries: AgentTools, plain functions, LangChain tools, dynavec-style
    objects (``name``, ``description``, ``parameters``, ``execute``). A plain function with a
    parameter LangGraph injects (``InjectedState``, ``InjectedStore``, ``InjectedToolCallId``,
    ``ToolRuntime``, ``RunnableConfig``) becomes a LangChain tool, which hides it from the model.

    Raises:
        TypeError: for anything else, or two tools with one name.
    """
    list_tools = getattr(tools, "list_tools", None)
    if callable(list_tools) and not isinstance(tools, BaseTool):
        tools = list(list_tools())  # a ToolRegistry: its tools now (dynavec's snapshot)
    if isinstance(tools, str | BaseTool) or callable(tools) or not _is_sequence(tools):
        raise TypeError(
            f"tools= takes a list of tools, got {tools!r:.120}: pass tools=[...] (functions, "
            "@tool functions, LangChain tools)"
        )
    result: list[AgentTool] = []
    for item in tools or []:
        if isinstance(item, AgentTool):
            result.append(item)
        elif isinstance(item, BaseTool):
            result.append(_from_langchain(item))
        elif all(hasattr(item, a) for a in ("name", "description", "parameters", "execute")):
            result.append(_from_dynavec(item))
        elif callable(item) and _uses_injection(item):
            # LangChain's decorator knows every injected parameter (InjectedState, ToolRuntime,
            # ...): it hides them from the model and the tool node fills them in
            doc = inspect.getdoc(item)
            description = doc.strip() if doc and doc.strip() else None
            name = getattr(item, "__name__", None) or "tool"
            lc_tool = langchain_tool(cast(Any, item), description=description or f"Execute {name}")
            result.append(_from_langchain(lc_tool))
        elif callable(item):
            result.append(tool(cast(ToolFunc, item)))
        else:
            raise TypeError(
                f"tools= got {item!r}: pass a function, an @tool, a LangChain tool, or an object "
                "with name, description, parameters and execute()"
            )
    seen: set[str] = set()
    for t in result:
        if t.name in seen:
            raise ValueError(f"two tools are named {t.name!r}; give one of them another name")
        seen.add(t.name)
    return result
