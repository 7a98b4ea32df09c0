"""Every name the package writes where others read it, in one place: its wire names.

A wire name is a string another party reads: a user's config or environment, a LangGraph API
server or Studio, a store or checkpoint written by one version and read by the next, a Temporal
server. Changing one breaks what was stored or deployed, so each is written once, here, grouped
by kind; the modules that use them import them from this module. LangGraph's own names, which
the package only reads, stay in :mod:`dynavec_langgraph._lg_names`.

Three names share the string ``"dynavec_audit"`` and two ``"dynavec_in_doubt"`` on purpose:
each lives in its own space (a config key, a checkpoint namespace, a task id; a config key, a
store namespace), so they are separate names with separate meanings, and neither may change
without the other's stored data being read again.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "AGENT_NODE",
    "ANSWERED_BY_NS",
    "ANSWERS_TAG_PREFIX",
    "APPROVAL_POINT_KEY",
    "APPROVER_KEY",
    "ASKS_KEY",
    "AUDIT_ENV",
    "AUDIT_KEY",
    "AUDIT_NS",
    "AUDIT_SLOT_PREFIX",
    "CLAIM_CHANNEL",
    "CLAIM_PREFIX",
    "COMPLETED_CALLS_KEY",
    "CREATE_AGENT_MODEL_NODE",
    "ENTRY_META_KEY",
    "ENTRY_TASK",
    "EVENT_ID_KEY",
    "EXPIRED_KEY",
    "FLOW_CONTEXT_KEY",
    "IDEMPOTENCY_KEY",
    "IN_DOUBT_KEY",
    "LEDGER_ENV",
    "LINK_BASE_URL_ENV",
    "LINK_KEY",
    "LINK_KEYS_ENV",
    "LINK_PATH",
    "MODEL_KWARGS_KEY",
    "NOTE_NS",
    "NOTIFY_ACTIVITY",
    "NOTIFY_ENV",
    "NOTIFY_KEY",
    "NOTIFY_WORKFLOW_ID_PREFIX",
    "NOTIFY_WORKFLOW_NAME",
    "ORIGINAL_CALL_IDS_KEY",
    "OUTBOX_NS",
    "PLAIN_APPROVER_KEY",
    "POLICY_KEY",
    "PROG",
    "REVIEWED_KEY",
    "SEGMENT_ACTIVITY",
    "SEQ_KEY",
    "START_CHANNEL",
    "START_PREFIX",
    "SURFACE_KEY",
    "THREAD_WORKFLOW_ID_PREFIX",
    "TOKEN_ENV",
    "TOOLS_METADATA_KEY",
    "TOOLS_NODE",
    "WORKFLOW_NAME",
]

# -- config["configurable"] keys: what a caller sets on a run --------------------------------

AUDIT_KEY: Final = "dynavec_audit"
"""``config["configurable"][AUDIT_KEY] = True`` records the graph's decisions and pauses."""
NOTIFY_KEY: Final = "dynavec_notify"
"""``config["configurable"][NOTIFY_KEY]``: a webhook URL or a callable, called for every pause."""
SURFACE_KEY: Final = "dynavec_surface"
"""``config["configurable"][SURFACE_KEY]``: which surface answers (``api``, ``cli``, ...)."""
APPROVER_KEY: Final = "dynavec_approver"
"""``config["configurable"][APPROVER_KEY]``: who answers (also read from the decision)."""
PLAIN_APPROVER_KEY: Final = "approver"
"""``config["configurable"]["approver"]``: who answers, for a raw graph resumed with a plain
decision (the resume value's envelope, ``_pauses/policy/answers.approver_decision``, wins)."""
MODEL_KWARGS_KEY: Final = "dynavec_model_kwargs"
"""``config["configurable"][MODEL_KWARGS_KEY]``: extra keyword arguments for the model call."""
COMPLETED_CALLS_KEY: Final = "dynavec_completed_calls"
"""``config["configurable"][COMPLETED_CALLS_KEY]``: a dict the caller owns, ``{call id:
CompletedCall}``. The tool node records each call that ran there before LangGraph saves its
result, and answers a call found there from the record instead of running it again. So when
saving fails after a tool ran (database down, disk read-only), the caller knows which calls ran,
and a retry with the same dict does not repeat them. ``ReActAgent`` keeps one per thread."""
IN_DOUBT_KEY: Final = "dynavec_in_doubt"
"""``config["configurable"][IN_DOUBT_KEY] = {call_id: "retry" | "skip"}``: settles in-doubt
calls of ``on_crash="fail"`` tools on the next run (run again with the same key / answer as
not run again)."""
IDEMPOTENCY_KEY: Final = "dynavec_idempotency_key"
"""``config["configurable"][IDEMPOTENCY_KEY]``: the running call's key, in the config a
LangChain tool gets (``ToolRuntime.config``, a ``config: RunnableConfig`` parameter)."""
FLOW_CONTEXT_KEY: Final = "dynavec_flow_context"
"""``config["configurable"]`` key of the in-process context of one invocation of dynavec's
graph engine (``_dynavec/flow``)."""

