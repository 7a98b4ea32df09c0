"""The graphs ``langgraph dev`` serves (see ``langgraph.json``): the demo agent for Studio
(``graph``) and a dynavec workflow graph (``flow``).

Compiled without a checkpointer (the LangGraph server brings its own). The model is chosen at
each model call, never at import: ``ChatOpenAI`` when ``OPENAI_API_KEY`` is set, else the
scripted demo model, with which any user message checks the balance, then asks to approve a
transfer (one tool call per turn).

Answer the pause in Studio with the form it draws (``{"decision": "approved"}``), send
``Command(resume="approved")`` / ``"rejected"``
(see :class:`~dynavec_langgraph.demo.TransferDecision`), or answer it from the Agent Chat UI or
Agent Inbox pointed at this server: every pause carries their fields and their decisions are
read (see docs/approval-uis.md).
"""

from __future__ import annotations

from typing import Any

from dynavec_langgraph._demo import create_demo_agent
from dynavec_langgraph._dynavec.flow.graph import AgentGraph
from dynavec_langgraph._dynavec.flow.parts import GraphState, append_reducer
from dynavec_langgraph.interrupt import interrupt

__all__ = ["flow", "graph"]

graph = create_demo_agent(name="dynavec_agent")
"""The demo agent: nodes ``agent`` and ``tools``, tools ``get_balance`` and ``transfer_funds``."""


def _review(state: GraphState) -> dict[str, Any]:
    return {"needs_approval": state.get("amount", 0) > 100, "log": ["review"]}


def _approve(state: GraphState) -> dict[str, Any]:
    decision = interrupt("approve_expense", {"amount": state.get("amount", 0)})
    return {"decision": decision, "log": ["approve"]}


def _book(state: GraphState) -> dict[str, Any]:
    return {"booked": state.get("decision", "approved") == "approved", "log": ["book"]}


flow = (
    AgentGraph("dynavec_flow", description="Expense booking: over 100 asks for approval")
    .add_node("review", _review)
    .add_node("approve", _approve)
    .add_node("book", _book)
    .add_edge("review", "approve", condition="needs_approval == True")
    .add_edge("review", "book", condition="needs_approval == False")
    .add_edge("approve", "book")
    .set_entry("review")
    .compile(reducers={"log": append_reducer})
)
"""A dynavec ``AgentGraph`` compiled for Studio: input ``{"flow_state": {"amount": 250}}``;
over 100 it pauses at ``approve_expense`` (answer ``"approved"`` / ``"rejected"``); the output
has ``flow_state`` and ``flow_result`` (dynavec's ``GraphResult.to_dict()``)."""
