"""The demo agent's tools, model and graph (a money transfer that waits for a person's
approval); the public face, and the demo's documentation, is :mod:`dynavec_langgraph.demo`.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Checkpointer
from pydantic import BaseModel, ConfigDict, Field, model_validator

from dynavec_langgraph._graph.factory import create_react_agent
from dynavec_langgraph._graph.run_data import current_run
from dynavec_langgraph._names import LEDGER_ENV
from dynavec_langgraph._tools.agent_tool import AgentTool, tool
from dynavec_langgraph.interrupt import Rejected, interrupt
from dynavec_langgraph.testing import ScriptedChatModel, Turn

__all__ = [
    "DEFAULT_AMOUNT",
    "DEFAULT_OPENAI_MODEL",
    "DEFAULT_RECIPIENT",
    "DEMO_SYSTEM_PROMPT",
    "DEMO_TOOLS",
    "OPENING_BALANCE",
    "TransferDecision",
    "create_demo_agent",
    "demo_model",
    "demo_policy",
    "get_balance",
    "run_time_demo_model",
    "transfer_funds",
]

DEFAULT_OPENAI_MODEL = "gpt-4.1-mini"
"""The OpenAI model the demo uses when ``OPENAI_API_KEY`` is set."""
DEFAULT_AMOUNT = 120
"""The amount the scripted demo model transfers."""
DEFAULT_RECIPIENT = "landlord"
"""The recipient the scripted demo model pays."""
OPENING_BALANCE = 1000
"""The demo ledger's balance before any transfer."""
DEMO_SYSTEM_PROMPT = (
    "You are a banking assistant. When the user asks to pay or transfer money, call "
    "get_balance, then transfer_funds with the amount and the recipient, one tool call per "
    "turn; a person approves each transfer. Then report what happened in one or two sentences."
)
"""The demo agent's system prompt."""


class TransferDecision(BaseModel):
    """A person's answer to ``approve_transfer``: the form Studio draws for the pause.

    Accepts the plain strings ``"approved"`` and ``"rejected"`` as well as the object form.

    Example:
        >>> TransferDecision.model_validate("approved").decision
        'approved'
        >>> TransferDecision.model_validate({"decision": "rejected", "comment": "too much"}).comment
        'too much'
    """

    model_config = ConfigDict(json_schema_extra={"description": "Approve or reject the transfer."})

    decision: Literal["approved", "rejected"] = Field(description="approve or reject the transfer")
    comment: str | None = Field(default=None, description="optional note for the requester")

    @model_validator(mode="before")
    @classmethod
    def _from_text(cls, value: Any) -> Any:
        if isinstance(value, Rejected) and value.message:  # a reject with a reason
            return {"decision": "rejected", "comment": value.message}
        return {"decision": value} if isinstance(value, str) else value


def _ledger() -> Path | None:
    path = os.environ.get(LEDGER_ENV)
    return Path(path) if path else None


def _thread_id() -> str | None:
    run = current_run()  # None when called directly, outside a graph run
    return None if run is None else run.thread_id


def _record(entry: dict[str, Any]) -> None:
    path = _ledger()
    if path is not None:
        line = json.dumps({"thread_id": _thread_id(), **entry}, ensure_ascii=False)
        with path.open("a", encoding="utf-8") as file:
            file.write(line + "\n")


def _balance() -> int:
    path = _ledger()
    if path is None or not path.exists():
        return OPENING_BALANCE
    entries = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    spent = sum(
        int(e["amount"])
        for e in entries
        if e.get("tool") == "transfer_funds" and e.get("decision") == "approved"
    )
    return OPENING_BALANCE - spent


@tool
def get_balance() -> str:
    """Return the account balance (read-only)."""
    result = f"Balance: {_balance()}."
    _record({"tool": "get_balance", "result": result})
    return result


@tool
def transfer_funds(amount: int, to: str = DEFAULT_RECIPIENT) -> str:
    """Transfer ``amount`` to ``to``. A person must approve the transfer first."""
    answer = interrupt(
        "approve_transfer",
        {"amount": amount, "to": to},
        response_schema=TransferDecision,
        allowed=("approve", "reject", "respond"),  # an edit of the payload is no decision here
    )
    if answer.decision == "approved":
        result = f"Transferred {amount} to {to}."
    else:
        note = f" ({answer.comment})" if answer.comment else ""
        result = f"Transfer of {amount} to {to} was rejected{note}."
    entry = {"tool": "transfer_funds", "amount": amount, "to": to, "decision": answer.decision}
    _record({**entry, "result": result})
    return result


