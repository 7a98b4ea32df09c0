"""Shared fixtures (the local OpenAI-compatible server, PostgreSQL, DynamoDB) and the ``service``
marker: a test that starts a server, a notebook kernel or another process is marked, ``make
test-fast`` leaves it out (and fails a test it runs that starts a process: mark that one);
the ``slow`` marker (set in the test modules) names the few tests that wait by design, which
``make test-fast`` leaves out too. ``make test`` runs them all."""

from __future__ import annotations

import _posixsubprocess
import gc
import os
import platform
import re
import subprocess
from collections.abc import Callable, Generator
from pathlib import Path
from typing import Any

import pytest

pytest_plugins = ["tests.dynamo", "tests.openai_server", "tests.pg"]


SERVICE_FIXTURES = frozenset(
    {
        "postgres_server",
        "pg_uri",
        "dynamodb_server",
        "dynamodb_url",
        "studio",
        "ui_server",
        "ui_site",
        "browser",
    }
)
"""Fixtures that start a server: a test using one is marked ``service``."""
SERVICE_MODULES = frozenset(
    {
        "test_approval_ui_policies",
        "test_benchmark_smoke",
        "test_browser",
        "test_cli",
        "test_cli_start",
        "test_cluster",
        "test_concurrency",
        "test_demo_terminal",
        "test_durability",
        "test_dynavec_locking",
        "test_dynavec_port",
        "test_lazy_imports",
        "test_make",
        "test_notebooks",
        "test_release",
        "test_studio",
    }
)
"""Modules whose tests start a server, a notebook kernel or other processes."""
SERVICE_TESTS = frozenset(
    {
        "test_a_damaged_thread_is_reported_as_damaged",
        "test_a_deleted_pause_record_never_drops_a_decision",
        "test_a_kill_while_the_receiver_is_up_delivers_at_least_once_with_one_event_id",
        "test_a_receiver_down_then_up_gets_the_pause_once_and_the_run_never_waits",
        "test_a_sqlite_file_turned_read_only_is_refused_before_the_tool_runs",
        "test_a_stale_decision_is_refused_at_every_door_on_every_saver",
        "test_agent_inbox_finds_the_arguments_and_every_button",
        "test_ask_approve_runs_again_with_the_key_reject_skips",
        "test_ask_pauses_and_each_answer_does_what_it_says",
        "test_bad_notify_options_say_what_to_pass",
        "test_fail_stops_with_a_clear_error_and_runs_nothing",
        "test_k3_mcp_tools_from_a_real_async_session",
        "test_k3_mcp_tools_run_in_an_agent",
        "test_k4_mcp_tools_from_a_sync_session",
        "test_k4_the_sync_connector_refuses_an_async_session",
        "test_n7_importing_chat_imports_no_provider_sdk",
        "test_retry_repeats_the_call_with_the_same_key_and_charges_once",
        "test_the_cli_names_another_applications_checkpoints_table",
        "test_the_cli_refuses_a_lone_surrogate_in_a_decision",
        "test_the_command_line_records_its_answers_on_an_audited_thread",
        "test_the_demo_command_line_shows_the_digest_and_resume_takes_it",
        "test_the_payment_service_starts_once_and_again_after_a_stop",
        "test_the_trail_survives_a_restart_and_a_later_failure_of_the_run",
    }
)
"""Tests (by function name, every parametrization) that run the CLI, an MCP server, a fresh
interpreter or another child process of their own; a fast run fails a test that starts a
process without being marked, so a new one is added here."""
SERVICE_PARAMS = frozenset({"postgres", "dynamodb", "temporal"})
"""Parameter values that make a test open PostgreSQL or DynamoDB (``db``, ``saver``, ...), or
run on Temporal's dev server and worker processes (the ``drive`` of tests/test_agent.py)."""
TEMPORAL_DESELECTED = Path(__file__).with_name("temporal_deselected.txt")
"""The scenario tests' Temporal cases that cannot apply, with the reason (read by
:func:`temporal_deselected`)."""


