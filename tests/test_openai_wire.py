"""Provider conformance over the wire: every human-in-the-loop path through a real ``ChatOpenAI``.

The model is ``langchain_openai.ChatOpenAI`` talking HTTP to the tests' strict local server, which
answers HTTP 400 to any conversation OpenAI would reject (a tool call not answered before the next
message, a tool message answering nothing). Each path runs on the raw graph
(``create_react_agent`` + ``Command(resume=...)``) and on the ``ReActAgent`` shim, sync and async.
After each test: no request was rejected, every recorded request is valid, no decision ever went
to the model as a user message, and the ledger proves which tool ran how often.
"""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Iterable
from pathlib import Path
from typing import Any, Literal

import pytest
from langchain_core.messages import AIMessageChunk, BaseMessage
from langchain_core.runnables import RunnableConfig
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command, Interrupt, StreamMode

from dynavec_langgraph import AgentResult, ReActAgent, ThreadPausedError
from tests import wire_resume_child as child
from tests.openai_server import (
    OpenAIServer,
    Policy,
    Turn,
    async_http_client,
    chat_openai,
    validate,
)
from tests.wire_resume_child import Ledger, build_agent, build_graph, message_summary

Api = Literal["sync", "async"]
APIS: list[Api] = ["sync", "async"]
CHILD = str(Path(child.__file__).resolve())
TOOL_NAMES = {"lookup", "transfer", "delete_file"}

GOAL = "pay the rent"
HURRY = "hurry up"
DONE = "All done."


# --- the model's side: a policy keyed on the conversation --------------------------------


def plan_policy(plan: dict[str, list[Turn]]) -> Policy:
    """Answer ``plan[last user message][model calls made since it]``.

    Robust across pauses, resumes, new input and processes: the answer depends only on the
    conversation the server receives. A call the plan does not expect fails the request (500).
    """

    def policy(messages: list[dict[str, Any]]) -> Turn:
        last = max(i for i, m in enumerate(messages) if m["role"] == "user")
        made = sum(1 for m in messages[last + 1 :] if m["role"] == "assistant")
        return plan[messages[last]["content"]][made]

    return policy


def call(call_id: str, name: str, **args: Any) -> dict[str, Any]:
    return {"id": call_id, "name": name, "args": args}


def transfer(call_id: str, amount: int) -> dict[str, Any]:
    return call(call_id, "transfer", amount=amount)


def lookup(call_id: str, city: str = "Oslo") -> dict[str, Any]:
    return call(call_id, "lookup", city=city)


def model(server: OpenAIServer, **kw: Any) -> ChatOpenAI:
    """``chat_openai`` with an async HTTP client of its own.

    langchain-openai caches one async client per base URL for the whole process; its pooled
    connections belong to the event loop that opened them, and each test has its own loop.
    """
    return chat_openai(server, http_async_client=async_http_client(), **kw)


# --- checks on what went over the wire ---------------------------------------------------


def assert_wire(server: OpenAIServer, *, requests: int, users: Iterable[str] = (GOAL,)) -> None:
    """No rejection; exactly ``requests`` requests, each valid, with only the given user turns."""
    assert server.rejections == []
    assert len(server.requests) == requests
    allowed = set(users)
    for body in server.requests:
        validate(body)  # raises if OpenAI would reject the request
        sent_users = [m["content"] for m in body["messages"] if m["role"] == "user"]
        assert set(sent_users) <= allowed, f"a decision reached the model: {sent_users}"
        assert {t["function"]["name"] for t in body["tools"]} == TOOL_NAMES


def tool_answers(body: dict[str, Any]) -> list[tuple[str, str]]:
    """``(tool_call_id, content)`` of every tool message of one request, in order."""
    return [(m["tool_call_id"], m["content"]) for m in body["messages"] if m["role"] == "tool"]


def roles(body: dict[str, Any]) -> list[str]:
    return [m["role"] for m in body["messages"]]


# --- driving the raw graph and the shim, sync or async ------------------------------------


def config() -> RunnableConfig:
    return {"configurable": {"thread_id": uuid.uuid4().hex}}


async def invoke(
    graph: CompiledStateGraph[Any, Any, Any, Any], api: Api, graph_input: Any, cfg: RunnableConfig
) -> dict[str, Any]:
    keys = list(graph.stream_channels_list)  # the bookkeeping too (termination_reason)
    if api == "sync":
        return dict(graph.invoke(graph_input, cfg, output_keys=keys))
    return dict(await graph.ainvoke(graph_input, cfg, output_keys=keys))


