"""Serve an agent over AG-UI 1.0: an ASGI app a user mounts in FastAPI / Starlette, or serves
as a LangGraph server custom route (``langgraph.json``'s ``"http": {"app": ...}``).

:func:`create_agui_app` takes a compiled graph the package builds (``create_react_agent``,
``create_agent``, or a graph holding one as a node) and answers AG-UI's ``RunAgentInput`` with
the protocol's event stream (``ag_ui.core`` types, ``ag_ui.encoder.EventEncoder``):
``RUN_STARTED``, ``TEXT_MESSAGE_*`` deltas, ``TOOL_CALL_*`` events, ``TOOL_CALL_RESULT``,
``STATE_SNAPSHOT`` / ``MESSAGES_SNAPSHOT``, and ``RUN_FINISHED`` whose ``outcome`` is
``{"type": "interrupt", "interrupts": [...]}`` when the run paused (every pause of the
package: :func:`~dynavec_langgraph.interrupt`, ``require_approval``, in-doubt calls, expiring
and multi-approver approvals, parallel calls, a subagent's, with its nested path).

A resume (``RunAgentInput.resume``: ``[{interruptId, status, payload}]``, several at once) goes
through the package's guarded resume (:mod:`dynavec_langgraph._resuming`: the thread's lock,
the checks under it, each decision bound to the review digest of the pause it answers):
an unknown, stale or second answer, an expired approval, a decision the pause does not offer
or edited arguments the tool's schema refuses end with ``RUN_ERROR`` and nothing runs.

Needs the ``agui`` extra (``ag-ui-protocol``, ``starlette``). docs/approval-uis-agui.md.
"""

from __future__ import annotations

from dynavec_langgraph._agui.app import (
    AGUI_PROTOCOL_VERSION,
    Approver,
    approver_from_metadata,
    create_agui_app,
    stream_run,
)
from dynavec_langgraph._agui.pauses import interrupt_outcome

__all__ = [
    "AGUI_PROTOCOL_VERSION",
    "Approver",
    "approver_from_metadata",
    "create_agui_app",
    "interrupt_outcome",
    "stream_run",
]