def temporal_deselected(path: Path = TEMPORAL_DESELECTED) -> dict[str, str]:
    """``{node id prefix: reason}`` of the deselection file (``node id | reason`` a line;
    ``#`` starts a comment)."""
    entries: dict[str, str] = {}
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        node, sep, reason = (part.strip() for part in line.partition("|"))
        if not sep or not node or not reason or "[temporal" not in node:
            raise pytest.UsageError(
                f"{path}:{number}: write 'node id of a temporal case | reason', got {line!r}"
            )
        entries[node] = reason
    return entries


SERVICE_WORDS = re.compile(r"postgres|dynamodb|(?<!in_)process|fresh_interpreter")
"""Words in a test's name that say it starts a server or processes of its own
(``test_postgres_down_at_resume...``, ``test_..._in_new_process``, ``..._in_a_fresh_interpreter``;
not ``..._in_process``); a test that starts one another way has ``@pytest.mark.service``."""


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "service: starts PostgreSQL, DynamoDB, Redis, langgraph dev, a browser, a notebook "
        'kernel or other processes (set by tests/conftest.py); `make test-fast` runs -m "not '
        'service"',
    )
    config.addinivalue_line(
        "markers",
        "slow: waits by design (a timeout run out, a saver made slow) or runs a long thread, "
        'seconds per test; `make test-fast` runs -m "not service and not slow", `make test` '
        "runs it",
    )
    config.addinivalue_line(
        "markers",
        "timing: asserts a wall-clock bound or waits out a real short deadline; `make test` "
        'runs these after the others, alone (-m timing), not beside busy workers (-m "not '
        'timing" on pytest-xdist)',
    )
    _count_processes(config)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """The fast subset does not import what it would deselect or find empty: a module of
    :data:`SERVICE_MODULES` (every test of it is deselected), and a helper module that is no
    test file and holds no doctest (``--doctest-modules`` imports every ``.py``: the MCP server,
    the browser and cluster helpers ... cost each worker seconds for no test)."""
    path = collection_path
    if not _fast_subset(config) or path.suffix != ".py" or path.name == "__init__.py":
        return None
    if path.stem in SERVICE_MODULES:
        return True
    if path.name.startswith("test_") or path.name == "conftest.py":
        return None
    return ">>>" not in path.read_text(encoding="utf-8") or None


