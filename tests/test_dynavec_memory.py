"""dynavec's conversation memory, tested the way a dynavec user's tests are: imports from
``dynavec_langgraph.memory`` / ``.agents`` / ``.chat`` only (was ``dynavec.memory`` ...), a
dynavec ``ChatModel`` subclass as the model. One test per row MEM* of docs/compatibility.md.

``DynamoDBMemoryStore`` runs against moto's DynamoDB server (tests/dynamo.py) on tables with a
partition key ``pk`` only, as dynavec's; the agent's pauses are stored in SQLite files.
"""

from __future__ import annotations

import asyncio
import uuid
from decimal import Decimal
from pathlib import Path
from typing import Any

import boto3
import pytest

from dynavec_langgraph.agents import ReActAgent, interrupt, tool
from dynavec_langgraph.chat import Message, ToolCall
from dynavec_langgraph.memory import (
    BaseMemory,
    DynamoDBMemoryStore,
    InMemoryMemoryStore,
    MemoryPolicy,
    SummaryMemoryPolicy,
    TokenBudgetMemoryPolicy,
    WindowMemoryPolicy,
    default_token_counter,
    dict_to_message,
    message_to_dict,
)
from tests.dynamo import REGION, DynamoDBServer
from tests.dynavec_model import ScriptedDynavecModel


def _texts(messages: list[Message]) -> list[tuple[str, str | None]]:
    return [(str(m.role), m.content) for m in messages]


def _table(server: DynamoDBServer) -> Any:
    """A new table shaped as dynavec's: partition key ``pk`` (S), no sort key."""
    ddb = boto3.resource("dynamodb", region_name=REGION, endpoint_url=server.endpoint_url)
    return ddb.create_table(
        TableName=f"mem{uuid.uuid4().hex[:10]}",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )


def _raw(server: DynamoDBServer, table: Any, pk: str) -> dict[str, Any]:
    """The item as DynamoDB holds it (typed attribute values)."""
    client = boto3.client("dynamodb", region_name=REGION, endpoint_url=server.endpoint_url)
    item: dict[str, Any] = client.get_item(TableName=table.name, Key={"pk": {"S": pk}})["Item"]
    return item


# --- helpers and policies ---------------------------------------------------------------


def test_mem1_message_helpers_round_trip() -> None:
    msg = Message(
        role="assistant",
        content="Calculated result.",
        tool_calls=[ToolCall(id="tc-1", name="add", arguments='{"a": 1, "b": 2}')],
    )
    d = message_to_dict(msg)
    assert d == {
        "role": "assistant",
        "content": "Calculated result.",
        "tool_call_id": None,
        "tool_calls": [{"id": "tc-1", "name": "add", "arguments": '{"a": 1, "b": 2}'}],
    }
    assert dict_to_message(d) == msg
    # every key but role is optional; dict arguments count as parsed JSON
    assert dict_to_message({"role": "user"}) == Message("user")
    bare = dict_to_message({"role": "tool", "content": "4", "tool_call_id": "tc-1"})
    assert (bare.content, bare.tool_call_id, bare.tool_calls) == ("4", "tc-1", [])
    parsed = Message("assistant", None, [ToolCall("1", "add", {"a": 1})])  # type: ignore[arg-type]
    assert message_to_dict(parsed)["tool_calls"][0]["arguments"] == '{"a": 1}'
    with pytest.raises(ValueError, match="'role'"):
        dict_to_message({"content": "no role"})


def test_mem2_window_policy() -> None:
    messages = [
        Message(role="system", content="System instruction"),
        Message(role="user", content="msg 1"),
        Message(role="assistant", content="msg 2"),
        Message(role="user", content="msg 3"),
        Message(role="assistant", content="msg 4"),
    ]
    before = list(messages)
    trimmed = WindowMemoryPolicy(k=2, preserve_system=True).apply(messages)
    assert _texts(trimmed) == [("system", "System instruction"), ("user", "msg 3"),
                               ("assistant", "msg 4")]  # fmt: skip
    assert trimmed[1] is messages[3] and messages == before  # the same messages, a new list
    # at most k messages (the system one counts): a copy, unchanged
    short = WindowMemoryPolicy(k=5).apply(messages)
    assert short == messages and short is not messages
    # without preserve_system the system message is an ordinary one; k below 1 counts as 1
    assert _texts(WindowMemoryPolicy(k=2, preserve_system=False).apply(messages)) == [
        ("user", "msg 3"),
        ("assistant", "msg 4"),
    ]
    assert WindowMemoryPolicy(k=0).k == 1
    assert isinstance(WindowMemoryPolicy(), MemoryPolicy)


