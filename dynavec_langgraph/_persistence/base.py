"""The two bases of the package's LangGraph savers, and the one core of their sync/async twins.

* :class:`DelegatingSaver`: a saver that stores through another one (``inner``): every
  method of ``BaseCheckpointSaver`` and its async twin is passed to it, or to the saver
  :meth:`~DelegatingSaver.route` picks for the call's thread. The package's wrappers
  (``HistoryCache``, ``ScratchThreads``, ``ConnectionSaver``) are its subclasses and write only
  what they add; its ``wrapped_saver`` is the locks' hook
  (:class:`~dynavec_langgraph._persistence.kinds.WrapsSaver`), so a wrapped saver is locked as
  the saver it wraps.
* :class:`ThreadedAsyncSaver`: async methods that run the sync ones in a worker thread, for
  savers whose storage is synchronous (``DynavecCheckpointSaver``, ``ConnectionSaver``).
* :func:`twins`: a sync method and its async twin from one plan (:data:`SaverPlan`), a
  generator that yields each saver call it needs (:func:`ask`) and returns the result; the
  sync twin makes the calls, the async one awaits their async twins (the way httpx builds
  ``Client`` and ``AsyncClient`` on one core). Every pair above is built this way or by a
  table, so each rule is written once.
"""

from __future__ import annotations

import asyncio
import copy
import functools
from collections.abc import (
    AsyncIterator,
    Callable,
    Collection,
    Coroutine,
    Generator,
    Iterator,
    Mapping,
)
from dataclasses import dataclass
from typing import (
    TYPE_CHECKING,
    Any,
    Concatenate,
    ParamSpec,
    Self,
    TypeAlias,
    TypeVar,
    cast,
)

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver

from dynavec_langgraph._plans import PlanRun

if TYPE_CHECKING:
    from dynavec_langgraph._types import CheckpointSaver

__all__ = ["DelegatingSaver", "SaverCall", "SaverPlan", "ThreadedAsyncSaver", "ask", "twins"]

V = TypeVar("V", int, float, str)  # as BaseCheckpointSaver's
S = TypeVar("S")
P = ParamSpec("P")
R = TypeVar("R")
T = TypeVar("T")


# --- one plan, two twins ------------------------------------------------------------------


@dataclass(frozen=True)
class SaverCall:
    """One call a plan asks for: ``name`` on ``saver`` (its async twin ``"a" + name`` in an
    async run)."""

    saver: object
    name: str
    args: tuple[object, ...]
    kwargs: Mapping[str, object]


Running: TypeAlias = Coroutine[Any, Any, R]
"""What an async twin returns (an ``async def``'s coroutine of ``R``)."""

SaverPlan: TypeAlias = Generator[SaverCall, object, R]
"""A sync/async twin pair written once: a generator that yields each :class:`SaverCall` it
needs (:func:`ask`), is sent its answer (or thrown its error), and returns the pair's result."""


def ask(
    saver: S, method: Callable[Concatenate[S, P], R], *args: P.args, **kwargs: P.kwargs
) -> SaverPlan[R]:
    """In a plan, ``yield from ask(saver, BaseCheckpointSaver.get_tuple, config)``:
    ``saver.get_tuple(config)`` in the sync twin, ``await saver.aget_tuple(config)`` in the
    async one (``method`` names the call and gives its types; ``saver``'s own one runs)."""
    answer = yield SaverCall(saver, method.__name__, args, kwargs)
    # BaseCheckpointSaver's contract: the async twin answers what the sync method does
    return cast(R, answer)


def run_plan(plan: SaverPlan[R]) -> R:
    """The sync twin's run: each call made as it is (its error thrown into the plan)."""
    run = PlanRun(plan)
    for call in run:
        try:
            run.answer = getattr(call.saver, call.name)(*call.args, **call.kwargs)
        except BaseException as error:  # raised in the plan, at its ``yield``
            run.error = error
    return run.result


async def arun_plan(plan: SaverPlan[R]) -> R:
    """The async twin's run: each call's async twin awaited (its error thrown into the plan)."""
    run = PlanRun(plan)
    for call in run:
        try:
            run.answer = await getattr(call.saver, "a" + call.name)(*call.args, **call.kwargs)
        except BaseException as error:  # raised in the plan, at its ``yield``
            run.error = error
    return run.result


