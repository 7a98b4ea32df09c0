"""Approvals in production: expiry, who may approve, several approvers.

See docs/approvals-in-production.md.

An :class:`ApprovalPolicy` is given to :func:`~dynavec_langgraph.interrupt`,
:func:`~dynavec_langgraph.approval.require_approval` or the agent (``approval_policy=``, one
policy or ``{node_id: policy}``). It is enforced **inside the paused tool** (its checks,
``PolicyRules``, plugged into the one ask loop, ``dynavec_langgraph._pauses.ask.ask``), so the raw
graph, a LangGraph server and every door of this package enforce the same rules; the doors
(``ReActAgent.resume``, the inbox and its command line, ``RemoteReActAgent``) also check names
before anything runs and turn refusals into typed errors.

Everything durable lives in the checkpoint, as LangGraph stores an interrupted task's answers:
every answer given to a pause is replayed, in order, when the tool runs again. A partial
approval (``approvals_required`` > 1) re-asks the same pause with the approvals so far in its
value; a refused approver re-asks it with ``error`` set; nothing after the pause runs.

A pause without a policy pays nothing: :func:`policy_for` returns ``None`` and the ask loop
runs without the policy's checks.

The policy, one module per part: ``spec`` (``ApprovalPolicy``, the checks of its options and
its deadline's clock), ``scope`` (which policy a pause gets: the agent's, set around a tool
call, and the node ids a tool declares), ``answers`` (the approver's envelope, the expiry
answer, who may approve), ``events`` (``ApprovalEvent``, its listeners, the expiries a door
raises), ``ask`` (its checks in the ask loop, ``PolicyRules`` / ``rules_for``) and ``doors``
(what the doors check before and after a resume).
"""
