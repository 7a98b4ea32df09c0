"""``create_agent``'s options and LangChain middleware on dynavec's agent graph.

:func:`dynavec_langgraph.create_react_agent` builds its two-node graph when none of these is
used. With ``middleware``, ``response_format``, ``state_schema``, a callable ``prompt`` or the
prebuilt agent's ``pre_model_hook`` / ``post_model_hook``, :func:`build_graph` here wires them
as ``langchain.agents.create_agent`` does (one node per middleware hook, in its order, with its
``jump_to`` edges; ``wrap_model_call`` around the model call; ``wrap_tool_call`` around each
call in LangGraph's ``ToolNode``), around the same ``agent`` and ``tools`` nodes: tools still run
one call per superstep, each checkpointed before the next, so the human-in-the-loop guarantees
hold with middleware in place.

LangChain (``langchain``) is an optional dependency: it is imported when an option needs it.
"""

from __future__ import annotations

import dataclasses
import importlib
import itertools
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import (
    TYPE_CHECKING,
    Annotated,
    Any,
    NotRequired,
    Required,
    TypedDict,
    get_args,
    get_origin,
    get_type_hints,
)

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
    convert_to_messages,
)
from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda
from langgraph.channels import EphemeralValue
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.runtime import get_runtime
from langgraph.types import Command
from typing_extensions import TypedDict as ExtTypedDict

from dynavec_langgraph._messages import calls_of, new_turn, pending_calls
from dynavec_langgraph._nodes import (
    PREBUILT_FACE,
    AgentFace,
    NodeRunnable,
    ReActNodes,
    model_kwargs,
    model_update,
)
from dynavec_langgraph._routing import tools_router
from dynavec_langgraph._state import TOOLS_NODE, steps_in_run
from dynavec_langgraph._subagent_cause import with_tool_call_cause

if TYPE_CHECKING:
    from langchain.agents.middleware import AgentMiddleware

__all__ = [
    "EXTRA_HINT",
    "AgentOptions",
    "build_graph",
    "create_agent_config",
    "create_agent_tool_node",
    "create_agent_transformers",
    "need_langchain",
]

EXTRA_HINT = "pip install 'dynavec-langgraph[middleware]' (or '[all]')"
"""How to install the extra LangChain middleware needs."""
HOOKS = ("before_agent", "before_model", "after_model", "after_agent")
JUMPS = ("model", "tools", "end")
PRE_MODEL_HOOK = "pre_model_hook"
POST_MODEL_HOOK = "post_model_hook"


def need_langchain(option: str) -> None:
    """Raise an ImportError naming the extra when ``langchain`` is not installed."""
    try:
        import langchain.agents.middleware
        import langchain.agents.structured_output  # noqa: F401
    except ImportError:
        raise ImportError(
            f"{option}= needs the `langchain` package (LangChain's middleware and "
            f"structured-output types): {EXTRA_HINT}. The agent works without it when "
            f"{option}= is not used."
        ) from None


@dataclass
class AgentOptions:
    """The options beyond the two-node graph, checked and resolved."""

    system_message: SystemMessage | None = None
    prompt: Runnable[Any, Any] | None = None
    """A callable or Runnable prompt: the state in, the model's input messages out."""
    response_format: Any = None
    state_schema: Any = None
    context_schema: Any = None
    pre_model_hook: Any = None
    post_model_hook: Any = None
    middleware: list[Any] = field(default_factory=list)

    @property
    def extended(self) -> bool:
        return bool(
            self.middleware
            or self.response_format is not None
            or self.state_schema is not None
            or self.prompt is not None
            or self.pre_model_hook is not None
            or self.post_model_hook is not None
        )


def resolve_prompt(
    system_prompt: Any, prompt: Any
) -> tuple[SystemMessage | None, Runnable[Any, Any] | None]:
    """``system_prompt`` / ``prompt`` as a system message or a prompt Runnable."""
    if system_prompt is not None and prompt is not None:
        raise ValueError(
            "pass either system_prompt= (create_agent) or prompt= (the prebuilt agent), not both"
        )
    value = prompt if prompt is not None else system_prompt
    option = "prompt" if prompt is not None else "system_prompt"
    if value is None or value == "":
        return None, None
    if isinstance(value, str):
        return SystemMessage(content=value), None
    if isinstance(value, SystemMessage):
        return value, None
    if option == "prompt" and isinstance(value, Runnable):
        return None, value
    if option == "prompt" and callable(value):
        return None, RunnableLambda(value, name="prompt")
    kinds = "a str or SystemMessage" + (
        ", a callable of the state or a Runnable" if option == "prompt" else ""
    )
    raise TypeError(f"{option}={value!r:.80}: pass {kinds}")


# --- state schema -----------------------------------------------------------------------------


def _hints(schema: Any, option: str) -> dict[str, Any]:
    try:
        return dict(get_type_hints(schema, include_extras=True))
    except Exception as error:
        raise TypeError(
            f"{option}={schema!r}: pass a TypedDict (or class with annotations) with a "
            f"'messages' key, e.g. LangChain's AgentState or a subclass ({error})"
        ) from None


def merged_state(
    base: type[Any],
    options: AgentOptions,
    middleware: Sequence[AgentMiddleware[Any, Any]],
    face: AgentFace = PREBUILT_FACE,
) -> type[Any]:
    """The graph's state: the user's ``state_schema`` and the middleware's schemas, with this
    package's keys (its ``messages`` reducer keeps tool-call ids unique in a thread)."""
    fields: dict[str, Any] = {}
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
        fields["structured_response"] = NotRequired[Any]
    if any(_overrides(m, "after_model") for m in middleware):
        fields[REVIEWED_KEY] = NotRequired[str | None]
    if options.pre_model_hook is not None:
        fields["llm_input_messages"] = NotRequired[Annotated[list[AnyMessage], EphemeralValue]]
    fields.update(get_type_hints(base, include_extras=True))
    state: type[Any] = TypedDict("DynavecAgentState", fields, total=False)  # type: ignore[misc]
    return state