def test_mem3_token_budget_policy() -> None:
    messages = [
        Message(role="system", content="System"),  # 1 token
        Message(role="user", content="A" * 80),  # 20
        Message(role="assistant", content="B" * 80),  # 20
        Message(role="user", content="C" * 20),  # 5
    ]
    trimmed = TokenBudgetMemoryPolicy(max_tokens=15, preserve_system=True).apply(messages)
    assert _texts(trimmed) == [("system", "System"), ("user", "C" * 20)]
    # the walk stops at the first message that does not fit: nothing older is kept
    fits_a = [*messages[:3], Message("user", "x" * 4)]
    assert len(TokenBudgetMemoryPolicy(max_tokens=30).apply(fits_a)) == 3  # system, B, x
    # the newest always survives, even over budget; an empty input gives []
    huge = [Message("system", "S" * 400), Message("user", "D" * 400)]
    assert _texts(TokenBudgetMemoryPolicy(max_tokens=10).apply(huge)) == _texts(huge)
    assert TokenBudgetMemoryPolicy().apply([]) == []
    # the default counter: content plus " name arguments" per tool call, at least 1
    call = Message("assistant", None, [ToolCall("1", "add", '{"a": 1}')])
    assert default_token_counter(call) == len(' add {"a": 1}') // 4
    assert default_token_counter(Message("user", "")) == 1
    counted: list[str] = []

    def per_message(m: Message) -> int:
        counted.append(m.content or "")
        return 1

    custom = TokenBudgetMemoryPolicy(max_tokens=3, token_counter=per_message)
    assert len(custom.apply(messages)) == 3 and counted  # system + the 2 newest


def test_mem4_summary_policy() -> None:
    messages = [
        Message(role="system", content="You are a helper."),
        Message(role="user", content="What is DynamoDB?"),
        Message(role="assistant", content="It is a NoSQL database."),
        Message(role="user", content="What is S3?"),
        Message(role="assistant", content="It is an object storage."),
        Message(role="user", content="What is dynavec?"),
        Message(role="assistant", content="A serverless vector database."),
    ]
    compacted = SummaryMemoryPolicy(max_messages=4, preserve_system=True).apply(messages)
    # others = 6, cutoff = 6 - 4 // 2 = 4: four summarised, the newest two kept
    assert [m.role for m in compacted] == ["system", "system", "user", "assistant"]
    assert compacted[0].content == "You are a helper."
    assert compacted[1].content == (
        "Summary of prior conversation:\n"
        "- User: What is DynamoDB?\n"
        "- Assistant: It is a NoSQL database.\n"
        "- User: What is S3?\n"
        "- Assistant: It is an object storage."
    )
    assert compacted[-1].content == "A serverless vector database."
    # long lines are cut to 117 characters plus "..."; a custom summarizer
    long = [Message("user", "  " + "x" * 200 + "  "), *messages[1:]]
    line = SummaryMemoryPolicy(max_messages=2, preserve_system=False).apply(long)[0].content
    assert line is not None and line.splitlines()[1] == "- User: " + "x" * 117 + "..."
    custom = SummaryMemoryPolicy(max_messages=2, summarizer=lambda ms: f"{len(ms)} messages")
    assert custom.apply(messages)[1].content == "Summary of prior conversation:\n5 messages"
    # applied again, the earlier summary is summarised too (dynavec's quirk, kept)
    again = SummaryMemoryPolicy(max_messages=3).apply([*compacted, Message("user", "more?")])
    assert again[1].content is not None
    assert "- System: Summary of prior conversation:" in again[1].content
    assert SummaryMemoryPolicy(max_messages=1).max_messages == 2
    assert SummaryMemoryPolicy(max_messages=10).apply(messages) == messages


# --- stores -----------------------------------------------------------------------------


