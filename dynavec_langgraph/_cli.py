"""``dynavec-langgraph``: the human-in-the-loop demo and an approvals inbox, from a terminal.

Commands::

    dynavec-langgraph --version
    dynavec-langgraph demo   [--db PATH] [--thread ID] [--message TEXT] [--decision D]
    dynavec-langgraph resume  --db PATH   --thread ID  [--decision D] [--digest DIGEST]
    dynavec-langgraph inbox list   --db PATH_OR_URI [--graph SPEC] [--json]
    dynavec-langgraph inbox answer --db PATH_OR_URI --thread ID [--graph SPEC] [--node ID]
                                   (--approve | --reject | --decision D)
                                   [--as NAME] [--digest DIGEST]
    dynavec-langgraph inbox expire --db PATH_OR_URI [--graph SPEC] [--json]
    dynavec-langgraph inbox history THREAD (--db PATH_OR_URI | --server URL) [--json]
    dynavec-langgraph inbox notify --db PATH_OR_URI [--webhook URL] [--thread ID] [--now]
    dynavec-langgraph inbox list   --server URL [--assistant ID] [--token TOKEN] [--json]
    dynavec-langgraph inbox answer --server URL --thread ID [--assistant ID] [--node ID]
                                   (--approve | --reject | --decision D)
                                   [--as NAME] [--digest DIGEST] [--token TOKEN]
    dynavec-langgraph inbox answer --server URL --link TOKEN [--token TOKEN]
    dynavec-langgraph audit verify --db PATH_OR_URI [--thread ID] [--json]
    dynavec-langgraph audit verify --server URL [--thread ID] [--token TOKEN] [--json]

``--db`` is a SQLite file (``PATH`` or ``sqlite:///PATH``) or a PostgreSQL URI
(``postgresql://...``). A decision ``D`` is ``approve``, ``reject`` or a JSON value, for the demo
``{"decision": "approved" | "rejected", "comment": "..."}`` (see
:class:`dynavec_langgraph.demo.TransferDecision`). ``approve`` is sent as ``"approved"`` and
``reject`` as ``"rejected"``. ``--digest`` binds the decision to the pause it was read from (its
review digest, shown by ``inbox list`` and when a thread pauses): a thread paused at anything else
now refuses it (docs/approval-uis.md).

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
interrupt id (``inbox list`` shows both). The inbox's logic is in
:mod:`dynavec_langgraph._inbox`; this module parses the arguments, prints and sets the exit code.

``--server URL`` instead of ``--db``: the same listing and answers through a LangGraph API
deployment's API (:mod:`dynavec_langgraph._remote_inbox`; needs the ``studio`` extra), never by
writing its database. ``--assistant ID`` keeps the threads of one graph id and answers with it.
``--token TOKEN`` (or the environment variable ``DYNAVEC_SERVER_TOKEN``, which keeps it out of
the process list) is sent as ``Authorization: Bearer TOKEN`` to a server with custom auth; there
the signed-in user is the approver, so ``--as`` may be left out (a name other than that user's
is refused: docs/approvals-in-production.md). ``--link TOKEN`` answers with a signed approval
link's token (its thread, decision and approver; docs/security.md), through ``--server`` only.

``audit verify`` checks the hash chain of the audit trails (docs/audit-and-notifications.md)
of ``--db``, which may also be a ``dynamodb://TABLE?...`` URL, or of a LangGraph API server's
store (``--server URL``, read through its API with ``--token``); it only reads.

Exit codes: 0 done (also when a thread is left paused), 1 ``inbox notify`` had a failed try or
``audit verify`` found tampering, 2 bad arguments, with a message on stderr that says what to
do.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import sqlite3
import sys
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, closing, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal, TextIO, overload

from dynavec_langgraph import __version__
from dynavec_langgraph._errors import (
    ApproverRequiredError,
    CheckpointerConfigError,
    DynavecError,
    InvalidDecisionError,
    NothingToResumeError,
    ThreadPausedError,
    webhook_url_text,
)

# Everything that imports LangGraph is imported inside the command that needs it, so that
# `dynavec-langgraph --help` (and a mistyped command) answers at once.
if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver
    from langgraph.types import StateSnapshot

    from dynavec_langgraph._agent import ReActAgent
    from dynavec_langgraph._inbox import Graph
    from dynavec_langgraph.records import AgentResult

__all__ = ["DEFAULT_DB", "DEFAULT_MESSAGE", "CliError", "main"]

PROG: Final = "dynavec-langgraph"
DEFAULT_DB: Final = "./dynavec-demo.db"
"""The SQLite file of ``--db`` when none is given."""
DEFAULT_MESSAGE: Final = "Pay 120 to landlord"
"""The demo's request when none is given."""
TOKEN_ENV: Final = "DYNAVEC_SERVER_TOKEN"
"""The bearer token ``inbox ... --server`` sends when ``--token`` is not given."""
_DECISION_WORDS: Final = {
    "approve": "approved",
    "approved": "approved",
    "reject": "rejected",
    "rejected": "rejected",
}


class CliError(Exception):
    """A usage error: printed on stderr, exit code 2."""


