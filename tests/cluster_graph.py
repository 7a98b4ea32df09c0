"""A gated agent for the crash test of ``tests/test_cluster.py`` (served by ``langhost``).

Made with this package's :func:`~dynavec_langgraph.create_react_agent`. Any user message makes
the scripted model call ``prepare()`` and then ``gated()``, then answer with their results.
``gated`` appends ``{"tool": "gated", "event": "start", "pid"}`` to the ledger
(``$DYNAVEC_DEMO_LEDGER``), waits until the file ``$DYNAVEC_CLUSTER_GATES/<thread_id>`` exists,
and appends its ``finish``; ``prepare`` appends one ``finish``. The ``pid`` tells the test which
server executes the run, so it can kill that one while the run waits at the gate.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langgraph.config import get_config

from dynavec_langgraph import create_react_agent, tool
from dynavec_langgraph.demo import LEDGER_ENV
from dynavec_langgraph.testing import ScriptedChatModel, Turn

__all__ = ["GATES_ENV", "gated", "graph", "policy", "prepare"]

GATES_ENV = "DYNAVEC_CLUSTER_GATES"
GATE_TIMEOUT = 120.0


def _thread_id() -> str:
    return str((get_config().get("configurable") or {}).get("thread_id"))


def _record(entry: dict[str, Any]) -> None:
    path = os.environ.get(LEDGER_ENV)
    if path:
        line = json.dumps({"thread_id": _thread_id(), "pid": os.getpid(), **entry})
        with Path(path).open("a", encoding="utf-8") as file:
            file.write(line + "\n")


@tool
def prepare() -> str:
    """Prepare the job (fast)."""
    _record({"tool": "prepare", "event": "finish"})
    return "prepared"


@tool
def gated() -> str:
    """Do the job once the test opens the gate."""
    _record({"tool": "gated", "event": "start"})
    gate = Path(os.environ[GATES_ENV]) / _thread_id()
    deadline = time.monotonic() + GATE_TIMEOUT
    while not gate.exists():
        if time.monotonic() > deadline:
            raise TimeoutError(f"the gate {gate} was not opened")
        time.sleep(0.05)  # waiting for a file another process creates
    _record({"tool": "gated", "event": "finish"})
    return "done"


def policy(messages: list[BaseMessage]) -> Turn:
    """``prepare`` and ``gated`` for a user message; after their answers, the final text."""
    if messages and isinstance(messages[-1], ToolMessage):
        results: list[str] = []
        for m in reversed(messages):
            if isinstance(m, AIMessage):
                break
            results.insert(0, str(m.content))
        return "Finished: " + ", ".join(results)
    return [{"name": "prepare", "args": {}}, {"name": "gated", "args": {}}]


graph = create_react_agent(
    ScriptedChatModel(policy=policy), [prepare, gated], system_prompt=None, name="gated_agent"
)
