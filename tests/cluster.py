"""A local LangGraph API cluster: PostgreSQL + Redis + N ``langhost serve`` servers on 127.0.0.1.

``langhost`` (PyPI, MIT, third party) runs stock ``langgraph-api`` on the open PostgreSQL + Redis
runtime ``langgraph-runtime-pg``. ``langhost==0.11.1.post1`` pins ``langgraph-api==0.11.1``,
older than the ``langgraph-api`` of this package's ``studio`` extra, so the server stack lives in
its own virtualenv (:func:`langhost_venv`). ``engine="aegra"``: Aegra (``aegra-api``,
Apache-2.0) from a virtualenv of its own (:func:`aegra_venv`), over PostgreSQL alone.

**What users install is what is tested.** The servers run this package from its **built
wheel** (``tests/dist.py``), as a deployment does, never from the clone:

* :func:`wheel_server_venv`: a virtualenv per (server stack, wheel). The server stack (langhost
  or Aegra + this package's dependencies, ~300 MB, ~2 min with pip) is built once per pinned
  requirements into ``~/.cache/dynavec-langgraph/NAME-venv-KEY`` (:func:`server_venv`) and never
  holds this package. The wheel changes with every source change, so it goes into a thin
  virtualenv of its own, ``NAME-venv-KEY-dist-TREEKEY`` (~3 MB, ~2 s: ``venv --without-pip``,
  a ``.pth`` adding the stack's site-packages *after* its own, ``pip install --no-deps`` of the
  wheel, ``pip check`` that the stack meets the wheel's requirements), built once per tree
  content under a file lock. Not one shared virtualenv whose wheel is reinstalled when it
  differs: two sessions (worktrees) testing different trees would then swap the package under
  each other's running servers, and a server restarted mid-test (:meth:`Cluster.replace`) would
  import the other tree's code. Not a full virtualenv per wheel: ~300 MB and, with pip, two
  minutes per source change.
* :func:`app_dir`: the servers' working directory is a folder OUTSIDE the clone holding a copy
  of the ``langgraph.json`` served and the graph modules it names (with the modules of the
  clone they import, e.g. ``tests/payment_service.py``), its ``dependencies`` set to ``["."]``;
  a graph inside the package (``../dynavec_langgraph/studio.py:graph``) is served through a
  one-line module importing it from the installed package. No ``PYTHONPATH``: ``import
  dynavec_langgraph`` in a server can only find the wheel (the graph ``installed`` of
  ``tests/installed_graph.py`` reports where it came from; tests/test_cluster.py checks it).

Start order (:class:`Cluster`): PostgreSQL, Redis, the first server ALONE (it runs the
migrations; two first starts on a fresh database race on them), then the others. Every process
binds 127.0.0.1 and is stopped by its PID.

``python -m tests.cluster`` (``make cluster``) starts one for trying docs/scale-out.md
section and stops it on Ctrl-C (``--engine aegra``: two Aegra servers instead, no Redis).
"""

from __future__ import annotations

import argparse
import ast
import fcntl
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import time
import tomllib
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

from tests import dist
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
    """The virtualenv with ``langhost serve`` and this package's built wheel; the server
    stack is created (~2 min) when missing, the wheel and its layer (~20 s together) when the
    package changed.

    Raises:
        ClusterUnavailable: a virtualenv or the wheel could not be built (the tool's output).
    """
    return wheel_server_venv(server_venv("langhost", server_requirements(), "bin/langhost"))


def aegra_venv() -> Path:
    """The virtualenv with Aegra (``uvicorn aegra_api.main:app``) and this package's built
    wheel; made as :func:`langhost_venv` is.

    Raises:
        ClusterUnavailable: a virtualenv or the wheel could not be built (the tool's output).
    """
    return wheel_server_venv(server_venv("aegra", aegra_requirements(), "bin/uvicorn"))


def site_packages(venv: Path) -> Path:
    """The ``site-packages`` folder of ``venv`` (made with this Python)."""
    return Path(sysconfig.get_path("purelib", vars={"base": str(venv), "platbase": str(venv)}))