def invocation() -> str:
    """This program as the user can type it again in the current directory.

    ``dynavec-langgraph`` when the shell finds this very script on ``PATH`` (or when it runs
    another way, e.g. ``python -m``); else the script's path, e.g. ``.venv/bin/dynavec-langgraph``
    in a clone whose virtualenv is not activated (what ``make demo`` runs).
    """
    script = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if script is None or script.name != PROG or not script.is_file():
        return PROG
    found = shutil.which(PROG)
    if found is not None and Path(found).resolve() == script.resolve():
        return PROG
    relative = os.path.relpath(script)
    if relative.startswith(".."):
        return shlex.quote(str(script.resolve()))
    return shlex.quote(relative if os.sep in relative else f".{os.sep}{relative}")


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
    except RecursionError:
        from dynavec_langgraph._storable import MAX_NESTING

        raise CliError(
            f"the decision is JSON nested too deeply to be read ({len(text)} characters); "
            f"nothing was sent: give a flatter value (the checkpointers store {MAX_NESTING} "
            "levels at most)"
        ) from None
    except ValueError:
        raise CliError(
            f"the decision {text!r} is not approve, reject or JSON; for example --decision "
            'approve, or --decision \'{"decision": "rejected", "comment": "too much"}\''
        ) from None
    if value is None:
        raise CliError("the decision cannot be null: give approve, reject or a JSON value")
    return value


def _sqlite_path(db: str) -> str | None:
    """The SQLite file of ``--db`` (a path or ``sqlite:///PATH``); ``None`` for PostgreSQL."""
    from dynavec_langgraph.savers import parse_database_url

    parsed = parse_database_url(db)
    if parsed is not None and parsed[0] == "postgres":
        return None
    if parsed is not None and parsed[0] == "sqlite":
        return parsed[1]
    if "://" in db:
        scheme = db.split("://", 1)[0]
        raise CliError(
            f"unknown database scheme {scheme!r} in --db {db!r}: use a SQLite file path, "
            "sqlite:///PATH or a postgresql:// URI"
        )
    return db


@overload
def open_saver(
    db: str, *, must_exist: bool, read_only: Literal[False] = False
) -> AbstractContextManager[BaseCheckpointSaver[Any]]: ...
@overload
def open_saver(
    db: str, *, must_exist: bool, read_only: Literal[True]
) -> AbstractContextManager[BaseCheckpointSaver[Any] | None]: ...
def open_saver(
    db: str, *, must_exist: bool, read_only: bool = False
) -> AbstractContextManager[BaseCheckpointSaver[Any] | None]:
    """The checkpointer of ``--db`` (a SQLite file or a PostgreSQL URI), closed on exit.

    With ``read_only`` nothing is created or written (no tables, no journal files): a
    database without checkpoint tables gives ``None`` (no threads there).

    Raises:
        CliError: an unknown scheme, a missing SQLite file (``must_exist``), or a database
            that cannot be opened.
    """
    path = _sqlite_path(db)
    if path is not None and must_exist and not Path(path).is_file():
        raise CliError(
            f"no SQLite database at {path!r}: check --db, or start a thread with "
            f"`{invocation()} demo --db {shlex.quote(db)}`"
        )
    if read_only:
        return _open_read_only(db, path)
    return _open_writable(db, path)


@contextmanager
def _open_read_only(db: str, path: str | None) -> Iterator[BaseCheckpointSaver[Any] | None]:
    from dynavec_langgraph._extras import missing_extra, missing_package
    from dynavec_langgraph._persistence.connections import PG_PACKAGES
    from dynavec_langgraph._persistence.serde import safe_serializer
    from dynavec_langgraph.savers import masked_url

    if path is not None:
        try:
            from langgraph.checkpoint.sqlite import SqliteSaver
        except ImportError:
            raise missing_extra(
                "--db (a SQLite file)", "langgraph-checkpoint-sqlite", "sqlite"
            ) from None

        uri = Path(path).resolve().as_uri() + "?mode=ro"
        try:
            conn = sqlite3.connect(uri, uri=True, check_same_thread=False)
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        except sqlite3.Error as error:
            raise CliError(f"cannot read SQLite file {path!r}: {error}") from None
        with closing(conn):
            yield SqliteSaver(conn, serde=safe_serializer()) if "checkpoints" in tables else None
        return
    try:
        import psycopg
        from langgraph.checkpoint.postgres import PostgresSaver
        from psycopg.rows import dict_row
    except ImportError as error:
        package = missing_package(error, "langgraph-checkpoint-postgres", *PG_PACKAGES)
        raise missing_extra("--db (a PostgreSQL URI)", package, "postgres") from None

    try:
        conn_pg = psycopg.connect(db, autocommit=True, row_factory=dict_row)
    except psycopg.Error as error:
        raise CliError(f"cannot connect to PostgreSQL at {masked_url(db)}: {error}") from None
    with conn_pg:
        row = conn_pg.execute("SELECT to_regclass('checkpoints') IS NOT NULL AS ok").fetchone()
        yield PostgresSaver(conn_pg, serde=safe_serializer()) if row and row["ok"] else None


@contextmanager
def _open_writable(db: str, path: str | None) -> Iterator[BaseCheckpointSaver[Any]]:
    from dynavec_langgraph.savers import ConnectionSaver, resolve_checkpointer, sqlite_url

    try:
        saver = resolve_checkpointer(db if path is None else sqlite_url(path))
    except CheckpointerConfigError as error:
        raise CliError(str(error)) from None
    if not isinstance(saver, ConnectionSaver):  # pragma: no cover - strings always open one
        raise CliError(f"cannot open --db {db!r}")
    with saver:
        yield saver


