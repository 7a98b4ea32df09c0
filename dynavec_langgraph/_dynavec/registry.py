"""dynavec's ``ToolRegistry`` and the process-wide ``default_registry``.

A registry is a named set of tools an application builds once and hands to its agents
(``ReActAgent(model, tools=registry)`` takes a snapshot of its tools). ``@tool`` does not
register anything by itself (no hidden global state); register with
:meth:`ToolRegistry.register` or decorate with :meth:`ToolRegistry.tool`. As in dynavec, a
second tool under a name already registered replaces the first (docs/compatibility.md, R1-R6).

Example:
    >>> registry = ToolRegistry()
    >>> @registry.tool(tags=["math"])
    ... def add(a: int, b: int) -> int:
    ...     return a + b
    >>> list(registry), registry.execute("add", {"a": 1, "b": 2}), registry.has("sub")
    (['add'], '3', False)
    >>> registry.execute("sub", {})
    "Error: Tool 'sub' is not registered."
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from dynavec_langgraph._tools.adapters import as_tools
from dynavec_langgraph._tools.agent_tool import AgentTool, tool
from dynavec_langgraph.chat import Tool

if TYPE_CHECKING:
    from typing import TypeAlias

    from langgraph.prebuilt import ToolNode

    from dynavec_langgraph._types import ToolOption


def unregistered_observation(name: str) -> str:
    """What :meth:`ToolRegistry.execute` returns for a name that is not registered."""
    return f"Error: Tool '{name}' is not registered."


class ToolRegistry:
    """Tools by name, in registration order; thread-safe.

    ``ToolRegistry()`` as in dynavec; ``ToolRegistry([tool, ...])`` registers those too.
    ``registry[name]`` (``KeyError`` when unknown), ``name in registry``, ``len(registry)``
    and ``iter(registry)`` (the names, in order) work as on a mapping.
    """

    def __init__(self, tools: Sequence[Any] | None = None) -> None:
        self._lock = threading.Lock()
        self._tools: dict[str, AgentTool] = {}
        for item in tools or []:
            self.register(item)

    def register(
        self,
        fn_or_tool: Any,
        name: str | None = None,
        description: str | None = None,
        tags: Sequence[str] | None = None,
    ) -> AgentTool:
        """Add a tool and return it; a tool already registered under its name is replaced.

        Args:
            fn_or_tool: an ``AgentTool`` (updated in place: ``name`` and ``description`` when
                given, ``tags`` when not ``None``), a function (wrapped with
                ``tool(name=, description=, tags=)``), or a LangChain / dynavec-style tool.
            name: the name to register it under.
            description: its description.
            tags: its tags.
        """
        if isinstance(fn_or_tool, AgentTool):
            agent_tool = fn_or_tool
            if name:
                agent_tool.name = name
            if description:
                agent_tool.description = description
            if tags is not None:
                agent_tool.tags = list(tags)
        elif callable(fn_or_tool) and not hasattr(fn_or_tool, "invoke") and (name or description):
            agent_tool = tool(name=name, description=description, tags=tags)(fn_or_tool)
        else:  # a function (LangGraph-injected parameters kept), a LangChain or dynavec tool
            (agent_tool,) = as_tools([fn_or_tool])
            if name or description or tags is not None:
                return self.register(agent_tool, name, description, tags)
        with self._lock:
            self._tools[agent_tool.name] = agent_tool
        return agent_tool

    def register_all(self, tools: Iterable[Any] | ToolRegistry) -> None:
        """Register each tool of a list, or of another registry (no overrides)."""
        items = tools.list_tools() if isinstance(tools, ToolRegistry) else list(tools)
        for item in items:
            self.register(item)

    def tool(
        self,
        name: str | None = None,
        *,
        description: str | None = None,
        parameters: dict[str, Any] | None = None,
        tags: Sequence[str] | None = None,
    ) -> Callable[[Callable[..., Any]], AgentTool]:
        """``@registry.tool(...)``: ``@tool(...)`` that also registers the tool."""

        def decorator(func: Callable[..., Any]) -> AgentTool:
            made = tool(name, description=description, parameters=parameters, tags=tags)(func)
            return self.register(made)

        return decorator

    def unregister(self, name: str) -> bool:
        """Remove a tool; ``False`` when there was none of that name."""
        with self._lock:
            return self._tools.pop(name, None) is not None

    def get(self, name: str) -> AgentTool | None:
        """The tool named ``name``, or ``None``."""
        with self._lock:
            return self._tools.get(name)

    def has(self, name: str) -> bool:
        """Whether a tool named ``name`` is registered."""
        with self._lock:
            return name in self._tools

    def list_tools(self, tag: str | None = None) -> list[AgentTool]:
        """The tools in registration order, or those whose ``tags`` contain ``tag``."""
        with self._lock:
            tools = list(self._tools.values())
        if tag is None:
            return tools
        return [t for t in tools if tag in (t.tags or [])]

    def to_chat_tools(self, tag: str | None = None) -> list[Tool]:
        """:meth:`list_tools` as the :class:`~dynavec_langgraph.chat.Tool` records a chat
        model sees."""
        return [t.to_chat_tool() for t in self.list_tools(tag)]

    def execute(self, name: str, arguments: Any = None) -> str:
        """Run the tool named ``name`` (``AgentTool.execute``); an unknown name returns
        ``"Error: Tool '<name>' is not registered."``."""
        found = self.get(name)
        if found is None:
            return unregistered_observation(name)
        return found.execute(arguments)

    async def aexecute(self, name: str, arguments: Any = None) -> str:
        """Async twin of :meth:`execute` (``AgentTool.aexecute``)."""
        found = self.get(name)
        if found is None:
            return unregistered_observation(name)
        return await found.aexecute(arguments)

    def names(self) -> list[str]:
        """The registered names, in registration order."""
        with self._lock:
            return list(self._tools)

    def tools(self, names: Sequence[str] | None = None) -> list[AgentTool]:
        """The registered tools, or those named (``KeyError`` naming the unknown ones)."""
        with self._lock:
            if names is None:
                return list(self._tools.values())
            unknown = [n for n in names if n not in self._tools]
            if unknown:
                raise KeyError(f"no tool named {unknown}; registered: {list(self._tools)}")
            return [self._tools[n] for n in names]

    def clear(self) -> None:
        """Remove every tool."""
        with self._lock:
            self._tools.clear()

    def __getitem__(self, name: str) -> AgentTool:
        with self._lock:
            found = self._tools.get(name)
        if found is None:
            raise KeyError(name)
        return found

    def __contains__(self, name: object) -> bool:
        with self._lock:
            return name in self._tools

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        with self._lock:
            return len(self._tools)


default_registry = ToolRegistry()
"""The process-wide registry dynavec code imports; empty until something registers."""


if TYPE_CHECKING:
    ToolsOption: TypeAlias = Sequence[ToolOption] | ToolNode | ToolRegistry | None
    """``tools=`` (``create_react_agent``): the tools, a LangGraph ``ToolNode``, a
    ``ToolRegistry`` or none (for the type checker only)."""
