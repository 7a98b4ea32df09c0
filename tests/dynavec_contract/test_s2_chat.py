"""dynavec's chat records and its three providers, the way a dynavec user's tests use them
(docs/compatibility.md P1-P12): ``OpenAIChatModel``, ``AnthropicChatModel`` and
``BedrockChatModel`` over real HTTP to local provider-compatible servers (text, tool calls,
streaming, errors, per-call kwargs, the agent loop), ``MissingDependencyError`` without the
SDK, and dynavec's ``_client`` seam (a replaced ``__init__`` with fake SDK clients)."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import boto3
import botocore.exceptions
import openai as openai_sdk
import pytest

from dynavec_langgraph.agents import ReActAgent, tool
from dynavec_langgraph.chat import (
    AnthropicChatModel,
    BedrockChatModel,
    ChatChunk,
    ChatModel,
    ChatResult,
    Message,
    OpenAIChatModel,
    Tool,
    ToolCall,
)
from dynavec_langgraph.exceptions import MissingDependencyError
from tests.anthropic_server import AnthropicServer
from tests.anthropic_server import ErrorTurn as AnthropicError
from tests.bedrock_server import BedrockServer
from tests.bedrock_server import ErrorTurn as BedrockError
from tests.openai_server import OpenAIServer

ADD = Tool(
    "add",
    "Add two numbers.",
    {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    },
)
CONVERSATION = [
    Message("system", "You add."),
    Message("system", "Be brief."),
    Message("user", "1 + 2?"),
    Message("assistant", None, [ToolCall("call_1", "add", '{"a": 1, "b": 2}')]),
    Message("tool", "3", tool_call_id="call_1"),
]


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


# --- §2.1 / §2.2 records and the interface --------------------------------------------------


class Echo(ChatModel):
    def __init__(self) -> None:
        super().__init__()
        self.threads: list[str] = []

    def invoke(self, messages: Any, tools: Any = None, **kwargs: Any) -> ChatResult:
        import threading

        self.threads.append(threading.current_thread().name)
        return ChatResult(Message("assistant", f"echo {messages[-1].content}"), "stop")

    def stream(self, messages: Any, tools: Any = None, **kwargs: Any) -> Iterator[ChatChunk]:
        yield ChatChunk("a")
        yield ChatChunk("b")


def test_p1_records_and_the_interface() -> None:
    assert Tool("t", "d", {"type": "object"}) == Tool(
        name="t", description="d", parameters={"type": "object"}
    )
    result = ChatResult(Message("assistant", "hi"))
    assert (result.message.content, result.finish_reason) == ("hi", None)
    chunk = ChatChunk()
    assert (chunk.content, chunk.tool_calls) == (None, [])
    assert ChatChunk("x", [ToolCall("", "", "{")]).tool_calls[0].arguments == "{"
    with pytest.raises(TypeError):
        ChatModel()  # type: ignore[abstract]
    model = Echo()
    assert asyncio.run(model.ainvoke([Message("user", "x")])).message.content == "echo x"
    assert model.threads and model.threads[0] != "MainThread"  # ainvoke: a worker thread

    async def collect() -> list[str | None]:
        return [c.content async for c in model.astream([Message("user", "x")])]

    assert asyncio.run(collect()) == ["a", "b"]
    assert not hasattr(ChatModel, "chat") and not hasattr(ChatModel, "achat")


# --- §2.3 missing dependencies --------------------------------------------------------------


@pytest.mark.parametrize(
    ("make", "module", "feature", "package", "extra"),
    [
        (lambda: OpenAIChatModel(api_key="k"), "openai", "OpenAIChatModel", "openai", "openai"),
        (
            lambda: AnthropicChatModel(api_key="k"),
            "anthropic",
            "AnthropicChatModel",
            "anthropic",
            "anthropic",
        ),
        (
            lambda: BedrockChatModel(region_name="us-east-1"),
            "boto3",
            "BedrockChatModel",
            "boto3",
            "bedrock",
        ),
        (
            lambda: AnthropicChatModel(api_key="k"),
            "langchain_anthropic",
            "AnthropicChatModel",
            "langchain-anthropic",
            "anthropic",
        ),
        (
            lambda: BedrockChatModel(region_name="us-east-1"),
            "langchain_aws",
            "BedrockChatModel",
            "langchain-aws",
            "bedrock",
        ),
    ],
)
def test_p2_missing_sdk_raises_missing_dependency_error(
    monkeypatch: pytest.MonkeyPatch,
    make: Any,
    module: str,
    feature: str,
    package: str,
    extra: str,
) -> None:
    monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(MissingDependencyError) as raised:
        make()
    error = raised.value
    assert (error.feature, error.package, error.extra) == (feature, package, extra)
    assert str(error).startswith(f"{feature} requires the '{package}' package.")
    assert f"Install it with:  pip install 'dynavec-langgraph[{extra}]'" in str(error)
    assert isinstance(error, ImportError)


# --- §2.4 OpenAI over HTTP ------------------------------------------------------------------


def test_p4_openai_invoke_tools_kwargs_and_finish_reason(openai: OpenAIServer) -> None:
    model = OpenAIChatModel("gpt-test", api_key="sk-test", base_url=openai.url)
    assert model.model == "gpt-test" and isinstance(model._client, openai_sdk.OpenAI)
    openai.script("It is 3.", [{"name": "add", "args": {"a": 1, "b": 2}, "id": "call_9"}])
    answer = model.invoke(CONVERSATION, temperature=0.25)
    assert (answer.message.role, answer.message.content, answer.finish_reason) == (
        "assistant", "It is 3.", "stop",
    )  # fmt: skip
    called = model.invoke([Message("user", "add")], tools=[ADD])
    assert called.message.content is None and called.finish_reason == "tool_calls"
    assert called.message.tool_calls == [ToolCall("call_9", "add", '{"a": 1, "b": 2}')]
    first, second = openai.requests
    assert first["temperature"] == 0.25 and "tools" not in first  # kwargs reach the request
    assert [m["role"] for m in first["messages"]] == [
        "system",
        "system",
        "user",
        "assistant",
        "tool",
    ]
    assert first["messages"][3]["tool_calls"][0]["function"] == {
        "name": "add", "arguments": '{"a": 1, "b": 2}',
    }  # fmt: skip
    assert second["tools"] == [{"type": "function", "function": ADD.to_dict()["function"]}]


def test_p4_openai_stream_text_and_tool_call_fragments(openai: OpenAIServer) -> None:
    model = OpenAIChatModel("gpt-test", api_key="sk-test", base_url=openai.url)
    openai.script("Three it is.", [{"name": "add", "args": {"a": 1, "b": 2}, "id": "call_7"}])
    text = list(model.stream([Message("user", "1 + 2?")]))
    assert "".join(c.content or "" for c in text) == "Three it is."
    assert len([c for c in text if c.content]) > 1  # really streamed
    calls = [tc for c in model.stream([Message("user", "add")], tools=[ADD]) for tc in c.tool_calls]
    assert len(calls) > 1  # unassembled fragments
    assert calls[0].id == "call_7" and calls[0].name == "add"
    assert "".join(tc.arguments for tc in calls) == '{"a": 1, "b": 2}'
    assert all(r.get("stream") is True for r in openai.requests)


async def test_p4_openai_async_is_native(openai: OpenAIServer) -> None:
    model = OpenAIChatModel("gpt-test", api_key="sk-test", base_url=openai.url)
    openai.script("async answer", "streamed async answer")
    assert (await model.ainvoke([Message("user", "x")])).message.content == "async answer"
    pieces = [c.content async for c in model.astream([Message("user", "x")])]
    assert "".join(p or "" for p in pieces) == "streamed async answer" and len(pieces) > 2


def test_p4_openai_errors_propagate_unchanged(
    openai: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = OpenAIChatModel("gpt-test", api_key="sk-test", base_url=openai.url)
    bad_tool = Tool("not a valid name!", "x", {"type": "object", "properties": {}})
    with pytest.raises(openai_sdk.BadRequestError, match="does not match pattern"):
        model.invoke([Message("user", "x")], tools=[bad_tool])

    @tool(name="not a valid name!")
    def broken() -> str:
        """Never reached."""
        return "x"

    agent = ReActAgent(model, tools=[broken])
    with pytest.raises(openai_sdk.BadRequestError):
        agent.run("go")  # no AgentResult: the SDK's error
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(openai_sdk.OpenAIError):
        OpenAIChatModel("gpt-test")  # no key: the SDK refuses at construction


def test_p4_openai_reads_the_sdk_environment(
    openai: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    monkeypatch.setenv("OPENAI_BASE_URL", openai.url)
    openai.script("from the environment")
    assert OpenAIChatModel("gpt-test").invoke([Message("user", "x")]).message.content == (
        "from the environment"
    )


def test_p4_openai_runs_the_agent_loop(openai: OpenAIServer) -> None:
    openai.script([{"name": "add", "args": {"a": 20, "b": 22}}], "42.")
    agent = ReActAgent(OpenAIChatModel("gpt-test", api_key="k", base_url=openai.url), [add])
    result = agent.run("20 + 22?")
    assert (result.output, result.termination_reason) == ("42.", "completed")
    assert result.steps[0].observations == ["42"] and openai.rejections == []


# --- §2.5 Anthropic over HTTP ---------------------------------------------------------------


def test_p5_anthropic_request_and_response(anthropic_api: AnthropicServer) -> None:
    import anthropic  # the SDK (seconds to import) where a test uses it

    model = AnthropicChatModel()
    assert model.model == "claude-3-5-sonnet-20240620"
    assert isinstance(model._client, anthropic.Anthropic)
    anthropic_api.script("It is 3.", [{"name": "add", "args": {"a": 1, "b": 2}, "id": "tu_1"}])
    answer = model.invoke(CONVERSATION, tools=[ADD])
    assert (answer.message.content, answer.finish_reason) == ("It is 3.", "end_turn")
    called = model.invoke([Message("user", "add")], tools=[ADD], max_tokens=77)
    assert called.message.content is None and called.finish_reason == "tool_use"
    assert called.message.tool_calls == [ToolCall("tu_1", "add", json.dumps({"a": 1, "b": 2}))]
    first, second = anthropic_api.requests
    assert first["max_tokens"] == 1024 and second["max_tokens"] == 77  # a kwarg overrides it
    assert first["system"] == "You add.\nBe brief."  # all system messages, joined
    assert [m["role"] for m in first["messages"]] == ["user", "assistant", "user"]
    assert first["messages"][1]["content"][0] == {
        "type": "tool_use", "id": "call_1", "name": "add", "input": {"a": 1, "b": 2},
    }  # fmt: skip
    result_block = first["messages"][2]["content"][0]
    assert (result_block["type"], result_block["tool_use_id"]) == ("tool_result", "call_1")
    assert first["tools"][0]["name"] == "add"
    assert first["tools"][0]["input_schema"] == ADD.parameters
    assert anthropic_api.rejections == []


def test_p5_anthropic_stream(anthropic_api: AnthropicServer) -> None:
    model = AnthropicChatModel(api_key="sk-ant-other")
    anthropic_api.script("Three it is.", [{"name": "add", "args": {"a": 1, "b": 2}}])
    text = list(model.stream([Message("user", "1 + 2?")]))
    assert "".join(c.content or "" for c in text) == "Three it is."
    assert len([c for c in text if c.content]) > 1
    calls = [tc for c in model.stream([Message("user", "add")], tools=[ADD]) for tc in c.tool_calls]
    assert "".join(tc.arguments for tc in calls) == '{"a": 1, "b": 2}' and len(calls) > 1
    assert all(r.get("stream") is True for r in anthropic_api.requests)


async def test_p5_anthropic_async(anthropic_api: AnthropicServer) -> None:
    model = AnthropicChatModel()
    anthropic_api.script("async answer", "streamed async answer")
    assert (await model.ainvoke([Message("user", "x")])).message.content == "async answer"
    pieces = [c.content async for c in model.astream([Message("user", "x")])]
    assert "".join(p or "" for p in pieces) == "streamed async answer"


def test_p5_anthropic_errors_propagate(anthropic_api: AnthropicServer) -> None:
    import anthropic

    model = AnthropicChatModel()
    anthropic_api.script(AnthropicError(400, "invalid_request_error", "model: not a model"))
    with pytest.raises(anthropic.BadRequestError, match="not a model"):
        model.invoke([Message("user", "x")])
    anthropic_api.script(AnthropicError(400, "invalid_request_error", "refused"))
    with pytest.raises(anthropic.BadRequestError, match="refused"):
        ReActAgent(model, [add]).run("go")


def test_p5_anthropic_runs_the_agent_loop(anthropic_api: AnthropicServer) -> None:
    anthropic_api.script([{"name": "add", "args": {"a": 20, "b": 22}}], "42.")
    result = ReActAgent(AnthropicChatModel(), [add]).run("20 + 22?")
    assert (result.output, result.steps[0].observations) == ("42.", ["42"])
    assert anthropic_api.rejections == []  # every request valid, tool_result first


# --- §2.6 Bedrock over HTTP (a local Converse endpoint; moto has no Converse) ---------------


def test_p6_bedrock_request_and_response(bedrock_api: BedrockServer) -> None:
    model = BedrockChatModel()
    assert model.model == "anthropic.claude-3-haiku-20240307-v1:0"
    assert model._client.meta.service_model.service_name == "bedrock-runtime"
    bedrock_api.script("It is 3.", [{"name": "add", "args": {"a": 1, "b": 2}, "id": "tu_1"}])
    answer = model.invoke(CONVERSATION, tools=[ADD])
    assert (answer.message.content, answer.finish_reason) == ("It is 3.", "end_turn")
    called = model.invoke([Message("user", "add")], tools=[ADD], inferenceConfig={"maxTokens": 9})
    assert called.message.tool_calls == [ToolCall("tu_1", "add", json.dumps({"a": 1, "b": 2}))]
    assert called.finish_reason == "tool_use" and called.message.content is None
    first, second = bedrock_api.requests
    assert first["modelId"] == model.model
    assert first["system"] == [{"text": "You add.\nBe brief."}]
    assert first["messages"][1]["content"] == [
        {"toolUse": {"toolUseId": "call_1", "name": "add", "input": {"a": 1, "b": 2}}}
    ]
    tool_result = first["messages"][2]["content"][0]["toolResult"]
    assert tool_result == {"toolUseId": "call_1", "content": [{"text": "3"}], "status": "success"}
    assert first["toolConfig"]["tools"][0]["toolSpec"] == {
        "name": "add", "description": "Add two numbers.", "inputSchema": {"json": ADD.parameters},
    }  # fmt: skip
    assert second["inferenceConfig"]["maxTokens"] == 9  # the kwarg reached the request
    assert bedrock_api.rejections == []


def test_p6_bedrock_stream(bedrock_api: BedrockServer) -> None:
    model = BedrockChatModel(region_name="eu-west-1")
    assert model._client.meta.region_name == "eu-west-1"
    bedrock_api.script("Three it is.", [{"name": "add", "args": {"a": 1, "b": 2}}])
    text = list(model.stream([Message("user", "1 + 2?")]))
    assert "".join(c.content or "" for c in text) == "Three it is." and len(text) > 2
    calls = [tc for c in model.stream([Message("user", "add")], tools=[ADD]) for tc in c.tool_calls]
    assert "".join(tc.arguments for tc in calls) == '{"a": 1, "b": 2}' and len(calls) > 1


def test_p6_bedrock_errors_and_region(
    bedrock_api: BedrockServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = BedrockChatModel()
    bedrock_api.script(BedrockError(400, "ValidationException", "The model is not ready."))
    with pytest.raises(botocore.exceptions.ClientError, match="not ready") as raised:
        model.invoke([Message("user", "x")])
    assert raised.value.response["Error"]["Code"] == "ValidationException"
    monkeypatch.delenv("AWS_DEFAULT_REGION")
    monkeypatch.delenv("AWS_REGION", raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    with pytest.raises(botocore.exceptions.NoRegionError):
        BedrockChatModel()


def test_p6_bedrock_runs_the_agent_loop(bedrock_api: BedrockServer) -> None:
    bedrock_api.script([{"name": "add", "args": {"a": 20, "b": 22}}], "42.")
    result = ReActAgent(BedrockChatModel(), [add]).run("20 + 22?")
    assert (result.output, result.steps[0].observations) == ("42.", ["42"])
    assert bedrock_api.rejections == []


# --- §2.7 the _client seam: dynavec's own test doubles ----------------------------------------


def _ns(**kw: Any) -> SimpleNamespace:
    return SimpleNamespace(**kw)


class FakeOpenAI:
    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []
        self.chat = _ns(completions=_ns(create=self.create))

    def create(self, **kwargs: Any) -> Any:
        self.calls.append(kwargs)
        if kwargs.get("stream"):
            return iter(
                [
                    _ns(choices=[]),
                    _ns(choices=[_ns(delta=_ns(content="Hel", tool_calls=None))]),
                    _ns(choices=[_ns(delta=_ns(content="lo", tool_calls=None))]),
                    _ns(
                        choices=[
                            _ns(
                                delta=_ns(
                                    content=None,
                                    tool_calls=[
                                        _ns(id="c1", function=_ns(name="add", arguments='{"a"'))
                                    ],
                                )
                            )
                        ]
                    ),
                ]
            )
        call = _ns(id="c1", function=_ns(name="add", arguments='{"a": 1}'))
        message = _ns(role="assistant", content=None, tool_calls=[call])
        return _ns(choices=[_ns(message=message, finish_reason="tool_calls")])


def test_p7_openai_seam(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeOpenAI()

    def fake_init(self: Any, model: str = "gpt-4o", **kwargs: Any) -> None:
        self.model = model
        self._client = fake

    monkeypatch.setattr("dynavec_langgraph.chat.openai.OpenAIChatModel.__init__", fake_init)
    model = OpenAIChatModel()
    history = [
        Message("user", "1+1"),
        Message("assistant", None, [ToolCall("c0", "add", {"a": 1})]),  # type: ignore[arg-type]
        Message("tool", "2", tool_call_id="c0"),
    ]
    result = model.invoke(history, tools=[ADD], temperature=0, model="override")
    assert result.message.tool_calls == [ToolCall("c1", "add", '{"a": 1}')]
    assert result.finish_reason == "tool_calls" and result.message.content is None
    sent = fake.calls[0]
    assert sent["model"] == "override" and sent["temperature"] == 0  # kwargs merged last
    assert sent["messages"] == [
        {"role": "user", "content": "1+1"},
        {
            "role": "assistant",
            "tool_calls": [
                {
                    "id": "c0",
                    "type": "function",
                    "function": {"name": "add", "arguments": '{"a": 1}'},
                }
            ],
        },
        {"role": "tool", "content": "2", "tool_call_id": "c0", "name": "tool"},
    ]
    assert sent["tools"] == [ADD.to_dict()]
    chunks = list(model.stream([Message("user", "hi")]))
    assert [c.content for c in chunks] == ["Hel", "lo", None]
    assert chunks[2].tool_calls == [ToolCall("c1", "add", '{"a"')]
    assert fake.calls[1]["stream"] is True and "tools" not in fake.calls[1]


class FakeAnthropic:
    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []
        self.messages = _ns(create=self.create, stream=self.stream)

    def create(self, **kwargs: Any) -> Any:
        self.calls.append(kwargs)
        blocks = [
            _ns(type="text", text="Adding "),
            _ns(type="text", text="now."),
            _ns(type="tool_use", id="tu1", name="add", input={"a": 1}),
        ]
        return _ns(content=blocks, stop_reason="tool_use")

    def stream(self, **kwargs: Any) -> Any:
        self.calls.append(kwargs)
        events = [
            _ns(type="message_start"),
            _ns(type="content_block_delta", delta=_ns(type="text_delta", text="Hi")),
            _ns(
                type="content_block_delta",
                delta=_ns(type="input_json_delta", partial_json='{"a": '),
            ),
            _ns(type="message_stop"),
        ]

        class Stream:
            def __enter__(self) -> Any:
                return iter(events)

            def __exit__(self, *exc: object) -> None:
                return None

        return Stream()


def test_p7_anthropic_seam(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeAnthropic()

    def fake_init(self: Any, model: str = "claude", **kwargs: Any) -> None:
        self.model = model
        self._client = fake

    monkeypatch.setattr("dynavec_langgraph.chat.anthropic.AnthropicChatModel.__init__", fake_init)
    model = AnthropicChatModel()
    result = model.invoke(CONVERSATION, tools=[ADD])
    assert result.message.content == "Adding now." and result.finish_reason == "tool_use"
    assert result.message.tool_calls == [ToolCall("tu1", "add", '{"a": 1}')]
    sent = fake.calls[0]
    assert (sent["model"], sent["max_tokens"], sent["system"]) == (
        "claude", 1024, "You add.\nBe brief.",
    )  # fmt: skip
    assert sent["messages"][2] == {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "call_1", "content": "3"}],
    }  # only the tool_result block (docs/compatibility.md P5)
    assert sent["tools"] == [
        {"name": "add", "description": "Add two numbers.", "input_schema": ADD.parameters}
    ]
    chunks = list(model.stream([Message("user", "hi")], max_tokens=5))
    assert [(c.content, c.tool_calls) for c in chunks] == [
        ("Hi", []),
        (None, [ToolCall("", "", '{"a": ')]),
    ]
    assert fake.calls[1]["max_tokens"] == 5 and "system" not in fake.calls[1]


class FakeBedrock:
    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def converse(self, **kwargs: Any) -> dict[str, Any]:
        self.calls.append(("converse", kwargs))
        content = [{"text": "ok"}, {"toolUse": {"toolUseId": "t1", "name": "add", "input": {}}}]
        return {"output": {"message": {"role": "assistant", "content": content}}}

    def converse_stream(self, **kwargs: Any) -> dict[str, Any]:
        self.calls.append(("converse_stream", kwargs))
        return {
            "stream": [
                {"messageStart": {"role": "assistant"}},
                {"contentBlockDelta": {"delta": {"text": "o"}}},
                {"contentBlockDelta": {"delta": {"toolUse": {"input": '{"a"'}}}},
            ]
        }


def test_p7_bedrock_seam(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeBedrock()

    def fake_init(self: Any, model: str = "m", **kwargs: Any) -> None:
        self.model = model
        self._client = fake

    monkeypatch.setattr("dynavec_langgraph.chat.bedrock.BedrockChatModel.__init__", fake_init)
    model = BedrockChatModel()
    result = model.invoke(CONVERSATION, tools=[ADD])
    assert result.message.content == "ok" and result.finish_reason is None
    assert result.message.tool_calls == [ToolCall("t1", "add", "{}")]
    name, sent = fake.calls[0]
    assert name == "converse" and sent["modelId"] == "m"
    assert sent["system"] == [{"text": "You add."}, {"text": "Be brief."}]
    assert sent["messages"][2]["content"] == [
        {"toolResult": {"toolUseId": "call_1", "content": [{"text": "3"}], "status": "success"}}
    ]
    assert sent["toolConfig"]["tools"][0]["toolSpec"]["inputSchema"] == {"json": ADD.parameters}
    chunks = list(model.stream([Message("user", "x")]))
    assert [(c.content, c.tool_calls) for c in chunks] == [
        ("o", []),
        (None, [ToolCall("", "", '{"a"')]),
    ]
    assert fake.calls[1][0] == "converse_stream" and "toolConfig" not in fake.calls[1][1]


def test_p7_seam_with_real_sdk_clients_over_http(
    anthropic_api: AnthropicServer, bedrock_api: BedrockServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """dynavec's direct SDK path, on real SDK clients: the servers accept its requests."""
    import anthropic

    def anthropic_init(self: Any, model: str = "claude-test", **kwargs: Any) -> None:
        self.model = model
        self._client = anthropic.Anthropic(base_url=anthropic_api.url, api_key="k")

    def bedrock_init(self: Any, model: str = "m", **kwargs: Any) -> None:
        self.model = model
        self._client = boto3.client("bedrock-runtime", region_name="us-east-1")

    monkeypatch.setattr(AnthropicChatModel, "__init__", anthropic_init)
    monkeypatch.setattr(BedrockChatModel, "__init__", bedrock_init)
    anthropic_api.script("fine", "streamed fine")
    bedrock_api.script("fine", "streamed fine")
    for model in (AnthropicChatModel(), BedrockChatModel()):
        assert model.invoke(CONVERSATION, tools=[ADD]).message.content == "fine"
        text = "".join(c.content or "" for c in model.stream([Message("user", "x")]))
        assert text == "streamed fine"
    assert anthropic_api.rejections == [] and bedrock_api.rejections == []


