"""``ScriptedChatModel`` on its own: turns, ids, policy, what it records, bind_tools, streaming."""

from __future__ import annotations

import re
from functools import reduce
from typing import Any

import pytest
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.runnables import RunnableBinding

from dynavec_langgraph import tool
from dynavec_langgraph.testing import ScriptedChatModel, Turn

CALL_ID = re.compile(r"call_[0-9a-f]{24}")


def _calls(message: AIMessage) -> list[tuple[str, dict[str, Any]]]:
    return [(c["name"], c["args"]) for c in message.tool_calls]


def _join(chunks: list[AIMessageChunk]) -> AIMessageChunk:
    assert chunks, "the stream yielded nothing"
    return reduce(lambda a, b: a + b, chunks)


def test_text_turns_are_answered_in_order() -> None:
    model = ScriptedChatModel(turns=["first answer", "second answer"])
    assert model.remaining == 2
    one = model.invoke("hi")
    assert isinstance(one, AIMessage)
    assert (one.content, one.tool_calls) == ("first answer", [])
    assert model.remaining == 1
    assert model.invoke([HumanMessage("again")]).content == "second answer"
    assert model.remaining == 0


def test_tool_call_turns_become_tool_calls_with_ids() -> None:
    model = ScriptedChatModel(
        turns=[
            [
                {"name": "lookup", "args": {"q": "rent"}},
                {"name": "transfer", "args": {"amount": 120}, "id": "mine"},
                {"name": "ping"},
            ]
        ]
    )
    reply = model.invoke("pay rent")
    assert isinstance(reply, AIMessage)
    assert reply.content == ""
    assert _calls(reply) == [("lookup", {"q": "rent"}), ("transfer", {"amount": 120}), ("ping", {})]
    ids = [c["id"] or "" for c in reply.tool_calls]
    assert CALL_ID.fullmatch(ids[0]) and CALL_ID.fullmatch(ids[2]) and ids[0] != ids[2]
    assert ids[1] == "mine"  # a given id is kept
    assert all(c["type"] == "tool_call" for c in reply.tool_calls)


def test_a_scripted_tool_call_turn_gets_fresh_call_ids_each_time() -> None:
    turn: Turn = [{"name": "ping", "args": {}}]
    model = ScriptedChatModel(turns=[turn, turn])
    first, second = model.invoke("a"), model.invoke("b")
    assert isinstance(first, AIMessage) and isinstance(second, AIMessage)
    assert first.tool_calls[0]["id"] != second.tool_calls[0]["id"]


def test_every_turn_gets_a_fresh_message_id() -> None:
    ready = AIMessage(
        "ready made", id="fixed", tool_calls=[{"name": "t", "args": {"x": 1}, "id": "c1"}]
    )
    model = ScriptedChatModel(turns=["a", "a", ready, ready, [{"name": "t", "args": {}}]])
    replies = [model.invoke("go") for _ in range(5)]
    ids = [r.id for r in replies]
    assert all(ids) and len(set(ids)) == 5
    assert "fixed" not in ids
    # the ready AIMessage is answered as is (content, calls), only its id changes
    for reply in replies[2:4]:
        assert isinstance(reply, AIMessage)
        assert (reply.content, _calls(reply)) == ("ready made", [("t", {"x": 1})])
        assert reply.tool_calls[0]["id"] == "c1"
    assert ready.id == "fixed"  # the scripted object itself is untouched


def test_policy_decides_every_answer_from_the_messages() -> None:
    seen: list[list[BaseMessage]] = []

    def policy(messages: list[BaseMessage]) -> Turn:
        seen.append(messages)
        if isinstance(messages[-1], ToolMessage):
            return f"got {messages[-1].content}"
        return [{"name": "echo", "args": {"text": str(messages[-1].content)}}]

    model = ScriptedChatModel(turns=["never used"], policy=policy)
    asked = model.invoke([SystemMessage("sys"), HumanMessage("hello")])
    assert isinstance(asked, AIMessage)
    assert _calls(asked) == [("echo", {"text": "hello"})]
    call_id = asked.tool_calls[0]["id"] or ""
    answer = model.invoke(
        [HumanMessage("hello"), asked, ToolMessage("hello", tool_call_id=call_id)]
    )
    assert answer.content == "got hello"
    assert [[m.type for m in s] for s in seen] == [["system", "human"], ["human", "ai", "tool"]]
    assert model.remaining == 1  # the turns were not consumed
    assert len(model.invoke("any").tool_calls) == 1  # a policy never runs out


def test_calls_and_call_kwargs_record_every_call() -> None:
    model = ScriptedChatModel(turns=["a", "b", "c"])
    model.invoke([SystemMessage("be brief"), HumanMessage("one")], temperature=0.2)
    bound = model.bind_tools([], tool_choice="auto")
    bound.invoke("two", max_tokens=5)
    model.invoke("three")
    assert [[(m.type, m.content) for m in call] for call in model.calls] == [
        [("system", "be brief"), ("human", "one")],
        [("human", "two")],
        [("human", "three")],
    ]
    # keyword arguments of each call, the bound tools left out
    assert model.call_kwargs == [{"temperature": 0.2}, {"max_tokens": 5}, {}]


def test_an_exhausted_script_raises_a_clear_error() -> None:
    model = ScriptedChatModel(turns=["only"])
    assert model.invoke("one").content == "only"
    message = "ScriptedChatModel: the script has 1 turns and all were used; add turns for this call"
    with pytest.raises(RuntimeError, match=re.escape(message)):
        model.invoke("two")
    with pytest.raises(RuntimeError, match="all were used"):
        ScriptedChatModel().invoke("nothing scripted")
    assert model.remaining == 0