# -- environment variables -------------------------------------------------------------------

AUDIT_ENV: Final = "DYNAVEC_AUDIT"
"""``DYNAVEC_AUDIT=1`` records every graph's decisions (for a server deployment)."""
NOTIFY_ENV: Final = "DYNAVEC_NOTIFY_URL"
"""``DYNAVEC_NOTIFY_URL=https://...``: the webhook of every graph (for a server deployment)."""
LINK_KEYS_ENV: Final = "DYNAVEC_LINK_KEYS"
"""The environment variable holding the deployment's link keys: ``KEY_ID=SECRET`` pairs
separated by commas, the current (signing) key first, e.g. ``2026-12=...,2026-06=...``."""
LINK_BASE_URL_ENV: Final = "DYNAVEC_LINK_BASE_URL"
"""The environment variable with the server's public URL: when it and :data:`LINK_KEYS_ENV` are
set, each pause notification carries signed links for the pause's named approvers."""
TOKEN_ENV: Final = "DYNAVEC_SERVER_TOKEN"
"""The bearer token ``inbox ... --server`` sends when ``--token`` is not given."""
LEDGER_ENV: Final = "DYNAVEC_DEMO_LEDGER"
"""The environment variable naming the demo ledger's file."""

# -- resume values: what an answer carries -----------------------------------------------------

LINK_KEY: Final = "dynavec_link"
"""The resume value of a link: ``{"dynavec_link": TOKEN}``."""
EXPIRED_KEY: Final = "dynavec_expired"
"""The answer that settles an expired pause: ``{EXPIRED_KEY: True}``, and nothing else."""

# -- store and checkpoint namespaces ---------------------------------------------------------

AUDIT_NS: Final = "dynavec_audit"
"""The checkpoint namespace (or store namespace prefix) of the audit trail."""
OUTBOX_NS: Final = "dynavec_outbox"
"""The checkpoint namespace (or store namespace prefix) of the notification outbox."""
ANSWERED_BY_NS: Final = "dynavec_answered_by"
"""The store namespace of the entries saying who gave each answer (on servers with auth)."""
USED_NS: Final = "dynavec_links_used"
"""The store namespace binding each used token's nonce to the answer that used it."""
NOTE_NS: Final = "dynavec_in_doubt"
"""The store namespace ``(NOTE_NS, thread_id)`` of the notes of running ``"ask"`` calls."""

# -- what stored checkpoints hold: task ids, channels, metadata keys, slots ------------------

ENTRY_TASK: Final = "dynavec_audit"
"""The task id of the pending write holding a chained entry on a checkpointer."""
ENTRY_META_KEY: Final = "dynavec_entry"
"""The metadata key of an outbox entry (and of an audit entry written before the chain), and
the channel of the pending write holding a chained audit entry."""
EVENT_ID_KEY: Final = "dynavec_event_id"
"""The metadata key of an audit or outbox checkpoint's event id."""
SEQ_KEY: Final = "dynavec_seq"
"""The metadata key of a chained audit checkpoint's sequence number."""
AUDIT_SLOT_PREFIX: Final = "dynavec-audit-"
"""Chained entry ``n`` lives on the checkpoint ``f"{AUDIT_SLOT_PREFIX}{n:012d}"`` of
:data:`AUDIT_NS`."""
CLAIM_CHANNEL: Final = "__dynavec_claim__"
"""The channel of the claim writes (no channel of the graph has this name)."""
CLAIM_PREFIX: Final = "dynavec-claim:"
"""The prefix of a claim write's task id: ``f"{CLAIM_PREFIX}{call_id}:{answered}:{attempt}"``."""
START_CHANNEL: Final = "__dynavec_started__"
"""The channel of the start / end marks (no channel of the graph has this name)."""
START_PREFIX: Final = "dynavec-start:"
"""The prefix of a start / end mark's task id: ``f"{START_PREFIX}{key}:..."``."""

