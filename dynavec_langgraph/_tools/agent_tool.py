"""The ``@tool`` decorator and :class:`AgentTool`, a dynavec tool that is also a LangChain tool."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Coroutine, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from contextvars import ContextVar
from typing import Literal, get_type_hints, overload

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.errors import GraphBubbleUp, is_invalid_resume
from pydantic import BaseModel, ConfigDict, PrivateAttr, ValidationError

from dynavec_langgraph._dynavec.records import AgentState
from dynavec_langgraph._errors import ApprovalPolicyError
from dynavec_langgraph._pauses.ask import running_tool_call
from dynavec_langgraph._pauses.value import ToolCallRef
from dynavec_langgraph._tools.calls import (
    ToolArguments,
    ToolFunc,
    ToolInput,
    async_in_loop_observation,
    describe,
    format_tool_error,
    parse_arguments,
    stringify,
)
from dynavec_langgraph._tools.schemas import json_schema, signature_model
from dynavec_langgraph._types import JSONSchema, ToolArgs, UserPayload
from dynavec_langgraph.chat import Tool
from dynavec_langgraph.exceptions import NodeInterrupt

__all__ = ["AgentTool", "running_in_agent", "tool"]


class _AsyncInRunningLoop(RuntimeError):
    """``execute()`` of an async tool inside a running loop: use ``aexecute()``."""


class _AgentRun:
    """What the agent's tool node gives this package's tools for one call."""

    def __init__(self, shared: AgentState) -> None:
        self.shared = shared


_agent_run: ContextVar[_AgentRun | None] = ContextVar("dynavec_agent_run", default=None)


@contextmanager
def running_in_agent(shared: AgentState) -> Iterator[None]:
    """Run a call in the agent's tool node: this package's tools get ``shared`` as their
    ``AgentState`` and raise their errors (so ``on_tool_error`` fires and the tool node's
    error handling turns them into the observation)."""
    token = _agent_run.set(_AgentRun(shared))
    try:
        yield
    finally:
        _agent_run.reset(token)


def _reraise_if_control_flow(error: BaseException) -> None:
    """LangGraph interrupts and invalid resume values must reach LangGraph untouched; HITL
    v1's ``NodeInterrupt`` (``interrupt()`` outside an agent) and a failing approval policy
    (``ApprovalPolicyError``: the pause stays) reach the caller."""
    if isinstance(error, GraphBubbleUp | NodeInterrupt | ApprovalPolicyError) or is_invalid_resume(
        error
    ):
        raise error


_POSITIONAL = ("name", "description", "parameters", "tags")
"""dynavec's positional parameters of ``AgentTool`` after ``fn``."""


