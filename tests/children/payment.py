"""A fresh process that drives a payment agent once and prints one JSON line.

Usage (from the repository root)::

    python -m tests.children.payment --db DB --service URL --policy P [--hang DIR]
        [--langchain] ACTION THREAD [ARG]

The agent (``create_react_agent`` on the thread's saver) has one tool, ``pay(amount)``, that
charges the fake payment service (``tests/payment_service.py``) under the call's
``idempotency_key()``; ``--policy`` is its ``on_crash``. ``--langchain`` makes it a LangChain
tool reading the key from its ``ToolRuntime``. With ``--hang DIR`` the tool writes
``DIR/charged`` once the service answered and then hangs: the test SIGKILLs the process there
(the request reached the service, the tool never returned).

ACTION: ``run`` (ARG: the user's message), ``continue`` (``invoke(None)``), ``resume`` (ARG:
the decision as JSON, ``Command(resume=...)``), ``settle`` (ARG: ``retry`` / ``skip``:
continue with ``configurable["dynavec_in_doubt"]``). The JSON line is ``{"ok": true,
"interrupts": [values], "messages": [{"type", "content"}]}`` or ``{"ok": false, "error":
<class name>, "message": ..., "attrs": {...}}``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool as lc_tool
from langgraph.prebuilt import ToolRuntime
from langgraph.types import Command

from dynavec_langgraph import InDoubtCallError, create_react_agent, idempotency_key, tool
from dynavec_langgraph._exactly_once import check_on_crash
from dynavec_langgraph.testing import ScriptedChatModel, Turn
from tests.children.scenario import open_saver
from tests.payment_service import charge


def policy(messages: list[BaseMessage]) -> Turn:
    last = messages[-1]
    if isinstance(last, HumanMessage):
        return [{"name": "pay", "args": {"amount": 42}}]
    assert isinstance(last, ToolMessage)
    return f"Done: {last.content}"


def make_tools(service: str, on_crash: str, hang: Path | None, langchain: bool) -> list[Any]:
    def work(amount: int, key: str) -> str:
        result = charge(service, amount, key)
        if hang is not None:
            written = hang / "charged.part"
            written.write_text(key)
            written.rename(hang / "charged")  # whole or absent: the test reads it once it exists
            time.sleep(3600)  # killed here: the charge went out, the tool never returns
        return f"charged {result['id']} ({amount}) key={key} replayed={result['replayed']}"

    if langchain:

        def pay_lc(amount: int, runtime: ToolRuntime) -> str:
            """Charge the card."""
            return work(amount, idempotency_key(runtime))

        made = lc_tool("pay")(pay_lc)
        made.metadata = {"on_crash": on_crash}
        return [made]

    @tool(on_crash=check_on_crash(on_crash, "pay"))
    def pay(amount: int) -> str:
        """Charge the card."""
        return work(amount, idempotency_key())

    return [pay]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--db", required=True)
    parser.add_argument("--service", required=True)
    parser.add_argument("--policy", default="retry")
    parser.add_argument("--hang", type=Path)
    parser.add_argument("--langchain", action="store_true")
    parser.add_argument("action", choices=["run", "continue", "resume", "settle"])
    parser.add_argument("thread")
    parser.add_argument("arg", nargs="?")
    args = parser.parse_args()
    config: RunnableConfig = {"configurable": {"thread_id": args.thread}}
    with open_saver(args.db) as saver:
        graph = create_react_agent(
            ScriptedChatModel(policy=policy),
            make_tools(args.service, args.policy, args.hang, args.langchain),
            checkpointer=saver,
        )
        try:
            # LangGraph's default durability ("async"): the model's step is saved in the
            # background; the declared tool waits for it before it starts
            if args.action == "run":
                graph.invoke({"messages": [("user", args.arg)]}, config)
            elif args.action == "continue":
                graph.invoke(None, config)
            elif args.action == "resume":
                graph.invoke(Command(resume=json.loads(args.arg)), config)
            else:
                settle: RunnableConfig = {
                    "configurable": {
                        "thread_id": args.thread,
                        "dynavec_in_doubt": {_pending_id(graph, config): args.arg},
                    }
                }
                graph.invoke(None, settle)
        except InDoubtCallError as error:
            attrs = {"call_id": error.call_id, "tool": error.tool, "key": error.key}
            print(json.dumps({"ok": False, "error": type(error).__name__, "message": str(error),
                              "attrs": attrs}))  # fmt: skip
            return
        state = graph.get_state(config)
        print(
            json.dumps(
                {
                    "ok": True,
                    "interrupts": [i.value for i in state.interrupts],
                    "messages": [
                        {"type": m.type, "content": m.content} for m in state.values["messages"]
                    ],
                }
            )
        )


def _pending_id(graph: Any, config: RunnableConfig) -> str:
    last = graph.get_state(config).values["messages"][-1]
    call_id: str = last.tool_calls[0]["id"]
    return call_id


if __name__ == "__main__":
    main()
