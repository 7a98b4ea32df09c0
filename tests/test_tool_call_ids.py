"""No tool call is lost whatever ids the provider sends.

Some OpenAI-compatible servers number tool calls ``call_0``, ``call_1``, ... afresh in every turn,
some repeat one id, some leave ids empty or ``None``. Answers are matched to calls by id, so
left as sent a repeated id looks answered: calls never run, or run away (an id of ``None``
ran 9,999 times), or get a copy of another call's result. Every call gets an id that is
unique in the thread when it enters the state (docs/compatibility.md, row I1).
Counters prove what ran how often; the reference (``langchain.agents.create_agent``) runs the
same script where the comparison makes sense.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool as lc_tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.types import Command

from dynavec_langgraph import ReActAgent, create_react_agent, interrupt, tool
from dynavec_langgraph._graph.messages import merge_conversation
from dynavec_langgraph._names import ORIGINAL_CALL_IDS_KEY
from dynavec_langgraph.testing import ScriptedChatModel
from tests.openai_server import OpenAIServer, chat_openai, validate

RUNS: Counter[str] = Counter()


@pytest.fixture(autouse=True)
def _reset() -> None:
    RUNS.clear()


@tool()
def step(n: int) -> str:
    """Do step n."""
    RUNS[f"step {n}"] += 1
    return f"step {n} done"


@tool()
def transfer_funds(amount: int) -> str:
    """Move money (asks a person first)."""
    decision = interrupt("approve_transfer", {"amount": amount})
    if decision != "approved":
        return "Cancelled."
    RUNS[f"transfer {amount}"] += 1
    return f"Transferred {amount}."


@tool()
def counter(label: str) -> str:
    """Count a label."""
    RUNS[f"counted {label}"] += 1
    return f"counted {label}"


def calls(*items: tuple[str, dict[str, Any], Any]) -> AIMessage:
    """An assistant turn with exactly these ``(name, args, id)`` calls (ids kept as given)."""
    return AIMessage(
        "",
        tool_calls=[{"name": n, "args": a, "id": i, "type": "tool_call"} for n, a, i in items],
    )


def per_turn_ids() -> list[Any]:
    """Five calls in three turns, every turn numbering its calls from ``call_0``."""
    return [
        calls(("step", {"n": 1}, "call_0")),
        calls(("step", {"n": 2}, "call_0"), ("step", {"n": 3}, "call_1")),
        calls(("step", {"n": 4}, "call_0"), ("step", {"n": 5}, "call_1")),
        "all five done",
    ]


def assert_valid(messages: Sequence[BaseMessage]) -> None:
    """Each call id is unique in the thread and answered exactly once, right after its turn."""
    ids = [c["id"] for m in messages if isinstance(m, AIMessage) for c in m.tool_calls]
    assert len(ids) == len(set(ids)), ids
    assert all(isinstance(i, str) and i for i in ids), ids
    open_ids: list[str] = []
    for m in messages:
        if isinstance(m, ToolMessage):
            assert m.tool_call_id in open_ids, (m.tool_call_id, open_ids)
            open_ids.remove(m.tool_call_id)
        else:
            assert not open_ids, f"calls {open_ids} unanswered before {m.type}"
            if isinstance(m, AIMessage):
                open_ids = [c["id"] or "" for c in m.tool_calls]
    assert not open_ids


def cfg(thread: str = "t") -> RunnableConfig:
    return {"configurable": {"thread_id": thread}}


# --- the reference runs every call; so do we ---------------------------------------------


def test_reference_create_agent_runs_every_call_with_per_turn_ids() -> None:
    graph = create_agent(ScriptedChatModel(turns=per_turn_ids()), [step])
    out = graph.invoke({"messages": [HumanMessage("go")]})
    assert RUNS == {f"step {n}": 1 for n in range(1, 6)}
    assert out["messages"][-1].content == "all five done"


@pytest.mark.parametrize("parallel", [False, True])
def test_per_turn_ids_every_call_runs_once(parallel: bool) -> None:
    graph = create_react_agent(
        ScriptedChatModel(turns=per_turn_ids()),
        [step],
        checkpointer=InMemorySaver(),
        parallel_tool_calls=parallel,
    )
    out = graph.invoke({"messages": [HumanMessage("go")]}, cfg())
    assert RUNS == {f"step {n}": 1 for n in range(1, 6)}
    assert out["messages"][-1].content == "all five done"
    assert_valid(out["messages"])
    answers = [m.content for m in out["messages"] if isinstance(m, ToolMessage)]
    assert answers == [f"step {n} done" for n in range(1, 6)]


def test_the_providers_original_ids_are_kept() -> None:
    graph = create_react_agent(ScriptedChatModel(turns=per_turn_ids()), [step])
    out = graph.invoke({"messages": [HumanMessage("go")]})
    turns = [m for m in out["messages"] if isinstance(m, AIMessage) and m.tool_calls]
    assert ORIGINAL_CALL_IDS_KEY not in turns[0].response_metadata  # call_0 was new then
    for turn in turns[1:]:
        originals = turn.response_metadata[ORIGINAL_CALL_IDS_KEY]
        assert [originals.get(c["id"], c["id"]) for c in turn.tool_calls] == [
            "call_0",
            "call_1",
        ]


@pytest.mark.parametrize("bad_id", ["", None, "   "])
@pytest.mark.parametrize("parallel", [False, True])
def test_empty_or_missing_ids_in_one_batch(bad_id: Any, parallel: bool) -> None:
    model = ScriptedChatModel(
        turns=[
            calls(("counter", {"label": "A"}, bad_id), ("counter", {"label": "B"}, bad_id)),
            "ok",
        ]
    )
    graph = create_react_agent(model, [counter], parallel_tool_calls=parallel)
    out = graph.invoke({"messages": [HumanMessage("go")]})
    assert RUNS == {"counted A": 1, "counted B": 1}
    answers = [m.content for m in out["messages"] if isinstance(m, ToolMessage)]
    assert sorted(answers) == ["counted A", "counted B"]
    assert_valid(out["messages"])


def test_none_id_runs_once_and_max_steps_bounds_the_run() -> None:
    """Adversarial case 1: ``id=None`` ran 9,999 times ignoring ``max_steps``."""
    model = ScriptedChatModel(policy=lambda _messages: calls(("counter", {"label": "A"}, None)))
    agent = ReActAgent(model, tools=[counter], max_steps=4)
    result = agent.run("go", thread_id="t")
    assert result.termination_reason == "max_steps_reached"
    assert len(model.calls) == 4
    assert RUNS == {"counted A": 4}  # one call per model turn, each run once
    assert result.tool_calls_count == 4


def test_none_id_with_an_approval_asks_once_and_transfers_once() -> None:
    model = ScriptedChatModel(turns=[calls(("transfer_funds", {"amount": 120}, None)), "paid"])
    agent = ReActAgent(model, tools=[transfer_funds], max_steps=4)
    paused = agent.run("pay rent", thread_id="t")
    assert paused.termination_reason == "interrupted"
    done = agent.resume(thread_id="t", human_decision="approved")
    assert done.termination_reason == "completed"
    assert done.output == "paid"
    assert RUNS == {"transfer 120": 1}
    snapshot = agent.graph.get_state(cfg())
    assert not snapshot.interrupts and not snapshot.next
    assert_valid(snapshot.values["messages"])


def test_duplicate_ids_in_one_batch_ask_the_approval() -> None:
    """Adversarial case 2: ``counter(id="dup")`` + ``transfer_funds(id="dup")`` completed
    without asking, both answered "counted A"."""
    model = ScriptedChatModel(
        turns=[
            calls(("counter", {"label": "A"}, "dup"), ("transfer_funds", {"amount": 5}, "dup")),
            "done",
        ]
    )
    graph = create_react_agent(model, [counter, transfer_funds], checkpointer=InMemorySaver())
    out = graph.invoke({"messages": [HumanMessage("go")]}, cfg())
    assert [i.value["node_id"] for i in out["__interrupt__"]] == ["approve_transfer"]
    assert RUNS == {"counted A": 1}
    out = graph.invoke(Command(resume="approved"), cfg())
    assert RUNS == {"counted A": 1, "transfer 5": 1}
    answers = [m.content for m in out["messages"] if isinstance(m, ToolMessage)]
    assert answers == ["counted A", "Transferred 5."]
    assert_valid(out["messages"])


# --- pause, resume and new input with repeated ids ----------------------------------------


def pausing_per_turn_ids() -> list[Any]:
    return [
        calls(("step", {"n": 1}, "call_0"), ("step", {"n": 2}, "call_1")),
        calls(("transfer_funds", {"amount": 3}, "call_0"), ("step", {"n": 4}, "call_1")),
        calls(("step", {"n": 5}, "call_0"), ("step", {"n": 6}, "call_1")),
        "finished",
    ]


def test_pause_and_resume_with_per_turn_ids_on_sqlite(tmp_path: Path) -> None:
    db = tmp_path / "ids.db"
    model = ScriptedChatModel(turns=pausing_per_turn_ids())
    with SqliteSaver.from_conn_string(str(db)) as saver:
        graph = create_react_agent(model, [step, transfer_funds], checkpointer=saver)
        out = graph.invoke({"messages": [HumanMessage("go")]}, cfg())
        assert out["__interrupt__"][0].value["payload"] == {"amount": 3}
        assert RUNS == {"step 1": 1, "step 2": 1}
    # a new saver on the same file: the thread reads back identically and resumes
    with SqliteSaver.from_conn_string(str(db)) as saver:
        graph = create_react_agent(model, [step, transfer_funds], checkpointer=saver)
        paused = graph.get_state(cfg())
        assert (
            paused.interrupts[0].value["tool_call"]["id"]
            == (paused.values["messages"][-1].tool_calls[0]["id"])
        )
        out = graph.invoke(Command(resume="approved"), cfg())
    assert RUNS == {f"step {n}": 1 for n in (1, 2, 4, 5, 6)} | {"transfer 3": 1}
    assert out["messages"][-1].content == "finished"
    assert_valid(out["messages"])


def test_new_input_on_a_paused_thread_with_per_turn_ids() -> None:
    model = ScriptedChatModel(
        turns=[
            calls(("step", {"n": 1}, "call_0"), ("transfer_funds", {"amount": 2}, "call_1")),
            calls(("step", {"n": 3}, "call_0")),
            "both handled",
        ]
    )
    agent = ReActAgent(model, tools=[step, transfer_funds])
    assert agent.run("pay", thread_id="t").termination_reason == "interrupted"
    graph = agent.graph
    out = graph.invoke({"messages": [HumanMessage("also step 3")]}, cfg())
    assert out["__interrupt__"][0].value["node_id"] == "approve_transfer"
    done = agent.resume(thread_id="t", human_decision="approved")
    assert done.termination_reason == "completed"
    assert RUNS == {"step 1": 1, "transfer 2": 1, "step 3": 1}
    assert_valid(graph.get_state(cfg()).values["messages"])


def test_dynavec_style_model_reusing_one_id_stops_at_max_steps() -> None:
    """dynavec's own max-steps test: a model that asks for the same call id every turn."""

    class SameIdModel:
        def __init__(self) -> None:
            self.calls = 0

        def invoke(self, messages: list[Any], tools: Any = None, **_: Any) -> dict[str, Any]:
            self.calls += 1
            return {
                "role": "assistant",
                "content": f"thinking {self.calls}",
                "tool_calls": [{"id": "call_1", "name": "counter", "arguments": '{"label": "A"}'}],
            }

    model = SameIdModel()
    result = ReActAgent(model, tools=[counter], max_steps=3).run("loop")
    assert result.termination_reason == "max_steps_reached"
    assert not result.finished
    assert model.calls == 3
    assert RUNS == {"counted A": 3}
    assert result.total_steps == 3
    assert result.output == "thinking 3"


