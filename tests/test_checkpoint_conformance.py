"""LangGraph's checkpointer conformance suite on the savers this package builds."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.conformance.initializer import RegisteredCheckpointer

from dynavec_langgraph import BaseCheckpointer, Checkpoint, DynamoDBCheckpointer, MemoryCheckpointer
from dynavec_langgraph._persistence.adapter import DynavecCheckpointSaver
from dynavec_langgraph.savers import ConnectionSaver, resolve_checkpointer
from tests.dynamo import REGION, DynamoDBServer


class ListCheckpointer(BaseCheckpointer):
    """A user's minimal dynavec checkpointer: append-only, no delete, no locking."""

    def __init__(self) -> None:
        self.records: list[Checkpoint] = []

    def save(self, checkpoint: Checkpoint) -> None:
        self.records.append(checkpoint)

    def get(self, thread_id: str, checkpoint_id: str | None = None) -> Checkpoint | None:
        mine = [r for r in self.records if r.thread_id == thread_id]
        if checkpoint_id is not None:
            mine = [r for r in mine if r.checkpoint_id == checkpoint_id]
        return mine[-1] if mine else None

    def list(self, thread_id: str, limit: int | None = None) -> list[Checkpoint]:
        mine = [r for r in self.records if r.thread_id == thread_id]
        return mine[-limit:] if limit else mine


async def _check(registered: RegisteredCheckpointer) -> None:
    report = await validate(registered)
    failures = {name: r.failures for name, r in report.results.items() if r.failures}
    assert report.passed_all_base(), failures
    assert {n for n, r in report.results.items() if r.passed} == {
        "put",
        "put_writes",
        "get_tuple",
        "list",
        "delete_thread",
    }


async def test_adapter_over_memory_checkpointer_conforms() -> None:
    @checkpointer_test(name="DynavecCheckpointSaver(MemoryCheckpointer)")
    async def factory() -> AsyncIterator[BaseCheckpointSaver[int]]:
        yield DynavecCheckpointSaver(MemoryCheckpointer())

    await _check(factory)


async def test_adapter_over_a_minimal_user_checkpointer_conforms() -> None:
    stores: list[ListCheckpointer] = []

    @checkpointer_test(name="DynavecCheckpointSaver(ListCheckpointer)")
    async def factory() -> AsyncIterator[BaseCheckpointSaver[int]]:
        stores.append(ListCheckpointer())
        yield DynavecCheckpointSaver(stores[-1])

    await _check(factory)
    # delete_thread could not delete: it wrote tombstones, which the suite saw as deletions
    assert any(r.node_id == "deleted" for s in stores for r in s.records)


async def test_sqlite_saver_from_a_string_conforms(tmp_path: Path) -> None:
    opened: list[ConnectionSaver] = []

    @checkpointer_test(name="sqlite string")
    async def factory() -> AsyncIterator[BaseCheckpointSaver[str]]:
        saver = resolve_checkpointer(f"sqlite:///{tmp_path}/conformance-{len(opened)}.db")
        assert isinstance(saver, ConnectionSaver)
        opened.append(saver)
        yield saver
        saver.close()

    await _check(factory)
    assert len(opened) == 8 and all(s.closed for s in opened)  # one per capability


async def test_postgres_saver_from_a_string_conforms(pg_uri: str) -> None:
    @checkpointer_test(name="postgres string")
    async def factory() -> AsyncIterator[BaseCheckpointSaver[str]]:
        saver = resolve_checkpointer(pg_uri)
        assert isinstance(saver, ConnectionSaver)
        yield saver
        saver.close()

    await _check(factory)


async def test_adapter_over_dynamodb_checkpointer_conforms(dynamodb_server: DynamoDBServer) -> None:
    """The LangGraph-saver view over dynavec's DynamoDB layout (a fresh table per capability)."""
    stores: list[DynamoDBCheckpointer] = []

    @checkpointer_test(name="DynavecCheckpointSaver(DynamoDBCheckpointer)")
    async def factory() -> AsyncIterator[BaseCheckpointSaver[int]]:
        stores.append(
            DynamoDBCheckpointer(
                f"conformance{uuid.uuid4().hex[:10]}",
                region_name=REGION,
                endpoint_url=dynamodb_server.endpoint_url,
            )
        )
        yield DynavecCheckpointSaver(stores[-1])

    await _check(factory)
    # what the suite left is in dynavec's layout: thread manifests listing checkpoint items
    left = [(s, t) for s in stores for t in s.threads()]
    assert left and all(s.list(t) for s, t in left)
