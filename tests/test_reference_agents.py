"""One model turn of three calls, the second pausing, through this agent and the two LangGraph
agents it is compared with (the README's table): how often each call runs, and when.

The batch is ``lookup`` (finishes), ``pay`` (asks for approval), ``notify`` (finishes). A
counter per call counts the runs that reached the end of the tool.
"""

from __future__ import annotations

import warnings
from collections import Counter
from collections.abc import Callable
from typing import Any, Literal

import pytest
from langchain.agents import create_agent
from langchain_core.tools import tool as lc_tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command, interrupt

from dynavec_langgraph import create_react_agent
from dynavec_langgraph.testing import ScriptedChatModel

RUNS: Counter[str] = Counter()


@lc_tool
def lookup(who: str) -> str:
    """Look someone up."""
    RUNS["lookup"] += 1
    return f"{who} found"


@lc_tool
def pay(who: str) -> str:
    """Pay someone, once a person approved it."""
    decision = interrupt({"pay": who})
    RUNS["pay"] += 1
    return f"paid {who}" if decision == "approved" else "not paid"


@lc_tool
def notify(who: str) -> str:
    """Tell someone."""
    RUNS["notify"] += 1
    return f"told {who}"


def _model() -> ScriptedChatModel:
    batch = [{"name": n, "args": {"who": "ann"}} for n in ("lookup", "pay", "notify")]
    return ScriptedChatModel(turns=[batch, "done"])


def _prebuilt(version: Literal["v1", "v2"]) -> Callable[[], Any]:
    def build() -> Any:
        from langgraph.prebuilt import create_react_agent as prebuilt

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the prebuilt agent is deprecated
            return prebuilt(
                _model(), [lookup, pay, notify], checkpointer=InMemorySaver(), version=version
            )

    return build


BUILDERS: dict[str, Callable[[], Any]] = {
    "dynavec_langgraph": lambda: create_react_agent(
        _model(), [lookup, pay, notify], checkpointer=InMemorySaver()
    ),
    "create_agent": lambda: create_agent(
        _model(), [lookup, pay, notify], checkpointer=InMemorySaver()
    ),
    "prebuilt_v1": _prebuilt("v1"),
    "prebuilt_v2": _prebuilt("v2"),
}
# (runs while paused, runs after the resume) of lookup / pay / notify
EXPECTED = {
    "dynavec_langgraph": ({"lookup": 1}, {"lookup": 1, "pay": 1, "notify": 1}),
    "create_agent": ({"lookup": 1, "notify": 1}, {"lookup": 1, "pay": 1, "notify": 1}),
    "prebuilt_v1": ({"lookup": 1, "notify": 1}, {"lookup": 2, "pay": 1, "notify": 2}),
    "prebuilt_v2": ({"lookup": 1, "notify": 1}, {"lookup": 1, "pay": 1, "notify": 1}),
}


@pytest.mark.parametrize("system", sorted(BUILDERS))
def test_a_paused_batch_in_each_agent(system: str) -> None:
    RUNS.clear()
    graph = BUILDERS[system]()
    cfg = {"configurable": {"thread_id": "t"}}

    out = graph.invoke({"messages": [("user", "pay ann")]}, cfg)
    assert out["__interrupt__"]
    paused = dict(RUNS)
    graph.invoke(Command(resume="approved"), cfg)
    after = dict(RUNS)

    print(f"\n{system}: while paused {paused}, after the resume {after}")
    assert (paused, after) == EXPECTED[system]
