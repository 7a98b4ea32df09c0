"""Fixtures of the dynavec contract tests: the local Anthropic and Bedrock servers (the OpenAI
one is ``tests/openai_server.py``'s ``openai`` fixture), each pointed at by the environment
variables the provider SDKs read, as a dynavec user's deployment would."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.anthropic_server import AnthropicServer
from tests.bedrock_server import BedrockServer


@pytest.fixture(scope="session")
def anthropic_session_server() -> Iterator[AnthropicServer]:
    with AnthropicServer() as server:
        yield server


@pytest.fixture
def anthropic_api(
    anthropic_session_server: AnthropicServer, monkeypatch: pytest.MonkeyPatch
) -> AnthropicServer:
    """The Anthropic server, reset; ``ANTHROPIC_BASE_URL`` / ``ANTHROPIC_API_KEY`` point at it."""
    anthropic_session_server.reset()
    monkeypatch.setenv("ANTHROPIC_BASE_URL", anthropic_session_server.url)
    monkeypatch.delenv("ANTHROPIC_API_URL", raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    return anthropic_session_server


@pytest.fixture(scope="session")
def bedrock_session_server() -> Iterator[BedrockServer]:
    with BedrockServer() as server:
        yield server


@pytest.fixture
def bedrock_api(
    bedrock_session_server: BedrockServer, monkeypatch: pytest.MonkeyPatch
) -> BedrockServer:
    """The Bedrock server, reset; boto3's endpoint, region and key variables point at it."""
    bedrock_session_server.reset()
    monkeypatch.setenv("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", bedrock_session_server.url)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.delenv("AWS_SESSION_TOKEN", raising=False)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    return bedrock_session_server
