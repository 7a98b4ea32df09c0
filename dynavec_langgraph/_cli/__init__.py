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
:mod:`dynavec_langgraph._approvals.inbox`; this package parses the arguments, prints and sets the
exit code.

``--server URL`` instead of ``--db``: the same listing and answers through a LangGraph API
deployment's API (:mod:`dynavec_langgraph._remote.inbox`; needs the ``studio`` extra), never by
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

Here: the parser and :func:`main` (the ``dynavec-langgraph`` console script's entry point); the
commands, one module per group: ``demo`` (``demo``, ``resume``), ``inbox`` (``inbox ...``),
``audit`` (``audit verify``); what they share in ``common`` and the ``--db`` checkpointer in
``db``.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from collections.abc import Sequence

from dynavec_langgraph import __version__
from dynavec_langgraph._cli.audit import cmd_audit_verify
from dynavec_langgraph._cli.common import (
    DEFAULT_DB,
    DEFAULT_MESSAGE,
    CliError,
    for_the_cli,
    invocation,
    resume_command,
)
from dynavec_langgraph._cli.demo import DEMO_THREAD, cmd_demo, cmd_resume
from dynavec_langgraph._cli.inbox import (
    cmd_inbox_answer,
    cmd_inbox_expire,
    cmd_inbox_history,
    cmd_inbox_list,
    cmd_inbox_notify,
)
from dynavec_langgraph._errors import (
    ApproverRequiredError,
    DynavecError,
    InvalidDecisionError,
    NothingToResumeError,
    ThreadPausedError,
)
from dynavec_langgraph._names import PROG, TOKEN_ENV

__all__ = ["build_parser", "main"]


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
            f"the thread stays paused; answer it with `{resume_command(db, thread, None)}` "
            "(on a terminal it asks), or --decision approve / --decision reject"
        )
    if isinstance(error, ThreadPausedError) and thread is not None:
        return f"answer it with `{resume_command(db, thread)}`"
    if not isinstance(error, NothingToResumeError):
        return None
    if thread is not None and "stopped before" in str(error):
        return f"`{resume_command(db, thread, None)}` finishes the interrupted run"
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
                f"{PROG}: hint: `{resume_command(db, thread, None)}` shows where thread "
                f"{thread!r} stopped and finishes it",
                file=sys.stderr,
            )
        return 130
    except (CliError, DynavecError) as error:
        print(f"{PROG}: error: {for_the_cli(str(error))}", file=sys.stderr)
        hint = _hint(args, error)
        if hint:
            print(f"{PROG}: hint: {hint}", file=sys.stderr)
        return 2
    return code
