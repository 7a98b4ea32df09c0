"""The option types of the package's public signatures: what ``model=``, ``prompt=``, the
hooks, ``approvers=`` and the other options take.

Each alias says what to pass and stays as wide as LangGraph's or LangChain's own parameter
(``Any`` only where theirs is ``Any``). They exist for the type checker only (``if
TYPE_CHECKING:`` here and where they are used), so importing the package imports nothing for
them. What truly is ``Any`` (the user's values: ``UserPayload``, ``UserState``, ...) is named
by a plain alias of ``Any``, defined at run time too. This module is a foundation: it imports
no module of the package. An option whose type names one of the package's own classes is
declared beside that class: ``checkpointer=`` (``CheckpointerOption``,
``DynavecCheckpointer``) in ``_persistence.records``, ``tools=`` (``ToolsOption``) in
``_dynavec.registry``, ``approval_policy=`` (``ApprovalPolicyOption``) in ``_policy``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

__all__ = [  # and the aliases below, for the type checker
    "ApproverRule",
    "DynavecAsyncModel",
    "DynavecModel",
    "DynavecTool",
    "ForeignObject",
    "JSONMapping",
    "JSONObject",
    "JSONSchema",
    "NodeUpdate",
    "StateUpdate",
    "ToolArgs",
    "TypeAnnotation",
    "UserContext",
    "UserPayload",
    "UserState",
    "UserValues",
]

# What truly is ``Any``: the user's values, which the package carries without reading them.
# Plain aliases (defined at run time too: LangGraph reads the annotations of a route function).
UserPayload = Any
"""A value of the user's the package passes on without reading it: a tool's or a model's
result before it is checked, a resume value, a structured response, a call's extra keywords."""

UserState = Any
"""The graph's state as LangGraph hands it to a node or a route: a dict of the state schema's
keys, or an instance of the user's ``state_schema`` (a pydantic model, a dataclass)."""

UserContext = Any
"""A run's ``context`` (``invoke(..., context=...)``), of the user's ``context_schema``."""

NodeUpdate = Any
"""What a node returns to LangGraph: a dict of state updates, a ``Command``, a list of them, or
``None``."""

StateUpdate = dict[str, Any]
"""A node's update of the state: state keys to their new values (the user's or the package's)."""

ToolArgs = dict[str, Any]
"""A dict of the model's JSON: a tool call's arguments, a provider's built-in tool."""

ApproverRule = Sequence[str] | Callable[[Mapping[str, Any], Mapping[str, Any]], bool]
"""Names, ``"role:NAME"`` and ``"permission:NAME"`` entries, or ``rule(approver, pause_value)
-> bool``; ``approver`` is ``{"name", "roles", "permissions", "authenticated_by"}``."""


class DynavecModel(Protocol):
    """A dynavec-style model: ``invoke(messages, tools=...)`` returning the assistant's
    message (dynavec's ``ChatModel``)."""

    def invoke(self, *args: Any, **kwargs: Any) -> Any: ...


class DynavecAsyncModel(DynavecModel, Protocol):
    """A dynavec-style model with ``ainvoke`` too (dynavec's ``ChatModel``, whose ``ainvoke``
    runs ``invoke`` in a worker thread by default)."""

    async def ainvoke(self, *args: Any, **kwargs: Any) -> Any: ...


class DynavecTool(Protocol):
    """A dynavec-style tool: a ``name``, a ``description`` and ``execute(arguments)``."""

    @property
    def name(self) -> str: ...

    def execute(self, *args: Any, **kwargs: Any) -> Any: ...


