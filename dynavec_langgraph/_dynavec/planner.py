"""dynavec's ``Planner``: a model splits a goal into a :class:`Plan` of :class:`PlanStep` s,
and (an extension) an agent carries the steps out one by one on one shared state.

As in dynavec, the model is asked for a bare JSON object ``{"steps": [{"step_number",
"description", "tool_hint"}]}``; a fenced block is read too, and an answer that is not JSON
gives one step per line. A model the agent accepts works (a dynavec ``ChatModel``, a
LangChain chat model). A step whose run pauses at an ``interrupt()`` stops
:meth:`Planner.execute` with the paused result; :meth:`Planner.resume` answers it and carries
on. See ``docs/compatibility.md`` (rows L1-L5).

Example:
    >>> from dynavec_langgraph import ReActAgent
    >>> from dynavec_langgraph.testing import ScriptedChatModel
    >>> answer = '{"steps": [{"step_number": 1, "description": "check balance"}, "pay rent"]}'
    >>> planner = Planner(ScriptedChatModel(turns=[answer]))
    >>> plan = planner.plan("pay the rent")
    >>> [(s.step_number, s.description) for s in plan.steps]
    [(1, 'check balance'), (2, 'pay rent')]
    >>> agent = ReActAgent(ScriptedChatModel(turns=["balance 1000", "paid"]))
    >>> planner.execute(plan, agent).output, plan.is_complete
    ('paid', True)
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import Runnable

from dynavec_langgraph._dynavec.records import AgentResult, AgentState, Message
from dynavec_langgraph._dynavec.supervisor import ResumableAgent
from dynavec_langgraph._errors import NothingToResumeError

if TYPE_CHECKING:
    from dynavec_langgraph._types import ForeignObject, PlannerModel, UserPayload


DEFAULT_PLANNER_SYSTEM_PROMPT = (
    "You are a planning assistant. Break the user's goal into a short sequence of concrete, "
    "actionable steps that an assistant with tools can carry out one after the other.\n"
    "Respond with a bare JSON object of the form "
    '{"steps": [{"step_number": 1, "description": "...", "tool_hint": "tool name or null"}]}.\n'
    "Do not add any explanation, filler text or markdown formatting."
)
"""The planner's system prompt when ``system_prompt=None`` (dynavec's JSON-object request)."""

DEFAULT_PLANNER_PROMPT = DEFAULT_PLANNER_SYSTEM_PROMPT
"""The earlier name of :data:`DEFAULT_PLANNER_SYSTEM_PROMPT`."""

StepStatus = Literal["pending", "interrupted", "done", "failed"]


@dataclass
class PlanStep:
    """One step of a plan: dynavec's ``(step_number, description, tool_hint=None)``, then what
    happened when :meth:`Planner.execute` ran it."""

    step_number: int
    description: str
    tool_hint: str | None = None
    status: StepStatus = "pending"
    result: AgentResult | None = None

    @property
    def index(self) -> int:
        """Same as ``step_number``."""
        return self.step_number

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


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.IGNORECASE | re.DOTALL)


def _line_steps(text: str) -> list[PlanStep]:
    lines = [line.strip() for line in text.splitlines()]
    kept = [line for line in lines if line and not line.startswith("```")]
    return [PlanStep(i, line) for i, line in enumerate(kept, start=1)]


def parse_plan(goal: str, text: str) -> Plan:
    r"""dynavec's parsing of the model's answer into a :class:`Plan`.

    The inside of a fenced block (or the stripped text) is read as JSON: an object gives its
    ``"steps"``, a list is used as is, each item a dict (``step_number``, ``description``,
    ``tool_hint``, taken as given) or a string; other items are skipped. Text that is not
    JSON gives one step per non-blank line.

    Example:
        >>> [(s.step_number, s.description) for s in parse_plan("g", "1. look\n2. pay").steps]
        [(1, '1. look'), (2, '2. pay')]
        >>> text = '```json\n[{"description": "pay", "tool_hint": "bank"}]\n```'
        >>> step = parse_plan("g", text).steps[0]
        >>> step.step_number, step.description, step.tool_hint
        (1, 'pay', 'bank')
    """
    fenced = _FENCE.search(text)
    candidate = fenced.group(1).strip() if fenced else text.strip()
    try:
        data = json.loads(candidate)
    except ValueError:
        return Plan(goal, _line_steps(text))
    items = data.get("steps", []) if isinstance(data, dict) else data
    if not isinstance(items, list):
        return Plan(goal, [])
    steps: list[PlanStep] = []
    for i, item in enumerate(items, start=1):
        if isinstance(item, dict):
            steps.append(
                PlanStep(
                    item.get("step_number", i),
                    item.get("description", str(item)),
                    item.get("tool_hint"),
                )
            )
        elif isinstance(item, str):
            steps.append(PlanStep(i, item))
    return Plan(goal, steps)


def planning_messages(goal: str, system_prompt: str, context: object = None) -> list[Message]:
    """The conversation a planner sends: its system prompt (if any), then ``Goal: ...`` with
    ``Context:`` appended when a truthy ``context`` is given."""
    text = f"Goal: {goal}"
    if context:
        text += f"\n\nContext:\n{context}"
    messages = [Message("system", system_prompt)] if system_prompt else []
    return [*messages, Message("user", text)]


def _langchain(messages: list[Message]) -> list[BaseMessage]:
    return [
        SystemMessage(m.content or "") if m.role == "system" else HumanMessage(m.content or "")
        for m in messages
    ]


def _reply_text(result: ForeignObject) -> str:
    """``result.message.content or ""`` of a dynavec model, or a LangChain reply's text."""
    if isinstance(result, AIMessage):
        return result.text
    message: ForeignObject = getattr(result, "message", result)
    content = message.get("content") if isinstance(message, dict) else message.content
    return str(content or "")


