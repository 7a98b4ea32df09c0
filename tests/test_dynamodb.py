"""``DynamoDBCheckpointer`` against a local DynamoDB endpoint (moto's server, started by the
tests in ``tests/dynamo.py``): dynavec's single-table layout, the agent and the raw graph on it,
a pause in one process and the resume in another, and two processes resuming at once.
See docs/compatibility.md ("DynamoDB")."""

from __future__ import annotations

import json
import os
import re
import signal
import sys
import time
import uuid
from decimal import Decimal
from pathlib import Path
from typing import Any

import boto3
import pytest
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.types import Command

from dynavec_langgraph import (
    CheckpointerConfigError,
    ConcurrentResumeError,
    DynamoDBCheckpointer,
    MissingDependencyError,
    ReActAgent,
    StorageError,
    create_react_agent,
)
from dynavec_langgraph._persistence.adapter import DynavecCheckpointSaver
from dynavec_langgraph.checkpoint import Checkpoint
from dynavec_langgraph.savers import resolve_checkpointer
from dynavec_langgraph.testing import ScriptedChatModel
from tests.children.scenario import (
    PAID,
    TIMEOUT,
    Scenario,
    conversation,
    conversation_problems,
    make_agent,
    open_saver,
    policy,
    race_resumes,
    run_child,
    start_child,
    wait_for,
)
from tests.children.scenario import thread_config as cfg
from tests.children.warm import Child
from tests.dynamo import REGION, DynamoDBServer


def _store(
    server: DynamoDBServer, namespace: str = "default", table: str = ""
) -> DynamoDBCheckpointer:
    return DynamoDBCheckpointer(
        table or f"t{uuid.uuid4().hex[:12]}",
        namespace=namespace,
        region_name=REGION,
        endpoint_url=server.endpoint_url,
    )


def test_records_round_trip_in_dynavec_layout(dynamodb_server: DynamoDBServer) -> None:
    store = _store(dynamodb_server)
    state = {"goal": "g", "ratio": 0.25, "big": 1e20, "n": 3, "items": [1, 2.5, "x", None, [True]]}
    first = store.put("t1", state, node_id="init")
    second = store.put("t1", {"goal": "g", "steps": []}, node_id="step_1")
    assert (first.step, second.step, second.parent_checkpoint_id) == (0, 1, first.checkpoint_id)
    back = store.get("t1", first.checkpoint_id)
    assert back is not None and back.state == state and back.to_dict() == first.to_dict()
    assert type(back.state["ratio"]) is float and type(back.state["n"]) is int
    assert isinstance(back.state["items"], list) and back.state["items"][4] == [True]
    # replacing a record keeps its place; limit keeps the newest
    store.save(Checkpoint.from_dict({**first.to_dict(), "node_id": "init", "step": 0}))
    third = store.put("t1", {"goal": "g"}, node_id="step_2")
    assert [c.node_id for c in store.list("t1")] == ["init", "step_1", "step_2"]
    assert [c.checkpoint_id for c in store.list("t1", limit=2)] == [
        second.checkpoint_id,
        third.checkpoint_id,
    ]
    latest = store.get("t1")
    assert latest is not None and latest.checkpoint_id == third.checkpoint_id
    # the raw table: one manifest and the checkpoint items, keyed as dynavec does
    items = (
        boto3.resource("dynamodb", region_name=REGION, endpoint_url=dynamodb_server.endpoint_url)
        .Table(store.table_name)
        .scan()["Items"]
    )
    keys = sorted(str(i["pk"]).rsplit("#", 1)[0] for i in items)
    assert keys == ["default#checkpoint#t1"] * 3 + ["default#thread"]
    manifest: Any = next(i for i in items if i["type"] == "thread_manifest")
    assert manifest["latest_checkpoint_id"] == third.checkpoint_id
    assert [e["checkpoint_id"] for e in manifest["history"]] == [
        first.checkpoint_id,
        second.checkpoint_id,
        third.checkpoint_id,
    ]  # the replaced record was not appended again
    # namespaces of one table do not see each other; delete removes a thread
    other = _store(dynamodb_server, namespace="other", table=store.table_name)
    assert other.list("t1") == [] and other.get("t1") is None
    other.put("t1", {"goal": "o"}, node_id="init")
    assert store.threads() == ["t1"] and other.threads() == ["t1"]
    assert store.delete("t1") is True
    assert store.list("t1") == [] and store.get("t1") is None
    assert [c.state["goal"] for c in other.list("t1")] == ["o"]


