"""dynavec's ``ToolRegistry`` and the process-wide ``default_registry``.

A registry is a named set of tools an application builds once and hands to its agents
(``ReActAgent(model, tools=registry.tools())``). ``@tool`` does not register anything by
itself (no hidden global state); register with :meth:`ToolRegistry.register` or decorate with
:meth:`ToolRegistry.tool`. Two tools with one name are refused, as ``tools=`` refuses them
(docs/compatibility.md).

Example:
    >>> registry = ToolRegistry()
    >>> @registry.tool()
    ... def add(a: int, b: int) -> int:
    ...     return a + b
    >>> registry.names(), registry.get("add").execute({"a": 1, "b": 2})
    (['add'], '3')
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from dynavec_langgraph._tools import AgentTool, as_tools, tool

__all__ = ["ToolRegistry", "default_registry"]


class ToolRegistry:
    """Tools by name, in registration order; thread-safe."""

    def __init__(self, tools: Sequence[Any] | None = None) -> None:
        self._lock = threading.Lock()
        self._tools: dict[str, AgentTool] = {}
        for item in tools or []:
            self.register(item)

    def register(self, item: Any, *, replace: bool = False) -> AgentTool:
        """Add a tool (an ``AgentTool``, a function, a LangChain or dynavec-style tool).

        Raises:
            ValueError: a tool with that name is registered (pass ``replace=True`` to swap it).
        """
        (agent_tool,) = as_tools([item])
        with self._lock:
            if agent_tool.name in self._tools and not replace:
                raise ValueError(
                    f"a tool named {agent_tool.name!r} is already registered; unregister it "
                    "first, pass replace=True, or give the new tool another name"
                )
            self._tools[agent_tool.name] = agent_tool
        return agent_tool

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

    def __contains__(self, name: object) -> bool:
        with self._lock:
            return name in self._tools

    def __iter__(self) -> Iterator[AgentTool]:
        return iter(self.tools())

    def __len__(self) -> int:
        with self._lock:
            return len(self._tools)


default_registry = ToolRegistry()
"""The process-wide registry dynavec code imports; empty until something registers."""
