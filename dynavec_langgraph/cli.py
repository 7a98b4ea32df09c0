"""``dynavec-langgraph``: the human-in-the-loop demo and an approvals inbox, from a terminal.

Commands::

    dynavec-langgraph demo   [--db PATH] [--thread ID] [--message TEXT] [--decision D]
    dynavec-langgraph resume  --db PATH   --thread ID  [--decision D]
    dynavec-langgraph inbox list   --db PATH_OR_URI [--graph SPEC] [--json]
    dynavec-langgraph inbox answer --db PATH_OR_URI --thread ID [--graph SPEC] [--node ID]
                                   (--approve | --reject | --decision D)

``--db`` is a SQLite file (``PATH`` or ``sqlite:///PATH``) or a PostgreSQL URI
(``postgresql://...``). A decision ``D`` is ``approve``, ``reject`` or a JSON value, for the demo
``{"decision": "approved" | "rejected", "comment": "..."}`` (see
:class:`dynavec_langgraph.demo.TransferDecision`). ``approve`` is sent as ``"approved"`` and
``reject`` as ``"rejected"``.

``inbox`` reads and resumes threads with the agent that paused them: ``--graph SPEC`` names it
the way ``langgraph.json`` does, ``MODULE:ATTR`` with a dotted module (``mypkg.agents:graph``,
imported with the current directory on ``sys.path``) or a file (``./agents.py:graph``). ``ATTR``
is a compiled graph, e.g. made by :func:`dynavec_langgraph.create_react_agent` without a
checkpointer (or a ``StateGraph``, compiled here); the command runs a copy of it on the ``--db``
saver (``graph.copy(update={"checkpointer": saver})``, as the LangGraph server does), so a
checkpointer compiled into it is not used. Default: the demo agent. A thread whose pending tool
call is not a tool of that graph (graphs of ``create_react_agent`` record their tool names) is
refused before anything runs: pass ``--graph`` with the agent that paused it. With several
approvals pending (``parallel_tool_calls=True``), ``--node`` picks one by node id or
interrupt id (``inbox list`` shows both).

Exit codes: 0 done (also when a thread is left paused), 2 bad arguments, with a message on
stderr that says what to do.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import importlib.util
import json
import os
import shlex
import sys
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, TextIO

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.errors import is_invalid_resume
from langgraph.graph import StateGraph
from langgraph.pregel import Pregel
from langgraph.types import Command, Interrupt, StateSnapshot

from dynavec_langgraph.agent import ReActAgent, build_result
from dynavec_langgraph.demo import (
    DEMO_SYSTEM_PROMPT,
    DEMO_TOOLS,
    create_demo_agent,
    demo_model,
)
from dynavec_langgraph.errors import CheckpointerConfigError, DynavecError, ThreadPausedError
from dynavec_langgraph.graph import TOOLS_METADATA_KEY
from dynavec_langgraph.interrupt import describe_pending, resume_command
from dynavec_langgraph.locks import resume_lock
from dynavec_langgraph.records import AgentResult
from dynavec_langgraph.savers import ConnectionSaver, resolve_checkpointer

__all__ = ["DEFAULT_DB", "DEFAULT_MESSAGE", "CliError", "PendingApproval", "main"]

PROG: Final = "dynavec-langgraph"
DEFAULT_DB: Final = "./dynavec-demo.db"
DEFAULT_MESSAGE: Final = "Pay 120 to landlord"
_DECISION_WORDS: Final = {
    "approve": "approved",
    "approved": "approved",
    "reject": "rejected",
    "rejected": "rejected",
}
_PG_SCHEMES: Final = ("postgresql://", "postgres://")
_SQLITE_SCHEME: Final = "sqlite:///"


class CliError(Exception):
    """A usage error: printed on stderr, exit code 2."""


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


# --- plain functions ---------------------------------------------------------------------


def parse_decision(text: str) -> Any:
    """``approve`` / ``reject`` (or ``approved`` / ``rejected``) or a JSON value.

    Raises:
        CliError: text that is neither, or JSON ``null``.
    """
    word = _DECISION_WORDS.get(text.strip().lower())
    if word is not None:
        return word
    try:
        value = json.loads(text)
    except ValueError:
        raise CliError(
            f"the decision {text!r} is not approve, reject or JSON; for example --decision "
            'approve, or --decision \'{"decision": "rejected", "comment": "too much"}\''
        ) from None
    if value is None:
        raise CliError("the decision cannot be null: give approve, reject or a JSON value")
    return value


def _sqlite_path(db: str) -> str | None:
    if db.startswith(_PG_SCHEMES):
        return None
    if db.startswith(_SQLITE_SCHEME):
        return db[len(_SQLITE_SCHEME) :]
    if "://" in db:
        scheme = db.split("://", 1)[0]
        raise CliError(
            f"unknown database scheme {scheme!r} in --db {db!r}: use a SQLite file path, "
            "sqlite:///PATH or a postgresql:// URI"
        )
    return db


@contextmanager
def open_saver(db: str, *, must_exist: bool) -> Iterator[BaseCheckpointSaver[Any]]:
    """The checkpointer of ``--db`` (a SQLite file or a PostgreSQL URI), closed on exit.

    Raises:
        CliError: an unknown scheme, a missing SQLite file (``must_exist``), or a database
            that cannot be opened.
    """
    path = _sqlite_path(db)
    if path is not None and must_exist and not Path(path).is_file():
        raise CliError(
            f"no SQLite database at {path!r}: check --db, or start a thread with "
            f"`{PROG} demo --db {shlex.quote(db)}`"
        )
    try:
        saver = resolve_checkpointer(db if path is None else _SQLITE_SCHEME + path)
    except CheckpointerConfigError as error:
        raise CliError(str(error)) from None
    if not isinstance(saver, ConnectionSaver):  # pragma: no cover - strings always open one
        raise CliError(f"cannot open --db {db!r}")
    with saver:
        yield saver


def demo_agent(saver: BaseCheckpointSaver[Any]) -> ReActAgent:
    """The demo agent (``demo_model()``, the demo tools) on ``saver``."""
    return ReActAgent(
        demo_model(), DEMO_TOOLS, system_prompt=DEMO_SYSTEM_PROMPT, checkpointer=saver
    )


Graph = Pregel[Any, Any, Any, Any]


def _import_module(spec: str, module_part: str) -> Any:
    if module_part.endswith(".py") or "/" in module_part or os.sep in module_part:
        path = Path(module_part).resolve()
        if not path.is_file():
            raise CliError(f"--graph {spec!r}: no file {module_part!r}")
        digest = hashlib.sha256(str(path).encode()).hexdigest()[:12]
        name = f"dynavec_inbox_graph_{path.stem}_{digest}"
        if name in sys.modules:
            return sys.modules[name]
        found = importlib.util.spec_from_file_location(name, path)
        if found is None or found.loader is None:
            raise CliError(f"--graph {spec!r}: cannot load {module_part!r} as Python")
        module = importlib.util.module_from_spec(found)
        sys.modules[name] = module
        try:
            found.loader.exec_module(module)
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
            raise
        raise CliError(
            f"--graph {spec!r}: no module named {error.name!r}; run from the directory that "
            "holds it, install it, or give a file: --graph ./path/to/agents.py:graph"
        ) from None
    finally:
        if added and cwd in sys.path:
            sys.path.remove(cwd)


def load_graph(spec: str | None) -> Graph:
    """The graph of ``--graph MODULE:ATTR`` (or the demo agent), without a checkpointer yet.

    ``MODULE`` is a dotted module or a ``.py`` file; ``ATTR`` a compiled graph or a
    ``StateGraph`` (compiled here).

    Raises:
        CliError: a malformed spec, a missing module, file or attribute, or an attribute
            that is not a graph.
    """
    if spec is None:
        return create_demo_agent()
    module_part, _, attr = spec.rpartition(":")
    if not module_part or not attr:
        raise CliError(
            f"--graph {spec!r}: use MODULE:ATTR, e.g. --graph mypkg.agents:graph or "
            "--graph ./agents.py:graph"
        )
    module = _import_module(spec, module_part)
    try:
        graph = getattr(module, attr)
    except AttributeError:
        raise CliError(f"--graph {spec!r}: {module_part!r} has no attribute {attr!r}") from None
    if isinstance(graph, StateGraph):
        graph = graph.compile()
    if not isinstance(graph, Pregel):
        raise CliError(
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


def _graph_name(spec: str | None) -> str:
    return "the demo agent" if spec is None else f"--graph {spec}"


def refuse_foreign_tools(
    graph: Graph, interrupts: Sequence[Interrupt], thread_id: str, graph_name: str
) -> None:
    """Refuse a thread whose pending tool call is not a tool of ``graph``.

    Resumed with another agent, the paused call would get "not registered" and the approval
    would be lost. Graphs that record no tool names are not checked.

    Raises:
        CliError: a pending interrupt's ``tool_call.name`` is not one of the graph's tools.
    """
    tools = graph_tools(graph)
    if tools is None:
        return
    for item in interrupts:
        call = item.value.get("tool_call") if isinstance(item.value, dict) else None
        name = call.get("name") if isinstance(call, dict) else None
        if name is not None and name not in tools:
            raise CliError(
                f"thread {thread_id!r} waits for an approval of tool {name!r} "
                f"({describe_pending([item])}), which {graph_name} does not have "
                f"(its tools: {', '.join(tools) or 'none'}). Pass --graph MODULE:ATTR with the "
                "agent that paused the thread; nothing was changed"
            )


def _config(thread_id: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread_id}}


def _resume_command(db: str, thread_id: str) -> str:
    return (
        f"{PROG} resume --db {shlex.quote(db)} --thread {shlex.quote(thread_id)} --decision approve"
    )


def pending_approvals(snapshot: StateSnapshot, thread_id: str) -> list[PendingApproval]:
    """The pending approvals of one thread's state."""
    rows: list[PendingApproval] = []
    for item in snapshot.interrupts:
        value = item.value if isinstance(item.value, dict) else {"payload": item.value}
        rows.append(
            PendingApproval(
                thread_id=thread_id,
                node_id=str(value.get("node_id", "")),
                payload=value.get("payload"),
                since=snapshot.created_at or "",
                tool_call=value.get("tool_call"),
                interrupt_id=item.id,
            )
        )
    return rows


