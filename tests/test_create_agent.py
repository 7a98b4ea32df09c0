"""``dynavec_langgraph.create_agent``: ``create_agent``'s face of the one factory.

LangChain's own agent tests run against it in ``make reference-langchain``
(tests/reference/langchain_agents.py). Here: the guarantee on that face (an approval pauses
once, finished calls never run again, new input on a paused thread keeps it intact), the
points where it follows ``create_agent`` and not ``create_react_agent``, and one pin per
``create_agent`` internal this package mirrors: each fails when the installed ``langchain``
changes what is mirrored.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import json
from typing import Annotated, Any, NotRequired

import pytest
from langchain.agents import AgentState, factory
from langchain.agents import create_agent as reference_create_agent
from langchain.agents.middleware import (
    AgentMiddleware,
    HumanInTheLoopMiddleware,
    TracePolicy,
    configure_trace_policy,
)
from langchain.agents.middleware.types import OmitFromInput, OmitFromOutput, PrivateStateAttr
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from pydantic import BaseModel, Field

from dynavec_langgraph import _middleware as mw
from dynavec_langgraph import create_agent, create_react_agent, interrupt
from dynavec_langgraph._graph.subagent_cause import ToolCallCause
from dynavec_langgraph.testing import ScriptedChatModel

RAN: list[str] = []


@tool
def send(to: str) -> str:
    """Send a message."""
    RAN.append(f"send {to}")
    return f"sent to {to}"


@tool
def pay(amount: int) -> str:
    """Pay after a person approves."""
    decision = interrupt("approve_pay", {"amount": amount})
    RAN.append(f"pay {amount} {decision}")
    return f"paid {amount}: {decision}"


@tool
def broken(x: str) -> str:
    """Always fails."""
    raise RuntimeError(f"broken {x}")


@pytest.fixture(autouse=True)
def _fresh() -> None:
    RAN.clear()


def _config(thread: str) -> Any:
    return {"configurable": {"thread_id": thread}}


# --- the guarantee on create_agent's face -------------------------------------------------


def test_an_approval_pauses_once_and_finished_calls_never_run_again() -> None:
    """Three calls in one turn: the first runs, the second pauses in the tool, the third waits
    for the decision; after it, each call has run exactly once."""
    model = ScriptedChatModel(
        turns=[
            [
                {"name": "send", "args": {"to": "ada"}},
                {"name": "pay", "args": {"amount": 5}},
                {"name": "send", "args": {"to": "bob"}},
            ],
            "done",
        ]
    )
    agent = create_agent(model, [send, pay], checkpointer=InMemorySaver())
    paused = agent.invoke({"messages": [HumanMessage("go")]}, _config("t"))
    assert [i.value["node_id"] for i in paused["__interrupt__"]] == ["approve_pay"]
    assert RAN == ["send ada"]
    final = agent.invoke(Command(resume="yes"), _config("t"))
    assert RAN == ["send ada", "pay 5 yes", "send bob"]
    assert final["messages"][-1].content == "done"
    assert "__interrupt__" not in final


def test_new_input_on_a_paused_thread_keeps_the_pause() -> None:
    model = ScriptedChatModel(turns=[[{"name": "pay", "args": {"amount": 7}}], "ok", "ok"])
    agent = create_agent(model, [pay], checkpointer=InMemorySaver())
    agent.invoke({"messages": [HumanMessage("pay")]}, _config("n"))
    again = agent.invoke({"messages": [HumanMessage("and?")]}, _config("n"))
    assert [i.value["node_id"] for i in again["__interrupt__"]] == ["approve_pay"]
    final = agent.invoke(Command(resume="fine"), _config("n"))
    assert RAN == ["pay 7 fine"]
    answers = [m for m in final["messages"] if isinstance(m, ToolMessage)]
    assert [m.content for m in answers] == ["paid 7: fine"]


def test_hitl_middleware_asks_once_and_the_approved_call_runs_once() -> None:
    model = ScriptedChatModel(turns=[[{"name": "send", "args": {"to": "ada"}}], "sent"])
    hitl = HumanInTheLoopMiddleware(interrupt_on={"send": True})
    agent = create_agent(model, [send], middleware=[hitl], checkpointer=InMemorySaver())
    paused = agent.invoke({"messages": [HumanMessage("send")]}, _config("h"))
    assert len(paused["__interrupt__"]) == 1 and RAN == []
    final = agent.invoke(Command(resume={"decisions": [{"type": "approve"}]}), _config("h"))
    assert RAN == ["send ada"]
    assert final["messages"][-1].content == "sent"


def test_new_input_while_hitl_middleware_waits_asks_again_and_runs_nothing() -> None:
    model = ScriptedChatModel(turns=[[{"name": "send", "args": {"to": "ada"}}], "sent", "x"])
    hitl = HumanInTheLoopMiddleware(interrupt_on={"send": True})
    agent = create_agent(model, [send], middleware=[hitl], checkpointer=InMemorySaver())
    agent.invoke({"messages": [HumanMessage("send")]}, _config("w"))
    again = agent.invoke({"messages": [HumanMessage("hurry")]}, _config("w"))
    assert len(again["__interrupt__"]) == 1 and RAN == []
    assert len(model.calls) == 1  # the model is not asked again with an unanswered call
    final = agent.invoke(Command(resume={"decisions": [{"type": "approve"}]}), _config("w"))
    assert RAN == ["send ada"]
    assert [m.content for m in final["messages"] if isinstance(m, ToolMessage)] == ["sent to ada"]


# --- where the face follows create_agent, not create_react_agent ---------------------------


def test_a_tools_exception_is_raised_as_create_agent_raises_it() -> None:
    def run(build: Any) -> Any:
        model = ScriptedChatModel(turns=[[{"name": "broken", "args": {"x": "1"}}], "after"])
        return build(model, [broken]).invoke({"messages": [HumanMessage("go")]})

    with pytest.raises(RuntimeError, match="broken 1"):
        run(reference_create_agent)
    with pytest.raises(RuntimeError, match="broken 1"):
        run(create_agent)
    observed = run(create_react_agent)  # the prebuilt face: dynavec's observation
    assert "broken 1" in observed["messages"][2].content


def test_the_model_node_messages_and_metadata_are_create_agents() -> None:
    model = ScriptedChatModel(turns=["hi", "hi", "hi"])
    unnamed = create_agent(model)
    answer = unnamed.invoke({"messages": [HumanMessage("hello")]})["messages"][-1]
    assert answer.name is None
    assert "model" in unnamed.get_graph().nodes
    named = create_agent(model, name="helper")
    chunks: list[Any] = list(
        named.stream({"messages": [HumanMessage("hi")]}, stream_mode="messages")
    )
    assert chunks and all(meta["lc_agent_name"] == "helper" for _, meta in chunks)
    assert named.invoke({"messages": [HumanMessage("hi")]})["messages"][-1].name == "helper"
    assert unnamed.config is not None and unnamed.config["recursion_limit"] == 9_999


def test_malformed_calls_end_the_turn_and_are_answered_at_the_next_model_call() -> None:
    bad = AIMessage(
        content="",
        invalid_tool_calls=[{"name": "send", "args": '{"to":', "id": "c1", "error": "bad"}],
    )
    model = ScriptedChatModel(turns=[bad, "fixed"])
    agent = create_agent(model, [send], checkpointer=InMemorySaver())
    first = agent.invoke({"messages": [HumanMessage("go")]}, _config("m"))
    assert len(first["messages"]) == 2 and len(model.calls) == 1
    final = agent.invoke({"messages": [HumanMessage("again")]}, _config("m"))
    answer = final["messages"][2]
    assert isinstance(answer, ToolMessage) and answer.status == "error"
    assert "malformed or truncated" in answer.text
    assert RAN == []


class Hidden(AgentState[Any]):
    secret: NotRequired[Annotated[str, PrivateStateAttr]]
    internal_only: NotRequired[Annotated[str, OmitFromOutput]]
    computed: NotRequired[Annotated[str, OmitFromInput]]


def test_state_visibility_is_create_agents() -> None:
    """Private and OmitFrom* fields, and this package's keys, as create_agent shows them."""

    def keys(build: Any) -> tuple[set[str], set[str]]:
        agent = build(ScriptedChatModel(turns=["x"]), [], state_schema=Hidden)
        inputs = set(agent.get_input_jsonschema()["properties"])
        outputs = set(agent.get_output_jsonschema()["properties"])
        return inputs, outputs

    ours, theirs = keys(create_agent), keys(reference_create_agent)
    assert ours == theirs
    assert "secret" not in ours[0] | ours[1] and "step" not in ours[1]


