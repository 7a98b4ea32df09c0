"""Agents whose transfers need approvers, for ``tests/test_approvals_auth_server.py`` (a
``langgraph dev`` server with custom auth, where the signed-in user is the approver).

``transfer(amount, to)`` appends ``{"tool": "transfer", "to", "amount", "package"}`` to the
ledger file ``$DYNAVEC_DEMO_LEDGER`` each time it runs (``package``: the file of the
``dynavec_langgraph`` the server imported). ``alice_or_bob`` needs one approval of alice or
bob; ``two_signed_in`` needs two distinct users holding the permission ``payments:approve``;
``async_interrupt``'s ``atransfer`` is an async tool asking alice with a plain
``interrupt(..., approvers=["alice"])`` (on the server's event loop, where the signed-in user
cannot be bound: every answer is refused, saying so).
For ``tests/test_auth_scope.py``: ``owners_approve`` needs one approval of a user holding
``payments:approve`` for an async transfer (``require_approval`` around an async tool;
``async_approval``: the same, anyone approves);
``async_pause``'s ``apay`` is an async tool pausing with a plain ``interrupt()`` (no
approvers: anyone who may resume the thread answers), and ``audited_async_pause`` is the same
graph recording the audit trail itself (``with_config``, not the run's config).
The scripted model calls ``transfer`` for "AMOUNT to NAME", then answers with its result. The
graphs are compiled without a checkpointer (the server gives its own, and its store).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from langchain_core.messages import BaseMessage, HumanMessage, ToolMessage

import dynavec_langgraph
from dynavec_langgraph import create_react_agent, interrupt, tool
from dynavec_langgraph.approval import require_approval
from dynavec_langgraph.audit import AUDIT_KEY
from dynavec_langgraph.demo import LEDGER_ENV
from dynavec_langgraph.testing import ScriptedChatModel, Turn

__all__ = [
    "alice_or_bob",
    "apay",
    "async_approval",
    "async_interrupt",
    "async_pause",
    "atransfer",
    "audited_async_pause",
    "owners_approve",
    "transfer",
    "two_signed_in",
]

_PAIR = re.compile(r"(\d+) to ([A-Za-z]+)")


def _record(to: str, amount: int) -> None:
    path = os.environ.get(LEDGER_ENV)
    if path:
        entry = {"tool": "transfer", "to": to, "amount": amount}
        entry["package"] = dynavec_langgraph.__file__
        with Path(path).open("a", encoding="utf-8") as file:
            file.write(json.dumps(entry) + "\n")


@tool
def transfer(amount: int, to: str) -> str:
    """Transfer ``amount`` to ``to``."""
    _record(to, amount)
    return f"Transferred {amount} to {to}."


@tool("transfer")
async def atransfer(amount: int, to: str) -> str:
    """Transfer ``amount`` to ``to`` once alice approved."""
    answer = interrupt("approve_transfer", {"amount": amount, "to": to}, approvers=["alice"])
    if answer != "approved":
        return f"Not approved ({answer})."
    _record(to, amount)
    return f"Transferred {amount} to {to}."


@tool("transfer")
async def apay(amount: int, to: str) -> str:
    """Transfer ``amount`` to ``to`` once someone answered "approved"."""
    answer = interrupt("approve_transfer", {"amount": amount, "to": to})
    if answer != "approved":
        return f"Not approved ({answer})."
    _record(to, amount)
    return f"Transferred {amount} to {to}."


@tool("transfer")
async def _aplain(amount: int, to: str) -> str:
    """Transfer ``amount`` to ``to``."""
    _record(to, amount)
    return f"Transferred {amount} to {to}."


def _policy(messages: list[BaseMessage]) -> Turn:
    """A tool result -> the answer (its text); a user message -> one ``transfer`` call."""
    if messages and isinstance(messages[-1], ToolMessage):
        return f"Done: {messages[-1].content}"
    request = next((str(m.content) for m in reversed(messages) if isinstance(m, HumanMessage)), "")
    amount, to = _PAIR.findall(request)[0]
    return [{"name": "transfer", "args": {"amount": int(amount), "to": to}}]


alice_or_bob = create_react_agent(
    ScriptedChatModel(policy=_policy),
    [require_approval(transfer, approvers=["alice", "bob"])],
    name="transfer_agent",
)
two_signed_in = create_react_agent(
    ScriptedChatModel(policy=_policy),
    [require_approval(transfer, approvers=["permission:payments:approve"], approvals_required=2)],
    name="transfer_agent",
)
async_interrupt = create_react_agent(
    ScriptedChatModel(policy=_policy), [atransfer], name="transfer_agent"
)
owners_approve = create_react_agent(
    ScriptedChatModel(policy=_policy),
    [require_approval(_aplain, approvers=["permission:payments:approve"])],
    name="transfer_agent",
)
async_approval = create_react_agent(
    ScriptedChatModel(policy=_policy), [require_approval(_aplain)], name="transfer_agent"
)
async_pause = create_react_agent(ScriptedChatModel(policy=_policy), [apay], name="transfer_agent")
audited_async_pause = async_pause.with_config({"configurable": {AUDIT_KEY: True}})
