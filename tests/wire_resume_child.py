"""The agent of ``tests/test_openai_wire.py``, and the child process that resumes it.

The tools write their side effects to a ledger file, so a test can see what ran in another
process. Run as a script, it resumes a thread paused by the parent test::

    python tests/wire_resume_child.py DB_PATH SERVER_URL THREAD_ID DECISION [graph|agent]

It builds the same agent with ``ChatOpenAI`` pointed at ``SERVER_URL`` and a ``SqliteSaver`` on
``DB_PATH``, answers the pause with ``DECISION`` (parsed as JSON when it is JSON, else taken as
text) and prints the outcome as one JSON object. The ledger is ``DB_PATH + ".ledger"``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.runnables import RunnableConfig
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Checkpointer, Command
from pydantic import SecretStr

from dynavec_langgraph import (
    AgentResult,
    AgentTool,
    ReActAgent,
    create_react_agent,
    interrupt,
    tool,
)

SYSTEM_PROMPT = "You run errands. Ask before moving money or deleting files."


class Ledger:
    """An append-only file of tool side effects, one line each, readable from any process."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def write(self, line: str) -> None:
        with self.path.open("a", encoding="utf-8") as f:
            f.write(line + "\n")

    def lines(self) -> list[str]:
        return self.path.read_text(encoding="utf-8").splitlines() if self.path.exists() else []


def make_tools(ledger: Ledger) -> list[AgentTool]:
    """``lookup`` (no pause), ``transfer`` (approval), ``delete_file`` (a dict decision)."""

    @tool
    def lookup(city: str) -> str:
        """Look up the weather in a city."""
        ledger.write(f"lookup:{city}")
        return f"Sunny in {city}."

    @tool
    def transfer(amount: int) -> str:
        """Transfer money; a person must approve it."""
        ledger.write(f"transfer:asked:{amount}")
        decision = interrupt("approve_transfer", {"amount": amount})
        if decision == "approved":
            ledger.write(f"transfer:done:{amount}")
            return f"Transferred {amount}."
        ledger.write(f"transfer:cancelled:{amount}")
        return f"Cancelled transfer of {amount}."

    @tool
    def delete_file(path: str) -> dict[str, Any]:
        """Delete a file; a person must confirm it."""
        decision = interrupt("confirm_delete", {"path": path})
        ledger.write(f"delete:{type(decision).__name__}:{json.dumps(decision, sort_keys=True)}")
        return {"path": path, "decision": decision}

    return [lookup, transfer, delete_file]


def build_graph(
    model: Any, ledger: Ledger, checkpointer: Checkpointer
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """The raw graph, as a user builds it."""
    return create_react_agent(
        model, make_tools(ledger), system_prompt=SYSTEM_PROMPT, checkpointer=checkpointer
    )


def build_agent(model: Any, ledger: Ledger, checkpointer: Any = None) -> ReActAgent:
    """The ``ReActAgent`` shim over the same tools (dynavec's default system prompt)."""
    return ReActAgent(model, make_tools(ledger), checkpointer=checkpointer)


def message_summary(messages: list[BaseMessage]) -> list[list[Any]]:
    """``[type, text, tool call ids]`` per message: enough to compare across processes."""
    return [
        [m.type, m.text, [c["id"] for c in m.tool_calls] if isinstance(m, AIMessage) else []]
        for m in messages
    ]


def result_summary(result: AgentResult) -> dict[str, Any]:
    """The user-visible fields of an ``AgentResult`` as JSON."""
    pause = result.interrupt_payload
    return {
        "output": result.output,
        "finished": result.finished,
        "termination_reason": result.termination_reason,
        "total_steps": result.total_steps,
        "tool_calls_count": result.tool_calls_count,
        "observations": [s.observations for s in result.steps],
        "paused_at": None if pause is None else [pause["node_id"], pause["payload"]],
    }


def _decision(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def main(argv: list[str]) -> int:
    db_path, url, thread_id, decision_text = argv[1:5]
    mode = argv[5] if len(argv) > 5 else "graph"
    decision = _decision(decision_text)
    model = ChatOpenAI(
        base_url=url, api_key=SecretStr("test-key"), model="gpt-test", max_retries=0, timeout=10
    )
    ledger = Ledger(db_path + ".ledger")
    with SqliteSaver.from_conn_string(db_path) as saver:
        if mode == "graph":
            graph = build_graph(model, ledger, saver)
            config: RunnableConfig = {"configurable": {"thread_id": thread_id}}
            out = graph.invoke(Command(resume=decision), config)
            summary: dict[str, Any] = {
                "messages": message_summary(out["messages"]),
                "interrupts": [i.value for i in out.get("__interrupt__", [])],
                # the bookkeeping is in the thread state, not in invoke()'s output
                "termination_reason": graph.get_state(config).values.get("termination_reason"),
            }
        elif mode == "agent":
            agent = build_agent(model, ledger, saver)
            summary = result_summary(agent.resume(thread_id=thread_id, human_decision=decision))
        else:
            print(f"unknown mode {mode!r}: use graph or agent", file=sys.stderr)
            return 2
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
