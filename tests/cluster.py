"""A local LangGraph API cluster: PostgreSQL + Redis + N ``langhost serve`` servers on 127.0.0.1.

``langhost`` (PyPI, MIT, third party) runs stock ``langgraph-api`` on the open PostgreSQL + Redis
runtime ``langgraph-runtime-pg``. ``langhost==0.11.1.post1`` pins ``langgraph-api==0.11.1``,
older than the ``langgraph-api`` of this package's ``studio`` extra, so the server stack lives in
its own virtualenv (:func:`langhost_venv`), created on first use and cached under
``~/.cache/dynavec-langgraph/`` keyed by the pinned versions; the servers import this package
from the repository (their working directory). ``engine="aegra"``: Aegra (``aegra-api``,
Apache-2.0) from a virtualenv of its own (:func:`aegra_venv`), over PostgreSQL alone.

Start order (:class:`Cluster`): PostgreSQL, Redis, the first server ALONE (it runs the
migrations; two first starts on a fresh database race on them), then the others. Every process
binds 127.0.0.1 and is stopped by its PID.

``python -m tests.cluster`` (``make cluster``) starts one for trying docs/scale-out.md
section and stops it on Ctrl-C (``--engine aegra``: two Aegra servers instead, no Redis).
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import tomllib
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

from tests.pg import PostgresServer, _free_port

REPO = Path(__file__).resolve().parents[1]
LANGHOST = "langhost==0.11.1.post1"
AEGRA = "aegra-api==0.6.0"
"""Aegra (Apache-2.0), the newest release for Python 3.11; no run queue of its own (no Redis)."""
ENGINES = ("langhost", "aegra")
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "dynavec-langgraph"
REDIS_SERVER = os.environ.get("DYNAVEC_REDIS_SERVER", "redis-server")
START_TIMEOUT = 120.0  # the first start imports langgraph-api and runs migrations
OFFLINE_ENV = {
    "LANGGRAPH_CLI_NO_ANALYTICS": "1",
    "LANGGRAPH_NO_VERSION_CHECK": "1",
    "LANGSMITH_TRACING": "false",
}


class ClusterUnavailable(RuntimeError):
    """A part of the cluster could not be installed or started (the message says why)."""


def _tail(text: str, lines: int = 40) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def server_requirements() -> list[str]:
    """What the server virtualenv holds: langhost and this package's core dependencies."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return [LANGHOST, *project["dependencies"]]