def test_bind_tools_records_openai_format_tools() -> None:
    @tool
    def transfer(amount: int, to: str = "landlord") -> str:
        """Transfer money."""
        return f"{amount} to {to}"

    def lookup(q: str) -> str:
        """Look something up."""
        return q

    model = ScriptedChatModel(turns=[[{"name": "transfer", "args": {"amount": 5}}]])
    bound = model.bind_tools([transfer, lookup])
    assert isinstance(bound, RunnableBinding)
    assert bound.kwargs["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "transfer",
                "description": "Transfer money.",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "amount": {"type": "integer"},
                        "to": {"type": "string", "default": "landlord"},
                    },
                    "required": ["amount"],
                },
            },
        },
        {
            "type": "function",
            "function": {
                "name": "lookup",
                "description": "Look something up.",
                "parameters": {
                    "type": "object",
                    "properties": {"q": {"type": "string"}},
                    "required": ["q"],
                },
            },
        },
    ]
    reply = bound.invoke("pay")
    assert _calls(reply) == [("transfer", {"amount": 5})]
    assert model.call_kwargs == [{}]


async def test_ainvoke_answers_from_the_same_script() -> None:
    model = ScriptedChatModel(turns=[[{"name": "ping", "args": {"n": 1}}], "pong"])
    first = await model.ainvoke("ping?", temperature=0)
    assert isinstance(first, AIMessage) and _calls(first) == [("ping", {"n": 1})]
    second = await model.ainvoke("again")
    assert second.content == "pong" and second.id != first.id
    assert model.remaining == 0
    assert [[m.content for m in c] for c in model.calls] == [["ping?"], ["again"]]
    assert model.call_kwargs == [{"temperature": 0}, {}]
    with pytest.raises(RuntimeError, match="all were used"):
        await model.ainvoke("more")


TOOL_TURN: Turn = [
    {"name": "lookup", "args": {"q": "rent", "tags": ["a", "b"]}, "id": "c1"},
    {"name": "transfer", "args": {"amount": 120}, "id": "c2"},
]


def test_stream_text_arrives_in_several_chunks() -> None:
    model = ScriptedChatModel(turns=["Rent was paid today."])
    chunks = list(model.stream("pay"))
    assert [c.content for c in chunks] == ["Rent ", "was ", "paid ", "today."]
    assert len({c.id for c in chunks}) == 1
    joined = _join(chunks)
    assert (joined.content, joined.tool_calls) == ("Rent was paid today.", [])


def test_stream_keeps_tool_calls() -> None:
    model = ScriptedChatModel(turns=[TOOL_TURN])
    chunks = list(model.stream("pay"))
    assert len(chunks) == 2  # one chunk per call
    joined = _join(chunks)
    assert [(c["name"], c["args"], c["id"]) for c in joined.tool_calls] == [
        ("lookup", {"q": "rent", "tags": ["a", "b"]}, "c1"),
        ("transfer", {"amount": 120}, "c2"),
    ]
    assert joined.invalid_tool_calls == []


def test_stream_keeps_text_and_tool_calls_of_one_turn() -> None:
    turn = AIMessage("Let me check.", tool_calls=[{"name": "lookup", "args": {}, "id": "c9"}])
    model = ScriptedChatModel(turns=[turn])
    chunks = list(model.stream("go"))
    assert [c.content for c in chunks] == ["Let ", "me ", "check.", ""]  # three words, one call
    joined = _join(chunks)
    assert joined.content == "Let me check."
    assert [(c["name"], c["args"], c["id"]) for c in joined.tool_calls] == [("lookup", {}, "c9")]


async def test_astream_keeps_text_and_tool_calls() -> None:
    model = ScriptedChatModel(turns=[TOOL_TURN, "All done now."])
    calls = [c async for c in model.astream("pay")]
    joined = _join(calls)
    assert [(c["name"], c["args"]) for c in joined.tool_calls] == [
        ("lookup", {"q": "rent", "tags": ["a", "b"]}),
        ("transfer", {"amount": 120}),
    ]
    text = [c async for c in model.astream("and?")]
    assert [c.content for c in text] == ["All ", "done ", "now."]
    assert _join(text).content == "All done now."
    assert joined.id != text[0].id
    assert model.remaining == 0 and len(model.calls) == 2


def test_the_call_record_is_bounded_and_counts_every_call() -> None:
    model = ScriptedChatModel(policy=lambda messages: f"seen {len(messages)}")
    assert model.max_recorded_calls == 100  # the default bound
    history: list[BaseMessage] = []
    for i in range(250):
        history.append(HumanMessage(f"message {i}"))
        model.invoke(history, temperature=i)
    assert model.call_count == 250
    # only the latest 100 calls are kept, oldest dropped first, calls and kwargs in step
    assert len(model.calls) == len(model.call_kwargs) == 100
    assert [len(call) for call in model.calls] == list(range(151, 251))
    assert [kw["temperature"] for kw in model.call_kwargs] == list(range(150, 250))

    silent = ScriptedChatModel(turns=["a", "b"], max_recorded_calls=0)
    silent.invoke("one")
    silent.invoke("two")
    assert (silent.calls, silent.call_kwargs, silent.call_count) == ([], [], 2)

    everything = ScriptedChatModel(policy=lambda messages: "ok", max_recorded_calls=None)
    for _ in range(150):
        everything.invoke("again")
    assert len(everything.calls) == everything.call_count == 150

    with pytest.raises(ValueError, match="max_recorded_calls"):
        ScriptedChatModel(max_recorded_calls=-1)