def test_agent_on_dynamodb_keeps_dynavec_records(
    dynamodb_server: DynamoDBServer, tmp_path: Path
) -> None:
    store = _store(dynamodb_server)
    scenario = Scenario(tmp_path / "effects")
    paused = ReActAgent(ScriptedChatModel(policy=policy), scenario.tools(), checkpointer=store).run(
        "pay the rent", thread_id="rent"
    )
    assert paused.termination_reason == "interrupted"
    assert [c.node_id for c in store.list("rent")] == ["init", "interrupted"]
    record = store.get("rent")
    assert record is not None and record.state["interrupted"]["payload"] == {"amount": 100}
    # a fresh agent (and a fresh checkpointer object) resumes it
    again = DynamoDBCheckpointer(
        store.table_name, region_name=REGION, endpoint_url=dynamodb_server.endpoint_url
    )
    agent = ReActAgent(ScriptedChatModel(policy=policy), scenario.tools(), checkpointer=again)
    done = agent.resume(thread_id="rent", human_decision="approved")
    assert done.output == PAID
    assert [c.node_id for c in again.list("rent")] == ["init", "interrupted", "step_1", "step_2"]
    assert scenario.lines() == [
        "lookup rent",
        'transfer start "approved"',
        'transfer done "approved"',
    ]


async def test_agent_async_on_dynamodb_string(dynamodb_url: str, tmp_path: Path) -> None:
    scenario = Scenario(tmp_path / "effects")
    agent = make_agent(scenario, dynamodb_url)
    paused = await agent.arun("pay the rent", thread_id="a1")
    assert paused.termination_reason == "interrupted"
    done = await make_agent(scenario, dynamodb_url).aresume(
        thread_id="a1", human_decision="approved"
    )
    assert done.output == PAID
    assert scenario.lines().count('transfer done "approved"') == 1


def test_create_react_agent_with_dynamodb_string(dynamodb_url: str, tmp_path: Path) -> None:
    scenario = Scenario(tmp_path / "effects")
    graph = create_react_agent(
        ScriptedChatModel(policy=policy), scenario.tools(), checkpointer=dynamodb_url
    )
    out = graph.invoke({"messages": [("user", "pay the rent")]}, cfg("g1"))
    assert out["__interrupt__"][0].value["node_id"] == "approve_transfer"
    out = graph.invoke(Command(resume="approved"), cfg("g1"))
    assert out["messages"][-1].content == PAID
    assert conversation_problems(conversation(out["messages"])) == []


def test_pause_in_one_process_resume_in_another(dynamodb_url: str, tmp_path: Path) -> None:
    effects = tmp_path / "effects"
    base = ("--db", dynamodb_url, "--effects", str(effects))
    paused = run_child(*base, "run", "p1", "pay the rent")
    assert (paused["termination_reason"], paused["payload"]) == ("interrupted", {"amount": 100})
    done = run_child(*base, "resume", "p1", json.dumps("approved"))
    assert (done["termination_reason"], done["output"]) == ("completed", PAID)
    assert conversation_problems(done["messages"]) == []
    assert Scenario(effects).lines() == [
        "lookup rent",
        'transfer start "approved"',
        'transfer done "approved"',
    ]


def test_two_processes_resume_at_once(dynamodb_url: str, tmp_path: Path) -> None:
    scenario = Scenario(tmp_path / "effects")
    with open_saver(dynamodb_url) as saver:
        assert make_agent(scenario, saver).run("pay", thread_id="t").termination_reason == (
            "interrupted"
        )
    decisions = {"a": "approved", "b": "rejected"}
    race = race_resumes(dynamodb_url, scenario, "t", decisions)
    winner, won, lost = race.winner, race.won, race.lost
    assert (lost["ok"], lost["error"]) == (False, "ConcurrentResumeError")
    assert "DynamoDB lock" in lost["message"]
    assert not race.loser_reached_the_tool
    assert won["ok"] is True and won["termination_reason"] == "completed"
    d = json.dumps(decisions[winner])
    assert scenario.lines() == ["lookup rent", f"transfer start {d}", f"transfer done {d}"]


