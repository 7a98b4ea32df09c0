"""An agent whose transfer approval expires two seconds after it pauses, for
``tests/test_approval_links.py`` (a link that arrives after the pause expired is refused and
changes nothing). ``transfer`` and its ledger are ``tests/signed_in_graph.py``'s; the
scripted model calls it for "AMOUNT to NAME", then answers with its result."""

from __future__ import annotations

import re

from langchain_core.messages import BaseMessage, HumanMessage, ToolMessage

from dynavec_langgraph import create_react_agent
from dynavec_langgraph.approval import require_approval
from dynavec_langgraph.testing import ScriptedChatModel, Turn
from tests.signed_in_graph import transfer

__all__ = ["expiring"]


def _turn(messages: list[BaseMessage]) -> Turn:
    if messages and isinstance(messages[-1], ToolMessage):
        return f"Done: {messages[-1].content}"
    request = next((str(m.content) for m in reversed(messages) if isinstance(m, HumanMessage)), "")
    amount, to = re.findall(r"(\d+) to ([A-Za-z]+)", request)[0]
    return [{"name": "transfer", "args": {"amount": int(amount), "to": to}}]


expiring = create_react_agent(
    ScriptedChatModel(policy=_turn),
    [require_approval(transfer, approvers=["alice", "bob"], expires_in=2)],
    name="transfer_agent",
)