def aegra_requirements() -> list[str]:
    """What the Aegra virtualenv holds: Aegra, ``greenlet`` (SQLAlchemy's asyncio needs it;
    Aegra 0.6.0 does not depend on it) and this package's core dependencies."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return [AEGRA, "greenlet>=3", *project["dependencies"]]


def langhost_venv() -> Path:
    """The cached virtualenv with ``langhost serve``; created (~2 min) when missing.

    Raises:
        ClusterUnavailable: the virtualenv could not be created (pip's output tail included).
    """
    return server_venv("langhost", server_requirements(), "bin/langhost")


def aegra_venv() -> Path:
    """The cached virtualenv with Aegra (``uvicorn aegra_api.main:app``); created when missing.

    Raises:
        ClusterUnavailable: the virtualenv could not be created (pip's output tail included).
    """
    return server_venv("aegra", aegra_requirements(), "bin/uvicorn")


def server_venv(name: str, requirements: list[str], command: str) -> Path:
    """The cached virtualenv ``~/.cache/dynavec-langgraph/NAME-venv-KEY`` holding
    ``requirements`` (``KEY``: a digest of them and the Python version); built once, by one
    process at a time, when missing."""
    key = hashlib.sha256("\n".join([sys.version.split()[0], *requirements]).encode()).hexdigest()[
        :12
    ]
    venv = CACHE / f"{name}-venv-{key}"
    if (venv / ".complete").exists():
        return venv
    CACHE.mkdir(parents=True, exist_ok=True)
    with (CACHE / f"{name}-venv-{key}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one builder; the others wait and reuse it
        if (venv / ".complete").exists():
            return venv
        shutil.rmtree(venv, ignore_errors=True)  # a build that was interrupted
        steps = [
            [sys.executable, "-m", "venv", str(venv)],
            [str(venv / "bin/python"), "-m", "pip", "install", "-q", *requirements],
        ]
        for argv in steps:
            proc = subprocess.run(argv, capture_output=True, text=True, stdin=subprocess.DEVNULL)
            if proc.returncode != 0:
                raise ClusterUnavailable(
                    f"cannot install the LangGraph API server ({' '.join(argv)}):\n"
                    + _tail(proc.stdout + proc.stderr)
                )
        if not (venv / command).exists():
            raise ClusterUnavailable(f"{requirements[0]} installed no {command} in {venv}")
        (venv / ".complete").touch()
    return venv


def _stop(proc: subprocess.Popen[bytes], sig: int = signal.SIGTERM) -> None:
    """Stop a process started in its own session, by its PID (process group = PID)."""
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:
        return
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=15)


def _answers(url: str, path: str = "/ok") -> bool:
    try:
        with urllib.request.urlopen(f"{url}{path}", timeout=2) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


@dataclass
class Server:
    """One ``langhost serve`` process."""

    name: str
    url: str
    proc: subprocess.Popen[bytes]
    log: Path
    start_seconds: float = 0.0

    @property
    def pid(self) -> int:
        return self.proc.pid

    def log_tail(self) -> str:
        return _tail(self.log.read_text(errors="replace")) if self.log.exists() else ""


@dataclass
class Cluster:
    """PostgreSQL + Redis + ``servers`` LangGraph API servers serving ``config``; or, with
    ``engine="aegra"``, PostgreSQL + ``servers`` Aegra servers (no Redis: Aegra runs each run
    as a task of the server that accepted it).

    Args:
        config: the ``langgraph.json`` to serve (its directory is the servers' working
            directory, so its relative graph paths resolve there).
        servers: how many API servers.
        engine: ``"langhost"`` (langgraph-api on ``langgraph-runtime-pg``) or ``"aegra"``.
        env: extra environment for the servers (e.g. ``LG_BG_JOB_HEARTBEAT``).
        work: where logs and the Redis directory go (default: a new temp dir).
        postgres: a running server to hold the database (default: start one, stopped with
            the cluster).
    """

    config: Path = REPO / "langgraph.json"
    servers: int = 2
    engine: str = "langhost"
    env: Mapping[str, str] = field(default_factory=dict)
    work: Path | None = None
    postgres: PostgresServer | None = None
    database_uri: str = ""
    redis_uri: str = ""
    running: list[Server] = field(default_factory=list)
    redis: subprocess.Popen[bytes] | None = None
    venv: Path | None = None
    timings: dict[str, float] = field(default_factory=dict)
    _own_postgres: PostgresServer | None = None

    def start(self) -> Cluster:
        """Start everything (install the server virtualenv first if needed); return self.

        Raises:
            ClusterUnavailable: a part could not be installed or started.
        """
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        return self

    def _start(self) -> None:
        if self.engine not in ENGINES:
            raise ClusterUnavailable(f"engine={self.engine!r}: use one of {ENGINES}")
        began = time.monotonic()
        self.venv = aegra_venv() if self.engine == "aegra" else langhost_venv()
        self.timings["venv"] = time.monotonic() - began
        self.work = self.work or Path(tempfile.mkdtemp(prefix="dynavec-cluster-"))
        began = time.monotonic()
        if self.postgres is None:
            self._own_postgres = PostgresServer().start()
            self.postgres = self._own_postgres
        self.database_uri = self.postgres.create_database()
        self.timings["postgres"] = time.monotonic() - began
        if self.engine == "langhost":
            began = time.monotonic()
            self._start_redis()
            self.timings["redis"] = time.monotonic() - began
        began = time.monotonic()
        first = self._spawn("a")
        self._wait_up(first)  # alone: it runs the migrations
        rest = [self._spawn(chr(ord("a") + i)) for i in range(1, self.servers)]
        for server in rest:
            self._wait_up(server)
        self.timings["servers"] = time.monotonic() - began

    def _start_redis(self) -> None:
        if shutil.which(REDIS_SERVER) is None:
            raise ClusterUnavailable(
                f"no {REDIS_SERVER!r} on PATH: install it (Debian: apt-get install redis-server; "
                "`make redis-server` does it)"
            )
        assert self.work is not None
        port = _free_port()
        log = self.work / "redis.log"
        argv = [
            REDIS_SERVER, "--bind", "127.0.0.1", "--port", str(port), "--save", "",
            "--appendonly", "no", "--dir", str(self.work), "--daemonize", "no",
            "--protected-mode", "yes",
        ]  # fmt: skip
        with log.open("wb") as out:
            self.redis = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                start_new_session=True,
            )  # fmt: skip
        self.redis_uri = f"redis://127.0.0.1:{port}/0"
        deadline = time.monotonic() + 20
        while b"Ready to accept connections" not in log.read_bytes():
            if self.redis.poll() is not None or time.monotonic() > deadline:
                raise ClusterUnavailable(f"redis-server did not start:\n{_tail(log.read_text())}")
            time.sleep(0.05)  # polling a starting server's log; nothing to wait on instead

    def server_env(self) -> dict[str, str]:
        """The environment every API server gets."""
        env = {k: v for k, v in os.environ.items() if k not in {"VIRTUAL_ENV", "PYTHONPATH"}}
        env |= OFFLINE_ENV | {
            "DATABASE_URI": self.database_uri,
            "REDIS_URI": self.redis_uri,
            "PYTHONPATH": str(REPO),
        }
        if self.engine == "aegra":
            env |= {
                "DATABASE_URL": self.database_uri,
                "AEGRA_CONFIG": str(self.config),
                # Aegra's SQLAlchemy pool is 2 connections by default (no overflow): two
                # simultaneous runs plus a status poll then wait on each other
                "SQLALCHEMY_POOL_SIZE": "8",
                "SQLALCHEMY_MAX_OVERFLOW": "8",
                "LANGGRAPH_MAX_POOL_SIZE": "8",
                "LOG_LEVEL": "WARNING",
            }
        return env | dict(self.env)

    def _argv(self, port: int) -> list[str]:
        assert self.venv is not None
        if self.engine == "aegra":
            return [
                str(self.venv / "bin/uvicorn"), "aegra_api.main:app", "--host", "127.0.0.1",
                "--port", str(port), "--log-level", "warning",
            ]  # fmt: skip
        return [
            str(self.venv / "bin/langhost"), "serve", "--host", "127.0.0.1", "--port", str(port),
            "--config", str(self.config), "--no-browser", "--server-log-level", "WARNING",
        ]  # fmt: skip

    def _spawn(self, name: str) -> Server:
        assert self.work is not None and self.venv is not None
        port = _free_port()
        log = self.work / f"server-{self.engine}-{name}.log"
        argv = self._argv(port)
        with log.open("wb") as out:
            proc = subprocess.Popen(
                argv, cwd=self.config.parent, env=self.server_env(), stdin=subprocess.DEVNULL,
                stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
            )  # fmt: skip
        server = Server(name, f"http://127.0.0.1:{port}", proc, log, time.monotonic())
        self.running.append(server)
        return server

    def _wait_up(self, server: Server) -> None:
        while not _answers(server.url, "/health" if self.engine == "aegra" else "/ok"):
            if server.proc.poll() is not None or (
                time.monotonic() - server.start_seconds > START_TIMEOUT
            ):
                raise ClusterUnavailable(
                    f"API server {server.name} did not come up on {server.url}:\n"
                    + server.log_tail()
                )
            time.sleep(0.1)  # polling a starting server; nothing to wait on instead
        server.start_seconds = time.monotonic() - server.start_seconds

    def kill(self, server: Server) -> None:
        """SIGKILL one server (what a crashed machine looks like to the others)."""
        _stop(server.proc, signal.SIGKILL)

    def replace(self, server: Server) -> Server:
        """Start a new server in the place of ``server`` (killed or stopped): the same
        position in ``running``, a new port and PID; return it once it answers."""
        _stop(server.proc)
        index = self.running.index(server)
        new = self._spawn(f"{server.name}-again")
        self.running.remove(new)
        self.running[index] = new
        self._wait_up(new)
        return new

    def stop(self) -> None:
        """Stop every process this cluster started, by PID; safe to call more than once."""
        for server in self.running:
            _stop(server.proc)
        if self.redis is not None:
            _stop(self.redis)
        if self._own_postgres is not None:
            self._own_postgres.stop()
        elif self.postgres is not None and self.database_uri:
            self.postgres.drop_database(self.database_uri)
        self.database_uri = ""

    def __enter__(self) -> Cluster:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> int:
    """Start a cluster serving ``langgraph.json``; print how to reach it; stop it on Ctrl-C."""
    parser = argparse.ArgumentParser(prog="python -m tests.cluster", description=__doc__)
    parser.add_argument("--servers", type=int, default=2, help="API servers (default 2)")
    parser.add_argument("--config", type=Path, default=REPO / "langgraph.json")
    parser.add_argument("--engine", choices=ENGINES, default="langhost", help="default langhost")
    parser.add_argument(
        "--heartbeat", default="10", help="LG_BG_JOB_HEARTBEAT in seconds (default 10)"
    )
    args = parser.parse_args(argv)
    cluster = Cluster(
        config=args.config.resolve(),
        servers=args.servers,
        engine=args.engine,
        env={"LG_BG_JOB_HEARTBEAT": args.heartbeat, "N_JOBS_PER_WORKER": "4"},
    )
    stack = "Redis and " if args.engine == "langhost" else ""
    package = LANGHOST if args.engine == "langhost" else AEGRA
    print(f"starting PostgreSQL, {stack}{args.servers} servers ({package})...", flush=True)
    try:
        cluster.start()
    except ClusterUnavailable as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    try:
        print(f"DATABASE_URI={cluster.database_uri}")
        print(f"REDIS_URI={cluster.redis_uri}")
        for server in cluster.running:
            print(f"server {server.name}: {server.url}  (pid {server.pid}, log {server.log})")
        print("Ctrl-C stops everything.", flush=True)
        signal.signal(signal.SIGTERM, signal.default_int_handler)
        while all(s.proc.poll() is None for s in cluster.running):
            time.sleep(1)  # idle until Ctrl-C (or a server dies)
    except KeyboardInterrupt:
        pass
    finally:
        cluster.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
