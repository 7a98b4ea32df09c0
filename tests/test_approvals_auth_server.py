"""The signed-in user is the approver, through a real ``langgraph dev`` with custom auth.

The server runs the graphs of ``tests/signed_in_graph.py`` with the auth handler of
docs/approvals-in-production.md (the page's ``auth.py`` block, written to the server's
directory as it is): bearer tokens for alice, bob (both holding ``payments:approve``) and
mallory (none). Answers go through ``langgraph_sdk`` directly, ``RemoteReActAgent`` and
``dynavec-langgraph inbox --server`` (its ``--token`` / ``DYNAVEC_SERVER_TOKEN``); the
transfer's ledger counts its runs. A server without auth keeps today's explicit approvers:
``tests/test_approvals_server.py``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from langgraph_sdk import get_sync_client

import dynavec_langgraph
from dynavec_langgraph import (
    ApproverMismatchError,
    ApproverRefusedError,
    InvalidDecisionError,
    StaleDecisionError,
)
from dynavec_langgraph.approval import approver_decision
from dynavec_langgraph.remote import RemoteReActAgent, server_thread_id
from tests.langgraph_server import REPO, langgraph_dev

GRAPHS = Path(__file__).with_name("signed_in_graph.py")
PAGE = REPO / "docs" / "approvals-in-production.md"
TOKENS = {"alice": "token-alice", "bob": "token-bob", "mallory": "token-mallory"}


def auth_file(marker: str = "token-mallory") -> str:
    """The page's example ``auth.py`` holding ``marker`` (its Python block with the auth
    handler), as written."""
    blocks = re.findall(r"^```python\n(.*?)^```", PAGE.read_text(), re.MULTILINE | re.DOTALL)
    (found,) = [b for b in blocks if "@auth.authenticate" in b and marker in b]
    return str(found)


@dataclass
class Server:
    url: str
    ledger: Path

    def ran(self, to: str) -> list[dict[str, Any]]:
        """The transfers to ``to`` that ran (each test pays its own payee)."""
        lines = self.ledger.read_text().splitlines() if self.ledger.exists() else []
        return [e for e in map(json.loads, lines) if e["to"] == to]

    def agent(self, user: str, graph: str, audit: bool = True) -> RemoteReActAgent:
        """``user``'s client; its runs record the audit trail (the server's store)."""
        headers = {"Authorization": f"Bearer {TOKENS[user]}"}
        return RemoteReActAgent(self.url, graph, headers=headers, timeout=60, audit=audit)

    def sdk(self, user: str | None) -> Any:
        headers = {"Authorization": f"Bearer {TOKENS[user]}"} if user else {}
        if user is None:  # Studio's local user: langgraph dev lets it in without a token
            headers = {"x-auth-scheme": "langsmith"}
        return get_sync_client(url=self.url, headers=headers)

    def cli(
        self, *args: str, token: str | None = None, command: str = "inbox"
    ) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if k != "DYNAVEC_SERVER_TOKEN"}
        if token is not None:
            env["DYNAVEC_SERVER_TOKEN"] = token
        return subprocess.run(
            [sys.executable, "-m", "dynavec_langgraph._cli", command, *args],
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=180,
        )


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """``langgraph dev`` with the page's auth handler; one that does not come up fails."""
    assert Path(dynavec_langgraph.__file__).is_relative_to(REPO)  # the package under test
    work = tmp_path_factory.mktemp("auth_server")
    (work / "auth.py").write_text(auth_file())
    graphs = {
        "alice_or_bob": f"{GRAPHS}:alice_or_bob",
        "two": f"{GRAPHS}:two_signed_in",
        "async_interrupt": f"{GRAPHS}:async_interrupt",
    }
    config = {"dependencies": [str(REPO)], "graphs": graphs, "auth": {"path": "./auth.py:auth"}}
    with langgraph_dev(work, config) as running:
        yield Server(running.url, running.ledger)


def _pending(server: Server, thread: str) -> dict[str, Any]:
    (pause,) = server.sdk("alice").threads.get_state(server_thread_id(thread))["interrupts"]
    return pause  # type: ignore[no-any-return]


def _raw(server: Server, user: str | None, thread: str, graph: str, value: Any, **conf: Any) -> Any:
    """``user`` resumes the pending pause through ``langgraph_sdk`` as a UI does (with the
    configurable ``conf``; the run records the audit trail)."""
    pause = _pending(server, thread)
    config: Any = {"configurable": {"dynavec_audit": True, **conf}}
    server.sdk(user).runs.wait(
        server_thread_id(thread), graph, command={"resume": {pause["id"]: value}}, config=config
    )
    return _pending(server, thread)["value"]