def pause_of(out: dict[str, Any]) -> dict[str, Any]:
    """The one pending interrupt's value: dynavec's keys (it also carries the approval UIs')."""
    interrupts: list[Interrupt] = list(out.get("__interrupt__", []))
    assert len(interrupts) == 1, interrupts
    value = interrupts[0].value
    assert isinstance(value, dict)
    return {k: value[k] for k in ("node_id", "payload", "tool_call")}


def texts(messages: list[BaseMessage]) -> list[str]:
    return [m.text for m in messages]


async def run(agent: ReActAgent, api: Api, goal: str, **kw: Any) -> AgentResult:
    return agent.run(goal, **kw) if api == "sync" else await agent.arun(goal, **kw)


async def resume(agent: ReActAgent, api: Api, *args: Any, **kw: Any) -> AgentResult:
    return agent.resume(*args, **kw) if api == "sync" else await agent.aresume(*args, **kw)


@pytest.fixture
def ledger(tmp_path: Path) -> Ledger:
    return Ledger(tmp_path / "ledger.txt")


# --- raw graph ----------------------------------------------------------------------------


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize(
    ("decision", "observation", "effect"),
    [
        ("approved", "Transferred 120.", "transfer:done:120"),
        ("rejected", "Cancelled transfer of 120.", "transfer:cancelled:120"),
    ],
)
async def test_graph_pause_then_decide(
    openai: OpenAIServer,
    ledger: Ledger,
    api: Api,
    decision: str,
    observation: str,
    effect: str,
) -> None:
    openai.set_policy(plan_policy({GOAL: [[transfer("call_rent", 120)], DONE]}))
    graph = build_graph(model(openai), ledger, InMemorySaver())
    cfg = config()

    paused = await invoke(graph, api, {"messages": [("user", GOAL)]}, cfg)
    assert pause_of(paused) == {
        "node_id": "approve_transfer",
        "payload": {"amount": 120},
        "tool_call": {"id": "call_rent", "name": "transfer", "args": {"amount": 120}},
    }
    assert ledger.lines() == ["transfer:asked:120"]  # paused before the money moved
    assert len(openai.requests) == 1

    final = await invoke(graph, api, Command(resume=decision), cfg)
    assert "__interrupt__" not in final
    assert final["termination_reason"] == "completed"
    assert texts(final["messages"]) == [GOAL, "", observation, DONE]
    # the paused call ran again from its first line, then acted on the decision
    assert ledger.lines() == ["transfer:asked:120", "transfer:asked:120", effect]
    assert_wire(openai, requests=2)
    assert roles(openai.requests[1]) == ["system", "user", "assistant", "tool"]
    assert tool_answers(openai.requests[1]) == [("call_rent", observation)]


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("arrangement", ["first_and_third", "second_and_third"])
async def test_graph_two_interrupts_in_one_batch(
    openai: OpenAIServer, ledger: Ledger, api: Api, arrangement: str
) -> None:
    if arrangement == "first_and_third":
        batch = [transfer("call_a", 100), lookup("call_b"), transfer("call_c", 300)]
        first_pause, ran_before_first = "call_a", []
    else:
        batch = [lookup("call_a"), transfer("call_b", 100), transfer("call_c", 300)]
        first_pause, ran_before_first = "call_b", ["lookup:Oslo"]
    openai.set_policy(plan_policy({GOAL: [batch, DONE]}))
    graph = build_graph(model(openai), ledger, InMemorySaver())
    cfg = config()

    out = await invoke(graph, api, {"messages": [("user", GOAL)]}, cfg)
    first = pause_of(out)
    assert (first["node_id"], first["payload"]) == ("approve_transfer", {"amount": 100})
    assert first["tool_call"]["id"] == first_pause
    assert ledger.lines() == [*ran_before_first, "transfer:asked:100"]

    out = await invoke(graph, api, Command(resume="approved"), cfg)
    second = pause_of(out)  # the third call pauses with its own payload
    assert second == {
        "node_id": "approve_transfer",
        "payload": {"amount": 300},
        "tool_call": {"id": "call_c", "name": "transfer", "args": {"amount": 300}},
    }
    assert ledger.lines().count("transfer:done:100") == 1
    assert "transfer:done:300" not in ledger.lines()  # the first decision was not fed to it
    assert len(openai.requests) == 1  # no model call while the batch is unfinished

    final = await invoke(graph, api, Command(resume="rejected"), cfg)
    assert final["termination_reason"] == "completed"
    assert final["messages"][-1].text == DONE
    lines = ledger.lines()
    assert lines.count("lookup:Oslo") == 1  # finished calls never ran again
    assert lines.count("transfer:done:100") == 1
    assert lines.count("transfer:cancelled:300") == 1
    assert lines.count("transfer:asked:300") == 2  # paused once, re-run once on its decision
    assert_wire(openai, requests=2)
    observations = {
        "call_a": "Transferred 100." if first_pause == "call_a" else "Sunny in Oslo.",
        "call_b": "Sunny in Oslo." if first_pause == "call_a" else "Transferred 100.",
        "call_c": "Cancelled transfer of 300.",
    }
    assert tool_answers(openai.requests[1]) == list(observations.items())


