"""The agent's ``approval_policy=`` attached to its tools, checked when the agent is built."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from dynavec_langgraph._tools.adapters import as_tools
from dynavec_langgraph._tools.agent_tool import AgentTool
from dynavec_langgraph._types import ForeignObject

if TYPE_CHECKING:
    from dynavec_langgraph._pauses.policy.spec import ApprovalPolicy

__all__ = ["attach_policy"]


def attach_policy(
    tools: ForeignObject, policy: ApprovalPolicy | Mapping[str, ApprovalPolicy]
) -> list[AgentTool]:
    """``tools`` (a list) with ``policy`` attached (the agent's ``approval_policy=``; read by
    :func:`~dynavec_langgraph._pauses.policy.scope.policy_scope` around each call of the tool).

    Checked here, when the agent is built: the policy's type, tools to attach it to, node
    ids that can name a pause, the policy for each ``require_approval`` tool under that
    tool's own options, and each node id of a map against the node ids the tools ask
    (:func:`~dynavec_langgraph._pauses.policy.scope.declared_asks`: a ``require_approval`` tool's,
    and those a tool declares with ``asks=``). A tool's body chooses its node ids when it runs,
    so a key no tool declares is refused: it would apply to no pause the agent can know of
    (docs/approvals-in-production.md).

    Raises:
        InvalidOptionError: naming what cannot be used.
    """
    from dynavec_langgraph._errors import InvalidOptionError, option_text
    from dynavec_langgraph._names import APPROVAL_POINT_KEY, POLICY_KEY
    from dynavec_langgraph._pauses.policy.scope import ApprovalPoint, declared_asks
    from dynavec_langgraph._pauses.policy.spec import ApprovalPolicy

    name, what = "approval_policy", "pass an ApprovalPolicy or {node_id: ApprovalPolicy}"
    if isinstance(policy, Mapping):
        bad = {k: v for k, v in policy.items() if not isinstance(v, ApprovalPolicy)}
        if bad or not all(isinstance(k, str) for k in policy):
            raise InvalidOptionError(
                option_text("approval_policy", policy, what), "approval_policy"
            )
        if "" in policy:
            raise InvalidOptionError(
                option_text(
                    "approval_policy",
                    policy,
                    "the key '' names no pause (a node id is a non-empty string, e.g. "
                    "'approve_pay' for require_approval(pay))",
                ),
                "approval_policy",
            )
    elif not isinstance(policy, ApprovalPolicy):
        raise InvalidOptionError(option_text(name, policy, what), name)
    if tools is None or hasattr(tools, "tools_by_name"):
        raise InvalidOptionError(
            "approval_policy= needs the tools as a list or a ToolRegistry (not a ToolNode): "
            "pass them so, or give the policy to require_approval(...) / interrupt(...) instead",
            "approval_policy",
        )
    given = as_tools(tools)
    if not given:
        raise InvalidOptionError(
            "approval_policy= is given to an agent without tools: no tool can pause, so it "
            "would never be used. Pass the tools that ask for approval, or leave it out",
            "approval_policy",
        )
    if isinstance(policy, Mapping):
        _check_asked(policy, {t.name: declared_asks(t) for t in given})
    out: list[AgentTool] = []
    for tool in given:
        point = (tool.metadata or {}).get(APPROVAL_POINT_KEY)
        if isinstance(point, ApprovalPoint):  # a require_approval tool: its node id is known
            applies = policy.get(point.node_id) if isinstance(policy, Mapping) else policy
            try:
                if applies is not None:
                    point.check(applies)
            except InvalidOptionError as error:
                raise InvalidOptionError(
                    f"approval_policy= for {point.node_id!r} (require_approval({tool.name}), "
                    f"with the tool's own options on top): {error}",
                    "approval_policy",
                ) from None
        out.append(
            tool.model_copy(update={"metadata": {**(tool.metadata or {}), POLICY_KEY: policy}})
        )
    return out


def _check_asked(policy: Mapping[str, object], asks: Mapping[str, tuple[str, ...] | None]) -> None:
    """Each node id of ``approval_policy={node_id: ...}`` is asked by a tool: ``asks`` maps
    each tool's name to the node ids it asks (``None``: it declares none).

    Raises:
        InvalidOptionError: naming the keys no tool asks and the node ids the tools ask.
    """
    from dynavec_langgraph._errors import InvalidOptionError

    known = {node: name for name, nodes in asks.items() for node in nodes or ()}
    unknown = [key for key in policy if key not in known]
    if not unknown:
        return
    asked = ", ".join(f"{node!r} ({name})" for node, name in known.items())
    silent = [name for name, nodes in asks.items() if nodes is None]
    hint = (
        f"; if a tool's body calls interrupt({unknown[0]!r}, ...), declare it on that tool: "
        f"@tool(asks=[{unknown[0]!r}]) (a LangChain tool: metadata={{'asks': [...]}}); "
        f"declaring none: {', '.join(silent)}"
        if silent
        else ""
    )
    doubt = [k for k in unknown if k.startswith("in_doubt_")]
    if doubt:
        hint += f"; an in-doubt question ({doubt[0]!r}) takes no approval policy"
    keys = ", ".join(map(repr, unknown))
    raise InvalidOptionError(
        f"approval_policy= has a policy for {keys}, which no tool asks (the tools ask "
        f"{asked or 'no node id the agent can know'}): fix the key{hint}",
        "approval_policy",
    )
