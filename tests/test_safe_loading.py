"""Loading checkpoints never imports or calls what a stored record names, unless it is a
standard LangChain/LangGraph type or one of this package's; decisions and interrupt payloads
are stored as plain JSON.

Each crafted record is also loaded with a permissive serializer as a control: there it really
imports, calls or runs what it names, so the record is a live exploit that ``safe_serializer``
defuses (and the test would fail if the saver ignored the serializer it was given).
"""

from __future__ import annotations

import json
import os
import pickle
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import ormsgpack
import pytest
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.serde.event_hooks import SerdeEvent, register_serde_event_listener
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.sqlite import SqliteSaver

from dynavec_langgraph import AgentState, Message
from dynavec_langgraph.savers import safe_serializer
from tests.children.scenario import Scenario, make_agent

EVIL = "tests.children.evil"
PAID = "Finished: rent: balance 500 | Transferred 100."
# LangGraph's msgpack extension codes (module, name, args...) -- the stored format
CONSTRUCTOR_SINGLE_ARG, CONSTRUCTOR_KW_ARGS, PYDANTIC_V2 = 0, 2, 5


def _cfg(thread_id: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread_id}}


def _ext(code: int, *fields: Any) -> ormsgpack.Ext:
    return ormsgpack.Ext(code, ormsgpack.packb(list(fields)))


class _Shell:
    """Pickles to a call of ``os.system``."""

    def __init__(self, command: str) -> None:
        self.command = command

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return (os.system, (self.command,))


@pytest.fixture
def db(tmp_path: Path) -> Iterator[sqlite3.Connection]:
    conn = sqlite3.connect(tmp_path / "agent.db", check_same_thread=False)
    yield conn
    conn.close()


@pytest.fixture
def serde_events() -> Iterator[list[SerdeEvent]]:
    """What LangGraph's serializer reports while loading (blocked types, ...)."""
    events: list[SerdeEvent] = []
    unregister = register_serde_event_listener(events.append)
    yield events
    unregister()


def _gadget_calls() -> int:
    module = sys.modules.get(EVIL)
    return int(module.Gadget.calls) if module is not None else 0


def _latest_row(conn: sqlite3.Connection, thread_id: str) -> tuple[str, bytes]:
    row = conn.execute(
        "SELECT checkpoint_id, checkpoint FROM checkpoints WHERE thread_id = ? "
        "ORDER BY checkpoint_id DESC LIMIT 1",
        (thread_id,),
    ).fetchone()
    return str(row[0]), bytes(row[1])


def _set_row(conn: sqlite3.Connection, checkpoint_id: str, kind: str, blob: bytes) -> None:
    conn.execute(
        "UPDATE checkpoints SET type = ?, checkpoint = ? WHERE checkpoint_id = ?",
        (kind, blob, checkpoint_id),
    )
    conn.commit()


