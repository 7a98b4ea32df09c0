"""The approvals inbox: the paused threads of a checkpointer and answers to their approvals.

What ``dynavec-langgraph inbox`` (:mod:`dynavec_langgraph.cli`) runs, without its argument
parsing, printing or exit codes:

- listing: :func:`thread_ids` of a saver, :func:`pending_approvals` of one thread's state as
  :class:`PendingApproval` rows, :func:`list_pending` for every thread;
- the agent: :func:`load_graph` imports ``--graph MODULE:ATTR`` (a dotted module or a ``.py``
  file; the command line's default is the demo agent) and :func:`graph_on` binds a copy of it
  to a saver, as the LangGraph server does;
- :func:`refuse_foreign_tools` refuses a thread whose pending tool call is not a tool of that
  graph (:func:`graph_tools`), before anything runs;
- answering: :func:`answer_command` builds the ``Command(resume=...)`` for one approval (picked
  with ``--node`` when several are pending) and :func:`resume_graph` applies it under the
  thread's resume lock, if no other caller answered first.

Every refusal raises :class:`InboxError`, whose message says what to do; the command line
prints it on stderr and exits with code 2.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.errors import is_invalid_resume
from langgraph.graph import StateGraph
from langgraph.pregel import Pregel
from langgraph.types import Command, Interrupt, StateSnapshot

from dynavec_langgraph.errors import DynavecError
from dynavec_langgraph.graph import TOOLS_METADATA_KEY
from dynavec_langgraph.interrupt import (
    describe_pending,
    interrupt_fields,
    refusal,
    resume_command,
)
from dynavec_langgraph.locks import resume_lock

__all__ = [
    "Graph",
    "InboxError",
    "PendingApproval",
    "answer_command",
    "graph_on",
    "graph_tools",
    "list_pending",
    "load_graph",
    "pending_approvals",
    "read_thread",
    "refuse_foreign_tools",
    "resume_graph",
    "thread_config",
    "thread_ids",
]

Graph = Pregel[Any, Any, Any, Any]
"""A compiled LangGraph graph (what ``--graph`` names and the inbox drives)."""


class InboxError(DynavecError, ValueError):
    """A refused inbox request; the command line prints it on stderr, exit code 2."""


@dataclass(frozen=True)
class PendingApproval:
    """One pending approval of a paused thread, as ``inbox list`` shows it."""

    thread_id: str
    node_id: str
    payload: Any
    since: str
    tool_call: dict[str, Any] | None
    interrupt_id: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "thread_id": self.thread_id,
            "node_id": self.node_id,
            "payload": self.payload,
            "since": self.since,
            "tool_call": self.tool_call,
            "interrupt_id": self.interrupt_id,
        }


def thread_config(thread_id: str) -> RunnableConfig:
    """The config that addresses ``thread_id``.

    >>> thread_config("t1")
    {'configurable': {'thread_id': 't1'}}
    """
    return {"configurable": {"thread_id": thread_id}}


# --- listing -----------------------------------------------------------------------------


def pending_approvals(snapshot: StateSnapshot, thread_id: str) -> list[PendingApproval]:
    """The pending approvals of one thread's state."""
    rows: list[PendingApproval] = []
    for item in snapshot.interrupts:
        fields = interrupt_fields(item)
        rows.append(
            PendingApproval(
                thread_id=thread_id,
                node_id=fields.node_id or "",
                payload=fields.payload,
                since=snapshot.created_at or "",
                tool_call=fields.tool_call,
                interrupt_id=item.id,
            )
        )
    return rows


_THREADS_SQL = (
    "SELECT thread_id, MAX(checkpoint_id) AS latest FROM checkpoints WHERE checkpoint_ns = '' "
    "GROUP BY thread_id ORDER BY latest DESC"
)


def _sql_thread_ids(saver: Any) -> list[str] | None:
    """The thread ids of a SQLite or PostgreSQL saver read from the table itself, so one
    unreadable record does not hide the other threads; None for other savers."""
    saver = getattr(saver, "inner", saver)
    conn = getattr(saver, "conn", None)
    module = type(saver).__module__
    if module.startswith("langgraph.checkpoint.sqlite") and conn is not None:
        with saver.lock:
            return [str(r[0]) for r in conn.execute(_THREADS_SQL)]
    if module.startswith("langgraph.checkpoint.postgres") and conn is not None:
        pools = sys.modules.get("psycopg_pool")
        if pools is not None and isinstance(conn, pools.ConnectionPool):
            with conn.connection() as pooled:
                rows = pooled.execute(_THREADS_SQL).fetchall()
        else:
            rows = conn.execute(_THREADS_SQL).fetchall()
        return [str(r["thread_id"] if isinstance(r, dict) else r[0]) for r in rows]
    return None