class AgentTool(BaseTool):
    """A dynavec tool: ``name``, ``description``, ``parameters``, ``tags`` and ``execute``.

    It is also a LangChain ``BaseTool`` (its ``args_schema`` is ``parameters``), so it runs
    unchanged in LangGraph's ``ToolNode`` and ``create_agent``. Calling the object calls the
    function: ``add(3, 4) == 7``.
    """

    model_config = ConfigDict(defer_build=True)  # build the schema on first use, not import

    parameters: JSONSchema
    """The JSON Schema object of the tool's arguments."""
    func: ToolFunc | None = None
    coroutine: Callable[..., Coroutine[object, object, UserPayload]] | None = None
    state_param: str | None = None
    """Name of the parameter annotated ``AgentState``, injected by the agent."""

    _arg_model: type[BaseModel] | None = PrivateAttr(default=None)
    _param_names: tuple[str, ...] = PrivateAttr(default=())
    _takes_any: bool = PrivateAttr(default=False)
    _origin: BaseTool | None = PrivateAttr(default=None)
    _schema_bound: bool = PrivateAttr(default=False)  # wraps a LangChain / dynavec-style tool

    def __init__(self, fn: ToolFunc | None = None, /, *args: object, **data: UserPayload) -> None:
        """``AgentTool(fn, name=None, description=None, parameters=None, tags=None)`` as in
        dynavec (what ``@tool`` does; those four may be positional), or LangChain-style
        keyword fields only."""
        if len(args) > len(_POSITIONAL):
            raise TypeError(
                f"AgentTool takes fn and at most {len(_POSITIONAL)} more positional arguments "
                f"({', '.join(_POSITIONAL)}), got {1 + len(args)}"
            )
        for key, value in zip(_POSITIONAL, args, strict=False):
            if key in data:
                raise TypeError(f"AgentTool got {key!r} both positionally and by keyword")
            data[key] = value
        model: type[BaseModel] | None = None
        if fn is not None:
            data, model = _fields_of(fn, **data)
        super().__init__(**data)
        if model is not None:
            # the signature model validates and coerces arguments; an explicit schema only
            # replaces what the model is shown
            self._arg_model = model

    @property
    def fn(self) -> ToolFunc:
        """The wrapped function (sync or async)."""
        target = self.func or self.coroutine
        if target is None:
            raise TypeError(f"Tool {self.name!r} has no function")
        return target

    def to_chat_tool(self) -> Tool:
        """The tool as a chat model sees it (:class:`dynavec_langgraph.chat.Tool`)."""
        return Tool(self.name, self.description, dict(self.parameters))

    def model_post_init(self, context: object, /) -> None:
        self.args_schema = self.parameters
        target = self.func or self.coroutine
        if target is not None:
            params = inspect.signature(target).parameters
            self._param_names = tuple(
                p
                for p, v in params.items()
                if v.kind not in (v.VAR_POSITIONAL, v.VAR_KEYWORD) and p != self.state_param
            )
            self._takes_any = any(v.kind == v.VAR_KEYWORD for v in params.values())

    def _unknown_arguments(self, args: Mapping[str, object]) -> list[str]:
        """The keys of ``args`` the tool does not take, by its arguments' schema
        (``parameters``): the model's calls drop them (dynavec's binding rules), so an
        edited call that adds one would not run as the reviewer wrote it.

        None for a function taking ``**kwargs``, a schema allowing additional properties or
        one naming no properties.

        Example:
            >>> @tool
            ... def pay(amount: int, to: str) -> str:
            ...     return "paid"
            >>> pay._unknown_arguments({"amount": 5, "memo": "rent"})
            ['memo']
        """
        schema = self.parameters
        if schema.get("additionalProperties") not in (None, False):
            return []
        if self._takes_any and not self._schema_bound:
            return []
        properties = schema.get("properties")
        if not isinstance(properties, Mapping):
            return []
        known = set(properties)
        if not self._schema_bound:
            known |= set(self._param_names)
        return [key for key in args if key not in known]

    def __call__(self, *args: UserPayload, **kwargs: UserPayload) -> UserPayload:
        """Call the wrapped function directly."""
        target = self.func or self.coroutine
        if target is None:
            raise TypeError(f"Tool {self.name!r} has no function to call")
        return target(*args, **kwargs)

    # --- dynavec API -------------------------------------------------------------------

    def _prepare(self, arguments: ToolArguments, state: AgentState | None) -> ToolArgs:
        """Turn ``arguments`` into validated keyword arguments (dynavec's rules)."""
        args = parse_arguments(arguments)
        names = self._param_names
        if len(names) == 1 and names[0] not in args and args:
            args = {names[0]: next(iter(args.values()))}
        elif not self._takes_any:
            args = {k: v for k, v in args.items() if k in names}
        if self._arg_model is not None:
            try:
                validated = self._arg_model.model_validate(args)
            except ValidationError as error:
                raise ValueError(f"invalid arguments: {describe(error)}") from None
            checked = {k: getattr(validated, k) for k in type(validated).model_fields}
            # a function with **kwargs gets every key (dynavec's binding rule 4)
            args = {**args, **checked} if self._takes_any else checked
        if self.state_param is not None:
            args[self.state_param] = state if state is not None else AgentState()
        return args

    def _run_raising(self, arguments: ToolArguments, state: AgentState | None) -> str:
        kwargs = self._prepare(arguments, state)
        if self.func is not None:
            return stringify(self.func(**kwargs))
        if self.coroutine is None:
            raise TypeError("the tool has no function")
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return stringify(asyncio.run(self.coroutine(**kwargs)))
        raise _AsyncInRunningLoop(async_in_loop_observation(self.name))

    async def _arun_raising(self, arguments: ToolArguments, state: AgentState | None) -> str:
        kwargs = self._prepare(arguments, state)
        if self.coroutine is not None:
            return stringify(await self.coroutine(**kwargs))
        if self.func is None:
            raise TypeError("the tool has no function")
        func = self.func
        return stringify(await asyncio.to_thread(lambda: func(**kwargs)))

    def execute(self, arguments: ToolArguments = None, *, state: AgentState | None = None) -> str:
        """Run the tool and return its observation (errors become observations, never raise).

        Args:
            arguments: a dict, a JSON string, plain text, blank or ``None``.
            state: the shared ``AgentState`` injected into a parameter annotated with it.

        Example:
            >>> @tool
            ... def add(a: int, b: int) -> int:
            ...     return a + b
            >>> add.execute('{"a": 3, "b": 4}')
            '7'
        """
        try:
            return self._run_raising(arguments, state)
        except _AsyncInRunningLoop as error:
            return str(error)
        except Exception as error:
            _reraise_if_control_flow(error)
            return format_tool_error(self.name, error)

    async def aexecute(
        self, arguments: ToolArguments = None, *, state: AgentState | None = None
    ) -> str:
        """Async twin of :meth:`execute`; a sync function runs in a worker thread."""
        try:
            return await self._arun_raising(arguments, state)
        except Exception as error:
            _reraise_if_control_flow(error)
            return format_tool_error(self.name, error)

    # --- LangChain API -----------------------------------------------------------------

    @staticmethod
    def _marking(tool_input: ToolInput) -> AbstractContextManager[None]:
        """Called with a LangChain tool call (as ``ToolNode`` does): ``interrupt()`` names it."""
        if isinstance(tool_input, dict) and tool_input.get("type") == "tool_call":
            ref: ToolCallRef = {
                "id": str(tool_input.get("id") or ""),
                "name": str(tool_input.get("name") or ""),
                "args": dict(tool_input.get("args") or {}),
            }
            return running_tool_call(ref)
        return nullcontext()

    def invoke(
        self,
        input: ToolInput,
        config: RunnableConfig | None = None,
        **kwargs: UserPayload,
    ) -> UserPayload:
        with self._marking(input):
            return super().invoke(input, config, **kwargs)

    async def ainvoke(
        self,
        input: ToolInput,
        config: RunnableConfig | None = None,
        **kwargs: UserPayload,
    ) -> UserPayload:
        with self._marking(input):
            return await super().ainvoke(input, config, **kwargs)

    def _run(self, *args: UserPayload, **kwargs: UserPayload) -> str:
        arguments = args[0] if args and not kwargs else kwargs
        run = _agent_run.get()
        if run is None:  # outside the agent (a user's ToolNode): dynavec's observation
            return self.execute(arguments)
        return self._run_raising(arguments, run.shared)

    async def _arun(self, *args: UserPayload, **kwargs: UserPayload) -> str:
        arguments = args[0] if args and not kwargs else kwargs
        run = _agent_run.get()
        if run is None:
            return await self.aexecute(arguments)
        return await self._arun_raising(arguments, run.shared)


