"""The tamper-evident audit trail (docs/audit-and-notifications.md, "A tamper-evident trail"):
entries chained per thread, written by real agent runs on a SQLite file, the PostgreSQL server
of tests/pg.py and DynamoDB (moto, tests/dynamo.py), then changed directly in the database
(SQL ``UPDATE`` / ``DELETE`` / ``INSERT``, boto3 ``update_item``); ``verify`` and
``dynavec-langgraph audit verify`` must name each changed entry and what was done to it.
Concurrent writers on one thread (threads with their own connections, and processes) must
never fork the chain."""

from __future__ import annotations

import base64
import hashlib
import json
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from decimal import Decimal
from pathlib import Path
from typing import Any, Protocol

import psycopg
import pytest
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.store.memory import InMemoryStore

from dynavec_langgraph import InvalidDecisionError, ReActAgent
from dynavec_langgraph.audit import (
    GENESIS,
    TrailReport,
    audit_trail,
    entry_hash,
    record,
    verify,
)
from dynavec_langgraph.savers import resolve_checkpointer
from tests.children.audit_child import make_agent
from tests.children.scenario import ROOT, open_saver
from tests.children.warm import run as warm_run

TIMEOUT = 120
AUDIT_NS = "dynavec_audit"  # the documented namespace of the trail
ENTRY = "dynavec_entry"  # the documented channel of a chained entry's pending write


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "dynavec_langgraph._cli", *args]
    return warm_run(argv, cwd=ROOT, timeout=TIMEOUT)


def _decide(agent: ReActAgent, thread: str) -> None:
    """A real run: the pause (1), a refused decision (2) and its re-ask (3), ana's approval
    (4)."""
    assert agent.run("pay the rent", thread_id=thread).termination_reason == "interrupted"
    with pytest.raises(InvalidDecisionError):
        agent.resume(thread_id=thread, human_decision={"decisions": [{"type": "bogus"}]})
    decision = {"decisions": [{"type": "approve", "approver": "ana"}]}
    assert agent.resume(thread_id=thread, human_decision=decision).output == (
        "Done: Transferred 100."
    )


def _problems(report: TrailReport) -> dict[str, list[tuple[str, int | None, str | None]]]:
    return {t.thread_id: [(p.kind, p.seq, p.event_id) for p in t.problems] for t in report.threads}


def _canonical(entry: dict[str, Any]) -> bytes:
    return json.dumps(entry, sort_keys=True, separators=(",", ":")).encode()


# --- the chain as written --------------------------------------------------------------------


def test_every_entry_of_a_run_is_chained_and_names_how_its_actor_was_identified() -> None:
    saver = InMemorySaver()
    _decide(make_agent(saver, None, fail_after=False), "t1")
    trail = audit_trail(saver, "t1")
    assert [(e.seq, e.kind, e.who, e.authenticated_by) for e in trail] == [
        (1, "paused", None, None),
        (2, "refused", None, None),
        (3, "reasked", None, None),
        (4, "decision", "ana", "explicit"),
    ]
    assert [e.prev_hash for e in trail] == [GENESIS, *(e.hash for e in trail[:-1])]
    for e in trail:
        body = {k: v for k, v in e.as_dict().items() if k != "hash"}
        # the documented encoding: sorted keys, no spaces, ASCII, UTF-8, SHA-256
        assert e.hash == hashlib.sha256(_canonical(body)).hexdigest() == entry_hash(body)
    report = verify(saver)
    assert report.ok and _problems(report) == {"t1": []}
    [t1] = report.threads
    assert (t1.chained, t1.unchained, t1.head_seq, t1.head_hash) == (4, 0, 4, trail[-1].hash)


def test_the_hash_covers_who_and_how_they_were_identified() -> None:
    entry = record(InMemorySaver(), "t", "decision", outcome="ok", surface="cli", who="ana")
    body = entry.as_dict()
    assert entry_hash(body) == entry.hash
    for field, value in (("who", "eve"), ("authenticated_by", "server"), ("seq", 2)):
        assert entry_hash({**body, field: value}) != entry.hash, field
    with pytest.raises(ValueError, match="authenticated_by='password'"):
        record(InMemorySaver(), "t", "x", outcome="x", surface="cli", authenticated_by="password")
    nobody = record(InMemorySaver(), "t", "expired", outcome="x", surface="sweeper")
    assert nobody.authenticated_by is None and nobody.who is None


