"""A throwaway PostgreSQL 15 server for tests and benchmarks, plus pytest fixtures.

`PostgresServer` runs ``initdb``/``pg_ctl`` from the installed binaries (as the ``postgres``
user when we are root, since ``initdb`` refuses to run as root) in a temp dir under ``/tmp``.
If ``DYNAVEC_TEST_POSTGRES_URI`` is set, that server is used instead and nothing is started.
Fixtures: ``postgres_server`` (session) and ``pg_uri`` (a fresh database per test).
"""

from __future__ import annotations

import atexit
import os
import pwd
import shlex
import shutil
import socket
import stat
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from urllib.parse import urlsplit

import psycopg
import pytest
from psycopg import sql

PG_BIN = Path(os.environ.get("DYNAVEC_PG_BIN", "/usr/lib/postgresql/15/bin"))
URI_ENV = "DYNAVEC_TEST_POSTGRES_URI"


class PostgresUnavailable(RuntimeError):
    """The server could not be started (the message carries the initdb/pg_ctl log tail)."""


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _tail(text: str, lines: int = 40) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


class PostgresServer:
    """A private PostgreSQL server (or the one named by ``DYNAVEC_TEST_POSTGRES_URI``)."""

    def __init__(self, base_dir: str | None = None) -> None:
        self.base_dir = base_dir or "/tmp"
        self.uri = ""
        self.port = 0
        self.dir: Path | None = None
        self._as_postgres = os.geteuid() == 0
        self._start_argv: tuple[str, ...] = ()

    def _run(self, *args: str) -> subprocess.CompletedProcess[str]:
        """Run a PostgreSQL binary, via ``su postgres`` when we are root."""
        argv = [str(PG_BIN / args[0]), *args[1:]]
        if self._as_postgres:
            argv = ["su", "postgres", "-s", "/bin/sh", "-c", shlex.join(argv)]
        return subprocess.run(
            argv, cwd="/", capture_output=True, text=True, stdin=subprocess.DEVNULL
        )

    def _fail(self, what: str, proc: subprocess.CompletedProcess[str] | None) -> None:
        out = (proc.stdout + proc.stderr) if proc else ""
        log = self.dir / "log" if self.dir else None
        if log is not None and log.exists():
            out += "\n--- server log ---\n" + log.read_text(errors="replace")
        self.stop()
        raise PostgresUnavailable(f"{what} failed:\n{_tail(out)}")

    def start(self) -> PostgresServer:
        """Start the server (no-op when ``DYNAVEC_TEST_POSTGRES_URI`` is set); return self."""
        if self.uri:
            return self
        if env_uri := os.environ.get(URI_ENV):
            self.uri = env_uri
            return self
        if not (PG_BIN / "pg_ctl").exists():
            raise PostgresUnavailable(f"no PostgreSQL binaries in {PG_BIN}")
        base = Path(self.base_dir)
        base.mkdir(parents=True, exist_ok=True)
        self.dir = Path(tempfile.mkdtemp(prefix="dynavec-pg-", dir=base))
        atexit.register(self.stop)
        if self._as_postgres:
            for parent in self.dir.parents:  # let the postgres user traverse to the dir
                mode = parent.stat().st_mode
                if not mode & stat.S_IXOTH:
                    parent.chmod(mode | stat.S_IXOTH)
            pw = pwd.getpwnam("postgres")
            os.chown(self.dir, pw.pw_uid, pw.pw_gid)
        data = str(self.dir / "data")
        proc = self._run(
            "initdb",
            "-D",
            data,
            "-U",
            "postgres",
            "--auth=trust",
            "-E",
            "UTF8",
            "--no-locale",
            "--no-sync",
        )
        if proc.returncode != 0:
            self._fail("initdb", proc)
        for attempt in range(3):  # the free port may be taken before the server binds it
            self.port = _free_port()
            opts = (
                f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1"
                " -c fsync=off -c max_connections=100"
            )
            log = str(self.dir / "log")
            self._start_argv = ("pg_ctl", "-D", data, "-o", opts, "-l", log, "-w", "start")
            proc = self._run(*self._start_argv)
            if proc.returncode == 0:
                break
            if attempt == 2:
                self._fail("pg_ctl start", proc)
        self.uri = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"
        return self

    def shutdown(self) -> None:
        """Stop the server process but keep its data and port (:meth:`restart` resumes it)."""
        if self.dir is None:
            raise PostgresUnavailable("shutdown() needs a server this object started")
        proc = self._run("pg_ctl", "-D", str(self.dir / "data"), "-m", "fast", "-w", "stop")
        if proc.returncode != 0:
            self._fail("pg_ctl stop", proc)

    def restart(self) -> None:
        """Start a server stopped by :meth:`shutdown` again, on the same port and data."""
        if self.dir is None:
            raise PostgresUnavailable("restart() needs a server this object started")
        proc = self._run(*self._start_argv)
        if proc.returncode != 0:
            self._fail("pg_ctl start", proc)

    def stop(self) -> None:
        """Stop the server and remove its directory; safe to call more than once."""
        directory, self.dir = self.dir, None
        if directory is None:
            return
        atexit.unregister(self.stop)
        if (directory / "data" / "postmaster.pid").exists():
            self._run("pg_ctl", "-D", str(directory / "data"), "-m", "immediate", "-w", "stop")
        shutil.rmtree(directory, ignore_errors=True)
        self.uri = ""

    def __enter__(self) -> PostgresServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def _uri_for(self, name: str) -> str:
        return urlsplit(self.uri)._replace(path="/" + name).geturl()

    def _admin(self, statement: sql.Composed) -> None:
        if not self.uri:
            raise PostgresUnavailable("server not started")
        with psycopg.connect(self.uri, autocommit=True) as conn:
            conn.execute(statement)

    def create_database(self, name: str | None = None) -> str:
        """Create a database (default name ``t_<hex>``) and return its URI."""
        name = name or f"t_{uuid.uuid4().hex}"
        self._admin(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        return self._uri_for(name)

    def drop_database(self, name_or_uri: str) -> None:
        """Drop a database by name or URI, terminating its connections first."""
        name = urlsplit(name_or_uri).path.lstrip("/") if "://" in name_or_uri else name_or_uri
        stmt = sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        self._admin(stmt)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """One server per session; a failure to start is an error, never a skip."""
    with PostgresServer() as server:
        yield server


@pytest.fixture
def pg_uri(postgres_server: PostgresServer) -> Iterator[str]:
    """The URI of a fresh database, dropped after the test."""
    uri = postgres_server.create_database()
    try:
        yield uri
    finally:
        postgres_server.drop_database(uri)


@pytest.fixture(params=["sqlite", "postgres"])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A SQLite file path or the URI of a fresh PostgreSQL database."""
    if request.param == "sqlite":
        return str(tmp_path / "agent.db")
    uri: str = request.getfixturevalue("pg_uri")
    return uri
