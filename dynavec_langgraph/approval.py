"""Approve / edit / reject / respond to a tool call, from the approval UIs people use.

``require_approval(tool)`` wraps a tool so that every call pauses first. The pause is the
package's one :class:`~dynavec_langgraph.interrupt.InterruptValue` (LangChain 1.0's HITL
request, LangChain's per-call ``tool_approval`` keys, Agent Inbox's ``action_request`` /
``config`` / ``description``, dynavec's ``node_id`` / ``payload`` / ``tool_call``) with a
``response_schema`` listing the decisions allowed.

Decisions accepted (read as :func:`~dynavec_langgraph.interrupt.interrupt` reads them):
LangChain 1.0's ``{"decisions": [one decision]}``, one per-call decision, Agent Inbox's
``HumanResponse`` list, and the plain values ``"approved"`` / ``"rejected"``:

================================  ==========================================================
``{"type": "approve"}``           run the call as the model asked (Inbox: ``accept``;
                                  plain: ``"approved"``)
``{"type": "edit", ...}``         run it with the edited arguments (LangChain:
                                  ``edited_action={"name", "args"}``; Inbox:
                                  ``args={"action", "args"}``); the model is told the
                                  call was replaced (:func:`edit_notice`); arguments
                                  the tool refuses ask again
``{"type": "reject", ...}``       do not run it; the model is told, with ``message`` if given
                                  (Inbox: ``ignore``; plain: ``"rejected"``)
``{"type": "respond", ...}``      do not run it; ``message`` is the tool's result
                                  (Inbox: ``response`` with ``args`` the text)
================================  ==========================================================

Anything else, or a decision not in ``allowed``, asks the same approval again with the reason in
the new interrupt's ``error``; the call does not run.
"""

from dynavec_langgraph._errors import (
    ApproverMismatchError,
    ApproverRefusedError,
    ApproverRequiredError,
)
from dynavec_langgraph._pauses.approval import EDIT_NOTICE, edit_notice, require_approval
from dynavec_langgraph._pauses.policy.answers import approver_decision
from dynavec_langgraph._pauses.policy.events import ApprovalEvent, add_approval_listener
from dynavec_langgraph._pauses.policy.spec import EXPIRE, ApprovalPolicy

__all__ = [
    "EDIT_NOTICE",
    "EXPIRE",
    "ApprovalEvent",
    "ApprovalPolicy",
    "ApproverMismatchError",
    "ApproverRefusedError",
    "ApproverRequiredError",
    "add_approval_listener",
    "approver_decision",
    "edit_notice",
    "require_approval",
]
