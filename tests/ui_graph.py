"""Graphs for the approval-UI tests (tests/test_approval_ui_gaps.py, tests/test_browser.py),
served by ``langgraph dev`` from ``tests/langgraph_ui.json`` beside the demo.

- ``ui_agent``: ``send_money(amount: int, to: str)`` behind ``require_approval`` with every
  decision allowed (so the UIs draw Edit fields). Any user message makes the scripted model
  ask for ``send_money(amount=10, to="Ann")``; after the tool answers, the model repeats it as
  ``"Done: <the tool message>"``, so the test sees what the model was told.
- ``plain_agent``: ``ask_first(amount: int)`` pauses at a plain ``interrupt("approve_plain",
  {"amount"})`` and returns what it received, with a reject's reason.
- ``expiring_agent``: ``send_money`` behind ``require_approval(expires_in=EXPIRES_IN)`` (a real
  deadline of a few seconds, counted from the tool's step): an answer after it settles the
  approval as expired and the tool never runs.
- ``two_approver_agent``: ``send_money`` behind ``require_approval(approvals_required=2,
  approvers=APPROVERS)``: an answer without an approver is asked again; two named approvers
  let it run.
- ``parallel_agent``: one model turn asks for ``send_money`` twice (10 to Ann, 20 to Bob),
  run concurrently (``parallel_tool_calls=True``): two pauses pending at once.

Every finished ``send_money`` / ``ask_first`` run appends a line to ``$DYNAVEC_DEMO_LEDGER``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from langchain_core.messages import BaseMessage, ToolMessage
from langgraph.config import get_config

from dynavec_langgraph import create_react_agent, interrupt, tool
from dynavec_langgraph.approval import require_approval
from dynavec_langgraph.demo import LEDGER_ENV
from dynavec_langgraph.testing import ScriptedChatModel, Turn

__all__ = [
    "APPROVERS",
    "EXPIRES_IN",
    "ask_first",
    "expiring_graph",
    "graph",
    "parallel_graph",
    "plain_graph",
    "send_money",
    "two_approver_graph",
]

EXPIRES_IN = 10.0
"""Seconds ``expiring_agent``'s approval stays open (from the step the tool runs in)."""


APPROVERS = ("alice", "bob", "role:treasurer")
"""Who may approve ``two_approver_agent``'s transfer."""


def _record(entry: dict[str, Any]) -> None:
    path = os.environ.get(LEDGER_ENV)
    if path:
        thread_id = (get_config().get("configurable") or {}).get("thread_id")
        line = json.dumps({"thread_id": thread_id, **entry})
        with Path(path).open("a", encoding="utf-8") as file:
            file.write(line + "\n")


@tool
def send_money(amount: int, to: str) -> str:
    """Send ``amount`` to ``to``."""
    _record({"tool": "send_money", "amount": amount, "to": to})
    return f"sent {amount} to {to}"


@tool
def ask_first(amount: int) -> str:
    """Pause at a plain interrupt; report what the reviewer decided."""
    decision = interrupt("approve_plain", {"amount": amount})
    reason = getattr(decision, "message", None)
    _record({"tool": "ask_first", "decision": str(decision), "reason": reason})
    return f"decision={decision} reason={reason}"


def _policy(tool_name: str, args: dict[str, Any]) -> Any:
    def policy(messages: list[BaseMessage]) -> Turn:
        if isinstance(messages[-1], ToolMessage):
            return f"Done: {messages[-1].content}"
        return [{"name": tool_name, "args": args}]

    return policy


graph = create_react_agent(
    ScriptedChatModel(policy=_policy("send_money", {"amount": 10, "to": "Ann"})),
    [require_approval(send_money)],
    name="ui_agent",
)
"""``send_money`` behind ``require_approval`` (approve, edit, reject, respond)."""

plain_graph = create_react_agent(
    ScriptedChatModel(policy=_policy("ask_first", {"amount": 7})), [ask_first], name="plain_agent"
)
"""``ask_first`` with a plain ``interrupt()``."""

expiring_graph = create_react_agent(
    ScriptedChatModel(policy=_policy("send_money", {"amount": 10, "to": "Ann"})),
    [require_approval(send_money, expires_in=EXPIRES_IN)],
    name="expiring_agent",
)
"""``send_money`` behind an approval that expires ``EXPIRES_IN`` seconds after its step."""

two_approver_graph = create_react_agent(
    ScriptedChatModel(policy=_policy("send_money", {"amount": 10, "to": "Ann"})),
    [require_approval(send_money, approvals_required=2, approvers=list(APPROVERS))],
    name="two_approver_agent",
)
"""``send_money`` behind an approval that needs two distinct named approvers."""


def _two_calls(messages: list[BaseMessage]) -> Turn:
    if isinstance(messages[-1], ToolMessage):
        return f"Done: {len([m for m in messages if isinstance(m, ToolMessage)])} answers"
    return [
        {"name": "send_money", "args": {"amount": 10, "to": "Ann"}},
        {"name": "send_money", "args": {"amount": 20, "to": "Bob"}},
    ]


parallel_graph = create_react_agent(
    ScriptedChatModel(policy=_two_calls),
    [require_approval(send_money)],
    name="parallel_agent",
    parallel_tool_calls=True,
)
"""Two ``send_money`` calls of one turn, each behind ``require_approval``, paused at once."""
