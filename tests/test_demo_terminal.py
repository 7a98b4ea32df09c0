"""The demo as a newcomer meets it: ``.venv/bin/dynavec-langgraph demo`` in a clone (what
``make demo`` runs), on a real terminal (a pseudo-terminal that is the program's controlling
terminal, so Ctrl-C is the terminal's SIGINT) and without one.

Each test works in a directory laid out like a clone: ``.venv`` links to the environment that
runs the tests, and ``PATH`` does not contain its ``bin`` (a virtualenv that is not activated),
so the commands the demo prints must work as pasted there.
"""

from __future__ import annotations

import fcntl
import json
import os
import select
import shlex
import socket
import subprocess
import sys
import termios
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

SCRIPT = Path(".venv/bin/dynavec-langgraph")  # relative, as `make demo` runs it
PROMPT = "Decision (approve / reject / JSON): "
TIMEOUT = 120.0


@dataclass
class Clone:
    """A directory laid out like a clone, with the environment of a newcomer's shell."""

    root: Path
    env: dict[str, str]

    @property
    def ledger(self) -> Path:
        return self.root / "ledger.jsonl"

    def transfers(self) -> list[tuple[str, str]]:
        """``(to, decision)`` of each transfer that ran."""
        if not self.ledger.exists():
            return []
        entries = [json.loads(line) for line in self.ledger.read_text().splitlines()]
        return [(e["to"], e["decision"]) for e in entries if e["tool"] == "transfer_funds"]

    def run(self, command: str) -> subprocess.CompletedProcess[str]:
        """``command`` through bash, as pasted, without a terminal."""
        return subprocess.run(
            ["bash", "-c", command],
            cwd=self.root,
            env=self.env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )

    def paused_threads(self) -> list[str]:
        done = self.run(f"{SCRIPT} inbox list --db ./dynavec-demo.db --json")
        assert done.returncode == 0, done.stderr
        return [row["thread_id"] for row in json.loads(done.stdout)]


@pytest.fixture
def clone(tmp_path: Path) -> Iterator[Clone]:
    (tmp_path / ".venv").symlink_to(Path(sys.prefix))
    bin_dir = str(Path(sys.executable).parent)
    path = os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep) if p != bin_dir)
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL"}
    }
    env |= {"PATH": path, "DYNAVEC_DEMO_LEDGER": str(tmp_path / "ledger.jsonl")}
    yield Clone(tmp_path, env)


class Terminal:
    """A program on a pseudo-terminal: its controlling terminal, its stdin, stdout and stderr."""

    def __init__(self, clone: Clone, *args: str) -> None:
        self.controller, terminal = os.openpty()
        self.proc = subprocess.Popen(
            [str(SCRIPT), *args],
            cwd=clone.root,
            env=clone.env | {"TERM": "dumb"},
            stdin=terminal,
            stdout=terminal,
            stderr=terminal,
            start_new_session=True,
            preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0),
        )
        os.close(terminal)
        self.screen = ""

    def wait_for(self, text: str, count: int = 1) -> None:
        """Read the screen until ``text`` was shown ``count`` times."""
        deadline = time.monotonic() + TIMEOUT
        while self.screen.count(text) < count:
            if time.monotonic() > deadline:
                raise AssertionError(f"never saw {text!r} x{count}; the screen:\n{self.screen}")
            self._read(0.5)

    def _read(self, timeout: float) -> bool:
        ready, _, _ = select.select([self.controller], [], [], timeout)
        if not ready:
            return True
        try:
            data = os.read(self.controller, 65536)
        except OSError:  # the program exited and closed the terminal
            return False
        if not data:
            return False
        self.screen += data.decode(errors="replace").replace("\r\n", "\n")
        return True

    def type(self, keys: bytes) -> None:
        os.write(self.controller, keys)

    def finish(self) -> int:
        """Read the rest of the screen; the exit code."""
        deadline = time.monotonic() + TIMEOUT
        while self._read(0.2) and time.monotonic() < deadline:
            if self.proc.poll() is not None and not select.select([self.controller], [], [], 0)[0]:
                break
        code = self.proc.wait(timeout=TIMEOUT)
        os.close(self.controller)
        return code


def _finish_command(screen: str) -> str:
    """The command the demo printed under "Finish it with:" / "Resume it with:"."""
    lines = screen.splitlines()
    marker = next(i for i, line in enumerate(lines) if line.endswith(" with:"))
    return lines[marker + 1].strip()


def test_every_bad_answer_is_asked_again_with_a_hint(clone: Clone) -> None:
    term = Terminal(clone, "demo", "--message", "pay 9 to Lu")
    answers = [b"perhaps", b'{"decision": "maybe"}', b"null", b"42", b"", b"approve"]
    for count, answer in enumerate(answers, start=1):
        term.wait_for(PROMPT, count)
        term.type(answer + b"\n")
    code = term.finish()

    assert code == 0, term.screen
    assert term.screen.count(PROMPT) == len(answers)
    assert term.screen.count("Answer approve or reject, or JSON such as") == len(answers) - 1
    assert "the decision 'perhaps' is not approve, reject or JSON" in term.screen
    assert "the decision cannot be null" in term.screen
    assert "was refused" in term.screen  # {"decision": "maybe"} and 42: the demo's schema
    assert "Traceback" not in term.screen
    assert term.screen.rstrip().endswith("Answer: Done. Balance: 1000. Transferred 9 to Lu.")
    assert clone.transfers() == [("Lu", "approved")]  # the refused answers ran nothing
    assert clone.paused_threads() == []