def test_mem5_in_memory_store() -> None:
    store = InMemoryMemoryStore(policy=WindowMemoryPolicy(k=2))
    assert isinstance(store, BaseMemory)
    store.append("th-1", "Hello")
    store.append("th-1", Message(role="assistant", content="Hi! How can I help?"))
    stored = store.append("th-1", "Tell me about AWS.")
    assert [m.content for m in stored] == ["Hi! How can I help?", "Tell me about AWS."]
    assert store.get_messages("th-1") == stored
    # a list, and role= for a str
    store.append("th-2", [Message("user", "a"), Message("assistant", "b")])
    store.append("th-2", "note", role="system")
    # the first system message is set aside wherever it is; the window keeps 2 others
    assert _texts(store.get_messages("th-2")) == [
        ("system", "note"),
        ("user", "a"),
        ("assistant", "b"),
    ]
    # get_messages applies the policy to a copy without storing it; trim stores it
    plain = InMemoryMemoryStore()
    for i in range(4):
        plain.append("t", f"m{i}")
    plain.policy = WindowMemoryPolicy(k=2)
    assert [m.content for m in plain.get_messages("t")] == ["m2", "m3"]
    plain.policy = None
    assert len(plain.get_messages("t")) == 4
    plain.policy = WindowMemoryPolicy(k=2)
    plain.trim("t")
    plain.policy = None
    assert [m.content for m in plain.get_messages("t")] == ["m2", "m3"]
    # scratchpads are shallow copies; clear drops both; unknown threads are empty
    pad = {"current_step": 3, "intent": "cloud_query"}
    store.set_scratchpad("th-1", pad)
    pad["intent"] = "changed"
    got = store.get_scratchpad("th-1")
    assert got == {"current_step": 3, "intent": "cloud_query"}
    got["x"] = 1
    assert "x" not in store.get_scratchpad("th-1")
    store.clear("th-1")
    assert store.get_messages("th-1") == [] and store.get_scratchpad("th-1") == {}
    assert store.get_messages("nobody") == [] and store.get_scratchpad("nobody") == {}
    with pytest.raises(TypeError, match="pass a Message"):
        store.append("th-1", [{"role": "user"}])  # type: ignore[list-item]


def test_mem6_dynamodb_store_in_dynavec_layout(dynamodb_server: DynamoDBServer) -> None:
    table = _table(dynamodb_server)
    store = DynamoDBMemoryStore(
        table=table, namespace="prod_app", policy=WindowMemoryPolicy(k=3, preserve_system=True)
    )
    assert store.get_messages("th-ddb-1") == []
    store.append("th-ddb-1", Message(role="system", content="You are a tutor."))
    store.append("th-ddb-1", "Explain vectors.")
    store.append(
        "th-ddb-1", Message(role="assistant", content="Vectors are mathematical lists of numbers.")
    )
    store.append("th-ddb-1", "How are they stored?")
    store.append("th-ddb-1", Message(role="assistant", content="In S3 Vectors and DynamoDB."))
    messages = store.get_messages("th-ddb-1")
    assert _texts(messages) == [
        ("system", "You are a tutor."),
        ("assistant", "Vectors are mathematical lists of numbers."),
        ("user", "How are they stored?"),
        ("assistant", "In S3 Vectors and DynamoDB."),
    ]
    store.set_scratchpad("th-ddb-1", {"topic": "math", "progress": 0.5, "attempts": 2})
    sp = store.get_scratchpad("th-ddb-1")
    assert sp == {"topic": "math", "progress": 0.5, "attempts": 2}
    assert type(sp["progress"]) is float and type(sp["attempts"]) is int
    # the item, attribute by attribute, as dynavec writes it
    store.append("th-ddb-1", Message("assistant", None, [ToolCall("c1", "add", '{"a": 1}')]))
    raw = _raw(dynamodb_server, table, "prod_app#memory#th-ddb-1")
    assert raw["ns"] == {"S": "prod_app"} and raw["type"] == {"S": "conversation_memory"}
    assert raw["thread_id"] == {"S": "th-ddb-1"} and "S" in raw["updated_at"]
    last = raw["messages"]["L"][-1]["M"]
    assert last["content"] == {"NULL": True} and last["tool_call_id"] == {"NULL": True}
    assert last["tool_calls"]["L"][0]["M"]["arguments"] == {"S": '{"a": 1}'}
    assert raw["scratchpad"]["M"]["progress"] == {"N": "0.5"}  # kept by append
    assert "ttl" not in raw and "expires_at" not in raw
    # threads are isolated; clear deletes the item
    store.append("th-ddb-2", "Different thread message")
    assert len(store.get_messages("th-ddb-2")) == 1 and len(store.get_messages("th-ddb-1")) == 4
    store.clear("th-ddb-2")
    assert store.get_messages("th-ddb-2") == []
    assert "Item" not in table.get_item(Key={"pk": "prod_app#memory#th-ddb-2"})
    # set_scratchpad on a new thread creates a bare item; trim stores the policy's result
    store.set_scratchpad("bare", {"k": "v"})
    assert store.get_messages("bare") == [] and store.get_scratchpad("bare") == {"k": "v"}
    unbounded = DynamoDBMemoryStore(table, namespace="prod_app")
    assert len(unbounded.get_messages("th-ddb-1")) == 4  # append stored the policy's result
    for i in range(3):
        unbounded.append("long", f"m{i}")
    # get_messages applies the policy without storing it; trim stores it
    narrow = DynamoDBMemoryStore(table, namespace="prod_app", policy=WindowMemoryPolicy(k=1))
    assert [m.content for m in narrow.get_messages("long")] == ["m2"]
    assert len(unbounded.get_messages("long")) == 3
    assert [m.content for m in narrow.trim("long")] == ["m2"]
    assert [m.content for m in unbounded.get_messages("long")] == ["m2"]
    with pytest.raises(TypeError, match="Table resource"):
        DynamoDBMemoryStore(object())


