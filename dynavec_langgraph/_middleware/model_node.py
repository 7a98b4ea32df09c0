"""Mirrors ``langchain.agents.factory``'s model node (checked against langchain 1.5.2):
``_chain_model_call_handlers`` and ``_build_commands`` (``wrap_model_call`` middleware composed
around the model call), ``_get_bound_model`` (tools and the structured-output strategy bound),
``_handle_model_output`` and ``_patch_invalid_tool_calls``; on the tool node of the two-node
graph (:class:`dynavec_langgraph._graph.nodes.ReActNodes`). The mirrored sources are pinned by
digest in tests/test_create_agent.py."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, cast

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    RemoveMessage,
    SystemMessage,
    ToolCall,
    ToolMessage,
    convert_to_messages,
)
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.runtime import get_runtime
from langgraph.types import Command

from dynavec_langgraph._graph.call_ids import calls_of
from dynavec_langgraph._graph.conversation_view import new_turn, pending_calls
from dynavec_langgraph._graph.nodes import ReActNodes, model_kwargs, model_update
from dynavec_langgraph._graph.options import AgentOptions
from dynavec_langgraph._graph.spec import AgentSpec
from dynavec_langgraph._graph.state import steps_in_run
from dynavec_langgraph._middleware.hooks import overrides
from dynavec_langgraph._middleware.structured import (
    Structured,
    structured_error,
    supports_provider_strategy,
)
from dynavec_langgraph._types import NodeUpdate, StateUpdate, ToolArgs, UserPayload, UserState

if TYPE_CHECKING:
    from dynavec_langgraph._types import (
        GraphCommand,
        ModelAnswer,
        ModelCall,
        UserRunnable,
    )

__all__ = ["ExtendedNodes", "composed", "patch_invalid_calls", "runnable_calls"]


def composed(
    result: UserPayload, inner: list[GraphCommand]
) -> tuple[ModelAnswer, list[GraphCommand]]:
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
        spec: AgentSpec,
        options: AgentOptions,
        chat_model: UserPayload,
        request_tools: list[BaseTool | ToolArgs],
    ) -> None:
        """The model node of ``spec``'s agent: ``options`` resolved, ``chat_model`` (the
        model a ``ModelRequest`` carries), ``request_tools`` (the tools it lists)."""
        middleware = options.middleware
        self.face = face = spec.face
        self.run_unknown = face.create_agent
        self.tool_wrapped = any(overrides(m, "wrap_tool_call") for m in middleware)
        self.options = options
        self.chat_model = chat_model
        self.request_tools = request_tools
        self.system_message = options.system_message
        self.prompt_runnable = options.prompt
        self.structured = (
            Structured(options.response_format, chat_model)
            if options.response_format is not None
            else None
        )
        self.wrappers = [m for m in middleware if overrides(m, "wrap_model_call")]
        if (self.wrappers or self.structured) and not isinstance(chat_model, BaseChatModel):
            raise TypeError(
                f"middleware that wraps the model call needs a LangChain chat model, not "
                f"{type(chat_model).__name__} (an already bound Runnable): pass the chat model "
                "itself"
            )

    # the model's input ------------------------------------------------------------------
    def _input(
        self, state: UserState, config: RunnableConfig, out: UserPayload
    ) -> tuple[list[AnyMessage], SystemMessage | None]:
        messages = list(state.get("llm_input_messages") or state["messages"])
        if self.prompt_runnable is None:
            return messages, self.system_message
        return self._prompted(out, messages), None

    @staticmethod
    def _prompted(out: UserPayload, messages: list[AnyMessage]) -> list[AnyMessage]:
        if hasattr(out, "to_messages"):
            out = out.to_messages()
        if isinstance(out, str | BaseMessage):
            out = [out]
        converted: list[AnyMessage] = list(convert_to_messages(out))  # type: ignore[arg-type]
        return converted

    def _view(self, state: UserState) -> UserState:
        messages = state.get("llm_input_messages") or state["messages"]
        return {**state, "messages": list(messages)}

    def _request(
        self, state: UserState, messages: list[AnyMessage], config: RunnableConfig
    ) -> ModelCall:
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
            state=state,
            runtime=get_runtime(),
            model_settings=model_kwargs(config),
        )

    def _bound(self, request: ModelCall) -> tuple[UserRunnable, UserPayload]:
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
        effective: UserPayload = fmt
        if isinstance(fmt, AutoStrategy):
            if supports_provider_strategy(request.model, request.tools):
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
            kwargs: dict[str, UserPayload] = {
                **effective.to_model_kwargs(),
                **request.model_settings,
            }
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

    def _check_dynamic_tools(self, tools: Sequence[BaseTool | ToolArgs]) -> None:
        """create_agent's check (its ``_get_bound_model``, langchain 1.5.2): a tool a
        ``wrap_model_call`` added that no ``wrap_tool_call`` middleware can run is refused,
        naming it."""
        from langchain.agents.factory import DYNAMIC_TOOL_ERROR_TEMPLATE

        known = self.executor.tools_by_name
        unknown = [t.name for t in tools if isinstance(t, BaseTool) and t.name not in known]
        if unknown:
            raise ValueError(
                DYNAMIC_TOOL_ERROR_TEMPLATE.format(
                    unknown_tool_names=unknown, available_tool_names=sorted(known)
                )
            )

    def _handle(self, state: UserState, output: UserPayload, effective: UserPayload) -> ModelAnswer:
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
            model_update(state, output, self.name)  # raises TypeError
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

        def answer(call: ToolCall, content: str) -> ToolMessage:
            return ToolMessage(
                content=content, tool_call_id=call["id"], name=call["name"], id=f"tool-{call['id']}"
            )

        if len(calls) > 1:
            multi = MultipleStructuredOutputsError([c["name"] for c in calls], output)
            retry, message = structured_error(multi, effective)
            if not retry:
                raise multi
            return ModelResponse(result=[output, *(answer(c, message) for c in calls)])
        call = calls[0]
        try:
            parsed = known[call["name"]].parse(call["args"])
        except Exception as exc:
            error = StructuredOutputValidationError(call["name"], exc, output)
            retry, message = structured_error(error, effective)
            if not retry:
                raise error from exc
            return ModelResponse(result=[output, answer(call, message)])
        content = effective.tool_message_content or f"Returning structured response: {parsed}"
        return ModelResponse(result=[output, answer(call, content)], structured_response=parsed)

    def _update(
        self,
        state: UserState,
        response: ModelAnswer,
        commands: list[GraphCommand],
        repaired: list[AnyMessage] | None = None,
        appended: Sequence[AnyMessage] = (),
    ) -> NodeUpdate:
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
        # a no-op for the model's own answer
        ai = new_turn(state["messages"], cast("AIMessage", result[index]))
        if ai.name is None:
            ai.name = self.name
        result[index] = ai
        answered = {m.tool_call_id for m in result if isinstance(m, ToolMessage)}
        open_calls = [c for c in calls_of(ai) if c["id"] not in answered]
        update: StateUpdate = {
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

    def _repaired(self, state: UserState, messages: list[AnyMessage]) -> list[AnyMessage] | None:
        """create_agent's face: the conversation with its malformed calls answered (as
        create_agent, at the next model call), or None when nothing needed answering."""
        if not self.face.create_agent or self.prompt_runnable is not None:
            return None
        patched = patch_invalid_calls(messages)
        return patched if len(patched) != len(messages) else None

    def call_model(self, state: UserState, config: RunnableConfig) -> NodeUpdate:
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

        def base(req: ModelCall) -> ModelAnswer:
            model, effective = self._bound(req)
            prompt = [req.system_message] if req.system_message else []
            return self._handle(state, model.invoke([*prompt, *req.messages], config), effective)

        def layer(i: int, req: ModelCall) -> tuple[ModelAnswer, list[GraphCommand]]:
            if i == len(self.wrappers):
                return base(req), []
            inner: list[GraphCommand] = []

            def handler(r: ModelCall) -> ModelAnswer:
                inner.clear()  # a retrying middleware keeps the last try's commands only
                response, commands = layer(i + 1, r)
                inner.extend(commands)
                return response

            return composed(self.wrappers[i].wrap_model_call(req, handler), inner)

        response, commands = layer(0, request)
        return self._update(state, response, commands, repaired, given[before:])

    async def acall_model(self, state: UserState, config: RunnableConfig) -> NodeUpdate:
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

        async def base(req: ModelCall) -> ModelAnswer:
            model, effective = self._bound(req)
            prompt = [req.system_message] if req.system_message else []
            output = await model.ainvoke([*prompt, *req.messages], config)
            return self._handle(state, output, effective)

        async def layer(i: int, req: ModelCall) -> tuple[ModelAnswer, list[GraphCommand]]:
            if i == len(self.wrappers):
                return await base(req), []
            inner: list[GraphCommand] = []

            async def handler(r: ModelCall) -> ModelAnswer:
                inner.clear()
                response, commands = await layer(i + 1, r)
                inner.extend(commands)
                return response

            return composed(await self.wrappers[i].awrap_model_call(req, handler), inner)

        response, commands = await layer(0, request)
        return self._update(state, response, commands, repaired, given[before:])


def runnable_calls(messages: Sequence[AnyMessage]) -> list[ToolCall]:
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


def _is_openai(model: BaseChatModel) -> bool:
    try:
        from langchain_openai.chat_models.base import BaseChatOpenAI
    except ImportError:
        return False
    return isinstance(model, BaseChatOpenAI)