@pytest.mark.parametrize("api", APIS)
async def test_graph_dict_decision(openai: OpenAIServer, ledger: Ledger, api: Api) -> None:
    path = "/tmp/old.log"
    openai.set_policy(plan_policy({GOAL: [[call("call_rm", "delete_file", path=path)], DONE]}))
    graph = build_graph(model(openai), ledger, InMemorySaver())
    cfg = config()

    paused = await invoke(graph, api, {"messages": [("user", GOAL)]}, cfg)
    assert pause_of(paused)["payload"] == {"path": path}
    decision = {"approved": True, "note": "ok by ops", "keep": [1, 2]}
    await invoke(graph, api, Command(resume=decision), cfg)

    assert ledger.lines() == [f"delete:dict:{json.dumps(decision, sort_keys=True)}"]
    assert_wire(openai, requests=2)
    expected = json.dumps({"path": path, "decision": decision}, ensure_ascii=False)
    assert tool_answers(openai.requests[1]) == [("call_rm", expected)]


@pytest.mark.parametrize("api", APIS)
async def test_graph_new_input_on_paused_thread(
    openai: OpenAIServer, ledger: Ledger, api: Api
) -> None:
    openai.set_policy(
        plan_policy(
            {
                GOAL: [[lookup("call_w"), transfer("call_t", 120)]],
                HURRY: ["Paid, sorry for the wait."],
            }
        )
    )
    graph = build_graph(model(openai), ledger, InMemorySaver())
    cfg = config()

    await invoke(graph, api, {"messages": [("user", GOAL)]}, cfg)
    assert ledger.lines() == ["lookup:Oslo", "transfer:asked:120"]

    out = await invoke(graph, api, {"messages": [("user", HURRY)]}, cfg)
    assert pause_of(out)["tool_call"]["id"] == "call_t"  # still paused at the same call
    assert len(openai.requests) == 1  # the model was not asked with the call unanswered
    assert graph.get_state(cfg).interrupts  # and the thread is still resumable

    final = await invoke(graph, api, Command(resume="approved"), cfg)
    assert final["messages"][-1].text == "Paid, sorry for the wait."
    assert ledger.lines() == [
        "lookup:Oslo",  # the finished call did not run again
        "transfer:asked:120",
        "transfer:asked:120",  # the new input re-entered the paused call, which paused again
        "transfer:asked:120",  # the decision re-ran it once more, and it acted once
        "transfer:done:120",
    ]
    assert_wire(openai, requests=2, users=[GOAL, HURRY])
    # the late user message comes after the answers of the batch it interrupted
    assert roles(openai.requests[1]) == ["system", "user", "assistant", "tool", "tool", "user"]
    assert tool_answers(openai.requests[1]) == [
        ("call_w", "Sunny in Oslo."),
        ("call_t", "Transferred 120."),
    ]


async def collect(
    graph: CompiledStateGraph[Any, Any, Any, Any], api: Api, graph_input: Any, cfg: RunnableConfig
) -> tuple[list[AIMessageChunk], list[dict[str, Any]]]:
    """Stream with ``["updates", "messages"]``: the model's chunks and the updates."""
    chunks: list[AIMessageChunk] = []
    updates: list[dict[str, Any]] = []

    def take(item: Any) -> None:
        mode, data = item
        if mode == "messages":
            message, metadata = data
            if metadata.get("langgraph_node") == "agent":
                assert isinstance(message, AIMessageChunk)
                chunks.append(message)
        else:
            assert mode == "updates"
            updates.append(data)

    modes: list[StreamMode] = ["updates", "messages"]
    if api == "sync":
        for item in graph.stream(graph_input, cfg, stream_mode=modes):
            take(item)
    else:
        stream: AsyncIterator[Any] = graph.astream(graph_input, cfg, stream_mode=modes)
        async for item in stream:
            take(item)
    return chunks, updates