def _install_step(argv: list[str]) -> None:
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV"}}
    proc = subprocess.run(argv, capture_output=True, text=True, stdin=subprocess.DEVNULL, env=env)
    if proc.returncode != 0:
        raise ClusterUnavailable(
            f"cannot install the wheel for the server ({' '.join(argv)}):\n"
            + _tail(proc.stdout + proc.stderr)
        )


def wheel_server_venv(stack: Path) -> Path:
    """The cached virtualenv ``STACK-dist-TREEKEY``: this package's wheel (built from the tree
    as it is now, :func:`tests.dist.built`) installed without dependencies, over the server
    ``stack`` (a ``.pth`` file adds the stack's site-packages after its own); checked with
    ``pip check``. Made once per tree content, by one process at a time.

    Raises:
        ClusterUnavailable: the wheel could not be built or installed, or the stack does not
            meet its requirements.
    """
    try:
        wheel = dist.built().wheel
    except dist.DistUnavailable as error:
        raise ClusterUnavailable(f"cannot build the wheel: {error}") from error
    venv = CACHE / f"{stack.name}-{wheel.parent.name}"
    if (venv / ".complete").exists():
        dist.used(venv)
        return venv
    with (CACHE / f"{venv.name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one builder; the others wait and reuse it
        if (venv / ".complete").exists():
            return venv
        shutil.rmtree(venv, ignore_errors=True)  # a build that was interrupted
        _install_step([sys.executable, "-m", "venv", "--without-pip", str(venv)])
        # the stack after the wheel's own site-packages, its .pth files processed too
        line = f"import site; site.addsitedir({str(site_packages(stack))!r})\n"
        (site_packages(venv) / "_dynavec_server_stack.pth").write_text(line, encoding="utf-8")
        pip = [str(stack / "bin/python"), "-m", "pip", "--python", str(venv / "bin/python")]
        quiet = ["-q", "--disable-pip-version-check"]
        _install_step([*pip, "install", *quiet, "--no-deps", "--no-index", str(wheel)])
        _install_step([*pip, "check", "--disable-pip-version-check"])
        dist.used(venv)
    return venv


def _inside(path: Path, folder: Path) -> bool:
    return path.resolve().is_relative_to(folder.resolve())


def _clone_modules(source: Path) -> set[Path]:
    """The files of the clone (outside the package) that ``source`` imports, and theirs: the
    modules and their packages' ``__init__.py`` (absolute imports; the package comes from the
    wheel)."""
    found: set[Path] = set()
    todo = [source]
    while todo:
        tree = ast.parse(todo.pop().read_text(encoding="utf-8"))
        names: list[str] = []
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names += [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names += [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
        for name in names:
            parts = name.split(".")
            if parts[0] == dist.PACKAGE:
                continue
            for depth in range(1, len(parts) + 1):
                base = REPO.joinpath(*parts[:depth])
                for candidate in (base / "__init__.py", base.with_suffix(".py")):
                    if candidate.is_file() and candidate not in found:
                        found.add(candidate)
                        todo.append(candidate)
    return found


def app_dir(config: Path, dest: Path) -> Path:
    """Copy ``config`` (a ``langgraph.json``) into ``dest`` (a folder outside the clone) with
    the graph modules it names and the modules of the clone they import; return the copy.

    In the copy, ``dependencies`` is ``["."]`` (plus those outside the clone); a graph in the
    clone, ``./x/y.py:graph``, is copied to ``dest/<its path in the clone>``; a graph inside the
    package, ``../dynavec_langgraph/studio.py:graph``, is served by ``dest/<module>.py``, which
    imports it from the installed package; a graph outside the clone keeps its absolute path.

    Raises:
        ClusterUnavailable: ``dest`` is inside the clone.
    """
    if _inside(dest, REPO):
        raise ClusterUnavailable(f"the servers' folder {dest} must be outside the clone {REPO}")
    dest.mkdir(parents=True, exist_ok=True)
    spec = json.loads(config.read_text(encoding="utf-8"))
    here = config.resolve().parent
    graphs: dict[str, str] = {}
    copies: set[Path] = set()
    shims: dict[str, set[str]] = {}
    for name, target in spec.get("graphs", {}).items():
        where, _, variable = str(target).rpartition(":")
        if "/" not in where:  # a module (``pkg.mod:graph``): imported from the venv as it is
            graphs[name] = target
            continue
        path = (here / where).resolve()
        if _inside(path, REPO / dist.PACKAGE):
            module = ".".join(path.relative_to(REPO).with_suffix("").parts)
            module = module.removesuffix(".__init__")
            shims.setdefault(module, set()).add(variable)
            graphs[name] = f"./{module.replace('.', '__')}.py:{variable}"
        elif _inside(path, REPO):
            copies |= {path, *_clone_modules(path)}
            graphs[name] = f"./{path.relative_to(REPO).as_posix()}:{variable}"
        else:
            graphs[name] = f"{path}:{variable}"
    for path in copies:
        (dest / path.relative_to(REPO)).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, dest / path.relative_to(REPO))
    for module, variables in shims.items():
        (dest / f"{module.replace('.', '__')}.py").write_text(
            f'"""Written by tests/cluster.py: graphs of the installed {module}."""\n\n'
            f"from {module} import {', '.join(sorted(variables))}\n",
            encoding="utf-8",
        )
    outside = [
        str((here / d).resolve())
        for d in spec.get("dependencies", [])
        if not _inside(here / d, REPO)
    ]
    served = dest / config.name
    served.write_text(
        json.dumps({**spec, "graphs": graphs, "dependencies": [".", *outside]}, indent=2) + "\n",
        encoding="utf-8",
    )
    return served


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
        config: the ``langgraph.json`` to serve; the servers serve a copy of it and of the
            graph modules it names (:func:`app_dir`, in ``work/app``, their working directory),
            with this package from the wheel (:func:`wheel_server_venv`).
        servers: how many API servers.
        engine: ``"langhost"`` (langgraph-api on ``langgraph-runtime-pg``) or ``"aegra"``.
        env: extra environment for the servers (e.g. ``LG_BG_JOB_HEARTBEAT``).
        work: where logs, the Redis directory and the servers' ``app`` folder go (default: a
            new temp dir; outside the clone).
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
    served: Path | None = None
    """The copy of ``config`` the servers serve (its folder is their working directory)."""
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
        self.served = app_dir(self.config, self.work / "app")
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
        """The environment every API server gets: no ``PYTHONPATH`` (the package comes from
        the wheel in the server's virtualenv)."""
        env = {k: v for k, v in os.environ.items() if k not in {"VIRTUAL_ENV", "PYTHONPATH"}}
        env |= OFFLINE_ENV | {"DATABASE_URI": self.database_uri, "REDIS_URI": self.redis_uri}
        if self.engine == "aegra":
            env |= {
                "DATABASE_URL": self.database_uri,
                "AEGRA_CONFIG": str(self.served),
                # Aegra's SQLAlchemy pool is 2 connections by default (no overflow): two
                # simultaneous runs plus a status poll then wait on each other
                "SQLALCHEMY_POOL_SIZE": "8",
                "SQLALCHEMY_MAX_OVERFLOW": "8",
                "LANGGRAPH_MAX_POOL_SIZE": "8",
                "LOG_LEVEL": "WARNING",
            }
        return env | dict(self.env)

    def _argv(self, port: int) -> list[str]:
        """The server's command: ``python -m`` of the wheel's virtualenv (the stack's console
        scripts would start the stack's Python, which has no wheel)."""
        assert self.venv is not None and self.served is not None
        python = str(self.venv / "bin/python")
        if self.engine == "aegra":
            return [
                python, "-m", "uvicorn", "aegra_api.main:app", "--host", "127.0.0.1",
                "--port", str(port), "--log-level", "warning",
            ]  # fmt: skip
        return [
            python, "-m", "langhost", "serve", "--host", "127.0.0.1", "--port", str(port),
            "--config", str(self.served), "--no-browser", "--server-log-level", "WARNING",
        ]  # fmt: skip

    def _spawn(self, name: str) -> Server:
        assert self.work is not None and self.venv is not None and self.served is not None
        port = _free_port()
        log = self.work / f"server-{self.engine}-{name}.log"
        argv = self._argv(port)
        with log.open("wb") as out:
            proc = subprocess.Popen(
                argv, cwd=self.served.parent, env=self.server_env(), stdin=subprocess.DEVNULL,
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
