"""Every pause answered from the approval UIs people use, in-process.

The interrupt value of every pause carries each UI's fields; each UI's decision format reaches a
dynavec tool as docs/approval-uis.md says (counters prove what ran how often); a decision the tool
cannot take asks the same approval again, through the raw graph and ``ReActAgent``. The same
through ``langgraph dev`` is in tests/test_studio.py, and with a real browser in
tests/test_browser.py.
"""

from __future__ import annotations

import json
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import BaseMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command, Interrupt
from pydantic import BaseModel

from dynavec_langgraph import (
    AgentTool,
    InvalidDecisionError,
    ReActAgent,
    UnkeyedResumeError,
    create_react_agent,
    interrupt,
    tool,
)
from dynavec_langgraph.approval import ApprovalPolicy, require_approval
from dynavec_langgraph.demo import TransferDecision, create_demo_agent, demo_model
from dynavec_langgraph.interrupt import bind_decision
from dynavec_langgraph.testing import ScriptedChatModel
from tests.review import same_ask_again, says_why_first

CFG: Any = {"configurable": {"thread_id": "t"}}
DYNAVEC_KEYS = ("node_id", "payload", "tool_call")


def _ask_tool(runs: Counter[str], got: list[Any], payload: Any = None) -> AgentTool:
    """A tool written dynavec's way: it pauses, then reads the decision."""

    @tool
    def transfer(amount: int) -> str:
        """Transfer money once a person decided."""
        runs["started"] += 1
        shown = {"amount": amount} if payload is None else payload
        decision = interrupt("approve_transfer", shown)
        runs["decided"] += 1
        got.append(decision)
        return "sent" if decision == "approved" else f"not sent: {decision!r}"

    return transfer


def _graph(tool_: AgentTool) -> Any:
    model = ScriptedChatModel(turns=[[{"name": tool_.name, "args": {"amount": 5}}], "Done."])
    return create_react_agent(model, [tool_], checkpointer=InMemorySaver())


def _inbox_template_reads(value: Any) -> bool:
    """The npm template's ``isAgentInboxInterruptSchema`` (src/lib/agent-inbox-interrupt.ts)."""
    first = value[0] if isinstance(value, list) else value
    config = first.get("config") if isinstance(first, dict) else None
    return (
        isinstance(first.get("action_request"), dict)
        and isinstance(config, dict)
        and all(
            k in config for k in ("allow_respond", "allow_accept", "allow_edit", "allow_ignore")
        )
    )


def _check_every_ui_reads(pending: Interrupt, name: str, args: dict[str, Any]) -> None:
    value = pending.value
    json.dumps(value)  # plain JSON: the server and the UIs get it as it is
    assert all(k in value for k in DYNAVEC_KEYS)
    # LangChain 1.0 HITL (the current Agent Chat UI draws approve / edit / reject from these)
    assert value["action_requests"] == [
        {"name": name, "args": args, "arguments": args, "description": value["description"]}
    ]
    (review,) = value["review_configs"]
    assert review["action_name"] == name
    assert set(review["allowed_decisions"]) <= {"approve", "edit", "reject", "respond"}
    # Agent Inbox and the npm template
    assert value["action_request"] == {"action": name, "args": args}
    assert isinstance(value["description"], str) and value["description"]
    assert _inbox_template_reads(value)
    assert value["config"]["allow_accept"] is ("approve" in review["allowed_decisions"])
    # LangChain's per-call request, and Studio's form
    assert (value["type"], value["name"], value["args"]) == ("tool_approval", name, args)
    assert isinstance(pending.response_schema, dict)
    assert value["error"] is None


def test_a_plain_pause_carries_every_ui_s_fields() -> None:
    runs, got = Counter[str](), list[Any]()
    graph = _graph(_ask_tool(runs, got))
    (pending,) = graph.invoke({"messages": [("user", "pay")]}, CFG)["__interrupt__"]
    _check_every_ui_reads(pending, "approve_transfer", {"amount": 5})
    assert pending.value["payload"] == {"amount": 5}
    assert pending.value["tool_call"]["name"] == "transfer"
    assert pending.value["review_configs"][0]["allowed_decisions"] == [
        "approve", "edit", "reject", "respond",
    ]  # fmt: skip


