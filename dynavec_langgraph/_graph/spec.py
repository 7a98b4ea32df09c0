"""The agent's spec: the options ``create_react_agent``, ``create_agent`` and ``ReActAgent``
pass to the one factory and its nodes, checked once, typed, in one frozen object.

Each face builds an :class:`AgentSpec` from its own signature and hands it to
:func:`dynavec_langgraph._graph.factory.build_agent`; the nodes read its typed fields. The options
are kept as given (resolved by the factory: the prompt, the hooks, the tools); what is checked
here is what needs no other part of the package: the option names, ``version``,
``message_storage`` and ``max_steps``.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal, get_args

from dynavec_langgraph._graph.state import MessageStorage
from dynavec_langgraph._names import AGENT_NODE
from dynavec_langgraph._types import ToolArgs, UserPayload

if TYPE_CHECKING:
    from langchain_core.messages import SystemMessage
    from langgraph.store.base import BaseStore

    from dynavec_langgraph._dynavec.registry import ToolsOption
    from dynavec_langgraph._pauses.policy.spec import ApprovalPolicyOption
    from dynavec_langgraph._persistence.records import CheckpointerOption
    from dynavec_langgraph._types import (
        CacheOption,
        Hook,
        MiddlewareOption,
        ModelOption,
        PromptOption,
        ResponseFormatOption,
        SchemaOption,
    )

__all__ = [
    "DEFAULT_VERSION",
    "OPTIONS",
    "PREBUILT_FACE",
    "AgentFace",
    "AgentSpec",
    "check_max_steps",
    "prebuilt_options",
]


@dataclass(frozen=True)
class AgentFace:
    """What differs between the two faces of the one factory: ``create_react_agent`` (the
    prebuilt agent's signature, this package's defaults) and ``create_agent``
    (``langchain.agents.create_agent``'s)."""

    function: str
    """The public function's name, for error messages."""
    model_node: str = AGENT_NODE
    """The name of the model node (``create_agent`` calls it ``"model"``)."""
    create_agent: bool = False
    """``create_agent``'s behaviour: the middleware graph always, a tool's exception raised
    unless middleware handles it, the model's message named only when ``name`` is given,
    ``create_agent``'s stream transformers, schemas and run config."""
    transformers: tuple[UserPayload, ...] = ()
    """``create_agent(transformers=...)``: stream transformer factories."""
    builtin_tools: tuple[ToolArgs, ...] = ()
    """``create_agent``'s provider built-in tools (dicts): bound to the model, never run."""


PREBUILT_FACE: Final = AgentFace("create_react_agent")
"""``create_react_agent``'s face."""


class _Default(str):
    """The default of ``version=`` ("v2"), told apart from an explicit ``version="v2"``."""

    __slots__ = ()


DEFAULT_VERSION: Final[Literal["v1", "v2"]] = _Default("v2")  # type: ignore[assignment]
"""``create_react_agent``'s default ``version``: "v2", not given by the caller."""

OPTIONS = (
    "model", "tools", "system_prompt", "max_steps", "checkpointer", "store", "name",
    "message_storage", "parallel_tool_calls", "prompt", "response_format", "middleware",
    "state_schema", "context_schema", "pre_model_hook", "post_model_hook", "interrupt_before",
    "interrupt_after", "debug", "cache", "version", "approval_policy",
)  # fmt: skip
"""``create_react_agent``'s options, in its order (named by the unknown-option error)."""


def check_max_steps(max_steps: object) -> int:
    """``max_steps`` as the number of model calls per run (below 1 counts as 1).

    Raises:
        TypeError: anything but a whole number (``2.7``, ``"3"``, ``None``, ``True``).
    """
    if isinstance(max_steps, bool) or not isinstance(max_steps, int):
        raise TypeError(
            f"max_steps={max_steps!r}: pass a whole number of model calls per run (e.g. 10)"
        )
    return max(1, max_steps)


def prebuilt_options(options: dict[str, UserPayload], stacklevel: int) -> dict[str, UserPayload]:
    """``create_react_agent``'s keyword ``options`` checked by name: the deprecated
    ``config_schema`` is warned about (as the prebuilt agent does, with ``stacklevel`` counted
    from the caller of this function) and taken as ``context_schema``; any other unknown name
    is refused. Returns the known ones.

    Raises:
        TypeError: an unknown option, named with the options there are.
    """
    known = {k: v for k, v in options.items() if k in OPTIONS}
    unknown = {k: v for k, v in options.items() if k not in OPTIONS}
    if "config_schema" in unknown:  # as the prebuilt agent: the deprecated context_schema
        from langgraph.warnings import LangGraphDeprecatedSinceV10

        warnings.warn(
            "`config_schema` is deprecated and will be removed. Please use `context_schema` "
            "instead.",
            category=LangGraphDeprecatedSinceV10,
            stacklevel=stacklevel + 1,
        )
        config_schema = unknown.pop("config_schema")
        if known.get("context_schema") is None:
            known["context_schema"] = config_schema
    if unknown:
        raise TypeError(
            f"create_react_agent() got unexpected keyword arguments: {unknown} (unknown "
            f"option(s) {sorted(unknown)}); it takes {', '.join(OPTIONS)}"
        )
    return known


@dataclass(frozen=True, kw_only=True)
class AgentSpec:
    """Everything a face passes to the factory, as the user gave it, checked when built.

    ``max_steps`` is the number of model calls per run (below 1 counted as 1). The rest is
    each option's documented meaning (:func:`dynavec_langgraph.create_react_agent`)."""

    face: AgentFace = PREBUILT_FACE
    model: ModelOption
    tools: ToolsOption = None
    system_prompt: str | SystemMessage | None = None
    prompt: PromptOption = None
    max_steps: int = 10
    checkpointer: CheckpointerOption = None
    store: BaseStore | None = None
    name: str | None = None
    message_storage: MessageStorage = "delta"
    parallel_tool_calls: bool = False
    response_format: ResponseFormatOption = None
    middleware: MiddlewareOption = ()
    state_schema: SchemaOption = None
    context_schema: SchemaOption = None
    pre_model_hook: Hook | None = None
    post_model_hook: Hook | None = None
    interrupt_before: list[str] | None = None
    interrupt_after: list[str] | None = None
    debug: bool = False
    cache: CacheOption = None
    version: Literal["v1", "v2"] = DEFAULT_VERSION
    approval_policy: ApprovalPolicyOption = None

    def __post_init__(self) -> None:
        if self.version not in ("v1", "v2"):
            raise ValueError(
                f"version={self.version!r}: use 'v1' or 'v2' (both run the calls of a turn as "
                "this package's contract says: one at a time, or concurrently with "
                "parallel_tool_calls=True; see docs/prebuilt.md)"
            )
        if self.message_storage not in get_args(MessageStorage):
            raise ValueError(
                f"message_storage={self.message_storage!r}: use one of {get_args(MessageStorage)}"
            )
        object.__setattr__(self, "max_steps", check_max_steps(self.max_steps))

    @property
    def explicit_version(self) -> bool:
        """Whether the caller gave ``version=`` (an option only the prebuilt agent has)."""
        return not isinstance(self.version, _Default)
