"""dynavec's planner (docs/compatibility.md L1-L5): ``PlanStep(step_number, description,
tool_hint)``, ``Planner(model, system_prompt)``, ``plan``/``aplan`` with ``context=``, and the
parsing rules, with a dynavec ``ChatModel`` subclass as the model."""

from __future__ import annotations

import asyncio
import json

from dynavec_langgraph.agents import Plan, Planner, PlanStep
from dynavec_langgraph.agents.planner import DEFAULT_PLANNER_SYSTEM_PROMPT
from tests.dynavec_model import ScriptedDynavecModel


def test_l1_records() -> None:
    step = PlanStep(1, "look it up", "search")
    assert (step.step_number, step.description, step.tool_hint) == (1, "look it up", "search")
    assert PlanStep(2, "pay").tool_hint is None
    assert Plan("g").steps == [] and Plan("g").steps is not Plan("g").steps
    assert Plan("g", [step]).steps == [PlanStep(1, "look it up", "search")]


def test_l2_constructor_and_prompt() -> None:
    model = ScriptedDynavecModel(['{"steps": []}', '{"steps": []}'])
    default = Planner(model)
    assert default.model is model and default.system_prompt == DEFAULT_PLANNER_SYSTEM_PROMPT
    assert '{"steps": [{"step_number"' in DEFAULT_PLANNER_SYSTEM_PROMPT
    assert (
        "tool_hint" in DEFAULT_PLANNER_SYSTEM_PROMPT and "markdown" in DEFAULT_PLANNER_SYSTEM_PROMPT
    )
    assert Planner(model, "Plan briefly.").system_prompt == "Plan briefly."
    default.plan("g")
    Planner(model, "").plan("g")
    assert [m.role for m in model.seen[0]] == ["system", "user"]
    assert [m.role for m in model.seen[1]] == ["user"]  # "" sends no system message


def test_l3_plan_messages_context_and_kwargs() -> None:
    answer = json.dumps({"steps": [{"step_number": 1, "description": "a", "tool_hint": "t"}]})
    model = ScriptedDynavecModel([answer, answer])
    planner = Planner(model, "P")
    plan = planner.plan("pay rent", temperature=0)
    assert plan == Plan("pay rent", [PlanStep(1, "a", "t")])
    assert model.seen[0][1].content == "Goal: pay rent"
    assert model.kwargs_seen[0] == {"temperature": 0}  # no tools, no context in the kwargs
    assert model.tools_seen[0] == []
    planner.plan("pay rent", context="balance is 900")
    assert model.seen[1][1].content == "Goal: pay rent\n\nContext:\nbalance is 900"
    assert model.kwargs_seen[1] == {}


def test_l3_aplan_uses_ainvoke() -> None:
    model = ScriptedDynavecModel(['{"steps": ["one", "two"]}'])
    plan = asyncio.run(Planner(model).aplan("g", context="c", top_p=1))
    assert [s.description for s in plan.steps] == ["one", "two"]
    assert (model.ainvoke_calls, model.invoke_calls) == (1, 0)
    assert model.seen[0][-1].content == "Goal: g\n\nContext:\nc" and model.kwargs_seen[0] == {
        "top_p": 1
    }


def _steps(text: str) -> list[PlanStep]:
    return Planner(ScriptedDynavecModel([text]), "").plan("g").steps


def test_l4_parsing() -> None:
    # a fenced block, any case
    fenced = '```JSON\n{"steps": [{"description": "x", "tool_hint": "y"}]}\n```'
    assert _steps(fenced) == [PlanStep(1, "x", "y")]
    assert _steps('Here:\n```\n["a", "b"]\n```\nDone.') == [PlanStep(1, "a"), PlanStep(2, "b")]
    # values taken as given; missing keys default; non-dict, non-str items skipped but counted
    items = [{"step_number": "7", "description": 3}, 42, "third", {"tool_hint": "h"}]
    parsed = _steps(json.dumps(items))
    assert parsed == [
        PlanStep("7", 3),  # type: ignore[arg-type]
        PlanStep(3, "third"),
        PlanStep(4, "{'tool_hint': 'h'}", "h"),
    ]
    # not JSON: one step per non-blank line of the original text, fences skipped
    assert _steps("1. look\n\n   2. pay  \n```\n") == [
        PlanStep(1, "1. look"),
        PlanStep(2, "2. pay"),
    ]
    # a dict without steps, a non-list: empty plans
    assert _steps('{"plan": ["x"]}') == [] and _steps('"just a string"') == []
    assert _steps("42") == []
    assert _steps("") == []