async def test_the_v3_event_stream_carries_create_agents_projections_and_redaction() -> None:
    """``astream_events(version="v3")``: PIIMiddleware's transformer redacts the streamed text
    (no raw address anywhere in the event log), as on create_agent."""
    from langchain.agents.middleware import PIIMiddleware

    async def texts(build: Any) -> str:
        model = GenericFakeChatModel(
            messages=iter([AIMessage(content="Reach me at alice@example.com today.")])
        )
        agent = build(model, [], middleware=[PIIMiddleware("email", apply_to_output=True)])
        run = await agent.astream_events({"messages": [HumanMessage("hi")]}, version="v3")
        collected = ""
        async for message in run.messages:
            async for chunk in message.text:
                collected += chunk
        return collected

    ours, theirs = await texts(create_agent), await texts(reference_create_agent)
    assert ours == theirs
    assert "alice@example.com" not in ours and "[REDACTED_EMAIL]" in ours


def test_the_tool_calls_projection_and_extra_transformers() -> None:
    seen: list[tuple[str, ...]] = []

    from langgraph.stream import StreamTransformer

    class Count(StreamTransformer):
        def init(self) -> dict[str, Any]:
            return {}

        def process(self, event: Any) -> bool:
            seen.append(tuple(self.scope))
            return True

    factory_ = Count

    model = ScriptedChatModel(turns=[[{"name": "send", "args": {"to": "ada"}}], "sent"])
    agent = create_agent(model, [send], transformers=[factory_])
    assert agent.stream_transformers[-1] is factory_
    run = agent.stream_events({"messages": [HumanMessage("go")]}, version="v3")
    calls = [call.tool_name for call in run.tool_calls]
    assert calls == ["send"] and RAN == ["send ada"] and seen


