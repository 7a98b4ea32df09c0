"""Self-test of the local OpenAI-compatible server, through real ``ChatOpenAI`` HTTP calls."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

import pytest
from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage, ToolMessage
from langchain_core.tools import tool
from openai import BadRequestError, InternalServerError

from tests.openai_server import OpenAIServer, Turn, chat_openai, validate


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def _call(call_id: str, name: str = "add", args: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"name": name, "args": args or {"a": 1, "b": 2}, "id": call_id, "type": "tool_call"}


def _merge(chunks: list[Any]) -> AIMessageChunk:
    """Aggregate streamed chunks the way LangChain does (``chunk + chunk``)."""
    assert chunks and all(isinstance(c, AIMessageChunk) for c in chunks)
    full: AIMessageChunk = chunks[0]
    for chunk in chunks[1:]:
        full = full + chunk
    return full


def test_text_turn(openai: OpenAIServer) -> None:
    openai.script("Hello there.")
    reply = chat_openai(openai).invoke("Hi")
    assert isinstance(reply, AIMessage)
    assert reply.content == "Hello there."
    assert reply.response_metadata["id"].startswith("chatcmpl-")
    assert reply.usage_metadata is not None and reply.usage_metadata["total_tokens"] > 0
    assert openai.requests[0]["messages"] == [{"role": "user", "content": "Hi"}]
    assert openai.rejections == []


def test_response_ids_are_fresh(openai: OpenAIServer) -> None:
    openai.script("a", "b")
    model = chat_openai(openai)
    first, second = model.invoke("x"), model.invoke("y")
    assert first.response_metadata["id"] != second.response_metadata["id"]


def test_tool_call_turn(openai: OpenAIServer) -> None:
    openai.script(
        [{"name": "add", "args": {"a": 2, "b": 3}}, {"name": "add", "args": {}, "id": "c1"}]
    )
    reply = chat_openai(openai).bind_tools([add]).invoke("2+3?")
    assert isinstance(reply, AIMessage)
    assert [(c["name"], c["args"]) for c in reply.tool_calls] == [
        ("add", {"a": 2, "b": 3}),
        ("add", {}),
    ]
    first_id = reply.tool_calls[0]["id"]
    assert first_id is not None and first_id.startswith("call_") and len(first_id) == 29
    assert reply.tool_calls[1]["id"] == "c1"
    assert reply.response_metadata["finish_reason"] == "tool_calls"
    sent_tools = openai.requests[0]["tools"]
    assert sent_tools[0]["function"]["name"] == "add"


def test_unknown_tool_is_still_answered(openai: OpenAIServer) -> None:
    openai.script([{"name": "not_a_tool", "args": {"x": 1}}])
    reply = chat_openai(openai).bind_tools([add]).invoke("go")
    assert isinstance(reply, AIMessage)
    assert reply.tool_calls[0]["name"] == "not_a_tool"


def test_tool_round_trip_is_valid(openai: OpenAIServer) -> None:
    openai.script("3")
    history = [
        HumanMessage("1+2?"),
        AIMessage("", tool_calls=[_call("c1"), _call("c2")]),
        ToolMessage("3", tool_call_id="c2"),
        ToolMessage("3", tool_call_id="c1"),
    ]
    assert chat_openai(openai).bind_tools([add]).invoke(history).content == "3"
    assert openai.rejections == []


def test_stream_text(openai: OpenAIServer) -> None:
    text = "The quick  brown fox jumps."
    openai.script(text)
    chunks = list(chat_openai(openai, stream_usage=True).stream("Hi"))
    pieces = [c.content for c in chunks if c.content]
    assert len(pieces) >= 5
    assert "".join(str(p) for p in pieces) == text
    last = _merge(chunks)
    assert last.usage_metadata is not None  # from the stream_options.include_usage chunk
    assert openai.requests[0]["stream_options"] == {"include_usage": True}
    assert last.response_metadata["finish_reason"] == "stop"


def test_stream_tool_call(openai: OpenAIServer) -> None:
    openai.script(
        [{"name": "add", "args": {"a": 40, "b": 2}, "id": "call_x"}, {"name": "add", "args": {}}]
    )
    chunks: list[Any] = list(chat_openai(openai).bind_tools([add]).stream("?"))
    full = _merge(chunks)
    assert sum(1 for c in chunks if c.tool_call_chunks) >= 6  # per call: head + 2 argument parts
    assert [(c["name"], c["args"]) for c in full.tool_calls] == [
        ("add", {"a": 40, "b": 2}),
        ("add", {}),
    ]
    assert full.tool_calls[0]["id"] == "call_x"
    assert full.response_metadata["finish_reason"] == "tool_calls"
    assert openai.requests[0]["stream"] is True


def test_unanswered_tool_call_is_rejected(openai: OpenAIServer) -> None:
    openai.script("never")
    history = [
        HumanMessage("hi"),
        AIMessage("", tool_calls=[_call("c1"), _call("c2")]),
        ToolMessage("3", tool_call_id="c1"),
        HumanMessage("again"),
    ]
    with pytest.raises(BadRequestError, match="did not have response messages: c2"):
        chat_openai(openai).invoke(history)
    assert len(openai.rejections) == 1 and "c2" in openai.rejections[0]
    assert len(openai.requests) == 1  # rejected requests are recorded too


def test_tool_message_answering_nothing_is_rejected(openai: OpenAIServer) -> None:
    history = [HumanMessage("hi"), ToolMessage("3", tool_call_id="nope")]
    with pytest.raises(BadRequestError, match="must be a response to a preceeding message"):
        chat_openai(openai).invoke(history)
    # a tool message after a plain assistant message answers nothing either
    history = [
        HumanMessage("hi"),
        AIMessage("", tool_calls=[_call("c1")]),
        ToolMessage("3", tool_call_id="c1"),
        AIMessage("done"),
        ToolMessage("3", tool_call_id="c1"),
    ]
    with pytest.raises(BadRequestError, match="preceeding message with 'tool_calls'"):
        chat_openai(openai).invoke(history)
    assert len(openai.rejections) == 2


def test_duplicate_tool_answer_is_rejected(openai: OpenAIServer) -> None:
    history = [
        HumanMessage("hi"),
        AIMessage("", tool_calls=[_call("c1")]),
        ToolMessage("3", tool_call_id="c1"),
        ToolMessage("3", tool_call_id="c1"),
    ]
    with pytest.raises(BadRequestError) as info:
        chat_openai(openai).invoke(history)
    assert info.value.status_code == 400
    body: Any = info.value.body
    assert body["type"] == "invalid_request_error" and body["param"] == "messages"
    assert openai.rejections == [body["message"]]


def test_duplicate_tool_call_ids_are_rejected(openai: OpenAIServer) -> None:
    history = [
        HumanMessage("hi"),
        AIMessage("", tool_calls=[_call("c1")]),
        ToolMessage("3", tool_call_id="c1"),
        AIMessage("", tool_calls=[_call("c1")]),
        ToolMessage("3", tool_call_id="c1"),
    ]
    with pytest.raises(BadRequestError, match="Duplicate tool call id"):
        chat_openai(openai).invoke(history)


def test_trailing_unanswered_tool_call_is_rejected(openai: OpenAIServer) -> None:
    history = [HumanMessage("hi"), AIMessage("", tool_calls=[_call("c9")])]
    with pytest.raises(BadRequestError, match="c9"):
        chat_openai(openai).invoke(history)


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ({"messages": []}, "non-empty"),
        ({"messages": [{"role": "robot", "content": "x"}]}, "role"),
        ({"messages": [{"role": "tool", "content": "x"}]}, "tool_call_id"),
        ({"messages": [{"role": "user", "content": "x"}], "tools": [{"type": "x"}]}, "function"),
        (
            {
                "messages": [{"role": "user", "content": "x"}],
                "tools": [{"type": "function", "function": {"name": "bad name", "parameters": {}}}],
            },
            "pattern",
        ),
        (
            {
                "messages": [{"role": "user", "content": "x"}],
                "tools": [{"type": "function", "function": {"name": "ok"}}],
            },
            "JSON Schema",
        ),
    ],
)
def test_request_shape_rules(body: dict[str, Any], needle: str) -> None:
    with pytest.raises(Exception, match=needle) as info:
        validate(body)
    assert type(info.value).__name__ == "RequestError"


def test_bad_tool_name_over_http(openai: OpenAIServer) -> None:
    bad = {"type": "function", "function": {"name": "a" * 65, "parameters": {"type": "object"}}}
    with pytest.raises(BadRequestError, match="pattern"):
        chat_openai(openai).bind_tools([bad]).invoke("hi")
    assert openai.requests[0]["tools"] == [bad]


def test_policy(openai: OpenAIServer) -> None:
    def policy(messages: list[dict[str, Any]]) -> Turn:
        last = messages[-1]
        if last["role"] == "tool":
            return f"result is {last['content']}"
        return [{"name": "add", "args": {"a": 1, "b": 1}, "id": f"p{len(messages)}"}]

    openai.set_policy(policy)
    openai.script("ignored while a policy is set")
    model = chat_openai(openai).bind_tools([add])
    first = model.invoke([HumanMessage("1+1")])
    assert isinstance(first, AIMessage) and first.tool_calls[0]["id"] == "p1"
    answer = ToolMessage("2", tool_call_id="p1")
    assert model.invoke([HumanMessage("1+1"), first, answer]).content == "result is 2"
    openai.set_policy(None)
    assert model.invoke("x").content == "ignored while a policy is set"


def test_exhausted_script_fails_loudly(openai: OpenAIServer) -> None:
    with pytest.raises(InternalServerError, match="script exhausted"):
        chat_openai(openai).invoke("Hi")
    assert openai.rejections == []  # valid request: not a rejection
    assert len(openai.requests) == 1


def test_reset(openai: OpenAIServer) -> None:
    openai.script("a")
    openai.set_policy(lambda _messages: "p")
    with pytest.raises(BadRequestError):
        chat_openai(openai).invoke([ToolMessage("x", tool_call_id="z")])
    openai.reset()
    assert (openai.requests, openai.rejections) == ([], [])
    with pytest.raises(InternalServerError):
        chat_openai(openai).invoke("Hi")


def test_models_endpoint(openai: OpenAIServer) -> None:
    with urllib.request.urlopen(f"{openai.url}/models", timeout=5) as resp:
        data = json.load(resp)
    assert data["data"][0]["id"] == "gpt-test"


def test_context_manager_stops() -> None:
    with OpenAIServer() as server:
        server.script("own server")
        assert chat_openai(server).invoke("Hi").content == "own server"
    assert server.requests[0]["model"] == "gpt-test"


async def test_ainvoke_and_astream(openai: OpenAIServer) -> None:
    openai.script("async hello", [{"name": "add", "args": {"a": 1, "b": 2}}], "streamed async text")
    model = chat_openai(openai)
    assert (await model.ainvoke("Hi")).content == "async hello"
    reply = await model.bind_tools([add]).ainvoke("1+2")
    assert isinstance(reply, AIMessage) and reply.tool_calls[0]["args"] == {"a": 1, "b": 2}
    pieces = [c.content async for c in model.astream("Hi") if c.content]
    assert len(pieces) == 3 and "".join(str(p) for p in pieces) == "streamed async text"
    assert openai.rejections == []


def test_malformed_turn_is_a_server_error(openai: OpenAIServer) -> None:
    openai.script([{"args": {}}])  # no "name"
    with pytest.raises(InternalServerError, match="KeyError"):
        chat_openai(openai).invoke("Hi")