# --- structured output (as create_agent: langchain.agents.structured_output) ----------------


class _Structured:
    """``response_format`` resolved as ``create_agent`` resolves it."""

    def __init__(self, response_format: Any, model: Any) -> None:
        from langchain.agents.structured_output import (
            AutoStrategy,
            OutputToolBinding,
            ProviderStrategy,
            ToolStrategy,
        )

        if not isinstance(model, BaseChatModel) or type(model).__name__ == "DynavecChatModel":
            raise TypeError(
                f"response_format={response_format!r:.80} needs a LangChain chat model (a "
                f"BaseChatModel that can bind tools); the model given ({type(model).__name__}) "
                "cannot serve structured output. Pass e.g. ChatOpenAI(...) or a "
                "'provider:model' string."
            )
        if isinstance(response_format, ToolStrategy | ProviderStrategy | AutoStrategy):
            self.initial: Any = response_format
        else:
            try:
                self.initial = AutoStrategy(schema=response_format)
                ToolStrategy(schema=response_format)
            except Exception as error:
                raise TypeError(
                    f"response_format={response_format!r:.80}: pass a pydantic model, dataclass, "
                    f"TypedDict, JSON-schema dict, ToolStrategy or ProviderStrategy ({error})"
                ) from None
        self.tool_strategy: Any = None
        if isinstance(self.initial, AutoStrategy):
            self.tool_strategy = ToolStrategy(schema=self.initial.schema)
        elif isinstance(self.initial, ToolStrategy):
            self.tool_strategy = self.initial
        self.tools: dict[str, Any] = {}
        if self.tool_strategy is not None:
            for spec in self.tool_strategy.schema_specs:
                binding = OutputToolBinding.from_schema_spec(spec)
                self.tools[binding.tool.name] = binding


def _supports_provider_strategy(model: Any, tools: Sequence[Any]) -> bool:
    """As ``create_agent`` decides (its model profile, else its list of known models)."""
    from langchain.agents.factory import FALLBACK_MODELS_WITH_STRUCTURED_OUTPUT

    name = (
        getattr(model, "model_name", None)
        or getattr(model, "model", None)
        or getattr(model, "model_id", "")
    )
    profile = getattr(model, "profile", None)
    if (
        profile
        and profile.get("structured_output")
        and not (
            tools
            and isinstance(name, str)
            and "gemini" in name.lower()
            and "gemini-3" not in name.lower()
        )
    ):
        return True
    if not isinstance(name, str) or not name:
        return False
    return any(re.search(p, name.lower()) for p in FALLBACK_MODELS_WITH_STRUCTURED_OUTPUT)


def _structured_error(exception: Exception, strategy: Any) -> tuple[bool, str]:
    """``(retry, message)`` for a structured-output error, as ``ToolStrategy.handle_errors``
    says (create_agent's rules)."""
    from langchain.agents.factory import STRUCTURED_OUTPUT_ERROR_TEMPLATE
    from langchain.agents.structured_output import ToolStrategy

    if not isinstance(strategy, ToolStrategy):
        return False, ""
    handle = strategy.handle_errors
    default = STRUCTURED_OUTPUT_ERROR_TEMPLATE.format(error=str(exception))
    if handle is False:
        return False, ""
    if handle is True:
        return True, default
    if isinstance(handle, str):
        return True, handle
    if isinstance(handle, type):
        return (True, default) if isinstance(exception, handle) else (False, "")
    if isinstance(handle, tuple):
        return (True, default) if isinstance(exception, handle) else (False, "")
    return True, handle(exception)


# --- the model node -----------------------------------------------------------------------


def _overrides(m: Any, hook: str) -> bool:
    from langchain.agents.middleware import AgentMiddleware

    cls = type(m)
    return bool(
        getattr(cls, hook) is not getattr(AgentMiddleware, hook)
        or getattr(cls, "a" + hook) is not getattr(AgentMiddleware, "a" + hook)
    )


def _composed(result: Any, inner: list[Command[Any]]) -> tuple[Any, list[Command[Any]]]:
    """A ``wrap_model_call`` layer's result as ``(ModelResponse, commands)``: the inner layers'
    commands, then its own (an ``ExtendedModelResponse``'s), as create_agent composes them
    (``_chain_model_call_handlers``, langchain 1.5.2)."""
    from langchain.agents.middleware.types import ExtendedModelResponse, ModelResponse

    if isinstance(result, AIMessage):
        return ModelResponse(result=[result], structured_response=None), list(inner)
    if isinstance(result, ExtendedModelResponse):
        own = [result.command] if result.command is not None else []
        return result.model_response, [*inner, *own]
    return result, list(inner)


