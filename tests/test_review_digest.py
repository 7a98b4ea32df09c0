"""Decisions bound to the reviewed action (docs/approval-uis.md): every pause carries a review
digest; a decision bound to another pause (asked again since, or another call of the same tool
with other arguments) is refused with ``StaleDecisionError``, nothing runs and the pause stays;
a decision without a digest works as before. Real savers: in memory, a SQLite file, the
PostgreSQL server the tests start, DynamoDB Local; a second process is the command line (a
ReActAgent in a child process for DynamoDB, which the command line does not open)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command, Interrupt

from dynavec_langgraph import (
    InvalidDecisionError,
    ReActAgent,
    StaleDecisionError,
    create_react_agent,
    tool,
)
from dynavec_langgraph._approvals.inbox import graph_on, list_pending, resume_graph
from dynavec_langgraph._cli.db import open_saver
from dynavec_langgraph.approval import require_approval
from dynavec_langgraph.demo import LEDGER_ENV
from dynavec_langgraph.interrupt import (
    bind_decision,
    compute_review_digest,
    decision_digest,
    pause_value,
    resume_command,
    review_digest,
)
from dynavec_langgraph.savers import resolve_checkpointer
from dynavec_langgraph.testing import ScriptedChatModel
from tests import inbox_graph
from tests.children.warm import run as warm_run

GOAL = "wire 5 to Ann and 7 to Ann"
"""lookup, then wire(5, Ann), then wire(7, Ann): the same tool twice, other arguments."""


# --- the digest and the decision formats ---------------------------------------------------


def test_the_digest_covers_what_is_reviewed_and_which_ask() -> None:
    call: dict[str, Any] = {"id": "c1", "name": "wire", "args": {"amount": 5, "to": "Ann"}}
    base: dict[str, Any] = {
        "thread_id": "t",
        "node_id": "approve_wire",
        "tool_call": call,
        "name": "approve_wire",
        "args": {"amount": 5, "to": "Ann"},
        "payload": {"amount": 5, "to": "Ann"},
    }
    first = compute_review_digest(**base)
    assert first == compute_review_digest(**{**base, "args": {"to": "Ann", "amount": 5}})
    changed: list[dict[str, Any]] = [
        {"thread_id": "t2"},
        {"node_id": "approve_other"},
        {"tool_call": {**call, "id": "c2"}},
        {"tool_call": {**call, "args": {"amount": 7, "to": "Ann"}}},
        {"name": "other"},
        {"args": {"amount": 7, "to": "Ann"}},
        {"payload": {"amount": 7, "to": "Ann"}},
        {"ask": 1},
    ]
    digests = {compute_review_digest(**{**base, **change}) for change in changed}
    assert len(digests) == len(changed) and first not in digests
    value = pause_value("p", {"n": 1}, tool_call=None, name="p", args={"n": 1}, description="d")
    assert review_digest(value) == value["review_digest"] == review_digest(Interrupt(value, id="1"))
    assert review_digest(Interrupt("plain question", id="1")) is None


@pytest.mark.parametrize(
    "decision",
    [
        "approved",
        {"ok": True},
        42,
        {"type": "approve"},
        {"decisions": [{"type": "edit", "edited_action": {"name": "x", "args": {}}}]},
        [{"type": "accept", "args": None}],
        [{"type": "response", "args": "later"}],
    ],
)
def test_every_decision_format_carries_the_digest_and_gives_it_back(decision: Any) -> None:
    bound = bind_decision(decision, "ab" * 16)
    assert bound != decision
    assert decision_digest(bound) == (decision, "ab" * 16)
    assert decision_digest(decision) == (decision, None)


def test_digest_inside_the_decisions_items_is_read_and_two_digests_are_refused() -> None:
    one = {"decisions": [{"type": "approve", "review_digest": "ab" * 16}]}
    assert decision_digest(one) == ({"decisions": [{"type": "approve"}]}, "ab" * 16)
    two = [
        {"type": "accept", "review_digest": "ab" * 16},
        {"type": "accept", "review_digest": "cd"},
    ]
    with pytest.raises(InvalidDecisionError, match="2 different review digests"):
        decision_digest(two)
    with pytest.raises(InvalidDecisionError, match="carries no review digest"):
        bind_decision("approved", Interrupt("plain", id="1"))


# --- the raw graph: the tool node checks ---------------------------------------------------


def _graph(saver: BaseCheckpointSaver[Any]) -> Any:
    return graph_on(inbox_graph.graph, saver)


def _wires(graph: Any, cfg: Any) -> list[str]:
    messages = graph.get_state(cfg).values["messages"]
    return [str(m.content) for m in messages if isinstance(m, ToolMessage) and m.name == "wire"]


def _pause(graph: Any, cfg: Any) -> Interrupt:
    pending: tuple[Interrupt, ...] = graph.get_state(cfg).interrupts
    assert len(pending) == 1, pending
    return pending[0]


@pytest.fixture
def ledger(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "ledger.jsonl"
    monkeypatch.setenv(LEDGER_ENV, str(path))
    return path


def _ran(ledger: Path) -> list[tuple[Any, Any]]:
    if not ledger.exists():
        return []
    rows = [json.loads(line) for line in ledger.read_text().splitlines()]
    return [(r["to"], r["decision"]) for r in rows if r["tool"] == "wire"]


def test_raw_graph_refuses_a_decision_for_the_previous_call_of_the_same_tool(
    ledger: Path,
) -> None:
    graph = _graph(InMemorySaver())
    cfg = {"configurable": {"thread_id": "raw"}}
    graph.invoke({"messages": [("user", GOAL)]}, cfg)
    first = _pause(graph, cfg)
    seen_first = review_digest(first)
    assert first.value["payload"] == {"amount": 5, "to": "Ann"}
    graph.invoke(Command(resume=bind_decision("approved", first)), cfg)  # bound, right pause
    second = _pause(graph, cfg)
    assert second.value["payload"] == {"amount": 7, "to": "Ann"}
    assert review_digest(second) != seen_first
    assert _ran(ledger) == [("Ann", "approved")]

    # a second tab still showing the first pause approves it again: refused inside the graph
    out = graph.invoke(Command(resume=bind_decision("approved", seen_first)), cfg)
    (again,) = out["__interrupt__"]
    assert again.id != second.id and again.value["error"].startswith("stale decision")
    assert "thread 'raw'" in again.value["error"] and "Read the pause again" in again.value["error"]
    assert review_digest(again) == review_digest(second)  # the pause stays: same digest
    assert _ran(ledger) == [("Ann", "approved")]  # nothing ran
    assert len(_wires(graph, cfg)) == 1

    # the decision bound to what is pending now, in the LangChain 1.0 format
    out = graph.invoke(
        Command(resume={"decisions": [{"type": "approve", "review_digest": review_digest(again)}]}),
        cfg,
    )
    assert "__interrupt__" not in out
    assert _ran(ledger) == [("Ann", "approved"), ("Ann", "approved")]


def test_raw_graph_refuses_a_decision_for_an_approval_asked_again_since(ledger: Path) -> None:
    saver = InMemorySaver()
    graph = _graph(saver)
    cfg = {"configurable": {"thread_id": "reask"}}
    graph.invoke({"messages": [("user", "wire 5 to Ann")]}, cfg)
    first = _pause(graph, cfg)
    out = graph.invoke(Command(resume=[{"type": "accept"}, {"type": "accept"}]), cfg)  # refused
    (asked,) = out["__interrupt__"]
    assert asked.value["error"] and review_digest(asked) != review_digest(first)
    out = graph.invoke(Command(resume=bind_decision([{"type": "accept"}], first)), cfg)
    (again,) = out["__interrupt__"]
    assert "stale decision" in again.value["error"]
    assert review_digest(again) == review_digest(asked)
    assert _ran(ledger) == []
    # plain Command(resume=...) without a digest stays the LangGraph way
    out = graph.invoke(Command(resume="approved"), cfg)
    assert "__interrupt__" not in out and _ran(ledger) == [("Ann", "approved")]


def test_resume_command_bind_refuses_when_the_thread_moved_on(ledger: Path) -> None:
    graph = _graph(InMemorySaver())
    cfg = {"configurable": {"thread_id": "helper"}}
    graph.invoke({"messages": [("user", GOAL)]}, cfg)
    read = graph.get_state(cfg).interrupts  # what the reviewer read
    command = resume_command(read, {"approve_wire": "approved"}, bind=True)
    graph.invoke(resume_command(read, {"approve_wire": "approved"}), cfg)  # someone else
    pending = graph.get_state(cfg).interrupts
    out = graph.invoke(command, cfg)  # keyed by an interrupt id no longer pending: dropped
    assert out["__interrupt__"] == list(pending) and _ran(ledger) == [("Ann", "approved")]
    # the same bound value sent without the id (as a UI sends it): refused by the tool
    assert isinstance(command.resume, dict)
    out = graph.invoke(Command(resume=command.resume[read[0].id]), cfg)
    assert "stale decision" in out["__interrupt__"][0].value["error"]
    assert _ran(ledger) == [("Ann", "approved")]
    # unbound keeps today's value exactly
    plain = resume_command(read, {"approve_wire": "approved"})
    assert plain.resume == {read[0].id: "approved"}


def test_require_approval_reads_the_digest_in_every_ui_format() -> None:
    sent: list[str] = []

    @tool
    def send(to: str) -> str:
        """Send a message."""
        sent.append(to)
        return f"sent to {to}"

    model = ScriptedChatModel(
        policy=lambda m: (
            "done" if isinstance(m[-1], ToolMessage) else [{"name": "send", "args": {"to": "ann"}}]
        )
    )
    graph: Any = create_react_agent(model, [require_approval(send)], checkpointer=InMemorySaver())
    for i, decision in enumerate(
        [
            {"type": "approve"},
            {"decisions": [{"type": "approve"}]},
            [{"type": "accept", "args": None}],
        ]
    ):
        cfg = {"configurable": {"thread_id": f"ui{i}"}}
        pause = graph.invoke({"messages": [("user", "go")]}, cfg)["__interrupt__"][0]
        assert pause.value["review_digest"] and pause.value["tool_call"]["name"] == "send"
        stale = bind_decision(decision, "0" * 32)
        out = graph.invoke(Command(resume=stale), cfg)
        assert "stale decision" in out["__interrupt__"][0].value["error"]
        assert "call " in out["__interrupt__"][0].value["error"]
        assert len(sent) == i
        out = graph.invoke(Command(resume=bind_decision(decision, pause)), cfg)
        assert "__interrupt__" not in out and len(sent) == i + 1


def test_an_edit_naming_another_tool_never_runs_it_unreviewed() -> None:
    ran: list[str] = []

    @tool
    def send(to: str) -> str:
        """Send a message."""
        ran.append(f"send {to}")
        return "sent"

    @tool
    def delete_all(to: str) -> str:
        """Delete everything."""
        ran.append(f"delete_all {to}")
        return "deleted"

    model = ScriptedChatModel(
        policy=lambda m: (
            "done" if isinstance(m[-1], ToolMessage) else [{"name": "send", "args": {"to": "ann"}}]
        )
    )
    tools = [require_approval(send), require_approval(delete_all)]
    graph: Any = create_react_agent(model, tools, checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "edit"}}
    pause = graph.invoke({"messages": [("user", "go")]}, cfg)["__interrupt__"][0]
    edit = {"type": "edit", "edited_action": {"name": "delete_all", "args": {"to": "ann"}}}
    out = graph.invoke(Command(resume=bind_decision({"decisions": [edit]}, pause)), cfg)
    (again,) = out["__interrupt__"]
    assert "not name another action ('delete_all')" in again.value["error"]
    assert again.value["tool_call"]["name"] == "send" and ran == []


# --- the doors: ReActAgent, the inbox, the command line, on every saver ---------------------


@pytest.fixture(params=["memory", "sqlite", "postgres", "dynamodb"])
def saver_db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Any, str | None]]:
    """A saver, and the ``--db`` a second process opens it with (``None``: in memory)."""
    if request.param == "memory":
        yield InMemorySaver(), None
        return
    if request.param == "dynamodb":
        url: str = request.getfixturevalue("dynamodb_url")
        yield resolve_checkpointer(url), url
        return
    db = (
        str(tmp_path / "agent.db")
        if request.param == "sqlite"
        else request.getfixturevalue("pg_uri")
    )
    with open_saver(db, must_exist=False) as saver:
        yield saver, db


_SECOND = """
import sys
from dynavec_langgraph import ReActAgent, StaleDecisionError
from dynavec_langgraph.interrupt import bind_decision
from dynavec_langgraph.testing import ScriptedChatModel
from tests import inbox_graph