# LangChain's ``BaseTool.run`` / ``arun`` look for a ``RunnableConfig`` parameter with
# ``typing.get_type_hints(self._run)`` on every tool call (``_get_runnable_config_param`` in
# ``langchain_core.tools.base``, langchain-core 1.x). This module's postponed annotations are
# strings, so each call compiled three ``ForwardRef``s; resolved once here, the lookup finds
# types and compiles nothing (tests/test_tools.py pins it).
for _method in (AgentTool._run, AgentTool._arun):
    _method.__annotations__ = get_type_hints(_method)


def _fields_of(
    func: ToolFunc,
    name: str | None = None,
    description: str | None = None,
    parameters: JSONSchema | None = None,
    tags: Sequence[str] | None = None,
    **extra: UserPayload,
) -> tuple[dict[str, UserPayload], type[BaseModel]]:
    """``AgentTool``'s fields for ``func`` (dynavec's defaults), and its signature model."""
    if not callable(func):
        raise TypeError(f"@tool needs a function, got {type(func).__name__}")
    own_name = getattr(func, "name", None)
    tool_name = (
        name
        or (own_name if isinstance(own_name, str) else None)
        or getattr(func, "__name__", None)
        or "unnamed_tool"
    )
    doc = inspect.getdoc(func)
    tool_description = description or (
        doc.strip() if doc and doc.strip() else f"Execute {tool_name}"
    )
    model, state_param = signature_model(tool_name, func)
    is_async = inspect.iscoroutinefunction(func)
    fields = {
        **extra,
        "name": tool_name,
        "description": tool_description,
        "parameters": parameters if parameters is not None else json_schema(model),
        "func": None if is_async else func,
        "coroutine": func if is_async else None,
        "state_param": state_param,
        "tags": list(tags) if tags else [],
    }
    return fields, model


def _updated(
    agent_tool: AgentTool,
    name: str | None,
    description: str | None,
    parameters: JSONSchema | None,
) -> AgentTool:
    """``tool(...)`` applied to an ``AgentTool``: the options given replace its fields."""
    if name:
        agent_tool.name = name
    if description:
        agent_tool.description = description
    if parameters is not None:
        agent_tool.parameters = parameters
        agent_tool.args_schema = parameters
    return agent_tool