def test_without_langchain_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "langchain.agents", None)
    with pytest.raises(ImportError, match=r"dynavec-langgraph\[middleware\]"):
        create_agent(ScriptedChatModel(turns=["x"]))


# --- pins: the create_agent internals this package mirrors ----------------------------------


def test_default_transformers_are_the_ones_create_agent_registers() -> None:
    reference = reference_create_agent(GenericFakeChatModel(messages=iter(())))
    assert tuple(reference.stream_transformers) == mw.default_transformers()
    ours = create_agent(ScriptedChatModel()).stream_transformers
    # plus the cause of a nested agent before SubagentTransformer (test_subagent_cause.py)
    assert tuple(t for t in ours if t is not ToolCallCause) == tuple(reference.stream_transformers)


def test_patch_invalid_calls_mirrors_create_agents() -> None:
    theirs = getattr(factory, "_patch_invalid_tool_calls")  # noqa: B009 - the mirrored internal
    conversations: list[list[AnyMessage]] = [
        [HumanMessage("a", id="h")],
        [
            HumanMessage("a", id="h"),
            AIMessage(
                "",
                id="a",
                invalid_tool_calls=[
                    {
                        "name": "f",
                        "args": "{",
                        "id": "1",
                        "error": "x",
                        "type": "invalid_tool_call",
                    },
                    {
                        "name": None,
                        "args": "{",
                        "id": "2",
                        "error": "x",
                        "type": "invalid_tool_call",
                    },
                    {
                        "name": "g",
                        "args": "{",
                        "id": None,
                        "error": "x",
                        "type": "invalid_tool_call",
                    },
                ],
            ),
            ToolMessage("done", tool_call_id="1", id="t"),
        ],
    ]
    for messages in conversations:
        ours = mw.patch_invalid_calls(messages)
        expected = theirs(messages)
        assert [(type(m), m.content, getattr(m, "status", None)) for m in ours] == [
            (type(m), m.content, getattr(m, "status", None)) for m in expected
        ]


