"""dynavec's ``DynamoDBCheckpointer`` table layout (docs/compatibility.md C10, D1-D9), tested the
way a dynavec user's tests are: the user makes the table (key ``pk`` only) and hands the boto3
``Table`` to ``DynamoDBCheckpointer``; the bodies are plain dynavec code, with only the
``dynavec`` imports rewritten. The table lives on the local DynamoDB endpoint (moto's server,
``tests/dynamo.py``).

The raw-item tests write and read items exactly as dynavec's checkpointer does (``put_item`` /
``get_item`` / ``update_item`` with ``Key={"pk": ...}``), so a thread dynavec wrote is resumed
here, and a thread written here is read the way dynavec reads it.
"""

from __future__ import annotations

import json
import uuid
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import boto3
import pytest

from dynavec_langgraph.agents import DEFAULT_REACT_SYSTEM_PROMPT, ReActAgent, interrupt, tool
from dynavec_langgraph.checkpoint import Checkpoint, DynamoDBCheckpointer
from tests.dynamo import REGION, DynamoDBServer
from tests.dynavec_model import ScriptedDynavecModel

RUNS: Counter[str] = Counter()


@tool()
def lookup(account: str) -> str:
    """Read an account's balance."""
    RUNS["lookup"] += 1
    return f"{account}: balance 500"


@tool()
def transfer(amount: int) -> str:
    """Transfer money once a person approved it."""
    decision = interrupt("approve_transfer", {"amount": amount})
    RUNS[f"transfer {decision}"] += 1
    return f"Transferred {amount}." if decision == "approved" else "Cancelled."


@pytest.fixture(autouse=True)
def _reset() -> None:
    RUNS.clear()