class ExtendedNodes(ReActNodes):
    """The model node with the prompt, ``wrap_model_call`` middleware and structured output;
    the tool node is :class:`ReActNodes`'s (one call per visit)."""

    def setup(
        self,
        options: AgentOptions,
        chat_model: Any,
        request_tools: list[Any],
        middleware: Sequence[Any],
        face: AgentFace = PREBUILT_FACE,
    ) -> None:
        self.face = face
        self.run_unknown = face.create_agent
        self.tool_wrapped = any(_overrides(m, "wrap_tool_call") for m in middleware)
        self.options = options
        self.chat_model = chat_model
        self.request_tools = request_tools
        self.system_message = options.system_message
        self.prompt_runnable = options.prompt
        self.structured = (
            _Structured(options.response_format, chat_model)
            if options.response_format is not None
            else None
        )
        self.wrappers = [m for m in middleware if _overrides(m, "wrap_model_call")]
        if (self.wrappers or self.structured) and not isinstance(chat_model, BaseChatModel):
            raise TypeError(
                f"middleware that wraps the model call needs a LangChain chat model, not "
                f"{type(chat_model).__name__} (an already bound Runnable): pass the chat model "
                "itself"
            )

    # the model's input ------------------------------------------------------------------
    def _input(
        self, state: dict[str, Any], config: RunnableConfig, out: Any
    ) -> tuple[list[AnyMessage], SystemMessage | None]:
        messages = list(state.get("llm_input_messages") or state["messages"])
        if self.prompt_runnable is None:
            return messages, self.system_message
        return self._prompted(out, messages), None

    @staticmethod
    def _prompted(out: Any, messages: list[AnyMessage]) -> list[AnyMessage]:
        if hasattr(out, "to_messages"):
            out = out.to_messages()
        if isinstance(out, str | BaseMessage):
            out = [out]
        converted: list[AnyMessage] = list(convert_to_messages(out))  # type: ignore[arg-type]
        return converted

    def _view(self, state: dict[str, Any]) -> dict[str, Any]:
        messages = state.get("llm_input_messages") or state["messages"]
        return {**state, "messages": list(messages)}

    def _request(
        self, state: dict[str, Any], messages: list[AnyMessage], config: RunnableConfig
    ) -> Any:
        from langchain.agents.middleware.types import ModelRequest

        system = self.system_message
        if self.prompt_runnable is not None and messages and isinstance(messages[0], SystemMessage):
            system, messages = messages[0], messages[1:]
        return ModelRequest(
            model=self.chat_model,
            tools=list(self.request_tools),
            system_message=system,
            response_format=self.structured.initial if self.structured else None,
            messages=messages,
            tool_choice=None,
            state=state,  # type: ignore[arg-type]
            runtime=get_runtime(),
            model_settings=model_kwargs(config),
        )

    def _bound(self, request: Any) -> tuple[Any, Any]:
        """The model with its tools bound, and the structured-output strategy in effect (as
        create_agent's ``_get_bound_model``)."""
        from langchain.agents.structured_output import (
            AutoStrategy,
            ProviderStrategy,
            ToolStrategy,
        )

        if self.face.create_agent and not self.tool_wrapped:
            self._check_dynamic_tools(request.tools)
        fmt = request.response_format
        if fmt is not None and not isinstance(fmt, AutoStrategy | ToolStrategy | ProviderStrategy):
            fmt = AutoStrategy(schema=fmt)
        effective: Any = fmt
        if isinstance(fmt, AutoStrategy):
            if _supports_provider_strategy(request.model, request.tools):
                effective = ProviderStrategy(schema=fmt.schema)
            elif self.structured is not None and fmt is self.structured.initial:
                effective = self.structured.tool_strategy
            else:
                effective = ToolStrategy(schema=fmt.schema)
        tools = list(request.tools)
        known = self.structured.tools if self.structured else {}
        if isinstance(effective, ToolStrategy):
            names = {spec.name for spec in effective.schema_specs}
            for spec_name in names:
                if spec_name not in known:
                    raise ValueError(
                        f"ToolStrategy specifies tool {spec_name!r} which wasn't declared in the "
                        "original response_format when the agent was built"
                    )
            tools.extend(info.tool for n, info in known.items() if n in names)
        if isinstance(effective, ProviderStrategy):
            kwargs: dict[str, Any] = {**effective.to_model_kwargs(), **request.model_settings}
            if _is_openai(request.model) and not getattr(request.model, "use_responses_api", False):
                kwargs["strict"] = True
            return request.model.bind_tools(tools, **kwargs), effective
        if isinstance(effective, ToolStrategy):
            choice = "any" if known else request.tool_choice
            return (
                request.model.bind_tools(tools, tool_choice=choice, **request.model_settings),
                effective,
            )
        if tools:
            return (
                request.model.bind_tools(
                    tools, tool_choice=request.tool_choice, **request.model_settings
                ),
                None,
            )
        return request.model.bind(**request.model_settings), None

    def _check_dynamic_tools(self, tools: Sequence[Any]) -> None:
        """create_agent's check (its ``_get_bound_model``, langchain 1.5.2): a tool a
        ``wrap_model_call`` added that no ``wrap_tool_call`` middleware can run is refused,
        naming it."""
        from langchain.agents.factory import DYNAMIC_TOOL_ERROR_TEMPLATE
        from langchain_core.tools import BaseTool

        known = self.executor.tools_by_name
        unknown = [t.name for t in tools if isinstance(t, BaseTool) and t.name not in known]
        if unknown:
            raise ValueError(
                DYNAMIC_TOOL_ERROR_TEMPLATE.format(
                    unknown_tool_names=unknown, available_tool_names=sorted(known)
                )
            )

    def _handle(self, state: dict[str, Any], output: Any, effective: Any) -> Any:
        """The model's answer as a ``ModelResponse``: new ids in this thread, the structured
        response parsed, its tool call answered (create_agent's ``_handle_model_output``)."""
        from langchain.agents.middleware.types import ModelResponse
        from langchain.agents.structured_output import (
            MultipleStructuredOutputsError,
            ProviderStrategy,
            ProviderStrategyBinding,
            StructuredOutputValidationError,
            ToolStrategy,
        )

        if not isinstance(output, AIMessage):
            model_update(state, output, self.name)  # type: ignore[arg-type]  # raises TypeError
        output = new_turn(state["messages"], output)
        if self.face.create_agent:  # as create_agent: its name, when it has one, on every answer
            if self.name:
                output.name = self.name
        elif output.name is None:
            output.name = self.name
        if isinstance(effective, ProviderStrategy):
            if output.tool_calls:
                return ModelResponse(result=[output])
            binding = ProviderStrategyBinding.from_schema_spec(effective.schema_spec)
            try:
                parsed = binding.parse(output)
            except Exception as exc:
                schema = getattr(effective.schema_spec.schema, "__name__", "response_format")
                raise StructuredOutputValidationError(schema, exc, output) from exc
            return ModelResponse(result=[output], structured_response=parsed)
        known = self.structured.tools if self.structured else {}
        if not isinstance(effective, ToolStrategy) or not output.tool_calls:
            return ModelResponse(result=[output])
        calls = [c for c in output.tool_calls if c["name"] in known]
        if not calls:
            return ModelResponse(result=[output])

        def answer(call: Any, content: str) -> ToolMessage:
            return ToolMessage(
                content=content, tool_call_id=call["id"], name=call["name"], id=f"tool-{call['id']}"
            )

        if len(calls) > 1:
            multi = MultipleStructuredOutputsError([c["name"] for c in calls], output)
            retry, message = _structured_error(multi, effective)
            if not retry:
                raise multi
            return ModelResponse(result=[output, *(answer(c, message) for c in calls)])
        call = calls[0]
        try:
            parsed = known[call["name"]].parse(call["args"])
        except Exception as exc:
            error = StructuredOutputValidationError(call["name"], exc, output)
            retry, message = _structured_error(error, effective)
            if not retry:
                raise error from exc
            return ModelResponse(result=[output, answer(call, message)])
        content = effective.tool_message_content or f"Returning structured response: {parsed}"
        return ModelResponse(result=[output, answer(call, content)], structured_response=parsed)

    def _update(
        self,
        state: dict[str, Any],
        response: Any,
        commands: list[Command[Any]],
        repaired: list[AnyMessage] | None = None,
        appended: Sequence[AnyMessage] = (),
    ) -> Any:
        """The model node's update. create_agent's face keeps what a ``wrap_model_call``
        appended to ``request.messages`` in place (create_agent's request holds the state's own
        list, so such messages stay in the conversation, before the answer)."""
        result = list(response.result)
        index = next(
            (i for i in range(len(result) - 1, -1, -1) if isinstance(result[i], AIMessage)), -1
        )
        if index < 0:
            raise TypeError(
                f"the model call returned no AIMessage ({result!r:.120}): a wrap_model_call "
                "middleware must return the handler's response, a ModelResponse or an AIMessage"
            )
        ai = new_turn(state["messages"], result[index])  # a no-op for the model's own answer
        if ai.name is None:
            ai.name = self.name
        result[index] = ai
        answered = {m.tool_call_id for m in result if isinstance(m, ToolMessage)}
        open_calls = [c for c in calls_of(ai) if c["id"] not in answered]
        update: dict[str, Any] = {
            "messages": result,
            "step": steps_in_run(state) + 1,
            "termination_reason": None
            if open_calls or (calls_of(ai) and response.structured_response is None)
            else "completed",
        }
        if response.structured_response is not None:
            update["structured_response"] = response.structured_response
        elif self.structured is not None:
            update["structured_response"] = None
        if repaired is not None:  # create_agent's face: the malformed calls answered
            update["messages"] = [RemoveMessage(id=REMOVE_ALL_MESSAGES), *repaired, *result]
        elif appended and self.face.create_agent:
            update["messages"] = [*appended, *result]
        for cmd in commands:  # create_agent's messages (its _build_commands, langchain 1.5.2)
            if cmd.goto:
                raise NotImplementedError(
                    "Command goto is not yet supported in wrap_model_call middleware. "
                    "Use the jump_to state field with before_model/after_model hooks instead."
                )
            if cmd.resume:
                raise NotImplementedError(
                    "Command resume is not yet supported in wrap_model_call middleware."
                )
            if cmd.graph:
                raise NotImplementedError(
                    "Command graph is not yet supported in wrap_model_call middleware."
                )
        return [Command(update=update), *commands] if commands else update

    def _repaired(self, state: Any, messages: list[AnyMessage]) -> list[AnyMessage] | None:
        """create_agent's face: the conversation with its malformed calls answered (as
        create_agent, at the next model call), or None when nothing needed answering."""
        if not self.face.create_agent or self.prompt_runnable is not None:
            return None
        patched = patch_invalid_calls(messages)
        return patched if len(patched) != len(messages) else None

    def call_model(self, state: Any, config: RunnableConfig) -> Any:
        out = (
            self.prompt_runnable.invoke(self._view(state), config) if self.prompt_runnable else None
        )
        messages, system = self._input(state, config, out)
        if not self.wrappers and self.structured is None and not self.face.create_agent:
            prompt: list[AnyMessage] = [system] if system else []
            response = self.model.invoke(prompt + messages, config, **model_kwargs(config))
            return model_update(state, response, self.name)
        repaired = self._repaired(state, messages)
        given = repaired or messages
        request = self._request(state, given, config)
        before = len(given)

        def base(req: Any) -> Any:
            model, effective = self._bound(req)
            prompt = [req.system_message] if req.system_message else []
            return self._handle(state, model.invoke([*prompt, *req.messages], config), effective)

        def layer(i: int, req: Any) -> tuple[Any, list[Command[Any]]]:
            if i == len(self.wrappers):
                return base(req), []
            inner: list[Command[Any]] = []

            def handler(r: Any) -> Any:
                inner.clear()  # a retrying middleware keeps the last try's commands only
                response, commands = layer(i + 1, r)
                inner.extend(commands)
                return response

            return _composed(self.wrappers[i].wrap_model_call(req, handler), inner)

        response, commands = layer(0, request)
        return self._update(state, response, commands, repaired, given[before:])

    async def acall_model(self, state: Any, config: RunnableConfig) -> Any:
        out = (
            await self.prompt_runnable.ainvoke(self._view(state), config)
            if self.prompt_runnable
            else None
        )
        messages, system = self._input(state, config, out)
        if not self.wrappers and self.structured is None and not self.face.create_agent:
            prompt: list[AnyMessage] = [system] if system else []
            response = await self.model.ainvoke(prompt + messages, config, **model_kwargs(config))
            return model_update(state, response, self.name)
        repaired = self._repaired(state, messages)
        given = repaired or messages
        request = self._request(state, given, config)
        before = len(given)

        async def base(req: Any) -> Any:
            model, effective = self._bound(req)
            prompt = [req.system_message] if req.system_message else []
            output = await model.ainvoke([*prompt, *req.messages], config)
            return self._handle(state, output, effective)

        async def layer(i: int, req: Any) -> tuple[Any, list[Command[Any]]]:
            if i == len(self.wrappers):
                return await base(req), []
            inner: list[Command[Any]] = []

            async def handler(r: Any) -> Any:
                inner.clear()
                response, commands = await layer(i + 1, r)
                inner.extend(commands)
                return response

            return _composed(await self.wrappers[i].awrap_model_call(req, handler), inner)

        response, commands = await layer(0, request)
        return self._update(state, response, commands, repaired, given[before:])