def thread_ids(saver: BaseCheckpointSaver[Any]) -> list[str]:
    """Every thread of ``saver`` that has a top-level checkpoint, newest activity first."""
    from_sql = _sql_thread_ids(saver)
    if from_sql is not None:
        return from_sql
    seen: dict[str, str] = {}
    for item in saver.list(None):
        configurable = item.config.get("configurable") or {}
        if configurable.get("checkpoint_ns", ""):
            continue
        tid = str(configurable["thread_id"])
        ts = str(item.checkpoint.get("ts", ""))
        seen[tid] = max(seen.get(tid, ""), ts)
    return sorted(seen, key=lambda t: seen[t], reverse=True)


def read_thread(app: Graph, thread_id: str) -> StateSnapshot:
    """The state of one thread.

    Raises:
        InboxError: its record cannot be read (written by something else, damaged or
            crafted); nothing was changed.
    """
    try:
        return app.get_state(thread_config(thread_id))
    except Exception as error:
        raise InboxError(
            f"thread {thread_id!r} cannot be read: {type(error).__name__}: {error}. Its "
            "records were written by another program or version, or were damaged; nothing "
            "was changed"
        ) from None


def list_pending(
    app: Graph, saver: BaseCheckpointSaver[Any], unreadable: list[str] | None = None
) -> list[PendingApproval]:
    """The pending approvals of every thread of ``saver``, newest thread first.

    ``app`` is the graph bound to ``saver`` (:func:`graph_on`). A thread that cannot be read
    raises :class:`InboxError`, or, when ``unreadable`` is given, is skipped and its error
    appended there.
    """
    rows: list[PendingApproval] = []
    for tid in thread_ids(saver):
        try:
            rows += pending_approvals(read_thread(app, tid), tid)
        except InboxError as error:
            if unreadable is None:
                raise
            unreadable.append(str(error))
    return rows


# --- the agent ---------------------------------------------------------------------------


def _import_failed(spec: str, error: Exception) -> InboxError:
    where = ""
    if isinstance(error, SyntaxError) and error.filename:
        where = f" ({error.filename}, line {error.lineno})"
    return InboxError(
        f"--graph {spec!r}: importing it failed with {type(error).__name__}: {error}{where}. "
        "Fix the module (run `python -c 'import MODULE'` to see the whole traceback); nothing "
        "was changed"
    )


def _import_module(spec: str, module_part: str) -> Any:
    if module_part.endswith(".py") or "/" in module_part or os.sep in module_part:
        path = Path(module_part).resolve()
        if not path.is_file():
            raise InboxError(f"--graph {spec!r}: no file {module_part!r}")
        digest = hashlib.sha256(str(path).encode()).hexdigest()[:12]
        name = f"dynavec_inbox_graph_{path.stem}_{digest}"
        if name in sys.modules:
            return sys.modules[name]
        found = importlib.util.spec_from_file_location(name, path)
        if found is None or found.loader is None:
            raise InboxError(f"--graph {spec!r}: cannot load {module_part!r} as Python")
        module = importlib.util.module_from_spec(found)
        sys.modules[name] = module
        try:
            found.loader.exec_module(module)
        except Exception as error:
            del sys.modules[name]
            raise _import_failed(spec, error) from None
        except BaseException:
            del sys.modules[name]
            raise
        return module
    cwd = os.getcwd()
    added = cwd not in sys.path and "" not in sys.path
    if added:
        sys.path.insert(0, cwd)
    try:
        return importlib.import_module(module_part)
    except ModuleNotFoundError as error:
        if error.name is None or not (module_part + ".").startswith(error.name + "."):
            raise _import_failed(spec, error) from None
        raise InboxError(
            f"--graph {spec!r}: no module named {error.name!r}; run from the directory that "
            "holds it, install it, or give a file: --graph ./path/to/agents.py:graph"
        ) from None
    except Exception as error:
        raise _import_failed(spec, error) from None
    finally:
        if added and cwd in sys.path:
            sys.path.remove(cwd)


def load_graph(spec: str) -> Graph:
    """The graph of ``--graph MODULE:ATTR``, without a checkpointer yet.

    ``MODULE`` is a dotted module or a ``.py`` file; ``ATTR`` a compiled graph or a
    ``StateGraph`` (compiled here).

    Raises:
        InboxError: a malformed spec, a missing module, file or attribute, or an attribute
            that is not a graph.
    """
    module_part, _, attr = spec.rpartition(":")
    if not module_part or not attr:
        raise InboxError(
            f"--graph {spec!r}: use MODULE:ATTR, e.g. --graph mypkg.agents:graph or "
            "--graph ./agents.py:graph"
        )
    module = _import_module(spec, module_part)
    try:
        graph = getattr(module, attr)
    except AttributeError:
        raise InboxError(f"--graph {spec!r}: {module_part!r} has no attribute {attr!r}") from None
    if isinstance(graph, StateGraph):
        graph = graph.compile()
    if not isinstance(graph, Pregel):
        raise InboxError(
            f"--graph {spec!r} is a {type(graph).__name__}, not a compiled graph: name the "
            "graph create_react_agent(...) returned (compiled without a checkpointer)"
        )
    return graph


