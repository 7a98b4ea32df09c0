"""Two approvers on two LangGraph API servers over one PostgreSQL (the cluster of
``tests/test_cluster.py``): the partial approval given through server A is in the checkpoint,
server B's approval completes it; the policy is enforced by the paused tool on each server."""

from __future__ import annotations

import json
from typing import Any

import pytest

from dynavec_langgraph import ApproverRefusedError
from tests.test_cluster import Deployment, deployment  # noqa: F401  (the fixture)


def _paid(where: Deployment, to: str) -> list[dict[str, Any]]:
    if not where.ledger.exists():
        return []
    lines = where.ledger.read_text(encoding="utf-8").splitlines()
    return [e for e in map(json.loads, lines) if e.get("tool") == "pay" and e.get("to") == to]


def test_two_approvers_on_two_servers(deployment: Deployment) -> None:  # noqa: F811
    a = deployment.agent(deployment.a, "pay_two")
    b = deployment.agent(deployment.b, "pay_two")
    assert a.run("pay 9 to Cy", thread_id="two-servers").termination_reason == "interrupted"

    assert a.resume("approved", thread_id="two-servers", approver="alice").finished is False
    with pytest.raises(ApproverRefusedError, match="already approved"):
        b.resume("approved", thread_id="two-servers", approver="alice")
    with pytest.raises(ApproverRefusedError, match="'mallory'"):
        b.resume("approved", thread_id="two-servers", approver="mallory")
    assert _paid(deployment, "Cy") == []

    done = b.resume("approved", thread_id="two-servers", approver="bob")
    assert done.finished and done.output == "Done: Paid 9 to Cy."
    assert _paid(deployment, "Cy") == [{"tool": "pay", "to": "Cy", "decision": "ran"}]