class Planner:
    """Plans with ``model`` (and, an extension, executes plans with an agent).

    Args:
        model: a dynavec ``ChatModel`` or a LangChain chat model.
        system_prompt: the planning instruction; ``None`` selects
            :data:`DEFAULT_PLANNER_SYSTEM_PROMPT`, ``""`` sends no system message.
    """

    def __init__(self, model: PlannerModel, system_prompt: str | None = None) -> None:
        self.model = model
        self.system_prompt = (
            DEFAULT_PLANNER_SYSTEM_PROMPT if system_prompt is None else system_prompt
        )

    def _request(self, goal: str, context: object) -> list[Message] | list[BaseMessage]:
        """The planning messages in the model's own form (LangChain's for a runnable)."""
        messages = planning_messages(goal, self.system_prompt, context)
        return _langchain(messages) if isinstance(self.model, Runnable) else messages

    def plan(self, goal: str, context: object = None, **kwargs: UserPayload) -> Plan:
        """Ask the model for the steps of ``goal`` (``model.invoke(messages, **kwargs)``)."""
        result = self.model.invoke(self._request(goal, context), **kwargs)
        return parse_plan(goal, _reply_text(result))

    async def aplan(self, goal: str, context: object = None, **kwargs: UserPayload) -> Plan:
        """Async twin of :meth:`plan` (``await model.ainvoke(messages, **kwargs)``)."""
        result = await self.model.ainvoke(self._request(goal, context), **kwargs)
        return parse_plan(goal, _reply_text(result))

    def _goal_of(self, plan: Plan, step: PlanStep) -> str:
        done = [f"- {s.description}: {s.output}" for s in plan.steps if s.status == "done"]
        context = "\nDone so far:\n" + "\n".join(done) if done else ""
        return f"Goal: {plan.goal}{context}\nNow do step {step.step_number}: {step.description}"

    def execute(
        self,
        plan: Plan,
        agent: ResumableAgent,
        *,
        state: AgentState | None = None,
        thread_id: str | None = None,
        **kwargs: UserPayload,
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
            tid = f"{thread_id}/step_{step.step_number}" if thread_id is not None else None
            result = agent.run(self._goal_of(plan, step), thread_id=tid, state=shared, **kwargs)
            if not self._record(step, result):
                return result
        return result

    def resume(
        self,
        plan: Plan,
        agent: ResumableAgent,
        human_decision: UserPayload,
        *,
        state: AgentState | None = None,
        thread_id: str | None = None,
        **kwargs: UserPayload,
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
            tid = f"{thread_id}/step_{step.step_number}"
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