def thread_ids(saver: BaseCheckpointSaver[Any]) -> list[str]:
    """Every thread of ``saver`` that has a top-level checkpoint, newest activity first."""
    seen: dict[str, str] = {}
    for item in saver.list(None):
        configurable = item.config.get("configurable") or {}
        if configurable.get("checkpoint_ns", ""):
            continue
        tid = str(configurable["thread_id"])
        ts = str(item.checkpoint.get("ts", ""))
        seen[tid] = max(seen.get(tid, ""), ts)
    return sorted(seen, key=lambda t: seen[t], reverse=True)


# --- output ------------------------------------------------------------------------------


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _show_pause(result: AgentResult, out: TextIO) -> None:
    info = result.interrupt_payload or {}
    pending = info.get("pending") or [info]
    for item in pending:
        call = item.get("tool_call") or {}
        where = f" (tool call {call.get('name')} {call.get('id')})" if call else ""
        print(f"Paused at {item.get('node_id')!r}{where}.", file=out)
        print(f"  payload: {_dump(item.get('payload'))}", file=out)


def _show_answer(result: AgentResult, out: TextIO) -> None:
    for step in result.steps:
        for call, observation in zip(step.tool_calls, step.observations, strict=False):
            print(f"  {call.name}({call.arguments}) -> {observation}", file=out)
    print(f"Answer: {result.output}", file=out)


