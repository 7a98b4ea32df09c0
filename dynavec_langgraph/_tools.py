"""The ``@tool`` decorator and :class:`AgentTool`, a dynavec tool that is also a LangChain tool."""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Callable, Coroutine, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from contextvars import ContextVar
from typing import (
    TYPE_CHECKING,
    Annotated,
    Any,
    Literal,
    cast,
    get_args,
    get_origin,
    get_type_hints,
    overload,
)

from langchain_core.messages.tool import ToolCall as LCToolCall
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, InjectedToolArg
from langchain_core.tools import tool as langchain_tool
from langgraph.errors import GraphBubbleUp, is_invalid_resume
from pydantic import (
    BaseModel,
    ConfigDict,
    PrivateAttr,
    TypeAdapter,
    ValidationError,
    WithJsonSchema,
    create_model,
)

from dynavec_langgraph._errors import ApprovalPolicyError
from dynavec_langgraph._lg_names import loaded_prebuilt
from dynavec_langgraph._pause import running_tool_call
from dynavec_langgraph._pause_value import ToolCallRef
from dynavec_langgraph.chat import Tool
from dynavec_langgraph.exceptions import NodeInterrupt
from dynavec_langgraph.records import AgentState

if TYPE_CHECKING:
    from dynavec_langgraph._policy import ApprovalPolicy

__all__ = [
    "AgentTool",
    "as_tools",
    "async_in_loop_observation",
    "attach_policy",
    "format_tool_error",
    "tool",
]

ToolFunc = Callable[..., Any]

ToolArguments = dict[str, Any] | str | bytes | bytearray | int | float | list[Any] | None
"""What ``AgentTool.execute(arguments)`` takes (dynavec's rules): a dict of arguments, a JSON
string (an object gives the arguments, another JSON value is passed as ``"input"``), plain
text (passed as ``"input"``), blank or ``None`` (no arguments), or another JSON value (a
number, a list: passed as ``"input"``)."""

ToolInput = str | dict[str, Any] | LCToolCall
"""What LangChain's ``BaseTool.invoke`` takes: text, a dict of arguments or a tool call."""


def format_tool_error(name: str, error: BaseException) -> str:
    """The observation dynavec gives the model when tool ``name`` raised ``error``."""
    return f"Error executing tool '{name}': {error}"


def unknown_tool_observation(name: str) -> str:
    """The observation dynavec gives the model for a call to a tool it does not have."""
    return f"Error: Tool '{name}' is not registered in available tools."


def async_in_loop_observation(name: str) -> str:
    """What ``execute()`` of an async tool returns when called inside a running event loop."""
    return f"Error: Cannot execute async tool '{name}' synchronously in a running event loop."


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


def _parse_arguments(arguments: ToolArguments) -> dict[str, Any]:
    """dynavec's argument rules: dict, JSON object, other JSON, plain text, blank or None."""
    if arguments is None:
        return {}
    if isinstance(arguments, dict):
        return dict(arguments)
    if isinstance(arguments, (bytes, bytearray)):
        arguments = arguments.decode()
    if isinstance(arguments, str):
        if not arguments.strip():
            return {}
        try:
            value = json.loads(arguments)
        except ValueError:
            return {"input": arguments}
        return dict(value) if isinstance(value, dict) else {"input": value}
    return {"input": arguments}


def _describe(error: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}" for e in error.errors()
    )


def _stringify(result: Any) -> str:
    return (
        result if isinstance(result, str) else json.dumps(result, ensure_ascii=False, default=str)
    )


class _ArgsBase(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True, extra="ignore")


_UNTYPED: Any = Annotated[Any, WithJsonSchema({"type": "string"})]
"""What a parameter the schema cannot describe becomes: shown to the model as a string,
passed to the function as given (an object handed to ``execute`` reaches it unchanged)."""


def _hints(func: ToolFunc) -> dict[str, Any]:
    """The annotations of ``func``, resolved one by one: one that cannot be resolved (a name
    imported only under ``TYPE_CHECKING``) becomes :data:`_UNTYPED`, the others are kept."""
    try:
        return get_type_hints(func)
    except Exception:  # some annotation does not resolve: resolve them one by one below
        pass
    out: dict[str, Any] = {}
    for pname, raw in getattr(func, "__annotations__", {}).items():
        try:
            out[pname] = get_type_hints(_Probe(raw, func), include_extras=True)["x"]
        except Exception:  # unresolvable: a string schema (dynavec's rule)
            out[pname] = _UNTYPED
    return out