def demo_agent(saver: BaseCheckpointSaver[Any]) -> ReActAgent:
    """The demo agent (``demo_model()``, the demo tools) on ``saver``."""
    from dynavec_langgraph._agent import ReActAgent
    from dynavec_langgraph.demo import DEMO_SYSTEM_PROMPT, DEMO_TOOLS, demo_model

    return ReActAgent(
        demo_model(), DEMO_TOOLS, system_prompt=DEMO_SYSTEM_PROMPT, checkpointer=saver
    )


def _graph(spec: str | None) -> Graph:
    """``--graph MODULE:ATTR``, or the demo agent by default."""
    from dynavec_langgraph._inbox import load_graph
    from dynavec_langgraph.demo import create_demo_agent

    return load_graph(spec) if spec is not None else create_demo_agent()


def _resume_command(db: str, thread_id: str, decision: str | None = "approve") -> str:
    command = f"{invocation()} resume --db {shlex.quote(db)} --thread {shlex.quote(thread_id)}"
    return command if decision is None else f"{command} --decision {decision}"


# --- output ------------------------------------------------------------------------------


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _show_pause(result: AgentResult, out: TextIO) -> None:
    from dynavec_langgraph.interrupt import interrupt_fields, review_digest

    info = result.interrupt_payload or {}
    pending = info.get("pending") or [info]
    for item in pending:
        fields = interrupt_fields(item)
        call = fields.tool_call or {}
        where = f" (tool call {call.get('name')} {call.get('id')})" if call else ""
        digest = review_digest(item)
        where += f", review digest {digest}" if digest else ""
        print(f"Paused at {fields.node_id!r}{where}.", file=out)
        print(f"  payload: {_dump(fields.payload)}", file=out)


def _show_answer(result: AgentResult, out: TextIO) -> None:
    for step in result.steps:
        for call, observation in zip(step.tool_calls, step.observations, strict=False):
            print(f"  {call.name}({call.arguments}) -> {observation}", file=out)
    print(f"Answer: {result.output}", file=out)


_PROMPT: Final = "Decision (approve / reject / JSON): "
_DECISION_HINT: Final = (
    'Answer approve or reject, or JSON such as {"decision": "rejected", "comment": "too much"}; '
    "Ctrl-D leaves the thread paused."
)


class _Stopped(Exception):
    """The person left the prompt (Ctrl-C or Ctrl-D) without a decision."""


def _prompt(out: TextIO) -> Any:
    """Ask for a decision until one parses; :class:`_Stopped` on Ctrl-C / Ctrl-D."""
    while True:
        try:  # a Ctrl-C right after the prompt is shown, before the read starts, is the same
            print(_PROMPT, end="", file=out, flush=True)
            line = sys.stdin.readline()
        except KeyboardInterrupt:
            raise _Stopped("Ctrl-C") from None
        if not line:
            raise _Stopped("Ctrl-D")
        try:
            return parse_decision(line.strip())
        except CliError as error:
            print(error, file=out)
            print(_DECISION_HINT, file=out)


# --- the commands --------------------------------------------------------------------------


def _resume_once(agent: ReActAgent, thread_id: str, decision: Any) -> AgentResult:
    """The guarded resume (``ReActAgent.resume``); its errors are printed as they are."""
    return agent.resume(thread_id=thread_id, human_decision=decision)


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
    """Show each pause, answer it (flag, then prompt), and print the final answer.

    On a terminal a decision the pause refuses is asked again; Ctrl-C or Ctrl-D at the prompt
    leaves the thread paused and prints the command that finishes it.
    """
    while result.termination_reason == "interrupted":
        _show_pause(result, out)
        asking = decision is None and interactive and sys.stdin.isatty()
        if asking:
            try:
                decision = _prompt(out)
            except _Stopped as stopped:
                print(f"\n({stopped}) Thread {thread_id!r} stays paused. Finish it with:", file=out)
                print(f"  {_resume_command(db, thread_id, None)}", file=out)
                print("(it asks for the decision; or add --decision approve)", file=out)
                return 130 if str(stopped) == "Ctrl-C" else 0
        if decision is None:
            print(f"Thread {thread_id!r} is paused. Resume it with:", file=out)
            print(f"  {_resume_command(db, thread_id)}", file=out)
            return 0
        print(f"Resuming with {_dump(decision)}.", file=out)
        try:
            result = _resume_once(agent, thread_id, decision)
        except InvalidDecisionError as error:
            if not asking:
                raise
            print(_for_the_cli(str(error)), file=out)
            print(_DECISION_HINT, file=out)
            result = _paused_now(agent, thread_id)  # the same approval, asked again
        decision = None
    _show_answer(result, out)
    return 0


def _paused_now(agent: ReActAgent, thread_id: str) -> AgentResult:
    from dynavec_langgraph._inbox import read_thread

    return _paused_result(agent, read_thread(agent.graph, thread_id), thread_id)


DEMO_THREAD: Final = "demo"
"""The thread ``demo`` uses when no ``--thread`` is given (one per database, reused)."""


