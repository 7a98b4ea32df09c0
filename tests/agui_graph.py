"""Graphs and the ASGI app of the AG-UI tests (tests/test_agui.py, tests/agui_client/,
tests/agui_page/), each ``send_money`` call appending a line to ``$DYNAVEC_DEMO_LEDGER``
(tests/ui_graph.py's tool).

``app`` mounts one AG-UI endpoint per graph under ``/agents/<name>`` on the SQLite file
``$DYNAVEC_AGUI_DB`` (``uvicorn tests.agui_graph:app``), and the built CopilotKit page
``$DYNAVEC_AGUI_PAGE`` under ``/page/`` when set; the approver of a resume is the request's
``x-approver`` header (the page's "as ann" buttons), else the entry's ``metadata.approver``
(:func:`dynavec_langgraph.agui.approver_from_metadata`).
"""

from __future__ import annotations

import os
from typing import Any

from ag_ui.core import ResumeEntry
from langchain_core.messages import BaseMessage, ToolMessage
from langgraph.graph import START, MessagesState, StateGraph
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles

from dynavec_langgraph import create_react_agent
from dynavec_langgraph.agui import approver_from_metadata, create_agui_app
from dynavec_langgraph.approval import require_approval
from dynavec_langgraph.testing import ScriptedChatModel, Turn
from tests.ui_graph import ask_first, send_money

__all__ = ["EXPIRES_IN", "GRAPHS", "app", "graphs"]

EXPIRES_IN = float(os.environ.get("DYNAVEC_AGUI_EXPIRES_IN", "4"))
"""Seconds the ``expiring`` agent's approval stays open."""


def _model(calls: list[dict[str, Any]]) -> ScriptedChatModel:
    """Any user message: ``calls``; after the tools answer: ``Done: <their results>``."""

    def policy(messages: list[BaseMessage]) -> Turn:
        if isinstance(messages[-1], ToolMessage):
            results = [m.content for m in messages if isinstance(m, ToolMessage)]
            return "Done: " + " | ".join(str(r) for r in results[-len(calls) :])
        return calls

    return ScriptedChatModel(policy=policy)


ANN = {"name": "send_money", "args": {"amount": 10, "to": "Ann"}}
BOB = {"name": "send_money", "args": {"amount": 20, "to": "Bob"}}


def graphs() -> dict[str, Any]:
    """Each agent of the tests, by name (compiled without a checkpointer)."""
    approval = create_react_agent(_model([ANN]), [require_approval(send_money)], name="approval")
    worker = create_react_agent(_model([ANN]), [require_approval(send_money)], name="worker")
    parent = StateGraph(MessagesState)
    parent.add_node("worker", worker)
    parent.add_edge(START, "worker")
    return {
        "approval": approval,
        "plain": create_react_agent(
            _model([{"name": "ask_first", "args": {"amount": 7}}]), [ask_first], name="plain"
        ),
        "parallel": create_react_agent(
            _model([ANN, BOB]),
            [require_approval(send_money)],
            parallel_tool_calls=True,
            name="parallel",
        ),
        "expiring": create_react_agent(
            _model([ANN]), [require_approval(send_money, expires_in=EXPIRES_IN)], name="expiring"
        ),
        "two_approvers": create_react_agent(
            _model([ANN]),
            [require_approval(send_money, approvals_required=2, approvers=["ann", "bob", "cy"])],
            name="two_approvers",
        ),
        "subagent": parent.compile(name="subagent"),
    }


GRAPHS = sorted(graphs())


def approver(request: Request, entry: ResumeEntry) -> Any:
    """The ``x-approver`` header (what a sign-in would give), else ``metadata.approver``."""
    return request.headers.get("x-approver") or approver_from_metadata(request, entry)


def _app() -> Starlette:
    db = os.environ.get("DYNAVEC_AGUI_DB", "agui.db")
    mounts = [
        Mount(
            f"/agents/{name}",
            create_agui_app(
                graph,
                checkpointer=f"sqlite:///{db}",
                tools=[send_money],
                approver=approver,
            ),
        )
        for name, graph in graphs().items()
    ]
    page = os.environ.get("DYNAVEC_AGUI_PAGE")
    if page:
        mounts.append(Mount("/page", StaticFiles(directory=page, html=True)))
    cors = Middleware(CORSMiddleware, allow_origins=["*"], allow_methods=["*"], allow_headers=["*"])
    return Starlette(routes=mounts, middleware=[cors])


app = _app() if os.environ.get("DYNAVEC_AGUI_DB") else None
"""The app ``uvicorn tests.agui_graph:app`` serves (set ``DYNAVEC_AGUI_DB`` first)."""