def test_entries_written_before_the_chain_are_unchained_not_tampered(tmp_path: Path) -> None:
    """A trail an earlier version wrote (each entry in a checkpoint's metadata, no hash) is
    read first and reported as unchained; one of that form written after the chain began is
    inserted."""
    saver = SqliteSaver(sqlite3.connect(tmp_path / "a.db", check_same_thread=False))

    def old_entry(eid: str, at: str) -> None:  # what the package wrote before the chain
        entry = {"event_id": eid, "thread_id": "t", "kind": "paused", "at": at}
        entry |= {"surface": "api", "outcome": "waiting"}
        metadata = {"source": "update", "step": -1, "parents": {}, "dynavec_event_id": eid}
        metadata[ENTRY] = json.dumps(entry)
        config = {"configurable": {"thread_id": "t", "checkpoint_ns": AUDIT_NS}}
        saver.put(config, empty_checkpoint(), metadata, {})  # type: ignore[arg-type]

    old_entry("old-1", "2020-01-01T00:00:00+00:00")
    old_entry("old-2", "2020-01-02T00:00:00+00:00")
    record(saver, "t", "expired", outcome="rejected", surface="sweeper", event_id="new-1")
    assert [(e.event_id, e.seq) for e in audit_trail(saver, "t")] == [
        ("old-1", None),
        ("old-2", None),
        ("new-1", 1),
    ]
    [trail] = verify(saver).threads
    assert (trail.ok, trail.chained, trail.unchained) == (True, 1, 2)

    old_entry("forged", "2999-01-01T00:00:00+00:00")
    [trail] = verify(saver, "t").threads
    assert [(p.kind, p.event_id) for p in trail.problems] == [("inserted", "forged")]
    assert "no hash but was written after the chain began" in trail.problems[0].detail