def _prompt(out: TextIO) -> Any:
    while True:
        print("Decision (approve / reject / JSON): ", end="", file=out, flush=True)
        line = sys.stdin.readline()
        if not line:
            raise CliError("no decision given (end of input); the thread stays paused")
        try:
            return parse_decision(line.strip())
        except CliError as error:
            print(error, file=out)


# --- the commands --------------------------------------------------------------------------


def _resume_once(agent: ReActAgent, thread_id: str, decision: Any) -> AgentResult:
    try:
        return agent.resume(thread_id=thread_id, human_decision=decision)
    except DynavecError as error:  # e.g. a decision its response_schema refuses
        raise CliError(str(error)) from None


def _drive(
    agent: ReActAgent,
    result: AgentResult,
    db: str,
    thread_id: str,
    decision: Any,
    *,
    interactive: bool,
    out: TextIO,
) -> int:
    """Show each pause, answer it (flag, then prompt), and print the final answer."""
    while result.termination_reason == "interrupted":
        _show_pause(result, out)
        if decision is None and interactive and sys.stdin.isatty():
            decision = _prompt(out)
        if decision is None:
            print(f"Thread {thread_id!r} is paused. Resume it with:", file=out)
            print(f"  {_resume_command(db, thread_id)}", file=out)
            return 0
        print(f"Resuming with {_dump(decision)}.", file=out)
        result = _resume_once(agent, thread_id, decision)
        decision = None
    _show_answer(result, out)
    return 0