def test_a_crafted_msgpack_record_is_neither_imported_nor_called(
    db: sqlite3.Connection,
    tmp_path: Path,
    serde_events: list[SerdeEvent],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delitem(sys.modules, EVIL, raising=False)  # as if never imported
    scenario = Scenario(tmp_path / "effects")
    agent = make_agent(scenario, SqliteSaver(db, serde=safe_serializer()))
    assert agent.run("pay the rent", thread_id="t").termination_reason == "interrupted"

    # an attacker with write access to the database plants records in the paused checkpoint
    marker = tmp_path / "pwned"
    checkpoint_id, blob = _latest_row(db, "t")
    checkpoint = safe_serializer().loads_typed(("msgpack", blob))
    checkpoint["channel_values"]["shared"] = {
        "gadget": _ext(CONSTRUCTOR_KW_ARGS, EVIL, "Gadget", {"note": "pwned"}),
        "model": _ext(PYDANTIC_V2, EVIL, "Gadget", {"note": "p"}, "model_validate_json"),
        "shell": _ext(CONSTRUCTOR_SINGLE_ARG, "os", "system", f"touch {marker}"),
    }
    kind, crafted = JsonPlusSerializer().dumps_typed(checkpoint)
    _set_row(db, checkpoint_id, kind, crafted)
    assert EVIL not in sys.modules

    # a fresh agent with the safe serializer loads the thread: data only, nothing runs
    agent = make_agent(scenario, SqliteSaver(db, serde=safe_serializer()))
    snapshot = agent.graph.get_state(_cfg("t"))
    assert snapshot.values["shared"] == {
        "gadget": {"note": "pwned"},
        "model": {"note": "p"},
        "shell": f"touch {marker}",
    }
    assert EVIL not in sys.modules  # never imported
    assert not marker.exists()  # os.system never called
    blocked = {(e["module"], e["name"]) for e in serde_events if e["kind"] == "msgpack_blocked"}
    assert blocked == {(EVIL, "Gadget"), ("os", "system")}
    # and the thread still works
    assert agent.resume(thread_id="t", human_decision="approved").output == PAID
    assert not marker.exists()

    # control: LangGraph's permissive mode runs the same records
    permissive = SqliteSaver(db, serde=JsonPlusSerializer(allowed_msgpack_modules=True))
    loaded = permissive.get_tuple(
        {"configurable": {"thread_id": "t", "checkpoint_id": checkpoint_id}}
    )
    assert loaded is not None
    assert type(loaded.checkpoint["channel_values"]["shared"]["gadget"]).__name__ == "Gadget"
    assert _gadget_calls() == 2
    assert marker.exists()


def test_crafted_json_and_pickle_records_are_refused(
    db: sqlite3.Connection, tmp_path: Path
) -> None:
    saver = SqliteSaver(db, serde=safe_serializer())
    config = saver.put(
        {"configurable": {"thread_id": "j", "checkpoint_ns": ""}}, empty_checkpoint(), {}, {}
    )
    checkpoint_id = str(config["configurable"]["checkpoint_id"])
    calls_before = _gadget_calls()

    # an old-style "json" checkpoint whose value is a constructor record
    record = {"lc": 2, "type": "constructor", "id": [*EVIL.split("."), "Gadget"], "kwargs": {}}
    stored = {**empty_checkpoint(), "id": checkpoint_id, "channel_values": {"shared": record}}
    _set_row(db, checkpoint_id, "json", json.dumps(stored).encode())
    loaded = saver.get_tuple(config)
    assert loaded is not None
    assert loaded.checkpoint["channel_values"]["shared"] == record  # plain data, not revived
    assert _gadget_calls() == calls_before
    control = SqliteSaver(db, serde=JsonPlusSerializer(allowed_json_modules=True)).get_tuple(config)
    assert control is not None
    assert type(control.checkpoint["channel_values"]["shared"]).__name__ == "Gadget"
    assert _gadget_calls() == calls_before + 1

    # a pickle: refused outright, never unpickled
    marker = tmp_path / "pickled"
    _set_row(db, checkpoint_id, "pickle", pickle.dumps(_Shell(f"touch {marker}")))
    with pytest.raises(NotImplementedError, match="pickle"):
        saver.get_tuple(config)
    assert not marker.exists()
    SqliteSaver(db, serde=JsonPlusSerializer(pickle_fallback=True)).get_tuple(config)
    assert marker.exists()  # control: unpickling it runs the command


def test_payloads_and_decisions_round_trip_as_json(
    db: sqlite3.Connection, tmp_path: Path, serde_events: list[SerdeEvent]
) -> None:
    scenario = Scenario(tmp_path / "effects")
    agent = make_agent(scenario, SqliteSaver(db, serde=safe_serializer()))
    memo = Message("user", "keep this")
    paused = agent.run("pay the rent", thread_id="t", state=AgentState({"memo": memo}))
    assert paused.interrupt_payload is not None
    assert paused.interrupt_payload["payload"] == {"amount": 100}

    # a fresh saver and agent read the pause back: the interrupt value is plain JSON
    agent = make_agent(scenario, SqliteSaver(db, serde=safe_serializer()))
    (pending,) = agent.graph.get_state(_cfg("t")).interrupts
    assert json.loads(json.dumps(pending.value)) == pending.value
    assert pending.value["node_id"] == "approve_transfer"
    assert pending.value["payload"] == {"amount": 100}
    assert pending.value["tool_call"]["name"] == "transfer"

    decision = {"approved": True, "by": "ana", "limits": [1, 2.5, None], "note": {"k": "ü"}}
    done = agent.resume(thread_id="t", human_decision=decision)
    assert done.output == f"Finished: rent: balance 500 | Not sent: {decision}"
    # the tool received the decision unchanged (a dict stays a dict, floats and None too)
    assert scenario.lines()[1] == f"transfer start {json.dumps(decision)}"
    # and it is stored as plain msgpack: readable with no extension types at all
    stored = [
        ormsgpack.unpackb(value)
        for (value,) in db.execute("SELECT value FROM writes WHERE channel = '__resume__'")
    ]
    assert stored == [[decision]]  # the task's resume values (addressed by interrupt id)

    # everything the package wrote loads under the safe serializer with nothing blocked,
    # and this package's own types come back as themselves
    history = list(agent.graph.get_state_history(_cfg("t")))
    assert len(history) > 5
    assert history[0].values["shared"] == {"memo": memo}
    assert isinstance(history[0].values["shared"]["memo"], Message)
    assert [e for e in serde_events if e["kind"] != "msgpack_unregistered_allowed"] == []