def test_a_require_approval_pause_carries_every_ui_s_fields() -> None:
    @tool
    def send(to: str) -> str:
        """Send."""
        return f"sent to {to}"

    model = ScriptedChatModel(turns=[[{"name": "send", "args": {"to": "a"}}], "Done."])
    graph = create_react_agent(
        model, [require_approval(send, allowed=("approve", "reject"))], checkpointer=InMemorySaver()
    )
    (pending,) = graph.invoke({"messages": [("user", "go")]}, CFG)["__interrupt__"]
    _check_every_ui_reads(pending, "send", {"to": "a"})
    assert pending.value["review_configs"][0]["allowed_decisions"] == ["approve", "reject"]
    assert pending.value["node_id"] == "approve_send"


def test_the_demo_pause_carries_every_ui_s_fields() -> None:
    graph = create_demo_agent(model=demo_model(), checkpointer=InMemorySaver())
    (pending,) = graph.invoke({"messages": [("user", "pay 30 to Bob")]}, CFG)["__interrupt__"]
    _check_every_ui_reads(pending, "approve_transfer", {"amount": 30, "to": "Bob"})
    assert pending.value["review_configs"][0]["allowed_decisions"] == [
        "approve", "reject", "respond",
    ]  # fmt: skip
    assert pending.response_schema == TransferDecision.model_json_schema()


EDIT_10 = {"name": "approve_transfer", "args": {"amount": 10}}
PLAIN_CASES: list[tuple[str, Any, Any]] = [
    ("langchain-1.0 approve", {"decisions": [{"type": "approve"}]}, "approved"),
    ("langchain-1.0 reject", {"decisions": [{"type": "reject", "message": "no"}]}, "rejected"),
    (
        "langchain-1.0 edit",
        {"decisions": [{"type": "edit", "edited_action": EDIT_10}]},
        {"amount": 10},
    ),
    ("per-call approve", {"type": "approve"}, "approved"),
    ("per-call reject", {"type": "reject"}, "rejected"),
    ("per-call respond", {"type": "respond", "message": "ask me tomorrow"}, "ask me tomorrow"),
    ("inbox accept", [{"type": "accept", "args": None}], "approved"),
    (
        "inbox accept (template)",
        [{"type": "accept", "args": {"action": "approve_transfer", "args": {"amount": 5}}}],
        "approved",
    ),
    ("inbox ignore", [{"type": "ignore", "args": None}], "rejected"),
    ("inbox response", [{"type": "response", "args": "call me"}], "call me"),
    (
        "inbox edit",
        [{"type": "edit", "args": {"action": "approve_transfer", "args": {"amount": 10}}}],
        {"amount": 10},
    ),
    ("plain approved", "approved", "approved"),
    ("plain dict", {"ok": True, "note": "fine"}, {"ok": True, "note": "fine"}),
    ("plain number", 42, 42),
    ("plain list", ["a", "b"], ["a", "b"]),
    ("plain false", False, False),
    ("plain decisions list", {"decisions": ["a", "b"]}, {"decisions": ["a", "b"]}),
    ("plain list of dicts", [{"type": "mine"}], [{"type": "mine"}]),
]


@pytest.mark.parametrize(
    ("decision", "received"), [c[1:] for c in PLAIN_CASES], ids=[c[0] for c in PLAIN_CASES]
)
def test_every_ui_s_decision_reaches_a_plain_interrupt(decision: Any, received: Any) -> None:
    runs, got = Counter[str](), list[Any]()
    graph = _graph(_ask_tool(runs, got))
    graph.invoke({"messages": [("user", "pay")]}, CFG)
    assert runs == Counter({"started": 1})

    out = graph.invoke(Command(resume=decision), CFG)

    assert got == [received]
    assert runs == Counter({"started": 2, "decided": 1})
    assert out["messages"][-1].content == "Done."
    assert not graph.get_state(CFG).interrupts