def _check_paused(snapshot: StateSnapshot, db: str, thread_id: str) -> None:
    if snapshot.created_at is None:
        raise CliError(
            f"unknown thread {thread_id!r} in {db}: nothing to resume. "
            f"`{PROG} inbox list --db {shlex.quote(db)}` shows the paused threads"
        )
    if not snapshot.interrupts:
        raise CliError(
            f"thread {thread_id!r} is not paused: nothing to resume. Send it a new message "
            f"with `{PROG} demo --db {shlex.quote(db)} --thread {shlex.quote(thread_id)} "
            "--message TEXT`"
        )


def cmd_demo(args: argparse.Namespace, out: TextIO) -> int:
    decision = parse_decision(args.decision) if args.decision is not None else None
    thread_id: str = args.thread or f"demo-{uuid.uuid4().hex[:8]}"
    with open_saver(args.db, must_exist=False) as saver:
        agent = demo_agent(saver)
        print(f"Thread {thread_id!r} in {args.db}", file=out)
        print(f"User: {args.message}", file=out)
        try:
            result = agent.run(args.message, thread_id=thread_id)
        except ThreadPausedError:
            raise CliError(
                f"thread {thread_id!r} is paused and waits for a decision; answer it first: "
                f"{_resume_command(args.db, thread_id)}"
            ) from None
        return _drive(agent, result, args.db, thread_id, decision, interactive=True, out=out)


def cmd_resume(args: argparse.Namespace, out: TextIO) -> int:
    decision = parse_decision(args.decision) if args.decision is not None else None
    with open_saver(args.db, must_exist=True) as saver:
        agent = demo_agent(saver)
        paused = agent.graph.get_state(_config(args.thread))
        _check_paused(paused, args.db, args.thread)
        refuse_foreign_tools(agent.graph, paused.interrupts, args.thread, "the demo agent")
        if decision is None and not sys.stdin.isatty():
            raise CliError(
                f"no decision: add --decision approve, --decision reject or --decision JSON "
                f"(thread {args.thread!r} stays paused)"
            )
        result = _paused_result(agent, paused, args.thread)
        return _drive(agent, result, args.db, args.thread, decision, interactive=True, out=out)


def _paused_result(agent: ReActAgent, snapshot: StateSnapshot, thread_id: str) -> AgentResult:
    return build_result(
        dict(snapshot.values),
        snapshot.interrupts,
        thread_id=thread_id,
        max_steps=agent.max_steps,
        system_prompt=agent.system_prompt,
    )