if TYPE_CHECKING:
    from typing import TypeAlias

    from langchain.agents.middleware import AgentMiddleware
    from langchain.agents.middleware.types import ModelRequest, ModelResponse
    from langchain.agents.structured_output import ResponseFormat
    from langchain_core.language_models import LanguageModelLike
    from langchain_core.messages import SystemMessage
    from langchain_core.runnables import Runnable
    from langchain_core.tools import BaseTool
    from langgraph.cache.base import BaseCache
    from langgraph.graph import StateGraph
    from langgraph.graph.state import CompiledStateGraph
    from langgraph.types import Command

    CompiledAgent: TypeAlias = CompiledStateGraph[UserState, UserContext, UserState, UserState]
    """A compiled agent graph: its state, context, input and output are the user's schemas."""

    AgentBuilder: TypeAlias = StateGraph[UserState, UserContext, UserState, UserState]
    """The agent's graph before it is compiled."""

    UserRunnable: TypeAlias = Runnable[UserPayload, UserPayload]
    """A runnable of the user's (a model, a prompt, a hook): its input and output are theirs."""

    Middleware: TypeAlias = AgentMiddleware[UserState, UserContext, UserPayload]
    """One LangChain ``AgentMiddleware`` (generic in types the user chooses)."""

    ModelCall: TypeAlias = ModelRequest[UserContext]
    """A ``wrap_model_call`` middleware's request."""

    ModelAnswer: TypeAlias = ModelResponse[UserPayload]
    """A ``wrap_model_call`` layer's response (its structured response is the user's type)."""

    GraphCommand: TypeAlias = Command[UserPayload]
    """A LangGraph ``Command`` a node returns."""

    ModelOption: TypeAlias = (
        str | LanguageModelLike | DynavecModel | Callable[..., UserPayload] | UserRunnable
    )
    """``model=``: a LangChain chat model, a ``"provider:model"`` string, a dynavec-style
    model, or a callable choosing the model per call (LangGraph's ``create_react_agent``)."""

    PlannerModel: TypeAlias = Runnable[Any, Any] | DynavecAsyncModel
    """``Planner(model)``: a LangChain chat model or a dynavec ``ChatModel`` (``invoke`` /
    ``ainvoke`` of the planning messages)."""

    ToolOption: TypeAlias = BaseTool | DynavecTool | Callable[..., Any] | dict[str, Any]
    """One tool: ``@tool`` (an ``AgentTool``, a ``BaseTool``), a plain function, a LangChain
    tool, a provider tool (a dict) or a dynavec-style tool object (``name`` / ``execute``)."""

    PromptOption: TypeAlias = str | SystemMessage | Callable[..., Any] | Runnable[Any, Any] | None
    """``prompt=``: LangGraph's ``Prompt`` (a text, a ``SystemMessage``, a callable or a
    runnable from the state to the model's input; the callable may also take the config and
    the store)."""

    Hook: TypeAlias = Runnable[Any, Any] | Callable[..., Any]
    """``pre_model_hook=`` / ``post_model_hook=``: LangGraph's ``RunnableLike`` (a runnable
    or a function of the state, sync or async)."""

    ResponseFormatOption: TypeAlias = (
        dict[str, Any]
        | type[Any]
        | tuple[str, dict[str, Any] | type[Any]]
        | ResponseFormat[Any]
        | None
    )
    """``response_format=``: a JSON schema, a pydantic model / dataclass / TypedDict, LangGraph's
    ``(prompt, schema)`` pair, or a LangChain strategy (``ToolStrategy``, ...)."""

    SchemaOption: TypeAlias = type[Any] | None
    """``state_schema=`` / ``context_schema=``: a type (LangGraph's ``type[Any]``)."""

    MiddlewareOption: TypeAlias = Sequence[Any]
    """``middleware=``: LangChain ``AgentMiddleware`` instances (``create_agent``'s
    ``Sequence[AgentMiddleware[...]]``, generic in types the caller chooses)."""

    CacheOption: TypeAlias = BaseCache[Any] | None
    """``cache=``: LangGraph's ``BaseCache``."""

    AgentResponseFormat: TypeAlias = ResponseFormat[Any] | type[Any] | dict[str, Any] | None
    """``create_agent(response_format=...)``: LangChain's (a strategy, a schema type or a JSON
    schema)."""

    Approver: TypeAlias = str | Mapping[str, Any] | None
    """``approver=``: a name, or ``{"name": ..., "roles": [...]}``."""

    ApproversOption: TypeAlias = ApproverRule | None
    """``approvers=`` (``interrupt``, ``require_approval``, ``ApprovalPolicy``): who may
    approve: names and ``"role:NAME"`` entries, or ``rule(approver, pause_value) -> bool``
    (``approver`` is ``{"name", "roles"}``)."""


# --- tany2 (issue 39): aliases of the flow, tools, chat and resume modules. Plain aliases,
# defined at run time too (a tool function's annotations are read by ``get_type_hints``).

JSONSchema = dict[str, Any]
"""A JSON schema as a dict: a tool's parameters."""

JSONObject = dict[str, Any]
"""A JSON object as a dict: a provider's request, message or content block, a usage record."""

ForeignObject = Any
"""An object of a library the package does not import (an MCP session and its answers, a
provider SDK's client or response, a dynavec-style tool), read by duck typing."""

UserValues = dict[str, Any]
"""A dict of the user's keys and values, carried without reading them: a flow graph's
state, what a flow node returned, a pause's payload."""

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver
    from langgraph.pregel import Pregel

    CheckpointSaver: TypeAlias = BaseCheckpointSaver[Any]
    """A LangGraph checkpoint saver, whatever its version type (``str`` for LangGraph's own)."""

    UserGraph: TypeAlias = Pregel[UserState, UserContext]
    """A compiled LangGraph graph of the user's: its state and context are their schemas."""

    CompiledGraph: TypeAlias = CompiledStateGraph[Any, Any, Any, Any]
    """A compiled LangGraph graph whose input and output the caller reads as plain dicts
    (``AgentGraph.compile()``: ``{"flow_state": {...}}`` in, the state and result out)."""

TypeAnnotation = Any
"""A type annotation as an object (a type form: ``int``, ``list[str]``, ``Annotated[...]``),
read from a function's signature and handed to pydantic; Python 3.11 has no type for it."""

JSONMapping = Mapping[str, Any]
"""A JSON object only read: a pause's value (an ``InterruptValue`` or the dict a server
sent), a decision, a stored record."""

# tany1 (issue 39): the audit trail, the inbox, the links and the remote client use
# ``JSONObject`` / ``JSONMapping`` above and name the saver:
if TYPE_CHECKING:
    Saver: TypeAlias = BaseCheckpointSaver[Any]
    """A LangGraph checkpointer (its version type is the saver's own: ``int``, ``str``, ...)."""