def runnable_calls(messages: Sequence[AnyMessage]) -> list[Any]:
    """create_agent's face: the pending calls the tool node runs. A malformed call (invalid
    JSON arguments) is not run: as in create_agent it ends the turn, and the next model call
    answers it (:func:`patch_invalid_calls`)."""
    pending = pending_calls(messages)
    if not pending:
        return pending
    first = pending[0]["id"]
    for m in reversed(messages):
        if isinstance(m, AIMessage) and any(c["id"] == first for c in calls_of(m)):
            bad = {b.get("id") for b in m.invalid_tool_calls}
            return [c for c in pending if c["id"] not in bad] if bad else pending
    return pending


def patch_invalid_calls(messages: Sequence[AnyMessage]) -> list[AnyMessage]:
    """The conversation with an error answer after each malformed call (invalid JSON
    arguments) that has an id and no answer yet. Mirrors ``_patch_invalid_tool_calls`` and
    ``_invalid_tool_call_message`` of ``langchain.agents.factory`` (langchain 1.5.2; pinned by
    tests/test_create_agent.py)."""
    answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    out: list[AnyMessage] = []
    for message in messages:
        out.append(message)
        if not isinstance(message, AIMessage):
            continue
        for bad in message.invalid_tool_calls:
            call_id = bad.get("id")
            if call_id is None or call_id in answered:
                continue
            name = bad.get("name") or "unknown"
            out.append(
                ToolMessage(
                    content=f"Tool call {name} with id {call_id} could not be executed - "
                    "arguments were malformed or truncated.",
                    name=name,
                    tool_call_id=call_id,
                    status="error",
                )
            )
            answered.add(call_id)
    return out