def test_mem6_reads_an_item_dynavec_wrote(dynamodb_server: DynamoDBServer) -> None:
    table = _table(dynamodb_server)
    table.put_item(
        Item={
            "pk": "default#memory#legacy",
            "ns": "default",
            "type": "conversation_memory",
            "thread_id": "legacy",
            "messages": [
                {"role": "system", "content": "Be brief.", "tool_call_id": None, "tool_calls": []},
                {"role": "user", "content": "2+2?", "tool_call_id": None, "tool_calls": []},
            ],
            "scratchpad": {"score": Decimal("1.0")},
            "updated_at": "2025-01-31T12:00:00.123456+00:00",
        }
    )
    store = DynamoDBMemoryStore(table)
    assert _texts(store.get_messages("legacy")) == [("system", "Be brief."), ("user", "2+2?")]
    assert store.get_scratchpad("legacy") == {"score": 1}  # DynamoDB keeps no 1.0 vs 1
    store.append("legacy", Message("assistant", "4"))
    assert store.get_scratchpad("legacy") == {"score": 1}
    assert len(store.get_messages("legacy")) == 3
    # the table is shared with dynavec's checkpoint items: memory never touches them
    checkpoint = {"pk": "default#checkpoint#legacy#cp_1", "type": "checkpoint", "step": 0}
    table.put_item(Item=checkpoint)
    store.clear("legacy")
    store.append("legacy", "again")
    assert table.get_item(Key={"pk": "default#checkpoint#legacy#cp_1"})["Item"] == checkpoint


# --- ReActAgent(memory=) ------------------------------------------------------------------


def test_mem7_agent_remembers_across_runs() -> None:
    model = ScriptedDynavecModel(["Nice to meet you, Alice!", "Your name is Alice."])
    memory = InMemoryMemoryStore()
    agent = ReActAgent(model=model, system_prompt="Helpful assistant.", memory=memory)
    res1 = agent.run("My name is Alice.", thread_id="thread-conv-1")
    assert res1.output == "Nice to meet you, Alice!"
    assert _texts(memory.get_messages("thread-conv-1")) == [
        ("system", "Helpful assistant."),
        ("user", "My name is Alice."),
        ("assistant", "Nice to meet you, Alice!"),
    ]
    res2 = agent.run("What is my name?", thread_id="thread-conv-1")
    assert res2.output == "Your name is Alice."
    assert _texts(model.seen[1]) == [
        ("system", "Helpful assistant."),
        ("user", "My name is Alice."),
        ("assistant", "Nice to meet you, Alice!"),
        ("user", "What is my name?"),
    ]
    assert len(memory.get_messages("thread-conv-1")) == 5
    assert res2.total_steps == 1 and len(res2.steps) == 1  # a run counts its own steps
    # memory is the sixth positional parameter
    other = InMemoryMemoryStore()
    positional = ReActAgent(ScriptedDynavecModel(["ok"]), None, "P", 10, None, other)
    positional.run("hi", thread_id="t")
    assert positional.memory is other and len(other.get_messages("t")) == 3
    with pytest.raises(TypeError, match="BaseMemory"):
        ReActAgent(ScriptedDynavecModel(["x"]), memory={"t": []})  # type: ignore[arg-type]