class _Probe:
    """An object with one annotation, to resolve it in ``func``'s globals."""

    def __init__(self, annotation: Any, func: ToolFunc) -> None:
        self.__annotations__ = {"x": annotation}
        self.__globals__ = getattr(func, "__globals__", {})
        self.__module__ = getattr(func, "__module__", __name__)


_JSON_SCALARS = (str, int, float, bool)
"""Annotations pydantic always has a schema of: taken as they are, without building one."""


def _field_type(annotation: Any) -> Any:
    """``annotation`` if pydantic can build a schema of it, else :data:`_UNTYPED` (dynavec
    mapped what it could not type to a string schema; never crash at decoration)."""
    if annotation is inspect.Parameter.empty:
        return Any
    if annotation in _JSON_SCALARS:
        return annotation
    try:
        TypeAdapter(annotation).json_schema()
    except Exception:  # pydantic raises several kinds here
        return _UNTYPED
    return annotation


def _signature_model(name: str, func: ToolFunc) -> tuple[type[BaseModel], str | None]:
    """A pydantic model of ``func``'s parameters, and the name of its ``AgentState`` one."""
    sig = inspect.signature(func)
    hints = _hints(func)
    fields: dict[str, Any] = {}
    state_param: str | None = None
    for pname, param in sig.parameters.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        annotation = hints.get(pname, param.annotation)
        if annotation is AgentState:
            state_param = pname
            continue
        if isinstance(annotation, str):
            annotation = _UNTYPED  # an annotation that never resolved
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[pname] = (_field_type(annotation), default)
    model = create_model(f"{name}_args", __base__=_ArgsBase, **fields)
    return model, state_param


def _json_schema(model: type[BaseModel]) -> dict[str, Any]:
    schema = model.model_json_schema()
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        if isinstance(prop, dict):
            prop.pop("title", None)
    schema.setdefault("properties", {})
    schema.setdefault("type", "object")
    return schema


_POSITIONAL = ("name", "description", "parameters", "tags")
"""dynavec's positional parameters of ``AgentTool`` after ``fn``."""