def _is_openai(model: Any) -> bool:
    try:
        from langchain_openai.chat_models.base import BaseChatOpenAI
    except ImportError:
        return False
    return isinstance(model, BaseChatOpenAI)


# --- tool-call wrappers ---------------------------------------------------------------------


def _model_call_name(request: Any) -> str | None:
    """The name the model gave the call ``request`` runs (the AI message keeps the model's
    call when a reviewer's edit redirected it), or ``None``."""
    state = getattr(request, "state", None)
    messages = state.get("messages") if isinstance(state, Mapping) else None
    call_id = request.tool_call.get("id")
    for message in reversed(messages or []):
        if isinstance(message, AIMessage):
            for call in message.tool_calls:
                if call.get("id") == call_id:
                    return str(call["name"])
            return None
    return None


def review_redirect(middleware: Sequence[Any], request: Any) -> Any:
    """A call a reviewer's edit redirected to another tool is judged by that tool's own rule:
    when a ``HumanInTheLoopMiddleware`` gates the tool it now names, that middleware asks about
    it as a call of its own (its allowed decisions, its ``when``; the edit there cannot switch
    tools again) before it runs. Returns the request to run, or the ``ToolMessage`` answering
    the call instead (rejected, or responded to). Any other call is returned unchanged.

    The review is :func:`dynavec_langgraph._per_call_review.review_call`, a mirror of
    ``HumanInTheLoopMiddleware._resolve_per_call`` (langchain 1.5.2), pinned by
    tests/test_review_digest.py.
    """
    name = request.tool_call.get("name")
    asked = _model_call_name(request)
    if asked is None or asked == name:
        return request
    from langchain.agents.middleware import HumanInTheLoopMiddleware

    from dynavec_langgraph._per_call_review import review_call  # needs langchain, as here

    for m in middleware:
        if isinstance(m, HumanInTheLoopMiddleware) and name in m.interrupt_on:
            return review_call(m, request)
    return request