def merged(chunks: list[AIMessageChunk]) -> AIMessageChunk:
    full = chunks[0]
    for c in chunks[1:]:
        full = full + c
    return full


@pytest.mark.parametrize("api", APIS)
async def test_graph_streamed_tool_calls(openai: OpenAIServer, ledger: Ledger, api: Api) -> None:
    answer = "The rent of 120 is paid."
    openai.set_policy(plan_policy({GOAL: [[lookup("call_w"), transfer("call_t", 120)], answer]}))
    graph = build_graph(model(openai, streaming=True), ledger, InMemorySaver())
    cfg = config()

    chunks, updates = await collect(graph, api, {"messages": [("user", GOAL)]}, cfg)
    pieces = [c for c in chunks if c.tool_call_chunks]
    assert len(pieces) >= 6  # per call: a head and two halves of the arguments
    assert [(c["id"], c["name"], c["args"]) for c in merged(chunks).tool_calls] == [
        ("call_w", "lookup", {"city": "Oslo"}),
        ("call_t", "transfer", {"amount": 120}),
    ]
    interrupts = [u["__interrupt__"] for u in updates if "__interrupt__" in u]
    assert len(interrupts) == 1
    assert [i.value["tool_call"]["id"] for i in interrupts[0]] == ["call_t"]
    assert ledger.lines() == ["lookup:Oslo", "transfer:asked:120"]

    chunks, updates = await collect(graph, api, Command(resume="approved"), cfg)
    words = [c.text for c in chunks if c.text]
    assert len(words) == len(answer.split())  # the answer arrived word by word
    assert "".join(words) == answer
    assert not any("__interrupt__" in u for u in updates)
    assert graph.get_state(cfg).values["messages"][-1].text == answer
    assert ledger.lines() == [
        "lookup:Oslo",
        "transfer:asked:120",
        "transfer:asked:120",
        "transfer:done:120",
    ]
    assert_wire(openai, requests=2)
    assert all(body.get("stream") is True for body in openai.requests)


# --- the ReActAgent shim ------------------------------------------------------------------


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize(
    ("decision", "observation"),
    [("approved", "Transferred 120."), ("rejected", "Cancelled transfer of 120.")],
)
async def test_agent_pause_then_decide(
    openai: OpenAIServer, ledger: Ledger, api: Api, decision: str, observation: str
) -> None:
    openai.set_policy(plan_policy({GOAL: [[transfer("call_rent", 120)], DONE]}))
    agent = build_agent(model(openai), ledger)

    paused = await run(agent, api, GOAL, thread_id="rent")
    assert (paused.finished, paused.termination_reason) == (False, "interrupted")
    pause = paused.interrupt_payload
    assert pause is not None
    assert (pause["thread_id"], pause["node_id"]) == ("rent", "approve_transfer")
    assert pause["payload"] == {"amount": 120}
    assert [m.role for m in pause["messages"]] == ["system", "user", "assistant"]
    assert ledger.lines() == ["transfer:asked:120"]

    final = await resume(agent, api, thread_id="rent", human_decision=decision)
    assert (final.output, final.finished, final.termination_reason) == (DONE, True, "completed")
    assert (final.total_steps, final.tool_calls_count) == (2, 1)
    assert [s.observations for s in final.steps] == [[observation], []]
    assert ledger.lines().count("transfer:asked:120") == 2
    assert_wire(openai, requests=2)
    assert tool_answers(openai.requests[1]) == [("call_rent", observation)]


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("arrangement", ["first_and_third", "second_and_third"])
async def test_agent_two_interrupts_in_one_batch(
    openai: OpenAIServer, ledger: Ledger, api: Api, arrangement: str
) -> None:
    if arrangement == "first_and_third":
        batch = [transfer("call_a", 100), lookup("call_b"), transfer("call_c", 300)]
        observations = ["Transferred 100.", "Sunny in Oslo.", "Cancelled transfer of 300."]
    else:
        batch = [lookup("call_a"), transfer("call_b", 100), transfer("call_c", 300)]
        observations = ["Sunny in Oslo.", "Transferred 100.", "Cancelled transfer of 300."]
    openai.set_policy(plan_policy({GOAL: [batch, DONE]}))
    agent = build_agent(model(openai), ledger)

    first = await run(agent, api, GOAL, thread_id="batch")
    assert first.interrupt_payload is not None
    assert first.interrupt_payload["payload"] == {"amount": 100}
    assert ("lookup:Oslo" in ledger.lines()) == (arrangement == "second_and_third")

    second = await resume(agent, api, thread_id="batch", human_decision="approved")
    assert second.termination_reason == "interrupted"
    assert second.interrupt_payload is not None
    assert second.interrupt_payload["payload"] == {"amount": 300}
    assert second.steps[0].observations == observations[:2]
    assert "transfer:done:300" not in ledger.lines()

    final = await resume(agent, api, thread_id="batch", human_decision="rejected")
    assert (final.output, final.termination_reason) == (DONE, "completed")
    assert final.steps[0].observations == observations
    assert final.tool_calls_count == 3
    assert ledger.lines().count("lookup:Oslo") == 1
    assert ledger.lines().count("transfer:done:100") == 1
    assert_wire(openai, requests=2)
    assert [content for _, content in tool_answers(openai.requests[1])] == observations


