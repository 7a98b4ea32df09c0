"""An agent that is not the demo, for the ``inbox --graph`` tests.

Tools ``lookup(to)`` (read-only) and ``wire(amount, to)``, which pauses at
``interrupt("approve_wire", {"amount", "to"})``; each run that finishes appends
``{"tool", "to", "decision"}`` to the ledger file ``$DYNAVEC_DEMO_LEDGER`` (the one the CLI
tests read). The scripted model turns a message such as "wire 5 to Ann and 7 to Bo" into a
``lookup`` call and one ``wire`` call per "AMOUNT to NAME", then answers with the results.

``graph`` runs the calls of a turn one at a time; ``parallel_graph`` runs them at once, so
several approvals can be pending. Both are compiled without a checkpointer.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from dynavec_langgraph import create_react_agent, interrupt, tool
from dynavec_langgraph.demo import LEDGER_ENV
from dynavec_langgraph.testing import ScriptedChatModel, Turn

__all__ = ["graph", "lookup", "parallel_graph", "policy", "wire"]

_PAIR = re.compile(r"(\d+) to ([A-Za-z]+)")


def _record(entry: dict[str, Any]) -> None:
    path = os.environ.get(LEDGER_ENV)
    if path:
        with Path(path).open("a", encoding="utf-8") as file:
            file.write(json.dumps(entry) + "\n")


@tool
def lookup(to: str) -> str:
    """Look up a payee (read-only)."""
    _record({"tool": "lookup", "to": to, "decision": None})
    return f"{to} is a known payee."


@tool
def wire(amount: int, to: str) -> str:
    """Wire ``amount`` to ``to`` once a person approves."""
    decision = interrupt("approve_wire", {"amount": amount, "to": to})
    _record({"tool": "wire", "to": to, "decision": decision})
    return f"Wired {amount} to {to}." if decision == "approved" else f"Wire to {to} refused."


def policy(messages: list[BaseMessage]) -> Turn:
    """Tool results -> the answer; a user message -> ``lookup`` and one ``wire`` per pair."""
    if messages and isinstance(messages[-1], ToolMessage):
        results: list[str] = []
        for m in reversed(messages):
            if isinstance(m, AIMessage):
                break
            results.insert(0, str(m.content))
        return "Wired. " + " ".join(results)
    request = next((str(m.content) for m in reversed(messages) if isinstance(m, HumanMessage)), "")
    pairs = _PAIR.findall(request)
    return [{"name": "lookup", "args": {"to": pairs[0][1] if pairs else "nobody"}}] + [
        {"name": "wire", "args": {"amount": int(amount), "to": to}} for amount, to in pairs
    ]


graph = create_react_agent(ScriptedChatModel(policy=policy), [lookup, wire], name="wire_agent")
parallel_graph = create_react_agent(
    ScriptedChatModel(policy=policy), [lookup, wire], name="wire_agent", parallel_tool_calls=True
)