# --- the agent calls the LangChain model behind a provider --------------------------------


def test_p10_the_agent_streams_tokens_through_the_provider(
    openai: OpenAIServer, anthropic_api: AnthropicServer
) -> None:
    from dynavec_langgraph.events import TokenEvent

    openai.script("one two three four")
    anthropic_api.script("five six seven")
    for model in (
        OpenAIChatModel("gpt-test", api_key="k", base_url=openai.url),
        AnthropicChatModel(),
    ):
        events = list(ReActAgent(model).stream("count"))
        tokens = [e.text for e in events if isinstance(e, TokenEvent)]
        assert len(tokens) > 2  # streamed by the provider, not one whole answer
    assert "".join(tokens) == "five six seven"


def test_p10_a_subclass_overriding_invoke_is_still_called(openai: OpenAIServer) -> None:
    class Counting(OpenAIChatModel):
        calls = 0

        def invoke(self, messages: Any, tools: Any = None, **kwargs: Any) -> ChatResult:
            Counting.calls += 1
            return super().invoke(messages, tools, **kwargs)

    openai.script([{"name": "add", "args": {"a": 1, "b": 1}}], "2.")
    model = Counting("gpt-test", api_key="k", base_url=openai.url)
    assert ReActAgent(model, [add]).run("1 + 1?").output == "2."
    assert Counting.calls == 2
