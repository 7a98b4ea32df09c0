"""Every option checked where it is given, no internal traceback (a part of issue 34).

Each case was reproduced first (the failure it had is in the test's docstring) and is now
refused with a typed error of the package's tree that names the option (or the field) and says
what to pass, through every public door that takes it: ``ApprovalPolicy``,
``require_approval``, ``interrupt(...)`` in a tool, the agent's ``approval_policy=``,
``ReActAgent`` / ``create_react_agent`` / ``RemoteReActAgent``, the audit trail's functions and
the command line (one line on stderr, exit code 2). Nothing runs or is written for a refused
option. The PostgreSQL cases use the server the tests start (``pg_uri``).
"""

from __future__ import annotations

import asyncio
import json
import math
import re
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.types import Command

from dynavec_langgraph import (
    ApprovalPolicy,
    ApproverRefusedError,
    ApproverRequiredError,
    DynavecError,
    InvalidDecisionError,
    InvalidInputError,
    InvalidOptionError,
    ReActAgent,
    StaleDecisionError,
    create_agent,
    create_react_agent,
    interrupt,
    tool,
)
from dynavec_langgraph._cli import main
from dynavec_langgraph._storable import MAX_NESTING
from dynavec_langgraph.approval import require_approval
from dynavec_langgraph.audit import (
    AUDIT_KEY,
    arecord,
    audit_trail,
    enqueue,
    outbox,
    record,
)
from dynavec_langgraph.demo import LEDGER_ENV
from dynavec_langgraph.remote import RemoteReActAgent
from dynavec_langgraph.testing import ScriptedChatModel
from tests.review import same_ask_again

ran: list[dict[str, Any]] = []


@pytest.fixture(autouse=True)
def _fresh_ledger() -> None:
    ran.clear()


@tool
def pay(amount: int, to: str) -> str:
    """Pay ``amount`` to ``to``."""
    ran.append({"amount": amount, "to": to})
    return f"Paid {amount} to {to}."


@tool(on_crash="fail")
def charge(amount: int) -> str:
    """Charge ``amount`` (not run twice after a crash)."""
    ran.append({"amount": amount})
    return f"Charged {amount}."


def _model(name: str = "pay", args: dict[str, Any] | None = None) -> ScriptedChatModel:
    """One call of ``name``, then an answer."""
    call = {"name": name, "args": args or {"amount": 5, "to": "Ann"}, "id": "call_1"}
    return ScriptedChatModel(turns=[AIMessage("", tool_calls=[call]), "Done."])


def cfg(thread: str = "t", **configurable: object) -> Any:
    return {"configurable": {"thread_id": thread, **configurable}}


def deep(levels: int) -> Any:
    """A decision of ``levels`` nested lists."""
    value: Any = "approved"
    for _ in range(levels):
        value = [value]
    return value


def _asking(asks: list[str] | None = None, node_id: str = "approve_send", **options: Any) -> Any:
    """A tool whose body pauses with ``interrupt(node_id, ..., **options)``; ``asks``: the
    node ids it declares (``None``: none)."""

    @tool(asks=asks)
    def send(amount: int, to: str) -> str:
        """Send ``amount`` to ``to`` once approved."""
        decision = interrupt(node_id, {"amount": amount, "to": to}, **options)
        ran.append({"amount": amount, "to": to, "decision": decision})
        return f"sent: {decision}"

    return send


def _refused_before_the_pause(agent: ReActAgent, option: str) -> InvalidOptionError:
    """``agent.run`` raises the option's error from the tool's ``interrupt(...)`` call: raised
    to the caller (not shown to the model), the steps before it saved, the call unanswered."""
    with pytest.raises(InvalidOptionError) as raised:
        agent.run("send 5 to Ann", thread_id="t")
    assert raised.value.option == option
    assert str(raised.value).startswith("interrupt('approve_send'): ")
    assert "the steps before it are saved and the tool call is unanswered" in str(raised.value)
    state = agent.graph.get_state(cfg())
    assert state.next == ("tools",) and not state.interrupts  # no pause was asked
    assert [type(m).__name__ for m in state.values["messages"]] == ["HumanMessage", "AIMessage"]
    assert ran == []
    return raised.value


# --- 1. config["configurable"]["dynavec_in_doubt"] -------------------------------------------


@pytest.mark.parametrize("factory", [create_react_agent, create_agent])
@pytest.mark.parametrize(
    "setting", ["retry", ["call_1"], {"call_1": "maybe"}, {1: "retry"}], ids=repr
)
def test_an_in_doubt_setting_that_is_no_call_map_is_refused_at_the_first_node(
    factory: Callable[..., Any], setting: Any
) -> None:
    """A string or a list raised ``AttributeError: 'str' object has no attribute 'get'``
    from the tool node of an ``on_crash`` tool (and was ignored by every other run); a value
    other than retry / skip was ignored."""
    model = _model("charge", {"amount": 5})
    graph = factory(model, [charge], checkpointer=InMemorySaver())
    with pytest.raises(InvalidOptionError) as raised:
        graph.invoke({"messages": [HumanMessage("charge 5")]}, cfg(dynavec_in_doubt=setting))
    assert raised.value.option == "configurable['dynavec_in_doubt']"
    assert isinstance(raised.value, ValueError | TypeError)
    message = str(raised.value)
    assert message.startswith(f"configurable['dynavec_in_doubt']={setting!r}: ")
    assert "pass a dict {call_id: 'retry' | 'skip'}" in message
    assert "before the model or any tool was called" in message
    assert model.call_count == 0 and ran == []
    # nothing was lost: the thread continues with a right setting
    done = graph.invoke(None, cfg(dynavec_in_doubt={"call_1": "retry"}))
    assert done["messages"][-1].content == "Done." and ran == [{"amount": 5}]


# --- 2. expiry: infinite, enormous, overflowing ----------------------------------------------

TOO_LONG: list[Any] = [math.inf, -math.inf, math.nan, 1e12, 10**400, timedelta.max]
NOT_POSITIVE: list[Any] = [0, -1, timedelta(seconds=-5)]
NOT_A_DURATION: list[Any] = ["soon", True, [5], None.__class__]


