"""A fresh process that drives a payment agent whose ``pay`` is ``on_crash="ask"``, in a
parallel batch or behind an approval, and prints one JSON line.

Usage (from the repository root)::

    python -m tests.children.batch_pay --db DB --shape batch|approval DOOR ACTION THREAD [ARG]

The payment service's URL is ``$DYNAVEC_TEST_PAY_SERVICE``; with ``$DYNAVEC_TEST_PAY_HANG``
(a folder) ``pay`` writes ``charged`` there once the service answered and then hangs: the test
SIGKILLs the process there (the charge went out, the tool never returned). ``a`` (``on_crash=
"retry"``) appends a line to ``<folder of DB>/a.log`` each time it runs.

Shapes: ``batch`` (``parallel_tool_calls=True``; the model's turn is ``[a, pay]``),
``approval`` (``require_approval(pay)``; the turn is ``[pay]``) and ``nested`` (the
``approval`` agent as the node ``payments`` of a parent ``StateGraph``, the parent compiled
with the checkpointer; door ``raw`` only: ``ReActAgent`` builds its own graph).
``graph_batch``, ``graph_approval`` and ``graph_nested`` are the same graphs compiled without a
checkpointer, for ``inbox --graph``.

DOOR ``raw`` (the compiled graph, LangGraph's default durability), ``agent``
(``ReActAgent``), ``async`` (its ``arun`` / ``aresume``) or ``astream`` (its ``astream`` /
``astream_resume``, read to the end). ACTION ``run`` (ARG: the user's message),
``continue`` (``invoke(None)`` / ``resume(thread_id=...)``), ``resume`` (ARG: the decision as
JSON), ``resume-id`` (``raw`` only: the decision sent by the one pending pause's interrupt id,
as the package's doors send it), ``decide`` (not ``raw``; ARG: ``decisions`` as JSON,
``{node_id: decision}``), ``views`` (not ``raw``: prints what the read-only doors show,
:func:`_views`). The line is ``{"ok": true, "interrupts": [values], "messages": [contents]}``
or ``{"ok": false, "error": <class name>, "message": ..., "interrupts": [...]}`` (the pauses
pending after the error).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time
from pathlib import Path
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.types import Command

from dynavec_langgraph import (
    DynavecError,
    ReActAgent,
    ThreadPausedError,
    create_react_agent,
    idempotency_key,
    tool,
)
from dynavec_langgraph.approval import require_approval
from dynavec_langgraph.testing import ScriptedChatModel, Turn
from tests.children.scenario import open_saver
from tests.payment_service import charge

SERVICE_ENV = "DYNAVEC_TEST_PAY_SERVICE"
HANG_ENV = "DYNAVEC_TEST_PAY_HANG"
A_LOG_ENV = "DYNAVEC_TEST_A_LOG"
_BATCH = [False]
"""Whether this process runs the ``batch`` agent (set by :func:`main`)."""


@tool(on_crash="retry")
def a() -> str:
    """Look something up first."""
    log = os.environ.get(A_LOG_ENV)
    if log:
        with Path(log).open("a", encoding="utf-8") as file:
            file.write(idempotency_key() + "\n")
    return "a ok"


@tool(on_crash="ask")
def pay(amount: int) -> str:
    """Charge the card."""
    key = idempotency_key()
    hang = os.environ.get(HANG_ENV)
    log = os.environ.get(A_LOG_ENV)
    if hang and log and _BATCH[0]:  # the batch's `a` returns and its result is saved first
        while not Path(log).exists():
            time.sleep(0.005)
        time.sleep(0.3)
    result = charge(os.environ[SERVICE_ENV], amount, key)
    if hang:
        written = Path(hang) / "charged.part"
        written.write_text(key)
        written.rename(Path(hang) / "charged")  # whole or absent: the test reads it once
        time.sleep(3600)  # killed here: the charge went out, the tool never returned
    return f"charged {result['id']} ({amount}) replayed={result['replayed']}"


def _policy(shape: str) -> Any:
    def policy(messages: list[BaseMessage]) -> Turn:
        if isinstance(messages[-1], HumanMessage):
            calls = [{"name": "pay", "args": {"amount": 42}}]
            return [{"name": "a", "args": {}}, *calls] if shape == "batch" else calls
        return "Done: " + " | ".join(str(m.content) for m in messages[-2:])

    return policy


def _tools(shape: str) -> list[Any]:
    return [a, pay] if shape == "batch" else [require_approval(pay)]


def build(shape: str, checkpointer: Any = None) -> Any:
    """The agent of ``shape`` as a compiled graph (``nested``: the parent graph)."""
    if shape == "nested":
        parent = StateGraph(MessagesState)
        parent.add_node("payments", build("approval"))  # the agent as a subgraph
        parent.add_edge(START, "payments")
        return parent.compile(checkpointer=checkpointer)
    return create_react_agent(
        ScriptedChatModel(policy=_policy(shape)),
        _tools(shape),
        checkpointer=checkpointer,
        parallel_tool_calls=shape == "batch",
    )


graph_batch = build("batch")
graph_approval = build("approval")
graph_nested = build("nested")


def _connection(db: str) -> str:
    """``db`` as the connection string ``ReActAgent(checkpointer=...)`` takes."""
    return db if db.startswith("postgresql://") else f"sqlite:///{db}"


def _views(agent: ReActAgent, door: str, thread: str) -> dict[str, Any]:
    """What ``ReActAgent``'s read-only doors show of a paused thread: the node ids
    ``run()`` refuses with (``ThreadPausedError``), the latest checkpoint's and the newest
    listed checkpoint's pause (door ``agent``: the sync methods, else their async twins);
    ``stored``: the pauses the stored state lists."""
    shown: dict[str, Any] = {}
    try:
        if door == "agent":
            agent.run("pay again", thread_id=thread)
        else:
            asyncio.run(agent.arun("pay again", thread_id=thread))
    except ThreadPausedError as error:
        shown["paused"] = error.node_ids
    if door == "agent":
        latest, listed = agent.get_checkpoint(thread), agent.list_checkpoints(thread)
    else:
        latest = asyncio.run(agent.aget_checkpoint(thread))
        listed = asyncio.run(agent.alist_checkpoints(thread))
    assert latest is not None
    shown["checkpoint"] = latest.state["interrupted"]
    shown["listed"] = listed[-1].state["interrupted"]
    config: RunnableConfig = {"configurable": {"thread_id": thread}}
    shown["stored"] = [i.value["node_id"] for i in agent.graph.get_state(config).interrupts]
    return shown


def _sync_door(agent: ReActAgent, action: str, thread: str, arg: str | None) -> None:
    if action == "run":
        agent.run(str(arg), thread_id=thread)
    elif action == "continue":
        agent.resume(thread_id=thread)
    elif action == "decide":
        agent.resume(thread_id=thread, decisions=json.loads(str(arg)))
    else:
        agent.resume(thread_id=thread, human_decision=json.loads(str(arg)))


async def _async_door(
    agent: ReActAgent, door: str, action: str, thread: str, arg: str | None
) -> None:
    """``aresume`` / ``arun`` (door ``async``), or their streaming twins ``astream_resume`` /
    ``astream`` read to the end (door ``astream``)."""
    kwargs: dict[str, Any] = {"thread_id": thread}
    if action == "decide":
        kwargs["decisions"] = json.loads(str(arg))
    elif action == "resume":
        kwargs["human_decision"] = json.loads(str(arg))
    if door == "async":
        if action == "run":
            await agent.arun(str(arg), thread_id=thread)
        else:
            await agent.aresume(**kwargs)
        return
    events = agent.astream(str(arg), thread_id=thread) if action == "run" else None
    async for _ in events if events is not None else agent.astream_resume(**kwargs):
        pass


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--db", required=True)
    parser.add_argument("--shape", choices=["batch", "approval", "nested"], required=True)
    parser.add_argument("door", choices=["raw", "agent", "async", "astream"])
    parser.add_argument(
        "action", choices=["run", "continue", "resume", "resume-id", "decide", "views"]
    )
    parser.add_argument("thread")
    parser.add_argument("arg", nargs="?")
    args = parser.parse_args()
    _BATCH[0] = args.shape == "batch"
    if args.shape == "nested" and args.door != "raw":
        parser.error("--shape nested: door raw only (ReActAgent builds its own graph)")
    config: RunnableConfig = {"configurable": {"thread_id": args.thread}}
    with open_saver(args.db) as saver:
        graph = build(args.shape, saver)
        try:
            if args.door == "raw":
                if args.action == "run":
                    graph.invoke({"messages": [("user", args.arg)]}, config)
                elif args.action == "continue":
                    graph.invoke(None, config)
                elif args.action == "resume-id":  # by interrupt id, as the package's doors
                    (pending,) = graph.get_state(config).interrupts
                    graph.invoke(Command(resume={pending.id: json.loads(args.arg)}), config)
                else:
                    graph.invoke(Command(resume=json.loads(args.arg)), config)
            else:
                agent = ReActAgent(
                    ScriptedChatModel(policy=_policy(args.shape)),
                    _tools(args.shape),
                    # the async doors: the package's own saver of the file or server (it
                    # has the async methods a SqliteSaver lacks)
                    checkpointer=saver if args.door == "agent" else _connection(args.db),
                    parallel_tool_calls=args.shape == "batch",
                )
                if args.action == "views":
                    print(json.dumps(_views(agent, args.door, args.thread)))
                    return
                if args.door == "agent":
                    _sync_door(agent, args.action, args.thread, args.arg)
                else:
                    asyncio.run(_async_door(agent, args.door, args.action, args.thread, args.arg))
        except DynavecError as error:
            pending = [i.value for i in graph.get_state(config).interrupts]
            print(json.dumps({"ok": False, "error": type(error).__name__,
                              "message": str(error), "interrupts": pending}))  # fmt: skip
            return
        state = graph.get_state(config)
        print(
            json.dumps(
                {
                    "ok": True,
                    "interrupts": [i.value for i in state.interrupts],
                    "messages": [str(m.content) for m in state.values["messages"]],
                }
            )
        )


if __name__ == "__main__":
    main()