def tool_wrappers(
    middleware: Sequence[Any],
) -> tuple[Callable[..., Any] | None, Callable[..., Awaitable[Any]] | None]:
    """The ``wrap_tool_call`` middleware composed for LangGraph's ``ToolNode`` (first in the
    list outermost, as in create_agent)."""
    wrapping = [m for m in middleware if _overrides(m, "wrap_tool_call")]
    if not wrapping:
        return None, None

    def wrap(request: Any, execute: Callable[[Any], Any]) -> Any:
        def layer(i: int, req: Any) -> Any:
            if i == len(wrapping):
                reviewed = review_redirect(middleware, req)
                return reviewed if isinstance(reviewed, ToolMessage) else execute(reviewed)
            return wrapping[i].wrap_tool_call(req, lambda r: layer(i + 1, r))

        return layer(0, request)

    async def awrap(request: Any, execute: Callable[[Any], Awaitable[Any]]) -> Any:
        async def layer(i: int, req: Any) -> Any:
            if i == len(wrapping):
                reviewed = review_redirect(middleware, req)
                return reviewed if isinstance(reviewed, ToolMessage) else await execute(reviewed)
            return await wrapping[i].awrap_tool_call(req, lambda r: layer(i + 1, r))

        return await layer(0, request)

    return wrap, awrap


# --- the graph ------------------------------------------------------------------------------


def _can_jump_to(m: Any, hook: str) -> list[str]:
    from langchain.agents.middleware import AgentMiddleware

    for name in (hook, "a" + hook):
        method = getattr(type(m), name, None)
        if method is not None and method is not getattr(AgentMiddleware, name):
            jumps = getattr(method, "__can_jump_to__", None)
            if jumps:
                return list(jumps)
    return []


def _effective_trace_policy(own: Any) -> Any:
    """The middleware's own ``trace_policy``, else the process-wide default of
    ``langchain.agents.middleware.configure_trace_policy``. Mirrors ``_resolve`` of
    ``langchain.agents.middleware._trace_policy`` (langchain 1.5.2), which keeps that default
    in its ``_DEFAULT_TRACE_POLICY`` (no public getter; pinned by
    tests/test_create_agent.py)."""
    if own is not None:
        return own
    module = importlib.import_module("langchain.agents.middleware._trace_policy")
    return getattr(module, "_DEFAULT_TRACE_POLICY", None)


def hook_trace_policy(own: Any) -> Any:
    """The ``TracePolicy`` of a middleware hook's node, resolved when the span is recorded
    (so ``configure_trace_policy`` after the agent is built applies), as create_agent's
    ``_node_trace_policy`` (langchain 1.5.2)."""
    from langgraph.types import TracePolicy

    def transform(field: str) -> Callable[[Any], Any]:
        def process(value: Any) -> Any:
            effective = _effective_trace_policy(own)
            fn = getattr(effective, field, None) if effective is not None else None
            return fn(value) if fn is not None else value

        return process

    return TracePolicy(
        process_inputs=transform("process_inputs"), process_outputs=transform("process_outputs")
    )


REVIEWED_KEY = "dynavec_reviewed"
"""State key: the id of the latest assistant message whose calls passed the after-model hooks
(so new input on a thread paused later, in a tool, does not send them through again)."""


def _last_ai_id(state: Any) -> str | None:
    for m in reversed(state.get("messages") or ()):
        if isinstance(m, AIMessage):
            return m.id
    return None


def _marked(result: Any, ai_id: str | None) -> Any:
    """The hook's update plus the reviewed marker (a Command's update, a dict, or None)."""
    if isinstance(result, Command):
        update = result.update if isinstance(result.update, dict) else None
        if update is None and result.update is not None:
            return result
        return dataclasses.replace(result, update={**(update or {}), REVIEWED_KEY: ai_id})
    if result is None or isinstance(result, dict):
        return {**(result or {}), REVIEWED_KEY: ai_id}
    return result


def _hook_node(m: Any, hook: str, mark: bool = False) -> NodeRunnable:
    from langchain.agents.middleware import AgentMiddleware

    cls = type(m)
    sync = getattr(m, hook) if getattr(cls, hook) is not getattr(AgentMiddleware, hook) else None
    asyn = (
        getattr(m, "a" + hook)
        if getattr(cls, "a" + hook) is not getattr(AgentMiddleware, "a" + hook)
        else None
    )
    name = f"{m.name}.{hook}"

    def run(state: Any, config: RunnableConfig) -> Any:
        if sync is None:
            raise TypeError(
                f"middleware {m.name!r} has only an async {hook}: run the agent with "
                "ainvoke/astream"
            )
        result = sync(state, get_runtime())
        return _marked(result, _last_ai_id(state)) if mark else result

    async def arun(state: Any, config: RunnableConfig) -> Any:
        if asyn is None:
            return run(state, config)
        result = await asyn(state, get_runtime())
        return _marked(result, _last_ai_id(state)) if mark else result

    return NodeRunnable(name, run, arun)