@pytest.mark.parametrize("value", TOO_LONG + NOT_POSITIVE + NOT_A_DURATION, ids=repr)
def test_an_expiry_that_is_no_usable_duration_is_refused_where_it_is_given(value: Any) -> None:
    """``expires_in=inf | nan | 1e12 | timedelta.max`` was accepted; at the pause an
    internal ``OverflowError`` became the tool's error and the approval was silently skipped
    (the model was told the tool failed, nothing was asked). Now every door refuses it."""
    for door in (
        lambda: ApprovalPolicy(expires_in=value),
        lambda: require_approval(pay, expires_in=value),
        lambda: require_approval(pay, policy=ApprovalPolicy(), expires_in=value),
    ):
        with pytest.raises(InvalidOptionError) as raised:
            door()
        assert raised.value.option == "expires_in"
        assert str(raised.value).startswith("expires_in=")
        assert any(
            hint in str(raised.value)
            for hint in ("at most 100 years", "positive duration", "a timedelta or a number")
        ), str(raised.value)
    agent = ReActAgent(_model("send"), [_asking(expires_in=value)], checkpointer=InMemorySaver())
    _refused_before_the_pause(agent, "expires_in")


def test_the_longest_expiry_still_pauses_with_its_deadline() -> None:
    """A hundred years is accepted and asked with its deadline (the 1e12 of the case above
    used to skip the approval)."""
    agent = ReActAgent(
        _model(),
        [require_approval(pay, expires_in=timedelta(days=36525))],
        checkpointer=InMemorySaver(),
    )
    assert agent.run("pay", thread_id="t").termination_reason == "interrupted"
    (pause,) = agent.graph.get_state(cfg()).interrupts
    left = datetime.fromisoformat(pause.value["expires_at"]) - datetime.now(UTC)
    assert timedelta(days=36524) < left <= timedelta(days=36525)
    assert ran == []
    assert agent.resume(thread_id="t", human_decision="approved").output == "Done."
    assert ran == [{"amount": 5, "to": "Ann"}]


FAR = datetime(9999, 12, 31, 23, 0, tzinfo=timezone(timedelta(hours=-5)))


@pytest.mark.parametrize("value", [FAR, FAR.isoformat()], ids=["datetime", "iso"])
def test_a_deadline_past_the_last_utc_datetime_is_refused(value: Any) -> None:
    """``expires_at`` in 9999 with a negative UTC offset raised ``OverflowError: date value
    out of range`` from ``ApprovalPolicy``; inside a tool it became the tool's error."""
    for door in (
        lambda: ApprovalPolicy(expires_at=value),
        lambda: require_approval(pay, expires_at=value),
    ):
        with pytest.raises(InvalidOptionError, match="past 9999-12-31 in UTC") as raised:
            door()
        assert raised.value.option == "expires_at"
    agent = ReActAgent(_model("send"), [_asking(expires_at=value)], checkpointer=InMemorySaver())
    _refused_before_the_pause(agent, "expires_at")
    # the same day with no offset is still a deadline
    assert ApprovalPolicy(expires_at="9999-12-31T00:00:00+00:00").deadline() is not None


# --- 3. the other options of require_approval / interrupt / ApprovalPolicy ------------------


@pytest.mark.parametrize("value", ["2", 0, -1, True, 1.5], ids=repr)
def test_approvals_required_that_is_no_whole_number_above_zero_is_refused(value: Any) -> None:
    """``require_approval(..., approvals_required="2")`` (and 0, -1, True) was accepted; the
    call then failed when it paused."""
    for door in (
        lambda: ApprovalPolicy(approvals_required=value),
        lambda: require_approval(pay, approvals_required=value),
    ):
        with pytest.raises(InvalidOptionError, match="pass a whole number of approvers >= 1"):
            door()
    agent = ReActAgent(
        _model("send"), [_asking(approvals_required=value)], checkpointer=InMemorySaver()
    )
    _refused_before_the_pause(agent, "approvals_required")


def test_on_expire_that_is_no_decision_is_refused_for_require_approval() -> None:
    """``require_approval(..., on_expire="maybe")`` was accepted; at the deadline it failed
    the call (``'maybe' is no decision on 'pay'``) instead of settling it."""
    with pytest.raises(InvalidOptionError) as raised:
        require_approval(pay, on_expire="maybe")
    assert raised.value.option == "on_expire"
    assert "an expired approval of 'pay' needs a decision: pass 'rejected'" in str(raised.value)
    with pytest.raises(InvalidOptionError, match="on_expire='maybe'"):
        require_approval(pay, policy=ApprovalPolicy(on_expire="maybe"))
    with pytest.raises(InvalidOptionError, match="on_expire=None"):
        ApprovalPolicy(on_expire=None)
    # the agent's policy for a require_approval tool is checked when the agent is built
    with pytest.raises(InvalidOptionError) as built:
        ReActAgent(
            _model(), [require_approval(pay)], approval_policy=ApprovalPolicy(on_expire="maybe")
        )
    assert built.value.option == "approval_policy"
    assert str(built.value).startswith("approval_policy= for 'approve_pay' (require_approval(pay)")
    # the decisions it takes, and a tool's own option that wins over the agent's
    for good in ("rejected", "approved", "raise", {"type": "reject", "message": "late"}):
        require_approval(pay, on_expire=good)
    ReActAgent(
        _model(),
        [require_approval(pay, on_expire="rejected")],
        approval_policy=ApprovalPolicy(on_expire="maybe", expires_in=5),
    )


def test_on_expire_of_a_plain_interrupt_is_what_it_returns_so_any_value_is_taken() -> None:
    """For ``interrupt(...)`` ``on_expire`` is the value the tool gets: "maybe" is one."""
    clock = Clock()
    agent = ReActAgent(
        _model("send"),
        [_asking(expires_in=60, on_expire="maybe")],
        checkpointer=InMemorySaver(),
        approval_policy=ApprovalPolicy(clock=clock),
    )
    agent.run("send", thread_id="t")
    clock.offset = timedelta(minutes=2)
    assert agent.resume(thread_id="t", human_decision="approved").output == "Done."
    assert ran == [{"amount": 5, "to": "Ann", "decision": "maybe"}]