# --- the reducer: user input and histories with repeated ids ------------------------------


def test_a_history_with_repeated_ids_keeps_each_answer_with_its_call() -> None:
    history: list[AnyMessage] = [
        HumanMessage("go", id="h"),
        calls(("step", {"n": 1}, "call_0")).model_copy(update={"id": "a1"}),
        ToolMessage("one", tool_call_id="call_0", id="t1"),
        calls(("step", {"n": 2}, "call_0")).model_copy(update={"id": "a2"}),
        ToolMessage("two", tool_call_id="call_0", id="t2"),
    ]
    merged = merge_conversation([], [history])
    assert [m.id for m in merged] == ["h", "a1", "t1", "a2", "t2"]
    assert_valid(merged)
    second, answer = merged[3], merged[4]
    assert isinstance(second, AIMessage) and isinstance(answer, ToolMessage)
    assert answer.tool_call_id == second.tool_calls[0]["id"] != "call_0"
    # batching-invariant and deterministic (LangGraph's DeltaChannel replays writes)
    one_by_one: list[AnyMessage] = []
    for m in history:
        one_by_one = merge_conversation(one_by_one, [m])
    assert [(m.id, getattr(m, "tool_call_id", None)) for m in one_by_one] == [
        (m.id, getattr(m, "tool_call_id", None)) for m in merged
    ]
    assert merge_conversation([], [history]) == merged


