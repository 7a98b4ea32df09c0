"""Exactly once across crashes: the idempotency key of a tool call, and in-doubt calls.

Real parts: a fake payment service in its own process (``tests/payment_service.py``, it
honours ``Idempotency-Key`` and counts charges), an agent in a child process
(``tests/children/payment.py``) SIGKILLed after its charge reached the service and before the
tool returned, on a SQLite file, on the PostgreSQL server and on the local DynamoDB endpoint
the tests start."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool as lc_tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolRuntime
from langgraph.store.memory import InMemoryStore
from langgraph.types import Command, Durability

from dynavec_langgraph import (
    InDoubtCallError,
    ToolContextError,
    create_react_agent,
    idempotency_key,
    interrupt,
    tool,
)
from dynavec_langgraph._exactly_once.keys import OnCrash
from dynavec_langgraph._exactly_once.shown import noted_in_doubt
from dynavec_langgraph._names import NOTE_NS, START_CHANNEL, START_PREFIX
from dynavec_langgraph.testing import ScriptedChatModel
from tests.children.scenario import ROOT, TIMEOUT, wait_for
from tests.children.warm import Child
from tests.children.warm import run as warm_run
from tests.payment_service import PaymentService, charge


@pytest.fixture
def service(tmp_path: Path) -> Iterator[PaymentService]:
    with PaymentService(tmp_path) as running:
        yield running


def test_the_payment_service_starts_once_and_again_after_a_stop(tmp_path: Path) -> None:
    """Started, then entered: one process, stopped by its PID on leaving. Started again after
    that: a new process, at the port it bound (not the last run's)."""
    service = PaymentService(tmp_path).start()
    first, url = service.proc, service.url
    with service as entered:
        assert entered is service and service.proc is first and service.url == url
        charge(service.url, 5, "k1")
        assert [r["key"] for r in service.stats()["requests"]] == ["k1"]
    assert first is not None and first.poll() is not None
    with service:
        assert service.proc is not first
        assert service.stats()["requests"] == []  # a fresh service answers at its url
    assert service.proc is not None and service.proc.poll() is not None


def _child(*args: str) -> Child:
    return Child(
        [sys.executable, "-m", "tests.children.payment", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _run(*args: str) -> dict[str, Any]:
    proc = _child(*args)
    out, err = proc.communicate(timeout=TIMEOUT)
    if proc.returncode != 0 or not out.strip():
        raise AssertionError(f"child failed ({proc.returncode}):\n{err}\n{out}")
    result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return result


def _crash(db: str, service: PaymentService, policy: str, hang: Path, *extra: str) -> str:
    """Run the agent until its charge reached the service, SIGKILL it there; the key."""
    hang.mkdir()
    proc = _child("--db", db, "--service", service.url, "--policy", policy, "--hang", str(hang),
                  *extra, "run", "t1", "pay the invoice")  # fmt: skip
    try:
        wait_for(hang / "charged", proc)
    finally:
        proc.kill()  # SIGKILL: no cleanup, no last write
        proc.communicate(timeout=TIMEOUT)
    assert proc.returncode == -signal.SIGKILL
    assert len(service.stats()["requests"]) == 1
    return (hang / "charged").read_text()


def _opts(db: str, service: PaymentService, policy: str) -> tuple[str, ...]:
    return ("--db", db, "--service", service.url, "--policy", policy)


@pytest.mark.parametrize("langchain", [False, True], ids=["package-tool", "langchain-tool"])
def test_retry_repeats_the_call_with_the_same_key_and_charges_once(
    db: str, service: PaymentService, tmp_path: Path, langchain: bool
) -> None:
    extra = ("--langchain",) if langchain else ()
    key = _crash(db, service, "retry", tmp_path / "hang", *extra)
    done = _run(*_opts(db, service, "retry"), *extra, "continue", "t1")
    assert done["ok"] and done["interrupts"] == []
    stats = service.stats()
    assert [r["key"] for r in stats["requests"]] == [key, key]  # two requests, one key
    assert len(stats["charges"]) == 1  # charged once
    answer = done["messages"][-1]["content"]
    assert answer == f"Done: charged ch_1 (42) key={key} replayed=True"
    assert key.startswith("dynavec-") and len(key) == len("dynavec-") + 32


def test_ask_pauses_and_each_answer_does_what_it_says(
    db: str, service: PaymentService, tmp_path: Path
) -> None:
    key = _crash(db, service, "ask", tmp_path / "hang")
    paused = _run(*_opts(db, service, "ask"), "continue", "t1")
    assert paused["ok"], paused
    (value,) = paused["interrupts"]
    assert value["node_id"] == "in_doubt_pay"
    assert value["payload"]["in_doubt"] is True and value["payload"]["idempotency_key"] == key
    assert "may or may not have run" in value["description"]
    assert value["allowed_decisions"] == ["approve", "reject", "respond"]
    assert value["action_requests"][0]["name"] == "pay"
    assert len(service.stats()["requests"]) == 1  # nothing ran

    # a stale plain "approved" (an approval re-sent) is no answer: asked again, nothing runs
    again = _run(*_opts(db, service, "ask"), "resume", "t1", json.dumps("approved"))
    (value,) = again["interrupts"]
    assert value["node_id"] == "in_doubt_pay" and "no answer" in value["error"]
    assert len(service.stats()["requests"]) == 1

    # the inbox lists it
    listed = warm_run(
        [sys.executable, "-m", "dynavec_langgraph._cli", "inbox", "list", "--db", db, "--json"],
        cwd=ROOT, timeout=TIMEOUT,
    )  # fmt: skip
    assert listed.returncode == 0, listed.stderr
    assert "in_doubt_pay" in listed.stdout and "t1" in listed.stdout and key in listed.stdout

    # respond: it ran, here is its result: answered with it, nothing runs
    told = _run(*_opts(db, service, "ask"), "resume", "t1",
                json.dumps({"type": "respond", "message": "charged ch_1 (42)"}))  # fmt: skip
    assert told["interrupts"] == []
    assert told["messages"][-2] == {"type": "tool", "content": "charged ch_1 (42)"}
    assert told["messages"][-1]["content"] == "Done: charged ch_1 (42)"
    assert len(service.stats()["requests"]) == 1


@pytest.mark.parametrize("answer", ["approve", "reject"])
def test_ask_approve_runs_again_with_the_key_reject_skips(
    service: PaymentService, tmp_path: Path, answer: str
) -> None:
    db = str(tmp_path / "agent.db")
    key = _crash(db, service, "ask", tmp_path / "hang")
    assert _run(*_opts(db, service, "ask"), "continue", "t1")["interrupts"]
    done = _run(*_opts(db, service, "ask"), "resume", "t1",
                json.dumps({"decisions": [{"type": answer}]}))  # fmt: skip
    assert done["interrupts"] == []
    stats = service.stats()
    tool_answer = done["messages"][-2]["content"]
    if answer == "approve":
        assert [r["key"] for r in stats["requests"]] == [key, key]
        assert len(stats["charges"]) == 1
        assert tool_answer == f"charged ch_1 (42) key={key} replayed=True"
    else:
        assert len(stats["requests"]) == 1
        assert tool_answer.startswith("Not run again") and key in tool_answer


def test_retry_on_dynamodb_charges_once(
    dynamodb_url: str, service: PaymentService, tmp_path: Path
) -> None:
    """The same crash on the DynamoDB saver (the package's adapter, on the local endpoint)."""
    key = _crash(dynamodb_url, service, "retry", tmp_path / "hang")
    done = _run(*_opts(dynamodb_url, service, "retry"), "continue", "t1")
    assert done["ok"] and done["interrupts"] == []
    stats = service.stats()
    assert [r["key"] for r in stats["requests"]] == [key, key] and len(stats["charges"]) == 1


def test_ask_on_dynamodb_pauses_and_approve_runs_again_under_the_key(
    dynamodb_url: str, service: PaymentService, tmp_path: Path
) -> None:
    key = _crash(dynamodb_url, service, "ask", tmp_path / "hang")
    paused = _run(*_opts(dynamodb_url, service, "ask"), "continue", "t1")
    (value,) = paused["interrupts"]
    assert value["node_id"] == "in_doubt_pay" and value["payload"]["idempotency_key"] == key
    assert len(service.stats()["requests"]) == 1  # nothing ran
    done = _run(*_opts(dynamodb_url, service, "ask"), "resume", "t1",
                json.dumps({"type": "approve"}))  # fmt: skip
    assert done["interrupts"] == []
    stats = service.stats()
    assert [r["key"] for r in stats["requests"]] == [key, key] and len(stats["charges"]) == 1


def test_fail_stops_with_a_clear_error_and_runs_nothing(
    db: str, service: PaymentService, tmp_path: Path
) -> None:
    key = _crash(db, service, "fail", tmp_path / "hang")
    failed = _run(*_opts(db, service, "fail"), "continue", "t1")
    assert failed["ok"] is False and failed["error"] == "InDoubtCallError"
    assert failed["attrs"]["key"] == key and failed["attrs"]["tool"] == "pay"
    assert failed["attrs"]["call_id"] in failed["message"] and key in failed["message"]
    assert "update_state" in failed["message"] and "dynavec_in_doubt" in failed["message"]
    assert len(service.stats()["requests"]) == 1  # nothing ran
    # still in doubt on the next run, until settled
    assert _run(*_opts(db, service, "fail"), "continue", "t1")["error"] == "InDoubtCallError"
    settled = _run(*_opts(db, service, "fail"), "settle", "t1", "retry")
    assert settled["ok"] and settled["messages"][-1]["content"].endswith("replayed=True")
    stats = service.stats()
    assert [r["key"] for r in stats["requests"]] == [key, key] and len(stats["charges"]) == 1


# --- the key, in process -----------------------------------------------------------------


def _keys_agent(seen: list[str]) -> Any:
    @tool
    def pay(amount: int) -> str:
        """Pay."""
        seen.append(idempotency_key())
        return "ok"

    turns = [[{"name": "pay", "args": {"amount": 1}, "id": "same"}], "done"] * 2
    return create_react_agent(ScriptedChatModel(turns=turns), [pay], checkpointer=InMemorySaver())


def test_the_key_differs_per_turn_and_per_thread_even_for_the_same_call_id() -> None:
    seen: list[str] = []
    graph = _keys_agent(seen)
    graph.invoke({"messages": [("user", "a")]}, {"configurable": {"thread_id": "k1"}})
    graph.invoke({"messages": [("user", "b")]}, {"configurable": {"thread_id": "k1"}})
    seen2: list[str] = []
    other = _keys_agent(seen2)
    other.invoke({"messages": [("user", "a")]}, {"configurable": {"thread_id": "k2"}})
    assert len(set(seen)) == 2 and seen2[0] not in seen


def test_the_key_is_the_same_when_a_paused_call_runs_again_and_in_langchain_tools() -> None:
    from dynavec_langgraph import interrupt

    seen: list[str] = []

    @tool
    def gated(amount: int) -> str:
        """Pay after approval."""
        seen.append(idempotency_key())
        interrupt("approve_pay", {"amount": amount})
        return "paid"

    def by_runtime(x: int, runtime: ToolRuntime) -> str:
        """Read the key from ToolRuntime."""
        seen.append(idempotency_key(runtime))
        seen.append(runtime.config["configurable"]["dynavec_idempotency_key"])
        seen.append(idempotency_key())
        return "ok"

    turns = [[{"name": "gated", "args": {"amount": 1}}, {"name": "lc", "args": {"x": 1}}], "end"]
    graph = create_react_agent(
        ScriptedChatModel(turns=turns), [gated, lc_tool("lc")(by_runtime)],
        checkpointer=InMemorySaver(),
    )  # fmt: skip
    config: RunnableConfig = {"configurable": {"thread_id": "k3"}}
    graph.invoke({"messages": [("user", "go")]}, config)
    graph.invoke(Command(resume="approved"), config)
    assert seen[0] == seen[1]  # the paused call ran again under its key
    assert seen[2] == seen[3] == seen[4] != seen[0]  # the LangChain tool: one key, its own


def test_idempotency_key_outside_a_tool_call_is_a_clear_error() -> None:
    with pytest.raises(ToolContextError, match="outside a tool call"):
        idempotency_key()


def test_bad_on_crash_is_refused_at_decoration_and_at_build() -> None:
    with pytest.raises(ValueError, match="on_crash='later'"):
        tool(on_crash="later")(lambda: "x")  # type: ignore[call-overload]

    def f(x: int) -> str:
        """F."""
        return "x"

    lc = lc_tool("f")(f)
    lc.metadata = {"on_crash": "sometimes"}
    with pytest.raises(ValueError, match="use 'retry'"):
        create_react_agent(ScriptedChatModel(turns=["x"]), [lc])


def test_only_tools_with_ask_or_fail_write_marks() -> None:
    """The rule: no mark for a tool that declares no on_crash or 'retry' (their wait, no read, under
    async durability: `test_an_undeclared_tool_is_retry_and_reads_no_checkpoint_to_wait`)."""
    policies: tuple[tuple[OnCrash | None, bool], ...] = ((None, False), ("retry", False))
    for on_crash, marked in (*policies, ("ask", True), ("fail", True)):
        saver = InMemorySaver()
        seen: list[str] = []

        @tool(on_crash=on_crash)
        def pay(amount: int) -> str:
            """Pay."""
            seen.append(idempotency_key())  # noqa: B023  (run inside this iteration)
            return "ok"

        graph = create_react_agent(
            ScriptedChatModel(turns=[[{"name": "pay", "args": {"amount": 1}}], "done"]), [pay],
            checkpointer=saver,
        )  # fmt: skip
        graph.invoke({"messages": [("user", "go")]}, {"configurable": {"thread_id": "m"}})
        channels = [w[1] for task in saver.writes.values() for w in task.values()]
        assert (START_CHANNEL in channels) is marked, channels
        assert channels.count(START_CHANNEL) == (2 if marked else 0)  # start + end
        assert len(seen) == 1


def test_a_tool_that_returned_before_the_crash_is_answered_from_its_done_mark() -> None:
    """The window after the tool returned, before LangGraph saved its result: the done mark
    holds the update, and the call is answered from it instead of running again."""
    saver = InMemorySaver()
    runs: list[str] = []

    @tool(on_crash="ask")
    def pay(amount: int) -> str:
        """Pay."""
        runs.append(idempotency_key())
        return "paid once"

    class Crash(BaseException):
        pass

    graph = create_react_agent(
        ScriptedChatModel(turns=[[{"name": "pay", "args": {"amount": 1}}], "done"]), [pay],
        checkpointer=saver,
    )  # fmt: skip
    config: RunnableConfig = {"configurable": {"thread_id": "w"}}
    original = saver.put_writes

    def put_writes(cfg: Any, writes: Any, task_id: str, task_path: str = "") -> None:
        original(cfg, writes, task_id, task_path)
        if any(c == "messages" for c, _ in writes) and not task_id.startswith("dynavec"):
            raise Crash  # the tool node's result never lands

    saver.put_writes = put_writes  # type: ignore[method-assign,assignment]
    with pytest.raises(Crash):
        graph.invoke({"messages": [("user", "go")]}, config, durability="sync")
    saver.put_writes = original  # type: ignore[method-assign]
    graph.invoke(None, config)
    messages = graph.get_state(config).values["messages"]
    assert [m.content for m in messages if isinstance(m, ToolMessage)] == ["paid once"]
    assert len(runs) == 1


def test_in_doubt_error_names_the_call_and_its_key() -> None:
    error = InDoubtCallError("t", "call_1", "pay", "dynavec-abc")
    assert isinstance(error, RuntimeError)
    assert "'call_1'" in str(error) and "dynavec-abc" in str(error) and "'pay'" in str(error)


def test_async_ask_pauses_after_a_crash_before_the_end_mark_and_approve_runs_again() -> None:
    """The async tool node: the process 'dies' right after the tool body (its end mark never
    lands), the next run pauses in doubt, approve runs it again under the same key."""
    import asyncio

    saver = InMemorySaver()
    keys: list[str] = []

    @tool(on_crash="ask")
    async def pay(amount: int) -> str:
        """Pay."""
        keys.append(idempotency_key())
        return f"paid {amount}"

    class Crash(BaseException):
        pass

    original = saver.aput_writes

    async def aput_writes(cfg: Any, writes: Any, task_id: str, task_path: str = "") -> None:
        if task_id.endswith(":done") and not keys[1:]:
            raise Crash  # dies before the end mark of the first run
        await original(cfg, writes, task_id, task_path)

    saver.aput_writes = aput_writes  # type: ignore[method-assign,assignment]
    graph = create_react_agent(
        ScriptedChatModel(turns=[[{"name": "pay", "args": {"amount": 5}}], "done"]), [pay],
        checkpointer=saver,
    )  # fmt: skip
    config: RunnableConfig = {"configurable": {"thread_id": "a"}}

    async def scenario() -> None:
        with pytest.raises(Crash):
            await graph.ainvoke({"messages": [("user", "go")]}, config, durability="sync")
        await graph.ainvoke(None, config)
        (pending,) = (await graph.aget_state(config)).interrupts
        assert pending.value["node_id"] == "in_doubt_pay"
        assert pending.value["payload"]["idempotency_key"] == keys[0]
        await graph.ainvoke(Command(resume={"type": "approve"}), config)

    asyncio.run(scenario())
    assert len(keys) == 2 and keys[0] == keys[1]
    messages = graph.get_state(config).values["messages"]
    assert [m.content for m in messages if isinstance(m, ToolMessage)] == ["paid 5"]


def test_ask_on_a_tool_with_its_own_approval_keeps_decisions_matched_to_pauses() -> None:
    """require_approval(pay) with on_crash="ask": approved, crashed mid-body; the in-doubt
    pause comes after the approval's stored decision, and "run again" asks the approval anew
    (the crash lost the decision it had), then runs under the same key."""
    from dynavec_langgraph.approval import require_approval

    saver = InMemorySaver()
    keys: list[str] = []
    crash = [True]

    @tool(on_crash="ask")
    def pay(amount: int) -> str:
        """Pay."""
        keys.append(idempotency_key())
        return f"paid {amount}"

    class Crash(BaseException):
        pass

    original = saver.put_writes

    def put_writes(cfg: Any, writes: Any, task_id: str, task_path: str = "") -> None:
        if task_id.endswith(":done") and crash[0]:
            crash[0] = False
            raise Crash
        original(cfg, writes, task_id, task_path)

    saver.put_writes = put_writes  # type: ignore[method-assign,assignment]
    graph = create_react_agent(
        ScriptedChatModel(turns=[[{"name": "pay", "args": {"amount": 5}}], "done"]),
        [require_approval(pay)], checkpointer=saver,
    )  # fmt: skip
    config: RunnableConfig = {"configurable": {"thread_id": "g"}}

    def pending() -> str:
        (one,) = graph.get_state(config).interrupts
        node: str = one.value["node_id"]
        return node

    graph.invoke({"messages": [("user", "go")]}, config, durability="sync")
    assert pending() == "approve_pay"
    with pytest.raises(Crash):
        graph.invoke(Command(resume="approved"), config, durability="sync")
    assert len(keys) == 1
    graph.invoke(None, config, durability="sync")
    assert pending() == "in_doubt_pay"
    graph.invoke(Command(resume={"type": "approve"}), config, durability="sync")
    assert pending() == "approve_pay" and len(keys) == 1  # asked anew, nothing ran yet
    graph.invoke(Command(resume="approved"), config, durability="sync")
    assert graph.get_state(config).interrupts == ()
    assert len(keys) == 2 and keys[0] == keys[1]
    messages = graph.get_state(config).values["messages"]
    assert [m.content for m in messages if isinstance(m, ToolMessage)] == ["paid 5"]


STALE_UI_ANSWERS = {
    "agent-chat-ui": {"decisions": [{"type": "approve"}]},
    "agent-inbox": [{"type": "accept", "args": None}],
    "studio": "approved",
}


@pytest.mark.parametrize("stale", list(STALE_UI_ANSWERS.values()), ids=list(STALE_UI_ANSWERS))
def test_an_unkeyed_answer_sent_before_the_in_doubt_question_is_not_its_answer(
    stale: Any,
) -> None:
    """Issue 34 on a server with a run queue: killed after the approval while ``pay`` ran; an
    approval UI answers the approval it still shows (no interrupt id), its run waits behind
    the killed one, which is re-claimed and asks the in-doubt question; then the queued answer
    runs. A server's run says when its request arrived (``configurable[SENT_AT]``): an answer
    sent before the question was asked is not taken as its answer (nothing runs, the question
    is asked again, ``superseded``), two such answers neither; an answer sent after it is.
    Without the time (in process) the answer is taken, as LangGraph gives it."""
    from dynavec_langgraph._exactly_once.gate import STALE_TEXT
    from dynavec_langgraph._lg_names import SENT_AT
    from dynavec_langgraph.approval import require_approval

    saver = InMemorySaver()
    keys: list[str] = []
    crash = [True]

    @tool(on_crash="ask")
    def pay(amount: int) -> str:
        """Pay."""
        keys.append(idempotency_key())
        return f"paid {amount}"

    class Crash(BaseException):
        pass

    original = saver.put_writes

    def put_writes(cfg: Any, writes: Any, task_id: str, task_path: str = "") -> None:
        if task_id.endswith(":done") and crash[0]:
            crash[0] = False
            raise Crash
        original(cfg, writes, task_id, task_path)

    saver.put_writes = put_writes  # type: ignore[method-assign,assignment]

    def turn(messages: list[Any]) -> Any:  # each thread: call pay, then answer
        return (
            "done"
            if isinstance(messages[-1], ToolMessage)
            else [{"name": "pay", "args": {"amount": 5}}]
        )

    graph = create_react_agent(
        ScriptedChatModel(policy=turn), [require_approval(pay)], checkpointer=saver
    )

    def at(thread_id: str, sent: float | None = None) -> RunnableConfig:
        conf: dict[str, Any] = {"thread_id": thread_id}
        if sent is not None:
            conf[SENT_AT] = int(sent * 1000)  # as langgraph-api keeps it: ms
        return {"configurable": conf}

    def pending(thread_id: str) -> Any:
        (one,) = graph.get_state(at(thread_id)).interrupts
        return one

    for thread_id in ("server", "in-process"):
        crash[0], ran = True, len(keys)
        graph.invoke({"messages": [("user", "go")]}, at(thread_id), durability="sync")
        assert pending(thread_id).value["node_id"] == "approve_pay"
        with pytest.raises(Crash):
            graph.invoke(Command(resume="approved"), at(thread_id), durability="sync")
        sent = time.time() - 1  # the UI's answer, sent while the killed run was in flight
        graph.invoke(None, at(thread_id), durability="sync")  # the re-claimed run asks
        asked = pending(thread_id)
        assert asked.value["node_id"] == "in_doubt_pay"

        if thread_id == "in-process":  # no time: LangGraph gives the answer to the question
            graph.invoke(Command(resume=stale), at(thread_id), durability="sync")
            if stale != "approved":  # taken as "run it again": the approval is asked anew
                assert pending(thread_id).value["node_id"] == "approve_pay"
            assert len(keys) == ran + 1  # the killed call; nothing ran again
            continue

        for _ in range(2):  # two UIs' answers queued the same way
            graph.invoke(Command(resume=stale), at(thread_id, sent), durability="sync")
            again = pending(thread_id)
            assert again.value["node_id"] == "in_doubt_pay"
            assert again.value["payload"]["superseded"] is True
            assert again.value["error"].startswith(STALE_TEXT)
            assert again.id != asked.id  # asked after the answer that took its slot
            asked = again
            assert len(keys) == 1  # nothing ran again
        answer: Command[Any] = Command(resume={"decisions": [{"type": "approve"}]})  # sent after
        graph.invoke(answer, at(thread_id, time.time()), durability="sync")
        assert pending(thread_id).value["node_id"] == "approve_pay" and len(keys) == 1
        graph.invoke(Command(resume="approved"), at(thread_id, time.time()), durability="sync")
        assert graph.get_state(at(thread_id)).interrupts == ()
        assert len(keys) == 2 and keys[0] == keys[1]  # run again under the same key
        messages = graph.get_state(at(thread_id)).values["messages"]
        assert [m.content for m in messages if isinstance(m, ToolMessage)] == ["paid 5"]


def test_the_langgraph_internals_read_are_as_pinned() -> None:
    """What _exactly_once reads from a task's config (langgraph 1.2.24): ``checkpoint_map``
    keyed by the graph's namespace, and the task namespace ``<node>:<task id>``."""
    from langgraph.config import get_config

    seen: list[dict[str, Any]] = []

    @tool
    def look() -> str:
        """Look."""
        seen.append(dict(get_config()["configurable"]))
        return "ok"

    graph = create_react_agent(
        ScriptedChatModel(turns=[[{"name": "look", "args": {}}], "done"]), [look],
        checkpointer=InMemorySaver(),
    )  # fmt: skip
    graph.invoke({"messages": [("user", "go")]}, {"configurable": {"thread_id": "p"}})
    (conf,) = seen
    node, task_id = conf["checkpoint_ns"].split(":")
    assert node == "tools" and len(task_id) >= 32
    assert set(conf["checkpoint_map"]) >= {""}


def test_react_agent_applies_the_policy_when_it_continues_a_crashed_thread() -> None:
    """dynavec's face: ``ReActAgent.resume(thread_id=...)`` without a decision continues a
    crashed thread through the same tool node; an ``on_crash="fail"`` call is refused."""
    from dynavec_langgraph import ReActAgent

    saver = InMemorySaver()
    keys: list[str] = []
    crash = [True]

    @tool(on_crash="fail")
    def pay(amount: int) -> str:
        """Pay."""
        keys.append(idempotency_key())
        return "paid"

    class Crash(BaseException):
        pass

    original = saver.put_writes

    def put_writes(cfg: Any, writes: Any, task_id: str, task_path: str = "") -> None:
        if task_id.endswith(":done") and crash[0]:
            crash[0] = False
            raise Crash
        original(cfg, writes, task_id, task_path)

    saver.put_writes = put_writes  # type: ignore[method-assign,assignment]
    agent = ReActAgent(
        ScriptedChatModel(turns=[[{"name": "pay", "args": {"amount": 5}}], "done"]), [pay],
        checkpointer=saver,
    )  # fmt: skip
    with pytest.raises(Crash):
        agent.run("go", thread_id="s")
    with pytest.raises(InDoubtCallError) as refused:
        agent.resume(thread_id="s")
    assert refused.value.key == keys[0] and len(keys) == 1


def test_tool_retry_middleware_retries_under_the_same_key() -> None:
    """LangChain's ``ToolRetryMiddleware`` re-runs a failing call: every try sees the same key
    (the call's), and the next call its own."""
    from langchain.agents.middleware import ToolRetryMiddleware

    from dynavec_langgraph import create_agent

    seen: list[str] = []

    def flaky(amount: int) -> str:
        """Charge; the service times out twice."""
        seen.append(idempotency_key())
        if len(seen) in (1, 2):
            raise TimeoutError("the payment service timed out")
        return f"charged {amount}"

    turns = [
        [{"name": "flaky", "args": {"amount": 5}}],
        [{"name": "flaky", "args": {"amount": 6}}],
        "done",
    ]
    agent = create_agent(
        ScriptedChatModel(turns=turns),
        [lc_tool("flaky")(flaky)],
        middleware=[ToolRetryMiddleware(max_retries=3, initial_delay=0.0, jitter=False)],
        checkpointer=InMemorySaver(),
    )
    out = agent.invoke({"messages": [("user", "pay")]}, {"configurable": {"thread_id": "r1"}})
    answers = [m.content for m in out["messages"] if isinstance(m, ToolMessage)]
    assert answers == ["charged 5", "charged 6"]
    assert len(seen) == 4 and seen[0] == seen[1] == seen[2] != seen[3]


# --- LangGraph's default durability="async": a declared call waits for its checkpoint ---------


class _SlowSaver(InMemorySaver):
    """Stores each checkpoint ``delay`` seconds late (a slow database under LangGraph's
    background saves) and counts the checkpoint reads."""

    def __init__(self, delay: float) -> None:
        super().__init__()
        self.delay = delay
        self.reads = 0

    def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        time.sleep(self.delay)
        return super().put(config, checkpoint, metadata, new_versions)

    async def aput(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        await asyncio.sleep(self.delay)
        return super().put(config, checkpoint, metadata, new_versions)

    def get_tuple(self, config: Any) -> Any:
        self.reads += "checkpoint_id" in config["configurable"]  # not LangGraph's first read
        return super().get_tuple(config)

    async def aget_tuple(self, config: Any) -> Any:
        self.reads += "checkpoint_id" in config["configurable"]
        return super().get_tuple(config)


def _stored_turn(saver: InMemorySaver) -> bool:
    """Whether the checkpoint the running tool task runs from (the model's step, holding its
    call) is stored (read around the counting)."""
    from langgraph.config import get_config

    conf = get_config()["configurable"]
    base = {"configurable": {"thread_id": conf["thread_id"], "checkpoint_ns": "",
                             "checkpoint_id": conf["checkpoint_map"][""]}}  # fmt: skip
    return InMemorySaver.get_tuple(saver, base) is not None  # type: ignore[arg-type]


@pytest.mark.slow  # each checkpoint stored 0.3 s late: left out of `make test-fast`
@pytest.mark.parametrize("policy", [None, "retry", "ask", "fail"])
@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
async def test_a_declared_call_starts_only_once_its_checkpoint_is_stored(
    policy: OnCrash | None, use_async: bool
) -> None:
    """Under LangGraph's default ``durability="async"`` the model's step is saved in the
    background: a tool declaring ``on_crash`` (any policy), or none (``"retry"``), does not
    start before the checkpoint holding the model's call is stored, so a crash in the tool can
    only re-run that call (same key), never lose the model's turn (a new call, a new key)."""
    saver = _SlowSaver(delay=0.3)
    seen: list[bool] = []

    @tool(on_crash=policy)
    def pay(amount: int) -> str:
        """Pay."""
        seen.append(_stored_turn(saver))
        return f"paid {amount}"

    graph = create_react_agent(
        ScriptedChatModel(turns=[[{"name": "pay", "args": {"amount": 5}}], "done"]), [pay],
        checkpointer=saver,
    )  # fmt: skip
    config: RunnableConfig = {"configurable": {"thread_id": "t"}}
    start = {"messages": [("user", "go")]}
    out = await graph.ainvoke(start, config) if use_async else graph.invoke(start, config)
    assert seen == [True]
    assert [m.content for m in out["messages"] if isinstance(m, ToolMessage)] == ["paid 5"]


def test_an_undeclared_tool_is_retry_and_reads_no_checkpoint_to_wait() -> None:
    """A tool declaring no ``on_crash`` is ``"retry"``: under ``durability="async"`` it waits
    for its checkpoint as a declared one does (tests/test_undeclared_crash.py kills it), on
    the save itself (the graph's saver knows the checkpoints it stored): no durability mode
    reads the checkpoint the call runs from."""
    saver = _SlowSaver(delay=0.0)
    ran: list[str] = []

    @tool
    def look() -> str:
        """Look."""
        ran.append(idempotency_key())
        return "ok"

    @tool(on_crash="retry")
    def pay() -> str:
        """Pay."""
        ran.append(idempotency_key())
        return "ok"

    cases: list[tuple[list[Any], Durability, int]] = [
        ([look], "async", 0), ([look], "sync", 0), ([look], "exit", 0), ([pay], "sync", 0),
        ([pay], "async", 0),
    ]  # fmt: skip
    for tools, durability, reads in cases:
        # reads: of the checkpoint the call runs from (the wait reads none: the save is here)
        graph = create_react_agent(
            ScriptedChatModel(turns=[[{"name": tools[0].name, "args": {}}], "done"]), tools,
            checkpointer=saver,
        )  # fmt: skip
        saver.reads = 0
        config: RunnableConfig = {"configurable": {"thread_id": f"{tools[0].name}-{durability}"}}
        graph.invoke({"messages": [("user", "go")]}, config, durability=durability)
        assert saver.reads == reads, (tools[0].name, durability)
        assert len(ran) == len(set(ran)), ran


def _where_in(saver: Any, checkpoint_id: str) -> Any:
    from dynavec_langgraph._exactly_once.marks import Where

    base = {"configurable": {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": checkpoint_id}}
    return Where(saver, "t", base, "task")  # type: ignore[arg-type]


def _put(saver: Any, checkpoint_id: str) -> None:
    from langgraph.checkpoint.base import empty_checkpoint

    checkpoint = {**empty_checkpoint(), "id": checkpoint_id}
    saver.put({"configurable": {"thread_id": "t", "checkpoint_ns": ""}}, checkpoint, {}, {})


def _in_database(inner: _SlowSaver, checkpoint_id: str) -> bool:
    """Whether the checkpoint is stored in ``inner`` (read around the counting)."""
    at: Any = {
        "configurable": {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": checkpoint_id}
    }
    return InMemorySaver.get_tuple(inner, at) is not None


def test_a_call_waits_for_the_save_running_here_and_reads_a_checkpoint_stored_elsewhere() -> None:
    """The wait of an undeclared call (``stored``): a checkpoint whose save runs in this
    process is waited for on that save, without a read (it returns as the save returns); one
    stored behind the graph's saver (another process) is read, once; ``forget`` drops what
    is known."""
    from concurrent.futures import ThreadPoolExecutor

    from dynavec_langgraph._exactly_once.wait import stored
    from dynavec_langgraph._graph.messages import ConversationChannel
    from dynavec_langgraph._persistence.history import HistoryCache
    from dynavec_langgraph.interrupt import ToolCallRef

    inner = _SlowSaver(delay=0.2)
    saver = HistoryCache(inner, {"messages": ConversationChannel()})
    call: ToolCallRef = {"id": "c1", "name": "look", "args": {}}
    with ThreadPoolExecutor(1) as pool:
        saving = pool.submit(_put, saver, "1")
        time.sleep(0.05)  # the save has started (LangGraph's background thread)
        assert stored(_where_in(saver, "1"), call, read=False) is None
        # woke as the save returned (the checkpoint is in the database; the pool's future may
        # be marked done a moment later), and read nothing
        assert _in_database(inner, "1") and inner.reads == 0
        saving.result(5.0)
    inner.delay = 0.0
    _put(inner, "2")  # stored behind the graph's saver: not known here, read
    assert stored(_where_in(saver, "2"), call) is not None and inner.reads == 1
    assert stored(_where_in(saver, "2"), call, read=False) is None  # known now: no read
    assert inner.reads == 1
    saver.forget("t")
    stored(_where_in(saver, "2"), call, read=False)
    assert inner.reads == 2


def test_a_call_sleeps_once_until_its_own_save_returns(monkeypatch: pytest.MonkeyPatch) -> None:
    """The wait of a call (``stored``) for a checkpoint LangGraph saves here: one sleep, woken
    as that save returns; neither the save of another checkpoint (the step before, chained
    ahead of it) nor the start of its own save wakes it (each wake-up of the waiting thread
    cost CPU per step: docs/benchmarks.md, the fourth pass). No read."""
    from concurrent.futures import ThreadPoolExecutor

    from dynavec_langgraph._exactly_once import wait
    from dynavec_langgraph._exactly_once.wait import stored
    from dynavec_langgraph._graph.messages import ConversationChannel
    from dynavec_langgraph._persistence.history import HistoryCache
    from dynavec_langgraph.interrupt import ToolCallRef

    monkeypatch.setattr(wait, "_FIRST_READ", 30.0)  # no read: only the saves wake it
    inner = _SlowSaver(delay=0.1)
    saver = HistoryCache(inner, {"messages": ConversationChannel()})
    sleeps: list[float | None] = []
    for name in ("_changed", "_returned"):
        condition = getattr(saver.stored, name, None)
        if condition is not None:
            original = condition.wait

            def counted(timeout: float | None = None, original: Any = original) -> bool:
                sleeps.append(timeout)
                return bool(original(timeout))

            monkeypatch.setattr(condition, "wait", counted)
    call: ToolCallRef = {"id": "c1", "name": "look", "args": {}}

    def the_saves() -> None:  # the step before, then the call's own checkpoint
        _put(saver, "0")
        _put(saver, "1")

    with ThreadPoolExecutor(1) as pool:
        saving = pool.submit(the_saves)
        time.sleep(0.02)  # the save of "0" has started
        assert stored(_where_in(saver, "1"), call, read=False) is None
        assert _in_database(inner, "1") and inner.reads == 0
        saving.result(5.0)
    assert len(sleeps) == 1, sleeps


async def _aput(saver: Any, checkpoint_id: str) -> None:
    from langgraph.checkpoint.base import empty_checkpoint

    checkpoint = {**empty_checkpoint(), "id": checkpoint_id}
    await saver.aput({"configurable": {"thread_id": "t", "checkpoint_ns": ""}}, checkpoint, {}, {})


@pytest.mark.parametrize("saved_on", ["loop", "thread"])
async def test_an_async_call_is_woken_by_the_save_running_here(
    saved_on: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The async wait (``astored``), as the sync one: a checkpoint whose save runs in this
    process, as a task of the same loop (LangGraph's ``aput`` under ``ainvoke``) or on another
    thread, is waited for on that save, woken as it returns, without a read and without
    polling (the pauses between reads are made 30 s here: a poll would not return in time);
    one stored behind the graph's saver is read, once; ``forget`` drops what is known."""
    from concurrent.futures import ThreadPoolExecutor

    from dynavec_langgraph._exactly_once import wait
    from dynavec_langgraph._exactly_once.wait import astored
    from dynavec_langgraph._graph.messages import ConversationChannel
    from dynavec_langgraph._persistence.history import HistoryCache
    from dynavec_langgraph.interrupt import ToolCallRef

    monkeypatch.setattr(wait, "_STORED_POLL", (30.0,) * 4)
    inner = _SlowSaver(delay=0.2)
    saver = HistoryCache(inner, {"messages": ConversationChannel()})
    call: ToolCallRef = {"id": "c1", "name": "look", "args": {}}
    with ThreadPoolExecutor(1) as pool:
        if saved_on == "loop":
            saving: Any = asyncio.ensure_future(_aput(saver, "1"))
        else:
            saving = pool.submit(_put, saver, "1")
        await asyncio.sleep(0.05)  # the save has started
        waited = astored(_where_in(saver, "1"), call, read=False)
        assert await asyncio.wait_for(waited, 5.0) is None
        # woke as the save returned (on a thread, its future is marked done a moment later)
        assert _in_database(inner, "1") and inner.reads == 0
        await asyncio.wait_for(asyncio.wrap_future(saving) if saved_on == "thread" else saving, 5.0)
    monkeypatch.undo()  # the pauses of the reads of a checkpoint not known here
    inner.delay = 0.0
    _put(inner, "2")  # stored behind the graph's saver: not known here, read
    assert await asyncio.wait_for(astored(_where_in(saver, "2"), call), 5.0) is not None
    assert inner.reads == 1
    assert await astored(_where_in(saver, "2"), call, read=False) is None  # known: no read
    assert inner.reads == 1
    saver.forget("t")
    await astored(_where_in(saver, "2"), call, read=False)
    assert inner.reads == 2


async def test_an_async_nap_wakes_on_any_save_and_leaves_no_waiter() -> None:
    """``StoredCheckpoints.anap`` returns as soon as a save here returns (or after its
    pause); a nap that timed out leaves nothing behind for the saves to wake."""
    from dynavec_langgraph._persistence.stored import StoredCheckpoints

    marks = StoredCheckpoints()
    at: Any = {"configurable": {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": "1"}}
    marks.saving(at)
    napping = asyncio.ensure_future(marks.anap(30.0))
    waiting = asyncio.ensure_future(marks.await_stored(at, 30.0))
    await asyncio.sleep(0.01)
    assert not napping.done() and not waiting.done()
    marks.saved(at, ok=True)
    assert await asyncio.wait_for(waiting, 5.0) is True
    await asyncio.wait_for(napping, 5.0)
    await marks.anap(0.001)  # nothing saved: it times out
    assert marks._waiters == []
    marks.saving(at)  # a save that raised: the waiter wakes, the checkpoint stays unknown
    other: Any = {"configurable": {**at["configurable"], "checkpoint_id": "2"}}
    marks.saving(other)
    waiting = asyncio.ensure_future(marks.await_stored(other, 30.0))
    await asyncio.sleep(0.01)
    marks.saved(other, ok=False)
    assert await asyncio.wait_for(waiting, 5.0) is False


def test_a_failed_save_is_not_known_stored() -> None:
    """A save that raised leaves the checkpoint unknown (the wait then reads it from the
    saver until it is there, ``StorageError`` after ``STORED_WAIT``); only the latest
    ``size`` checkpoints are remembered."""
    from dynavec_langgraph._persistence.stored import StoredCheckpoints

    marks = StoredCheckpoints(size=2)
    at = {"configurable": {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": "1"}}
    marks.saving(at)  # type: ignore[arg-type]
    marks.saved(at, ok=False)  # type: ignore[arg-type]
    assert marks.wait(at, 0.0) is False  # type: ignore[arg-type]
    for cid in ("1", "2", "3"):  # only the latest `size` are kept
        marks.seen({"configurable": {**at["configurable"], "checkpoint_id": cid}})
    assert marks.wait(at, 0.0) is False  # type: ignore[arg-type]


def test_the_durability_key_read_is_langgraphs() -> None:
    """``_lg_names.DURABILITY`` is where a task's config holds the run's durability
    (langgraph 1.2.24; absent when the run passes none: LangGraph's default ``"async"``)."""
    from langgraph.config import get_config

    from dynavec_langgraph._lg_names import DURABILITY

    seen: list[Any] = []

    @tool
    def look() -> str:
        """Look."""
        seen.append(get_config()["configurable"].get(DURABILITY))
        return "ok"

    graph = create_react_agent(
        ScriptedChatModel(policy=lambda m: "done" if isinstance(m[-1], ToolMessage) else [
            {"name": "look", "args": {}}]), [look], checkpointer=InMemorySaver(),
    )  # fmt: skip
    given: list[Durability | None] = ["sync", "async", "exit", None]
    for i, durability in enumerate(given):
        config: RunnableConfig = {"configurable": {"thread_id": f"d{i}"}}
        if durability is None:
            graph.invoke({"messages": [("user", "go")]}, config)
        else:
            graph.invoke({"messages": [("user", "go")]}, config, durability=durability)
    assert seen == ["sync", "async", "exit", None]


def test_an_ask_call_keeps_a_note_in_the_store_while_it_runs() -> None:
    """For a server's views (docs/exactly-once.md): an ``"ask"`` call's note is in the run's
    store while its body runs, under its key, naming the checkpoint it runs from, and gone
    when it ends (returned, raised, paused); other policies and a graph without a store write
    none. ``noted_in_doubt`` shows a pause of a noted call as its in-doubt question only on
    that checkpoint."""
    cases: tuple[tuple[OnCrash | None, bool], ...] = (
        ("ask", True), ("fail", False), ("retry", False), (None, False)
    )  # fmt: skip
    for on_crash, noted in cases:
        store, saver = InMemoryStore(), InMemorySaver()
        during: list[list[Any]] = []

        @tool(on_crash=on_crash)
        def pay(amount: int) -> str:
            """Pay."""
            during.append([i.value for i in store.search((NOTE_NS, "n"))])  # noqa: B023
            return "ok"

        graph = create_react_agent(
            ScriptedChatModel(turns=[[{"name": "pay", "args": {"amount": 1}}], "done"]), [pay],
            checkpointer=saver, store=store,
        )  # fmt: skip
        graph.invoke({"messages": [("user", "go")]}, {"configurable": {"thread_id": "n"}})
        [seen] = during
        assert bool(seen) is noted, (on_crash, seen)
        assert store.search((NOTE_NS, "n")) == []  # deleted when the call ended
        if not noted:
            continue
        [note] = seen
        assert note["call"]["name"] == "pay" and note["key"].startswith("dynavec-")
        assert note["checkpoint_ns"] == "" and note["checkpoint_id"]
        value = {"node_id": "approve_pay", "tool_call": note["call"], "payload": {}}
        pending = [{"id": "i1", "value": value}]
        [asked] = noted_in_doubt({"": note["checkpoint_id"]}, pending, [note]).values()
        assert asked["node_id"] == "in_doubt_pay"
        assert asked["payload"]["idempotency_key"] == note["key"]
        assert noted_in_doubt({"": "another-checkpoint"}, pending, [note]) == {}
        already = [{"id": "i1", "value": asked}]  # a pause that is the in-doubt question
        assert noted_in_doubt({"": note["checkpoint_id"]}, already, [note]) == {}


def test_a_nested_agents_note_names_its_subgraphs_checkpoint() -> None:
    """The agent as the node ``payments`` of a parent graph: the note of its ``"ask"`` call
    names the subgraph's namespace and the subgraph checkpoint the call ran from (the one a
    server's thread state read with ``subgraphs=True`` shows for that namespace while the
    call's run is dead), not the parent's; ``noted_in_doubt`` reads it there only."""
    store, saver = InMemoryStore(), InMemorySaver()
    during: list[Any] = []

    @tool(on_crash="ask")
    def pay(amount: int) -> str:
        """Pay."""
        during.extend(i.value for i in store.search((NOTE_NS, "n")))
        return "ok"

    agent = create_react_agent(
        ScriptedChatModel(turns=[[{"name": "pay", "args": {"amount": 1}}], "done"]), [pay]
    )
    parent = StateGraph(MessagesState)
    parent.add_node("payments", agent)
    parent.add_edge(START, "payments")
    graph = parent.compile(checkpointer=saver, store=store)
    graph.invoke({"messages": [HumanMessage("go")]}, {"configurable": {"thread_id": "n"}})
    [note] = during
    assert note["checkpoint_ns"].startswith("payments:")
    where = {"thread_id": "n"} | {k: note[k] for k in ("checkpoint_ns", "checkpoint_id")}
    ran_from = saver.get_tuple({"configurable": where})
    assert ran_from is not None and ran_from.checkpoint["id"] == note["checkpoint_id"]
    assert any(w[0].startswith(START_PREFIX) for w in ran_from.pending_writes or [])  # its marks
    value = {"node_id": "approve_pay", "tool_call": note["call"], "payload": {}}
    pending = [{"id": "i1", "value": value}]
    shown = {"": "parent-checkpoint", note["checkpoint_ns"]: note["checkpoint_id"]}
    [asked] = noted_in_doubt(shown, pending, [note]).values()
    assert asked["node_id"] == "in_doubt_pay"
    assert noted_in_doubt({"": note["checkpoint_id"]}, pending, [note]) == {}


def test_an_ask_call_that_raises_or_pauses_leaves_no_note() -> None:
    """Only a call cut off while it runs leaves its note."""
    store = InMemoryStore()

    @tool(on_crash="ask")
    def pay(amount: int) -> str:
        """Pay."""
        if amount == 1:
            raise ValueError("declined")
        interrupt("confirm", {"amount": amount})
        return "ok"

    calls = [[{"name": "pay", "args": {"amount": n}}] for n in (1, 2)]
    graph = create_react_agent(
        ScriptedChatModel(turns=[*calls, "done"]), [pay], checkpointer=InMemorySaver(), store=store
    )
    out = graph.invoke({"messages": [("user", "go")]}, {"configurable": {"thread_id": "r"}})
    assert out["__interrupt__"]  # the second call paused, the first raised
    assert store.search((NOTE_NS, "r")) == []