class Clock:
    """The real time plus an offset the test moves."""

    def __init__(self) -> None:
        self.offset = timedelta()

    def __call__(self) -> datetime:
        return datetime.now(UTC) + self.offset


def test_a_clock_that_is_no_function_is_refused_and_a_naive_one_reaches_the_developer() -> None:
    """``clock="utc"`` was accepted and failed at the pause; a clock returning a naive time
    raised a ``ValueError`` that became the tool's error observation."""
    for door in (
        lambda: ApprovalPolicy(clock="utc"),  # type: ignore[arg-type]
        lambda: require_approval(pay, policy=ApprovalPolicy(clock="utc")),  # type: ignore[arg-type]
    ):
        with pytest.raises(InvalidOptionError, match="clock='utc': pass a function") as raised:
            door()
        assert raised.value.option == "clock"
    agent = ReActAgent(
        _model("send"),
        [_asking(expires_in=60)],
        checkpointer=InMemorySaver(),
        approval_policy=ApprovalPolicy(clock=datetime.now),  # naive
    )
    error = _refused_before_the_pause(agent, "clock")
    assert "it must return an aware datetime" in str(error)


def test_a_policy_that_is_no_approval_policy_is_refused() -> None:
    with pytest.raises(InvalidOptionError, match=r"policy=.*: pass an ApprovalPolicy or None"):
        require_approval(pay, policy={"expires_in": 5})  # type: ignore[arg-type]
    agent = ReActAgent(
        _model("send"), [_asking(policy={"expires_in": 5})], checkpointer=InMemorySaver()
    )
    _refused_before_the_pause(agent, "policy")
    for bad in ({"approve_pay": {"expires_in": 5}}, "strict", {1: ApprovalPolicy()}):
        with pytest.raises(InvalidOptionError, match="approval_policy=") as raised:
            ReActAgent(_model(), [pay], approval_policy=bad)
        assert raised.value.option == "approval_policy"


# --- 4. approvers no answer can satisfy, and policies nothing uses -------------------------


def _approvers() -> Iterator[str]:
    yield from ("alice", "bob")


@pytest.mark.parametrize(
    ("make", "detail"),
    [
        (lambda: [], "nobody could approve"),
        (lambda: (), "nobody could approve"),
        (_approvers, "an iterator is read only once"),
        (lambda: iter(["alice"]), "an iterator is read only once"),
        (lambda: {"alice", "bob"}, "pass a list of names"),
        (lambda: {"alice": "boss"}, "pass a list of names"),
        (lambda: "alice", "pass a list of names"),
        (lambda: ["alice", 7], "7 is neither a name nor 'role:NAME'"),
        (lambda: ["alice", ""], "'' is neither a name nor 'role:NAME'"),
        (lambda: ["role:"], "'role:' is neither a name nor 'role:NAME'"),
        (lambda: ["alice", print], "is neither a name nor 'role:NAME'"),
    ],
    ids=["empty", "empty-tuple", "generator", "iterator", "set", "dict", "str", "int", "blank",
         "role-without-name", "callable-in-list"],
)  # fmt: skip
def test_approvers_that_no_answer_can_satisfy_are_refused(
    make: Callable[[], Any], detail: str
) -> None:
    """``approvers=[]``, a generator (read by the first pause only: the next one allowed
    nobody) and entries that are no name were accepted; every answer was then refused."""
    with pytest.raises(InvalidOptionError) as raised:
        ApprovalPolicy(approvers=make())
    assert raised.value.option == "approvers"
    assert str(raised.value).startswith("approvers="), str(raised.value)
    assert detail in str(raised.value)
    with pytest.raises(InvalidOptionError, match=re.escape(detail)):
        require_approval(pay, approvers=make())
    agent = ReActAgent(_model("send"), [_asking(approvers=make())], checkpointer=InMemorySaver())
    assert detail in str(_refused_before_the_pause(agent, "approvers"))


def test_more_approvals_than_named_approvers_is_refused_where_it_is_known() -> None:
    """``approvals_required=2`` with one name was accepted; the pause could never be
    approved (the second answer is always "already approved")."""
    text = "approvals_required=2 but approvers= names only 1 (alice) and no role"
    for door in (
        lambda: ApprovalPolicy(approvers=["alice"], approvals_required=2),
        lambda: ApprovalPolicy(approvers=["alice", "alice"], approvals_required=2),
        lambda: require_approval(pay, approvers=["alice"], approvals_required=2),
        lambda: require_approval(
            pay, policy=ApprovalPolicy(approvers=["alice"]), approvals_required=2
        ),
    ):
        with pytest.raises(InvalidOptionError, match=re.escape(text)) as raised:
            door()
        assert raised.value.option == "approvals_required"
    # the tool's options on top of the agent's policy: known when the agent is built
    for build in (ReActAgent, create_react_agent):
        with pytest.raises(InvalidOptionError, match=re.escape(text)) as built:
            build(
                _model(),
                [require_approval(pay, approvers=["alice"])],
                approval_policy={"approve_pay": ApprovalPolicy(approvals_required=2)},
            )
        assert built.value.option == "approval_policy"
    # and in interrupt(): known when the tool asks
    agent = ReActAgent(
        _model("send"),
        [_asking(approvers=["alice"])],
        checkpointer=InMemorySaver(),
        approval_policy=ApprovalPolicy(approvals_required=2),
    )
    _refused_before_the_pause(agent, "approvals_required")
    # a role may hold any number of people: satisfiable, so accepted
    ApprovalPolicy(approvers=["alice", "role:finance"], approvals_required=3)
    ApprovalPolicy(approvers=lambda who, pause: True, approvals_required=5)


def test_an_approval_policy_nothing_can_use_is_refused_when_the_agent_is_built() -> None:
    """``approval_policy=`` for an agent without tools, or keyed by ``""``, was accepted and
    never applied."""
    policy = ApprovalPolicy(expires_in=60)
    for build in (ReActAgent, create_react_agent):
        with pytest.raises(InvalidOptionError, match="an agent without tools") as raised:
            build(_model(), [], approval_policy=policy)
        assert raised.value.option == "approval_policy"
        with pytest.raises(InvalidOptionError, match="the key '' names no pause"):
            build(_model(), [require_approval(pay)], approval_policy={"": policy})


