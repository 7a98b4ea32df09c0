"""dynavec's ``Supervisor``, ``Handoff`` and ``AgentLike``, plus a pausing, handoff-driven
supervisor (:class:`HandoffSupervisor`, an extension).

dynavec's :class:`Supervisor` runs each agent once, in order, on the **same goal** and the
same :class:`~dynavec_langgraph.AgentState`, and returns one result per agent: nothing is
merged, routed or stopped early. An agent needs only ``run(goal, *, state)``.

:class:`HandoffSupervisor` gives each later agent a hand-off built from the previous answer,
stops at the first ``interrupt()`` (``interrupt_payload["agent"]`` names the agent) and
``resume(...)`` answers it and goes on. See ``docs/compatibility.md`` (rows S1-S8).

Example:
    >>> from dynavec_langgraph import ReActAgent
    >>> from dynavec_langgraph.testing import ScriptedChatModel
    >>> research = ReActAgent(ScriptedChatModel(turns=["rent is 120"]))
    >>> write = ReActAgent(ScriptedChatModel(turns=["Dear landlord: 120 is on its way."]))
    >>> [r.output for r in Supervisor([research, write]).run("pay the rent")]
    ['rent is 120', 'Dear landlord: 120 is on its way.']
    >>> shared = AgentState({"k": 1})
    >>> Handoff()(shared) is shared
    True
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final, Protocol, runtime_checkable

from dynavec_langgraph._dynavec.records import AgentResult, AgentState
from dynavec_langgraph._errors import NothingToResumeError

if TYPE_CHECKING:
    from dynavec_langgraph._types import ForeignObject, UserPayload


_MISSING: Final = object()


class AgentLike(Protocol):
    """What dynavec's :class:`Supervisor` runs: any object with ``run(goal, *, state)``.

    A plain protocol (not ``runtime_checkable``): nothing checks it.
    """

    def run(self, goal: str, *, state: AgentState) -> AgentResult:
        """Run on ``goal`` with the shared ``state``."""
        ...


class Handoff:
    """dynavec's hand-off: ``Handoff()(state)`` returns the same state object, unchanged."""

    def __call__(self, state: AgentState) -> AgentState:
        """Return ``state`` itself."""
        return state


class Supervisor:
    """dynavec's supervisor: every agent runs once, in order, on one goal and one state.

    Args:
        agents: the agents, in running order (``.agents`` is this list as given): objects
            with ``run(goal, *, state)`` (:class:`AgentLike`), or for :meth:`arun` ``arun``.

    Example:
        >>> class Note:
        ...     def run(self, goal, *, state):
        ...         state.data["seen"] = goal
        ...         return AgentResult("noted")
        >>> Supervisor([Note()]).run("x", state=AgentState())[0].output
        'noted'
    """

    def __init__(self, agents: list[ForeignObject]) -> None:
        self.agents = agents

    def run(
        self, goal: str, *, state: AgentState | None = None, **kwargs: UserPayload
    ) -> list[AgentResult]:
        """``agent.run(goal, state=state)`` for each agent, in order; one result per agent.

        An interrupted or unfinished result is included and the next agent still runs;
        exceptions propagate. ``state`` defaults to a fresh ``AgentState()``; other keyword
        arguments are forwarded only when given (extensions, docs/compatibility.md S4).
        """
        shared = state if state is not None else AgentState()
        return [agent.run(goal, state=shared, **kwargs) for agent in self.agents]

    async def arun(
        self, goal: str, *, state: AgentState | None = None, **kwargs: UserPayload
    ) -> list[AgentResult]:
        """Async twin of :meth:`run`: awaits ``agent.arun(goal, state=state)`` when the agent
        has one, else runs ``agent.run`` in a worker thread; same order, same results."""
        shared = state if state is not None else AgentState()
        results: list[AgentResult] = []
        for agent in self.agents:
            arun = getattr(agent, "arun", None)
            if callable(arun):
                results.append(await arun(goal, state=shared, **kwargs))
            else:
                results.append(await asyncio.to_thread(_run_one, agent, goal, shared, kwargs))
        return results


def _run_one(
    agent: AgentLike, goal: str, state: AgentState, kwargs: dict[str, UserPayload]
) -> AgentResult:
    return agent.run(goal, state=state, **kwargs)


@runtime_checkable
class ResumableAgent(Protocol):
    """What a :class:`HandoffSupervisor` runs: ``run`` and ``resume`` as
    :class:`~dynavec_langgraph.ReActAgent` has them (a ``HandoffSupervisor`` is one too)."""

    def run(
        self,
        goal: str,
        *,
        thread_id: str | None = None,
        state: AgentState | None = None,
        **kwargs: UserPayload,
    ) -> AgentResult:
        """Run on ``goal``."""
        ...

    def resume(
        self,
        messages: UserPayload = None,
        human_decision: UserPayload = ...,
        *,
        thread_id: str | None = None,
        state: AgentState | None = None,
        **kwargs: UserPayload,
    ) -> AgentResult:
        """Answer a pause."""
        ...


@dataclass
class HandoffRecord:
    """One agent of a :class:`HandoffSupervisor` passing the work to the next."""

    source: str
    target: str
    goal: str
    output: str


def default_handoff(goal: str, source: str, result: AgentResult) -> str:
    """The next agent's goal: the original goal plus the previous agent's answer."""
    return f"{goal}\n\nResult of {source}: {result.output}"


