"""dynavec's ``Planner``: a model splits a goal into a :class:`Plan` of :class:`PlanStep` s,
and an agent carries the steps out one by one on one shared state.

The model is asked for a JSON list of steps; a numbered or bulleted list is read too. Any
model the agent accepts works (a dynavec ``ChatModel``, a LangChain chat model). A step whose
run pauses at an ``interrupt()`` stops :meth:`Planner.execute` with the paused result;
:meth:`Planner.resume` answers it and carries on. See ``docs/compatibility.md``.

Example:
    >>> from dynavec_langgraph import ReActAgent
    >>> from dynavec_langgraph.testing import ScriptedChatModel
    >>> planner = Planner(ScriptedChatModel(turns=['["check balance", "pay rent"]']))
    >>> plan = planner.plan("pay the rent")
    >>> [s.description for s in plan.steps]
    ['check balance', 'pay rent']
    >>> agent = ReActAgent(ScriptedChatModel(turns=["balance 1000", "paid"]))
    >>> planner.execute(plan, agent).output, plan.is_complete
    ('paid', True)
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from langchain_core.messages import HumanMessage, SystemMessage
from langchain_core.runnables import Runnable

from dynavec_langgraph._errors import NothingToResumeError
from dynavec_langgraph.records import AgentResult, AgentState, Message
from dynavec_langgraph.supervisor import AgentLike

__all__ = ["DEFAULT_PLANNER_PROMPT", "Plan", "PlanStep", "Planner", "parse_plan"]

DEFAULT_PLANNER_PROMPT = (
    "Split the user's goal into a short list of concrete steps that an assistant with tools "
    "can carry out one after the other. Answer with a JSON list of strings and nothing else."
)
"""The planner's system prompt when none is given."""

StepStatus = Literal["pending", "interrupted", "done", "failed"]


@dataclass
class PlanStep:
    """One step of a plan, with what happened when it ran."""

    description: str
    index: int = 0
    status: StepStatus = "pending"
    result: AgentResult | None = None

    @property
    def output(self) -> str | None:
        """The agent's answer for this step, once it ran."""
        return self.result.output if self.result is not None else None


@dataclass
class Plan:
    """A goal and its steps, in order."""

    goal: str
    steps: list[PlanStep] = field(default_factory=list)

    @property
    def is_complete(self) -> bool:
        """Every step is done."""
        return all(s.status == "done" for s in self.steps)

    def next_step(self) -> PlanStep | None:
        """The first step not done yet."""
        return next((s for s in self.steps if s.status != "done"), None)


_ITEM = re.compile(r"^\s*(?:\d+[.)]|[-*•])\s+(.*\S)\s*$")


def parse_plan(goal: str, text: str) -> Plan:
    """A plan from the model's answer: a JSON list (of strings or ``{"description": ...}``),
    else the numbered or bulleted lines, else one step per non-empty line."""
    items: list[str] = []
    start, end = text.find("["), text.rfind("]")
    if 0 <= start < end:
        try:
            parsed = json.loads(text[start : end + 1])
        except ValueError:
            parsed = None
        if isinstance(parsed, list):
            for item in parsed:
                if isinstance(item, dict):
                    item = item.get("description") or item.get("step") or json.dumps(item)
                items.append(str(item).strip())
    if not items:
        lines = text.splitlines()
        items = [m.group(1) for m in map(_ITEM.match, lines) if m] or [
            line.strip() for line in lines if line.strip()
        ]
    steps = [PlanStep(d, i) for i, d in enumerate(d for d in items if d)]
    return Plan(goal, steps or [PlanStep(goal, 0)])


def _answer_text(model: Any, goal: str, system_prompt: str, kwargs: dict[str, Any]) -> str:
    if not isinstance(model, Runnable):  # a dynavec model: invoke(messages) -> .message
        result = model.invoke([Message("system", system_prompt), Message("user", goal)], **kwargs)
        message = getattr(result, "message", result)
        content = message.get("content") if isinstance(message, dict) else message.content
        return str(content or "")
    reply = model.invoke([SystemMessage(system_prompt), HumanMessage(goal)], **kwargs)
    return str(getattr(reply, "text", None) or getattr(reply, "content", reply))


class Planner:
    """Plans with ``model`` and executes plans with an agent.

    Args:
        model: a dynavec ``ChatModel`` or a LangChain chat model.
        system_prompt: the planning instruction (:data:`DEFAULT_PLANNER_PROMPT`).
    """

    def __init__(self, model: Any, *, system_prompt: str = DEFAULT_PLANNER_PROMPT) -> None:
        self.model = model
        self.system_prompt = system_prompt

    def plan(self, goal: str, **model_kwargs: Any) -> Plan:
        """Ask the model for the steps of ``goal``."""
        return parse_plan(goal, _answer_text(self.model, goal, self.system_prompt, model_kwargs))

    def _goal_of(self, plan: Plan, step: PlanStep) -> str:
        done = [f"- {s.description}: {s.output}" for s in plan.steps if s.status == "done"]
        context = "\nDone so far:\n" + "\n".join(done) if done else ""
        return f"Goal: {plan.goal}{context}\nNow do step {step.index + 1}: {step.description}"

    def execute(
        self,
        plan: Plan,
        agent: AgentLike,
        *,
        state: AgentState | None = None,
        thread_id: str | None = None,
        **kwargs: Any,
    ) -> AgentResult:
        """Run the steps not done yet, in order, with ``agent`` on one shared ``state``.

        Returns the last step's result, or the paused result of a step that paused (its
        status is then ``"interrupted"``; answer it with :meth:`resume`). A step that runs
        out of steps is ``"failed"`` and stops the plan.
        """
        shared = state if state is not None else AgentState()
        ran = [s.result for s in plan.steps if s.result is not None and s.status == "done"]
        result = ran[-1] if ran else AgentResult("", finished=plan.is_complete)
        while (step := plan.next_step()) is not None:
            if step.status == "interrupted":
                return step.result or result
            tid = f"{thread_id}/step_{step.index + 1}" if thread_id is not None else None
            result = agent.run(self._goal_of(plan, step), thread_id=tid, state=shared, **kwargs)
            if not self._record(step, result):
                return result
        return result

    def resume(
        self,
        plan: Plan,
        agent: AgentLike,
        human_decision: Any,
        *,
        state: AgentState | None = None,
        thread_id: str | None = None,
        **kwargs: Any,
    ) -> AgentResult:
        """Answer the paused step of ``plan``, then execute the rest.

        Raises:
            NothingToResumeError: no step of the plan is paused.
        """
        step = next((s for s in plan.steps if s.status == "interrupted"), None)
        if step is None or step.result is None or step.result.interrupt_payload is None:
            raise NothingToResumeError("no step of this plan is paused: call execute()")
        shared = state if state is not None else AgentState()
        if thread_id is not None:
            tid = f"{thread_id}/step_{step.index + 1}"
            result = agent.resume(
                thread_id=tid, human_decision=human_decision, state=shared, **kwargs
            )
        else:
            saved = step.result.interrupt_payload["messages"]
            result = agent.resume(saved, human_decision, state=shared, **kwargs)
        if not self._record(step, result):
            return result
        return self.execute(plan, agent, state=shared, thread_id=thread_id, **kwargs)

    @staticmethod
    def _record(step: PlanStep, result: AgentResult) -> bool:
        """Store the step's result; whether the plan goes on."""
        step.result = result
        if result.termination_reason == "interrupted":
            step.status = "interrupted"
            return False
        step.status = "done" if result.finished else "failed"
        return result.finished