def test_replacing_a_message_keeps_its_call_ids() -> None:
    first = calls(("step", {"n": 1}, "call_0")).model_copy(update={"id": "a1"})
    merged = merge_conversation([HumanMessage("go", id="h")], [first])
    edited = calls(("step", {"n": 9}, "call_0")).model_copy(update={"id": "a1"})
    again = merge_conversation(merged, [edited])
    assert isinstance(again[1], AIMessage)
    assert again[1].tool_calls[0]["id"] == "call_0"
    assert again[1].tool_calls[0]["args"] == {"n": 9}


# --- over HTTP: ChatOpenAI against the strict server numbering ids per turn ----------------


def per_turn_server_script() -> list[Any]:
    """Three turns of two calls each, ids ``call_0``/``call_1`` every turn; one call pauses."""

    def two(a: tuple[str, dict[str, Any]], b: tuple[str, dict[str, Any]]) -> list[Any]:
        return [
            {"id": "call_0", "name": a[0], "args": a[1]},
            {"id": "call_1", "name": b[0], "args": b[1]},
        ]

    return [
        two(("step", {"n": 1}), ("step", {"n": 2})),
        two(("transfer_funds", {"amount": 3}), ("step", {"n": 4})),
        two(("step", {"n": 5}), ("step", {"n": 6})),
        "all six handled",
    ]