def cmd_demo(args: argparse.Namespace, out: TextIO) -> int:
    decision = parse_decision(args.decision) if args.decision is not None else None
    reuse = args.thread is None
    thread_id: str = args.thread or DEMO_THREAD
    args.thread = thread_id  # for the hints of main()
    with open_saver(args.db, must_exist=False) as saver:
        agent = demo_agent(saver)
        print(f"Thread {thread_id!r} in {args.db}", file=out)
        print(f"User: {args.message}", file=out)
        try:
            result = agent.run(args.message, thread_id=thread_id)
        except ThreadPausedError:
            if not reuse:
                raise CliError(
                    f"thread {thread_id!r} is paused and waits for a decision; answer it first: "
                    f"{_resume_command(args.db, thread_id)}"
                ) from None
            print(
                "This request waits: an earlier demo left the thread paused. Answer that "
                "first, then run the demo again.",
                file=out,
            )
            result = _paused_now(agent, thread_id)
        return _drive(agent, result, args.db, thread_id, decision, interactive=True, out=out)


def _bound(decision: Any, digest: str | None) -> Any:
    """``--digest``: the decision bound to the pause the person read (docs/approval-uis.md)."""
    if digest is None:
        return decision
    from dynavec_langgraph.interrupt import bind_decision

    if decision is None:
        raise CliError("--digest goes with a decision: add --decision (or --approve / --reject)")
    return bind_decision(decision, digest)


def cmd_resume(args: argparse.Namespace, out: TextIO) -> int:
    decision = parse_decision(args.decision) if args.decision is not None else None
    decision = _bound(decision, args.digest)
    with open_saver(args.db, must_exist=True) as saver:
        agent = demo_agent(saver)
        from dynavec_langgraph._inbox import read_thread
        from dynavec_langgraph._resuming.answers import MISSING

        # read to show the pause and ask for the decision; every check is the guarded
        # resume's, under the thread's lock (ReActAgent.resume)
        paused = read_thread(agent.graph, args.thread)
        if not paused.interrupts:
            result = _resume_once(agent, args.thread, MISSING if decision is None else decision)
            return _drive(agent, result, args.db, args.thread, None, interactive=True, out=out)
        if decision is None and not sys.stdin.isatty():
            raise CliError(
                f"no decision: add --decision approve, --decision reject or --decision JSON "
                f"(thread {args.thread!r} stays paused)"
            )
        result = _paused_result(agent, paused, args.thread)
        return _drive(agent, result, args.db, args.thread, decision, interactive=True, out=out)


def _paused_result(agent: ReActAgent, snapshot: StateSnapshot, thread_id: str) -> AgentResult:
    from dynavec_langgraph._view import build_result

    return build_result(
        dict(snapshot.values),
        snapshot.interrupts,
        thread_id=thread_id,
        max_steps=agent.max_steps,
        system_prompt=agent.system_prompt,
    )


def _inbox_source(args: argparse.Namespace) -> str:
    """``--db`` or ``--server`` (exactly one); ``--graph`` goes with the first,
    ``--assistant`` with the second."""
    _db_or_server(args)
    if args.server is not None and args.graph is not None:
        raise CliError(
            "--graph is for --db; with --server the server runs its graph "
            "(pick it with --assistant ID)"
        )
    if args.db is not None and args.assistant is not None:
        raise CliError("--assistant is for --server; with --db pass --graph MODULE:ATTR")
    return str(args.db if args.db is not None else args.server)


def _db_or_server(args: argparse.Namespace) -> None:
    """Exactly one of ``--db`` and ``--server`` (a URL); ``--token`` only with ``--server``."""
    if (args.db is None) == (args.server is None):
        raise CliError("give --db PATH_OR_URI (a checkpointer) or --server URL (a deployment)")
    if args.server is not None:
        from dynavec_langgraph.remote import check_server_url

        check_server_url(args.server, "--server")
    if args.db is not None and getattr(args, "token", None) is not None:
        raise CliError("--token is for --server (a deployment with custom auth)")


def _server_headers(args: argparse.Namespace) -> dict[str, str] | None:
    """``Authorization: Bearer TOKEN`` for ``--server``: ``--token``, else :data:`TOKEN_ENV`."""
    token = getattr(args, "token", None) or os.environ.get(TOKEN_ENV)
    return {"Authorization": f"Bearer {token}"} if token else None


def cmd_inbox_list(args: argparse.Namespace, out: TextIO) -> int:
    from dynavec_langgraph._inbox import graph_on, list_pending
    from dynavec_langgraph._remote_inbox import ServerInbox

    where = _inbox_source(args)
    unreadable: list[str] = []
    if args.server is not None:
        rows = ServerInbox(args.server, args.assistant, headers=_server_headers(args)).pending()
    else:
        graph = _graph(args.graph)
        with open_saver(args.db, must_exist=True, read_only=True) as saver:
            rows = list_pending(graph_on(graph, saver), saver, unreadable) if saver else []
    for problem in unreadable:
        print(f"{PROG}: warning: {problem}", file=sys.stderr)
    if args.json:
        print(_dump([r.as_dict() for r in rows]), file=out)
        return 0
    if not rows:
        print(f"No paused threads in {where}.", file=out)
        return 0
    print(f"{len(rows)} pending approval(s) in {where}:", file=out)
    for r in rows:
        tool = f"  tool {r.tool_call.get('name')}" if r.tool_call else ""
        digest = f"digest {r.review_digest}  " if r.review_digest else ""
        print(
            f"{r.thread_id}  {r.node_id}  since {r.since}{tool}  interrupt {r.interrupt_id}  "
            f"{digest}payload {_dump(r.payload)}",
            file=out,
        )
    return 0