def test_lock_holds_across_checkpointer_objects(dynamodb_server: DynamoDBServer) -> None:
    one = _store(dynamodb_server)
    two = DynamoDBCheckpointer(
        one.table_name, region_name=REGION, endpoint_url=dynamodb_server.endpoint_url
    )
    with one.resume_lock("t"):
        refusal = pytest.raises(ConcurrentResumeError, match="DynamoDB lock")
        with refusal as refused, two.resume_lock("t"):
            pass
        assert f"process {os.getpid()} on this machine" in str(refused.value)
        assert "still running" in str(refused.value)
        with two.resume_lock("other-thread"):
            pass
    with two.resume_lock("t"):  # released
        pass


def _lock_table(store: DynamoDBCheckpointer, server: DynamoDBServer) -> Any:
    return boto3.resource("dynamodb", region_name=REGION, endpoint_url=server.endpoint_url).Table(
        store.table_name
    )


def test_lock_of_another_machine_frees_when_its_lease_ends(dynamodb_server: DynamoDBServer) -> None:
    """A lock item of a holder on another machine (another boot id): refused while its lease
    runs, taken over once it ran out."""
    store = _store(dynamodb_server)
    table = _lock_table(store, dynamodb_server)
    now = time.time()
    foreign = {
        "pk": "default#lglock#t", "type": "lg_lock", "owner": "x" * 32, "host": "elsewhere",
        "machine": "another-boot|pid:[1]", "pid": 4242, "started": "1",
        "renewed_at": Decimal(repr(now)), "expires_at": Decimal(repr(now + 30)),
    }  # fmt: skip
    table.put_item(Item=foreign)
    with pytest.raises(ConcurrentResumeError) as refused, store.resume_lock("t"):
        pass
    message = str(refused.value)
    assert "process 4242 on host 'elsewhere'" in message
    assert re.search(r"the lock is free (29|30) s from now \(lock_ttl=15 s", message), message
    table.put_item(Item={**foreign, "expires_at": Decimal(repr(now - 1))})
    with store.resume_lock("t"):  # the lease ran out: taken over
        held = table.get_item(Key={"pk": "default#lglock#t"})["Item"]
        assert held["pid"] == os.getpid() and held["owner"] != foreign["owner"]
    assert "Item" not in table.get_item(Key={"pk": "default#lglock#t"})


def _hold_the_lock_in_a_child(url: str, scenario: Scenario, gate: Path) -> Child:
    """A child resumes the paused thread ``t`` and stays inside the approved tool."""
    base = ("--db", url, "--effects", str(scenario.effects), "--gate", str(gate), "--label", "a")
    proc = start_child(*base, "resume", "t", json.dumps("approved"))
    wait_for(gate / "ready-a", proc)
    (gate / "go").touch()
    wait_for(gate / "started-a", proc)  # inside transfer, holding the lock
    return proc


def _sigkill(proc: Child) -> float:
    proc.kill()
    proc.communicate(timeout=TIMEOUT)
    assert proc.returncode == -signal.SIGKILL
    return time.monotonic()


def _resume_until_free(agent: ReActAgent) -> tuple[Any, list[str]]:
    """Resume ``t`` with ``agent`` (built beforehand) until the lock lets us; the result and
    the refusals seen before."""
    refusals: list[str] = []
    deadline = time.monotonic() + TIMEOUT
    while True:
        try:
            return agent.resume(thread_id="t", human_decision="approved"), refusals
        except ConcurrentResumeError as error:
            refusals.append(str(error))
            assert time.monotonic() < deadline, refusals[-1]
            time.sleep(0.2)


@pytest.mark.timing  # bounds the recovery in seconds: run on a quiet machine
def test_sigkill_of_the_lock_holder_frees_the_thread_at_once(
    dynamodb_url: str, tmp_path: Path
) -> None:
    """The owner check sees that the holder (a process of this machine) is gone, so
    the next caller proceeds at once instead of waiting for the lease (the error before the
    kill names the live holder truthfully)."""
    scenario = Scenario(tmp_path / "effects")
    assert make_agent(scenario, dynamodb_url).run("pay", thread_id="t").termination_reason == (
        "interrupted"
    )
    gate = tmp_path / "gate"
    gate.mkdir()
    proc = _hold_the_lock_in_a_child(dynamodb_url, scenario, gate)
    try:
        with pytest.raises(ConcurrentResumeError) as refused:
            make_agent(scenario, dynamodb_url).resume(thread_id="t", human_decision="approved")
        assert f"process {proc.pid} on this machine holds its DynamoDB lock" in str(refused.value)
        assert "still running" in str(refused.value)
        agent = make_agent(scenario, dynamodb_url)  # connected before the kill
    finally:
        killed_at = _sigkill(proc)
    done, refusals = _resume_until_free(agent)
    recovered = time.monotonic() - killed_at
    print(f"\nDynamoDB lock: resumed {recovered:.2f} s after the SIGKILL", file=sys.stderr)
    assert refusals == [] and recovered < 5.0  # the lease is 15 s: this was the owner check
    assert done.output == PAID
    assert scenario.lines() == [
        "lookup rent",
        'transfer start "approved"',  # the killed resume
        'transfer start "approved"',
        'transfer done "approved"',
    ]


