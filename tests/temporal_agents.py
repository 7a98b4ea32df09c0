"""The agent the Temporal tests' workers run (``--agent tests.temporal_agents:build``).

Every worker process builds it with the same PostgreSQL database (``DYNAVEC_TEMPORAL_DB``), so
any worker can run any segment of any thread. The scripted model picks the tool from the
goal's first word (``"pay 42"`` -> ``pay(amount=42)``); each tool charges the fake payment
service (``DYNAVEC_TEMPORAL_PAYMENTS``, tests/payment_service.py) under ``idempotency_key()``
and answers ``"charged <id> (<amount>) key=<key>"``; the final answer is ``"Done: <result>"``.

* ``pay``: approval by anyone; ``on_crash="retry"``.
* ``askpay`` / ``failpay``: approval by anyone; ``on_crash="ask"`` / ``"fail"``.
* ``wire``: two of alice, bob and carol must approve.
* ``quick``: an approval that expires after ``DYNAVEC_TEMPORAL_EXPIRES`` seconds (default 2),
  rejected then.
* ``charge``: no approval (``on_crash="retry"``): a run whose one segment charges.
* ``noted``: no approval and no charge (a run that completes in one segment).

With a file ``<DYNAVEC_TEMPORAL_GATE>/hang`` present, the next charge removes it, writes
``<gate>/charged`` (holding the worker's identity) once the service answered, and hangs: the
test SIGKILLs that worker there.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, ToolMessage

from dynavec_langgraph import ReActAgent, idempotency_key, tool
from dynavec_langgraph.approval import require_approval
from dynavec_langgraph.testing import ScriptedChatModel, Turn
from tests.payment_service import charge

TOOLS = ("pay", "askpay", "failpay", "wire", "quick", "charge", "noted")


def policy(messages: list[BaseMessage]) -> Turn:
    """One tool call for the goal, then the answer naming the tool's result."""
    last = messages[-1]
    if isinstance(last, HumanMessage):
        name, _, amount = str(last.content).partition(" ")
        return [{"name": name, "args": {"amount": int(amount or 1)}}]
    assert isinstance(last, ToolMessage)
    return f"Done: {last.content}"


def _work(amount: int) -> str:
    key = idempotency_key()
    result = charge(os.environ["DYNAVEC_TEMPORAL_PAYMENTS"], amount, key)
    gate = Path(os.environ.get("DYNAVEC_TEMPORAL_GATE", "/nonexistent"))
    try:
        (gate / "hang").unlink()
    except FileNotFoundError:
        pass
    else:
        written = gate / "charged.part"
        written.write_text(os.environ.get("DYNAVEC_TEMPORAL_IDENTITY", str(os.getpid())))
        written.rename(gate / "charged")
        time.sleep(3600)  # SIGKILLed here: the charge went out, the tool never returns
    return f"charged {result['id']} ({amount}) key={key}"


def _tools() -> list[Any]:
    @tool(on_crash="retry")
    def pay(amount: int) -> str:
        """Charge the card."""
        return _work(amount)

    @tool(on_crash="ask")
    def askpay(amount: int) -> str:
        """Charge the card; asked again after a crash."""
        return _work(amount)

    @tool(on_crash="fail")
    def failpay(amount: int) -> str:
        """Charge the card; stopped after a crash."""
        return _work(amount)

    @tool()
    def wire(amount: int) -> str:
        """Wire money; two approvers."""
        return _work(amount)

    @tool()
    def quick(amount: int) -> str:
        """A charge whose approval expires."""
        return _work(amount)

    @tool(on_crash="retry")
    def charge(amount: int) -> str:
        """Charge the card, no approval."""
        return _work(amount)

    @tool()
    def noted(amount: int) -> str:
        """Write a note; no approval."""
        return f"noted {amount}"

    expires = float(os.environ.get("DYNAVEC_TEMPORAL_EXPIRES", "2"))
    return [
        require_approval(pay),
        require_approval(askpay),
        require_approval(failpay),
        require_approval(wire, approvers=["alice", "bob", "carol"], approvals_required=2),
        require_approval(quick, expires_in=expires, on_expire="rejected"),
        charge,
        noted,
    ]


def build() -> ReActAgent:
    """The agent on the shared PostgreSQL database."""
    return ReActAgent(
        ScriptedChatModel(policy=policy),
        tools=_tools(),
        checkpointer=os.environ["DYNAVEC_TEMPORAL_DB"],
    )