def cmd_inbox_list(args: argparse.Namespace, out: TextIO) -> int:
    graph = load_graph(args.graph)
    with open_saver(args.db, must_exist=True) as saver:
        app = graph_on(graph, saver)
        rows = [
            row
            for tid in thread_ids(saver)
            for row in pending_approvals(app.get_state(_config(tid)), tid)
        ]
    if args.json:
        print(_dump([r.as_dict() for r in rows]), file=out)
        return 0
    if not rows:
        print(f"No paused threads in {args.db}.", file=out)
        return 0
    print(f"{len(rows)} pending approval(s) in {args.db}:", file=out)
    for r in rows:
        tool = f"  tool {r.tool_call.get('name')}" if r.tool_call else ""
        print(
            f"{r.thread_id}  {r.node_id}  since {r.since}{tool}  interrupt {r.interrupt_id}  "
            f"payload {_dump(r.payload)}",
            file=out,
        )
    return 0


def _answer_command(
    interrupts: Sequence[Interrupt], decision: Any, node: str | None, thread_id: str
) -> Command[Any]:
    """``Command(resume=...)`` for the one approval ``node`` names (or the only one)."""
    if node is not None:
        try:
            return resume_command(interrupts, {node: decision})
        except DynavecError as error:
            raise CliError(f"--node {node!r}: {error}; nothing was changed") from None
    if len(interrupts) > 1:
        raise CliError(
            f"thread {thread_id!r} has {len(interrupts)} pending approvals: "
            f"{describe_pending(interrupts)}. Answer one with --node NODE_ID_OR_INTERRUPT_ID "
            "(`inbox list` shows them); nothing was changed"
        )
    return Command(resume=decision)


def _checkpoint_id(snapshot: StateSnapshot) -> Any:
    return (snapshot.config.get("configurable") or {}).get("checkpoint_id")


def _resume_graph(
    app: Graph,
    saver: BaseCheckpointSaver[Any],
    thread_id: str,
    seen: StateSnapshot,
    command: Command[Any],
) -> StateSnapshot:
    """Apply ``command`` under the thread's resume lock, if the thread is still as ``seen``."""
    config = _config(thread_id)
    try:
        with resume_lock(saver, thread_id):
            now = app.get_state(config)
            if _checkpoint_id(now) != _checkpoint_id(seen) or [i.id for i in now.interrupts] != [
                i.id for i in seen.interrupts
            ]:
                raise CliError(
                    f"another caller answered thread {thread_id!r} first; yours was not applied. "
                    "Run `inbox list` again before deciding"
                )
            app.invoke(command, config, durability="sync")
    except DynavecError as error:  # the lock is held by another caller
        raise CliError(str(error)) from None
    except ValueError as error:
        if not is_invalid_resume(error):
            raise
        raise CliError(
            f"the decision for {describe_pending(seen.interrupts)} does not match its "
            f"response_schema ({error}). Nothing was saved and the thread is still paused: "
            "answer it again with a valid decision"
        ) from None
    return app.get_state(config)


def _answer_hint(args: argparse.Namespace, pending: int) -> str:
    parts = [PROG, "inbox", "answer", "--db", args.db, "--thread", args.thread]
    if args.graph is not None:
        parts += ["--graph", args.graph]
    if pending > 1:
        parts += ["--node", "NODE_ID_OR_INTERRUPT_ID"]
    return " ".join(shlex.quote(p) for p in parts) + " --approve"


