"""``audit verify``: the hash chain of the audit trails of ``--db`` (SQLite, PostgreSQL,
``dynamodb://``) or of a deployment's store (``--server``), read only; exit 1 on tampering."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TextIO

from dynavec_langgraph._cli.common import CliError, db_or_server, dump, server_headers
from dynavec_langgraph._cli.db import open_saver
from dynavec_langgraph._errors import CheckpointerConfigError

# Everything that imports LangGraph is imported inside the command that needs it, so that
# `dynavec-langgraph --help` (and a mistyped command) answers at once.
if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver


__all__ = [
    "cmd_audit_verify",
]


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
    from dynavec_langgraph._approvals.inbox import verify_trails
    from dynavec_langgraph.savers import masked_url

    db_or_server(args)
    if args.server is not None:  # the server's store, read through its API
        from dynavec_langgraph.remote import RemoteReActAgent

        with RemoteReActAgent(args.server, "-", timeout=30, headers=server_headers(args)) as agent:
            threads = agent.verify_audit(args.thread).threads
    else:
        with _trail_source(args.db) as saver:
            threads = verify_trails(saver, args.thread).threads if saver is not None else ()
    ok = all(t.ok for t in threads)
    if args.json:
        print(dump({"ok": ok, "threads": [t.as_dict() for t in threads]}), file=out)
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
