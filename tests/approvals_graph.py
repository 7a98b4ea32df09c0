"""Agents with approval policies, for the ``inbox --graph`` tests of approvals in production.

``pay(amount, to)`` appends ``{"tool": "pay", "to", "decision": "ran"}`` to the ledger file
``$DYNAVEC_DEMO_LEDGER`` when it runs. ``two_approvers`` needs two of alice, bob or anyone with
the role ``finance``; ``short_deadline`` expires ``$DYNAVEC_TEST_EXPIRES_IN`` seconds (default
2) after the step that paused. The scripted model calls ``pay`` for "AMOUNT to NAME", then
answers with the tool's result. Both graphs are compiled without a checkpointer.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from langchain_core.messages import BaseMessage, HumanMessage, ToolMessage

from dynavec_langgraph import create_react_agent, tool
from dynavec_langgraph.approval import require_approval
from dynavec_langgraph.demo import LEDGER_ENV
from dynavec_langgraph.testing import ScriptedChatModel, Turn

__all__ = ["pay", "policy", "short_deadline", "two_approvers"]

_PAIR = re.compile(r"(\d+) to ([A-Za-z]+)")


@tool
def pay(amount: int, to: str) -> str:
    """Pay ``amount`` to ``to``."""
    path = os.environ.get(LEDGER_ENV)
    if path:
        with Path(path).open("a", encoding="utf-8") as file:
            file.write(json.dumps({"tool": "pay", "to": to, "decision": "ran"}) + "\n")
    return f"Paid {amount} to {to}."


def policy(messages: list[BaseMessage]) -> Turn:
    """A tool result -> the answer (its text); a user message -> one ``pay`` call."""
    if messages and isinstance(messages[-1], ToolMessage):
        return f"Done: {messages[-1].content}"
    request = next((str(m.content) for m in reversed(messages) if isinstance(m, HumanMessage)), "")
    amount, to = _PAIR.findall(request)[0]
    return [{"name": "pay", "args": {"amount": int(amount), "to": to}}]


two_approvers = create_react_agent(
    ScriptedChatModel(policy=policy),
    [require_approval(pay, approvers=["alice", "bob", "role:finance"], approvals_required=2)],
    name="pay_agent",
)
short_deadline = create_react_agent(
    ScriptedChatModel(policy=policy),
    [require_approval(pay, expires_in=float(os.environ.get("DYNAVEC_TEST_EXPIRES_IN", "2")))],
    name="pay_agent",
)