def test_a_policy_for_a_node_id_no_tool_asks_is_refused_when_the_agent_is_built() -> None:
    """``approval_policy={"approve_sned": ...}`` (a typo), or a key for a node id only a
    tool's body asks without declaring it, was accepted and applied to no pause. Refused
    when the agent is built, naming the option, the key, the node ids the tools ask and how
    a body's node id is declared; nothing is built."""
    policy = ApprovalPolicy(approvers=["alice"])
    for build in (ReActAgent, create_react_agent):
        for key in ("approve_sned", "approve_send", "in_doubt_pay"):
            with pytest.raises(InvalidOptionError) as raised:
                build(
                    _model(),
                    [require_approval(pay), _asking()],
                    approval_policy={"approve_pay": policy, key: policy},
                )
            assert raised.value.option == "approval_policy"
            text = str(raised.value)
            assert text.startswith(f"approval_policy= has a policy for {key!r}, which no tool")
            assert "(the tools ask 'approve_pay' (pay))" in text
            assert f"@tool(asks=[{key!r}])" in text and "declaring none: send" in text
        assert "takes no approval policy" in text  # in_doubt_pay: the in-doubt question
        # no tool that can be known to ask anything: the same, with nothing to list
        with pytest.raises(InvalidOptionError, match="the tools ask no node id the agent"):
            build(_model(), [_asking()], approval_policy={"approve_send": policy})
        # declared, the key is known: a typo in it is still refused
        with pytest.raises(InvalidOptionError, match=r"'confirm' \(send\)"):
            build(_model(), [_asking(asks=["confirm"])], approval_policy={"approve_send": policy})
    assert ran == []


def _declared(kind: str, node_id: str = "approve_send") -> Any:
    """The tool of :func:`_asking`, its node id declared as ``kind`` declares it: ``@tool(
    asks=...)`` or a LangChain tool's ``metadata={"asks": ...}``."""
    if kind == "dynavec":
        return _asking(asks=["approve_send"], node_id=node_id)
    from langchain_core.tools import StructuredTool

    def send(amount: int, to: str) -> str:
        """Send ``amount`` to ``to`` once approved."""
        decision = interrupt(node_id, {"amount": amount, "to": to})
        ran.append({"amount": amount, "to": to, "decision": decision})
        return f"sent: {decision}"

    return StructuredTool.from_function(send, metadata={"asks": ["approve_send"]})


@pytest.mark.parametrize("kind", ["dynavec", "langchain"])
def test_a_node_id_a_tool_declares_takes_its_policy(kind: str) -> None:
    """A node id the body asks and the tool declares (``asks=``) is known: the policy for it
    is accepted and applies to the body's pause, through both constructors."""
    policy = {"approve_send": ApprovalPolicy(approvers=["alice"])}
    agent = ReActAgent(
        _model("send"), [_declared(kind)], checkpointer=InMemorySaver(), approval_policy=policy
    )
    assert agent.run("send", thread_id="t").termination_reason == "interrupted"
    (pause,) = agent.graph.get_state(cfg()).interrupts
    assert pause.value["approval"]["approvers"] == ["alice"]
    graph = create_react_agent(
        _model("send"), [_declared(kind)], checkpointer=InMemorySaver(), approval_policy=policy
    )
    (pause,) = graph.invoke({"messages": [("user", "send")]}, cfg())["__interrupt__"]
    assert pause.value["approval"]["approvers"] == ["alice"]
    assert ran == []


@pytest.mark.parametrize("kind", ["dynavec", "langchain"])
def test_a_node_id_its_tool_did_not_declare_is_refused_at_the_pause(kind: str) -> None:
    """A tool that declares ``asks=["approve_send"]`` but asks ``"approve-send"``: the
    agent's policy for the declared node id would silently not apply. ``interrupt()`` raises
    to the caller (not shown to the model), before the pause; nothing ran."""
    policy = {"approve_send": ApprovalPolicy(approvers=["alice"])}
    for agent in (
        ReActAgent(
            _model("send"),
            [_declared(kind, "approve-send")],
            checkpointer=InMemorySaver(),
            approval_policy=policy,
        ),
        ReActAgent(_model("send"), [_declared(kind, "approve-send")], checkpointer=InMemorySaver()),
    ):
        with pytest.raises(InvalidOptionError) as raised:
            agent.run("send", thread_id="t")
        assert raised.value.option == "asks"
        assert str(raised.value).startswith(
            "interrupt('approve-send'): 'send' declares asks=['approve_send'] but asked "
            "'approve-send': add 'approve-send' to its asks="
        )
        state = agent.graph.get_state(cfg())
        assert state.next == ("tools",) and not state.interrupts
    assert ran == []


@pytest.mark.parametrize("value", ["approve_send", ["approve_send", ""], [1], "", {"a": 1}])
def test_asks_that_is_no_list_of_node_ids_is_refused_where_it_is_given(value: Any) -> None:
    """``asks=`` is checked by ``@tool`` and, on a LangChain tool's metadata, when an agent
    takes the tool (every constructor: ``create_agent`` too)."""
    from langchain_core.tools import StructuredTool

    with pytest.raises(InvalidOptionError, match=r"^asks=.*: pass the node ids 'pay' may") as e:
        tool(asks=value)(pay)
    assert e.value.option == "asks"

    def plain(amount: int, to: str) -> str:
        """Pay ``amount`` to ``to``."""
        return "paid"

    lc = StructuredTool.from_function(plain, name="pay", metadata={"asks": value})
    for build in (ReActAgent, create_react_agent, create_agent):
        with pytest.raises(InvalidOptionError, match=r"^asks=.*: pass the node ids 'pay' may"):
            build(_model(), [lc])
    assert tool(asks=("a", "a", "b"))(plain).metadata == {"asks": ["a", "b"]}