def _named(
    method: Callable[..., object], name: str, like: Callable[..., object], doc: str | None = None
) -> None:
    """Name a built method ``name``, with ``like``'s signature and docstring (LangGraph reads
    the parameters of a saver's ``put_writes``: ``inspect.signature`` follows ``__wrapped__``)."""
    functools.update_wrapper(method, like)
    method.__name__ = name
    method.__qualname__ = name
    method.__doc__ = doc or like.__doc__


def twins(
    plan: Callable[Concatenate[S, P], SaverPlan[R]],
) -> tuple[Callable[Concatenate[S, P], R], Callable[Concatenate[S, P], Running[R]]]:
    """A sync method and its async twin from ``plan`` (named ``_NAME``: ``NAME`` and
    ``aNAME``), in a class body: ``get_tuple, aget_tuple = twins(_get_tuple)``."""

    def sync(self: S, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return run_plan(plan(self, *args, **kwargs))

    async def asynchronous(self: S, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return await arun_plan(plan(self, *args, **kwargs))

    name = plan.__name__.lstrip("_")
    _named(sync, name, plan)
    _named(asynchronous, "a" + name, plan)
    return sync, asynchronous


# --- the bases ------------------------------------------------------------------------------


def _in_thread(
    method: Callable[Concatenate[S, P], R],
) -> Callable[Concatenate[S, P], Running[R]]:
    """The async twin of the sync saver method ``method``: the subclass's ``method`` run in a
    worker thread."""
    name = method.__name__

    async def in_thread(self: S, /, *args: P.args, **kwargs: P.kwargs) -> R:
        sync = cast(Callable[P, R], getattr(self, name))  # the subclass's override
        return await asyncio.to_thread(sync, *args, **kwargs)

    _named(in_thread, "a" + name, method, f"Async twin of ``{name}`` (a worker thread).")
    return in_thread


def _listed_in_thread(
    method: Callable[Concatenate[S, P], Iterator[T]],
) -> Callable[Concatenate[S, P], AsyncIterator[T]]:
    """The async twin of ``list``: the subclass's ``list`` read whole in a worker thread."""

    async def listed(self: S, /, *args: P.args, **kwargs: P.kwargs) -> AsyncIterator[T]:
        sync = cast(Callable[P, Iterator[T]], getattr(self, method.__name__))
        for item in await asyncio.to_thread(lambda: [*sync(*args, **kwargs)]):
            yield item

    _named(listed, "alist", method, "Async twin of ``list`` (read whole in a worker thread).")
    return listed


class ThreadedAsyncSaver(BaseCheckpointSaver[V]):
    """A saver whose async methods run its sync methods in a worker thread.

    For savers whose storage is synchronous (a dynavec checkpointer, a sync LangGraph saver
    wrapped by :class:`~dynavec_langgraph.savers.ConnectionSaver`), so that the same agent
    serves ``invoke`` and ``ainvoke`` without blocking the event loop.
    """

    aget_tuple = _in_thread(BaseCheckpointSaver.get_tuple)
    alist = _listed_in_thread(BaseCheckpointSaver.list)
    aput = _in_thread(BaseCheckpointSaver.put)
    aput_writes = _in_thread(BaseCheckpointSaver.put_writes)
    adelete_thread = _in_thread(BaseCheckpointSaver.delete_thread)
    aget_delta_channel_history = _in_thread(BaseCheckpointSaver.get_delta_channel_history)


def _saver_of(
    wrapper: DelegatingSaver, key: str, args: tuple[object, ...], kwargs: Mapping[str, object]
) -> CheckpointSaver:
    """The saver a call of ``wrapper`` goes to: :meth:`~DelegatingSaver.route` of its
    ``config`` (``key``), or :meth:`~DelegatingSaver.route_thread` of its ``thread_id``."""
    at = args[0] if args else kwargs.get(key)
    if key == "thread_id":
        return wrapper.route_thread(str(at))
    return wrapper.route(cast("RunnableConfig | None", at))


def _routed(
    method: Callable[Concatenate[S, P], R],
) -> tuple[
    Callable[Concatenate[DelegatingSaver, P], R],
    Callable[Concatenate[DelegatingSaver, P], Running[R]],
]:
    """``method`` and its async twin passed to the saver of the call's thread: :meth:`~
    DelegatingSaver.route` of its ``config``, :meth:`~DelegatingSaver.route_thread` of its
    ``thread_id`` (``delete_thread``)."""
    name = method.__name__
    key = "thread_id" if name == "delete_thread" else "config"

    def sync(self: DelegatingSaver, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return cast(R, getattr(_saver_of(self, key, args, kwargs), name)(*args, **kwargs))

    async def asynchronous(self: DelegatingSaver, /, *args: P.args, **kwargs: P.kwargs) -> R:
        saver = _saver_of(self, key, args, kwargs)
        return cast(R, await getattr(saver, "a" + name)(*args, **kwargs))

    _named(sync, name, method)
    _named(asynchronous, "a" + name, method)
    return sync, asynchronous


def _routed_iterator(
    method: Callable[Concatenate[S, P], R],
) -> Callable[Concatenate[DelegatingSaver, P], R]:
    """``list`` / ``alist`` passed to the saver :meth:`~DelegatingSaver.route` picks."""
    name = method.__name__

    def routed(self: DelegatingSaver, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return cast(R, getattr(_saver_of(self, "config", args, kwargs), name)(*args, **kwargs))

    _named(routed, name, method)
    return routed


class DelegatingSaver(BaseCheckpointSaver[Any]):
    """A saver that stores through ``inner``: every call goes to :meth:`route`'s saver.

    Subclasses override what they add (``HistoryCache``: the conversation kept between
    loads; ``ScratchThreads``: :meth:`route` picks the in-process saver for some threads;
    ``ConnectionSaver``: the connection it closes, async methods in a worker thread).

    Args:
        inner: the saver that stores everything; its ``serde`` is this saver's.

    Example:
        >>> from langgraph.checkpoint.memory import InMemorySaver
        >>> inner = InMemorySaver()
        >>> saver = DelegatingSaver(inner)
        >>> saver.wrapped_saver is inner, saver.get_tuple({"configurable": {"thread_id": "t"}})
        (True, None)
    """

    def __init__(self, inner: CheckpointSaver) -> None:
        super().__init__(serde=inner.serde)
        self.inner = inner

    @property
    def wrapped_saver(self) -> CheckpointSaver:
        """The saver this one stores through (the locks' hook, ``kinds.WrapsSaver``)."""
        return self.inner

    def route(self, config: RunnableConfig | None) -> CheckpointSaver:
        """The saver of the thread ``config`` names (``inner``)."""
        return self.inner

    def route_thread(self, thread_id: str) -> CheckpointSaver:
        """The saver of ``thread_id`` (``inner``)."""
        return self.inner

    get_tuple, aget_tuple = _routed(BaseCheckpointSaver.get_tuple)
    list = _routed_iterator(BaseCheckpointSaver.list)
    alist = _routed_iterator(BaseCheckpointSaver.alist)
    put, aput = _routed(BaseCheckpointSaver.put)
    put_writes, aput_writes = _routed(BaseCheckpointSaver.put_writes)
    delete_thread, adelete_thread = _routed(BaseCheckpointSaver.delete_thread)
    get_delta_channel_history, aget_delta_channel_history = _routed(
        BaseCheckpointSaver.get_delta_channel_history
    )

    def get_next_version(self, current: Any, channel: None) -> Any:
        """The versions of ``inner`` (for every thread)."""
        return self.inner.get_next_version(current, channel)

    def with_allowlist(self, extra_allowlist: Collection[tuple[str, ...]]) -> Self:
        """A clone over ``inner`` with the derived allowlist (the rest shared)."""
        inner = self.inner.with_allowlist(extra_allowlist)
        if inner is self.inner:
            return self
        clone = copy.copy(self)
        clone.inner, clone.serde = inner, inner.serde
        return clone