def test_mem7_the_policy_trims_what_the_model_sees() -> None:
    memory = InMemoryMemoryStore(policy=WindowMemoryPolicy(k=3))
    model = ScriptedDynavecModel(["a1", "a2", "a3"])
    agent = ReActAgent(model, system_prompt="S", memory=memory)
    for goal in ("q1", "q2", "q3"):
        agent.run(goal, thread_id="w")
    # third run: memory held [S, a1, q2, a2]; + q3, the window keeps S and the last 3
    assert _texts(model.seen[2]) == [("system", "S"), ("user", "q2"), ("assistant", "a2"),
                                     ("user", "q3")]  # fmt: skip
    assert _texts(model.seen[1]) == [("system", "S"), ("user", "q1"), ("assistant", "a1"),
                                     ("user", "q2")]  # fmt: skip
    assert _texts(memory.get_messages("w")) == [("system", "S"), ("assistant", "a2"),
                                                ("user", "q3"), ("assistant", "a3")]  # fmt: skip


class RecordingMemory(InMemoryMemoryStore):
    """An in-process memory that records the threads written to."""

    def __init__(self) -> None:
        super().__init__()
        self.threads: list[str] = []

    def append(self, thread_id: str, messages: Any, *, role: str = "user") -> list[Message]:
        self.threads.append(thread_id)
        return super().append(thread_id, messages, role=role)


def test_mem8_no_thread_id_no_memory_and_max_steps() -> None:
    memory = RecordingMemory()
    agent = ReActAgent(ScriptedDynavecModel(["alone"]), memory=memory)
    assert agent.run("hello").output == "alone"
    assert memory.threads == []  # nothing stored for a run without thread_id

    @tool()
    def look(q: str) -> str:
        """Look something up."""
        return f"found {q}"

    looping = ReActAgent(
        ScriptedDynavecModel([[("look", {"q": "a"})], [("look", {"q": "b"})]]),
        [look],
        system_prompt="",
        max_steps=2,
        memory=memory,
    )
    result = looping.run("search", thread_id="m")
    assert result.termination_reason == "max_steps_reached"
    # no system prompt stored for system_prompt="", the output appended as the answer
    assert _texts(memory.get_messages("m")) == [("user", "search"), ("assistant", "found b")]


def test_mem8_arun_is_identical() -> None:
    memory = InMemoryMemoryStore()
    model = ScriptedDynavecModel(["one", "two"])
    agent = ReActAgent(model, system_prompt="S", memory=memory)

    async def both() -> None:
        await agent.arun("first", thread_id="a")
        await agent.arun("second", thread_id="a")

    asyncio.run(both())
    assert model.ainvoke_calls == 2 and len(model.seen[1]) == 4
    assert len(memory.get_messages("a")) == 5


def test_mem9_a_checkpoint_wins_over_memory(tmp_path: Path) -> None:
    memory = InMemoryMemoryStore()
    db = f"sqlite:///{tmp_path}/cp.db"
    model = ScriptedDynavecModel(["first answer", "second answer"])
    agent = ReActAgent(model, system_prompt="S", checkpointer=db, memory=memory)
    agent.run("first", thread_id="t")
    memory.append("t", "injected into memory only")
    agent.run("second", thread_id="t")
    # the second run continued the checkpoint's conversation: memory was not read
    assert ("user", "injected into memory only") not in _texts(model.seen[1])
    assert _texts(model.seen[1])[-1] == ("user", "second")
    # and, as in dynavec, only the answer is appended
    assert _texts(memory.get_messages("t"))[-2:] == [
        ("user", "injected into memory only"),
        ("assistant", "second answer"),
    ]
    # resume_from= a checkpoint: its messages win as well
    first_answer = agent.list_checkpoints("t")[1].checkpoint_id
    model.turns.append("third answer")
    memory.append("t", "injected again")
    agent.run("third", thread_id="t", resume_from=first_answer)
    assert ("user", "injected again") not in _texts(model.seen[2])
    assert ("user", "second") not in _texts(model.seen[2])  # the checkpoint before it
    agent.close()


