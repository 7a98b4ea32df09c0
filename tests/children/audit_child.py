"""A fresh process that pauses or answers a thread of an auditing agent, prints one JSON line.

Usage (from the repository root)::

    python -m tests.children.audit_child --db DB [--webhook URL] [--kill] [--fail-after]
        ACTION THREAD [DECISION]

ACTION ``pause`` runs the agent until it pauses at ``approve_transfer`` (``--kill``: then the
process SIGKILLs itself, right after the pause is saved); ``answer`` resumes the thread with
the JSON ``DECISION`` (``--fail-after``: the model call after the approved tool raises, so the
run fails after the decision was taken). The agent records its audit trail (``audit=True``)
and notifies ``--webhook``.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.tools import tool

from dynavec_langgraph import ReActAgent, create_react_agent, interrupt
from dynavec_langgraph._audit.entries import Notifier
from dynavec_langgraph.testing import ScriptedChatModel, Turn
from tests.children.scenario import open_saver


@tool
def transfer(amount: int) -> str:
    """Transfer money once a person approved it."""
    decision = interrupt("approve_transfer", {"amount": amount})
    return f"Transferred {amount}." if decision == "approved" else f"Not sent: {decision}"


def model(fail_after: bool = False) -> ScriptedChatModel:
    """Calls ``transfer(100)``, then reports its result (or raises, ``fail_after``)."""

    def policy(messages: list[BaseMessage]) -> Turn:
        if isinstance(messages[-1], HumanMessage):
            return [{"name": "transfer", "args": {"amount": 100}}]
        if fail_after:
            raise RuntimeError("the model service is down")
        return f"Done: {messages[-1].content}"

    return ScriptedChatModel(policy=policy)


def make_agent(saver: Any, webhook: Notifier | None, fail_after: bool) -> ReActAgent:
    """The auditing agent on ``saver``, notifying ``webhook``."""
    return ReActAgent(model(fail_after), [transfer], checkpointer=saver, audit=True, notify=webhook)


graph = create_react_agent(model(), [transfer])
"""The same agent as a graph, for ``inbox answer --graph``."""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--db", required=True)
    parser.add_argument("--webhook")
    parser.add_argument("--kill", action="store_true")
    parser.add_argument("--fail-after", action="store_true")
    parser.add_argument("action", choices=["pause", "answer"])
    parser.add_argument("thread")
    parser.add_argument("decision", nargs="?")
    args = parser.parse_args()
    with open_saver(args.db) as saver:
        agent = make_agent(saver, args.webhook, args.fail_after)
        try:
            if args.action == "pause":
                result = agent.run("pay the rent", thread_id=args.thread)
            else:
                decision = json.loads(args.decision)
                result = agent.resume(thread_id=args.thread, human_decision=decision)
        except Exception as error:
            print(json.dumps({"ok": False, "error": type(error).__name__, "message": str(error)}))
            return
        print(json.dumps({"ok": True, "termination_reason": result.termination_reason}))
        sys.stdout.flush()
        if args.kill:
            os.kill(os.getpid(), signal.SIGKILL)


if __name__ == "__main__":
    main()