@pytest.mark.parametrize(
    ("key", "name", "code"), [(b"\x04", "Ctrl-D", 0), (b"\x03", "Ctrl-C", 130)]
)
def test_leaving_the_prompt_keeps_the_thread_paused_and_says_how_to_finish_it(
    clone: Clone, key: bytes, name: str, code: int
) -> None:
    term = Terminal(clone, "demo")
    term.wait_for(PROMPT)
    term.type(key)
    assert term.finish() == code, term.screen

    assert f"({name}) Thread 'demo' stays paused. Finish it with:" in term.screen
    assert "Traceback" not in term.screen and "KeyboardInterrupt" not in term.screen
    command = _finish_command(term.screen)
    assert command == f"{SCRIPT} resume --db ./dynavec-demo.db --thread demo"
    assert clone.paused_threads() == ["demo"]
    assert clone.transfers() == []

    finish = Terminal(clone, *shlex.split(command)[1:])  # the printed command, on a terminal
    finish.wait_for(PROMPT)
    finish.type(b"reject\n")
    assert finish.finish() == 0, finish.screen
    assert "Transfer of 120 to landlord was rejected." in finish.screen
    assert clone.transfers() == [("landlord", "rejected")]


def test_without_a_terminal_the_printed_command_works_when_pasted(clone: Clone) -> None:
    first = clone.run(f"{SCRIPT} demo")
    assert first.returncode == 0, first.stderr
    command = _finish_command(first.stdout)
    assert command == f"{SCRIPT} resume --db ./dynavec-demo.db --thread demo --decision approve"

    again = clone.run(f"{SCRIPT} demo --message 'pay 5 to Bo'")  # a second demo: no new thread
    assert again.returncode == 0, again.stderr
    assert "an earlier demo left the thread paused" in again.stdout
    assert _finish_command(again.stdout) == command
    assert clone.paused_threads() == ["demo"]

    pasted = clone.run(command)
    assert pasted.returncode == 0, pasted.stderr
    assert (
        pasted.stdout.splitlines()[-1]
        == "Answer: Done. Balance: 1000. Transferred 120 to landlord."
    )

    third = clone.run(f"{SCRIPT} demo --message 'pay 5 to Bo' --decision reject")  # a follow-up
    assert third.returncode == 0, third.stderr
    assert (
        third.stdout.splitlines()[-1]
        == "Answer: Done. Balance: 880. Transfer of 5 to Bo was rejected."
    )
    assert clone.paused_threads() == []
    assert clone.transfers() == [("landlord", "approved"), ("Bo", "rejected")]


def test_a_refused_decision_flag_says_how_to_answer_again(clone: Clone) -> None:
    done = clone.run(f"""{SCRIPT} demo --decision '{{"decision": "maybe"}}'""")

    assert done.returncode == 2
    assert "was refused" in done.stderr and "Traceback" not in done.stderr
    hint = f"`{SCRIPT} resume --db ./dynavec-demo.db --thread demo`"
    assert f"dynavec-langgraph: hint: the thread stays paused; answer it with {hint}" in done.stderr
    assert clone.paused_threads() == ["demo"]
    assert clone.transfers() == []


def test_ctrl_c_while_the_model_thinks_says_how_to_finish_the_run(clone: Clone) -> None:
    """An OpenAI endpoint that accepts the request and never answers: Ctrl-C stops the demo
    without a traceback, and the printed command finishes the run (with the scripted model)."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        url = f"http://127.0.0.1:{server.getsockname()[1]}/v1"
        slow = Clone(clone.root, clone.env | {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": url})
        term = Terminal(slow, "demo", "--thread", "slow")
        server.settimeout(TIMEOUT)
        connection, _ = server.accept()  # the model call waits for an answer
        with connection:
            term.type(b"\x03")
            assert term.finish() == 130, term.screen

    assert "Traceback" not in term.screen and "KeyboardInterrupt" not in term.screen
    assert "dynavec-langgraph: interrupted (Ctrl-C): the thread keeps what was saved" in term.screen
    hint = f"`{SCRIPT} resume --db ./dynavec-demo.db --thread slow` shows where thread 'slow'"
    assert hint in term.screen
    finished = clone.run(f"{SCRIPT} resume --db ./dynavec-demo.db --thread slow")
    assert finished.returncode == 0, finished.stderr
    assert "Thread 'slow' is paused. Resume it with:" in finished.stdout  # at the approval now
    assert clone.paused_threads() == ["slow"]