def cmd_inbox_answer(args: argparse.Namespace, out: TextIO) -> int:
    if args.approve:
        decision: Any = "approved"
    elif args.reject:
        decision = "rejected"
    else:
        decision = parse_decision(args.decision)
    graph = load_graph(args.graph)
    with open_saver(args.db, must_exist=True) as saver:
        app = graph_on(graph, saver)
        seen = app.get_state(_config(args.thread))
        _check_paused(seen, args.db, args.thread)
        refuse_foreign_tools(app, seen.interrupts, args.thread, _graph_name(args.graph))
        command = _answer_command(seen.interrupts, decision, args.node, args.thread)
        which = f" ({args.node})" if args.node is not None else ""
        print(f"Answering thread {args.thread!r}{which} with {_dump(decision)}.", file=out)
        after = _resume_graph(app, saver, args.thread, seen, command)
    result = build_result(
        dict(after.values), after.interrupts, thread_id=args.thread, max_steps=0, system_prompt=None
    )
    if result.termination_reason == "interrupted":
        _show_pause(result, out)
        print(f"Thread {args.thread!r} is still paused. Answer it with:", file=out)
        print(f"  {_answer_hint(args, len(after.interrupts))}", file=out)
        return 0
    _show_answer(result, out)
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``dynavec-langgraph``."""
    parser = argparse.ArgumentParser(
        prog=PROG, description="dynavec's human-in-the-loop agent on LangGraph."
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    db_help = "SQLite file (PATH or sqlite:///PATH) or postgresql:// URI"
    decision_help = "approve, reject, or a JSON decision"
    graph_help = (
        "the agent that paused the threads, as MODULE:ATTR (mypkg.agents:graph) or "
        "FILE.py:ATTR (./agents.py:graph): a compiled graph, e.g. from create_react_agent "
        "without a checkpointer; it runs on --db. Default: the demo agent"
    )

    demo = commands.add_parser("demo", help="run the approval demo; pauses before the transfer")
    demo.add_argument("--db", default=DEFAULT_DB, help=f"{db_help} (default {DEFAULT_DB})")
    demo.add_argument("--thread", help="thread id (default: a new one)")
    demo.add_argument("--message", default=DEFAULT_MESSAGE, help="the user message")
    demo.add_argument("--decision", help=f"{decision_help}; default: prompt on a terminal")
    demo.set_defaults(handler=cmd_demo)

    resume = commands.add_parser("resume", help="answer a paused demo thread and finish it")
    resume.add_argument("--db", default=DEFAULT_DB, help=db_help)
    resume.add_argument("--thread", required=True, help="the paused thread's id")
    resume.add_argument("--decision", help=f"{decision_help}; default: prompt on a terminal")
    resume.set_defaults(handler=cmd_resume)

    inbox = commands.add_parser(
        "inbox",
        help="pending approvals of a checkpointer",
        description="List and answer the pending approvals of a checkpointer. --graph names "
        "the agent that paused the threads (MODULE:ATTR or FILE.py:ATTR, a compiled graph run "
        "on a copy bound to --db); a thread waiting for a tool that graph lacks is refused.",
    )
    inbox_commands = inbox.add_subparsers(dest="inbox_command", required=True, metavar="ACTION")
    listing = inbox_commands.add_parser("list", help="list the paused threads")
    listing.add_argument("--db", required=True, help=db_help)
    listing.add_argument("--graph", metavar="SPEC", help=graph_help)
    listing.add_argument("--json", action="store_true", help="print JSON")
    listing.set_defaults(handler=cmd_inbox_list)
    answer = inbox_commands.add_parser("answer", help="answer one paused thread")
    answer.add_argument("--db", required=True, help=db_help)
    answer.add_argument("--thread", required=True, help="the paused thread's id")
    answer.add_argument("--graph", metavar="SPEC", help=graph_help)
    answer.add_argument(
        "--node",
        metavar="ID",
        help="the approval to answer when several are pending: its node id or interrupt id "
        "(inbox list shows both)",
    )
    choice = answer.add_mutually_exclusive_group(required=True)
    choice.add_argument("--approve", action="store_true", help='send "approved"')
    choice.add_argument("--reject", action="store_true", help='send "rejected"')
    choice.add_argument("--decision", help="a JSON decision")
    answer.set_defaults(handler=cmd_inbox_answer)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code."""
    args = build_parser().parse_args(argv)
    try:
        code: int = args.handler(args, sys.stdout)
    except CliError as error:
        print(f"{PROG}: error: {error}", file=sys.stderr)
        return 2
    return code


if __name__ == "__main__":
    sys.exit(main())