def _answer_hint(args: argparse.Namespace, pending: int) -> str:
    source = ["--db", args.db] if args.db is not None else ["--server", args.server]
    parts = ["inbox", "answer", *source, "--thread", args.thread]
    if args.graph is not None:
        parts += ["--graph", args.graph]
    if args.assistant is not None:
        parts += ["--assistant", args.assistant]
    if pending > 1:
        parts += ["--node", "NODE_ID_OR_INTERRUPT_ID"]
    return " ".join([invocation(), *(shlex.quote(p) for p in parts)]) + " --approve"


def cmd_inbox_answer(args: argparse.Namespace, out: TextIO) -> int:
    from dynavec_langgraph._inbox import graph_on, resume_graph
    from dynavec_langgraph._remote_inbox import ServerInbox
    from dynavec_langgraph._view import build_result

    if args.link is not None:
        return _answer_link(args, out)
    if args.thread is None:
        raise CliError("give --thread ID (the paused thread), or --link TOKEN")
    if args.approve:
        decision: Any = "approved"
    elif args.reject:
        decision = "rejected"
    else:
        decision = parse_decision(args.decision)
    decision = _bound(decision, args.digest)
    _inbox_source(args)
    if args.server is not None:
        which = f" ({args.node})" if args.node is not None else ""
        inbox = ServerInbox(args.server, args.assistant, headers=_server_headers(args))
        result = inbox.answer(
            args.thread,
            decision,
            args.node,
            before=lambda: print(
                f"Answering thread {args.thread!r}{which} with {_dump(decision)}.", file=out
            ),
            approver=args.approver,
        )
        return _show_answered(args, result, out)
    graph = _graph(args.graph)
    which = f" ({args.node})" if args.node is not None else ""
    with open_saver(args.db, must_exist=True) as saver:
        from dynavec_langgraph._inbox import recording_on

        after = resume_graph(
            recording_on(graph_on(graph, saver), saver, args.thread),
            saver,
            args.thread,
            decision,
            args.node,
            before=lambda: print(
                f"Answering thread {args.thread!r}{which} with {_dump(decision)}.", file=out
            ),
            approver=args.approver,
        )
    result = build_result(
        dict(after.values), after.interrupts, thread_id=args.thread, max_steps=0, system_prompt=None
    )
    return _show_answered(args, result, out)


def _answer_link(args: argparse.Namespace, out: TextIO) -> int:
    """``inbox answer --server URL --link TOKEN``: the link's pause, answered as it says."""
    from dynavec_langgraph._remote_inbox import ServerInbox
    from dynavec_langgraph.links import read_link

    _inbox_source(args)
    if args.server is None:
        raise CliError(
            "--link answers through a deployment (--server URL): the server's graph checks the "
            "link and binds its single use in the server's store"
        )
    for given, flag in ((args.approver, "--as"), (args.digest, "--digest"), (args.node, "--node")):
        if given is not None:
            raise CliError(f"{flag} cannot go with --link: the link names its pause and approver")
    claims = read_link(args.link)
    if args.thread is None:
        args.thread = claims.thread_id
    inbox = ServerInbox(args.server, args.assistant, headers=_server_headers(args))
    result = inbox.answer(
        args.thread,
        claims.decision,
        None,
        before=lambda: print(
            f"Answering thread {args.thread!r} with the link of {claims.approver!r} "
            f"({_dump(claims.decision)}).",
            file=out,
        ),
        link=args.link,
    )
    return _show_answered(args, result, out)


def cmd_inbox_history(args: argparse.Namespace, out: TextIO) -> int:
    from dynavec_langgraph._inbox import thread_history

    _inbox_source(args)
    if args.server is not None:
        from dynavec_langgraph.remote import RemoteReActAgent

        agent = RemoteReActAgent(args.server, "-", timeout=30, headers=_server_headers(args))
        try:
            events = agent.audit(args.thread)
        finally:
            agent.close()
    else:
        with open_saver(args.db, must_exist=True) as saver:
            events = thread_history(saver, args.thread)
    if args.json:
        print(_dump([e.as_dict() for e in events]), file=out)
        return 0
    if not events:
        print(
            f"No audit trail for thread {args.thread!r} (the agent records one with "
            "audit=True or notify=...).",
            file=out,
        )
        return 0
    print(
        f"{len(events)} audit entr{'y' if len(events) == 1 else 'ies'} of {args.thread!r}:",
        file=out,
    )
    for e in events:
        who = f" by {e.who}" if e.who else ""
        decision = f" decision {_dump(e.decision)}" if e.decision is not None else ""
        note = f" ({e.comment})" if e.comment and e.comment != e.outcome else ""
        print(
            f"{e.at}  {e.kind}  {e.node_id or '-'}  via {e.surface}{who}: {e.outcome}"
            f"{decision}{note}  interrupt {e.interrupt_id or '-'}",
            file=out,
        )
    return 0


