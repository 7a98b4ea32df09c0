"""``inbox list / answer / history / notify / expire``: the pending approvals of ``--db`` (run
with the agent that paused them, ``--graph``) or of a deployment (``--server``)."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TextIO, TypeVar

from dynavec_langgraph._cli.common import (
    CliError,
    bound,
    db_or_server,
    dump,
    invocation,
    parse_decision,
    server_headers,
    show_answer,
    show_pause,
)
from dynavec_langgraph._cli.db import open_saver
from dynavec_langgraph._errors import webhook_url_text
from dynavec_langgraph._names import PROG

# Everything that imports LangGraph is imported inside the command that needs it, so that
# `dynavec-langgraph --help` (and a mistyped command) answers at once.
if TYPE_CHECKING:
    from dynavec_langgraph._approvals.inbox import Graph, PendingApproval
    from dynavec_langgraph._audit.entries import AuditEvent
    from dynavec_langgraph._dynavec.records import AgentResult
    from dynavec_langgraph._types import JSONObject

__all__ = [
    "cmd_inbox_answer",
    "cmd_inbox_expire",
    "cmd_inbox_history",
    "cmd_inbox_list",
    "cmd_inbox_notify",
]


class _Shown(Protocol):
    def as_dict(self) -> JSONObject: ...


_Row = TypeVar("_Row", bound=_Shown)


def _graph(spec: str | None) -> Graph:
    """``--graph MODULE:ATTR``, or the demo agent by default."""
    from dynavec_langgraph._approvals.inbox import load_graph
    from dynavec_langgraph._demo import create_demo_agent

    return load_graph(spec) if spec is not None else create_demo_agent()


def _inbox_source(args: argparse.Namespace) -> str:
    """``--db`` or ``--server`` (exactly one); ``--graph`` goes with the first,
    ``--assistant`` with the second."""
    db_or_server(args)
    if args.server is not None and args.graph is not None:
        raise CliError(
            "--graph is for --db; with --server the server runs its graph "
            "(pick it with --assistant ID)"
        )
    if args.db is not None and args.assistant is not None:
        raise CliError("--assistant is for --server; with --db pass --graph MODULE:ATTR")
    return str(args.db if args.db is not None else args.server)


def cmd_inbox_list(args: argparse.Namespace, out: TextIO) -> int:
    from dynavec_langgraph._approvals.inbox import graph_on, list_pending
    from dynavec_langgraph._remote.inbox import ServerInbox

    where = _inbox_source(args)
    unreadable: list[str] = []
    if args.server is not None:
        rows = ServerInbox(args.server, args.assistant, headers=server_headers(args)).pending()
    else:
        graph = _graph(args.graph)
        with open_saver(args.db, must_exist=True, read_only=True) as saver:
            rows = list_pending(graph_on(graph, saver), saver, unreadable) if saver else []
    for problem in unreadable:
        print(f"{PROG}: warning: {problem}", file=sys.stderr)
    none, heading = f"No paused threads in {where}.", f"{len(rows)} pending approval(s) in {where}:"
    return _listed(rows, args.json, none, heading, _pending_line, out)


def _listed(
    rows: Sequence[_Row],
    as_json: bool,
    none: str,
    heading: str,
    line: Callable[[_Row], str],
    out: TextIO,
) -> int:
    """Print ``rows``: as JSON, else ``none`` when there are none, else ``heading`` and a
    ``line`` each."""
    if as_json:
        print(dump([r.as_dict() for r in rows]), file=out)
    elif not rows:
        print(none, file=out)
    else:
        print(heading, file=out)
        for r in rows:
            print(line(r), file=out)
    return 0


def _pending_line(r: PendingApproval) -> str:
    tool = f"  tool {r.tool_call.get('name')}" if r.tool_call else ""
    digest = f"digest {r.review_digest}  " if r.review_digest else ""
    return (
        f"{r.thread_id}  {r.node_id}  since {r.since}{tool}  interrupt {r.interrupt_id}  "
        f"{digest}payload {dump(r.payload)}"
    )


def _event_line(e: AuditEvent) -> str:
    who = f" by {e.who}" if e.who else ""
    decision = f" decision {dump(e.decision)}" if e.decision is not None else ""
    note = f" ({e.comment})" if e.comment and e.comment != e.outcome else ""
    return (
        f"{e.at}  {e.kind}  {e.node_id or '-'}  via {e.surface}{who}: {e.outcome}"
        f"{decision}{note}  interrupt {e.interrupt_id or '-'}"
    )


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
    from dynavec_langgraph._approvals.inbox import graph_on, resume_graph
    from dynavec_langgraph._dynavec.view import build_result
    from dynavec_langgraph._remote.inbox import ServerInbox

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
    decision = bound(decision, args.digest)
    _inbox_source(args)
    which = f" ({args.node})" if args.node is not None else ""
    answering = f"Answering thread {args.thread!r}{which} with {dump(decision)}."

    def before() -> None:
        print(answering, file=out)

    if args.server is not None:
        inbox = ServerInbox(args.server, args.assistant, headers=server_headers(args))
        result = inbox.answer(
            args.thread, decision, args.node, before=before, approver=args.approver
        )
        return _show_answered(args, result, out)
    graph = _graph(args.graph)
    with open_saver(args.db, must_exist=True) as saver:
        from dynavec_langgraph._approvals.inbox import recording_on

        graph = recording_on(graph_on(graph, saver), saver, args.thread)
        after = resume_graph(
            graph, saver, args.thread, decision, args.node, before=before, approver=args.approver
        )
    result = build_result(
        dict(after.values), after.interrupts, thread_id=args.thread, max_steps=0, system_prompt=None
    )
    return _show_answered(args, result, out)


def _answer_link(args: argparse.Namespace, out: TextIO) -> int:
    """``inbox answer --server URL --link TOKEN``: the link's pause, answered as it says."""
    from dynavec_langgraph._approvals.links import read_link
    from dynavec_langgraph._remote.inbox import ServerInbox

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
    inbox = ServerInbox(args.server, args.assistant, headers=server_headers(args))
    result = inbox.answer(
        args.thread,
        claims.decision,
        None,
        before=lambda: print(
            f"Answering thread {args.thread!r} with the link of {claims.approver!r} "
            f"({dump(claims.decision)}).",
            file=out,
        ),
        link=args.link,
    )
    return _show_answered(args, result, out)