@pytest.mark.timing  # bounds the recovery in seconds: run on a quiet machine
def test_sigkill_of_a_holder_elsewhere_frees_the_thread_when_its_lease_ends(
    dynamodb_url: str, tmp_path: Path
) -> None:
    """A holder that records no machine (``lock_owner_check=false``, what a holder on another
    machine is to us): its heartbeat keeps a live lock past ``lock_ttl``; once SIGKILLed, its
    lease runs out and the next caller proceeds within ``lock_ttl`` seconds."""
    scenario = Scenario(tmp_path / "effects")
    assert make_agent(scenario, dynamodb_url).run("pay", thread_id="t").termination_reason == (
        "interrupted"
    )
    gate = tmp_path / "gate"
    gate.mkdir()
    holder_url = dynamodb_url + "&lock_ttl=3&lock_heartbeat=0.5&lock_owner_check=false"
    proc = _hold_the_lock_in_a_child(holder_url, scenario, gate)
    try:
        agent = make_agent(scenario, dynamodb_url)  # connected before the kill
        time.sleep(4.5)  # past the lease: only the heartbeat keeps it
        with pytest.raises(ConcurrentResumeError) as refused:
            agent.resume(thread_id="t", human_decision="approved")
        assert f"process {proc.pid} on host" in str(refused.value)
        assert "if that process has died, the lock is free" in str(refused.value)
    finally:
        killed_at = _sigkill(proc)
    done, refusals = _resume_until_free(agent)
    recovered = time.monotonic() - killed_at
    print(f"\nDynamoDB lock (lease): resumed {recovered:.2f} s after the SIGKILL", file=sys.stderr)
    # renewed at most 0.5 s before the kill: the first tries still see 2.5 s of lease
    assert refusals and all("the lock is free" in r for r in refusals)
    assert recovered < 3.0 + 3.0
    assert done.output == PAID
    assert scenario.lines().count('transfer done "approved"') == 1


def test_lock_options_in_the_url(dynamodb_url: str) -> None:
    adapted = resolve_checkpointer(
        dynamodb_url + "&lock_ttl=7.5&lock_heartbeat=2&lock_owner_check=false&create_table=1"
    )
    store = getattr(adapted, "checkpointer", None)
    assert isinstance(store, DynamoDBCheckpointer)
    assert (store.lock_ttl, store.lock_heartbeat, store.lock_owner_check) == (7.5, 2.0, False)
    default = getattr(resolve_checkpointer(dynamodb_url), "checkpointer", None)
    assert isinstance(default, DynamoDBCheckpointer)
    assert (default.lock_ttl, default.lock_heartbeat, default.lock_owner_check) == (15, 5, True)


def test_missing_boto3_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "boto3", None)  # `import boto3` raises ImportError
    with pytest.raises(MissingDependencyError, match=r"dynavec-langgraph\[dynamodb\]"):
        DynamoDBCheckpointer("table")
    with pytest.raises(ImportError, match="boto3"):
        resolve_checkpointer("dynamodb://table?region=us-east-1")


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("dynamodb://?region=x", "names no table"),
        ("dynamodb://t?colour=red", "unknown parameter 'colour'"),
        ("dynamodb://t?lock_ttl=soon", "lock_ttl='soon' is not a number of seconds"),
        ("dynamodb://t?lock_ttl=5&lock_heartbeat=9", "a heartbeat shorter than it"),
        ("dynamodb://t?lock_ttl=0", "a heartbeat shorter than it"),
        ("dynamodb://t?create_table=maybe", "create_table='maybe': use true or false"),
        ("dynamodb://t?namespace=a%23b", "without '#'"),
    ],
)
def test_bad_dynamodb_urls(url: str, message: str) -> None:
    with pytest.raises(CheckpointerConfigError, match=message):
        resolve_checkpointer(url)


