"""The demo graph served by a real ``langgraph dev`` server, driven with ``langgraph_sdk`` as
Studio drives it: run to the approval, read the interrupt, resume, send new input to a pause.

The server runs offline (no analytics, no version check, no OPENAI_API_KEY: the scripted demo
model). The demo's ledger (``DYNAVEC_DEMO_LEDGER``) counts every finished tool run per thread.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from langgraph_sdk import get_client
from langgraph_sdk.client import LangGraphClient

from dynavec_langgraph import StaleDecisionError
from dynavec_langgraph.interrupt import bind_decision
from dynavec_langgraph.remote import RemoteReActAgent
from tests.langgraph_server import REPO, langgraph_dev
from tests.review import same_ask_again, says_why_first

GRAPH_ID = "dynavec_agent"


@dataclass
class Studio:
    """A running ``langgraph dev`` server and what the tests measure on it."""

    url: str
    ledger: Path
    start_seconds: float
    run_seconds: list[float] = field(default_factory=list)

    def entries(self, thread_id: str) -> list[dict[str, Any]]:
        """The ledger lines the demo tools wrote for ``thread_id``, in order."""
        if not self.ledger.exists():
            return []
        lines = self.ledger.read_text(encoding="utf-8").splitlines()
        return [e for e in map(json.loads, lines) if e["thread_id"] == thread_id]

    async def wait(self, client: LangGraphClient, thread_id: str, **kwargs: Any) -> Any:
        """``runs.wait`` on the demo graph, timed."""
        started = time.monotonic()
        result = await client.runs.wait(thread_id, GRAPH_ID, raise_error=True, **kwargs)
        self.run_seconds.append(time.monotonic() - started)
        return result


@pytest.fixture(scope="module")
def studio(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Studio]:
    """``langgraph dev`` from the repo root (its ``langgraph.json``); a server that does not
    come up fails the test."""
    work = tmp_path_factory.mktemp("studio")
    with langgraph_dev(work, None, cwd=REPO, first_on_path=()) as running:
        server = Studio(running.url, running.ledger, running.start_seconds)
        yield server
        runs = ", ".join(f"{s:.2f}" for s in server.run_seconds)
        print(f"\nlanggraph dev: started in {server.start_seconds:.2f} s; runs (s): {runs}")


def _assert_valid_conversation(messages: list[dict[str, Any]]) -> None:
    """Every assistant tool call is answered by one tool message before any other message."""
    pending: list[str] = []
    for m in messages:
        if m["type"] == "tool":
            assert m["tool_call_id"] in pending, f"tool answer to no open call: {m}"
            pending.remove(m["tool_call_id"])
            continue
        assert not pending, f"{m['type']} message while calls {pending} are unanswered"
        if m["type"] == "ai":
            pending = [c["id"] for c in m.get("tool_calls") or []]
    assert not pending


def _only_interrupt(state: Mapping[str, Any]) -> dict[str, Any]:
    interrupts: list[dict[str, Any]] = state["interrupts"]
    assert len(interrupts) == 1, interrupts
    return interrupts[0]


def _user(text: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": text}]}


async def test_studio_run_pauses_at_the_approval_and_resumes(studio: Studio) -> None:
    client = get_client(url=studio.url)
    assistants = await client.assistants.search(graph_id=GRAPH_ID)
    assert [a["graph_id"] for a in assistants] == [GRAPH_ID]
    thread_id = (await client.threads.create())["thread_id"]

    await studio.wait(client, thread_id, input=_user("Pay 75 to Alice"))

    assert (await client.threads.get(thread_id))["status"] == "interrupted"
    pause = _only_interrupt(await client.threads.get_state(thread_id))
    assert pause["value"]["node_id"] == "approve_transfer"
    assert pause["value"]["payload"] == {"amount": 75, "to": "Alice"}
    assert pause["value"]["tool_call"]["name"] == "transfer_funds"
    assert pause["value"]["tool_call"]["args"] == {"amount": 75, "to": "Alice"}
    schema = pause["response_schema"]
    assert schema["required"] == ["decision"]
    assert schema["properties"]["decision"]["enum"] == ["approved", "rejected"]
    [balance] = studio.entries(thread_id)  # the read-only call ran; the transfer did not
    assert balance["tool"] == "get_balance"

    final = await studio.wait(
        client, thread_id, command={"resume": {"decision": "approved", "comment": "ok"}}
    )

    assert (await client.threads.get(thread_id))["status"] == "idle"
    assert (await client.threads.get_state(thread_id))["interrupts"] == []
    messages = final["messages"]
    assert [m["type"] for m in messages] == ["human", "ai", "tool", "ai", "tool", "ai"]
    assert messages[-1]["content"] == f"Done. {balance['result']} Transferred 75 to Alice."
    _assert_valid_conversation(messages)
    assert [(e["tool"], e.get("decision")) for e in studio.entries(thread_id)] == [
        ("get_balance", None),
        ("transfer_funds", "approved"),
    ]


async def test_studio_new_message_to_a_paused_thread_keeps_it_resumable(studio: Studio) -> None:
    client = get_client(url=studio.url)
    thread_id = (await client.threads.create())["thread_id"]
    await studio.wait(client, thread_id, input=_user("Pay 50 to Bob"))
    first = _only_interrupt(await client.threads.get_state(thread_id))

    # New user input while paused: the pending approval and the finished call survive.
    await studio.wait(client, thread_id, input=_user("Also pay 20 to Carol"))

    assert (await client.threads.get(thread_id))["status"] == "interrupted"
    state = await client.threads.get_state(thread_id)
    again = _only_interrupt(state)
    assert again["value"] == first["value"]  # same call, same payload: {"amount": 50, "to": "Bob"}
    assert again["value"]["payload"] == {"amount": 50, "to": "Bob"}
    assert [e["tool"] for e in studio.entries(thread_id)] == ["get_balance"]  # not re-run
    values = state["values"]
    assert isinstance(values, dict)
    held = [m["type"] for m in values["messages"]]
    assert held == ["human", "ai", "tool", "ai", "human"]

    # The decision reaches Bob's transfer; then the model answers the second message.
    await studio.wait(client, thread_id, command={"resume": "approved"})
    second = _only_interrupt(await client.threads.get_state(thread_id))
    assert second["value"]["payload"] == {"amount": 20, "to": "Carol"}
    final = await studio.wait(client, thread_id, command={"resume": "rejected"})

    assert (await client.threads.get(thread_id))["status"] == "idle"
    messages = final["messages"]
    _assert_valid_conversation(messages)
    assert [m["type"] for m in messages] == [
        "human", "ai", "tool", "ai", "tool", "human", "ai", "tool", "ai", "tool", "ai",
    ]  # fmt: skip
    assert [m["content"] for m in messages if m["type"] == "human"] == [
        "Pay 50 to Bob",
        "Also pay 20 to Carol",
    ]
    assert messages[4]["content"] == "Transferred 50 to Bob."
    entries = studio.entries(thread_id)
    assert [(e["tool"], e.get("to"), e.get("decision")) for e in entries] == [
        ("get_balance", None, None),
        ("transfer_funds", "Bob", "approved"),
        ("get_balance", None, None),
        ("transfer_funds", "Carol", "rejected"),
    ]
    assert messages[-1]["content"] == (
        f"Done. {entries[2]['result']} Transfer of 20 to Carol was rejected."
    )


async def test_studio_invalid_decision_asks_the_same_approval_again(studio: Studio) -> None:
    client = get_client(url=studio.url)
    thread_id = (await client.threads.create())["thread_id"]
    await studio.wait(client, thread_id, input=_user("Pay 5 to Dan"))
    pause = _only_interrupt(await client.threads.get_state(thread_id))
    refusals = [
        ({"decision": "maybe"}, "Input should be 'approved' or 'rejected'"),
        ({"decisions": [{"type": "approve"}, {"type": "reject"}]}, "expected one decision"),
        ([{"type": "edit", "args": {"action": "approve_transfer", "args": {}}}], "not allowed"),
    ]
    for decision, says in refusals:
        # the run ends normally: the thread stays interrupted (not `error`), the same approval
        # is pending under a new id with the reason, and the transfer did not run
        await studio.wait(client, thread_id, command={"resume": decision})
        assert (await client.threads.get(thread_id))["status"] == "interrupted"
        again = _only_interrupt(await client.threads.get_state(thread_id))
        assert again["id"] != pause["id"]
        assert says in again["value"]["error"]
        assert same_ask_again(pause["value"], again["value"])
        assert says_why_first(again["value"])  # what the UIs show
        assert again["response_schema"] == pause["response_schema"]
        assert [e["tool"] for e in studio.entries(thread_id)] == ["get_balance"]

    final = await studio.wait(client, thread_id, command={"resume": "approved"})
    assert final["messages"][-1]["content"].endswith("Transferred 5 to Dan.")
    assert [e["tool"] for e in studio.entries(thread_id)] == ["get_balance", "transfer_funds"]
    assert (await client.threads.get(thread_id))["status"] == "idle"


UI_DECISIONS = [
    ("studio-form", {"decision": "approved"}, "approved"),
    ("agent-chat-ui-langchain-1.0", {"decisions": [{"type": "approve"}]}, "approved"),
    ("agent-chat-ui-template-accept", [{"type": "accept", "args": None}], "approved"),
    ("agent-inbox-ignore", [{"type": "ignore", "args": None}], "rejected"),
    ("langchain-per-call-reject", {"type": "reject", "message": "no"}, "rejected"),
]


@pytest.mark.parametrize(
    ("decision", "kind"), [c[1:] for c in UI_DECISIONS], ids=[c[0] for c in UI_DECISIONS]
)
async def test_studio_every_ui_s_decision_answers_the_demo(
    studio: Studio, decision: Any, kind: str
) -> None:
    client = get_client(url=studio.url)
    thread_id = (await client.threads.create())["thread_id"]
    await studio.wait(client, thread_id, input=_user("Pay 12 to Eve"))
    pause = _only_interrupt(await client.threads.get_state(thread_id))
    value = pause["value"]
    assert value["action_requests"][0]["name"] == value["action_request"]["action"]
    assert value["review_configs"][0]["allowed_decisions"] == ["approve", "reject", "respond"]
    assert set(value["config"]) == {"allow_accept", "allow_edit", "allow_ignore", "allow_respond"}

    # addressed by the interrupt's id, as the UIs resume
    await studio.wait(client, thread_id, command={"resume": {pause["id"]: decision}})

    assert (await client.threads.get(thread_id))["status"] == "idle"
    assert (await client.threads.get_state(thread_id))["interrupts"] == []
    transfers = [e for e in studio.entries(thread_id) if e["tool"] == "transfer_funds"]
    assert [(e["amount"], e["decision"]) for e in transfers] == [(12, kind)]


async def test_studio_serves_a_dynavec_graph_that_pauses_and_resumes(studio: Studio) -> None:
    """``langgraph.json``'s ``dynavec_flow``: a dynavec ``AgentGraph`` compiled to LangGraph,
    run by the server with its own checkpointer; its ``interrupt()`` pauses the thread and
    ``Command(resume=...)`` carries the dynavec run on (docs/compatibility.md G20)."""
    client = get_client(url=studio.url)
    [assistant] = await client.assistants.search(graph_id="dynavec_flow")
    thread_id = (await client.threads.create())["thread_id"]
    await client.runs.wait(
        thread_id, assistant["assistant_id"], input={"flow_state": {"amount": 250}}
    )
    assert (await client.threads.get(thread_id))["status"] == "interrupted"
    pause = _only_interrupt(await client.threads.get_state(thread_id))
    assert pause["value"]["node_id"] == "approve_expense"
    assert pause["value"]["payload"] == {"amount": 250}
    final = await client.runs.wait(
        thread_id, assistant["assistant_id"], command={"resume": "approved"}, raise_error=True
    )
    assert isinstance(final, dict)
    assert final["flow_state"]["booked"] is True
    assert final["flow_state"]["log"] == ["review", "approve", "book"]
    result = final["flow_result"]
    assert result["success"] is True and result["graph_name"] == "dynavec_flow"
    assert [t["node_name"] for t in result["trace"]] == ["review", "approve", "book"]


async def test_studio_refuses_a_decision_bound_to_another_pause(studio: Studio) -> None:
    """The review digest through ``langgraph dev``: the graph refuses a decision bound to a
    pause asked again since (the thread stays interrupted at the same digest, nothing runs);
    ``RemoteReActAgent`` and ``inbox answer --server`` refuse it before sending; the digest
    pending now is accepted."""
    client = get_client(url=studio.url)
    thread_id = (await client.threads.create())["thread_id"]
    await studio.wait(client, thread_id, input=_user("Pay 6 to Eve"))
    seen = _only_interrupt(await client.threads.get_state(thread_id))["value"]["review_digest"]
    await studio.wait(client, thread_id, command={"resume": {"decision": "maybe"}})
    asked = _only_interrupt(await client.threads.get_state(thread_id))
    assert asked["value"]["review_digest"] != seen

    await studio.wait(client, thread_id, command={"resume": bind_decision("approved", seen)})
    assert (await client.threads.get(thread_id))["status"] == "interrupted"
    again = _only_interrupt(await client.threads.get_state(thread_id))
    assert again["value"]["error"].startswith(f"stale decision for thread {thread_id!r}")
    assert again["value"]["review_digest"] == asked["value"]["review_digest"]
    assert [e["tool"] for e in studio.entries(thread_id)] == ["get_balance"]

    remote = RemoteReActAgent(studio.url, "dynavec_agent", timeout=60)
    with pytest.raises(StaleDecisionError, match="Read the pause again"):
        await remote.aresume(bind_decision("approved", seen), thread_id=thread_id)
    assert _only_interrupt(await client.threads.get_state(thread_id))["id"] == again["id"]
    inbox = ["inbox", "answer", "--server", studio.url, "--thread", thread_id, "--approve"]
    cli = [sys.executable, "-m", "dynavec_langgraph._cli", *inbox, "--digest", seen]
    refused = await asyncio.to_thread(
        subprocess.run, cli, capture_output=True, text=True, timeout=120, check=False
    )
    assert refused.returncode == 2 and "stale decision" in refused.stderr, refused.stderr
    assert _only_interrupt(await client.threads.get_state(thread_id))["id"] == again["id"]
    done = await remote.aresume(bind_decision("approved", again["value"]), thread_id=thread_id)
    assert done.finished and done.output.endswith("Transferred 6 to Eve.")
    assert [e["tool"] for e in studio.entries(thread_id)] == ["get_balance", "transfer_funds"]
