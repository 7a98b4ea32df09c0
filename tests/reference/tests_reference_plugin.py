"""pytest plugin for LangChain's agent suite (see :mod:`tests.reference.langchain_agents`).

It swaps ``create_agent`` for ``dynavec_langgraph.create_agent`` before the suite's modules
import it, leaves out the tests ``langchain_deselected.txt`` names (and fails on a name that
matches no test, so the file cannot go stale), and counts the tests that build an agent.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Generator
from pathlib import Path
from typing import Any

import langchain.agents
import langchain.agents.factory
import pytest

import dynavec_langgraph

SWAP = os.environ.get("DYNAVEC_REFERENCE_SWAP", "1") == "1"
REFERENCE = langchain.agents.factory.create_agent
BUILT: set[str] = set()
"""Ids of the tests during which an agent was built."""
_current: list[str] = []


def deselected(path: Path) -> dict[str, str]:
    """``{test id: reason}`` from the file: ``id | reason | docs row`` per line."""
    out: dict[str, str] = {}
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = [p.strip() for p in line.split(" | ")]
        if len(parts) != 3 or not all(parts):
            raise ValueError(f"{path}:{number}: write `test id | reason | docs row`: {line!r}")
        out[parts[0]] = parts[1]
    return out


def _recording(factory: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(factory)
    def create_agent(*args: Any, **kwargs: Any) -> Any:
        if _current:
            BUILT.add(_current[-1])
        return factory(*args, **kwargs)

    return create_agent


def pytest_configure(config: pytest.Config) -> None:
    """The swap, before the suite's modules import ``create_agent`` (only when this module is
    loaded as the plugin: importing it, as ``--doctest-modules`` does, changes nothing)."""
    agent = _recording(dynavec_langgraph.create_agent if SWAP else REFERENCE)
    langchain.agents.create_agent = agent
    langchain.agents.factory.create_agent = agent


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    path = Path(os.environ.get("DYNAVEC_REFERENCE_DESELECTED", ""))
    listed = deselected(path) if path.is_file() else {}
    ids = {item.nodeid for item in items}
    stale = sorted(set(listed) - ids)
    whole = [a.rstrip("/") for a in config.args] == ["tests/unit_tests/agents"]
    if stale and whole and not config.getoption("keyword"):
        raise pytest.UsageError(f"{path} names tests the suite does not have: {stale}")
    select = os.environ.get("DYNAVEC_REFERENCE_SELECT")
    chosen = set(Path(select).read_text().split()) if select else None

    def runs(item: pytest.Item) -> bool:
        return item.nodeid not in listed and (chosen is None or item.nodeid in chosen)

    kept = [item for item in items if runs(item)]
    dropped = [item for item in items if not runs(item)]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None]:
    _current.append(item.nodeid)
    try:
        return (yield)
    finally:
        _current.pop()


RESULTS: dict[str, str] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    counts = report.failed or report.when == "call" or report.skipped
    if counts and (report.nodeid not in RESULTS or report.failed):
        RESULTS[report.nodeid] = report.outcome


def pytest_terminal_summary(terminalreporter: Any) -> None:
    built = {nodeid: RESULTS.get(nodeid, "failed") for nodeid in BUILT}
    passed = sum(1 for outcome in built.values() if outcome == "passed")
    failed = sorted(n for n, outcome in built.items() if outcome != "passed")
    face = "dynavec_langgraph.create_agent" if SWAP else "langchain.agents.create_agent"
    terminalreporter.write_sep("=", f"tests that build an agent ({face})")
    for nodeid in failed:
        terminalreporter.write_line(f"FAILED {nodeid}")
    terminalreporter.write_line(f"agent tests: {passed} passed, {len(failed)} failed")
    out = os.environ.get("DYNAVEC_REFERENCE_REPORT")
    if out:
        Path(out).write_text("".join(f"{n}\t{o}\n" for n, o in sorted(built.items())))