# --- the 400 KB item limit ----------------------------------------------------------------


def _items(store: DynamoDBCheckpointer, server: DynamoDBServer) -> list[dict[str, Any]]:
    table = _lock_table(store, server)
    page = table.scan()
    items = list(page["Items"])
    while "LastEvaluatedKey" in page:
        page = table.scan(ExclusiveStartKey=page["LastEvaluatedKey"])
        items += page["Items"]
    return items


def _raw_sizes(store: DynamoDBCheckpointer, server: DynamoDBServer) -> list[int]:
    """Each item's size as stored (its attributes as DynamoDB JSON, a close upper bound)."""
    client = boto3.client("dynamodb", region_name=REGION, endpoint_url=server.endpoint_url)
    sizes: list[int] = []
    for page in client.get_paginator("scan").paginate(TableName=store.table_name):
        sizes += [len(json.dumps(item).encode()) for item in page["Items"]]
    return sizes


def test_a_500_kb_decision_is_stored_in_pieces(
    dynamodb_server: DynamoDBServer, tmp_path: Path
) -> None:
    """A 500 KB decision: the tool runs once, every record is saved (in pieces, no item over
    the limit), and another process sees the thread finished (so it never runs it again)."""
    store = _store(dynamodb_server)
    url = dynamodb_server.url(store.table_name)
    scenario = Scenario(tmp_path / "effects")
    assert make_agent(scenario, url).run("pay", thread_id="big").termination_reason == (
        "interrupted"
    )
    decision = "no: " + "x" * 500_000
    done = make_agent(scenario, url).resume(thread_id="big", human_decision=decision)
    assert done.termination_reason == "completed" and done.output.endswith("x" * 100)
    assert scenario.lines() == [
        "lookup rent",
        f"transfer start {json.dumps(decision)}",
        f"transfer done {json.dumps(decision)}",
    ]
    sizes = _raw_sizes(store, dynamodb_server)
    assert max(sizes) < 400_000, sorted(sizes)[-3:]
    items = _items(store, dynamodb_server)
    assert any("#lgpart#big#" in str(i["pk"]) for i in items)
    latest = store.get("big")
    assert latest is not None and latest.state["output"] == done.output
    assert latest.state["messages"][-2]["content"] == f"Not sent: {decision}"
    # dynavec's reader sees the record without the moved keys, named in lg_pieces
    raw = next(i for i in items if str(i["pk"]).endswith(f"#{latest.checkpoint_id}"))
    assert raw["lg_pieces"] and "messages" not in raw["state"]
    assert raw["state"]["finished"] is True and raw["state"]["goal"] == "pay"
    # another process: the thread is finished, nothing to resume, the tool does not run again
    again = run_child("--db", url, "--effects", str(scenario.effects), "resume", "big", '"ok"')
    assert (again["ok"], again["error"]) == (False, "NothingToResumeError")
    assert scenario.lines().count(f"transfer done {json.dumps(decision)}") == 1


def test_a_long_conversation_stays_under_the_item_limit(
    dynamodb_server: DynamoDBServer, tmp_path: Path
) -> None:
    """Five pauses answered with 150 KB each on one thread: a conversation of ~750 KB, each
    record holding all of it, stored in pieces and read back whole."""
    store = _store(dynamodb_server)
    url = dynamodb_server.url(store.table_name)
    scenario = Scenario(tmp_path / "effects")
    rounds = 5
    for n in range(rounds):
        agent = make_agent(scenario, url)
        assert agent.run(f"pay {n}", thread_id="long").termination_reason == "interrupted"
        assert agent.resume(thread_id="long", human_decision=f"{n}" * 150_000).output
    record = store.get("long")
    assert record is not None
    notes = [m["content"] for m in record.state["messages"] if m["role"] == "tool"]
    assert [c[len("Not sent: ") :][:1] for c in notes if c.startswith("Not sent")] == [
        str(n) for n in range(rounds)
    ]
    assert sum(len(c) for c in notes) > rounds * 150_000
    assert max(_raw_sizes(store, dynamodb_server)) < 400_000
    assert scenario.lines().count("lookup rent") == rounds
    # a fresh process reads the whole thread and continues it
    paused = run_child("--db", url, "--effects", str(scenario.effects), "run", "long", "pay x")
    assert paused["termination_reason"] == "interrupted"
    assert len(paused["messages"]) == rounds * 5 + 3  # goal, calls, 2 results, answer


