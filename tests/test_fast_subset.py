"""``make test-fast``'s honest check (tests/conftest.py), run on a throwaway test module by a
real pytest: in the fast subset (``-m "not service"``) a test that starts a process without
being marked fails, whether the process starts in its call, in a fixture's setup (of any
scope) or in a teardown; a marked test is left out; the whole suite (no ``-m``) checks
nothing. Each test here starts pytest itself, so conftest marks it ``service``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

MODULE = """
import subprocess

import pytest


@pytest.fixture(scope="module")
def server():
    subprocess.run(["true"], check=True)  # a server fixture, started once
    yield


@pytest.fixture
def stopper():
    yield
    subprocess.run(["true"], check=True)


def test_uses_the_server(server):
    pass


def test_after_the_server_started(server):
    pass  # the server is up already: this one starts nothing


def test_starts_one_in_its_call():
    subprocess.run(["true"], check=True)


def test_starts_one_in_a_teardown(stopper):
    pass


@pytest.mark.service
def test_marked():
    subprocess.run(["true"], check=True)


def test_starts_nothing():
    pass
"""


def _pytest(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "conftest.py").write_text('pytest_plugins = ["tests.conftest"]\n')
    (tmp_path / "test_module.py").write_text(MODULE)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rfE", *args]
    return subprocess.run(
        [*argv, str(tmp_path)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )


def test_the_fast_subset_fails_a_test_that_starts_a_process_in_setup_call_or_teardown(
    tmp_path: Path,
) -> None:
    done = _pytest(tmp_path, "-m", "not service")
    out = done.stdout
    assert done.returncode == 1, out
    assert "test_uses_the_server started 1 process(es) in its setup" in out
    assert "test_starts_one_in_its_call started 1 process(es) in its call" in out
    assert "test_starts_one_in_a_teardown started 1 process(es) in its teardown" in out
    # the teardown one passed its call; test_marked is left out
    assert "1 failed, 3 passed, 1 deselected, 2 errors" in out
    assert "test_starts_nothing" not in out and "test_after_the_server_started" not in out


def test_the_whole_suite_runs_a_test_that_starts_a_process_unchecked(tmp_path: Path) -> None:
    done = _pytest(tmp_path)
    assert done.returncode == 0, done.stdout
    assert "6 passed" in done.stdout


@pytest.mark.service  # runs pytest with two workers
def test_the_chat_doctests_share_the_providers_worker() -> None:
    """Under ``--dist loadfile`` the chat providers' doctests run on the worker of their own
    tests (tests/conftest.py's SHARED_WORKER): four files, one work unit, so the second worker
    gets none. Without the grouping each of the two workers gets a file from the start."""
    files = [f"dynavec_langgraph/chat/{name}.py" for name in ("anthropic", "bedrock", "openai")]
    argv = [sys.executable, "-m", "pytest", "-v", "-n", "2", "--dist", "loadfile"]
    done = subprocess.run(
        [*argv, "-p", "no:cacheprovider", "tests/dynavec_contract/test_s2_chat.py", *files],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:]
    ran = [line.split() for line in done.stdout.splitlines() if " PASSED " in line]
    workers = {words[0] for words in ran}
    assert len(workers) == 1, workers
    doctests = {words[-1] for words in ran if words[-1].startswith("dynavec_langgraph/chat/")}
    assert doctests == {f"{file}::dynavec_langgraph.chat.{Path(file).stem}" for file in files}