def _make_tool(
    func: ToolFunc,
    name: str | None,
    description: str | None,
    parameters: JSONSchema | None,
    tags: Sequence[str] | None,
    on_crash: str | None = None,
    asks: Sequence[str] | None = None,
) -> AgentTool:
    made = AgentTool(func, name=name, description=description, parameters=parameters, tags=tags)
    return _with_asks(_with_on_crash(made, on_crash), asks)


def _with_on_crash(agent_tool: AgentTool, on_crash: str | None) -> AgentTool:
    """``@tool(on_crash=...)``: the policy kept in the tool's ``metadata["on_crash"]``
    (where a LangChain tool declares it too; docs/exactly-once.md)."""
    if on_crash is not None:
        from dynavec_langgraph._exactly_once.keys import check_on_crash

        policy = check_on_crash(on_crash, agent_tool.name)
        agent_tool.metadata = {**(agent_tool.metadata or {}), "on_crash": policy}
    return agent_tool


def _with_asks(agent_tool: AgentTool, asks: Sequence[str] | None) -> AgentTool:
    """``@tool(asks=[...])``: the node ids kept in the tool's ``metadata["asks"]`` (where a
    LangChain tool declares them too; docs/approvals-in-production.md)."""
    if asks is not None:
        from dynavec_langgraph._names import ASKS_KEY
        from dynavec_langgraph._pauses.policy.scope import check_asks

        declared = list(check_asks(asks, agent_tool.name))
        agent_tool.metadata = {**(agent_tool.metadata or {}), ASKS_KEY: declared}
    return agent_tool


@overload
def tool(func: ToolFunc, /) -> AgentTool: ...
@overload
def tool(
    func_or_name: str | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    parameters: JSONSchema | None = None,
    tags: Sequence[str] | None = None,
    on_crash: Literal["retry", "ask", "fail"] | None = None,
    asks: Sequence[str] | None = None,
) -> Callable[[ToolFunc], AgentTool]: ...
def tool(
    func_or_name: ToolFunc | str | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    parameters: JSONSchema | None = None,
    tags: Sequence[str] | None = None,
    on_crash: Literal["retry", "ask", "fail"] | None = None,
    asks: Sequence[str] | None = None,
) -> AgentTool | Callable[[ToolFunc], AgentTool]:
    """Turn a function into an :class:`AgentTool`: ``@tool``, ``@tool()``, ``@tool("name")``.

    Args:
        func_or_name: the function (bare ``@tool``) or the tool's name.
        name: the tool's name; defaults to the function's name.
        description: defaults to the stripped docstring, else ``"Execute <name>"``.
        parameters: a JSON Schema object that replaces the schema made from the signature.
        tags: free-form tags.
        on_crash: what happens when the call was running when its process died (it may or
            may not have done its work): ``"retry"`` (the default) runs it again with the
            same :func:`~dynavec_langgraph.idempotency_key`; ``"ask"`` pauses for a person
            (run again / it ran, here is its result / skip); ``"fail"`` stops with
            ``InDoubtCallError``. ``"ask"`` and ``"fail"`` cost two small writes per call
            (docs/exactly-once.md).
        asks: the node ids the tool's body passes to ``interrupt()`` (``["confirm_send"]``;
            ``[]``: it never pauses). The agent cannot read them from the body before it
            runs; declared, its ``approval_policy={node_id: ...}`` is checked against them
            when it is built, and ``interrupt()`` with another node id is refused
            (docs/approvals-in-production.md).

    Example:
        >>> @tool
        ... def add(a: int, b: int) -> int:
        ...     "Add two numbers."
        ...     return a + b
        >>> add(3, 4), add.name, add.parameters["required"]
        (7, 'add', ['a', 'b'])
    """
    if callable(func_or_name):
        return _make_tool(func_or_name, name, description, parameters, tags, on_crash, asks)
    if func_or_name is not None and not isinstance(func_or_name, str):
        raise TypeError("@tool takes a function or a tool name")
    tool_name = name or func_or_name

    def decorator(func: ToolFunc) -> AgentTool:
        if isinstance(func, AgentTool):  # dynavec: options update that tool, same object
            updated = _updated(func, tool_name, description, parameters)
            return _with_asks(_with_on_crash(updated, on_crash), asks)
        return _make_tool(func, tool_name, description, parameters, tags, on_crash, asks)

    return decorator