def test_replacing_a_record_in_pieces_leaves_no_stale_pieces(
    dynamodb_server: DynamoDBServer,
) -> None:
    store = _store(dynamodb_server)
    big = store.put("t", {"goal": "g", "messages": [{"role": "user", "content": "a" * 700_000}]})
    pieces = [i["pk"] for i in _items(store, dynamodb_server) if "#lgpart#" in str(i["pk"])]
    assert len(pieces) == 3  # 700 KB of JSON in 300 KB pieces
    store.save(Checkpoint.from_dict({**big.to_dict(), "state": {"goal": "small now"}}))
    assert not [i for i in _items(store, dynamodb_server) if "#lgpart#" in str(i["pk"])]
    back = store.get("t")
    assert back is not None and back.state == {"goal": "small now"}
    store.save(big)
    assert store.get("t") == big and store.list("t") == [big]
    assert store.delete("t") is True and _items(store, dynamodb_server) == []


# --- clear errors -------------------------------------------------------------------------


def _no_credentials(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


def test_no_aws_credentials_says_what_to_set(
    dynamodb_url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _no_credentials(monkeypatch, tmp_path)
    with pytest.raises(CheckpointerConfigError, match="no AWS credentials") as error:
        resolve_checkpointer(dynamodb_url)
    assert "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY" in str(error.value)
    assert "AWS_PROFILE" in str(error.value)
    # not creating the table, the first request fails: the same advice, nothing ran
    scenario = Scenario(tmp_path / "effects")
    agent = make_agent(scenario, dynamodb_url + "&create_table=false")
    with pytest.raises(StorageError, match=r"no AWS credentials.*AWS_ACCESS_KEY_ID"):
        agent.run("pay", thread_id="t")
    assert scenario.lines() == []


def test_no_region_says_what_to_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AWS_DEFAULT_REGION", raising=False)
    monkeypatch.delenv("AWS_REGION", raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    with pytest.raises(CheckpointerConfigError, match=r"no AWS region.*region=\.\.\."):
        resolve_checkpointer("dynamodb://table")


def test_a_table_with_another_key_schema_is_named(dynamodb_server: DynamoDBServer) -> None:
    """The layout before dynavec's (pk + sk) or any other table: refused, saying which."""
    resource = boto3.resource(
        "dynamodb", region_name=REGION, endpoint_url=dynamodb_server.endpoint_url
    )
    name = f"t{uuid.uuid4().hex[:12]}"
    table = resource.create_table(
        TableName=name,
        KeySchema=[
            {"AttributeName": "pk", "KeyType": "HASH"},
            {"AttributeName": "sk", "KeyType": "RANGE"},
        ],
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "sk", "AttributeType": "S"},
        ],
        BillingMode="PAY_PER_REQUEST",
    )
    with pytest.raises(CheckpointerConfigError, match="does not have dynavec's key schema"):
        _store(dynamodb_server, table=name)
    store = DynamoDBCheckpointer(table)  # a Table resource: not checked up front, as dynavec
    with pytest.raises(StorageError, match=f"table '{name}' does not have dynavec's key schema"):
        store.get("t1")


def _paused_thread(store: DynamoDBCheckpointer, tmp_path: Path) -> Scenario:
    scenario = Scenario(tmp_path / "effects")
    agent = make_agent(scenario, DynavecCheckpointSaver(store))
    assert agent.run("pay", thread_id="t").termination_reason == "interrupted"
    return scenario


@pytest.mark.parametrize(
    ("damage", "what"),
    [
        ({"history": "garbage"}, "its history is not a list of checkpoints"),
        ({"history": [{"step": 1}]}, "its history is not a list of checkpoints"),
        ({"latest_checkpoint_id": 7}, "latest_checkpoint_id=7"),
        ({"latest_checkpoint_id": "gone"}, "its latest checkpoint 'gone' has no item"),
    ],
    ids=["history", "entry", "latest-type", "latest-missing"],
)
def test_a_damaged_manifest_is_reported_as_damaged(
    dynamodb_server: DynamoDBServer, tmp_path: Path, damage: dict[str, Any], what: str
) -> None:
    store = _store(dynamodb_server)
    scenario = _paused_thread(store, tmp_path)
    table = _lock_table(store, dynamodb_server)
    manifest = table.get_item(Key={"pk": "default#thread#t"})["Item"]
    if damage.get("latest_checkpoint_id") == "gone":
        manifest["history"] = [*manifest["history"], {"checkpoint_id": "gone"}]
    table.put_item(Item={**manifest, **damage})
    agent = make_agent(scenario, DynavecCheckpointSaver(store))
    with pytest.raises(StorageError, match=r"thread 't' cannot be read: the manifest") as error:
        agent.resume(thread_id="t", human_decision="approved")
    assert what in str(error.value) and "is damaged" in str(error.value)
    assert scenario.lines() == ["lookup rent"]  # nothing ran


def test_a_damaged_checkpoint_item_is_reported_as_damaged(
    dynamodb_server: DynamoDBServer, tmp_path: Path
) -> None:
    store = _store(dynamodb_server)
    scenario = _paused_thread(store, tmp_path)
    table = _lock_table(store, dynamodb_server)
    latest = store.get("t")
    assert latest is not None
    pk = f"default#checkpoint#t#{latest.checkpoint_id}"
    table.update_item(Key={"pk": pk}, UpdateExpression="SET #s = :x",
                      ExpressionAttributeNames={"#s": "state"},
                      ExpressionAttributeValues={":x": "not a map"})  # fmt: skip
    fresh = _store(dynamodb_server, table=store.table_name)  # another process, as it were
    with pytest.raises(StorageError, match=f"cannot be read: the checkpoint item '{pk}'"):
        make_agent(scenario, DynavecCheckpointSaver(fresh)).resume(
            thread_id="t", human_decision="approved"
        )
    assert scenario.lines() == ["lookup rent"]


def test_a_storage_failure_during_a_run_says_what_ran(
    dynamodb_server: DynamoDBServer, tmp_path: Path
) -> None:
    """The endpoint gone mid-resume (a botocore error): StorageError naming the DynamoDB table
    and the tool call that ran, not a raw botocore exception."""
    store = _store(dynamodb_server)
    scenario = _paused_thread(store, tmp_path)
    broken = DynamoDBCheckpointer(
        store.table_name, region_name=REGION, endpoint_url=dynamodb_server.endpoint_url
    )

    def cut(decision: Any) -> None:
        del decision
        broken.table = boto3.resource(
            "dynamodb", region_name=REGION, endpoint_url="http://127.0.0.1:9"
        ).Table(store.table_name)

    scenario.on_transfer = cut
    agent = make_agent(scenario, DynavecCheckpointSaver(broken))
    with pytest.raises(StorageError) as error:
        agent.resume(thread_id="t", human_decision="approved")
    message = str(error.value)
    assert f"the DynamoDB table '{store.table_name}' (namespace 'default') failed" in message
    assert "transfer" in message and error.value.completed
    assert scenario.lines().count('transfer done "approved"') == 1


def test_a_long_history_moves_to_history_pages(dynamodb_server: DynamoDBServer) -> None:
    """The manifest's history is capped (1,000 entries, about 200 KB; 5 here, to show it in a
    few saves): older entries move to history pages, list() still returns every record in
    save order, dynavec's get (the manifest's latest) is unaffected."""
    store = _store(dynamodb_server)
    store._history_max, store._history_keep = 5, 2  # the real sizes take 1,000 saves
    saved = [store.put("t", {"n": n}, node_id=f"step_{n}") for n in range(13)]
    assert [c.state["n"] for c in store.list("t")] == list(range(13))
    assert [c.state["n"] for c in store.list("t", limit=3)] == [10, 11, 12]
    table = _lock_table(store, dynamodb_server)
    manifest = table.get_item(Key={"pk": "default#thread#t"})["Item"]
    history: Any = manifest["history"]
    assert 2 <= len(history) <= 5
    assert [e["checkpoint_id"] for e in history][-1] == saved[-1].checkpoint_id
    assert manifest["latest_checkpoint_id"] == saved[-1].checkpoint_id
    pages: Any = manifest["lg_history_pages"]
    assert len(pages) >= 2 and all("#lghistory#t#" in p for p in pages)
    fresh = _store(dynamodb_server, table=store.table_name)  # no memory of the records
    assert [c.checkpoint_id for c in fresh.list("t")] == [c.checkpoint_id for c in saved]
    assert fresh.delete("t") is True and _items(store, dynamodb_server) == []


def test_any_large_state_key_goes_in_pieces(dynamodb_server: DynamoDBServer) -> None:
    """Not only messages: a 500 KB value under any state or metadata key is stored in pieces;
    the small keys stay readable in the item itself."""
    store = _store(dynamodb_server)
    state = {"goal": "g", "shared": {"blob": "b" * 500_000}, "total_tool_calls": 2}
    cp = store.put("t", state, node_id="init", metadata={"note": "n" * 380_000})
    assert store.get("t") == cp
    assert _store(dynamodb_server, table=store.table_name).list("t") == [cp]
    raw = next(i for i in _items(store, dynamodb_server) if i["type"] == "checkpoint")
    assert raw["state"] == {"goal": "g", "total_tool_calls": 2} and raw["lg_pieces"]
    assert max(_raw_sizes(store, dynamodb_server)) < 400_000


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"lock_ttl": "15"}, "give seconds as numbers"),
        ({"lock_ttl": 10, "lock_heartbeat": 10}, "a heartbeat shorter than it"),
        ({"lock_ttl": -1}, "a heartbeat shorter than it"),
        ({"namespace": ""}, "non-empty name"),
    ],
)
def test_bad_checkpointer_arguments(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(CheckpointerConfigError, match=message):
        DynamoDBCheckpointer("table", region_name=REGION, **kwargs)


def test_the_inbox_lists_paused_threads_of_dynamodb(
    dynamodb_server: DynamoDBServer, tmp_path: Path
) -> None:
    """``list_pending`` (the inbox) on a DynamoDB checkpointer: its threads come from the
    thread manifests; a damaged thread is reported as damaged, the others still listed."""
    from dynavec_langgraph._approvals.inbox import list_pending

    store = _store(dynamodb_server)
    scenario = Scenario(tmp_path / "effects")
    agent = make_agent(scenario, DynavecCheckpointSaver(store))
    for tid in ("a", "b"):
        assert agent.run("pay", thread_id=tid).termination_reason == "interrupted"
    agent.run("pay", thread_id="c")
    agent.resume(thread_id="c", human_decision="approved")
    rows = list_pending(agent.graph, agent.checkpointer)
    assert sorted((r.thread_id, r.node_id) for r in rows) == [
        ("a", "approve_transfer"),
        ("b", "approve_transfer"),
    ]
    table = _lock_table(store, dynamodb_server)
    table.update_item(Key={"pk": "default#thread#b"}, UpdateExpression="SET history = :x",
                      ExpressionAttributeValues={":x": "garbage"})  # fmt: skip
    unreadable: list[str] = []
    rows = list_pending(agent.graph, agent.checkpointer, unreadable)
    assert [r.thread_id for r in rows] == ["a"]
    assert len(unreadable) == 1 and "thread 'b' cannot be read" in unreadable[0]


def test_a_parked_write_never_adds_a_second_write_of_one_task_and_index(
    dynamodb_url: str,
) -> None:
    """A write this saver parked (``put_writes`` before its checkpoint was stored) and another
    saver's stored write for the same ``(task, index)``: the stored one stays the only one
    (first write wins, as on the other savers; the audit trail's slot claim relies on it)."""
    a, b, reader = (resolve_checkpointer(dynamodb_url) for _ in range(3))
    assert a is not None and b is not None and reader is not None
    base: Any = {"configurable": {"thread_id": "t", "checkpoint_ns": "audit"}}
    a.put(base, empty_checkpoint(), {}, {})
    checkpoint = empty_checkpoint()
    slot: Any = {
        **base,
        "configurable": {**base["configurable"], "checkpoint_id": checkpoint["id"]},
    }
    b.put_writes(slot, [("claim", "b")], "task")  # not stored yet: parked
    a.put(base, checkpoint, {}, {})
    a.put_writes(slot, [("claim", "a")], "task")
    b.put(base, checkpoint, {}, {})  # b's put picks its parked writes up
    for saver in (a, b, reader):
        found = saver.get_tuple(slot)
        assert found is not None
        assert found.pending_writes == [("task", "claim", "a")]
