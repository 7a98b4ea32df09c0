"""A fresh process that drives a payment agent once and prints one JSON line.

Usage (from the repository root)::

    python -m tests.children.payment --db DB --service URL --policy P [--hang DIR]
        [--langchain] [--durability D] [--slow-put S] ACTION THREAD [ARG]

The agent (``create_react_agent`` on the thread's saver) has one tool, ``pay(amount)``, that
charges the fake payment service (``tests/payment_service.py``) under the call's
``idempotency_key()``; ``--policy`` is its ``on_crash`` (``none``: it declares none).
``--langchain`` makes it a LangChain tool reading the key from its ``ToolRuntime``. With
``--hang DIR`` the tool writes ``DIR/charged`` once the service answered and then hangs: the
test SIGKILLs the process there (the request reached the service, the tool never returned).

``--durability`` is passed to ``invoke`` (none: LangGraph's default, ``"async"``);
``--slow-put S`` makes the saver store each checkpoint ``S`` seconds late (a slow database
under LangGraph's background saves).

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
from dynavec_langgraph._exactly_once.keys import check_on_crash
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
        made.metadata = {} if on_crash == "none" else {"on_crash": on_crash}
        return [made]

    def pay(amount: int) -> str:
        """Charge the card."""
        return work(amount, idempotency_key())

    if on_crash == "none":
        return [tool(pay)]
    return [tool(on_crash=check_on_crash(on_crash, "pay"))(pay)]


def slow_puts(saver: Any, seconds: float) -> None:
    """Make ``saver`` store each checkpoint ``seconds`` late (its other methods unchanged)."""
    put = saver.put

    def late(*args: Any, **kwargs: Any) -> Any:
        time.sleep(seconds)
        return put(*args, **kwargs)

    saver.put = late


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--db", required=True)
    parser.add_argument("--service", required=True)
    parser.add_argument("--policy", default="retry")
    parser.add_argument("--hang", type=Path)
    parser.add_argument("--langchain", action="store_true")
    parser.add_argument("--durability", choices=["sync", "async", "exit"])
    parser.add_argument("--slow-put", type=float, default=0.0)
    parser.add_argument("action", choices=["run", "continue", "resume", "settle"])
    parser.add_argument("thread")
    parser.add_argument("arg", nargs="?")
    args = parser.parse_args()
    config: RunnableConfig = {"configurable": {"thread_id": args.thread}}
    durability: Any = args.durability
    with open_saver(args.db) as saver:
        if args.slow_put:
            slow_puts(saver, args.slow_put)
        graph = create_react_agent(
            ScriptedChatModel(policy=policy),
            make_tools(args.service, args.policy, args.hang, args.langchain),
            checkpointer=saver,
        )
        try:
            # LangGraph's default durability ("async"): the model's step is saved in the
            # background; the tool waits for it before it starts
            if args.action == "run":
                graph.invoke({"messages": [("user", args.arg)]}, config, durability=durability)
            elif args.action == "continue":
                graph.invoke(None, config, durability=durability)
            elif args.action == "resume":
                resume: Command[Any] = Command(resume=json.loads(args.arg))
                graph.invoke(resume, config, durability=durability)
            else:
                settle: RunnableConfig = {
                    "configurable": {
                        "thread_id": args.thread,
                        "dynavec_in_doubt": {_pending_id(graph, config): args.arg},
                    }
                }
                graph.invoke(None, settle, durability=durability)
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
                    "next": list(state.next),
                    "messages": [
                        {"type": m.type, "content": m.content}
                        for m in state.values.get("messages", [])
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