@pytest.mark.service
def test_the_signed_in_user_is_the_approver_of_one_approval(server: Server) -> None:
    graph = "alice_or_bob"
    alice = server.agent("alice", graph)
    assert alice.run("transfer 5 to Ann", thread_id="one").termination_reason == "interrupted"

    # mallory, signed in but no approver, claims alice: in the value, in the config
    again = _raw(server, "mallory", "one", graph, approver_decision("approved", "alice"))
    assert again["approval"]["refused_approver"] == "mallory"
    assert again["approval"]["claimed_approver"] == "alice"
    again = _raw(server, "mallory", "one", graph, "approved", approver="alice")
    assert again["approval"]["claimed_approver"] == "alice"
    with pytest.raises(ApproverMismatchError, match="signed in 'mallory'"):
        server.agent("mallory", graph).resume("approved", thread_id="one", approver="alice")
    with pytest.raises(ApproverRefusedError, match="'mallory' may not approve"):
        server.agent("mallory", graph).resume("approved", thread_id="one")
    refused = server.cli(
        "answer", "--server", server.url, "--thread", "one", "--approve", "--as", "alice",
        "--token", TOKENS["mallory"],
    )  # fmt: skip
    assert refused.returncode == 2 and "signed in 'mallory'" in refused.stderr, refused.stderr
    # Studio's local user (no token: langgraph dev lets it in unauthenticated)
    again = _raw(server, None, "one", graph, approver_decision("approved", "alice"))
    assert again["approval"]["refused_approver"] == "langgraph-studio-user"
    # bob may approve, but not as alice
    with pytest.raises(ApproverMismatchError, match="names approver 'alice'"):
        server.agent("bob", graph).resume("approved", thread_id="one", approver="alice")
    assert server.ran("Ann") == []

    listed = server.cli("list", "--server", server.url, "--json", token=TOKENS["alice"])
    assert listed.returncode == 0, listed.stderr
    assert server_thread_id("one") in {r["thread_id"] for r in json.loads(listed.stdout)}
    # alice answers from the command line with a plain approval: her token says who she is
    answered = server.cli(
        "answer", "--server", server.url, "--thread", "one", "--approve", token=TOKENS["alice"]
    )
    assert answered.returncode == 0, answered.stderr
    (entry,) = server.ran("Ann")
    assert (entry["to"], entry["amount"]) == ("Ann", 5)
    assert Path(entry["package"]).is_relative_to(REPO)  # the server ran the package under test
    trail = [(e.kind, e.who) for e in alice.audit("one") if e.kind == "refused"]
    assert ("refused", "mallory") in trail and ("refused", "bob") in trail
    assert ("refused", "alice") not in trail  # the claimed name is never recorded as who


@pytest.mark.service
def test_several_approvals_count_distinct_signed_in_users_only(server: Server) -> None:
    graph = "two"
    alice = server.agent("alice", graph)
    assert alice.run("transfer 7 to Bo", thread_id="two").termination_reason == "interrupted"
    assert alice.resume("approved", thread_id="two").termination_reason == "interrupted"
    assert _pending(server, "two")["value"]["approval"]["approved_by"] == ["alice"]

    with pytest.raises(ApproverRefusedError, match="already approved"):
        alice.resume("approved", thread_id="two")  # alice twice
    again = _raw(server, "alice", "two", graph, approver_decision("approved", "bob"))
    assert again["approval"]["claimed_approver"] == "bob"  # alice as bob
    with pytest.raises(ApproverMismatchError, match="names approver 'bob'"):
        server.agent("mallory", graph).resume("approved", thread_id="two", approver="bob")
    with pytest.raises(ApproverRefusedError, match="'mallory' may not approve"):
        server.agent("mallory", graph).resume("approved", thread_id="two")
    assert _pending(server, "two")["value"]["approval"]["approved_by"] == ["alice"]
    assert server.ran("Bo") == []

    answered = server.cli(
        "answer", "--server", server.url, "--thread", "two", "--approve",
        "--token", TOKENS["bob"],
    )  # fmt: skip
    assert answered.returncode == 0, answered.stderr
    assert [e["amount"] for e in server.ran("Bo")] == [7]
    trail = [(e.kind, e.who, e.outcome) for e in alice.audit("two")]
    assert ("decision", "alice", "approval 1 of 2") in trail
    assert [w for k, w, _ in trail if k == "refused"] == ["alice", "alice", "mallory", "mallory"]


@pytest.mark.service
def test_an_async_tools_plain_interrupt_with_approvers_refuses_saying_why(
    server: Server,
) -> None:
    """A plain ``interrupt(..., approvers=...)`` inside an async tool runs on the server's event
    loop, where the store that binds the signed-in user cannot be read: every answer is
    refused (fail closed), the reason names the fix."""
    graph = "async_interrupt"
    alice = server.agent("alice", graph, audit=False)  # (the trail's own writes: left alone)
    paused = alice.run("transfer 9 to Cy", thread_id="async")
    assert paused.termination_reason == "interrupted"
    with pytest.raises(InvalidDecisionError, match="require_approval, or from a sync tool") as e:
        alice.resume("approved", thread_id="async")
    assert not isinstance(e.value, StaleDecisionError)
    assert server.ran("Cy") == []