DEMO_TOOLS: list[AgentTool] = [get_balance, transfer_funds]
"""The demo's tools: ``get_balance`` and ``transfer_funds`` (which asks for approval)."""

_AMOUNT = re.compile(r"\d+")
_RECIPIENT = re.compile(r"\bto\s+([A-Za-z][\w-]*)", re.IGNORECASE)


def _text(message: BaseMessage) -> str:
    return message.content if isinstance(message.content, str) else str(message.content)


def demo_policy(messages: list[BaseMessage]) -> Turn:
    """The scripted demo model's answer to ``messages``: one tool call per turn.

    After the latest user message: first ``get_balance``; after its answer, ``transfer_funds``
    with the first number of that message as amount (else :data:`DEFAULT_AMOUNT`) and the word
    after "to" as recipient (else :data:`DEFAULT_RECIPIENT`); after the transfer's answer, the
    final answer, reporting the tool results since that message. One call per turn keeps the
    approval the last thing in the conversation, which is where chat UIs draw it.

    Example:
        >>> demo_policy([HumanMessage("pay 30 to Bob")])
        [{'name': 'get_balance', 'args': {}}]
    """
    last_user = max((i for i, m in enumerate(messages) if isinstance(m, HumanMessage)), default=-1)
    since = messages[last_user + 1 :]
    results = [_text(m) for m in since if isinstance(m, ToolMessage)]
    called = [c["name"] for m in since if isinstance(m, AIMessage) for c in m.tool_calls]
    if not called:
        return [{"name": "get_balance", "args": {}}]
    if "transfer_funds" not in called:
        request = _text(messages[last_user]) if last_user >= 0 else ""
        amount = _AMOUNT.search(request)
        recipient = _RECIPIENT.search(request)
        return [
            {
                "name": "transfer_funds",
                "args": {
                    "amount": int(amount.group()) if amount else DEFAULT_AMOUNT,
                    "to": recipient.group(1) if recipient else DEFAULT_RECIPIENT,
                },
            }
        ]
    return "Done. " + " ".join(results)


def demo_model() -> BaseChatModel:
    """The demo's chat model, chosen now from the environment.

    ``ChatOpenAI`` (``$OPENAI_MODEL``, default :data:`DEFAULT_OPENAI_MODEL`) when
    ``OPENAI_API_KEY`` is set; otherwise ``ScriptedChatModel(policy=demo_policy)``.
    """
    if os.environ.get("OPENAI_API_KEY"):
        from langchain_openai import ChatOpenAI

        return ChatOpenAI(model=os.environ.get("OPENAI_MODEL") or DEFAULT_OPENAI_MODEL)
    return ScriptedChatModel(policy=demo_policy)


def run_time_demo_model(
    tools: list[AgentTool] | None = None,
) -> Runnable[LanguageModelInput, Any]:
    """A model that runs :func:`demo_model` (with ``tools`` bound) at each call.

    Nothing is built, and no environment variable is read, until the first call: this is the
    model of graphs created at import time, such as the one ``langgraph dev`` serves.
    """
    bound_tools = list(DEMO_TOOLS if tools is None else tools)

    def _bound() -> Runnable[LanguageModelInput, Any]:
        return demo_model().bind_tools(bound_tools)

    def call(messages: LanguageModelInput, config: RunnableConfig, **kwargs: Any) -> Any:
        return _bound().invoke(messages, config, **kwargs)

    async def acall(messages: LanguageModelInput, config: RunnableConfig, **kwargs: Any) -> Any:
        return await _bound().ainvoke(messages, config, **kwargs)

    return RunnableLambda(call, afunc=acall, name="demo_model")


def create_demo_agent(
    *, model: Any = None, checkpointer: Checkpointer = None, name: str = "dynavec_agent"
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """The demo agent as a compiled graph (``model=None``: :func:`run_time_demo_model`)."""
    return create_react_agent(
        model if model is not None else run_time_demo_model(),
        DEMO_TOOLS,
        system_prompt=DEMO_SYSTEM_PROMPT,
        checkpointer=checkpointer,
        name=name,
    )