@pytest.fixture
def table(dynamodb_server: DynamoDBServer) -> Iterator[Any]:
    """The user's table, as dynavec's docs make it: partition key ``pk`` (S), nothing else."""
    resource = boto3.resource(
        "dynamodb", region_name=REGION, endpoint_url=dynamodb_server.endpoint_url
    )
    made = resource.create_table(
        TableName=f"dynavec-{uuid.uuid4().hex[:10]}",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    made.wait_until_exists()
    yield made
    made.delete()


def _typed(table: Any, pk: str) -> dict[str, Any]:
    """An item with its DynamoDB types (the low-level client)."""
    endpoint = table.meta.client.meta.endpoint_url
    client = boto3.client("dynamodb", region_name=REGION, endpoint_url=endpoint)
    item: dict[str, Any] = client.get_item(TableName=table.name, Key={"pk": {"S": pk}})["Item"]
    return item


# --- 8.1 / 8.2 / 8.6 / 8.7: what a dynavec user's checkpoint tests do ---------------------


def test_save_and_get(table: Any) -> None:
    checkpointer = DynamoDBCheckpointer(table, namespace="test")
    cp = Checkpoint(thread_id="thread-1", node_id="init", state={"goal": "hello"})
    checkpointer.save(cp)
    loaded = checkpointer.get("thread-1")
    assert loaded is not None
    assert loaded.checkpoint_id == cp.checkpoint_id
    assert loaded.state == {"goal": "hello"}
    assert checkpointer.get("thread-1", cp.checkpoint_id) == cp
    assert checkpointer.get("thread-1", "cp_missing") is None
    assert checkpointer.get("no-such-thread") is None


def test_latest_is_the_last_saved_not_the_highest_step(table: Any) -> None:
    checkpointer = DynamoDBCheckpointer(table)
    checkpointer.save(Checkpoint(thread_id="t", checkpoint_id="cp_b", step=5))
    checkpointer.save(Checkpoint(thread_id="t", checkpoint_id="cp_a", step=1))
    latest = checkpointer.get("t")
    assert latest is not None and latest.checkpoint_id == "cp_a"


def test_list_in_save_order_with_limit(table: Any) -> None:
    checkpointer = DynamoDBCheckpointer(table)
    first = checkpointer.put("t", {"n": 1}, node_id="init")
    second = checkpointer.put("t", {"n": 2}, node_id="step_1")
    third = checkpointer.put("t", {"n": 3}, node_id="step_2")
    assert [c.checkpoint_id for c in checkpointer.list("t")] == [
        first.checkpoint_id,
        second.checkpoint_id,
        third.checkpoint_id,
    ]
    assert [c.state["n"] for c in checkpointer.list("t", limit=2)] == [2, 3]
    assert (second.step, second.parent_checkpoint_id) == (1, first.checkpoint_id)
    assert checkpointer.list("unknown") == []


def test_values_round_trip(table: Any) -> None:
    checkpointer = DynamoDBCheckpointer(table)
    state = {"ratio": 0.25, "whole": 1.0, "pair": (1, 2), "none": None, "flag": True,
             "nested": {"xs": [1.5, {"y": "z"}]}}  # fmt: skip
    checkpointer.save(Checkpoint(thread_id="t", state=state, metadata={"source": "test"}))
    loaded = checkpointer.get("t")
    assert loaded is not None
    assert loaded.state == {**state, "pair": [1, 2]}
    assert type(loaded.state["whole"]) is int  # a stored 1.0 reads back as 1 (dynavec's rule)
    assert type(loaded.state["ratio"]) is float
    assert loaded.metadata == {"source": "test"}


def test_the_table_is_never_created(dynamodb_server: DynamoDBServer) -> None:
    resource = boto3.resource(
        "dynamodb", region_name=REGION, endpoint_url=dynamodb_server.endpoint_url
    )
    name = f"missing-{uuid.uuid4().hex[:8]}"
    checkpointer = DynamoDBCheckpointer(resource.Table(name))
    with pytest.raises(RuntimeError, match=f"the DynamoDB table '{name}' does not exist"):
        checkpointer.get("t")
    assert name not in resource.meta.client.list_tables()["TableNames"]


# --- 8.3 / 8.4 / 8.5 / 8.9: the items, attribute by attribute ------------------------------


def test_items_are_dynavecs(table: Any) -> None:
    checkpointer = DynamoDBCheckpointer(table, namespace="app")
    cp = Checkpoint(thread_id="t1", node_id="init", step=0, state={"goal": "g", "x": 0.5})
    checkpointer.save(cp)
    child = Checkpoint(thread_id="t1", parent_checkpoint_id=cp.checkpoint_id, node_id=None, step=1)
    checkpointer.save(child)
    item = _typed(table, f"app#checkpoint#t1#{cp.checkpoint_id}")
    assert item["ns"] == {"S": "app"} and item["type"] == {"S": "checkpoint"}
    assert item["thread_id"] == {"S": "t1"} and item["checkpoint_id"] == {"S": cp.checkpoint_id}
    assert item["parent_checkpoint_id"] == {"NULL": True} and item["node_id"] == {"S": "init"}
    assert item["step"] == {"N": "0"} and item["timestamp"] == {"S": cp.timestamp}
    assert item["state"] == {"M": {"goal": {"S": "g"}, "x": {"N": "0.5"}}}
    assert item["metadata"] == {"M": {}}
    second = _typed(table, f"app#checkpoint#t1#{child.checkpoint_id}")
    assert second["node_id"] == {"NULL": True}
    assert second["parent_checkpoint_id"] == {"S": cp.checkpoint_id}
    manifest = _typed(table, "app#thread#t1")
    assert manifest["type"] == {"S": "thread_manifest"}
    assert manifest["latest_checkpoint_id"] == {"S": child.checkpoint_id}
    assert manifest["updated_at"] == {"S": child.timestamp}
    assert manifest["history"]["L"][0] == {
        "M": {
            "checkpoint_id": {"S": cp.checkpoint_id},
            "parent_checkpoint_id": {"NULL": True},
            "node_id": {"S": "init"},
            "step": {"N": "0"},
            "timestamp": {"S": cp.timestamp},
        }
    }
    assert len(manifest["history"]["L"]) == 2
    # 8.9: no TTL attribute, nothing expires by default
    assert not {"ttl", "expires_at", "expiry"} & (set(item) | set(manifest))


def test_saving_an_id_again_replaces_it_in_place(table: Any) -> None:
    """D5: dynavec appends a second history entry; here the item is replaced, one entry."""
    checkpointer = DynamoDBCheckpointer(table)
    cp = checkpointer.put("t", {"v": 1}, node_id="init")
    checkpointer.save(Checkpoint.from_dict({**cp.to_dict(), "state": {"v": 2}}))
    assert [c.state for c in checkpointer.list("t")] == [{"v": 2}]


def test_shares_the_table_with_memory_and_documents(table: Any) -> None:
    """8.8: dynavec's memory and document items in the same table are left alone."""
    table.put_item(Item={"pk": "default#memory#session-1", "messages": ["hi"]})
    table.put_item(Item={"pk": "default#doc-7", "text": "a document"})
    checkpointer = DynamoDBCheckpointer(table)
    model = ScriptedDynavecModel(["4"])
    ReActAgent(model, checkpointer=checkpointer).run("2 + 2?", thread_id="t")
    assert checkpointer.threads() == ["t"]
    assert table.get_item(Key={"pk": "default#memory#session-1"})["Item"]["messages"] == ["hi"]
    assert table.get_item(Key={"pk": "default#doc-7"})["Item"]["text"] == "a document"


# --- a thread dynavec wrote resumes here, and the other way round ------------------------


def _dynavec_save(table: Any, ns: str, cp: dict[str, Any]) -> None:
    """dynavec's ``save`` (8.5), step for step: put the item, append to the manifest."""

    def enc(v: Any) -> Any:
        if isinstance(v, float):
            return Decimal(str(v))
        if isinstance(v, dict):
            return {k: enc(x) for k, x in v.items()}
        if isinstance(v, list | tuple):
            return [enc(x) for x in v]
        return v

    item = {
        "pk": f"{ns}#checkpoint#{cp['thread_id']}#{cp['checkpoint_id']}",
        "ns": ns,
        "type": "checkpoint",
        **enc(cp),
    }
    table.put_item(Item=item)
    entry = {k: cp[k] for k in ("checkpoint_id", "parent_checkpoint_id", "node_id", "step")}
    table.update_item(
        Key={"pk": f"{ns}#thread#{cp['thread_id']}"},
        UpdateExpression=(
            "SET latest_checkpoint_id = :cid, updated_at = :ts, #tp = :type, "
            "history = list_append(if_not_exists(history, :empty_list), :new_entry)"
        ),
        ExpressionAttributeNames={"#tp": "type"},
        ExpressionAttributeValues={
            ":cid": cp["checkpoint_id"],
            ":ts": cp["timestamp"],
            ":type": "thread_manifest",
            ":empty_list": [],
            ":new_entry": [enc({**entry, "timestamp": cp["timestamp"]})],
        },
    )


def _dynavec_get(table: Any, ns: str, thread_id: str) -> dict[str, Any] | None:
    """dynavec's ``get(thread_id)`` (8.6): the manifest, then its latest checkpoint."""
    manifest = table.get_item(Key={"pk": f"{ns}#thread#{thread_id}"}).get("Item")
    if not manifest or not manifest.get("latest_checkpoint_id"):
        return None
    pk = f"{ns}#checkpoint#{thread_id}#{manifest['latest_checkpoint_id']}"
    item: dict[str, Any] | None = table.get_item(Key={"pk": pk}).get("Item")
    return item


def _now() -> str:
    return datetime.now(UTC).isoformat()


def _paused_by_dynavec(thread_id: str) -> list[dict[str, Any]]:
    """The two records dynavec's agent writes for "pay the rent" paused at the transfer."""
    prompt = "You are a helpful and precise reasoning agent."
    system: dict[str, Any] = {
        "role": "system", "content": prompt, "tool_call_id": None, "tool_calls": [],
    }  # fmt: skip
    user: dict[str, Any] = {
        "role": "user",
        "content": "pay the rent",
        "tool_call_id": None,
        "tool_calls": [],
    }
    calls = [
        {"id": "call_1", "name": "lookup", "arguments": json.dumps({"account": "rent"})},
        {"id": "call_2", "name": "transfer", "arguments": json.dumps({"amount": 100})},
    ]
    assistant = {"role": "assistant", "content": "", "tool_call_id": None, "tool_calls": calls}
    looked = {"role": "tool", "content": "rent: balance 500", "tool_call_id": "call_1",
              "tool_calls": []}  # fmt: skip
    init = {
        "thread_id": thread_id, "checkpoint_id": "cp_20250131120000_aaaaaaaa",
        "parent_checkpoint_id": None, "node_id": "init", "step": 0, "timestamp": _now(),
        "metadata": {},
        "state": {"goal": "pay the rent", "messages": [system, user], "steps": [],
                  "total_tool_calls": 0},
    }  # fmt: skip
    paused = {
        "thread_id": thread_id, "checkpoint_id": "cp_20250131120001_bbbbbbbb",
        "parent_checkpoint_id": init["checkpoint_id"], "node_id": "interrupted", "step": 1,
        "timestamp": _now(), "metadata": {},
        "state": {
            "goal": "pay the rent", "messages": [system, user, assistant, looked],
            "steps": [], "total_tool_calls": 1, "finished": False,
            "interrupted": {"node_id": "approve_transfer", "payload": {"amount": 100},
                            "tool_call_id": "call_2", "step": 1, "thread_id": thread_id},
        },
    }  # fmt: skip
    return [init, paused]


def _model() -> ScriptedDynavecModel:
    """Asks for the lookup and the transfer, then answers with the results of that batch."""

    def answer(messages: list[Any]) -> Any:
        if messages[-1].role == "user":
            return [("lookup", {"account": "rent"}), ("transfer", {"amount": 100})]
        results: list[str] = []
        for m in reversed(messages):
            if m.role != "tool":
                break
            results.insert(0, m.content)
        return "Finished: " + " | ".join(results)

    return ScriptedDynavecModel(policy=answer)


def test_a_thread_paused_by_dynavec_resumes_here(table: Any) -> None:
    for record in _paused_by_dynavec("rent"):
        _dynavec_save(table, "default", record)
    checkpointer = DynamoDBCheckpointer(table)
    agent = ReActAgent(_model(), tools=[lookup, transfer], checkpointer=checkpointer)
    with pytest.raises(RuntimeError, match=r"approve_transfer.*resume\("):
        agent.run("something else", thread_id="rent")  # paused: resume() it
    result = agent.resume(thread_id="rent", human_decision="approved")
    assert result.finished and result.output == "Finished: rent: balance 500 | Transferred 100."
    assert RUNS == Counter({"transfer approved": 1})  # lookup ran in dynavec, not again
    # dynavec reads the thread back: the latest record is the finished one, dynavec's fields
    latest = _dynavec_get(table, "default", "rent")
    assert latest is not None and latest["state"]["finished"] is True
    assert latest["state"]["output"] == result.output
    assert [m["role"] for m in latest["state"]["messages"]] == [
        "system", "user", "assistant", "tool", "tool", "assistant",
    ]  # fmt: skip
    assert latest["state"]["messages"][0]["content"] == DEFAULT_REACT_SYSTEM_PROMPT  # as dynavec
    history = table.get_item(Key={"pk": "default#thread#rent"})["Item"]["history"]
    assert [e["checkpoint_id"] for e in history][:2] == [
        "cp_20250131120000_aaaaaaaa",
        "cp_20250131120001_bbbbbbbb",
    ]
    # a second resume: nothing is paused any more, the transfer does not run again
    with pytest.raises(ValueError, match="not paused"):
        agent.resume(thread_id="rent", human_decision="approved")
    assert RUNS["transfer approved"] == 1


def test_a_thread_written_here_reads_as_dynavec_reads_it(table: Any) -> None:
    checkpointer = DynamoDBCheckpointer(table, namespace="app")
    agent = ReActAgent(_model(), tools=[lookup, transfer], checkpointer=checkpointer)
    paused = agent.run("pay the rent", thread_id="rent")
    assert paused.termination_reason == "interrupted"
    item = _dynavec_get(table, "app", "rent")
    assert item is not None
    cp = Checkpoint.from_dict(item)  # what dynavec's get returns
    assert (cp.node_id, cp.step) == ("interrupted", 1)
    interrupted = cp.state["interrupted"]
    assert (interrupted["node_id"], interrupted["payload"]) == ("approve_transfer", {"amount": 100})
    system = cp.state["messages"][0]  # the system prompt first, as dynavec's records
    assert (system["role"], system["content"]) == ("system", DEFAULT_REACT_SYSTEM_PROMPT)
    calls = cp.state["messages"][2]["tool_calls"]
    assert [c["name"] for c in calls] == ["lookup", "transfer"]
    assert interrupted["tool_call_id"] == calls[1]["id"]
    assert json.loads(calls[1]["arguments"]) == {"amount": 100}
    assert cp.state["messages"][3] == {
        "role": "tool", "content": "rent: balance 500", "tool_call_id": calls[0]["id"],
        "tool_calls": [],
    }  # fmt: skip
    history = table.get_item(Key={"pk": "app#thread#rent"})["Item"]["history"]
    assert [e["node_id"] for e in history] == ["init", "interrupted"]
    # dynavec resumes it and saves its next record (its save, 8.5); this package follows
    finished = {
        **cp.to_dict(),
        "checkpoint_id": "cp_20250131120002_cccccccc",
        "parent_checkpoint_id": cp.checkpoint_id, "node_id": "step_1", "timestamp": _now(),
        "metadata": {},  # dynavec's agent writes its own records: no LangGraph data
        "state": {**cp.state, "finished": True, "output": "Paid by dynavec.",
                  "messages": [*cp.state["messages"],
                               {"role": "tool", "content": "Transferred 100.",
                                "tool_call_id": calls[1]["id"], "tool_calls": []},
                               {"role": "assistant", "content": "Paid by dynavec.",
                                "tool_call_id": None, "tool_calls": []}]},
    }  # fmt: skip
    del finished["state"]["interrupted"]
    _dynavec_save(table, "app", finished)
    again = DynamoDBCheckpointer(table, namespace="app")
    latest = again.get("rent")
    assert latest is not None and latest.state["output"] == "Paid by dynavec."
    model = ScriptedDynavecModel(["ok"])
    follow_up = ReActAgent(model, tools=[lookup, transfer], checkpointer=again)
    assert follow_up.run("thanks", thread_id="rent").output == "ok"
    assert [m.content for m in model.seen[0]][-3:] == [
        "Transferred 100.",
        "Paid by dynavec.",
        "thanks",
    ]  # the conversation dynavec continued, then the follow-up
    assert RUNS == Counter({"lookup": 1})  # the first run's; the transfer ran in dynavec only


async def test_a_thread_paused_by_dynavec_resumes_here_async(table: Any) -> None:
    for record in _paused_by_dynavec("rent"):
        _dynavec_save(table, "default", record)
    agent = ReActAgent(_model(), tools=[lookup, transfer], checkpointer=DynamoDBCheckpointer(table))
    with pytest.raises(RuntimeError, match="approve_transfer"):
        await agent.arun("something else", thread_id="rent")
    result = await agent.aresume(thread_id="rent", human_decision="approved")
    assert result.output == "Finished: rent: balance 500 | Transferred 100."
    assert RUNS == Counter({"transfer approved": 1})
    follow_up = await agent.arun("and now?", thread_id="rent")
    assert follow_up.termination_reason == "interrupted"  # a new batch: lookup, then a pause
    assert RUNS == Counter({"transfer approved": 1, "lookup": 1})