def test_trace_policy_resolution_mirrors_create_agents() -> None:
    module = importlib.import_module("langchain.agents.middleware._trace_policy")
    assert hasattr(module, "_DEFAULT_TRACE_POLICY")
    policy = TracePolicy(process_inputs=lambda _value: {"scrubbed": True})
    try:
        configure_trace_policy(policy)
        resolved = mw.hook_trace_policy(None)
        assert resolved.process_inputs is not None
        assert resolved.process_inputs({"messages": []}) == {"scrubbed": True}
        node_policy = getattr(factory, "_node_trace_policy")(None)  # noqa: B009
        assert node_policy.process_inputs({"messages": []}) == {"scrubbed": True}
    finally:
        configure_trace_policy(None)
    assert mw.hook_trace_policy(None).process_inputs is not None


MIRRORED = {
    # create_agent internals whose logic this package re-implements (see each mirror's
    # docstring); a change in the installed langchain changes the digest: re-check the mirror
    # (dynavec_langgraph/_middleware/) and update the digest.
    "_chain_model_call_handlers": "272c0933c5414b8c",
    "_build_commands": "6bb49e7a7e640383",
    "_make_tools_to_model_edge": "7f40311e71b8cf99",
    "_make_model_to_tools_edge": "90f3484e1db603ca",
    "_resolve_schema": "407f176a181173fa",
    "_extract_metadata": "13a4e4c437a8c3c2",
    "_supports_provider_strategy": "5597a2118ceefb93",
    "_dedupe_transformers": "4c2381e274aea76a",
}


@pytest.mark.parametrize("name", sorted(MIRRORED))
def test_mirrored_create_agent_internals_have_not_changed(name: str) -> None:
    source = inspect.getsource(getattr(factory, name))
    assert hashlib.sha256(source.encode()).hexdigest()[:16] == MIRRORED[name], name


class _Weather(BaseModel):
    temperature: float
    condition: str


class _Binding(GenericFakeChatModel):
    """A fake model that records what it is bound with."""

    bindings: list[tuple[list[str], list[str]]] = Field(default_factory=list)

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        self.bindings.append(([getattr(t, "name", str(t)) for t in tools], sorted(kwargs)))
        return self


@pytest.mark.parametrize("factory_", [create_agent, reference_create_agent], ids=["dynavec", "ref"])
@pytest.mark.parametrize("swapped_supports_provider", [True, False])
def test_the_strategy_is_picked_on_the_model_a_middleware_swapped_in(
    factory_: Any, swapped_supports_provider: bool
) -> None:
    """docs/compatibility.md CA5: what the reference's
    ``test_middleware_model_swap_provider_to_tool_strategy`` checks, without patching
    ``create_agent``'s private ``_supports_provider_strategy``: a raw-schema
    ``response_format`` picks ``ProviderStrategy`` or ``ToolStrategy`` by the profile of the
    model a ``wrap_model_call`` swapped in, not of the model the agent was built with."""
    answer: dict[str, Any] = {"temperature": 75.0, "condition": "sunny"}
    if swapped_supports_provider:
        reply = AIMessage(json.dumps(answer))
        swapped = _Binding(messages=iter([reply]), profile={"structured_output": True})
    else:
        reply = AIMessage("", tool_calls=[{"name": "_Weather", "args": answer, "id": "c1"}])
        swapped = _Binding(messages=iter([reply]))
    original = _Binding(
        messages=iter(()), profile={"structured_output": not swapped_supports_provider}
    )

    class Swap(AgentMiddleware):
        def wrap_model_call(self, request: Any, handler: Any) -> Any:
            return handler(request.override(model=swapped))

    agent = factory_(model=original, tools=[], response_format=_Weather, middleware=[Swap()])
    out = agent.invoke({"messages": [HumanMessage("weather?")]})
    assert out["structured_response"] == _Weather(**answer)
    assert original.bindings == []
    if swapped_supports_provider:  # ProviderStrategy: no tool, the provider's response_format
        assert swapped.bindings == [([], ["response_format"])]
        assert [type(m) for m in out["messages"]] == [HumanMessage, AIMessage]
    else:  # ToolStrategy: the schema as a tool the model must call
        assert swapped.bindings == [(["_Weather"], ["tool_choice"])]
        assert [type(m) for m in out["messages"]] == [HumanMessage, AIMessage, ToolMessage]