def graph_on(graph: Graph, saver: BaseCheckpointSaver[Any]) -> Graph:
    """A copy of ``graph`` that runs on ``saver`` (what the LangGraph server does)."""
    return graph.copy(update={"checkpointer": saver})


def graph_tools(graph: Graph) -> list[str] | None:
    """The tool names a graph of ``create_react_agent`` records; None for other graphs."""
    names = ((graph.config or {}).get("metadata") or {}).get(TOOLS_METADATA_KEY)
    return [str(n) for n in names] if isinstance(names, list) else None


def refuse_foreign_tools(
    graph: Graph, interrupts: Sequence[Interrupt], thread_id: str, graph_name: str
) -> None:
    """Refuse a thread whose pending tool call is not a tool of ``graph``.

    Resumed with another agent, the paused call would get "not registered" and the approval
    would be lost. Graphs that record no tool names are not checked.

    Raises:
        InboxError: a pending interrupt's ``tool_call.name`` is not one of the graph's tools.
    """
    tools = graph_tools(graph)
    if tools is None:
        return
    for item in interrupts:
        call = interrupt_fields(item).tool_call
        name = call.get("name") if call else None
        if name is not None and name not in tools:
            raise InboxError(
                f"thread {thread_id!r} waits for an approval of tool {name!r} "
                f"({describe_pending([item])}), which {graph_name} does not have "
                f"(its tools: {', '.join(tools) or 'none'}). Pass --graph MODULE:ATTR with the "
                "agent that paused the thread; nothing was changed"
            )


# --- answering ---------------------------------------------------------------------------


def answer_command(
    interrupts: Sequence[Interrupt], decision: Any, node: str | None, thread_id: str
) -> Command[Any]:
    """``Command(resume=...)`` for the one approval ``node`` names (or the only one).

    Raises:
        InboxError: ``node`` names no pending approval, or none is named and several are
            pending.
    """
    if node is not None:
        try:
            return resume_command(interrupts, {node: decision})
        except DynavecError as error:
            raise InboxError(f"--node {node!r}: {error}; nothing was changed") from None
    if len(interrupts) > 1:
        raise InboxError(
            f"thread {thread_id!r} has {len(interrupts)} pending approvals: "
            f"{describe_pending(interrupts)}. Answer one with --node NODE_ID_OR_INTERRUPT_ID "
            "(`inbox list` shows them); nothing was changed"
        )
    # addressed by id: a decision such as {} would otherwise be read as a map of ids
    return Command(resume={interrupts[0].id: decision})


def _checkpoint_id(snapshot: StateSnapshot) -> Any:
    return (snapshot.config.get("configurable") or {}).get("checkpoint_id")


def resume_graph(
    app: Graph,
    saver: BaseCheckpointSaver[Any],
    thread_id: str,
    seen: StateSnapshot,
    command: Command[Any],
) -> StateSnapshot:
    """Apply ``command`` under the thread's resume lock, if the thread is still as ``seen``.

    Returns the thread's state afterwards.

    Raises:
        InboxError: another caller holds the lock or answered first, or the decision does not
            match the approval's ``response_schema``; nothing was saved.
    """
    config = thread_config(thread_id)
    try:
        with resume_lock(saver, thread_id):
            now = read_thread(app, thread_id)
            if _checkpoint_id(now) != _checkpoint_id(seen) or [i.id for i in now.interrupts] != [
                i.id for i in seen.interrupts
            ]:
                raise InboxError(
                    f"another caller answered thread {thread_id!r} first; yours was not applied. "
                    "Run `inbox list` again before deciding"
                )
            app.invoke(command, config, durability="sync")
            message = refusal(seen.interrupts, app.get_state(config).interrupts)
            if message:
                raise InboxError(message)
    except DynavecError:  # ConcurrentResumeError, StorageError...: what they are everywhere
        raise
    except ValueError as error:
        if not is_invalid_resume(error):
            raise
        raise InboxError(
            f"the decision for {describe_pending(seen.interrupts)} does not match its "
            f"response_schema ({error}). Nothing was saved and the thread is still paused: "
            "answer it again with a valid decision"
        ) from None
    return app.get_state(config)