def cmd_inbox_notify(args: argparse.Namespace, out: TextIO) -> int:
    from dynavec_langgraph._audit import NOTIFY_ENV
    from dynavec_langgraph._inbox import notify_pending

    url = args.webhook or os.environ.get(NOTIFY_ENV)
    if not url:
        raise CliError(f"no receiver: give --webhook URL (or set {NOTIFY_ENV})")
    if not url.startswith(("http://", "https://")):
        raise CliError(webhook_url_text(f"--webhook {url!r}"))
    if args.backoff <= 0:
        raise CliError(f"--backoff {args.backoff}: give a number of seconds above 0")
    with open_saver(args.db, must_exist=True) as saver:
        done = notify_pending(saver, url, args.thread, backoff=args.backoff, force=args.now)
    sent = sum(d for d, _ in done.values())
    failed = sum(f for _, f in done.values())
    if args.json:
        print(_dump({"delivered": sent, "failed": failed, "threads": done}), file=out)
        return 1 if failed else 0
    print(f"Delivered {sent} notification(s), {failed} failed.", file=out)
    if failed:
        print(
            f"The failed ones stay in the outbox and are tried again after the back-off "
            f"({args.backoff:g} s, doubled after each failed try): run this command again.",
            file=out,
        )
        return 1
    return 0


def cmd_inbox_expire(args: argparse.Namespace, out: TextIO) -> int:
    """``inbox expire``: settle the expired approvals (run it from cron)."""
    from dynavec_langgraph._inbox import expire_pending, graph_on

    graph = _graph(args.graph)
    with open_saver(args.db, must_exist=True) as saver:
        rows = expire_pending(graph_on(graph, saver), saver)
    if args.json:
        print(_dump([r.as_dict() for r in rows]), file=out)
    else:
        for r in rows:
            state = f"not settled: {r.error}" if r.error else "settled"
            print(f"{r.thread_id}  {r.node_id}  expired at {r.expires_at}  {state}", file=out)
        print(f"{sum(1 for r in rows if not r.error)} expired approval(s) settled.", file=out)
    return 2 if any(r.error for r in rows) else 0


@contextmanager
def _trail_source(db: str) -> Iterator[BaseCheckpointSaver[Any] | None]:
    """The checkpointer of ``audit verify --db``, read only: a SQLite file or a PostgreSQL URI
    (``None``: no checkpoint tables there), or a ``dynamodb://`` table (never created)."""
    from dynavec_langgraph.savers import dynamodb_options, parse_database_url, resolve_checkpointer

    parsed = parse_database_url(db)
    if parsed is None or parsed[0] != "dynamodb":
        with open_saver(db, must_exist=True, read_only=True) as saver:
            yield saver
        return
    from dynavec_langgraph.dynamodb import DynamoDBCheckpointer

    try:
        options = dynamodb_options(db)
        options.setdefault("create_table", False)
        yield resolve_checkpointer(DynamoDBCheckpointer(**options))
    except CheckpointerConfigError as error:
        raise CliError(str(error)) from None


def _entries(n: int, what: str = "entr") -> str:
    return f"{n} {what}{'y' if n == 1 else 'ies'}"


def cmd_audit_verify(args: argparse.Namespace, out: TextIO) -> int:
    """``audit verify``: check the hash chain of the audit trails; exit 1 on tampering."""
    from dynavec_langgraph._inbox import verify_trails
    from dynavec_langgraph.savers import masked_url

    _db_or_server(args)
    if args.server is not None:  # the server's store, read through its API
        from dynavec_langgraph.remote import RemoteReActAgent

        with RemoteReActAgent(args.server, "-", timeout=30, headers=_server_headers(args)) as agent:
            threads = agent.verify_audit(args.thread).threads
    else:
        with _trail_source(args.db) as saver:
            threads = verify_trails(saver, args.thread).threads if saver is not None else ()
    ok = all(t.ok for t in threads)
    if args.json:
        print(_dump({"ok": ok, "threads": [t.as_dict() for t in threads]}), file=out)
        return 0 if ok else 1
    where = masked_url(args.db) if args.db is not None else args.server
    if not threads or (
        args.thread is not None and not (threads[0].chained or threads[0].unchained)
    ):
        which = f" for thread {args.thread!r}" if args.thread is not None else ""
        print(f"No audit trail{which} in {where}.", file=out)
        return 0
    for t in threads:
        for problem in t.problems:
            print(f"TAMPERED {problem}", file=out)
        before = f", {t.unchained} unchained (written before the chain)" if t.unchained else ""
        head = f", last entry {t.head_seq} hash {t.head_hash}" if t.head_seq is not None else ""
        state = "intact" if t.ok else f"{len(t.problems)} problem(s)"
        print(f"{t.thread_id}: {_entries(t.chained)} chained{before}{head}: {state}", file=out)
    chained = sum(t.chained for t in threads)
    unchained = sum(t.unchained for t in threads)
    before = f", {unchained} unchained (written before the chain)" if unchained else ""
    if ok:
        print(
            f"OK: {len(threads)} thread(s), {_entries(chained)} chained, intact{before}.",
            file=out,
        )
        return 0
    problems = sum(len(t.problems) for t in threads)
    bad = sum(1 for t in threads if not t.ok)
    print(f"TAMPERED: {problems} problem(s) in {bad} of {len(threads)} thread(s).", file=out)
    return 1


