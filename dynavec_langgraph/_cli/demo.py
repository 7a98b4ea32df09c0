"""``demo`` and ``resume``: the demo agent on ``--db``, each pause shown and answered (a flag,
or the prompt on a terminal), the final answer printed."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any, Final, TextIO

from dynavec_langgraph._cli.common import (
    CliError,
    bound,
    dump,
    for_the_cli,
    parse_decision,
    resume_command,
    show_answer,
    show_pause,
)
from dynavec_langgraph._cli.db import open_saver
from dynavec_langgraph._errors import InvalidDecisionError, ThreadPausedError

# Everything that imports LangGraph is imported inside the command that needs it, so that
# `dynavec-langgraph --help` (and a mistyped command) answers at once.
if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver
    from langgraph.types import StateSnapshot

    from dynavec_langgraph._agent.agent import ReActAgent
    from dynavec_langgraph._dynavec.records import AgentResult

__all__ = [
    "DEMO_THREAD",
    "cmd_demo",
    "cmd_resume",
    "demo_agent",
]


def demo_agent(saver: BaseCheckpointSaver[Any]) -> ReActAgent:
    """The demo agent (``demo_model()``, the demo tools) on ``saver``."""
    from dynavec_langgraph._agent.agent import ReActAgent
    from dynavec_langgraph._demo import DEMO_SYSTEM_PROMPT, DEMO_TOOLS, demo_model

    return ReActAgent(
        demo_model(), DEMO_TOOLS, system_prompt=DEMO_SYSTEM_PROMPT, checkpointer=saver
    )


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
        show_pause(result, out)
        asking = decision is None and interactive and sys.stdin.isatty()
        if asking:
            try:
                decision = _prompt(out)
            except _Stopped as stopped:
                print(f"\n({stopped}) Thread {thread_id!r} stays paused. Finish it with:", file=out)
                print(f"  {resume_command(db, thread_id, None)}", file=out)
                print("(it asks for the decision; or add --decision approve)", file=out)
                return 130 if str(stopped) == "Ctrl-C" else 0
        if decision is None:
            print(f"Thread {thread_id!r} is paused. Resume it with:", file=out)
            print(f"  {resume_command(db, thread_id)}", file=out)
            return 0
        print(f"Resuming with {dump(decision)}.", file=out)
        try:
            result = _resume_once(agent, thread_id, decision)
        except InvalidDecisionError as error:
            if not asking:
                raise
            print(for_the_cli(str(error)), file=out)
            print(_DECISION_HINT, file=out)
            result = _paused_now(agent, thread_id)  # the same approval, asked again
        decision = None
    show_answer(result, out)
    return 0


def _paused_now(agent: ReActAgent, thread_id: str) -> AgentResult:
    from dynavec_langgraph._approvals.inbox import read_thread

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
                    f"{resume_command(args.db, thread_id)}"
                ) from None
            print(
                "This request waits: an earlier demo left the thread paused. Answer that "
                "first, then run the demo again.",
                file=out,
            )
            result = _paused_now(agent, thread_id)
        return _drive(agent, result, args.db, thread_id, decision, interactive=True, out=out)


def cmd_resume(args: argparse.Namespace, out: TextIO) -> int:
    decision = parse_decision(args.decision) if args.decision is not None else None
    decision = bound(decision, args.digest)
    with open_saver(args.db, must_exist=True) as saver:
        agent = demo_agent(saver)
        from dynavec_langgraph._approvals.inbox import read_thread
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
    from dynavec_langgraph._dynavec.view import build_result

    return build_result(
        dict(snapshot.values),
        snapshot.interrupts,
        thread_id=thread_id,
        max_steps=agent.max_steps,
        system_prompt=agent.system_prompt,
    )
