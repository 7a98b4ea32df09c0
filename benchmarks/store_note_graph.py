"""The agents ``python -m benchmarks.store_note`` serves: ``K`` calls of one no-op tool, one per
model turn (a scripted zero-latency model), whose tool declares ``on_crash="ask"``
(``ask_graph``: start / end marks and the store note per call) or nothing (``plain_graph``),
or declares nothing and makes the note's two store writes itself (``writes_graph``: the note
alone, without the marks)."""

from __future__ import annotations

from langchain_core.messages import BaseMessage, HumanMessage, ToolMessage
from langgraph.config import get_store

from dynavec_langgraph import create_react_agent, idempotency_key, tool
from dynavec_langgraph._names import NOTE_NS
from dynavec_langgraph.testing import ScriptedChatModel, Turn

__all__ = ["ask_graph", "plain_graph", "writes_graph"]


def _policy(messages: list[BaseMessage]) -> Turn:
    """``"steps K"``: K calls of ``step``, one per turn, then an answer."""
    goal = next(m for m in reversed(messages) if isinstance(m, HumanMessage))
    done = sum(1 for m in messages[messages.index(goal) :] if isinstance(m, ToolMessage))
    if done < int(str(goal.content).split()[1]):
        return [{"name": "step", "args": {"n": done}}]
    return f"done after {done}"


def _agent(kind: str) -> object:
    if kind == "ask":

        @tool(on_crash="ask")
        def step(n: int) -> str:
            """One step."""
            return f"step {n}"

    elif kind == "writes":

        @tool
        async def step(n: int) -> str:
            """One step, writing and deleting a note of the size the package writes (as the
            async tool node a server runs does: ``aput`` / ``adelete``)."""
            store, key = get_store(), idempotency_key()
            note = {"call": {"id": "c", "name": "step", "args": {"n": n}}, "key": key,
                    "checkpoint_ns": "", "checkpoint_id": "x" * 36, "attempt": 0}  # fmt: skip
            await store.aput((NOTE_NS, "bench"), key, note)
            await store.adelete((NOTE_NS, "bench"), key)
            return f"step {n}"

    else:

        @tool
        def step(n: int) -> str:
            """One step."""
            return f"step {n}"

    return create_react_agent(
        ScriptedChatModel(policy=_policy),
        [step],
        system_prompt=None,
        name=f"{kind}_steps",
        max_steps=1000,
    )


ask_graph = _agent("ask")
plain_graph = _agent("plain")
writes_graph = _agent("writes")
