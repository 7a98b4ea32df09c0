"""dynavec's human-in-the-loop interrupts (docs/compatibility.md §6), tested the way a dynavec
user's tests are: a dynavec ``ChatModel`` subclass as the model, imports only from the mirrored
paths. One test per H* / N3 row of docs/compatibility.md; a deliberate difference is asserted as
documented."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from dynavec_langgraph.agents import MemoryCheckpointer, NodeInterrupt, ReActAgent, interrupt, tool
from dynavec_langgraph.chat import Message
from dynavec_langgraph.checkpoint import Checkpoint
from dynavec_langgraph.exceptions import (
    ApprovalTimeoutError,
    DynavecError,
    InvalidDecisionError,
    MissingDependencyError,
    NothingToResumeError,
    ThreadPausedError,
)
from tests.dynavec_model import ScriptedDynavecModel

RUNS: Counter[str] = Counter()
DECISIONS: list[Any] = []


@tool()
def lookup(account: str) -> str:
    """Read a balance."""
    RUNS["lookup"] += 1
    return f"{account}: 500"


@tool()
def transfer(amount: int) -> str:
    """Transfer money after approval."""
    RUNS["transfer started"] += 1
    decision = interrupt("approve_transfer", {"amount": amount})
    DECISIONS.append(decision)
    RUNS["transfer done"] += 1
    if isinstance(decision, dict):
        return f"Transferred {decision['amount']}." if decision.get("ok") else "Cancelled."
    return f"Transferred {amount}." if decision == "approved" else "Cancelled."


@tool()
def fragile(amount: int) -> str:
    """Fails after approval."""
    interrupt("approve_fragile", {"amount": amount})
    raise RuntimeError("bank offline")


@pytest.fixture(autouse=True)
def _reset() -> None:
    RUNS.clear()
    DECISIONS.clear()


def _batch_model() -> ScriptedDynavecModel:
    return ScriptedDynavecModel(
        [
            [("lookup", {"account": "rent"}), ("transfer", {"amount": 100}),
             ("transfer", {"amount": 7}), ("lookup", {"account": "food"})],
            "Paid.",
        ]
    )  # fmt: skip


def _valid(messages: list[Message]) -> bool:
    """Each assistant message with calls is followed by one tool message per call id."""
    i = 0
    while i < len(messages):
        m = messages[i]
        i += 1
        if m.role == "assistant" and m.tool_calls:
            wanted = [c.id for c in m.tool_calls]
            got = [str(x.tool_call_id) for x in messages[i : i + len(wanted)]]
            if any(x.role != "tool" for x in messages[i : i + len(wanted)]):
                return i + len(wanted) > len(messages)  # the paused tail may be open
            if sorted(got) != sorted(wanted):
                return False
            i += len(wanted)
    return True


def test_n3_exceptions() -> None:
    assert issubclass(NodeInterrupt, RuntimeError) and issubclass(NodeInterrupt, DynavecError)
    assert issubclass(ApprovalTimeoutError, TimeoutError)
    assert issubclass(MissingDependencyError, ImportError)
    assert issubclass(ThreadPausedError, RuntimeError)
    assert issubclass(NothingToResumeError, ValueError)
    error = MissingDependencyError("DynamoDBCheckpointer", "boto3", "dynamodb")
    assert "pip install 'dynavec-langgraph[dynamodb]'" in str(error)


def test_h1_pause() -> None:
    agent = ReActAgent(_batch_model(), tools=[lookup, transfer], checkpointer=MemoryCheckpointer())
    paused = agent.run("pay rent", thread_id="t1")
    assert (paused.finished, paused.termination_reason) == (False, "interrupted")
    payload = paused.interrupt_payload or {}
    assert {"thread_id", "node_id", "payload", "messages", "start_step"} <= set(payload)
    assert (payload["thread_id"], payload["node_id"]) == ("t1", "approve_transfer")
    assert (payload["payload"], payload["start_step"]) == ({"amount": 100}, 1)
    roles = [m.role for m in payload["messages"]]
    assert roles == ["system", "user", "assistant", "tool"]  # lookup ran, transfer paused
    assert RUNS == Counter({"lookup": 1, "transfer started": 1})


def test_h2_h3_resume_batch() -> None:
    store = MemoryCheckpointer()
    agent = ReActAgent(_batch_model(), tools=[lookup, transfer], checkpointer=store)
    agent.run("pay rent", thread_id="t1")
    second = agent.resume(thread_id="t1", human_decision={"ok": True, "amount": 100})
    assert second.termination_reason == "interrupted"
    assert (second.interrupt_payload or {})["payload"] == {"amount": 7}  # its own payload
    assert DECISIONS == [{"ok": True, "amount": 100}]  # the dict came back unchanged
    done = agent.resume(thread_id="t1", human_decision="rejected")
    assert done.output == "Paid." and done.termination_reason == "completed"
    assert DECISIONS == [{"ok": True, "amount": 100}, "rejected"]
    assert done.steps[0].observations == [
        "rent: 500",
        "Transferred 100.",
        "Cancelled.",
        "food: 500",
    ]
    assert RUNS == Counter({"lookup": 2, "transfer started": 4, "transfer done": 2})
    record = store.get("t1")
    assert record is not None
    messages = [Message.from_dict(m) for m in record.state["messages"]]
    assert _valid(messages) and [m.role for m in messages].count("user") == 1


def test_h5_resume_from_messages() -> None:
    paused = ReActAgent(_batch_model(), tools=[lookup, transfer]).run("pay rent")
    saved = (paused.interrupt_payload or {})["messages"]
    start = (paused.interrupt_payload or {})["start_step"]
    fresh = ReActAgent(ScriptedDynavecModel(["Paid."]), tools=[lookup, transfer])
    again = fresh.resume(saved, human_decision="approved", start_step=start)
    assert again.termination_reason == "interrupted"  # the batch's second transfer
    saved = (again.interrupt_payload or {})["messages"]
    done = ReActAgent(ScriptedDynavecModel(["Paid."]), tools=[lookup, transfer]).resume(
        saved, human_decision="approved"
    )
    assert done.output == "Paid." and DECISIONS == ["approved", "approved"]
    assert RUNS["lookup"] == 2  # the finished lookup never ran again


def test_h6_run_on_paused_thread() -> None:
    store = MemoryCheckpointer()
    agent = ReActAgent(_batch_model(), tools=[lookup, transfer], checkpointer=store)
    agent.run("pay rent", thread_id="t1")
    before = [c.to_dict() for c in store.list("t1")]
    with pytest.raises(RuntimeError, match=r"resume\(thread_id='t1'"):
        agent.run("something else", thread_id="t1")
    assert [c.to_dict() for c in store.list("t1")] == before


def test_h7_nothing_to_resume() -> None:
    store = MemoryCheckpointer()
    agent = ReActAgent(ScriptedDynavecModel(["hi"]), tools=[lookup], checkpointer=store)
    agent.run("hello", thread_id="done")
    with pytest.raises(ValueError, match="nothing to resume"):
        agent.resume(human_decision="approved")
    with pytest.raises(ValueError, match="unknown thread"):
        agent.resume(thread_id="nope", human_decision="approved")
    with pytest.raises(ValueError, match="not paused"):
        agent.resume(thread_id="done", human_decision="approved")
    with pytest.raises(ValueError, match="no unanswered tool call"):
        agent.resume([Message("user", "hi"), Message("assistant", "hello")], human_decision="x")


def test_h8_errors_after_resume() -> None:
    model = ScriptedDynavecModel([[("fragile", {"amount": 3})], "Sorry."])
    agent = ReActAgent(model, tools=[fragile])
    paused = agent.run("go", thread_id="t")
    done = agent.resume(thread_id=paused.interrupt_payload["thread_id"], human_decision="ok")  # type: ignore[index]
    assert done.steps[0].observations == ["Error executing tool 'fragile': bank offline"]
    assert done.output == "Sorry."


def test_h9_v1_interrupts() -> None:
    with pytest.raises(NodeInterrupt) as raised:
        transfer.execute({"amount": 5})  # outside an agent: HITL v1's exception
    assert (raised.value.node_id, raised.value.payload) == ("approve_transfer", {"amount": 5})

    @tool()
    def legacy(amount: int) -> str:
        decision = interrupt("t-ignored", "approve_legacy", {"amount": amount})  # v1 form
        return f"legacy {decision}"

    with pytest.raises(NodeInterrupt) as raised:
        legacy.execute({"amount": 1})
    assert (raised.value.thread_id, raised.value.node_id) == ("t-ignored", "approve_legacy")
    agent = ReActAgent(ScriptedDynavecModel([[("legacy", {"amount": 2})], "ok"]), tools=[legacy])
    paused = agent.run("go", thread_id="t9")
    assert (paused.interrupt_payload or {})["node_id"] == "approve_legacy"
    assert agent.resume(thread_id="t9", human_decision="yes").steps[0].observations == [
        "legacy yes"
    ]


def test_h10_none_decision_refused() -> None:
    """Differs on purpose (docs/compatibility.md H10)."""
    agent = ReActAgent(_batch_model(), tools=[lookup, transfer])
    agent.run("pay rent", thread_id="t")
    with pytest.raises(InvalidDecisionError, match="None"):
        agent.resume(thread_id="t", human_decision=None)
    assert RUNS["transfer done"] == 0
    assert agent.resume(thread_id="t", human_decision="approved").termination_reason == (
        "interrupted"
    )  # still paused at the first transfer, answerable


class CountingCheckpointer(MemoryCheckpointer):
    """A user's checkpointer that counts what it is asked to save."""

    def __init__(self) -> None:
        super().__init__()
        self.saved: Counter[str] = Counter()

    def save(self, checkpoint: Checkpoint) -> None:
        self.saved[checkpoint.thread_id] += 1
        super().save(checkpoint)


def test_h11_no_thread_id_writes_nothing() -> None:
    store = CountingCheckpointer()
    agent = ReActAgent(_batch_model(), tools=[lookup, transfer], checkpointer=store)
    paused = agent.run("pay rent")  # no thread_id
    assert paused.termination_reason == "interrupted"
    tid = (paused.interrupt_payload or {})["thread_id"]
    again = agent.resume(thread_id=tid, human_decision="approved")  # in process, by its id
    assert again.termination_reason == "interrupted"
    saved = (again.interrupt_payload or {})["messages"]
    other = ReActAgent(
        ScriptedDynavecModel(["Paid."]), tools=[lookup, transfer], checkpointer=store
    )
    done = other.resume(saved, human_decision="approved")  # from the messages, no thread
    assert done.output == "Paid." and DECISIONS == ["approved", "approved"]
    assert store.saved == Counter() and store.get(tid) is None
    with_id = ReActAgent(ScriptedDynavecModel(["hi"]), checkpointer=store).run(
        "x", thread_id="kept"
    )
    assert with_id.output == "hi" and [c.node_id for c in store.list("kept")] == ["init", "step_1"]
    assert set(store.saved) == {"kept"}
