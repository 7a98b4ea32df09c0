"""``dynavec-langgraph`` as a program: its version, a start that imports no LangGraph for
``--help``, a quiet stop when its reader closes the pipe, and hints that name commands.

Each runs the installed console script (or ``python -c``) as its own process. Times are printed,
benchmark-style, never asserted.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pytest

import dynavec_langgraph

SCRIPT = Path(sys.executable).parent / "dynavec-langgraph"
HEAVY = ("langgraph", "langchain", "langchain_core", "langchain_openai", "pydantic", "openai")


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    return env | {"DYNAVEC_DEMO_LEDGER": str(tmp_path / "ledger.jsonl")}


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCRIPT), *args],
        cwd=tmp_path,
        env=_env(tmp_path),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=180,
    )


def test_the_version_is_the_packages(tmp_path: Path) -> None:
    done = _run(tmp_path, "--version")

    assert done.returncode == 0, done.stderr
    assert done.stdout == f"dynavec-langgraph {dynavec_langgraph.__version__}\n"
    assert dynavec_langgraph.__version__ == importlib.metadata.version("dynavec-langgraph")


@pytest.mark.parametrize("args", [["--help"], ["inbox", "--help"], ["--version"], ["nope"]])
def test_help_and_usage_errors_import_no_langgraph(args: list[str]) -> None:
    code = (
        "import sys\n"
        "from dynavec_langgraph._cli import main\n"
        "try:\n"
        f"    main({args!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.splitlines()[-1] == "[]"


def test_help_start_time(tmp_path: Path) -> None:
    """Benchmark-style: the wall time of ``dynavec-langgraph --help`` (median of 5)."""
    times = []
    for _ in range(5):
        started = time.perf_counter()
        done = _run(tmp_path, "--help")
        times.append(time.perf_counter() - started)
        assert done.returncode == 0 and "inbox" in done.stdout
    print(f"\ndynavec-langgraph --help: median {statistics.median(times):.3f} s of {len(times)}")


def test_a_closed_pipe_stops_it_quietly(tmp_path: Path) -> None:
    recipient = "A" * 100_000  # one paused thread whose listing is larger than a pipe's buffer
    paused = _run(tmp_path, "demo", "--thread", "big", "--message", f"pay 1 to {recipient}")
    assert paused.returncode == 0, paused.stderr

    done = subprocess.run(
        [
            "bash",
            "-c",
            f"{SCRIPT} inbox list --db ./dynavec-demo.db --json | head -c 100; "
            'echo "exit ${PIPESTATUS[0]}" >&2',
        ],
        cwd=tmp_path,
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=180,
    )

    assert len(done.stdout) == 100
    assert done.stderr == "exit 141\n"  # no traceback, no "Exception ignored" at exit
    full = _run(tmp_path, "inbox", "list", "--db", "./dynavec-demo.db", "--json")
    assert json.loads(full.stdout)[0]["payload"]["to"] == recipient


def test_hints_name_commands_not_python_calls(tmp_path: Path) -> None:
    finished = _run(tmp_path, "demo", "--thread", "f", "--decision", "approve")
    assert finished.returncode == 0, finished.stderr
    paused = _run(tmp_path, "demo", "--thread", "p")
    assert paused.returncode == 0, paused.stderr

    errors = [
        _run(tmp_path, "resume", "--thread", "f", "--decision", "approve"),
        _run(tmp_path, "inbox", "answer", "--db", "dynavec-demo.db", "--thread", "f", "--approve"),
        _run(tmp_path, "resume", "--thread", "ghost", "--decision", "approve"),
        _run(tmp_path, "resume", "--thread", "p", "--decision", '{"decision": "maybe"}'),
        _run(tmp_path, "demo", "--thread", "p", "--decision", "approve"),
    ]

    for done in errors:
        assert done.returncode == 2, done
        assert "Traceback" not in done.stderr
        assert "()" not in done.stderr and "ReActAgent" not in done.stderr, done.stderr
        assert "dynavec-langgraph " in done.stderr.split("error:", 1)[1], done.stderr
    assert "thread 'f' is not paused: nothing to resume; send it a new message" in errors[0].stderr
    assert "--message TEXT" in errors[0].stderr  # the hint: the demo command that does it
    assert "dynavec-langgraph resume --db ./dynavec-demo.db --thread p" in errors[3].stderr