@pytest.mark.parametrize("api", APIS)
async def test_agent_dict_decision(openai: OpenAIServer, ledger: Ledger, api: Api) -> None:
    path = "/tmp/old.log"
    openai.set_policy(plan_policy({GOAL: [[call("call_rm", "delete_file", path=path)], DONE]}))
    agent = build_agent(model(openai), ledger)

    paused = await run(agent, api, GOAL, thread_id="rm")
    assert paused.interrupt_payload is not None
    assert paused.interrupt_payload["node_id"] == "confirm_delete"
    decision = {"approved": True, "note": "ok by ops", "keep": [1, 2]}
    final = await resume(agent, api, thread_id="rm", human_decision=decision)

    expected = json.dumps({"path": path, "decision": decision}, ensure_ascii=False)
    assert final.steps[0].observations == [expected]
    assert ledger.lines() == [f"delete:dict:{json.dumps(decision, sort_keys=True)}"]
    assert_wire(openai, requests=2)
    assert tool_answers(openai.requests[1]) == [("call_rm", expected)]


@pytest.mark.parametrize("api", APIS)
async def test_agent_new_input_on_paused_thread(
    openai: OpenAIServer, ledger: Ledger, api: Api
) -> None:
    openai.set_policy(plan_policy({GOAL: [[lookup("call_w"), transfer("call_t", 120)], DONE]}))
    agent = build_agent(model(openai), ledger)
    await run(agent, api, GOAL, thread_id="busy")
    before = agent.graph.get_state({"configurable": {"thread_id": "busy"}})

    with pytest.raises(ThreadPausedError, match=r"approve_transfer.*resume\(thread_id='busy'"):
        await run(agent, api, HURRY, thread_id="busy")
    after = agent.graph.get_state({"configurable": {"thread_id": "busy"}})
    assert after.config == before.config  # nothing was written
    assert len(openai.requests) == 1

    final = await resume(agent, api, thread_id="busy", human_decision="approved")
    assert (final.output, final.tool_calls_count) == (DONE, 2)
    assert final.steps[0].observations == ["Sunny in Oslo.", "Transferred 120."]
    assert ledger.lines().count("lookup:Oslo") == 1
    assert ledger.lines().count("transfer:done:120") == 1
    assert_wire(openai, requests=2)


@pytest.mark.parametrize("api", APIS)
async def test_agent_resume_from_messages_in_fresh_agent(
    openai: OpenAIServer, ledger: Ledger, api: Api
) -> None:
    openai.set_policy(plan_policy({GOAL: [[lookup("call_w"), transfer("call_t", 120)], DONE]}))
    paused = await run(build_agent(model(openai), ledger), api, GOAL)
    assert paused.interrupt_payload is not None
    saved = paused.interrupt_payload["messages"]
    assert [m.role for m in saved] == ["system", "user", "assistant", "tool"]

    fresh = build_agent(model(openai), ledger)  # no shared checkpointer
    final = await resume(fresh, api, saved, human_decision="approved", start_step=1)
    assert (final.output, final.termination_reason) == (DONE, "completed")
    assert ledger.lines().count("lookup:Oslo") == 1
    assert ledger.lines().count("transfer:done:120") == 1
    assert_wire(openai, requests=2)
    assert tool_answers(openai.requests[1]) == [
        ("call_w", "Sunny in Oslo."),
        ("call_t", "Transferred 120."),
    ]