def build_graph(
    schema: type[Any],
    nodes: ExtendedNodes,
    options: AgentOptions,
    middleware: Sequence[Any],
    max_steps: int,
    has_tools: bool,
    finish: NodeRunnable | None = None,
    face: AgentFace = PREBUILT_FACE,
) -> StateGraph[Any, Any, Any, Any]:
    """The agent's graph with the middleware's nodes and edges, as create_agent wires them.
    ``finish``: a node the run ends through (the prebuilt agent's structured response)."""
    names = [m.name for m in middleware]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ValueError(
            f"middleware: two middleware named {dupes}; create_agent refuses duplicates too. "
            "Pass each once (subclass or set a distinct `name` to use two of a kind)."
        )
    with_hook = {hook: [m for m in middleware if _overrides(m, hook)] for hook in HOOKS}
    allowed = list(JUMPS if has_tools else JUMPS[::2])
    for hook, ms in with_hook.items():
        for m in ms:
            for jump in _can_jump_to(m, hook):
                if jump not in JUMPS or (jump == "tools" and not has_tools):
                    raise ValueError(
                        f"middleware {m.name!r}: {hook} declares can_jump_to {jump!r}, but this "
                        f"agent has no such target (targets: {allowed}); "
                        + ("give the agent tools or " if jump == "tools" else "")
                        + "remove it from hook_config(can_jump_to=...)"
                    )
    model_node = face.model_node
    if face.create_agent:
        input_schema, output_schema = visible_schemas(schema)
        builder = StateGraph(
            schema,
            input_schema=input_schema,
            output_schema=output_schema,
            context_schema=options.context_schema,
        )
    else:
        builder = StateGraph(schema, context_schema=options.context_schema)
    builder.add_node(model_node, NodeRunnable(model_node, nodes.call_model, nodes.acall_model))
    builder.add_node(TOOLS_NODE, NodeRunnable(TOOLS_NODE, nodes.call_tool, nodes.acall_tool))
    for m in middleware:
        for hook in HOOKS:
            if m in with_hook[hook]:
                # the last after_model hook to run marks the turn as reviewed
                mark = hook == "after_model" and m is with_hook["after_model"][0]
                builder.add_node(
                    f"{m.name}.{hook}",
                    _hook_node(m, hook, mark),
                    trace_policy=hook_trace_policy(m.trace_policy),
                )
    if options.pre_model_hook is not None:
        builder.add_node(PRE_MODEL_HOOK, options.pre_model_hook)
    if options.post_model_hook is not None:
        builder.add_node(POST_MODEL_HOOK, options.post_model_hook)

    before_agent = [f"{m.name}.before_agent" for m in with_hook["before_agent"]]
    before_model = [f"{m.name}.before_model" for m in with_hook["before_model"]]
    if options.pre_model_hook is not None:
        before_model.append(PRE_MODEL_HOOK)
    # after the model: the prebuilt agent's post_model_hook, then after_model in reverse
    after_model = [POST_MODEL_HOOK] if options.post_model_hook is not None else []
    after_model += [f"{m.name}.after_model" for m in reversed(with_hook["after_model"])]
    after_agent = [f"{m.name}.after_agent" for m in reversed(with_hook["after_agent"])]
    jumps_of: dict[str, list[str]] = {
        f"{m.name}.{hook}": _can_jump_to(m, hook) for hook in HOOKS for m in with_hook[hook]
    }

    loop_entry = before_model[0] if before_model else model_node
    to_run = runnable_calls if face.create_agent else pending_calls
    exit_node = after_agent[0] if after_agent else END
    if finish is not None:
        builder.add_node(finish.name, finish)
        builder.add_edge(finish.name, exit_node)
        exit_node = finish.name
    review = after_model[0] if after_model else None

    def resolve(jump: Any, state: Any) -> str | None:
        if jump == "model":
            return loop_entry
        if jump == "end":
            return exit_node
        if jump == "tools":
            return TOOLS_NODE if to_run(state["messages"]) else loop_entry
        return None

    def targets(jumps: Sequence[str], default: str) -> list[str]:
        out = [default]
        for jump in jumps:
            dest = {"model": loop_entry, "end": exit_node, "tools": TOOLS_NODE}[jump]
            if dest not in out:
                out.append(dest)
        if "tools" in jumps and loop_entry not in out:
            out.append(loop_entry)
        return out

    def chain(node: str, default: str) -> None:
        jumps = jumps_of.get(node) or []
        if not jumps:
            builder.add_edge(node, default)
            return

        def jump_edge(state: Any) -> str:
            return resolve(state.get("jump_to"), state) or default

        builder.add_conditional_edges(node, jump_edge, targets(jumps, default))

    def route_pending(state: Any) -> str:
        """Unanswered calls finish first (a paused thread given new input); calls the
        after-model hooks have not passed yet (no answer in their turn) go through them."""
        messages = state["messages"]
        pending = to_run(messages)
        if not pending:
            return loop_entry
        if review is not None and state.get(REVIEWED_KEY) != _last_ai_id(state):
            ids = {c["id"] for c in pending}
            turn = next(
                (m for m in reversed(messages) if isinstance(m, AIMessage) and calls_of(m)), None
            )
            if turn is not None and {c["id"] for c in calls_of(turn)} == ids:
                return review
        return TOOLS_NODE

    pending_targets = list(dict.fromkeys([loop_entry, TOOLS_NODE] + ([review] if review else [])))
    if not before_agent:
        builder.add_conditional_edges(START, route_pending, pending_targets)
    else:  # before_agent runs at the start of every invocation, as in create_agent
        builder.add_edge(START, before_agent[0])
        for node, nxt in itertools.pairwise(before_agent):
            chain(node, nxt)
        last_entry = before_agent[-1]
        entry_jumps = jumps_of.get(last_entry) or []

        def after_before_agent(state: Any) -> str:
            jump = state.get("jump_to")
            if jump and jump in entry_jumps:
                return resolve(jump, state) or route_pending(state)
            return route_pending(state)

        builder.add_conditional_edges(
            last_entry,
            after_before_agent,
            list(dict.fromkeys(pending_targets + targets(entry_jumps, loop_entry))),
        )
    for node, nxt in zip(before_model, [*before_model[1:], model_node], strict=False):
        chain(node, nxt)
    if after_model:
        builder.add_edge(model_node, after_model[0])
        for node, nxt in itertools.pairwise(after_model):
            chain(node, nxt)
    last = after_model[-1] if after_model else model_node
    structured = nodes.structured

    def route_after_model(state: Any) -> str:
        jump = state.get("jump_to")
        if jump and last in jumps_of and jump in jumps_of[last]:
            return resolve(jump, state) or exit_node
        messages = state["messages"]
        if to_run(messages):
            return TOOLS_NODE
        if structured is not None and state.get("structured_response") is not None:
            return exit_node
        ai = next((m for m in reversed(messages) if isinstance(m, AIMessage)), None)
        if ai is None or not (ai.tool_calls if face.create_agent else calls_of(ai)):
            return exit_node
        # calls answered without running (a structured-output retry, a rejection)
        return exit_node if steps_in_run(state) >= max_steps else loop_entry

    builder.add_conditional_edges(
        last, route_after_model, list(dict.fromkeys([TOOLS_NODE, exit_node, loop_entry]))
    )
    after_tools = tools_router(max_steps)
    structured_names = frozenset(structured.tools) if structured else frozenset()

    def route_after_tools(state: Any) -> str:
        if face.create_agent:
            return create_agent_after_tools(state)
        where = after_tools(state)
        if where == TOOLS_NODE:
            if not to_run(state["messages"]):  # create_agent's face: malformed calls left
                return loop_entry
            return TOOLS_NODE
        if structured_names:
            ai = next((m for m in reversed(state["messages"]) if isinstance(m, AIMessage)), None)
            if (
                ai is not None
                and any(c["name"] in structured_names for c in calls_of(ai))
                and state.get("structured_response") is not None
            ):
                return exit_node
        return exit_node if where == END else loop_entry

    known_tools = nodes.executor.tools_by_name

    def create_agent_after_tools(state: Any) -> str:
        """As create_agent's ``_make_tools_to_model_edge`` (langchain 1.5.2), one call at a
        time: the run ends when every tool that ran (the answer's name: a reviewer may have
        edited the call to another tool) is ``return_direct``, or a structured-output tool
        answered without error."""
        messages = state["messages"]
        if to_run(messages):
            return TOOLS_NODE
        index = next(
            (i for i in range(len(messages) - 1, -1, -1) if isinstance(messages[i], AIMessage)),
            -1,
        )
        if index < 0:
            return loop_entry
        ai = messages[index]
        answers = [m for m in messages[index + 1 :] if isinstance(m, ToolMessage)]
        ran = {m.tool_call_id: m.name for m in answers if m.name in known_tools}
        names = [
            n for c in ai.tool_calls if (n := ran.get(c["id"] or "", c["name"])) in known_tools
        ]
        if names and all(known_tools[n].return_direct for n in names):
            return exit_node
        if any(m.name in structured_names and m.status != "error" for m in answers):
            return exit_node
        return loop_entry

    builder.add_conditional_edges(
        TOOLS_NODE, route_after_tools, list(dict.fromkeys([TOOLS_NODE, exit_node, loop_entry]))
    )
    for node, nxt in zip(after_agent, [*after_agent[1:], END], strict=False):
        chain(node, nxt)
    return builder


