"""Shared fixtures (the local OpenAI-compatible server, PostgreSQL, DynamoDB) and the ``service``
marker: a test that starts a server or a notebook kernel is marked, ``make test-fast`` leaves it
out."""

from __future__ import annotations

import pytest

pytest_plugins = ["tests.dynamo", "tests.openai_server", "tests.pg"]


SERVICE_FIXTURES = frozenset(
    {"postgres_server", "pg_uri", "dynamodb_server", "dynamodb_url", "studio", "ui_site", "browser"}
)
"""Fixtures that start a server: a test using one is marked ``service``."""
SERVICE_MODULES = frozenset(
    {"test_benchmark_smoke", "test_browser", "test_cluster", "test_notebooks", "test_studio"}
)
"""Modules whose every test needs a server or a notebook kernel."""
SERVICE_PARAMS = frozenset({"postgres", "dynamodb"})
"""Parameter values that make a test open PostgreSQL or DynamoDB (``db``, ``saver``, ...)."""


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "service: starts PostgreSQL, DynamoDB, Redis, langgraph dev, a browser or a notebook "
        'kernel (set by tests/conftest.py); `make test-fast` runs -m "not service"',
    )


def _needs_service(item: pytest.Item) -> bool:
    if SERVICE_FIXTURES & set(getattr(item, "fixturenames", ())):
        return True
    if item.path.stem in SERVICE_MODULES:
        return True
    callspec = getattr(item, "callspec", None)
    params = callspec.params.values() if callspec is not None else ()
    return any(isinstance(v, str) and v in SERVICE_PARAMS for v in params)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if _needs_service(item):
            item.add_marker(pytest.mark.service)