# -- metadata, state keys and tags others read -----------------------------------------------

TOOLS_METADATA_KEY: Final = "dynavec_tools"
"""``graph.config["metadata"][TOOLS_METADATA_KEY]``: the names of the graph's tools (a list,
so it is never copied into checkpoint metadata)."""
ORIGINAL_CALL_IDS_KEY: Final = "dynavec_original_tool_call_ids"
"""``AIMessage.response_metadata[ORIGINAL_CALL_IDS_KEY]``: ``{new id: the provider's id}`` for
the calls of that message whose id was replaced (see ``_graph/call_ids.unique_call_ids``)."""
POLICY_KEY: Final = "dynavec_approval_policy"
"""``tool.metadata[POLICY_KEY]``: the approval policy the agent attached to an ``AgentTool``
(``approval_policy=``, ``_tools/policies.attach_policy``), read by
``_pauses/policy/scope.policy_scope``."""
APPROVAL_POINT_KEY: Final = "dynavec_approval_point"
"""``tool.metadata[APPROVAL_POINT_KEY]``: the ``ApprovalPoint`` of a
:func:`~dynavec_langgraph.approval.require_approval` tool, read by ``attach_policy`` to check
the agent's policy for it when the agent is built."""
ASKS_KEY: Final = "asks"
"""``tool.metadata[ASKS_KEY]``: the node ids a tool's body may pass to ``interrupt()``
(``@tool(asks=[...])``; a LangChain tool: ``metadata={"asks": [...]}``). A tool's body
chooses its node ids when it runs, so this is the only way the agent can know them when it
is built: ``attach_policy`` refuses a key of ``approval_policy={node_id: ...}`` that no
``require_approval`` tool and no declaration names, and ``interrupt()`` refuses a node id its
declaring tool did not declare (docs/approvals-in-production.md)."""
REVIEWED_KEY: Final = "dynavec_reviewed"
"""State key: the id of the latest assistant message whose calls passed the after-model hooks
(so new input on a thread paused later, in a tool, does not send them through again)."""
ANSWERS_TAG_PREFIX: Final = "dynavec-answers:"
"""The prefix of the run-config tags naming the interrupt ids a resume answers (Aegra keeps a
run's config, not its command)."""

# -- the graph's node names (streams, ``interrupt_before``, Studio) ---------------------------

AGENT_NODE: Final = "agent"
"""The name of the graph's model node."""
TOOLS_NODE: Final = "tools"
"""The name of the graph's tool node."""
CREATE_AGENT_MODEL_NODE: Final = "model"
"""The name of the model node in ``create_agent``'s graph."""

# -- Temporal: what a Temporal server and its other workers read -----------------------------

WORKFLOW_NAME: Final = "DynavecThread"
"""The workflow type of one thread's runs."""
NOTIFY_WORKFLOW_NAME: Final = "DynavecNotify"
"""The workflow type that delivers a pause's notifications."""
SEGMENT_ACTIVITY: Final = "dynavec_segment"
"""The activity that runs one segment of a thread."""
NOTIFY_ACTIVITY: Final = "dynavec_notify"
"""The activity that delivers one pause's notifications."""
THREAD_WORKFLOW_ID_PREFIX: Final = "dynavec-thread:"
"""The workflow id of a thread's runs: ``f"{THREAD_WORKFLOW_ID_PREFIX}{thread_id}"``."""
NOTIFY_WORKFLOW_ID_PREFIX: Final = "dynavec-notify:"
"""The workflow id of a pause's notification: ``f"{NOTIFY_WORKFLOW_ID_PREFIX}{thread}:{id}"``."""

# -- the command line and the link endpoint ---------------------------------------------------

PROG: Final = "dynavec-langgraph"
"""The command's name (the script users type, and the hints that name a command)."""
LINK_PATH: Final = "/dynavec/link"
"""Where the link endpoint serves the links: ``{base_url}{LINK_PATH}/{token}``."""
