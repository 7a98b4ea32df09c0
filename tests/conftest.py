"""Shared fixtures: the scripted model, savers, the local OpenAI-compatible server, PostgreSQL."""

from __future__ import annotations

pytest_plugins = ["tests.dynamo", "tests.openai_server", "tests.pg"]
