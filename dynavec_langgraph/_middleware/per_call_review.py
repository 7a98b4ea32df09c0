"""One tool call reviewed as ``HumanInTheLoopMiddleware`` reviews it in ``per_call`` mode.

Mirrors ``HumanInTheLoopMiddleware._resolve_per_call`` of langchain 1.5.2 and the private
helpers it calls (``_tool_approval_request``, ``_create_action_and_config``'s description,
``_decision_schema`` / ``_edit_decision`` / ``_edit_args`` / ``_as_sent``, ``_apply_edit``,
``_answer_message``), built on the middleware's public attributes (``interrupt_on``,
``description_prefix``) and its module's public types. The digests of those functions are
pinned by ``tests/test_review_digest.py``: a change in the installed langchain fails that test;
re-check this mirror, then update the digests.

The package uses it for a call a reviewer's edit redirected to another gated tool
(:func:`dynavec_langgraph._middleware.tool_calls.review_redirect`): that tool's own rule asks
about it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Literal, Union, cast

try:
    from langchain.agents.middleware import HumanInTheLoopMiddleware
    from langchain.agents.middleware.human_in_the_loop import (
        ApproveDecision,
        RejectDecision,
        RespondDecision,
        ToolApprovalRequest,
    )
    from langchain.agents.middleware.types import ToolCallRequest
except ImportError:  # LangChain's middleware mirrored here: the `middleware` extra names it
    from dynavec_langgraph._middleware.options import need_langchain

    need_langchain("middleware")
    raise
from langchain_core.messages import ToolCall, ToolMessage, add_notification_metadata
from langchain_core.tools import BaseTool
from langgraph.runtime import get_runtime
from pydantic import (
    BaseModel,
    Discriminator,
    ValidatorFunctionWrapHandler,
    WithJsonSchema,
    WrapValidator,
    create_model,
)

from dynavec_langgraph._pauses.ask import answer_slot

__all__ = ["review_call"]


def review_call(
    middleware: HumanInTheLoopMiddleware, request: ToolCallRequest
) -> ToolCallRequest | ToolMessage:
    """Ask the reviewer about ``request``'s call if ``middleware`` gates its tool (and its
    ``when`` holds): the request to run (the reviewer's edit applied), or the message the model
    gets instead of the tool's result (rejected, or responded to)."""
    tool_call = request.tool_call
    config = middleware.interrupt_on.get(tool_call["name"])
    if config is None:
        return request
    when = config.get("when")
    if when is not None and not when(request):
        return request
    value = _approval_request(middleware, request)
    schema = _decision_schema(config["allowed_decisions"], tool_call["name"], request.tool)
    # LangGraph parses the answer against ``schema`` before saving it, so it comes back as one
    # of this tool's allowed decisions.
    decision = answer_slot(value, schema)
    if decision["type"] == "approve":
        return request
    if decision["type"] == "edit":
        # The schema pinned the tool name, so the edit names this call's own tool.
        edited = decision["edited_action"]
        call: ToolCall = {**tool_call, "name": edited["name"], "args": edited["args"]}
        return request.override(tool_call=call)
    return _answer_message(tool_call, decision)


def _approval_request(
    middleware: HumanInTheLoopMiddleware, request: ToolCallRequest
) -> ToolApprovalRequest:
    """``_tool_approval_request``: the per-call interrupt value for one gated call."""
    tool_call = request.tool_call
    if tool_call["id"] is None:
        raise ValueError(
            f"Tool call `{tool_call['name']}` has no ID, so its result can't be matched to it. "
            "Make sure the chat model returns tool call IDs."
        )
    config = middleware.interrupt_on[tool_call["name"]]
    described = config.get("description")
    if callable(described):
        description = described(tool_call, request.state, get_runtime())
    elif described is not None:
        description = described
    else:
        description = (
            f"{middleware.description_prefix}\n\nTool: {tool_call['name']}\n"
            f"Args: {tool_call['args']}"
        )
    return ToolApprovalRequest(
        type="tool_approval",
        tool_call_id=tool_call["id"],
        name=tool_call["name"],
        args=tool_call["args"],
        description=description,
    )


def _edit_args(tool: BaseTool | None) -> object:
    """``_edit_args``: an edit's ``args`` follow the tool's pydantic call schema, if any."""
    schema = tool.tool_call_schema if tool else None
    if not (isinstance(schema, type) and issubclass(schema, BaseModel)):
        shown = schema if isinstance(schema, dict) else {"type": "object"}
        return Annotated[dict[str, Any], WithJsonSchema(shown)]
    return schema


def _as_sent(answer: object, check: ValidatorFunctionWrapHandler) -> object:
    """``_as_sent``: check ``answer``, then pass it on as sent (the tool validates its args)."""
    check(answer)
    return answer


def _edit_decision(name: str, tool: BaseTool | None) -> object:
    """``_edit_decision``: the edit branch for one tool, its name pinned."""
    edited_action: Any = create_model(
        "EditedAction",
        name=(cast(Any, Literal[name]), ...),
        args=(cast(Any, _edit_args(tool)), ...),
    )
    decision: Any = create_model(
        "EditDecision",
        type=(cast(Any, Literal["edit"]), ...),
        edited_action=(edited_action, ...),
    )
    return Annotated[decision, WrapValidator(_as_sent)]


def _decision_schema(allowed: Sequence[str], name: str, tool: BaseTool | None) -> Any:
    """``_decision_schema``: the per-call response schema, limited to ``allowed`` (a type:
    LangGraph checks answers only against Python types and publishes its JSON schema)."""
    by_type: dict[str, object] = {
        "approve": ApproveDecision,
        "reject": RejectDecision,
        "respond": RespondDecision,
    }
    if "edit" in allowed:
        by_type["edit"] = _edit_decision(name, tool)
    members = tuple(by_type[d] for d in dict.fromkeys(allowed))
    if len(members) == 1:
        return members[0]
    return Annotated[Union[members], Discriminator("type")]  # noqa: UP007


def _answer_message(tool_call: ToolCall, decision: Any) -> ToolMessage:
    """``_answer_message``: what the model gets in place of the tool's result."""
    if decision["type"] == "respond":
        content = decision["message"]
    elif reason := decision.get("message"):
        content = f"User rejected the tool call for `{tool_call['name']}` with reason: {reason}"
    else:
        content = (
            f"User rejected the tool call for `{tool_call['name']}` with id "
            f"{tool_call['id']}. The tool was not executed. Do not retry this tool "
            "call unless the user explicitly requests it."
        )
    message = ToolMessage(
        content=content,
        name=tool_call["name"],
        tool_call_id=tool_call["id"],
        status="success" if decision["type"] == "respond" else "error",
    )
    # typed for a HumanMessage in langchain-core, given a ToolMessage by LangChain too
    noted = add_notification_metadata(
        cast(Any, message), source="hitl_interrupt_decision", data={"decision": decision["type"]}
    )
    return cast(ToolMessage, noted)