# --- 5. ReActAgent(audit=...), RemoteReActAgent(url) -----------------------------------------


@pytest.mark.parametrize("value", ["no", "yes", 1, 0, None, [True]], ids=repr)
def test_audit_that_is_no_bool_is_refused(value: Any) -> None:
    """``ReActAgent(audit="no")`` was accepted, and switched the audit trail *on*."""
    with pytest.raises(InvalidOptionError) as raised:
        ReActAgent(_model(), [pay], audit=value)
    assert raised.value.option == "audit"
    assert str(raised.value).startswith(f"audit={value!r}: pass True to record every pause")
    with pytest.raises(InvalidOptionError, match=r"audit=.*: pass True"):
        RemoteReActAgent("http://127.0.0.1:2024", "agent", audit=value)
    assert ReActAgent(_model(), [pay], audit=False).audit("t") == []


@pytest.mark.parametrize(
    "url",
    ["", "file:///tmp/agent.db", "127.0.0.1:2024", "ftp://host", "http://", 2024],
    ids=repr,
)
def test_a_remote_agent_needs_the_http_url_of_a_langgraph_server(
    url: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """``RemoteReActAgent("file:///...")`` and ``RemoteReActAgent("")`` were accepted; the
    first request then failed with an httpx error."""
    with pytest.raises(InvalidOptionError) as raised:
        RemoteReActAgent(url, "agent")
    assert raised.value.option == "url"
    assert "a LangGraph API server is reached at an http:// or https:// URL" in str(raised.value)
    if not isinstance(url, str):
        return
    for argv in (
        ["inbox", "list", "--server", url],
        ["inbox", "answer", "--server", url, "--thread", "t", "--approve"],
        ["inbox", "history", "--server", url, "t"],
    ):
        _one_line_error(capsys, argv, f"--server={url!r}: a LangGraph API server is reached")
    agent = RemoteReActAgent("https://agents.example.com/", "agent")  # no request is made
    assert agent.url == "https://agents.example.com"
    agent.close()


def _one_line_error(capsys: pytest.CaptureFixture[str], argv: list[str], text: str) -> str:
    """``main(argv)`` prints one line on stderr (``text`` in it) and exits with 2."""
    capsys.readouterr()
    assert main(argv) == 2
    _, err = capsys.readouterr()
    assert err.startswith("dynavec-langgraph: error: ") and text in err, err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


# --- 6. the audit trail's functions and the command line with values they cannot store ------


def test_record_refuses_a_decision_nested_deeper_than_the_savers_store() -> None:
    """``audit.record(..., decision=<3000 levels>)`` raised ``RecursionError``."""
    saver = InMemorySaver()
    for levels in (3000, MAX_NESTING + 1):
        with pytest.raises(InvalidInputError) as raised:
            record(saver, "t", "decision", outcome="ok", surface="api", decision=deep(levels))
        assert raised.value.field == "decision"
        assert str(raised.value).startswith(
            f"decision is nested more than {MAX_NESTING} levels deep"
        )
        with pytest.raises(InvalidInputError, match="nested more than"):
            asyncio.run(
                arecord(saver, "t", "decision", outcome="ok", surface="api", decision=deep(levels))
            )
    assert audit_trail(saver, "t") == []  # nothing was written
    kept = record(saver, "t", "decision", outcome="ok", surface="api", decision=deep(MAX_NESTING))
    assert [e.decision for e in audit_trail(saver, "t")] == [deep(MAX_NESTING)] == [kept.decision]


def test_max_nesting_is_what_langgraphs_serializer_stores() -> None:
    serde = JsonPlusSerializer()
    serde.dumps_typed(deep(MAX_NESTING))
    serde.dumps_typed({"a": deep(MAX_NESTING - 1)})
    with pytest.raises(Exception, match=r"[Rr]ecursion"):
        serde.dumps_typed(deep(MAX_NESTING + 1))


@pytest.mark.parametrize(
    ("body", "field", "text"),
    [
        ({"event": "expired"}, "body['event_id']", "body['event_id']=None: a notification needs"),
        ({"event_id": ""}, "body['event_id']", "body['event_id']='': a notification needs"),
        ({"event_id": 7}, "body['event_id']", "body['event_id']=7: a notification needs"),
        ("expired", "body", "body='expired': pass the notification as a dict"),
        (["e1"], "body", "body=['e1']: pass the notification as a dict"),
        ({"event_id": "e1", "payload": deep(3000)}, "body", "body is nested more than"),
        ({"event_id": "e1", "note": "x \ud83d"}, "body['note']", "body['note']: character 2"),
    ],
    ids=["no-event-id", "empty-event-id", "int-event-id", "str", "list", "deep", "surrogate"],
)
def test_enqueue_refuses_a_body_it_cannot_send_or_store(body: Any, field: str, text: str) -> None:
    """A body without ``event_id`` raised ``KeyError: 'event_id'``, a string body
    ``TypeError: string indices must be integers``."""
    saver = InMemorySaver()
    with pytest.raises(InvalidInputError) as raised:
        enqueue(saver, "t", body)
    assert raised.value.field == field
    assert str(raised.value).startswith(text), str(raised.value)
    assert outbox(saver, "t") == []
    enqueue(saver, "t", {"event_id": "e1", "event": "expired"})  # "at" is filled in
    (delivery,) = outbox(saver, "t")
    assert (delivery.event_id, delivery.delivered) == ("e1", False)


def test_the_cli_refuses_a_decision_too_deep_to_read_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``inbox answer --decision '<3000-deep JSON>'`` printed a ``RecursionError`` traceback
    and exited with 1."""
    db = str(tmp_path / "w.db")
    with SqliteSaver.from_conn_string(db) as saver:
        graph = create_react_agent(_model(), [require_approval(pay)], checkpointer=saver)
        graph.invoke({"messages": [HumanMessage("pay")]}, cfg("w"))
    decision = "[" * 3000 + '"approved"' + "]" * 3000  # what json.dumps cannot even write
    for argv in (
        ["inbox", "answer", "--db", db, "--thread", "w", "--decision", decision],
        ["resume", "--db", db, "--thread", "w", "--decision", decision],
    ):
        error = _one_line_error(capsys, argv, "the decision is JSON nested too deeply to be read")
        assert f"(the checkpointers store {MAX_NESTING} levels at most)" in error
    with SqliteSaver.from_conn_string(db) as saver:
        graph = create_react_agent(_model(), [require_approval(pay)], checkpointer=saver)
        assert graph.get_state(cfg("w")).interrupts  # still paused: nothing was sent
    assert ran == []


# --- 7. text PostgreSQL (or the codec) cannot store -----------------------------------------


@pytest.mark.parametrize("saver", ["memory", "sqlite"])
def test_a_thread_id_with_a_nul_is_refused_on_every_saver(saver: str, tmp_path: Path) -> None:
    """Refused everywhere, so a thread id that works on one saver works on the others (on
    PostgreSQL it raised the driver's ``DataError``: next test)."""
    checkpointer = None if saver == "memory" else f"sqlite:///{tmp_path / 'a.db'}"
    agent = ReActAgent(_model(), [require_approval(pay)], checkpointer=checkpointer)
    with pytest.raises(InvalidInputError) as raised:
        agent.run("pay", thread_id="a\x00b")
    assert raised.value.field == "thread_id"
    assert str(raised.value).startswith("thread_id: character 1 is NUL ('\\x00')")
    agent.close()


def test_postgres_ids_and_audit_values_it_cannot_store_are_refused_before_writing(
    pg_uri: str,
) -> None:
    """On PostgreSQL a NUL in a thread id raised ``psycopg.DataError`` (``run``,
    ``get_checkpoint``, ``audit.record``) or a ``StorageError`` saying the thread was written
    by another program (``resume``); a lone surrogate in ``audit.record``'s decision raised
    ``UnicodeEncodeError``."""
    agent = ReActAgent(_model(), [require_approval(pay)], checkpointer=pg_uri)
    for call, field in (
        (lambda: agent.run("pay", thread_id="a\x00b"), "thread_id"),
        (lambda: agent.resume(thread_id="t\x00", human_decision="approved"), "thread_id"),
        (lambda: agent.get_checkpoint("t\x00"), "thread_id"),
        (lambda: agent.run("pay", thread_id="t", resume_from="c\x00"), "resume_from"),
        (lambda: asyncio.run(agent.arun("pay", thread_id="\x00")), "thread_id"),
    ):
        with pytest.raises(InvalidInputError) as raised:
            call()
        assert raised.value.field == field
        assert "is NUL ('\\x00'), which PostgreSQL cannot store in an id" in str(raised.value)
    assert agent.graph.get_state(cfg("t")).created_at is None  # nothing was written
    assert agent.run("pay", thread_id="t").termination_reason == "interrupted"
    with PostgresSaver.from_conn_string(pg_uri) as saver:
        for write, field in (
            (lambda: record(saver, "t", "decision", outcome="ok", surface="api",
                            decision="ok \ud83d"), "decision"),
            (lambda: record(saver, "t\x00", "decision", outcome="ok", surface="api"),
             "thread_id"),
            (lambda: record(saver, "t", "decision", outcome="ok", surface="api",
                            comment="\ud83d"), "comment"),
            (lambda: enqueue(saver, "t", {"event_id": "e", "text": "\ud83d"}), "body['text']"),
        ):  # fmt: skip
            with pytest.raises(InvalidInputError) as refused:
                write()
            assert refused.value.field == field
        assert audit_trail(saver, "t") == [] and outbox(saver, "t") == []
    assert agent.resume(thread_id="t", human_decision="approved").output == "Done."
    agent.close()


def test_a_raw_postgres_graph_recording_its_trail_stores_a_lone_surrogate_escaped(
    pg_uri: str,
) -> None:
    """A raw graph recording its trail on PostgreSQL, resumed with a decision holding a lone
    surrogate: the audit write raised ``UnicodeEncodeError`` inside the paused tool, which
    became the tool's error (the approval was skipped, the model told the tool failed). Now
    the paused tool refuses the decision and asks again; the trail holds it escaped."""
    with PostgresSaver.from_conn_string(pg_uri) as saver:
        saver.setup()
        graph = create_react_agent(_model(), [require_approval(pay)], checkpointer=saver)
        config = cfg("t", **{AUDIT_KEY: True})
        graph.invoke({"messages": [HumanMessage("pay")]}, config)
        graph.invoke(Command(resume="ok \ud83d"), config)
        state = graph.get_state(config)
        assert state.interrupts and ran == []
        assert not any(isinstance(m, ToolMessage) for m in state.values["messages"])
        refused = [e for e in audit_trail(saver, "t") if e.kind == "refused"]
        assert refused and "\\ud83d" in str(refused[0].decision)
        graph.invoke(Command(resume="approved"), config)
        assert ran == [{"amount": 5, "to": "Ann"}]


# --- 8. a pause that needs a named approver, answered without one -------------------------


@pytest.mark.parametrize(
    "options",
    [{"approvers": ["alice", "bob"]}, {"approvals_required": 2}],
    ids=["approvers", "two-approvals"],
)
def test_an_answer_without_an_approver_raises_approver_required(options: dict[str, Any]) -> None:
    """It raised ``StaleDecisionError`` (the pause is asked again under the same review
    digest), which says the decision was bound to another pause: it was not."""
    agent = ReActAgent(_model(), [require_approval(pay, **options)], checkpointer=InMemorySaver())
    agent.run("pay", thread_id="t")
    (pause,) = agent.graph.get_state(cfg()).interrupts
    with pytest.raises(ApproverRequiredError) as raised:
        agent.resume(thread_id="t", human_decision="approved")
    error = raised.value
    assert isinstance(error, InvalidDecisionError) and isinstance(error, DynavecError)
    assert not isinstance(error, StaleDecisionError | ApproverRefusedError)
    assert error.node_id == "approve_pay"
    assert str(error).startswith("'approve_pay' needs a named approver, and this answer names")
    assert "in Python, resume with approver=" in str(error)
    assert ran == []
    (again,) = agent.graph.get_state(cfg()).interrupts  # the same approval, asked again
    assert again.value["review_digest"] == pause.value["review_digest"]
    assert again.value["approval"]["approver_required"] is True
    with pytest.raises(ApproverRequiredError):
        asyncio.run(agent.aresume(thread_id="t", human_decision="approved"))
    needed = ["alice", "bob"][: options.get("approvals_required", 1)]
    for name in needed:
        result = agent.resume(thread_id="t", human_decision="approved", approver=name)
    assert result.output == "Done." and ran == [{"amount": 5, "to": "Ann"}]


def test_the_cli_says_to_name_the_approver(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(LEDGER_ENV, str(tmp_path / "ledger.jsonl"))
    db = str(tmp_path / "a.db")
    from tests import approvals_graph

    with SqliteSaver.from_conn_string(db) as saver:
        app = approvals_graph.two_approvers.copy(update={"checkpointer": saver})
        app.invoke({"messages": [HumanMessage("pay 5 to Ann")]}, cfg("w"))
    argv = ["inbox", "answer", "--db", db, "--graph", "tests.approvals_graph:two_approvers",
            "--thread", "w", "--approve"]  # fmt: skip
    capsys.readouterr()
    assert main(argv) == 2
    _, err = capsys.readouterr()
    assert err.startswith("dynavec-langgraph: error: 'approve_pay' needs a named approver")
    graph = "--graph tests.approvals_graph:two_approvers"  # the agent that paused it
    assert f"inbox answer --db {db} {graph} --thread w --approve --as NAME" in err
    assert "Traceback" not in err and not (tmp_path / "ledger.jsonl").exists()
    assert main([*argv, "--as", "alice"]) == 0


# --- 9. an edit adding an argument the tool does not take ----------------------------------

MEMO_EDIT = {
    "decisions": [
        {
            "type": "edit",
            "edited_action": {"name": "pay", "args": {"amount": 7, "to": "Bob", "memo": "rent"}},
        }
    ]
}
"""An edit of ``pay(amount, to)`` that adds ``memo``."""


def _refused_memo(error: BaseException) -> None:
    assert isinstance(error, InvalidDecisionError)
    assert not isinstance(error, StaleDecisionError | ApproverRefusedError)
    assert "the edited arguments do not fit 'pay': it does not take 'memo'" in str(error)
    assert "(it takes amount, to)" in str(error)


@pytest.mark.parametrize("use_async", [False, True], ids=["resume", "aresume"])
def test_an_edit_adding_an_argument_the_tool_does_not_take_is_refused(
    tmp_path: Path, use_async: bool
) -> None:
    """It was accepted: ``pay`` ran without ``memo`` (the model's calls drop unknown keys)
    and the model was told the call ran with it. Now it is refused before anything runs and
    the same approval is asked again; an edit without it then runs."""
    db = f"sqlite:///{tmp_path / 'a.db'}"
    agent = ReActAgent(_model(), [require_approval(pay)], checkpointer=db)
    agent.run("pay", thread_id="t")
    (pause,) = agent.graph.get_state(cfg()).interrupts
    with pytest.raises(InvalidDecisionError) as raised:
        if use_async:
            asyncio.run(agent.aresume(thread_id="t", human_decision=MEMO_EDIT))
        else:
            agent.resume(thread_id="t", human_decision=MEMO_EDIT)
    _refused_memo(raised.value)
    assert ran == []
    state = agent.graph.get_state(cfg())
    (again,) = state.interrupts  # the same approval, asked again
    assert same_ask_again(pause.value, again.value)
    assert "it does not take 'memo'" in again.value["error"]
    assert not any(isinstance(m, ToolMessage) for m in state.values["messages"])
    edit = {"type": "edit", "edited_action": {"name": "pay", "args": {"amount": 7, "to": "Bob"}}}
    done = agent.resume(thread_id="t", human_decision={"decisions": [edit]})
    assert done.output == "Done." and ran == [{"amount": 7, "to": "Bob"}]


def test_the_raw_graph_asks_again_after_an_edit_with_an_unknown_argument() -> None:
    """``Command(resume=...)``: the pause is asked again with the reason in its ``error``."""
    graph = create_react_agent(_model(), [require_approval(pay)], checkpointer=InMemorySaver())
    graph.invoke({"messages": [HumanMessage("pay")]}, cfg())
    (pause,) = graph.get_state(cfg()).interrupts
    out = graph.invoke(Command(resume={pause.id: MEMO_EDIT}), cfg())
    (again,) = out["__interrupt__"]
    assert same_ask_again(pause.value, again.value)
    assert "the edited arguments do not fit 'pay': it does not take 'memo'" in again.value["error"]
    assert ran == [] and not any(isinstance(m, ToolMessage) for m in out["messages"])


def test_the_cli_refuses_an_edit_with_an_unknown_argument_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    ledger = tmp_path / "ledger.jsonl"
    monkeypatch.setenv(LEDGER_ENV, str(ledger))
    db = str(tmp_path / "e.db")
    from tests import ui_graph

    with SqliteSaver.from_conn_string(db) as saver:
        app = ui_graph.graph.copy(update={"checkpointer": saver})
        app.invoke({"messages": [HumanMessage("send 10 to Ann")]}, cfg("e"))
    edit = {"type": "edit", "edited_action": {"name": "send_money", "args": {"amount": 3,
            "to": "Bob", "memo": "x"}}}  # fmt: skip
    argv = ["inbox", "answer", "--db", db, "--graph", "tests.ui_graph:graph", "--thread", "e",
            "--decision", json.dumps({"decisions": [edit]})]  # fmt: skip
    capsys.readouterr()
    assert main(argv) == 2
    _, err = capsys.readouterr()
    error, hint = err.splitlines()  # the error on one line, then the CLI's usual hint
    assert error.startswith("dynavec-langgraph: error: 'approve_send_money': the decision")
    assert "the edited arguments do not fit 'send_money': it does not take 'memo'" in error
    answer = f"inbox answer --db {db} --graph tests.ui_graph:graph --thread e --approve`"
    assert hint.startswith("dynavec-langgraph: hint: the thread stays paused") and answer in hint
    assert "Traceback" not in err
    assert not ledger.exists()
    with SqliteSaver.from_conn_string(db) as saver:
        app = ui_graph.graph.copy(update={"checkpointer": saver})
        assert app.get_state(cfg("e")).interrupts  # still paused


def test_tools_that_take_any_argument_take_an_added_one() -> None:
    """A function with ``**kwargs``, or a schema allowing additional properties, takes any
    key; a LangChain tool is checked by the schema the model sees."""
    from langchain_core.tools import tool as langchain_tool

    from dynavec_langgraph._tools.adapters import as_tools

    @tool
    def note(text: str, **extra: Any) -> str:
        """Write ``text``."""
        return text

    @langchain_tool
    def lc_pay(amount: int, to: str) -> str:
        """Pay ``amount`` to ``to``."""
        return "paid"

    assert note._unknown_arguments({"text": "a", "memo": "b"}) == []
    open_schema = {"type": "object", "properties": {"a": {}}, "additionalProperties": True}
    assert tool(parameters=open_schema)(note)._unknown_arguments({"b": 1}) == []
    (wrapped,) = as_tools([lc_pay])
    assert wrapped._unknown_arguments({"amount": 1, "to": "a", "memo": "b"}) == ["memo"]
    assert pay._unknown_arguments({"amount": 1, "memo": "b"}) == ["memo"]


# --- 10. an approvers rule that returns no bool ---------------------------------------------


def _says_no(approver: Any, pause: Any) -> Any:
    """An approvers rule with a bug: ``"no"`` (truthy) for a refusal."""
    return "no"


RULE_GRAPH = create_react_agent(_model(), [require_approval(pay, approvers=_says_no)])
"""``pay`` behind an approvers rule returning ``"no"`` (for ``inbox answer --graph``)."""


def _no_bool(error: InvalidOptionError) -> None:
    assert error.option == "approvers"
    assert "the rule returned 'no' for approver 'mallory', not True or False" in str(error)
    assert "Nothing ran and the pause stays" in str(error)


def test_an_approvers_rule_returning_no_bool_is_raised_and_the_pause_stays(tmp_path: Path) -> None:
    """``"no"`` is truthy: the rule's answer was read as ``bool("no")`` and the call ran. Now
    the answer is refused with the rule named, raised to whoever answered; the pause stays
    and an agent whose rule returns a bool answers it."""
    db = f"sqlite:///{tmp_path / 'r.db'}"
    agent = ReActAgent(_model(), [require_approval(pay, approvers=_says_no)], checkpointer=db)
    agent.run("pay", thread_id="t")
    (pause,) = agent.graph.get_state(cfg()).interrupts
    answers: list[Callable[[], object]] = [
        lambda: agent.resume(thread_id="t", human_decision="approved", approver="mallory"),
        lambda: asyncio.run(
            agent.aresume(thread_id="t", human_decision="rejected", approver="mallory")
        ),
    ]
    for answer in answers:
        with pytest.raises(InvalidOptionError) as raised:
            answer()
        _no_bool(raised.value)
        assert ran == []
        (still,) = agent.graph.get_state(cfg()).interrupts
        assert still.id == pause.id and not still.value["error"]  # the same pause, unanswered
    fixed = ReActAgent(
        ScriptedChatModel(turns=["Done."]),  # the model's next turn: the answer
        [require_approval(pay, approvers=lambda who, _: who["name"] == "alice")],
        checkpointer=db,
    )
    done = fixed.resume(thread_id="t", human_decision="approved", approver="alice")
    assert done.output == "Done." and ran == [{"amount": 5, "to": "Ann"}]


def test_the_raw_graph_and_the_cli_raise_a_rule_returning_no_bool(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from dynavec_langgraph.approval import approver_decision

    db = str(tmp_path / "r.db")
    with SqliteSaver.from_conn_string(db) as saver:
        graph = RULE_GRAPH.copy(update={"checkpointer": saver})
        graph.invoke({"messages": [HumanMessage("pay")]}, cfg("r"))
        with pytest.raises(InvalidOptionError) as raised:
            graph.invoke(Command(resume=approver_decision("approved", "mallory")), cfg("r"))
        _no_bool(raised.value)
        assert graph.get_state(cfg("r")).interrupts
    argv = ["inbox", "answer", "--db", db, "--graph", "tests.test_option_validation:RULE_GRAPH",
            "--thread", "r", "--approve", "--as", "mallory"]  # fmt: skip
    _one_line_error(capsys, argv, "approvers=<function _says_no")
    with SqliteSaver.from_conn_string(db) as saver:
        assert RULE_GRAPH.copy(update={"checkpointer": saver}).get_state(cfg("r")).interrupts
    assert ran == []


def test_postgres_an_unknown_edit_argument_and_a_rule_returning_no_bool_change_nothing(
    pg_uri: str,
) -> None:
    """Cases 9 and 10 on PostgreSQL: refused, nothing ran, the pause stays, then answered."""
    edit_thread, rule_thread = (f"{case}-{uuid.uuid4().hex}" for case in ("edit", "rule"))
    agent = ReActAgent(_model(), [require_approval(pay)], checkpointer=pg_uri)
    agent.run("pay", thread_id=edit_thread)
    with pytest.raises(InvalidDecisionError) as refused:
        agent.resume(thread_id=edit_thread, human_decision=MEMO_EDIT)
    _refused_memo(refused.value)
    assert agent.graph.get_state(cfg(edit_thread)).interrupts and ran == []
    ruled = ReActAgent(_model(), [require_approval(pay, approvers=_says_no)], checkpointer=pg_uri)
    ruled.run("pay", thread_id=rule_thread)
    with pytest.raises(InvalidOptionError) as raised:
        ruled.resume(thread_id=rule_thread, human_decision="approved", approver="mallory")
    _no_bool(raised.value)
    assert ruled.graph.get_state(cfg(rule_thread)).interrupts and ran == []
    done = agent.resume(thread_id=edit_thread, human_decision="approved")
    assert done.output == "Done." and ran == [{"amount": 5, "to": "Ann"}]
    agent.close()
    ruled.close()
