"""A sync/async twin pair written once: a plan, run step by step by each twin's driver.

A plan is a generator that yields each I/O step it needs, is sent the step's answer (or has
its error thrown in, so a ``with`` or ``try`` around the ``yield`` in the plan sees it) and
returns the pair's result. Each driver makes the step as its twin does (a call, or an awaited
one) and stores the answer or the error on the :class:`PlanRun`; the saver wrappers
(``_persistence/base``) and the server client (``_remote/server``) drive their plans this
way.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from typing import Generic, TypeVar

__all__ = ["PlanRun"]

S = TypeVar("S")
R = TypeVar("R")


class PlanRun(Generic[S, R]):
    """One run of a plan: iterate it for the steps; set :attr:`answer` (or :attr:`error`) for
    each before the next; then :attr:`result` is what the plan returned."""

    result: R

    def __init__(self, plan: Generator[S, object, R]) -> None:
        self._plan = plan
        self.answer: object = None
        self.error: BaseException | None = None

    def __iter__(self) -> Iterator[S]:
        while True:
            answer, error = self.answer, self.error
            self.answer, self.error = None, None
            try:
                step = self._plan.throw(error) if error is not None else self._plan.send(answer)
            except StopIteration as done:
                self.result = done.value
                return
            yield step