@pytest.fixture
def server(openai: OpenAIServer) -> Iterator[OpenAIServer]:
    yield openai
    assert not openai.rejections, openai.rejections
    for body in openai.requests:
        validate(body)


@pytest.mark.parametrize("api", ["agent", "graph"])
def test_chatopenai_with_per_turn_ids_over_http(server: OpenAIServer, api: str) -> None:
    server.script(*per_turn_server_script())
    if api == "agent":
        agent = ReActAgent(chat_openai(server), tools=[step, transfer_funds])
        paused = agent.run("go", thread_id="t")
        assert paused.interrupt_payload is not None
        assert paused.interrupt_payload["payload"] == {"amount": 3}
        done = agent.resume(thread_id="t", human_decision="approved")
        assert done.output == "all six handled"
        assert done.tool_calls_count == 6
        messages = agent.graph.get_state(cfg()).values["messages"]
    else:
        graph = create_react_agent(
            chat_openai(server), [step, transfer_funds], checkpointer=InMemorySaver()
        )
        out = graph.invoke({"messages": [HumanMessage("go")]}, cfg())
        assert out["__interrupt__"][0].value["payload"] == {"amount": 3}
        out = graph.invoke(Command(resume="approved"), cfg())
        assert out["messages"][-1].content == "all six handled"
        messages = out["messages"]
    assert RUNS == {f"step {n}": 1 for n in (1, 2, 4, 5, 6)} | {"transfer 3": 1}
    assert len(server.requests) == 4
    assert_valid(messages)


def test_reference_create_agent_sends_repeated_ids_back_to_the_provider(
    openai: OpenAIServer,
) -> None:
    """Why the guarantee matters: the reference runs the calls but sends the provider a
    conversation with one id used twice, which strict providers refuse (the local server does,
    as Anthropic's API does for repeated ``tool_use`` ids)."""

    @lc_tool
    def plain_step(n: int) -> str:
        """Do step n."""
        RUNS[f"step {n}"] += 1
        return f"step {n} done"

    openai.script(
        [{"id": "call_0", "name": "plain_step", "args": {"n": 1}}],
        [{"id": "call_0", "name": "plain_step", "args": {"n": 2}}],
        "done",
    )
    graph = create_agent(chat_openai(openai), [plain_step])
    with pytest.raises(Exception, match="Duplicate tool call id"):
        graph.invoke({"messages": [HumanMessage("go")]})
    assert RUNS == {"step 1": 1, "step 2": 1}


def test_dynavec_records_with_per_turn_ids() -> None:
    from dynavec_langgraph import MemoryCheckpointer

    checkpointer = MemoryCheckpointer()
    agent = ReActAgent(
        ScriptedChatModel(turns=pausing_per_turn_ids()),
        [step, transfer_funds],
        checkpointer=checkpointer,
    )
    paused = agent.run("go", thread_id="t")
    assert paused.interrupt_payload is not None
    assert paused.interrupt_payload["payload"] == {"amount": 3}
    # the paused call's id in the record is the one in the conversation, and unique
    record = agent.get_checkpoint("t")
    assert record is not None and record.node_id == "interrupted"
    call_id = record.state["interrupted"]["tool_call_id"]
    ids = [c["id"] for m in record.state["messages"] for c in m.get("tool_calls") or []]
    assert call_id in ids and len(ids) == len(set(ids)) == 4
    done = ReActAgent(
        ScriptedChatModel(turns=pausing_per_turn_ids()[2:]),
        [step, transfer_funds],
        checkpointer=checkpointer,
    ).resume(thread_id="t", human_decision="approved")
    assert done.output == "finished"
    assert done.tool_calls_count == 6
    assert RUNS == {f"step {n}": 1 for n in (1, 2, 4, 5, 6)} | {"transfer 3": 1}
