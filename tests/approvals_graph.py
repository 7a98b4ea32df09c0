"""Agents with approval policies, for the ``inbox --graph`` tests of approvals in production.

``pay(amount, to)`` appends ``{"tool": "pay", "to", "decision": "ran"}`` to the ledger file
``$DYNAVEC_DEMO_LEDGER`` when it runs. ``two_approvers`` needs two of alice, bob or anyone with
the role ``finance``; ``short_deadline`` expires ``$DYNAVEC_TEST_EXPIRES_IN`` seconds (default
2) after the step that paused. The scripted model calls ``pay`` for "AMOUNT to NAME", then
answers with the tool's result. ``configured`` needs ``$DYNAVEC_TEST_REQUIRED`` (default 1) of
alice, bob or carol, by a rule that raises while ``$DYNAVEC_TEST_RULE_DOWN`` is set. ``expiring``
asks approvals whose policy says
``on_expire="raise"``: ``pay`` through ``require_approval`` (expiring ``$DYNAVEC_TEST_RAISE_IN``
seconds, default 3, after its step) and ``refund`` through a plain ``interrupt()`` expiring
``within`` seconds (an argument: "refund AMOUNT to NAME within SECONDS"); ``refund`` appends
``{"tool": "refund", "to", "decision": "ran"}`` when approved. The graphs are compiled without a
checkpointer.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, ToolMessage

from dynavec_langgraph import AgentTool, create_react_agent, interrupt, tool
from dynavec_langgraph.approval import require_approval
from dynavec_langgraph.demo import LEDGER_ENV
from dynavec_langgraph.testing import ScriptedChatModel, Turn

__all__ = [
    "RAISE_IN",
    "REQUIRED_ENV",
    "RULE_DOWN_ENV",
    "configured",
    "directory_rule",
    "expiring",
    "expiring_policy",
    "expiring_tools",
    "pay",
    "policy",
    "refund",
    "short_deadline",
    "two_approvers",
]

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


RAISE_IN = int(os.environ.get("DYNAVEC_TEST_RAISE_IN", "3"))
"""Seconds ``expiring``'s ``pay`` approval lasts after its step."""
_REFUND = re.compile(r"refund (\d+) to ([A-Za-z]+) within (\d+)")


@tool
def refund(amount: int, to: str, within: int) -> str:
    """Refund ``amount`` to ``to`` once approved (the approval expires after ``within`` s)."""
    answer = interrupt(
        "approve_refund", {"amount": amount, "to": to}, expires_in=within, on_expire="raise"
    )
    if answer != "approved":
        return f"Refund to {to} not approved ({answer})."
    path = os.environ.get(LEDGER_ENV)
    if path:
        with Path(path).open("a", encoding="utf-8") as file:
            file.write(json.dumps({"tool": "refund", "to": to, "decision": "ran"}) + "\n")
    return f"Refunded {amount} to {to}."


def expiring_policy(messages: list[BaseMessage]) -> Turn:
    """A tool result -> the answer; "refund A to N within S" -> ``refund``; else ``pay``."""
    if messages and isinstance(messages[-1], ToolMessage):
        return f"Done: {messages[-1].content}"
    request = next((str(m.content) for m in reversed(messages) if isinstance(m, HumanMessage)), "")
    found = _REFUND.findall(request)
    if found:
        amount, to, within = found[0]
        args = {"amount": int(amount), "to": to, "within": int(within)}
        return [{"name": "refund", "args": args}]
    return policy(messages)


def expiring_tools() -> list[AgentTool]:
    """``expiring``'s tools: ``pay`` behind an approval expiring after :data:`RAISE_IN`
    seconds with ``on_expire="raise"``, and ``refund``."""
    return [require_approval(pay, expires_in=RAISE_IN, on_expire="raise"), refund]


expiring = create_react_agent(
    ScriptedChatModel(policy=expiring_policy), expiring_tools(), name="pay_agent"
)


RULE_DOWN_ENV = "DYNAVEC_TEST_RULE_DOWN"
"""Set: ``configured``'s approver rule raises ``ConnectionError`` (an approver directory down)."""
REQUIRED_ENV = "DYNAVEC_TEST_REQUIRED"
"""``configured``'s ``approvals_required`` (default 1): a deploy that changes it."""


def directory_rule(approver: Mapping[str, Any], pause: Mapping[str, Any]) -> bool:
    """Alice, bob and carol may approve; raises while ``$DYNAVEC_TEST_RULE_DOWN`` is set."""
    if os.environ.get(RULE_DOWN_ENV):
        raise ConnectionError("the approver directory is down")
    return approver["name"] in ("alice", "bob", "carol")


configured = create_react_agent(
    ScriptedChatModel(policy=policy),
    [
        require_approval(
            pay,
            approvers=directory_rule,
            approvals_required=int(os.environ.get(REQUIRED_ENV, "1")),
        )
    ],
    name="pay_agent",
)