@tool()
def transfer(amount: int) -> str:
    """Transfer money (asks a person first)."""
    decision = interrupt("approve_transfer", {"amount": amount})
    return f"Transferred {amount}." if decision == "approved" else "Cancelled."


def test_mem10_a_paused_run_resumes_with_the_same_memory(
    dynamodb_server: DynamoDBServer, tmp_path: Path
) -> None:
    table = _table(dynamodb_server)
    db = f"sqlite:///{tmp_path}/pause.db"
    first = ReActAgent(
        ScriptedDynavecModel(["Hello Bob."]),
        [transfer],
        "Bank bot.",
        checkpointer=db,
        memory=DynamoDBMemoryStore(table),
    )
    first.run("I am Bob.", thread_id="bob")
    assert len(DynamoDBMemoryStore(table).get_messages("bob")) == 3
    first.close()
    # an agent on another checkpoint file (no checkpoint of "bob") starts "bob" from memory
    db2 = f"sqlite:///{tmp_path}/pause2.db"
    model = ScriptedDynavecModel([[("transfer", {"amount": 120})], "Done: transferred."])
    agent = ReActAgent(
        model, [transfer], "Bank bot.", checkpointer=db2, memory=DynamoDBMemoryStore(table)
    )
    paused = agent.run("Pay 120.", thread_id="bob")
    assert paused.termination_reason == "interrupted"
    assert _texts(model.seen[0]) == [("system", "Bank bot."), ("user", "I am Bob."),
                                     ("assistant", "Hello Bob."), ("user", "Pay 120.")]  # fmt: skip
    # the pause wrote nothing to memory but the goal (appended when the run started)
    assert _texts(DynamoDBMemoryStore(table).get_messages("bob"))[-1] == ("user", "Pay 120.")
    agent.close()
    # a fresh agent on the same checkpoint file and table resumes; the answer is appended once
    fresh = ReActAgent(
        ScriptedDynavecModel(["Done: transferred."]),
        [transfer],
        "Bank bot.",
        checkpointer=db2,
        memory=DynamoDBMemoryStore(table),
    )
    done = fresh.resume(thread_id="bob", human_decision="approved")
    assert done.output == "Done: transferred." and done.steps[0].observations == [
        "Transferred 120."
    ]
    assert _texts(DynamoDBMemoryStore(table).get_messages("bob")) == [
        ("system", "Bank bot."),
        ("user", "I am Bob."),
        ("assistant", "Hello Bob."),
        ("user", "Pay 120."),
        ("assistant", "Done: transferred."),
    ]
    fresh.close()


def test_mem11_the_agent_prompt_stands_for_the_stored_system_message() -> None:
    memory = InMemoryMemoryStore()
    ReActAgent(ScriptedDynavecModel(["a"]), system_prompt="Old prompt.", memory=memory).run(
        "q1", thread_id="t"
    )
    model = ScriptedDynavecModel(["b"])
    ReActAgent(model, system_prompt="New prompt.", memory=memory).run("q2", thread_id="t")
    # memory keeps the first run's system message (dynavec's rule) ...
    assert _texts(memory.get_messages("t"))[0] == ("system", "Old prompt.")
    # ... and the model sees the running agent's prompt in its place (docs: differs)
    assert _texts(model.seen[0])[0] == ("system", "New prompt.")
    assert len(model.seen[0]) == 4


def test_mem7_a_summary_reaches_the_model_as_a_system_message() -> None:
    memory = InMemoryMemoryStore(policy=SummaryMemoryPolicy(max_messages=4))
    model = ScriptedDynavecModel(["a1", "a2", "a3"])
    agent = ReActAgent(model, system_prompt="S", memory=memory)
    results = [agent.run(goal, thread_id="sum") for goal in ("q1", "q2", "q3")]
    assert [r.output for r in results] == ["a1", "a2", "a3"]
    assert [r.total_steps for r in results] == [1, 1, 1]
    # after run 2 memory stored [S, summary(q1, a1), q2, a2]; run 3 adds q3 and the policy
    # summarises the summary and q2 (dynavec's quirk), which the model sees mid-conversation
    inner = "Summary of prior conversation:\n- User: q1\n- Assistant: a1"
    assert _texts(model.seen[2]) == [
        ("system", "S"),
        ("system", f"Summary of prior conversation:\n- System: {inner}\n- User: q2"),
        ("assistant", "a2"),
        ("user", "q3"),
    ]
