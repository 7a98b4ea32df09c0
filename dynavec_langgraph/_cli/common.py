"""What the commands share: the program's names and defaults, the usage error, a decision
parsed, the output, the ``--db`` / ``--server`` choice and the hint that names a command."""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TextIO

from dynavec_langgraph._names import PROG, TOKEN_ENV

# Everything that imports LangGraph is imported inside the command that needs it, so that
# `dynavec-langgraph --help` (and a mistyped command) answers at once.
if TYPE_CHECKING:
    from dynavec_langgraph._dynavec.records import AgentResult

__all__ = [
    "DEFAULT_DB",
    "DEFAULT_MESSAGE",
    "CliError",
    "bound",
    "db_or_server",
    "dump",
    "for_the_cli",
    "invocation",
    "parse_decision",
    "resume_command",
    "server_headers",
    "show_answer",
    "show_pause",
]

DEFAULT_DB: Final = "./dynavec-demo.db"
"""The SQLite file of ``--db`` when none is given."""
DEFAULT_MESSAGE: Final = "Pay 120 to landlord"
"""The demo's request when none is given."""
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


def resume_command(db: str, thread_id: str, decision: str | None = "approve") -> str:
    command = f"{invocation()} resume --db {shlex.quote(db)} --thread {shlex.quote(thread_id)}"
    return command if decision is None else f"{command} --decision {decision}"


# --- output ------------------------------------------------------------------------------


def dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def show_pause(result: AgentResult, out: TextIO) -> None:
    from dynavec_langgraph._pauses.digest import review_digest
    from dynavec_langgraph._pauses.value import interrupt_fields

    info = result.interrupt_payload or {}
    pending = info.get("pending") or [info]
    for item in pending:
        fields = interrupt_fields(item)
        call = fields.tool_call or {}
        where = f" (tool call {call.get('name')} {call.get('id')})" if call else ""
        digest = review_digest(item)
        where += f", review digest {digest}" if digest else ""
        print(f"Paused at {fields.node_id!r}{where}.", file=out)
        print(f"  payload: {dump(fields.payload)}", file=out)


def show_answer(result: AgentResult, out: TextIO) -> None:
    for step in result.steps:
        for call, observation in zip(step.tool_calls, step.observations, strict=False):
            print(f"  {call.name}({call.arguments}) -> {observation}", file=out)
    print(f"Answer: {result.output}", file=out)


def bound(decision: Any, digest: str | None) -> Any:
    """``--digest``: the decision bound to the pause the person read (docs/approval-uis.md)."""
    if digest is None:
        return decision
    from dynavec_langgraph._pauses.digest import bind_decision

    if decision is None:
        raise CliError("--digest goes with a decision: add --decision (or --approve / --reject)")
    return bind_decision(decision, digest)


def db_or_server(args: argparse.Namespace) -> None:
    """Exactly one of ``--db`` and ``--server`` (a URL); ``--token`` only with ``--server``."""
    if (args.db is None) == (args.server is None):
        raise CliError("give --db PATH_OR_URI (a checkpointer) or --server URL (a deployment)")
    if args.server is not None:
        from dynavec_langgraph._remote.requests import check_server_url

        check_server_url(args.server, "--server")
    if args.db is not None and getattr(args, "token", None) is not None:
        raise CliError("--token is for --server (a deployment with custom auth)")


def server_headers(args: argparse.Namespace) -> dict[str, str] | None:
    """``Authorization: Bearer TOKEN`` for ``--server``: ``--token``, else :data:`TOKEN_ENV`."""
    token = getattr(args, "token", None) or os.environ.get(TOKEN_ENV)
    return {"Authorization": f"Bearer {token}"} if token else None


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


def for_the_cli(message: str) -> str:
    """``message`` without advice on Python calls (the hint line gives the command)."""
    for pattern, replacement in _PYTHON_ADVICE:
        message = pattern.sub(replacement, message)
    return message