@dataclass
class _Paused:
    goal: str
    index: int
    thread_id: str | None
    result: AgentResult
    state: AgentState = field(default_factory=AgentState)
    results: list[tuple[str, AgentResult]] = field(default_factory=list)


class HandoffSupervisor:
    """Runs agents one after the other on one shared state, each later one on a hand-off
    built from the previous answer; stops at the first pause (an extension of dynavec).

    Args:
        agents: ``{name: agent}`` in running order, or a sequence (named ``agent_0``, ...).
        handoff: ``(goal, source_name, source_result) -> next goal``; :func:`default_handoff`.

    With ``thread_id=`` each agent runs on the thread ``"<thread_id>/<agent name>"`` (so a
    checkpointer records each agent's conversation); without it nothing is written anywhere
    and a pause is answered from its messages.
    """

    def __init__(
        self,
        agents: Mapping[str, ResumableAgent] | Sequence[ResumableAgent],
        *,
        handoff: Callable[[str, str, AgentResult], str] = default_handoff,
    ) -> None:
        named = (
            dict(agents)
            if isinstance(agents, Mapping)
            else {f"agent_{i}": a for i, a in enumerate(agents)}
        )
        if not named:
            raise ValueError("HandoffSupervisor needs at least one agent")
        for name, agent in named.items():
            if not isinstance(agent, ResumableAgent):
                raise TypeError(f"agent {name!r} has no run()/resume(): pass ReActAgent objects")
        self.agents = named
        self.handoff = handoff
        self.handoffs: list[HandoffRecord] = []
        self.results: dict[str, AgentResult] = {}
        self._paused: dict[str, _Paused] = {}

    def _thread(self, thread_id: str | None, name: str) -> str | None:
        return f"{thread_id}/{name}" if thread_id is not None else None

    def _go(
        self,
        run: _Paused,
        state: AgentState,
        first: AgentResult | None,
        kwargs: dict[str, UserPayload],
    ) -> AgentResult:
        names = list(self.agents)
        goal = run.goal
        for index in range(run.index, len(names)):
            name = names[index]
            if first is not None:
                result, first = first, None
            else:
                if run.results:
                    source, previous = run.results[-1]
                    goal = self.handoff(run.goal, source, previous)
                    self.handoffs.append(HandoffRecord(source, name, goal, previous.output))
                agent = self.agents[name]
                result = agent.run(
                    goal, thread_id=self._thread(run.thread_id, name), state=state, **kwargs
                )
            if result.termination_reason == "interrupted":
                payload = dict(result.interrupt_payload or {}, agent=name)
                result.interrupt_payload = payload
                run.index, run.result = index, result
                key = run.thread_id or str(payload.get("thread_id") or uuid.uuid4().hex)
                payload["supervisor_thread_id"] = key
                self._paused[key] = run
                return result
            run.results.append((name, result))
            self.results[name] = result
        return _combined(run.results)

    def run(
        self,
        goal: str,
        *,
        thread_id: str | None = None,
        state: AgentState | None = None,
        **kwargs: UserPayload,
    ) -> AgentResult:
        """Run every agent in order; stop at the first pause (see the class docstring)."""
        self.handoffs, self.results = [], {}
        shared = state if state is not None else AgentState()
        run = _Paused(goal, 0, thread_id, AgentResult(""), shared)
        return self._go(run, shared, None, kwargs)

    def resume(
        self,
        messages: UserPayload = None,
        human_decision: UserPayload = _MISSING,
        *,
        thread_id: str | None = None,
        state: AgentState | None = None,
        **kwargs: UserPayload,
    ) -> AgentResult:
        """Answer the pause of a supervised run, then run the agents after it.

        ``thread_id`` is the one given to :meth:`run`, or
        ``paused.interrupt_payload["supervisor_thread_id"]`` for a run without one. The shared
        state is the run's unless ``state=`` is given. ``messages`` is accepted (``AgentLike``)
        and not used: the supervisor knows the paused agent's messages.

        Raises:
            NothingToResumeError: this supervisor has no paused run with that id.
        """
        del messages
        key = thread_id or ""
        run = self._paused.pop(key, None)
        if run is None:
            raise NothingToResumeError(
                f"this supervisor has no paused run {thread_id!r}: pass the thread_id given to "
                "run() (or interrupt_payload['supervisor_thread_id'])"
            )
        name = list(self.agents)[run.index]
        agent = self.agents[name]
        shared = state if state is not None else run.state
        if human_decision is not _MISSING:
            kwargs["human_decision"] = human_decision
        try:
            if run.thread_id is not None:
                result = agent.resume(
                    thread_id=self._thread(run.thread_id, name), state=shared, **kwargs
                )
            else:
                saved = (run.result.interrupt_payload or {})["messages"]
                result = agent.resume(saved, state=shared, **kwargs)
        except Exception:
            self._paused[key] = run  # nothing was applied: still answerable
            raise
        kwargs.pop("human_decision", None)
        return self._go(run, shared, result, kwargs)


def _combined(results: list[tuple[str, AgentResult]]) -> AgentResult:
    """The last agent's answer, with every agent's steps and counts."""
    last = results[-1][1]
    steps = [s for _, r in results for s in r.steps]
    return AgentResult(
        output=last.output,
        steps=steps,
        finished=last.finished,
        termination_reason=last.termination_reason,
        total_steps=sum(r.total_steps for _, r in results),
        tool_calls_count=sum(r.tool_calls_count for _, r in results),
    )