# --- create_agent's face ----------------------------------------------------------------------

PACKAGE_KEYS = frozenset(
    {"step", "termination_reason", "shared", "held", "continued_at", REVIEWED_KEY}
)
"""This package's state keys: ``create_agent``'s face neither takes them as input nor returns
them (its state is ``create_agent``'s)."""


def visible_schemas(schema: type[Any]) -> tuple[type[Any], type[Any]]:
    """The input and output schemas as ``create_agent`` resolves them (its
    ``_resolve_schema``, langchain 1.5.2: a field annotated ``OmitFromSchema(input=True)`` /
    ``(output=True)`` is left out of that side; ``PrivateStateAttr`` is both), without this
    package's keys."""
    from langchain.agents.middleware.types import OmitFromSchema

    hints = get_type_hints(schema, include_extras=True)

    def side(flag: str, name: str) -> type[Any]:
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
        result: type[Any] = ExtTypedDict(name, kept, total=False)  # type: ignore[misc]
        return result

    return side("input", "InputSchema"), side("output", "OutputSchema")


def _metadata(hint: Any) -> list[Any]:
    """The ``Annotated`` metadata of a field, under ``Required`` / ``NotRequired`` too (as
    create_agent's ``_extract_metadata``, langchain 1.5.2)."""
    if get_origin(hint) in (Required, NotRequired):
        hint = get_args(hint)[0]
    if get_origin(hint) is Annotated:
        return list(get_args(hint)[1:])
    return []


def create_agent_tool_node(executor: Any, wrap: Any, awrap: Any) -> Any:
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


def default_transformers() -> tuple[Any, ...]:
    """``create_agent``'s default stream transformers, as its module names them."""
    from langchain.agents import factory

    return tuple(getattr(factory, name) for name in DEFAULT_TRANSFORMERS)


def create_agent_transformers(middleware: Sequence[Any], extra: Sequence[Any]) -> list[Any]:
    """``create_agent``'s transformers in its order (its defaults, each middleware's
    ``transformers``, then ``transformers=``), each once (its ``_dedupe_transformers``), with
    :class:`~dynavec_langgraph._subagent_cause.ToolCallCause` just before its
    ``SubagentTransformer`` (the ``cause`` of a nested agent, docs/compatibility.md CA6)."""
    seen: set[int] = set()
    out: list[Any] = []
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


def create_agent_config(graph: Any, name: str | None) -> Any:
    """The run config ``create_agent`` gives its graph: its recursion limit and metadata
    (``ls_integration``; ``lc_agent_name`` when named, which tags the model's streamed
    messages)."""
    metadata: dict[str, Any] = {"ls_integration": "langchain_create_agent"}
    if name:
        metadata["lc_agent_name"] = name
    return graph.with_config(recursion_limit=CREATE_AGENT_RECURSION_LIMIT, metadata=metadata)
