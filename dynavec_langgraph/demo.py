"""The human-in-the-loop demo agent: a money transfer that waits for a person's approval.

Used by ``dynavec-langgraph demo`` (the command line) and by ``langgraph dev`` (Studio, through
:mod:`dynavec_langgraph.studio`). Two tools:

- ``get_balance()``: read-only, never pauses;
- ``transfer_funds(amount, to)``: pauses at ``interrupt("approve_transfer", {"amount", "to"})``
  and transfers only when the decision approves it.

The decision format (one for the CLI, Studio and Python callers) is :class:`TransferDecision`:
the plain strings ``"approved"`` / ``"rejected"``, or the object
``{"decision": "approved" | "rejected", "comment": optional text}`` (the form Studio draws).

The model is chosen when it is called, never at import: ``ChatOpenAI`` (model
``$OPENAI_MODEL``, default :data:`DEFAULT_OPENAI_MODEL`) when ``OPENAI_API_KEY`` is set, else a
:class:`~dynavec_langgraph.testing.ScriptedChatModel` whose policy answers ANY user message with a
``get_balance`` call, then a ``transfer_funds`` call (amount and recipient read from the
message), one call per turn, then a final answer that reports their results.

The pause is one every approval UI answers (see docs/approval-uis.md): Studio's form,
the Agent Chat UI (LangChain 1.0 decisions, or the Accept / Ignore / Respond buttons of the
``create-agent-chat-app`` template), Agent Inbox, and the CLI. Approve / accept reach the tool as
``"approved"``, reject / ignore as ``"rejected"``, a typed response as its text.

Set ``DYNAVEC_DEMO_LEDGER`` to a file path to get an audit trail: every tool run that finishes
appends one JSON line there (``thread_id``, ``tool``, arguments, ``decision``, ``result``), and
``get_balance`` subtracts the approved transfers it lists.
"""

from __future__ import annotations

from dynavec_langgraph._demo import (
    DEFAULT_OPENAI_MODEL,
    TransferDecision,
    create_demo_agent,
    demo_model,
    demo_policy,
    get_balance,
    transfer_funds,
)
from dynavec_langgraph._names import LEDGER_ENV

__all__ = [
    "DEFAULT_OPENAI_MODEL",
    "LEDGER_ENV",
    "TransferDecision",
    "create_demo_agent",
    "demo_model",
    "demo_policy",
    "get_balance",
    "transfer_funds",
]