def _needs_service(item: pytest.Item) -> bool:
    if SERVICE_FIXTURES & set(getattr(item, "fixturenames", ())):
        return True
    if item.path.stem in SERVICE_MODULES or SERVICE_WORDS.search(item.name):
        return True
    if getattr(item, "originalname", item.name) in SERVICE_TESTS:
        return True
    callspec = getattr(item, "callspec", None)
    params = callspec.params.values() if callspec is not None else ()
    return any(isinstance(v, str) and v in SERVICE_PARAMS for v in params)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Leave out the Temporal cases tests/temporal_deselected.txt lists; mark the ``service``
    tests; on pytest-xdist workers (``make test``), send the modules
    with the most service tests out first (a stable sort: a module's tests keep their order),
    so the modules that run longest are not the last ones handed out."""
    listed = tuple(temporal_deselected())
    left_out = [item for item in items if item.nodeid.startswith(listed)]
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        items[:] = [item for item in items if not item.nodeid.startswith(listed)]
    services: dict[Path, int] = {}
    for item in items:
        services.setdefault(item.path, 0)
        if _needs_service(item):
            item.add_marker(pytest.mark.service)
            services[item.path] += 1
    if getattr(config, "workerinput", None) is not None:
        items.sort(key=lambda item: -services[item.path])


def pytest_collection_finish(session: pytest.Session) -> None:
    """In the fast subset, what collecting imported (the libraries, the test modules: most of
    the heap) is set aside from the cyclic garbage collector (``gc.freeze``): it lives to the
    end anyway, and each collection during the run (and pytest's last ``gc.collect``) would walk
    it again. Objects the tests make are collected as usual."""
    if _fast_subset(session.config):
        gc.freeze()


_SPAWNED = [0]
"""Processes started so far in this pytest process (every way Python starts one: subprocess,
asyncio subprocesses, multiprocessing, os.fork / posix_spawn)."""


def _counted(start: Callable[..., Any]) -> Callable[..., Any]:
    def counting(*args: Any, **kwargs: Any) -> Any:
        _SPAWNED[0] += 1
        return start(*args, **kwargs)

    return counting


SHARED_WORKER = {
    "dynavec_langgraph/chat/anthropic.py": "tests/dynavec_contract/test_s2_chat.py",
    "dynavec_langgraph/chat/bedrock.py": "tests/dynavec_contract/test_s2_chat.py",
    "dynavec_langgraph/chat/openai.py": "tests/dynavec_contract/test_s2_chat.py",
}
"""Files whose tests run on the worker of another file under ``--dist loadfile`` (``make
test-fast``): the chat providers' doctests build a model of each SDK, which the providers' own
tests import anyway (Anthropic's SDK alone takes seconds of CPU to import)."""


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist, which `-p no:xdist` leaves out
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadfile``, with the files of :data:`SHARED_WORKER` on one worker."""
    if config.getoption("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling  # type: ignore[import-untyped]  # no py.typed

    class SharedWorkerScheduling(LoadFileScheduling):  # type: ignore[misc]  # an untyped base
        # LoadFileScheduling groups a worker's tests by `_split_scope` (pytest-xdist 3.8;
        # pinned by tests/test_fast_subset.py::test_the_chat_doctests_share_the_providers_worker)
        def _split_scope(self, nodeid: str) -> str:
            scope = str(super()._split_scope(nodeid))
            return SHARED_WORKER.get(scope, scope)

    return SharedWorkerScheduling(config, log)


def _fast_subset(config: pytest.Config) -> bool:
    return "not service" in (config.getoption("markexpr", "") or "")


def _count_processes(config: pytest.Config) -> None:
    """Only in the fast subset: count the processes started (the whole suite runs unpatched).

    subprocess keeps its own reference to fork_exec (Python 3.11+: ``from _posixsubprocess
    import fork_exec as _fork_exec``); multiprocessing calls ``_posixsubprocess.fork_exec``."""
    if not _fast_subset(config):
        return
    # the standard library's own one-off processes, started before counting and cached for the
    # run: platform.uname().processor runs `uname -p` once (the OpenAI SDK's first request
    # reads it), so the test that happens to send the first request is not blamed for it
    platform.uname().processor  # noqa: B018
    for owner, name in (
        (subprocess, "_fork_exec"),
        (_posixsubprocess, "fork_exec"),
        (os, "fork"),
        (os, "posix_spawn"),
        (os, "posix_spawnp"),
    ):
        if callable(getattr(owner, name, None)):
            setattr(owner, name, _counted(getattr(owner, name)))


def _check_processes(item: pytest.Item, phase: str) -> Generator[None, object, object]:
    before = _SPAWNED[0]
    result = yield
    checked = _fast_subset(item.config)
    if checked and _SPAWNED[0] != before and item.get_closest_marker("service") is None:
        pytest.fail(
            f"{item.nodeid} started {_SPAWNED[0] - before} process(es) in its {phase} but is not "
            "marked `service`: add its module to SERVICE_MODULES (a fixture: SERVICE_FIXTURES) "
            "in tests/conftest.py or mark it @pytest.mark.service, so `make test-fast` leaves it "
            "out",
            pytrace=False,
        )
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, object, object]:
    """In the fast subset (``-m "not service"``), a test that starts a process fails, in its
    fixtures' setup (a server fixture of any scope), its call or its teardown: the subset stays
    what it says (the whole suite, without ``-m``, runs every test unchecked)."""
    return (yield from _check_processes(item, "setup"))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, object, object]:
    return (yield from _check_processes(item, "call"))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Generator[None, object, object]:
    return (yield from _check_processes(item, "teardown"))