class AgentTool(BaseTool):
    """A dynavec tool: ``name``, ``description``, ``parameters``, ``tags`` and ``execute``.

    It is also a LangChain ``BaseTool`` (its ``args_schema`` is ``parameters``), so it runs
    unchanged in LangGraph's ``ToolNode`` and ``create_agent``. Calling the object calls the
    function: ``add(3, 4) == 7``.
    """

    model_config = ConfigDict(defer_build=True)  # build the schema on first use, not import

    parameters: dict[str, Any]
    """The JSON Schema object of the tool's arguments."""
    func: ToolFunc | None = None
    coroutine: Callable[..., Coroutine[Any, Any, Any]] | None = None
    state_param: str | None = None
    """Name of the parameter annotated ``AgentState``, injected by the agent."""

    _arg_model: type[BaseModel] | None = PrivateAttr(default=None)
    _param_names: tuple[str, ...] = PrivateAttr(default=())
    _takes_any: bool = PrivateAttr(default=False)
    _origin: BaseTool | None = PrivateAttr(default=None)
    _schema_bound: bool = PrivateAttr(default=False)  # wraps a LangChain / dynavec-style tool

    def __init__(self, fn: ToolFunc | None = None, /, *args: Any, **data: Any) -> None:
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

    def model_post_init(self, context: Any, /) -> None:
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

    def _unknown_arguments(self, args: Mapping[str, Any]) -> list[str]:
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

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Call the wrapped function directly."""
        target = self.func or self.coroutine
        if target is None:
            raise TypeError(f"Tool {self.name!r} has no function to call")
        return target(*args, **kwargs)

    # --- dynavec API -------------------------------------------------------------------

    def _prepare(self, arguments: ToolArguments, state: AgentState | None) -> dict[str, Any]:
        """Turn ``arguments`` into validated keyword arguments (dynavec's rules)."""
        args = _parse_arguments(arguments)
        names = self._param_names
        if len(names) == 1 and names[0] not in args and args:
            args = {names[0]: next(iter(args.values()))}
        elif not self._takes_any:
            args = {k: v for k, v in args.items() if k in names}
        if self._arg_model is not None:
            try:
                validated = self._arg_model.model_validate(args)
            except ValidationError as error:
                raise ValueError(f"invalid arguments: {_describe(error)}") from None
            checked = {k: getattr(validated, k) for k in type(validated).model_fields}
            # a function with **kwargs gets every key (dynavec's binding rule 4)
            args = {**args, **checked} if self._takes_any else checked
        if self.state_param is not None:
            args[self.state_param] = state if state is not None else AgentState()
        return args

    def _run_raising(self, arguments: ToolArguments, state: AgentState | None) -> str:
        kwargs = self._prepare(arguments, state)
        if self.func is not None:
            return _stringify(self.func(**kwargs))
        if self.coroutine is None:
            raise TypeError("the tool has no function")
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return _stringify(asyncio.run(self.coroutine(**kwargs)))
        raise _AsyncInRunningLoop(async_in_loop_observation(self.name))

    async def _arun_raising(self, arguments: ToolArguments, state: AgentState | None) -> str:
        kwargs = self._prepare(arguments, state)
        if self.coroutine is not None:
            return _stringify(await self.coroutine(**kwargs))
        if self.func is None:
            raise TypeError("the tool has no function")
        func = self.func
        return _stringify(await asyncio.to_thread(lambda: func(**kwargs)))

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
        **kwargs: Any,
    ) -> Any:
        with self._marking(input):
            return super().invoke(input, config, **kwargs)

    async def ainvoke(
        self,
        input: ToolInput,
        config: RunnableConfig | None = None,
        **kwargs: Any,
    ) -> Any:
        with self._marking(input):
            return await super().ainvoke(input, config, **kwargs)

    def _run(self, *args: Any, **kwargs: Any) -> str:
        arguments = args[0] if args and not kwargs else kwargs
        run = _agent_run.get()
        if run is None:  # outside the agent (a user's ToolNode): dynavec's observation
            return self.execute(arguments)
        return self._run_raising(arguments, run.shared)

    async def _arun(self, *args: Any, **kwargs: Any) -> str:
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
    parameters: dict[str, Any] | None = None,
    tags: Sequence[str] | None = None,
    **extra: Any,
) -> tuple[dict[str, Any], type[BaseModel]]:
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
    model, state_param = _signature_model(tool_name, func)
    is_async = inspect.iscoroutinefunction(func)
    fields = {
        **extra,
        "name": tool_name,
        "description": tool_description,
        "parameters": parameters if parameters is not None else _json_schema(model),
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
    parameters: dict[str, Any] | None,
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
    parameters: dict[str, Any] | None,
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
        from dynavec_langgraph._policy import ASKS_KEY, check_asks

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
    parameters: dict[str, Any] | None = None,
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
    parameters: dict[str, Any] | None = None,
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


def _is_injected(annotation: Any) -> bool:
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


def _uses_injection(func: Callable[..., Any]) -> bool:
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
    params = schema if isinstance(schema, dict) else _json_schema(cast(type[BaseModel], schema))

    def run(**kwargs: Any) -> Any:
        return lc_tool.invoke(kwargs)

    async def arun(**kwargs: Any) -> Any:
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
        from dynavec_langgraph._policy import declared_asks

        declared_asks(result)  # metadata={"asks": [...]}: checked when the tool is taken
    return result


def _from_dynavec(obj: Any) -> AgentTool:
    def run(**kwargs: Any) -> Any:
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


def _is_sequence(tools: Any) -> bool:
    return (
        tools is None
        or isinstance(tools, list | tuple)
        or (hasattr(tools, "__iter__") and not isinstance(tools, dict))
    )


def as_tools(tools: Any) -> list[AgentTool]:
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


def attach_policy(tools: Any, policy: ApprovalPolicy | Mapping[str, ApprovalPolicy]) -> Any:
    """``tools`` (a list) with ``policy`` attached (the agent's ``approval_policy=``; read by
    :func:`~dynavec_langgraph._policy.policy_scope` around each call of the tool).

    Checked here, when the agent is built: the policy's type, tools to attach it to, node
    ids that can name a pause, the policy for each ``require_approval`` tool under that
    tool's own options, and each node id of a map against the node ids the tools ask
    (:func:`~dynavec_langgraph._policy.declared_asks`: a ``require_approval`` tool's, and
    those a tool declares with ``asks=``). A tool's body chooses its node ids when it runs,
    so a key no tool declares is refused: it would apply to no pause the agent can know of
    (docs/approvals-in-production.md).

    Raises:
        InvalidOptionError: naming what cannot be used.
    """
    from dynavec_langgraph._errors import InvalidOptionError, option_text
    from dynavec_langgraph._policy import (
        APPROVAL_POINT_KEY,
        POLICY_KEY,
        ApprovalPoint,
        ApprovalPolicy,
        declared_asks,
    )

    name, what = "approval_policy", "pass an ApprovalPolicy or {node_id: ApprovalPolicy}"
    if isinstance(policy, Mapping):
        bad = {k: v for k, v in policy.items() if not isinstance(v, ApprovalPolicy)}
        if bad or not all(isinstance(k, str) for k in policy):
            raise InvalidOptionError(
                option_text("approval_policy", policy, what), "approval_policy"
            )
        if "" in policy:
            raise InvalidOptionError(
                option_text(
                    "approval_policy",
                    policy,
                    "the key '' names no pause (a node id is a non-empty string, e.g. "
                    "'approve_pay' for require_approval(pay))",
                ),
                "approval_policy",
            )
    elif not isinstance(policy, ApprovalPolicy):
        raise InvalidOptionError(option_text(name, policy, what), name)
    if tools is None or hasattr(tools, "tools_by_name"):
        raise InvalidOptionError(
            "approval_policy= needs the tools as a list or a ToolRegistry (not a ToolNode): "
            "pass them so, or give the policy to require_approval(...) / interrupt(...) instead",
            "approval_policy",
        )
    given = as_tools(tools)
    if not given:
        raise InvalidOptionError(
            "approval_policy= is given to an agent without tools: no tool can pause, so it "
            "would never be used. Pass the tools that ask for approval, or leave it out",
            "approval_policy",
        )
    if isinstance(policy, Mapping):
        _check_asked(policy, {t.name: declared_asks(t) for t in given})
    out: list[Any] = []
    for tool in given:
        point = (tool.metadata or {}).get(APPROVAL_POINT_KEY)
        if isinstance(point, ApprovalPoint):  # a require_approval tool: its node id is known
            applies = policy.get(point.node_id) if isinstance(policy, Mapping) else policy
            try:
                if applies is not None:
                    point.check(applies)
            except InvalidOptionError as error:
                raise InvalidOptionError(
                    f"approval_policy= for {point.node_id!r} (require_approval({tool.name}), "
                    f"with the tool's own options on top): {error}",
                    "approval_policy",
                ) from None
        out.append(
            tool.model_copy(update={"metadata": {**(tool.metadata or {}), POLICY_KEY: policy}})
        )
    return out


def _check_asked(policy: Mapping[str, Any], asks: Mapping[str, tuple[str, ...] | None]) -> None:
    """Each node id of ``approval_policy={node_id: ...}`` is asked by a tool: ``asks`` maps
    each tool's name to the node ids it asks (``None``: it declares none).

    Raises:
        InvalidOptionError: naming the keys no tool asks and the node ids the tools ask.
    """
    from dynavec_langgraph._errors import InvalidOptionError

    known = {node: name for name, nodes in asks.items() for node in nodes or ()}
    unknown = [key for key in policy if key not in known]
    if not unknown:
        return
    asked = ", ".join(f"{node!r} ({name})" for node, name in known.items())
    silent = [name for name, nodes in asks.items() if nodes is None]
    hint = (
        f"; if a tool's body calls interrupt({unknown[0]!r}, ...), declare it on that tool: "
        f"@tool(asks=[{unknown[0]!r}]) (a LangChain tool: metadata={{'asks': [...]}}); "
        f"declaring none: {', '.join(silent)}"
        if silent
        else ""
    )
    doubt = [k for k in unknown if k.startswith("in_doubt_")]
    if doubt:
        hint += f"; an in-doubt question ({doubt[0]!r}) takes no approval policy"
    keys = ", ".join(map(repr, unknown))
    raise InvalidOptionError(
        f"approval_policy= has a policy for {keys}, which no tool asks (the tools ask "
        f"{asked or 'no node id the agent can know'}): fix the key{hint}",
        "approval_policy",
    )
