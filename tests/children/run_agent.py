"""A fresh process that opens a thread of the test agent, acts once, prints one JSON line.

Usage (from the repository root)::

    python -m tests.children.run_agent --db DB --effects FILE [options] ACTION THREAD [ARG]

ACTION is ``run`` (ARG: the goal), ``resume`` (ARG: the decision as JSON), ``raw-resume``
(the same decision sent to the agent's compiled graph as ``graph.invoke(Command(resume=...))``,
as a LangGraph user drives it: no agent, no lock of the agent's) or ``continue`` (resume a
thread stopped by a crash, no decision). Options:

* ``--block-step-two``: ``step_two`` writes a marker and hangs (to be killed);
* ``--gate DIR --label L``: write ``DIR/ready-L`` once the agent is built, wait for ``DIR/go``
  before acting, and hold ``transfer`` after its start (writing ``DIR/started-L``) until
  ``DIR/release`` exists.

The JSON line is ``{"ok": true, "termination_reason", "output", "payload", "messages"}`` or
``{"ok": false, "error": <exception class name>, "message": ...}``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.types import Command

from tests.children.scenario import TIMEOUT, Scenario, conversation, make_agent, open_saver


def _wait(path: Path) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not path.exists():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{path} did not appear")
        time.sleep(0.005)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--db", required=True)
    parser.add_argument("--effects", required=True, type=Path)
    parser.add_argument("--block-step-two", action="store_true")
    parser.add_argument("--gate", type=Path)
    parser.add_argument("--label", default="child")
    parser.add_argument("action", choices=["run", "resume", "raw-resume", "continue"])
    parser.add_argument("thread")
    parser.add_argument("arg", nargs="?")
    args = parser.parse_args()
    gate: Path | None = args.gate

    def hold(decision: Any) -> None:
        if gate is not None:
            (gate / f"started-{args.label}").write_text(json.dumps(decision))
            _wait(gate / "release")

    scenario = Scenario(args.effects, on_transfer=hold, block_step_two=args.block_step_two)
    with open_saver(args.db) as saver:
        agent = make_agent(scenario, saver)
        if gate is not None:
            (gate / f"ready-{args.label}").touch()
            _wait(gate / "go")
        try:
            if args.action == "run":
                result = agent.run(args.arg, thread_id=args.thread)
            elif args.action == "resume":
                result = agent.resume(thread_id=args.thread, human_decision=json.loads(args.arg))
            elif args.action == "raw-resume":
                config: RunnableConfig = {"configurable": {"thread_id": args.thread}}
                output = agent.graph.invoke(Command(resume=json.loads(args.arg)), config)
                messages = agent.graph.get_state(config).values["messages"]
                print(
                    json.dumps(
                        {
                            "ok": True,
                            "output": output["messages"][-1].content,
                            "messages": conversation(messages),
                        }
                    )
                )
                return
            else:
                result = agent.resume(thread_id=args.thread)
        except Exception as error:
            print(json.dumps({"ok": False, "error": type(error).__name__, "message": str(error)}))
            return
        state = agent.graph.get_state({"configurable": {"thread_id": args.thread}})
        out = {
            "ok": True,
            "termination_reason": result.termination_reason,
            "output": result.output,
            "payload": (result.interrupt_payload or {}).get("payload"),
            "messages": conversation(state.values["messages"]),
        }
        print(json.dumps(out))


if __name__ == "__main__":
    main()