def test_an_edit_of_a_payload_that_is_no_dict_returns_the_edited_value() -> None:
    runs, got = Counter[str](), list[Any]()
    graph = _graph(_ask_tool(runs, got, payload="pay 5 to Bob?"))
    (pending,) = graph.invoke({"messages": [("user", "pay")]}, CFG)["__interrupt__"]
    assert pending.value["action_request"]["args"] == {"payload": "pay 5 to Bob?"}
    edit = {"type": "edit", "args": {"action": "approve_transfer", "args": {"payload": "pay 3"}}}
    graph.invoke(Command(resume=[edit]), CFG)
    assert got == ["pay 3"]
    assert runs["decided"] == 1


DEMO_CASES: list[tuple[str, Any, str]] = [
    ("studio form", {"decision": "approved", "comment": "ok"}, "approved"),
    ("langchain-1.0", {"decisions": [{"type": "approve"}]}, "approved"),
    ("per-call", {"type": "reject", "message": "too much"}, "rejected"),
    ("inbox accept", [{"type": "accept", "args": None}], "approved"),
    ("inbox ignore", [{"type": "ignore", "args": None}], "rejected"),
    ("inbox response", [{"type": "response", "args": "rejected"}], "rejected"),
    ("plain", "approved", "approved"),
]


@pytest.mark.parametrize(
    ("decision", "kind"), [c[1:] for c in DEMO_CASES], ids=[c[0] for c in DEMO_CASES]
)
def test_every_ui_answers_the_demo(
    decision: Any, kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ledger = tmp_path / "ledger.jsonl"
    monkeypatch.setenv("DYNAVEC_DEMO_LEDGER", str(ledger))
    graph = create_demo_agent(model=demo_model(), checkpointer=InMemorySaver())
    graph.invoke({"messages": [("user", "pay 30 to Bob")]}, CFG)

    out = graph.invoke(Command(resume=decision), CFG)

    entries = [json.loads(line) for line in ledger.read_text().splitlines()]
    transfers = [e for e in entries if e["tool"] == "transfer_funds"]
    assert [(e["decision"], e["amount"]) for e in transfers] == [(kind, 30)]  # ran once
    assert out["messages"][-1].content.startswith("Done.")
    assert ("Transferred 30 to Bob." in out["messages"][-1].content) is (kind == "approved")
    assert not graph.get_state(CFG).interrupts


REFUSED: list[tuple[str, Any, str]] = [
    ("bad value", {"decision": "maybe"}, "decision: Input should be 'approved' or 'rejected'"),
    (
        "edit not offered",
        {"decisions": [{"type": "edit", "edited_action": EDIT_10}]},
        "'edit' is not allowed",
    ),
    ("two decisions", {"decisions": [{"type": "approve"}] * 2}, "expected one decision"),
    (
        "two inbox responses",
        [{"type": "accept"}, {"type": "ignore"}],
        "expected one Agent Inbox response",
    ),
    ("malformed", {"type": "respond"}, "message: Field required"),
    ("response text", [{"type": "response", "args": "maybe later"}], "Input should be 'approved'"),
]


@pytest.mark.parametrize(
    ("decision", "says"), [c[1:] for c in REFUSED], ids=[c[0] for c in REFUSED]
)
def test_a_refused_decision_asks_the_same_approval_again(
    decision: Any, says: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ledger = tmp_path / "ledger.jsonl"
    monkeypatch.setenv("DYNAVEC_DEMO_LEDGER", str(ledger))
    graph = create_demo_agent(model=demo_model(), checkpointer=InMemorySaver())
    (first,) = graph.invoke({"messages": [("user", "pay 30 to Bob")]}, CFG)["__interrupt__"]

    out = graph.invoke(Command(resume=decision), CFG)

    (again,) = graph.get_state(CFG).interrupts
    assert out["__interrupt__"] == [again]
    assert says in again.value["error"]
    assert same_ask_again(first.value, again.value)
    assert says_why_first(again.value)
    assert again.response_schema == first.response_schema
    assert [json.loads(x)["tool"] for x in ledger.read_text().splitlines()] == ["get_balance"]
    # answered again, by its new interrupt id as a UI does: the transfer runs once
    graph.invoke(Command(resume={again.id: [{"type": "accept", "args": None}]}), CFG)
    tools = [json.loads(x)["tool"] for x in ledger.read_text().splitlines()]
    assert tools == ["get_balance", "transfer_funds"]
    assert not graph.get_state(CFG).interrupts


def _policy(messages: list[BaseMessage]) -> Any:
    if isinstance(messages[-1], ToolMessage):
        return f"done: {messages[-1].content}"
    return [{"name": "transfer", "args": {"amount": 5}}]


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
async def test_react_agent_refuses_and_keeps_the_pause(use_async: bool) -> None:
    runs, got = Counter[str](), list[Any]()

    class Ok(BaseModel):
        ok: bool

    @tool
    def transfer(amount: int) -> str:
        """Transfer."""
        runs["started"] += 1
        decision = interrupt("approve_transfer", {"amount": amount}, response_schema=Ok)
        runs["decided"] += 1
        got.append(decision)
        return f"ok={decision.ok}"

    agent = ReActAgent(ScriptedChatModel(policy=_policy), [transfer])
    paused = await (
        agent.arun("pay", thread_id="t") if use_async else _sync(agent.run, "pay", thread_id="t")
    )
    assert paused.termination_reason == "interrupted"

    for bad in ({"ok": "perhaps"}, [{"type": "response", "args": "hm"}]):
        with pytest.raises(InvalidDecisionError, match=r"'approve_transfer'.*still paused"):
            if use_async:
                await agent.aresume(thread_id="t", human_decision=bad)
            else:
                agent.resume(thread_id="t", human_decision=bad)
        (pending,) = agent.graph.get_state(CFG).interrupts
        assert pending.value["error"]
        assert runs["decided"] == 0

    # two refused answers are stored and replayed on every re-run; the third is taken once
    done = await (
        agent.aresume(thread_id="t", human_decision={"ok": True})
        if use_async
        else _sync(agent.resume, thread_id="t", human_decision={"ok": True})
    )
    assert done.output == "done: ok=True"
    assert got == [Ok(ok=True)]
    assert runs == Counter({"started": 4, "decided": 1})


async def _sync(method: Any, *args: Any, **kwargs: Any) -> Any:
    return method(*args, **kwargs)


# --- a tool that pauses twice, on a saver the package opens --------------------------------


class Choice(BaseModel):
    ok: bool
    note: str = ""


def test_a_schema_decision_is_validated_again_on_every_re_run(tmp_path: Path) -> None:
    seen: list[tuple[str, Any]] = []
    runs = Counter[str]()

    @tool
    def two_step(amount: int) -> str:
        """Pauses twice: approve, then confirm."""
        runs["started"] += 1
        first = interrupt("approve", {"amount": amount}, response_schema=Choice)
        seen.append(("approve", first))
        second = interrupt("confirm", {"amount": amount}, response_schema=Choice)
        seen.append(("confirm", second))
        runs["finished"] += 1
        return f"{first.ok} {second.ok}"

    def policy(messages: list[BaseMessage]) -> Any:
        if isinstance(messages[-1], ToolMessage):
            return f"done: {messages[-1].content}"
        return [{"name": "two_step", "args": {"amount": 5}}]

    url = f"sqlite:///{tmp_path / 'twice.db'}"
    with ReActAgent(ScriptedChatModel(policy=policy), [two_step], checkpointer=url) as agent:
        agent.run("go", thread_id="t")
        agent.resume(thread_id="t", human_decision=Choice(ok=True, note="a"))
    # a fresh agent (a new process would do the same) on the same file
    with ReActAgent(ScriptedChatModel(policy=policy), [two_step], checkpointer=url) as agent:
        done = agent.resume(thread_id="t", human_decision={"ok": False})

    assert done.output == "done: True False"
    assert seen == [
        ("approve", Choice(ok=True, note="a")),  # first resume
        ("approve", Choice(ok=True, note="a")),  # re-run on the second resume: read back
        ("confirm", Choice(ok=False)),
    ]
    assert all(type(value) is Choice for _, value in seen)
    assert runs == Counter({"started": 3, "finished": 1})


def test_without_a_schema_a_model_decision_comes_back_as_the_saver_returns_it(
    tmp_path: Path,
) -> None:
    """What the docs say: without ``response_schema`` a re-run reads the decision back from
    the saver, so a pydantic object given in-process comes back as the saver revives it."""
    seen: list[Any] = []

    @tool
    def two_step(amount: int) -> str:
        """Pauses twice."""
        seen.append(interrupt("approve", {"amount": amount}))
        seen.append(interrupt("confirm", {"amount": amount}))
        return "ok"

    def policy(messages: list[BaseMessage]) -> Any:
        if isinstance(messages[-1], ToolMessage):
            return "done"
        return [{"name": "two_step", "args": {"amount": 5}}]

    url = f"sqlite:///{tmp_path / 'plain.db'}"
    with ReActAgent(ScriptedChatModel(policy=policy), [two_step], checkpointer=url) as agent:
        agent.run("go", thread_id="t")
        agent.resume(thread_id="t", human_decision=Choice(ok=True))
        agent.resume(thread_id="t", human_decision="yes")
    assert seen[0] == Choice(ok=True)  # the first read: the object itself
    assert seen[1] == {"ok": True, "note": ""}  # read back from SQLite: a dict
    assert type(seen[1]) is dict
    assert seen[2] == "yes"


# --- what the UIs show first: the policy's state, and the current Agent Inbox's Respond ------


@tool
def _send(amount: int, to: str) -> str:
    """Send ``amount`` to ``to``."""
    return f"sent {amount} to {to}"


def _gated(**options: Any) -> Any:
    model = ScriptedChatModel(
        turns=[[{"name": "_send", "args": {"amount": 10, "to": "Ann"}}], "Done."]
    )
    return create_react_agent(
        model, [require_approval(_send, **options)], checkpointer=InMemorySaver()
    )


@pytest.mark.parametrize(
    ("options", "first_lines"),
    [
        (
            {"approvals_required": 2},
            [
                "Needs 2 approvals by different approvers: 0 of 2 approvals in.",
                "Who may approve: any named approver. Each answers with their name",
            ],
        ),
        (
            {"approvers": ["alice", "role:admin"], "approvals_required": 2},
            [
                "Needs 2 approvals by different approvers: 0 of 2 approvals in.",
                "Who may approve: alice, role:admin. Each answers with their name",
            ],
        ),
        ({"approvers": ["alice"]}, ["Who may approve: alice. Each answers with their name"]),
    ],
)
def test_who_may_approve_and_the_count_come_first_and_edit_only_where_it_can_count(
    options: dict[str, Any], first_lines: list[str]
) -> None:
    """The description's first lines say who may approve and how many approvals are in;
    Edit is offered only where the policy can take it (one approval needed)."""
    graph = _gated(**options)
    (pending,) = graph.invoke({"messages": [("user", "go")]}, CFG)["__interrupt__"]
    value = pending.value
    lines = value["description"].split("\n\n")  # paragraphs: the UIs render Markdown
    assert len(lines) == len(first_lines) + 1 and "\n" not in "".join(lines), lines
    assert [x[: len(want)] for x, want in zip(lines, first_lines, strict=False)] == first_lines
    assert lines[-1] == "_send(amount=10, to='Ann')"
    assert value["action_requests"][0]["description"] == value["description"]
    several = options.get("approvals_required", 1) > 1
    kinds = (
        ["approve", "reject", "respond"] if several else ["approve", "edit", "reject", "respond"]
    )
    assert value["review_configs"] == [{"action_name": "_send", "allowed_decisions": kinds}]
    assert value["allowed_decisions"] == kinds
    assert value["config"]["allow_edit"] is not several
    assert value["config"]["allow_accept"] and value["config"]["allow_ignore"]


def test_the_count_of_approvals_in_is_on_the_first_line_after_one_approval() -> None:
    agent = ReActAgent(
        ScriptedChatModel(turns=[[{"name": "_send", "args": {"amount": 1, "to": "A"}}], "ok"]),
        [require_approval(_send, approvals_required=2, approvers=["alice", "bob"])],
        checkpointer=InMemorySaver(),
    )
    agent.run("go", thread_id="t")
    paused = agent.resume(thread_id="t", human_decision="approved", approver="alice")
    assert paused.termination_reason == "interrupted" and paused.interrupt_payload is not None
    description = paused.interrupt_payload["pending"][0]["description"]
    assert description.startswith(
        "Needs 2 approvals by different approvers: 1 of 2 approvals in (alice).\n\n"
        "Who may approve: alice, bob."
    ), description


def test_the_deadline_comes_first_and_says_plainly_once_it_has_passed() -> None:
    """The expiry is the description's first line; a pause asked again after its deadline (a
    re-run of the paused step without an answer) says it has expired; nothing runs."""
    now = [datetime(2026, 12, 1, 14, 0, tzinfo=UTC)]
    deadline = "2026-12-01T14:01:00+00:00"
    graph = _gated(policy=ApprovalPolicy(expires_at=deadline, clock=lambda: now[0]))
    (pending,) = graph.invoke({"messages": [("user", "go")]}, CFG)["__interrupt__"]
    assert pending.value["expires_at"] == deadline
    assert pending.value["description"] == (
        "Expires at 2026-12-01 14:01:00 UTC: after that it can no longer be approved, and any "
        "answer closes it as rejected.\n\n_send(amount=10, to='Ann')"
    )
    now[0] += timedelta(minutes=2)
    (again,) = graph.invoke(None, CFG)["__interrupt__"]  # the step runs again, unanswered
    assert again.value["description"].startswith(
        "Expired at 2026-12-01 14:01:00 UTC: it can no longer be approved; any answer closes it "
        "as rejected.\n\n"
    )
    out = graph.invoke(Command(resume={"decisions": [{"type": "approve"}]}), CFG)
    told = [m.content for m in out["messages"] if isinstance(m, ToolMessage)]
    assert told == [
        "The approval of the tool call for `_send` expired: the approval of 'approve__send' "
        "expired at 2026-12-01T14:01:00+00:00 (no decision in time). The tool was not executed."
    ]


def test_a_refused_edit_says_why_first_in_words_not_in_python() -> None:
    graph = _gated()
    graph.invoke({"messages": [("user", "go")]}, CFG)
    edit = {"type": "edit", "edited_action": {"name": "_send", "args": {"amount": "lots"}}}
    (again,) = graph.invoke(Command(resume={"decisions": [edit]}), CFG)["__interrupt__"]
    assert says_why_first(again.value)
    first = again.value["description"].split("\n\n")[0]
    assert first.startswith("Asked again: the edited arguments do not fit '_send' (invalid ")
    assert "amount: Input should be a valid integer" in first and "to: Field required" in first
    assert first.endswith("; edit them again. Nothing ran; decide again.")
    assert again.value["error"].startswith("the decision {'decisions': [{'type': 'edit'")


def test_the_current_agent_inbox_s_respond_rejects_where_only_reject_is_offered() -> None:
    """The current Agent Inbox has no Ignore and shows Respond wherever reject is allowed:
    its response to a pause offering approve and reject is a reject with that reason."""
    runs = Counter[str]()

    @tool
    def wire(amount: int) -> str:
        """Wire money."""
        runs["wire"] += 1
        return "wired"

    graph = _graph(require_approval(wire, allowed=("approve", "reject")))
    graph.invoke({"messages": [("user", "pay")]}, CFG)
    out = graph.invoke(Command(resume=[{"type": "response", "args": "too much"}]), CFG)
    assert "__interrupt__" not in out and runs["wire"] == 0
    (told,) = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert told.content == "User rejected the tool call for `wire` with reason: too much"

    got: list[Any] = []
    plain = _graph(_ask_tool(Counter[str](), got))
    plain.invoke({"messages": [("user", "pay")]}, CFG)
    plain.invoke(Command(resume=[{"type": "response", "args": "no"}]), CFG)
    assert got == ["no"]  # respond offered (the default): the text is the answer


def test_an_agent_inbox_response_is_still_refused_where_neither_is_offered() -> None:
    got: list[Any] = []

    @tool
    def ask_only(amount: int) -> str:
        """Approve or edit only."""
        got.append(interrupt("approve_only", {"amount": amount}, allowed=("approve", "edit")))
        return "done"

    graph = _graph(ask_only)
    graph.invoke({"messages": [("user", "pay")]}, CFG)
    (again,) = graph.invoke(Command(resume=[{"type": "response", "args": "x"}]), CFG)[
        "__interrupt__"
    ]
    assert "'respond' is not allowed for 'approve_only'" in again.value["error"] and got == []


@pytest.mark.parametrize(
    "decision",
    [{"decisions": [{"type": "approve"}]}, [{"type": "accept", "args": None}], "approved"],
    ids=["current Agent Chat UI", "Agent Inbox, template", "plain"],
)
def test_an_unkeyed_resume_with_several_pauses_pending_is_refused_and_keeps_them(
    decision: Any,
) -> None:
    """The UIs resume with no interrupt id; with two calls paused at once it cannot say
    which it answers: refused before anything runs (also the RuntimeError LangGraph raises),
    both pauses stay as they were, and each is answered by its id afterwards."""
    runs = Counter[str]()

    @tool
    def pay(to: str) -> str:
        """Pay someone."""
        runs[to] += 1
        return f"paid {to}"

    model = ScriptedChatModel(
        turns=[[{"name": "pay", "args": {"to": "a"}}, {"name": "pay", "args": {"to": "b"}}], "ok"]
    )
    graph = create_react_agent(
        model, [require_approval(pay)], checkpointer=InMemorySaver(), parallel_tool_calls=True
    )
    first, second = graph.invoke({"messages": [("user", "pay")]}, CFG)["__interrupt__"]
    for error_class in (UnkeyedResumeError, RuntimeError):
        with pytest.raises(error_class, match=r"2 pauses are pending on thread 't'") as raised:
            graph.invoke(Command(resume=decision), CFG)
        assert "nothing ran and every pause stays" in str(raised.value)
        assert first.id in str(raised.value) and second.id in str(raised.value)
    # both pauses kept as they were (the two calls ran at once: their order is the threads')
    kept = {i.id: i for i in graph.get_state(CFG).interrupts}
    assert kept == {first.id: first, second.id: second} and not runs
    out = graph.invoke(Command(resume={first.id: decision, second.id: decision}), CFG)
    assert out["messages"][-1].content == "ok" and runs == {"a": 1, "b": 1}


def test_an_unkeyed_resume_bound_to_one_of_several_pauses_answers_that_one() -> None:
    runs = Counter[str]()

    @tool
    def pay(to: str) -> str:
        """Pay someone."""
        runs[to] += 1
        return f"paid {to}"

    model = ScriptedChatModel(
        turns=[[{"name": "pay", "args": {"to": "a"}}, {"name": "pay", "args": {"to": "b"}}], "ok"]
    )
    graph = create_react_agent(
        model, [require_approval(pay)], checkpointer=InMemorySaver(), parallel_tool_calls=True
    )
    first, second = graph.invoke({"messages": [("user", "pay")]}, CFG)["__interrupt__"]
    out = graph.invoke(Command(resume=bind_decision({"type": "approve"}, second)), CFG)
    assert out["__interrupt__"] == [first] and runs == {"b": 1}
    out = graph.invoke(Command(resume={"decisions": [{"type": "approve"}]}), CFG)  # one left
    assert out["messages"][-1].content == "ok" and runs == {"a": 1, "b": 1}
