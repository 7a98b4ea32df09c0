"""The graph ``langgraph dev`` serves (see ``langgraph.json``): the demo agent for Studio.

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

from dynavec_langgraph.demo import create_demo_agent

__all__ = ["graph"]

graph = create_demo_agent(name="dynavec_agent")
"""The demo agent: nodes ``agent`` and ``tools``, tools ``get_balance`` and ``transfer_funds``."""