def test_a_writer_that_loses_its_place_appends_after_the_winner(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two savers on one file: ``b`` takes entry 2 between ``a`` reading the trail and ``a``
    claiming entry 2; ``a`` reads ``b``'s entry back and appends as entry 3."""
    db = tmp_path / "a.db"
    a = SqliteSaver(sqlite3.connect(db, check_same_thread=False))
    b = SqliteSaver(sqlite3.connect(db, check_same_thread=False))
    record(a, "t", "paused", outcome="waiting", surface="api")
    claim = a.put_writes
    first = [True]

    def b_first(*args: Any, **kwargs: Any) -> None:
        if first.pop() if first else False:
            record(b, "t", "refused", outcome="b got there first", surface="cli", who="bo")
        claim(*args, **kwargs)

    monkeypatch.setattr(a, "put_writes", b_first)
    mine = record(a, "t", "decision", outcome="accepted", surface="cli", who="ana")
    assert mine.seq == 3
    assert [(e.seq, e.who) for e in audit_trail(a, "t")] == [(1, None), (2, "bo"), (3, "ana")]
    assert verify(b).ok


def _ends(call: Callable[[], object]) -> None:
    """Run ``call`` in a thread of its own and fail, rather than hang, when it never ends."""
    raised: list[BaseException] = []

    def run() -> None:
        try:
            call()
        except BaseException as e:  # handed to the test below
            raised.append(e)

    writer = threading.Thread(target=run, daemon=True)
    writer.start()
    writer.join(TIMEOUT)
    assert not writer.is_alive(), "the writer waits for a turn its own thread holds"
    if raised:
        raise raised[0]


NESTED = 64
"""More trails than a fixed set of shared locks could keep apart (the old 32)."""


def test_appends_nested_in_each_others_claims_never_wait_for_themselves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each of 64 savers on one file records into the next one's trail while it claims its
    own slot, so 64 appends are under way at once in one thread, on 64 different trails.
    Appends to different trails must not share a turn: two of them sharing one lock made the
    thread wait for itself (1 run in 32 of the test above deadlocked)."""
    db = tmp_path / "a.db"
    savers = [SqliteSaver(sqlite3.connect(db, check_same_thread=False)) for _ in range(NESTED)]
    for k, saver in enumerate(savers[:-1]):
        claim, first = saver.put_writes, [True]

        def next_first(*args: Any, k: Any = k, claim: Any = claim, first: Any = first) -> None:
            if first.pop() if first else False:
                record(savers[k + 1], f"t{k + 1}", "paused", outcome="waiting", surface="api")
            claim(*args)

        monkeypatch.setattr(saver, "put_writes", next_first)
    _ends(lambda: record(savers[0], "t0", "paused", outcome="waiting", surface="api"))
    assert [len(audit_trail(savers[0], f"t{k}")) for k in range(NESTED)] == [1] * NESTED
    assert verify(savers[0]).ok


def test_an_append_nested_in_a_claim_of_its_own_trail_goes_after_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A saver that records into the very trail it is claiming a slot of (one saver, one
    thread id): the inner entry takes the slot, the outer one reads it back and appends after
    it, as after another writer (it waited for its own turn before)."""
    a = SqliteSaver(sqlite3.connect(tmp_path / "a.db", check_same_thread=False))
    record(a, "t", "paused", outcome="waiting", surface="api")
    claim, first = a.put_writes, [True]

    def same_first(*args: Any, **kwargs: Any) -> None:
        if first.pop() if first else False:
            record(a, "t", "refused", outcome="bo got there first", surface="cli", who="bo")
        claim(*args, **kwargs)

    monkeypatch.setattr(a, "put_writes", same_first)
    _ends(lambda: record(a, "t", "decision", outcome="accepted", surface="cli", who="ana"))
    assert [(e.seq, e.who) for e in audit_trail(a, "t")] == [(1, None), (2, "bo"), (3, "ana")]
    assert verify(a).ok


class RivalStore(InMemoryStore):
    """A store where ``bo``'s entry lands right before ``ana``'s first item is put."""

    rival = True

    def put(  # passes everything on
        self, namespace: tuple[str, ...], key: str, value: Mapping[str, Any], *args: Any, **kw: Any
    ) -> None:
        if value.get("who") == "ana" and self.rival:
            self.rival = False
            record(self, "t", "refused", outcome="b", surface="cli", who="bo")
        super().put(namespace, key, value, *args, **kw)


def test_a_store_writer_that_meets_a_rival_retries_after_it() -> None:
    """On a store (no conditional put): ``bo``'s entry lands between ``ana``'s writer reading
    the trail and putting its item; it finds the rival of its seq, withdraws and appends
    after it."""
    store = RivalStore()
    mine = record(store, "t", "decision", outcome="accepted", surface="cli", who="ana")
    assert mine.seq == 2
    assert [(e.seq, e.who) for e in audit_trail(store, "t")] == [(1, "bo"), (2, "ana")]
    assert verify(store).ok and verify(store).threads[0].chained == 2


# --- tampering, directly in the database -----------------------------------------------------


class Tamperer(Protocol):
    """Changes one thread's trail behind the package's back, as someone with write access to
    the database would."""

    def entries(self, thread: str) -> dict[int, dict[str, Any]]:
        """The thread's chained entries as stored, by ``seq``."""
        ...

    def edit(self, thread: str, seq: int, change: Callable[[dict[str, Any]], None]) -> None: ...

    def delete(self, thread: str, seq: int) -> None: ...

    def swap(self, thread: str, a: int, b: int) -> None:
        """Entry ``a`` goes to ``b``'s place and ``b`` to ``a``'s."""
        ...

    def insert(self, thread: str, seq: int, entry: dict[str, Any]) -> None:
        """A forged ``entry`` beside entry ``seq``, in its place."""
        ...


class SqlTamperer:
    """SQLite (``writes.value``) or PostgreSQL (``checkpoint_writes.blob``)."""

    def __init__(self, run: Callable[[str, tuple[Any, ...]], list[Any]], postgres: bool) -> None:
        self.run = run
        self.writes = "checkpoint_writes" if postgres else "writes"
        self.value = "blob" if postgres else "value"
        self.p = "%s" if postgres else "?"

    def _rows(self, thread: str) -> dict[int, tuple[str, dict[str, Any]]]:
        p = self.p
        rows = self.run(
            f"SELECT checkpoint_id, {self.value} FROM {self.writes} WHERE thread_id = {p} "
            f"AND checkpoint_ns = {p} AND channel = {p}",
            (thread, AUDIT_NS, ENTRY),
        )
        found = {}
        for cid, value in rows:
            entry = json.loads(bytes(value))
            found[entry["seq"]] = (str(cid), entry)
        return found

    def entries(self, thread: str) -> dict[int, dict[str, Any]]:
        return {seq: entry for seq, (_, entry) in self._rows(thread).items()}

    def edit(self, thread: str, seq: int, change: Callable[[dict[str, Any]], None]) -> None:
        cid, entry = self._rows(thread)[seq]
        change(entry)
        p = self.p
        self.run(
            f"UPDATE {self.writes} SET {self.value} = {p} WHERE thread_id = {p} AND "
            f"checkpoint_ns = {p} AND checkpoint_id = {p}",
            (_canonical(entry), thread, AUDIT_NS, cid),
        )

    def delete(self, thread: str, seq: int) -> None:
        cid, _ = self._rows(thread)[seq]
        p = self.p
        for table in (self.writes, "checkpoints"):
            self.run(
                f"DELETE FROM {table} WHERE thread_id = {p} AND checkpoint_ns = {p} AND "
                f"checkpoint_id = {p}",
                (thread, AUDIT_NS, cid),
            )

    def swap(self, thread: str, a: int, b: int) -> None:
        rows = self._rows(thread)
        p = self.p
        move = (
            f"UPDATE {self.writes} SET checkpoint_id = {p} WHERE thread_id = {p} AND "
            f"checkpoint_ns = {p} AND checkpoint_id = {p}"
        )
        self.run(move, ("moving", thread, AUDIT_NS, rows[a][0]))
        self.run(move, (rows[a][0], thread, AUDIT_NS, rows[b][0]))
        self.run(move, (rows[b][0], thread, AUDIT_NS, "moving"))

    def insert(self, thread: str, seq: int, entry: dict[str, Any]) -> None:
        cid, _ = self._rows(thread)[seq]
        p = self.p
        self.run(
            f"INSERT INTO {self.writes} (thread_id, checkpoint_ns, checkpoint_id, task_id, "
            f"task_path, idx, channel, type, {self.value}) VALUES ({p}, {p}, {p}, {p}, '', 1, "
            f"{p}, 'bytes', {p})",
            (thread, AUDIT_NS, cid, "dynavec_audit", ENTRY, _canonical(entry)),
        )


class DynamoTamperer:
    """DynamoDB through boto3: an audit entry is a LangGraph checkpoint kept in a record's
    ``metadata.langgraph.entries`` (docs/compatibility.md), its pending write base64-encoded
    bytes."""

    def __init__(self, table: Any) -> None:
        self.table = table

    def _items(self, thread: str) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        kwargs: dict[str, Any] = {}
        while True:
            page = self.table.scan(**kwargs)
            items += [
                i
                for i in page["Items"]
                if i.get("type") == "checkpoint" and i.get("thread_id") == thread
            ]
            if "LastEvaluatedKey" not in page:
                return items
            kwargs = {"ExclusiveStartKey": page["LastEvaluatedKey"]}

    def _slots(
        self, thread: str
    ) -> Iterator[tuple[dict[str, Any], dict[str, Any], dict[str, Any]]]:
        """(item, LangGraph entry, the write of the chained entry) of every audit entry."""
        for item in self._items(thread):
            for kept in item["metadata"]["langgraph"].get("entries", []):
                if kept["checkpoint_ns"] != AUDIT_NS:
                    continue
                for write in kept["writes"]:
                    if write["channel"] == ENTRY:
                        yield item, kept, write

    @staticmethod
    def _decode(write: dict[str, Any]) -> dict[str, Any]:
        kind, data = write["value"]
        assert kind == "bytes"
        return dict(json.loads(base64.b64decode(data)))

    def _save(self, item: dict[str, Any]) -> None:
        self.table.update_item(
            Key={"pk": item["pk"]},
            UpdateExpression="SET metadata = :m",
            ExpressionAttributeValues={":m": item["metadata"]},
        )

    def _find(self, thread: str, seq: int) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        return next(s for s in self._slots(thread) if self._decode(s[2])["seq"] == seq)

    def entries(self, thread: str) -> dict[int, dict[str, Any]]:
        return {e["seq"]: e for e in (self._decode(w) for _, _, w in self._slots(thread))}

    def edit(self, thread: str, seq: int, change: Callable[[dict[str, Any]], None]) -> None:
        item, _, write = self._find(thread, seq)
        entry = self._decode(write)
        change(entry)
        write["value"] = ["bytes", base64.b64encode(_canonical(entry)).decode()]
        self._save(item)

    def delete(self, thread: str, seq: int) -> None:
        item, kept, _ = self._find(thread, seq)
        item["metadata"]["langgraph"]["entries"].remove(kept)
        self._save(item)

    def swap(self, thread: str, a: int, b: int) -> None:
        slots = {self._decode(w)["seq"]: (item, kept) for item, kept, w in self._slots(thread)}
        (item_a, kept_a), (item_b, kept_b) = slots[a], slots[b]  # one scan: one copy of an item
        kept_a["checkpoint_id"], kept_b["checkpoint_id"] = (
            kept_b["checkpoint_id"],
            kept_a["checkpoint_id"],
        )
        self._save(item_a)
        if item_b is not item_a:
            self._save(item_b)

    def insert(self, thread: str, seq: int, entry: dict[str, Any]) -> None:
        item, kept, write = self._find(thread, seq)
        forged = {**write, "idx": Decimal(1)}
        forged["value"] = ["bytes", base64.b64encode(_canonical(entry)).decode()]
        kept["writes"].append(forged)
        self._save(item)


@contextmanager
def _storage(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[tuple[str, Tamperer]]:
    """The ``--db`` of a fresh database of ``kind`` and a tamperer of it."""
    if kind == "sqlite":
        db = str(tmp_path / "trail.db")
        conn = sqlite3.connect(db, isolation_level=None)
        try:
            yield db, SqlTamperer(lambda sql, args: conn.execute(sql, args).fetchall(), False)
        finally:
            conn.close()
    elif kind == "postgres":
        db = str(request.getfixturevalue("pg_uri"))
        with psycopg.connect(db, autocommit=True) as pg:

            def run(sql: str, args: tuple[Any, ...]) -> list[Any]:
                cursor = pg.execute(sql, args)
                return list(cursor.fetchall()) if cursor.description else []

            yield db, SqlTamperer(run, True)
    else:
        import boto3

        db = str(request.getfixturevalue("dynamodb_url"))
        server = request.getfixturevalue("dynamodb_server")
        table_name = db.removeprefix("dynamodb://").split("?")[0]
        with open_saver(db):  # creates the table
            pass
        table = boto3.resource(
            "dynamodb", endpoint_url=server.endpoint_url, region_name="us-east-1"
        )
        yield db, DynamoTamperer(table.Table(table_name))


THREADS = ("intact", "edited", "deleted", "reordered", "inserted")


def _tamper(db: str, tamperer: Tamperer) -> dict[str, list[tuple[str, int | None, str | None]]]:
    """Write one real trail per thread of :data:`THREADS`, change each but ``intact`` as its
    name says, directly in the database; return the problems ``verify`` must report."""
    with open_saver(db) as saver:
        agent = make_agent(saver, None, fail_after=False)
        for thread in THREADS:
            _decide(agent, thread)
    ids = {t: {s: e["event_id"] for s, e in tamperer.entries(t).items()} for t in THREADS}
    assert all(sorted(ids[t]) == [1, 2, 3, 4] for t in THREADS), ids

    def to_eve(entry: dict[str, Any]) -> None:
        entry["who"] = "eve"

    tamperer.edit("edited", 4, to_eve)  # the approval now names eve, its hash unchanged
    tamperer.delete("deleted", 2)  # the refusal is gone
    tamperer.swap("reordered", 2, 3)  # the refusal and its re-ask trade places
    genuine = tamperer.entries("inserted")
    forged = {**genuine[2], "event_id": "forged-approval", "kind": "decision", "who": "eve"}
    forged |= {"outcome": "accepted", "decision": "approved", "authenticated_by": "explicit"}
    forged["hash"] = entry_hash(forged)  # a well-formed entry 2, linked to entry 1
    tamperer.insert("inserted", 2, forged)
    return {
        "intact": [],
        "edited": [("edited", 4, ids["edited"][4])],
        "deleted": [("deleted", 2, None)],
        "reordered": [("reordered", 2, ids["reordered"][2]), ("reordered", 3, ids["reordered"][3])],
        "inserted": [("inserted", 2, "forged-approval")],
    }


@pytest.mark.parametrize("kind", ["sqlite", "postgres", "dynamodb"])
def test_verify_names_every_entry_changed_in_the_database(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    with _storage(kind, request, tmp_path) as (db, tamperer):
        expected = _tamper(db, tamperer)
        with open_saver(db) as saver:  # a new saver: nothing read before the changes
            report = verify(saver)
            one = verify(saver, "edited")
    assert _problems(report) == expected
    assert not report.ok and [t.thread_id for t in report.threads] == sorted(THREADS)
    assert _problems(one) == {"edited": expected["edited"]}
    details = {p.thread_id: p.detail for p in report.problems}
    assert details["edited"] == "its content does not match its hash"
    assert "entry 2 of the chain is missing" in details["deleted"]
    assert "a second entry 2" in details["inserted"]
    intact = next(t for t in report.threads if t.thread_id == "intact")
    assert (intact.ok, intact.chained, intact.head_seq) == (True, 4, 4)


@pytest.mark.parametrize("kind", ["sqlite", "postgres", "dynamodb"])
def test_audit_verify_in_a_process_names_the_changed_entries(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    with _storage(kind, request, tmp_path) as (db, tamperer):
        expected = _tamper(db, tamperer)
        text = _cli("audit", "verify", "--db", db)
        as_json = _cli("audit", "verify", "--db", db, "--json")
        one = _cli("audit", "verify", "--db", db, "--thread", "intact")
        none = _cli("audit", "verify", "--db", db, "--thread", "no-such-thread")
    assert text.returncode == 1, text.stdout + text.stderr
    lines = text.stdout.splitlines()
    eid = expected["edited"][0][2]
    assert (
        f"TAMPERED thread 'edited', entry 4 (event {eid}): edited: its content does not match "
        "its hash"
    ) in lines
    assert any(line.startswith("TAMPERED thread 'deleted', entry 2: deleted: ") for line in lines)
    assert sum(line.startswith("TAMPERED thread 'reordered', ") for line in lines) == 2
    assert any(
        line.startswith("TAMPERED thread 'inserted', entry 2 (event forged-approval): inserted")
        for line in lines
    )
    assert lines[-1] == "TAMPERED: 5 problem(s) in 4 of 5 thread(s)."
    assert as_json.returncode == 1, as_json.stderr
    found = {
        t["thread_id"]: [(p["kind"], p["seq"], p["event_id"]) for p in t["problems"]]
        for t in json.loads(as_json.stdout)["threads"]
    }
    assert found == expected
    assert one.returncode == 0, one.stdout + one.stderr
    assert one.stdout.splitlines()[-1] == "OK: 1 thread(s), 4 entries chained, intact."
    assert none.returncode == 0 and "No audit trail for thread 'no-such-thread'" in none.stdout


def test_audit_verify_in_a_process_says_what_to_give(tmp_path: Path) -> None:
    missing = _cli("audit", "verify", "--db", str(tmp_path / "nothing.db"))
    assert missing.returncode == 2 and "no SQLite database at" in missing.stderr
    no_db = _cli("audit", "verify")
    assert no_db.returncode == 2 and "--db" in no_db.stderr
    bad = _cli("audit", "verify", "--db", "dynamodb://t?colour=red")
    assert bad.returncode == 2 and "unknown parameter 'colour'" in bad.stderr
    empty = tmp_path / "empty.db"
    sqlite3.connect(empty).close()
    nothing = _cli("audit", "verify", "--db", str(empty))
    assert nothing.returncode == 0 and f"No audit trail in {empty}." in nothing.stdout


# --- two writers at once ---------------------------------------------------------------------


@contextmanager
def _two_writers(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[tuple[Any, Any, Callable[[], Any]]]:
    """Two savers (or one shared saver/store) over one storage, and a fresh reader of it."""
    if kind == "memory":
        shared: Any = InMemorySaver()
        yield shared, shared, lambda: shared
    elif kind == "store":
        store = InMemoryStore()
        yield store, store, lambda: store
    elif kind == "sqlite":
        db = tmp_path / "w.db"
        conns = [sqlite3.connect(db, check_same_thread=False, timeout=60) for _ in range(3)]
        try:
            first, second, third = (SqliteSaver(c) for c in conns)
            first.setup()
            yield first, second, lambda: third
        finally:
            for c in conns:
                c.close()
    elif kind == "postgres":
        uri = str(request.getfixturevalue("pg_uri"))
        with open_saver(uri) as pg_a, open_saver(uri) as pg_b, open_saver(uri) as pg_reader:
            yield pg_a, pg_b, lambda: pg_reader
    else:
        url = str(request.getfixturevalue("dynamodb_url"))
        yield (
            resolve_checkpointer(url),
            resolve_checkpointer(url),
            lambda: resolve_checkpointer(url),
        )


@pytest.mark.parametrize("kind", ["memory", "store", "sqlite", "postgres", "dynamodb"])
def test_two_writers_on_one_thread_never_fork_the_chain(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    per_writer = 12
    with _two_writers(kind, request, tmp_path) as (a, b, reader):
        start = threading.Barrier(2)
        errors: list[BaseException] = []

        def write(name: str, saver: Any) -> None:
            try:
                start.wait()
                for n in range(per_writer):
                    record(saver, "t", "in_doubt", outcome=f"{name} {n}", surface="cli", who=name)
            except BaseException as error:  # reported below
                errors.append(error)

        workers = [threading.Thread(target=write, args=w) for w in (("a", a), ("b", b))]
        for w in workers:
            w.start()
        for w in workers:
            w.join(TIMEOUT)
        assert errors == []
        fresh = reader()
        trail = audit_trail(fresh, "t")
        report = verify(fresh, "t")
    assert report.ok, report.problems
    assert [e.seq for e in trail] == list(range(1, 2 * per_writer + 1))
    for name in ("a", "b"):  # each writer's entries, once each, in its order
        assert [e.outcome for e in trail if e.who == name] == [
            f"{name} {n}" for n in range(per_writer)
        ]


_WRITER = """
import sys
from dynavec_langgraph.audit import record
from tests.children.scenario import open_saver
with open_saver(sys.argv[1]) as saver:
    for n in range(int(sys.argv[3])):
        record(saver, "t", "in_doubt", outcome=f"{sys.argv[2]} {n}", surface="cli", who=sys.argv[2])
"""


def test_two_writer_processes_never_fork_the_chain_of_a_sqlite_file(tmp_path: Path) -> None:
    db = str(tmp_path / "w.db")
    with open_saver(db) as saver:
        saver.setup()  # type: ignore[attr-defined]
    per_writer = 15
    children = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, db, name, str(per_writer)],
            cwd=ROOT,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("a", "b")
    ]
    for child in children:
        _, err = child.communicate(timeout=TIMEOUT)
        assert child.returncode == 0, err
    with open_saver(db) as saver:
        trail = audit_trail(saver, "t")
        assert verify(saver).ok
    assert [e.seq for e in trail] == list(range(1, 2 * per_writer + 1))
    assert sorted(e.outcome for e in trail) == sorted(
        f"{name} {n}" for name in ("a", "b") for n in range(per_writer)
    )
    verified = _cli("audit", "verify", "--db", db)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert (
        verified.stdout.splitlines()[-1]
        == f"OK: 1 thread(s), {2 * per_writer} entries chained, intact."
    )


def test_an_async_saver_chains_in_the_order_entries_were_recorded(tmp_path: Path) -> None:
    import asyncio

    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    from dynavec_langgraph.audit import arecord

    db = str(tmp_path / "a.db")

    async def main() -> None:
        async with AsyncSqliteSaver.from_conn_string(db) as saver:
            agent = make_agent(saver, None, fail_after=False)
            assert (await agent.arun("pay", thread_id="t1")).termination_reason == "interrupted"
            with pytest.raises(InvalidDecisionError):
                await agent.aresume(thread_id="t1", human_decision={"decisions": [{"type": "x"}]})
            await agent.aresume(thread_id="t1", human_decision="approved")
            stored = await arecord(
                saver, "t1", "expired", outcome="none pending", surface="sweeper"
            )
            assert stored.seq == 5 and stored.hash is not None

    asyncio.run(main())
    with open_saver(db) as saver:
        trail = audit_trail(saver, "t1")
        report = verify(saver)
    assert [(e.seq, e.kind) for e in trail] == [
        (1, "paused"),
        (2, "refused"),
        (3, "reasked"),
        (4, "decision"),
        (5, "expired"),
    ]
    assert report.ok and report.threads[0].chained == 5
