"""One delegating base under every saver wrapper of the package: ``HistoryCache``,
``ScratchThreads`` and ``ConnectionSaver`` pass every call to the saver they wrap through
``DelegatingSaver`` and write only what they add."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver, empty_checkpoint
from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.memory import InMemorySaver

from dynavec_langgraph._graph.messages import ConversationChannel
from dynavec_langgraph._persistence.base import DelegatingSaver
from dynavec_langgraph._persistence.history import HistoryCache
from dynavec_langgraph._persistence.locks import WrapsSaver
from dynavec_langgraph._persistence.scratch import ScratchThreads
from dynavec_langgraph.savers import ConnectionSaver, resolve_checkpointer

FORWARDED = (
    "list",
    "alist",
    "put",
    "aput",
    "put_writes",
    "aput_writes",
    "get_next_version",
    "with_allowlist",
)
"""Methods the base passes on that no wrapper changes (but for what it adds, ``ADDS``)."""
ADDS: dict[type[Any], set[str]] = {HistoryCache: {"put", "aput"}}
"""What a wrapper adds to a forwarded method: ``HistoryCache`` knows the checkpoints whose
save returned (``StoredCheckpoints``: a tool call's wait reads none)."""


def test_every_wrapper_stands_on_the_delegating_base() -> None:
    for wrapper in (HistoryCache, ScratchThreads, ConnectionSaver):
        assert issubclass(wrapper, DelegatingSaver), wrapper
        own = [m for m in FORWARDED if m in vars(wrapper)]
        assert own == sorted(ADDS.get(wrapper, ()), key=FORWARDED.index), wrapper
    assert "aget_tuple" in vars(ConnectionSaver.__mro__[1])  # the worker-thread twins first


def test_the_wrappers_declare_the_saver_they_wrap(tmp_path: Path) -> None:
    inner = InMemorySaver()
    opened = resolve_checkpointer(f"sqlite:///{tmp_path}/w.db")
    assert isinstance(opened, ConnectionSaver)
    with opened:
        cache = HistoryCache(opened, {"messages": ConversationChannel()})
        for saver, wrapped in (
            (HistoryCache(inner, {}), inner),
            (ScratchThreads(inner), inner),
            (cache, opened),
            (opened, opened.inner),
        ):
            assert isinstance(saver, WrapsSaver) and saver.wrapped_saver is wrapped


def test_scratch_threads_route_each_call_by_thread() -> None:
    inner = InMemorySaver()
    saver = ScratchThreads(inner)
    saver.mark("scratch")
    for thread in ("scratch", "kept"):
        config: Any = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
        checkpoint = empty_checkpoint()
        saved = saver.put(config, checkpoint, {"step": 0}, {})
        saver.put_writes(saved, [("x", 1)], "task")
        assert asyncio.run(saver.aget_tuple(saved)) is not None
    assert [t.config["configurable"]["thread_id"] for t in inner.list(None)] == ["kept"]
    assert [t.config["configurable"]["thread_id"] for t in saver.list(None)] == ["kept"]
    assert len(list(saver.list({"configurable": {"thread_id": "scratch"}}))) == 1
    saver.delete_thread("scratch")
    assert saver.scratch.get_tuple({"configurable": {"thread_id": "scratch"}}) is None
    assert inner.get_tuple({"configurable": {"thread_id": "kept"}}) is not None


class _AllScratch(ScratchThreads):
    """Every thread stays in the process (the suite's thread ids are not known up front)."""

    def is_scratch(self, thread_id: str) -> bool:
        return True


async def _conforms(name: str, make: Any) -> None:
    @checkpointer_test(name=name)
    async def factory() -> AsyncIterator[BaseCheckpointSaver[Any]]:
        yield make()

    report = await validate(factory)
    failures = {n: r.failures for n, r in report.results.items() if r.failures}
    assert report.passed_all_base(), failures


async def test_history_cache_over_a_saver_conforms() -> None:
    await _conforms("HistoryCache", lambda: HistoryCache(InMemorySaver(), {}))


async def test_scratch_threads_conform_for_kept_and_scratch_threads() -> None:
    await _conforms("ScratchThreads", lambda: ScratchThreads(InMemorySaver()))
    made: list[ScratchThreads] = []

    def everything_scratch() -> ScratchThreads:
        made.append(_AllScratch(InMemorySaver()))
        return made[-1]

    await _conforms("ScratchThreads (every thread scratch)", everything_scratch)
    assert any(list(s.scratch.list(None)) for s in made)  # the suite's threads stayed here
    assert all(list(s.inner.list(None)) == [] for s in made)  # none reached the user's saver


def test_the_built_twins_show_the_signatures_langgraph_reads(tmp_path: Path) -> None:
    """The methods ``_persistence.base`` builds (its tables, ``twins``) keep the parameters
    of ``BaseCheckpointSaver``'s: LangGraph passes ``task_path`` only to a ``put_writes`` /
    ``aput_writes`` whose signature has it; the async ones stay coroutine functions."""
    opened = resolve_checkpointer(f"sqlite:///{tmp_path}/s.db")
    assert isinstance(opened, ConnectionSaver)
    with opened:
        savers = [
            DelegatingSaver(InMemorySaver()),
            ScratchThreads(InMemorySaver()),
            HistoryCache(InMemorySaver(), {"messages": ConversationChannel()}),
            opened,
        ]
        for saver in savers:
            for name in ("put_writes", "aput_writes"):
                assert "task_path" in inspect.signature(getattr(saver, name)).parameters
            for name in ("aget_tuple", "aput", "aput_writes", "aget_delta_channel_history"):
                assert inspect.iscoroutinefunction(getattr(saver, name)), (saver, name)
            assert list(inspect.signature(saver.put).parameters) == [
                "config",
                "checkpoint",
                "metadata",
                "new_versions",
            ]


class _PutFails(InMemorySaver):
    def put(self, *args: Any, **kwargs: Any) -> Any:
        raise OSError("disk full")

    async def aput(self, *args: Any, **kwargs: Any) -> Any:
        raise OSError("disk full")


def _put(cache: HistoryCache, twin: str, thread_id: str) -> tuple[Any, Any]:
    """``cache.put`` or ``cache.aput`` of a new checkpoint; its address (an error raised)."""
    checkpoint = empty_checkpoint()
    config: Any = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
    at: Any = {"configurable": {**config["configurable"], "checkpoint_id": checkpoint["id"]}}
    try:
        done = getattr(cache, twin)(config, checkpoint, {"step": 0}, {})
        return at, asyncio.run(done) if twin == "aput" else done
    except OSError as error:
        return at, error


def test_a_put_that_fails_raises_through_both_twins_and_is_not_known_stored() -> None:
    """A plan's ``with`` around a call sees the call's error (``HistoryCache.put`` /
    ``aput``: a checkpoint whose save raised is not known stored), which reaches the caller."""
    for twin in ("put", "aput"):
        failing = HistoryCache(_PutFails(), {})
        at, error = _put(failing, twin, "t")
        assert isinstance(error, OSError) and str(error) == "disk full"
        assert failing.stored.wait(at, 0) is False
        working = HistoryCache(InMemorySaver(), {})
        at, saved = _put(working, twin, "t")
        assert saved == at and working.stored.wait(at, 0) is True
