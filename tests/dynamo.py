"""A local DynamoDB endpoint for the tests: moto's server mode, started as a subprocess.

``dynamodb_server`` (session) starts ``python -m moto.server`` on 127.0.0.1 and a free port,
waits until it answers, sets fake AWS credentials in the environment (children inherit them),
and stops the server by its PID at the end. If it cannot start, the tests that use it FAIL
with the server's output (never skip). ``dynamodb_url`` gives each test a fresh table as a
``dynamodb://`` checkpointer string.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

REGION = "us-east-1"


@dataclass(frozen=True)
class DynamoDBServer:
    """A running local endpoint."""

    endpoint_url: str
    pid: int

    def url(self, table: str, namespace: str = "default") -> str:
        """The ``checkpointer=`` string of ``table`` on this endpoint."""
        return (
            f"dynamodb://{table}?region={REGION}&endpoint_url={self.endpoint_url}"
            f"&namespace={namespace}"
        )


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False


@pytest.fixture(scope="session")
def dynamodb_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DynamoDBServer]:
    """moto's DynamoDB server on 127.0.0.1, for the whole session (its request log goes to a
    file, so a long session never fills a pipe and stalls the server)."""
    port = _free_port()
    log_path = tmp_path_factory.mktemp("dynamodb") / "moto.log"
    env = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}
    env["AWS_DEFAULT_REGION"] = REGION
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    log = log_path.open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 30
        while not _answers(port):
            if proc.poll() is not None or time.monotonic() > deadline:
                if proc.poll() is None:
                    os.kill(proc.pid, 9)
                proc.wait()
                pytest.fail(
                    "the local DynamoDB endpoint (moto server) did not start; is the dev extra "
                    f"(moto[server]) installed?\n{log_path.read_text()}"
                )
            time.sleep(0.05)
        yield DynamoDBServer(f"http://127.0.0.1:{port}", proc.pid)
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, 15)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.kill(proc.pid, 9)
                proc.wait()
        log.close()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@pytest.fixture
def dynamodb_url(dynamodb_server: DynamoDBServer) -> str:
    """A ``dynamodb://`` checkpointer string naming a table of its own."""
    return dynamodb_server.url(f"t{uuid.uuid4().hex[:12]}")
