"""Shared fixtures (the local OpenAI-compatible server, PostgreSQL, DynamoDB) and the ``service``
marker: a test that starts a server or a notebook kernel is marked, ``make test-fast`` leaves it
out."""

from __future__ import annotations

import re

import pytest

pytest_plugins = ["tests.dynamo", "tests.openai_server", "tests.pg"]


SERVICE_FIXTURES = frozenset(
    {"postgres_server", "pg_uri", "dynamodb_server", "dynamodb_url", "studio", "ui_site", "browser"}
)
"""Fixtures that start a server: a test using one is marked ``service``."""
SERVICE_MODULES = frozenset(
    {
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
        "test_notebooks",
        "test_studio",
    }
)
"""Modules whose tests start a server, a notebook kernel or other processes."""
SERVICE_PARAMS = frozenset({"postgres", "dynamodb"})
"""Parameter values that make a test open PostgreSQL or DynamoDB (``db``, ``saver``, ...)."""
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


def _needs_service(item: pytest.Item) -> bool:
    if SERVICE_FIXTURES & set(getattr(item, "fixturenames", ())):
        return True
    if item.path.stem in SERVICE_MODULES or SERVICE_WORDS.search(item.name):
        return True
    callspec = getattr(item, "callspec", None)
    params = callspec.params.values() if callspec is not None else ()
    return any(isinstance(v, str) and v in SERVICE_PARAMS for v in params)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if _needs_service(item):
            item.add_marker(pytest.mark.service)
