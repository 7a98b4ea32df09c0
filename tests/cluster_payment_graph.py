"""Payment agents for the two-server crash tests of ``tests/test_cluster.py``.

Any user message makes the scripted model call ``pay(amount=42)``, then answer
``"Done: <its result>"``. ``pay`` charges the fake payment service (``tests/payment_service.py``,
its URL in ``$DYNAVEC_PAYMENT_URL``) under the call's ``idempotency_key()``, appends
``{"tool": "pay", "event": "charged", "key", "charge", "replayed", "pid"}`` to the ledger
(``$DYNAVEC_DEMO_LEDGER``) and then waits until the file ``$DYNAVEC_CLUSTER_GATES/<thread_id>``
exists: the test SIGKILLs the server running it there (the charge reached the service, the tool
never returned). ``pay_retry_agent``'s tool is ``on_crash="retry"``, ``pay_ask_agent``'s
``on_crash="ask"``, ``pay_fail_agent``'s ``on_crash="fail"``; ``pay_approved_agent``'s is
``on_crash="ask"`` behind ``require_approval`` (a person approves every charge first: the
crash of issue 34's silent case 2, killed after the approval while the approved call ran).
``pay_nested_agent`` is that agent as the one node of a parent graph (``nested_graph``: its
notes name the subgraph's checkpoint, not the thread's).
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, ToolMessage
from langgraph.graph import START, MessagesState, StateGraph

from dynavec_langgraph import create_react_agent, idempotency_key, tool
from dynavec_langgraph._exactly_once.keys import OnCrash
from dynavec_langgraph.approval import require_approval
from dynavec_langgraph.testing import ScriptedChatModel, Turn
from tests.cluster_graph import GATE_TIMEOUT, GATES_ENV, _record, _thread_id
from tests.payment_service import charge

__all__ = [
    "PAYMENT_ENV",
    "approved_graph",
    "ask_graph",
    "fail_graph",
    "nested_graph",
    "retry_graph",
]

PAYMENT_ENV = "DYNAVEC_PAYMENT_URL"


def _policy(messages: list[BaseMessage]) -> Turn:
    last = messages[-1]
    if isinstance(last, HumanMessage):
        return [{"name": "pay", "args": {"amount": 42}}]
    assert isinstance(last, ToolMessage)
    return f"Done: {last.content}"


def _agent(on_crash: OnCrash, name: str, approval: bool = False) -> Any:
    @tool(on_crash=on_crash)
    def pay(amount: int) -> str:
        """Charge the card."""
        key = idempotency_key()
        result = charge(os.environ[PAYMENT_ENV], amount, key)
        _record(
            {"tool": "pay", "event": "charged", "key": key, "charge": result["id"],
             "replayed": result["replayed"]}
        )  # fmt: skip
        gate = Path(os.environ[GATES_ENV]) / _thread_id()
        deadline = time.monotonic() + GATE_TIMEOUT
        while not gate.exists():
            if time.monotonic() > deadline:
                raise TimeoutError(f"the gate {gate} was not opened")
            time.sleep(0.05)  # waiting for a file the test creates
        return f"charged {result['id']} ({amount}) key={key} replayed={result['replayed']}"

    tools = [require_approval(pay) if approval else pay]
    return create_react_agent(
        ScriptedChatModel(policy=_policy), tools, system_prompt=None, name=name
    )


retry_graph = _agent("retry", "pay_retry_agent")
ask_graph = _agent("ask", "pay_ask_agent")
fail_graph = _agent("fail", "pay_fail_agent")
approved_graph = _agent("ask", "pay_approved_agent", approval=True)


def _nested() -> Any:
    """A parent graph whose one node is ``pay_approved_agent``'s agent (a subgraph)."""
    parent = StateGraph(MessagesState)  # a TypedDict of this module: Aegra 0.6.0 fails to
    # resolve its postponed annotations ("name 'Annotated' is not defined")
    parent.add_node("payments", _agent("ask", "pay_nested_inner", approval=True))
    parent.add_edge(START, "payments")
    return parent.compile(name="pay_nested_agent")


nested_graph = _nested()