# --- resume in a new Python process from a SQLite file ------------------------------------


def run_child(db: Path, server: OpenAIServer, thread_id: str, decision: str, mode: str) -> Any:
    proc = subprocess.run(
        [sys.executable, CHILD, str(db), server.url, thread_id, decision, mode],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_graph_resume_in_new_process(openai: OpenAIServer, tmp_path: Path) -> None:
    """Paused here; the second interrupt of the batch is reached in one child process and
    answered in another."""
    db = tmp_path / "threads.sqlite"
    ledger = Ledger(str(db) + ".ledger")
    batch = [lookup("call_w"), transfer("call_t", 120), transfer("call_u", 80)]
    openai.set_policy(plan_policy({GOAL: [batch, DONE]}))
    cfg = config()
    thread_id = cfg["configurable"]["thread_id"]
    with SqliteSaver.from_conn_string(str(db)) as saver:
        paused = build_graph(model(openai), ledger, saver).invoke(
            {"messages": [("user", GOAL)]}, cfg
        )
    assert pause_of(paused)["tool_call"]["id"] == "call_t"

    second = run_child(db, openai, thread_id, "approved", "graph")
    assert [i["tool_call"]["id"] for i in second["interrupts"]] == ["call_u"]
    assert ledger.lines() == [
        "lookup:Oslo",
        "transfer:asked:120",
        "transfer:asked:120",
        "transfer:done:120",
        "transfer:asked:80",
    ]
    final = run_child(db, openai, thread_id, '"rejected"', "graph")
    assert final["interrupts"] == []
    assert final["termination_reason"] == "completed"
    assert final["messages"] == [
        ["human", GOAL, []],
        ["ai", "", ["call_w", "call_t", "call_u"]],
        ["tool", "Sunny in Oslo.", []],
        ["tool", "Transferred 120.", []],
        ["tool", "Cancelled transfer of 80.", []],
        ["ai", DONE, []],
    ]
    assert ledger.lines()[5:] == ["transfer:asked:80", "transfer:cancelled:80"]
    assert ledger.lines().count("lookup:Oslo") == 1
    # the parent sees what the child wrote
    with SqliteSaver.from_conn_string(str(db)) as saver:
        state = build_graph(model(openai), ledger, saver).get_state(cfg)
    assert not state.interrupts and not state.next
    assert message_summary(state.values["messages"]) == final["messages"]
    assert_wire(openai, requests=2)  # one from this process, one from the second child
    assert tool_answers(openai.requests[1]) == [
        ("call_w", "Sunny in Oslo."),
        ("call_t", "Transferred 120."),
        ("call_u", "Cancelled transfer of 80."),
    ]


def test_agent_resume_in_new_process(openai: OpenAIServer, tmp_path: Path) -> None:
    db = tmp_path / "threads.sqlite"
    ledger = Ledger(str(db) + ".ledger")
    openai.set_policy(plan_policy({GOAL: [[lookup("call_w"), transfer("call_t", 120)], DONE]}))
    with SqliteSaver.from_conn_string(str(db)) as saver:
        paused = build_agent(model(openai), ledger, saver).run(GOAL, thread_id="rent-1")
    assert paused.interrupt_payload is not None
    assert paused.interrupt_payload["payload"] == {"amount": 120}
    assert ledger.lines() == ["lookup:Oslo", "transfer:asked:120"]

    final = run_child(db, openai, "rent-1", "approved", "agent")
    assert final == {
        "output": DONE,
        "finished": True,
        "termination_reason": "completed",
        "total_steps": 2,
        "tool_calls_count": 2,
        "observations": [["Sunny in Oslo.", "Transferred 120."], []],
        "paused_at": None,
    }
    assert ledger.lines() == [
        "lookup:Oslo",  # ran once, in this process; the child did not run it again
        "transfer:asked:120",
        "transfer:asked:120",
        "transfer:done:120",
    ]
    # a fresh agent in this process sees the finished thread the child wrote
    with SqliteSaver.from_conn_string(str(db)) as saver:
        again = build_agent(model(openai), ledger, saver)
        state = again.graph.get_state({"configurable": {"thread_id": "rent-1"}})
    assert not state.interrupts and not state.next
    assert state.values["messages"][-1].text == DONE
    assert_wire(openai, requests=2)
    assert tool_answers(openai.requests[1]) == [
        ("call_w", "Sunny in Oslo."),
        ("call_t", "Transferred 120."),
    ]