def cmd_inbox_history(args: argparse.Namespace, out: TextIO) -> int:
    from dynavec_langgraph._approvals.inbox import thread_history

    _inbox_source(args)
    if args.server is not None:
        from dynavec_langgraph.remote import RemoteReActAgent

        agent = RemoteReActAgent(args.server, "-", timeout=30, headers=server_headers(args))
        try:
            events = agent.audit(args.thread)
        finally:
            agent.close()
    else:
        with open_saver(args.db, must_exist=True) as saver:
            events = thread_history(saver, args.thread)
    none = (
        f"No audit trail for thread {args.thread!r} (the agent records one with "
        "audit=True or notify=...)."
    )
    heading = f"{len(events)} audit entr{'y' if len(events) == 1 else 'ies'} of {args.thread!r}:"
    return _listed(events, args.json, none, heading, _event_line, out)


def cmd_inbox_notify(args: argparse.Namespace, out: TextIO) -> int:
    from dynavec_langgraph._approvals.inbox import notify_pending
    from dynavec_langgraph._names import NOTIFY_ENV

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
        print(dump({"delivered": sent, "failed": failed, "threads": done}), file=out)
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
    from dynavec_langgraph._approvals.inbox import expire_pending, graph_on

    graph = _graph(args.graph)
    with open_saver(args.db, must_exist=True) as saver:
        rows = expire_pending(graph_on(graph, saver), saver)
    if args.json:
        print(dump([r.as_dict() for r in rows]), file=out)
    else:
        for r in rows:
            state = f"not settled: {r.error}" if r.error else "settled"
            print(f"{r.thread_id}  {r.node_id}  expired at {r.expires_at}  {state}", file=out)
        print(f"{sum(1 for r in rows if not r.error)} expired approval(s) settled.", file=out)
    return 2 if any(r.error for r in rows) else 0


def _show_answered(args: argparse.Namespace, result: AgentResult, out: TextIO) -> int:
    if result.termination_reason == "interrupted":
        show_pause(result, out)
        pending = len((result.interrupt_payload or {}).get("pending") or [None])
        print(f"Thread {args.thread!r} is still paused. Answer it with:", file=out)
        print(f"  {_answer_hint(args, pending)}", file=out)
        return 0
    show_answer(result, out)
    return 0