db, thread, digest = sys.argv[1:]
model = ScriptedChatModel(policy=inbox_graph.policy)
agent = ReActAgent(model, [inbox_graph.lookup, inbox_graph.wire], checkpointer=db)
try:
    result = agent.resume(thread_id=thread, human_decision=bind_decision("approved", digest))
except StaleDecisionError as error:
    print(error, file=sys.stderr)
    sys.exit(2)
print(result.termination_reason)
"""
"""A second process answering through ``ReActAgent`` (for a saver the command line does not
open: DynamoDB)."""


def _second(db: str, thread: str, digest: str) -> subprocess.CompletedProcess[str]:
    return _run([sys.executable, "-c", _SECOND, db, thread, digest])


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return _run([sys.executable, "-m", "dynavec_langgraph._cli", *args])


def _run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    return warm_run(argv, cwd=os.getcwd(), env=dict(os.environ), timeout=180)


def test_a_stale_decision_is_refused_at_every_door_on_every_saver(
    saver_db: tuple[Any, str | None], ledger: Path
) -> None:
    saver, db = saver_db
    model = ScriptedChatModel(policy=inbox_graph.policy)
    agent = ReActAgent(model, [inbox_graph.lookup, inbox_graph.wire], checkpointer=saver)
    paused = agent.run(GOAL, thread_id="pay")
    assert paused.interrupt_payload is not None
    seen = paused.interrupt_payload["review_digest"]
    assert seen == paused.interrupt_payload["pending"][0]["review_digest"]
    first = agent.resume(thread_id="pay", human_decision=bind_decision("approved", seen))
    assert first.interrupt_payload is not None
    now = first.interrupt_payload["review_digest"]
    assert now != seen and _ran(ledger) == [("Ann", "approved")]

    # ReActAgent (the guarded resume): refused before anything runs
    with pytest.raises(StaleDecisionError, match=r"thread 'pay', call '.*' of 'wire'") as error:
        agent.resume(thread_id="pay", human_decision=bind_decision("approved", seen))
    assert "Read the pause again" in str(error.value) and isinstance(error.value, ValueError)
    # the inbox
    graph = _graph(saver)
    with pytest.raises(StaleDecisionError):
        resume_graph(graph, saver, "pay", bind_decision("approved", seen))
    (row,) = list_pending(graph, saver)
    assert row.review_digest == now and row.as_dict()["review_digest"] == now
    if db is not None and db.startswith("dynamodb"):  # a second process: ReActAgent
        refused = _second(db, "pay", seen)
        assert refused.returncode == 2, (refused.stdout, refused.stderr)
        assert "stale decision for thread 'pay'" in refused.stderr
    elif db is not None:  # a second process: the command line
        listed = _cli("inbox", "list", "--db", db, "--graph", "tests.inbox_graph:graph", "--json")
        assert listed.returncode == 0, listed.stderr
        assert [r["review_digest"] for r in json.loads(listed.stdout)] == [now]
        base = ["inbox", "answer", "--db", db, "--graph", "tests.inbox_graph:graph"]
        refused = _cli(*base, "--thread", "pay", "--approve", "--digest", seen)
        assert refused.returncode == 2, refused.stdout
        assert "stale decision for thread 'pay'" in refused.stderr
    assert _ran(ledger) == [("Ann", "approved")]  # nothing ran anywhere
    assert review_digest(_pause(graph, {"configurable": {"thread_id": "pay"}})) == now

    # the digest of what is pending now is accepted (by the second process when there is one)
    if db is not None and db.startswith("dynamodb"):
        done = _second(db, "pay", now)
        assert (done.returncode, done.stdout) == (0, "completed\n"), done.stderr
    elif db is not None:
        base = ["inbox", "answer", "--db", db, "--graph", "tests.inbox_graph:graph"]
        done = _cli(*base, "--thread", "pay", "--approve", "--digest", now)
        assert done.returncode == 0, done.stderr
    else:
        result = agent.resume(thread_id="pay", human_decision=bind_decision("approved", now))
        assert result.finished
    assert _ran(ledger) == [("Ann", "approved"), ("Ann", "approved")]


def test_the_in_graph_check_when_a_second_process_moved_the_thread_on(
    saver_db: tuple[Any, str | None], ledger: Path
) -> None:
    """A reviewer read the pause, another process answered it, then the reviewer's bound
    decision reaches the graph directly (the raw graph: no door checked it)."""
    saver, db = saver_db
    graph = _graph(saver)
    cfg = {"configurable": {"thread_id": "race"}}
    graph.invoke({"messages": [("user", GOAL)]}, cfg)
    read = graph.get_state(cfg).interrupts
    if db is not None and db.startswith("dynamodb"):
        done = _second(db, "race", review_digest(read[0]) or "")
        assert done.returncode == 0, done.stderr
    elif db is not None:
        done = _cli(
            "inbox",
            "answer",
            "--db",
            db,
            "--graph",
            "tests.inbox_graph:graph",
            "--thread",
            "race",
            "--approve",
        )
        assert done.returncode == 0, done.stderr
    else:
        graph.invoke(Command(resume="approved"), cfg)
    assert _ran(ledger) == [("Ann", "approved")]
    out = graph.invoke(Command(resume=bind_decision("approved", read[0])), cfg)
    assert out["__interrupt__"][0].value["payload"] == {"amount": 7, "to": "Ann"}
    assert "stale decision" in out["__interrupt__"][0].value["error"]
    assert _ran(ledger) == [("Ann", "approved")]


def _redirecting_agent(ran: list[str], gated: dict[str, Any]) -> Any:
    from langchain.agents.middleware import HumanInTheLoopMiddleware

    from dynavec_langgraph import create_agent

    @tool
    def send(to: str) -> str:
        """Send a message."""
        ran.append("send")
        return "sent"

    @tool
    def delete_all(to: str) -> str:
        """Delete everything."""
        ran.append("delete_all")
        return "deleted"

    @tool
    def draft(to: str) -> str:
        """Draft a message."""
        ran.append("draft")
        return "drafted"

    model = ScriptedChatModel(
        policy=lambda m: (
            "done" if isinstance(m[-1], ToolMessage) else [{"name": "send", "args": {"to": "ann"}}]
        )
    )
    hitl = HumanInTheLoopMiddleware(interrupt_on=gated)
    return create_agent(
        model, [send, delete_all, draft], middleware=[hitl], checkpointer=InMemorySaver()
    )


def _redirect(to: str) -> Command[Any]:
    edit = {"type": "edit", "edited_action": {"name": to, "args": {"to": "ann"}}}
    return Command(resume={"decisions": [edit]})


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
async def test_a_hitl_edit_redirected_to_a_gated_tool_is_judged_by_its_rule(
    use_async: bool,
) -> None:
    """LangChain's ``HumanInTheLoopMiddleware`` on the package's ``create_agent``: an edit
    that names another tool the middleware gates asks about that tool (its own allowed
    decisions) before it runs; rejected there, it does not run."""
    ran: list[str] = []
    rules = {"send": True, "delete_all": {"allowed_decisions": ["approve", "reject"]}}
    agent = _redirecting_agent(ran, rules)

    async def invoke(value: Any, cfg: Any) -> Any:
        return await agent.ainvoke(value, cfg) if use_async else agent.invoke(value, cfg)

    for thread, answer, expect in [("yes", "approve", ["delete_all"]), ("no", "reject", [])]:
        ran.clear()
        cfg = {"configurable": {"thread_id": thread}}
        await invoke({"messages": [("user", "go")]}, cfg)
        out = await invoke(_redirect("delete_all"), cfg)
        (asked,) = out["__interrupt__"]
        assert (asked.value["type"], asked.value["name"]) == ("tool_approval", "delete_all")
        assert ran == []  # neither tool ran before its own review
        out = await invoke(Command(resume={"type": answer}), cfg)
        assert "__interrupt__" not in out and ran == expect
        (answered,) = [m for m in out["messages"] if isinstance(m, ToolMessage)]
        assert ("deleted" in str(answered.content)) == (answer == "approve")


def test_a_hitl_edit_redirected_to_an_ungated_tool_runs_it_as_langchain_does() -> None:
    ran: list[str] = []
    agent = _redirecting_agent(ran, {"send": True, "delete_all": True})
    cfg = {"configurable": {"thread_id": "draft"}}
    agent.invoke({"messages": [("user", "go")]}, cfg)
    out = agent.invoke(_redirect("draft"), cfg)
    assert "__interrupt__" not in out and ran == ["draft"]


def test_a_redirected_review_takes_an_edit_of_its_own_tool_and_a_response() -> None:
    """The redirected call's own review (``_middleware.per_call_review.review_call``) takes every
    decision its rule allows: an edit of that tool's args runs it with them; a response answers
    the call without running it; an edit naming yet another tool is refused (the schema pins the
    name)."""
    ran: list[str] = []
    agent = _redirecting_agent(ran, {"send": True, "delete_all": True})
    cfg = {"configurable": {"thread_id": "edit-again"}}
    agent.invoke({"messages": [("user", "go")]}, cfg)
    agent.invoke(_redirect("delete_all"), cfg)
    with pytest.raises(ValueError, match="delete_all"):
        again = {"name": "draft", "args": {"to": "bo"}}
        agent.invoke(Command(resume={"type": "edit", "edited_action": again}), cfg)
    assert ran == []
    edited = {"name": "delete_all", "args": {"to": "bo"}}
    out = agent.invoke(Command(resume={"type": "edit", "edited_action": edited}), cfg)
    assert "__interrupt__" not in out and ran == ["delete_all"]
    (call,) = out["messages"][1].tool_calls
    assert call["name"] == "send"  # the model's own call stays in the conversation

    ran.clear()
    cfg = {"configurable": {"thread_id": "respond"}}
    agent.invoke({"messages": [("user", "go")]}, cfg)
    agent.invoke(_redirect("delete_all"), cfg)
    out = agent.invoke(Command(resume={"type": "respond", "message": "not today"}), cfg)
    assert ran == []
    (answered,) = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert answered.status == "success"  # the first edit's notice, then the response
    assert str(answered.content).endswith(
        'Executed instead: delete_all with arguments {"to": "ann"}.\n\nTool response:\nnot today'
    )


MIRRORED_REVIEW = {
    # langchain.agents.middleware.human_in_the_loop internals that
    # dynavec_langgraph/_middleware/per_call_review.py mirrors; a change in the installed langchain
    # changes a digest: re-check the mirror, then update the digest.
    "HumanInTheLoopMiddleware._resolve_per_call": "a1fa38c6537bd438",
    "HumanInTheLoopMiddleware._tool_approval_request": "e37686836d3adba4",
    "HumanInTheLoopMiddleware._create_action_and_config": "b1f611f6702d2568",
    "HumanInTheLoopMiddleware._apply_edit": "7f0800beb8e5e637",
    "_decision_schema": "2c78f7afa4d13503",
    "_edit_decision": "07e08f1e0eb7c0ef",
    "_edit_args": "b57a352816780d99",
    "_as_sent": "a210bc3bf7d00c55",
    "_answer_message": "15bf6b83ff6f2195",
}


@pytest.mark.parametrize("name", sorted(MIRRORED_REVIEW))
def test_the_mirrored_per_call_review_has_not_changed(name: str) -> None:
    import hashlib
    import inspect

    import langchain.agents.middleware.human_in_the_loop as hitl

    target: Any = hitl
    for part in name.split("."):
        target = getattr(target, part)
    source = inspect.getsource(target)
    assert hashlib.sha256(source.encode()).hexdigest()[:16] == MIRRORED_REVIEW[name], name


def test_the_mirror_builds_the_schemas_and_messages_langchain_builds() -> None:
    import langchain.agents.middleware.human_in_the_loop as hitl
    from pydantic import TypeAdapter

    from dynavec_langgraph._middleware import per_call_review as mirror

    @tool
    def pay(to: str, amount: int) -> str:
        """Pay someone."""
        return "paid"

    theirs_schema = getattr(hitl, "_decision_schema")  # noqa: B009
    for allowed in (["approve"], ["approve", "reject"], ["approve", "edit", "reject", "respond"]):
        for given in (pay, None):
            ours = TypeAdapter(mirror._decision_schema(allowed, "pay", given)).json_schema()
            theirs = TypeAdapter(theirs_schema(allowed, "pay", given)).json_schema()
            assert ours == theirs, (allowed, given)
    theirs_message = getattr(hitl, "_answer_message")  # noqa: B009
    call = {"name": "pay", "args": {"to": "bo", "amount": 1}, "id": "c1", "type": "tool_call"}
    for decision in (
        {"type": "reject"},
        {"type": "reject", "message": "too much"},
        {"type": "respond", "message": "done by hand"},
    ):
        ours_m, theirs_m = mirror._answer_message(call, decision), theirs_message(call, decision)  # type: ignore[arg-type]
        assert ours_m == theirs_m, decision


def test_the_demo_command_line_shows_the_digest_and_resume_takes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(LEDGER_ENV, str(tmp_path / "ledger.jsonl"))
    paused = _cli("demo", "--thread", "t1")
    assert paused.returncode == 0, paused.stderr
    (line,) = [s for s in paused.stdout.splitlines() if s.startswith("Paused at")]
    digest = line.rsplit("review digest ", 1)[1].rstrip(".")
    assert len(digest) == 32
    base = ["resume", "--db", "dynavec-demo.db", "--thread", "t1", "--decision", "approve"]
    refused = _cli(*base, "--digest", "f" * 32)
    assert refused.returncode == 2 and "stale decision for thread 't1'" in refused.stderr
    assert "transfer_funds" not in (tmp_path / "ledger.jsonl").read_text()  # nothing ran
    done = _cli(*base, "--digest", digest)
    assert done.returncode == 0, done.stderr
    assert "Transferred 120 to landlord." in done.stdout


async def test_aresume_refuses_a_stale_decision_too(ledger: Path) -> None:
    model = ScriptedChatModel(policy=inbox_graph.policy)
    agent = ReActAgent(model, [inbox_graph.lookup, inbox_graph.wire], checkpointer=InMemorySaver())
    paused = await agent.arun(GOAL, thread_id="async")
    assert paused.interrupt_payload is not None
    seen = paused.interrupt_payload["review_digest"]
    await agent.aresume(thread_id="async", human_decision=bind_decision("approved", seen))
    with pytest.raises(StaleDecisionError):
        await agent.aresume(thread_id="async", human_decision=bind_decision("approved", seen))
    assert _ran(ledger) == [("Ann", "approved")]
