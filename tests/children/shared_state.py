"""A fresh process that runs or resumes an agent whose tools write the shared ``AgentState``.

Usage (from the repository root)::

    python -m tests.children.shared_state --db FILE --effects FILE run THREAD
    python -m tests.children.shared_state --db FILE --effects FILE resume THREAD DECISION

``run`` starts the thread with ``state=AgentState({"seen": []})``; the model calls ``note``
(appends ``"note a"`` to ``state.data["seen"]``) then ``approve`` (appends ``"asked b"``, pauses
at ``interrupt("approve_b", ...)``, then appends ``"approved b: <decision>"``). ``resume`` answers
the pause with DECISION (JSON) and a fresh ``AgentState()``. Both print one JSON line:
``{"termination_reason", "output", "payload", "data"}`` where ``data`` is ``state.data`` after
the call. Every tool run is appended to the effects file, so the test counts runs across processes.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, ToolMessage

from dynavec_langgraph import AgentState, AgentTool, ReActAgent, interrupt, tool
from dynavec_langgraph.testing import ScriptedChatModel, Turn


def policy(messages: list[BaseMessage]) -> Turn:
    """A user goal -> ``note`` then ``approve``; tool results -> ``"Finished: ..."``."""
    if isinstance(messages[-1], HumanMessage):
        return [{"name": "note", "args": {"item": "a"}}, {"name": "approve", "args": {"item": "b"}}]
    observations = [str(m.content) for m in messages if isinstance(m, ToolMessage)]
    return "Finished: " + " | ".join(observations)


def make_tools(effects: Path) -> list[AgentTool]:
    def record(line: str) -> None:
        with effects.open("a") as f:
            f.write(line + "\n")

    @tool
    def note(item: str, state: AgentState) -> str:
        """Note an item in the shared state."""
        record(f"note {item}")
        state.data["seen"].append(f"note {item}")
        return f"noted {item}"

    @tool
    def approve(item: str, state: AgentState) -> str:
        """Ask a person to approve an item, recording the question and the answer."""
        record(f"approve start {item}")
        state.data["seen"].append(f"asked {item}")
        decision = interrupt(f"approve_{item}", {"item": item, "seen": list(state.data["seen"])})
        record(f"approve done {item} {json.dumps(decision)}")
        state.data["seen"].append(f"approved {item}: {decision}")
        return f"{item}: {decision}"

    return [note, approve]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--db", required=True)
    parser.add_argument("--effects", required=True, type=Path)
    parser.add_argument("action", choices=["run", "resume"])
    parser.add_argument("thread")
    parser.add_argument("decision", nargs="?")
    args = parser.parse_args()

    model = ScriptedChatModel(policy=policy)
    url = f"sqlite:///{args.db}"
    with ReActAgent(model, make_tools(args.effects), checkpointer=url) as agent:
        if args.action == "run":
            state = AgentState({"seen": []})
            result = agent.run("note and approve", thread_id=args.thread, state=state)
        else:
            state = AgentState()
            decision: Any = json.loads(args.decision)
            result = agent.resume(thread_id=args.thread, human_decision=decision, state=state)
    out = {
        "termination_reason": result.termination_reason,
        "output": result.output,
        "payload": (result.interrupt_payload or {}).get("payload"),
        "data": state.data,
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