def _show_answered(args: argparse.Namespace, result: AgentResult, out: TextIO) -> int:
    if result.termination_reason == "interrupted":
        _show_pause(result, out)
        pending = len((result.interrupt_payload or {}).get("pending") or [None])
        print(f"Thread {args.thread!r} is still paused. Answer it with:", file=out)
        print(f"  {_answer_hint(args, pending)}", file=out)
        return 0
    _show_answer(result, out)
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``dynavec-langgraph``."""
    parser = argparse.ArgumentParser(
        prog=PROG, description="dynavec's human-in-the-loop agent on LangGraph."
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
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
    demo.add_argument(
        "--thread",
        help=f"thread id (default {DEMO_THREAD!r}: a paused one is answered first, a finished "
        "one gets the message as a follow-up)",
    )
    demo.add_argument("--message", default=DEFAULT_MESSAGE, help="the user message")
    demo.add_argument("--decision", help=f"{decision_help}; default: prompt on a terminal")
    demo.set_defaults(handler=cmd_demo)

    resume = commands.add_parser("resume", help="answer a paused demo thread and finish it")
    resume.add_argument("--db", default=DEFAULT_DB, help=db_help)
    resume.add_argument("--thread", required=True, help="the paused thread's id")
    resume.add_argument("--decision", help=f"{decision_help}; default: prompt on a terminal")
    digest_help = (
        "the review digest of the pause you read (shown by inbox list / when paused): the "
        "decision is refused if the thread is paused at anything else now"
    )
    resume.add_argument("--digest", metavar="DIGEST", help=digest_help)
    resume.set_defaults(handler=cmd_resume)

    inbox = commands.add_parser(
        "inbox",
        help="pending approvals of a checkpointer",
        description="List and answer the pending approvals of a checkpointer. --graph names "
        "the agent that paused the threads (MODULE:ATTR or FILE.py:ATTR, a compiled graph run "
        "on a copy bound to --db); a thread waiting for a tool that graph lacks is refused.",
    )
    inbox_commands = inbox.add_subparsers(dest="inbox_command", required=True, metavar="ACTION")
    server_help = (
        "a LangGraph API server (e.g. http://127.0.0.1:2024) instead of --db: read and answered "
        "through its API"
    )
    assistant_help = (
        "with --server: only threads of this graph id / assistant id, answered with it "
        "(default: every thread, each with the assistant that ran it)"
    )
    token_help = (
        f"with --server: sent as 'Authorization: Bearer TOKEN' (default: ${TOKEN_ENV}); on a "
        "server with custom auth the signed-in user is the approver"
    )
    listing = inbox_commands.add_parser("list", help="list the paused threads")
    listing.add_argument("--db", help=db_help)
    listing.add_argument("--server", metavar="URL", help=server_help)
    listing.add_argument("--assistant", metavar="ID", help=assistant_help)
    listing.add_argument("--token", metavar="TOKEN", help=token_help)
    listing.add_argument("--graph", metavar="SPEC", help=graph_help)
    listing.add_argument("--json", action="store_true", help="print JSON")
    listing.set_defaults(handler=cmd_inbox_list)
    answer = inbox_commands.add_parser("answer", help="answer one paused thread")
    answer.add_argument("--db", help=db_help)
    answer.add_argument("--server", metavar="URL", help=server_help)
    answer.add_argument("--assistant", metavar="ID", help=assistant_help)
    answer.add_argument("--token", metavar="TOKEN", help=token_help)
    answer.add_argument("--thread", help="the paused thread's id (with --link: the link's)")
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
    choice.add_argument(
        "--link",
        metavar="TOKEN",
        help="with --server: a signed approval link's token (its decision and approver)",
    )
    answer.add_argument(
        "--as",
        dest="approver",
        metavar="NAME",
        help="who answers (checked against the approval's approvers; needed when it has some, "
        "except on a server with custom auth, where the signed-in user answers)",
    )
    answer.add_argument("--digest", metavar="DIGEST", help=digest_help)
    answer.set_defaults(handler=cmd_inbox_answer)
    history = inbox_commands.add_parser(
        "history", help="the audit trail of one thread (decisions, refusals, pauses)"
    )
    history.add_argument("thread", help="the thread's id")
    history.add_argument("--db", help=db_help)
    history.add_argument("--server", metavar="URL", help=server_help)
    history.add_argument("--token", metavar="TOKEN", help=token_help)
    history.add_argument("--json", action="store_true", help="print JSON")
    history.set_defaults(handler=cmd_inbox_history, graph=None, assistant=None)
    notify = inbox_commands.add_parser(
        "notify",
        help="send the notifications still in the outbox (the sweeper; run it from cron)",
    )
    notify.add_argument("--db", required=True, help=db_help)
    notify.add_argument("--webhook", metavar="URL", help="where to POST them (JSON)")
    notify.add_argument("--thread", help="only this thread (default: every thread)")
    notify.add_argument(
        "--backoff",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="wait this long after a failed try before the next (doubled each time; default 30)",
    )
    notify.add_argument("--now", action="store_true", help="also send those still backing off")
    notify.add_argument("--json", action="store_true", help="print JSON")
    notify.set_defaults(handler=cmd_inbox_notify)
    expire = inbox_commands.add_parser(
        "expire", help="settle the approvals whose deadline has passed (run it from cron)"
    )
    expire.add_argument("--db", required=True, help=db_help)
    expire.add_argument("--graph", metavar="SPEC", help=graph_help)
    expire.add_argument("--json", action="store_true", help="print JSON")
    expire.set_defaults(handler=cmd_inbox_expire)

    audit = commands.add_parser(
        "audit",
        help="the audit trails of a checkpointer",
        description="Check the audit trails: every entry carries the hash of the one before it "
        "in its thread.",
    )
    audit_commands = audit.add_subparsers(dest="audit_command", required=True, metavar="ACTION")
    verify = audit_commands.add_parser(
        "verify",
        help="name every entry edited, deleted, reordered or inserted (exit 1 if any)",
    )
    verify.add_argument("--db", help=f"{db_help}, or dynamodb://TABLE?region=... (read only)")
    verify.add_argument(
        "--server",
        metavar="URL",
        help="a LangGraph API server instead of --db: the trails of its store, read through "
        "its API (--thread: the thread id its clients use)",
    )
    verify.add_argument("--token", metavar="TOKEN", help=token_help)
    verify.add_argument("--thread", help="only this thread (default: every thread with a trail)")
    verify.add_argument("--json", action="store_true", help="print JSON")
    verify.set_defaults(handler=cmd_audit_verify)
    return parser


# What the package's errors say about its Python API, said for the command line instead.
_PYTHON_ADVICE: Final = [
    (re.compile(r"; send it a new message \(run\(\)\) to continue it"), "; send it a new message"),
    (
        re.compile(
            r"Continue it with ReActAgent\.resume\(thread_id=\.\.\.\) or "
            r"graph\.invoke\(None, config\)"
        ),
        "Continue it with the command in the hint below",
    ),
    (re.compile(r" ?Call resume\(thread_id=.*?\) to answer it; run\(\) changed nothing\."), ""),
]


def _for_the_cli(message: str) -> str:
    """``message`` without advice on Python calls (the hint line gives the command)."""
    for pattern, replacement in _PYTHON_ADVICE:
        message = pattern.sub(replacement, message)
    return message


def _hint(args: argparse.Namespace, error: Exception) -> str | None:
    """What to run next, for an error about a thread of ``--db``."""
    db = getattr(args, "db", None)
    thread = getattr(args, "thread", None)
    if db is None:
        return None
    quoted = shlex.quote(db)
    graph = getattr(args, "graph", None)  # inbox answer --graph: the agent that paused it
    answer = f"{invocation()} inbox answer --db {quoted}" + (
        f" --graph {shlex.quote(graph)}" if graph is not None else ""
    )
    if isinstance(error, ApproverRequiredError) and thread is not None:
        return (
            f"the thread stays paused; answer it as a named approver: `{answer} --thread "
            f"{shlex.quote(thread)} --approve --as NAME`"
        )
    if isinstance(error, InvalidDecisionError) and thread is not None and graph is not None:
        return (
            f"the thread stays paused; answer it with `{answer} --thread {shlex.quote(thread)} "
            "--approve` (or --reject, --decision JSON)"
        )
    if isinstance(error, InvalidDecisionError) and thread is not None:
        return (
            f"the thread stays paused; answer it with `{_resume_command(db, thread, None)}` "
            "(on a terminal it asks), or --decision approve / --decision reject"
        )
    if isinstance(error, ThreadPausedError) and thread is not None:
        return f"answer it with `{_resume_command(db, thread)}`"
    if not isinstance(error, NothingToResumeError):
        return None
    if thread is not None and "stopped before" in str(error):
        return f"`{_resume_command(db, thread, None)}` finishes the interrupted run"
    return (
        f"`{invocation()} inbox list --db {quoted}` shows the paused threads; `{invocation()} "
        f"demo --db {quoted} --thread ID --message TEXT` sends a thread a new message"
    )


def _stop_on_closed_pipe() -> int:
    """The reader of stdout went away (``... | head``): stop quietly, as ``cat`` does."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())  # nothing more can be written; no error at exit
    os.close(devnull)
    return 141  # 128 + SIGPIPE, what a shell reports for a program a closed pipe stopped


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code."""
    args = build_parser().parse_args(argv)
    try:
        code: int = args.handler(args, sys.stdout)
        sys.stdout.flush()
    except BrokenPipeError:
        return _stop_on_closed_pipe()
    except KeyboardInterrupt:
        print(f"\n{PROG}: interrupted (Ctrl-C): the thread keeps what was saved", file=sys.stderr)
        db, thread = getattr(args, "db", None), getattr(args, "thread", None)
        if db is not None and thread is not None:
            print(
                f"{PROG}: hint: `{_resume_command(db, thread, None)}` shows where thread "
                f"{thread!r} stopped and finishes it",
                file=sys.stderr,
            )
        return 130
    except (CliError, DynavecError) as error:
        print(f"{PROG}: error: {_for_the_cli(str(error))}", file=sys.stderr)
        hint = _hint(args, error)
        if hint:
            print(f"{PROG}: hint: {hint}", file=sys.stderr)
        return 2
    return code


if __name__ == "__main__":
    sys.exit(main())
