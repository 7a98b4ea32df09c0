"""Child processes started warm: a new process per child, with LangGraph already imported.

The tests start hundreds of child Python processes (a process killed with SIGKILL, a new process
that continues the thread, the CLI, a docs page run pasted). Each spent 1.3-2 s of CPU importing
LangGraph, LangChain and the package before doing anything: most of the suite's CPU on a
two-core machine. Here one parent per test process (the *zygote*, ``python -m
tests.children.warm SOCKET``) imports them once and forks a child per request, which then runs
``python -m MODULE ARGS`` (``runpy``, as the interpreter does) in its own working directory and
environment, with its own standard streams.

What a child shares with the test: nothing. It is a process of its own (its own PID, killed by
``SIGKILL`` like any other, nothing in memory from the test), forked from a parent that only
imported modules; it keeps its own state (a saver, a thread, a lock) as a cold start would. What
differs from a cold start: the modules the zygote imported (:data:`WARM_MODULES`) are already in
``sys.modules``. So a test of what gets imported, or of an import-time error, starts its children
cold (plain :mod:`subprocess`), and so does a child given another ``PYTHONPATH``.

:class:`Child` is the part of :class:`subprocess.Popen` the tests use (``pid``, ``poll``,
``wait``, ``communicate``, ``kill``, ``returncode``); ``stdout=PIPE``/``stderr=PIPE`` become
files read when the child has ended (no test reads a child's output while it runs).
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import selectors
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any, Final, Protocol

ROOT: Final = Path(__file__).resolve().parents[2]
WARM_MODULES: Final = (
    "dynavec_langgraph",
    "dynavec_langgraph._cli",
    "dynavec_langgraph.agents",
    "langgraph.checkpoint.sqlite",
    "langgraph.checkpoint.postgres",
    "psycopg",
    "tests.children.scenario",
)
"""What the zygote imports once (what most children import first)."""
START_TIMEOUT: Final = 60.0
_COLD_ENV: Final = ("PYTHONPATH", "PYTHONHASHSEED", "PYTHONSAFEPATH", "PYTHONWARNINGS")
"""A child whose environment differs from the zygote's in one of these starts cold."""


class Process(Protocol):
    """What the tests do with a child: a :class:`Child` or a :class:`subprocess.Popen`."""

    @property
    def returncode(self) -> int | None: ...

    def poll(self) -> int | None: ...

    def communicate(self, input: Any = None, timeout: float | None = None) -> tuple[Any, Any]: ...

    def kill(self) -> None: ...


# --- the zygote ------------------------------------------------------------------------------


def _child_main(request: dict[str, Any], fds: list[int]) -> None:
    """In the forked child: become ``python -m MODULE ARGS`` and exit with its code."""
    code = 1
    try:
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        sys.argv = [request["module"], *request["args"]]
        sys.modules.pop(request["module"], None)  # run afresh as __main__, as `python -m` does
        sys.path[0] = request["cwd"]
        import runpy

        try:
            runpy.run_module(request["module"], run_name="__main__", alter_sys=True)
            code = 0
        except SystemExit as stop:
            if stop.code is None:
                code = 0
            elif isinstance(stop.code, int):
                code = stop.code
            else:
                print(stop.code, file=sys.stderr)
                code = 1
        except BaseException:
            traceback.print_exc()
            code = 1
        with contextlib.suppress(BaseException):
            atexit._run_exitfuncs()
    finally:
        with contextlib.suppress(BaseException):
            sys.stdout.flush()
        with contextlib.suppress(BaseException):
            sys.stderr.flush()
        os._exit(code)


def _receive(conn: socket.socket) -> tuple[dict[str, Any], list[int]]:
    """One request: a JSON line, the child's standard streams' descriptors with its first part."""
    data, fds, _, _ = socket.recv_fds(conn, 1 << 16, 3)
    while not data.endswith(b"\n"):
        more = conn.recv(1 << 16)
        if not more:
            raise ConnectionError("request cut short")
        data += more
    request: dict[str, Any] = json.loads(data)
    return request, list(fds)


def _serve(path: str) -> None:
    """The zygote's loop: fork a child per request, report each child's end to its requester."""
    for name in WARM_MODULES:
        __import__(name)
    parent = os.getppid()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    wake_r, wake_w = socket.socketpair()
    wake_w.setblocking(False)
    signal.set_wakeup_fd(wake_w.fileno())
    signal.signal(signal.SIGCHLD, lambda *_: None)
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ)
    selector.register(wake_r, selectors.EVENT_READ)
    waiting: dict[int, socket.socket] = {}
    print("ready", flush=True)
    while os.getppid() == parent:
        for key, _ in selector.select(timeout=1.0):
            if key.fileobj is wake_r:
                wake_r.recv(4096)
                continue
            conn, _ = listener.accept()
            request, fds = _receive(conn)
            pid = os.fork()
            if pid == 0:
                signal.set_wakeup_fd(-1)
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                for sock in (listener, wake_r, wake_w, conn, *waiting.values()):
                    sock.close()
                selector.close()
                _child_main(request, fds)
            for fd in fds:
                os.close(fd)
            conn.sendall(f"{pid}\n".encode())
            waiting[pid] = conn
        while waiting:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            ended = waiting.pop(pid, None)
            if ended is not None:
                with contextlib.suppress(OSError):
                    ended.sendall(f"{os.waitstatus_to_exitcode(status)}\n".encode())
                ended.close()
    for pid in waiting:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


# --- the test side ---------------------------------------------------------------------------


class _Zygote:
    """This test process's zygote, started on first use and stopped by its PID at exit."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._path = ""
        self._env: dict[str, str] = {}

    def path(self) -> str:
        with self._lock:
            if self._proc is None or self._proc.poll() is not None:
                self._start()
            return self._path

    def env(self) -> dict[str, str]:
        return self._env

    def _start(self) -> None:
        folder = tempfile.mkdtemp(prefix="dynavec-warm-")
        self._path = os.path.join(folder, "zygote.sock")
        self._env = dict(os.environ)
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "tests.children.warm", self._path],
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
        )
        assert self._proc.stdout is not None
        line = self._proc.stdout.readline()  # after its imports; fails fast if it crashed
        if line.strip() != b"ready":
            self._proc.kill()
            raise RuntimeError(f"the warm parent of the child processes did not start: {line!r}")
        atexit.register(self.stop)

    def stop(self) -> None:
        proc = self._proc
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait(timeout=15)


_ZYGOTE: Final = _Zygote()


def _is_warm(argv: Sequence[str], env: Mapping[str, str]) -> bool:
    if len(argv) < 3 or argv[0] != sys.executable or argv[1] != "-m":
        return False
    mine = _ZYGOTE.env() or os.environ
    return all(env.get(name) == mine.get(name) for name in _COLD_ENV)


class Child:
    """A child process: forked warm by the zygote, or (``cold=True``, or argv not ``python -m
    MODULE``) started by :mod:`subprocess`. The subset of :class:`subprocess.Popen` the tests
    use."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        cwd: str | Path = ROOT,
        env: Mapping[str, str] | None = None,
        stdout: int | IO[Any] | None = None,
        stderr: int | IO[Any] | None = None,
        text: bool = False,
        cold: bool = False,
    ) -> None:
        self.args = list(argv)
        self.returncode: int | None = None
        self._text = text
        self._cold: subprocess.Popen[Any] | None = None
        self._conn: socket.socket | None = None
        self._captured: dict[int, IO[bytes]] = {}
        child_env = dict(os.environ if env is None else env)
        if cold or not _is_warm(self.args, child_env):
            self._cold = subprocess.Popen(
                self.args,
                cwd=cwd,
                env=child_env,
                stdin=subprocess.DEVNULL,
                stdout=stdout,
                stderr=stderr,
                text=text,
            )
            self.pid = self._cold.pid
            return
        fds: list[int] = []
        try:
            fds.append(os.open(os.devnull, os.O_RDONLY))
            for target, stream in ((1, stdout), (2, stderr)):
                if stream == subprocess.PIPE:
                    captured = tempfile.TemporaryFile()  # noqa: SIM115 (closed in communicate)
                    self._captured[target] = captured
                    fds.append(os.dup(captured.fileno()))
                elif stream == subprocess.DEVNULL:
                    fds.append(os.open(os.devnull, os.O_WRONLY))
                elif stream is None:
                    fds.append(os.dup(target))
                elif isinstance(stream, int):
                    fds.append(os.dup(stream))
                else:
                    fds.append(os.dup(stream.fileno()))
            request = {
                "module": self.args[2],
                "args": self.args[3:],
                "cwd": str(cwd),
                "env": child_env,
            }
            conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            conn.settimeout(START_TIMEOUT)
            conn.connect(_ZYGOTE.path())
            socket.send_fds(conn, [json.dumps(request).encode() + b"\n"], fds)
            self._conn = conn
            self._buffer = b""
            pid = self._line(START_TIMEOUT)
            if pid is None:
                raise RuntimeError(f"the warm parent did not start {self.args}")
            self.pid = int(pid)
        finally:
            for fd in fds:
                os.close(fd)

    def poll(self) -> int | None:
        if self._cold is not None:
            self.returncode = self._cold.poll()
            return self.returncode
        if self.returncode is None:
            self._read_end(0.0)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self._cold is not None:
            self.returncode = self._cold.wait(timeout)
            return self.returncode
        if self.returncode is None and not self._read_end(timeout):
            raise subprocess.TimeoutExpired(self.args, timeout or 0.0)
        assert self.returncode is not None
        return self.returncode

    def _line(self, timeout: float | None) -> bytes | None:
        """The zygote's next line on this child's connection, or None after ``timeout`` s."""
        assert self._conn is not None
        deadline = None if timeout is None else time.monotonic() + timeout
        while b"\n" not in self._buffer:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            self._conn.settimeout(left)
            try:
                more = self._conn.recv(4096)
            except (TimeoutError, BlockingIOError):
                return None
            if not more:
                raise RuntimeError(f"the warm parent of child {self.args} died")
            self._buffer += more
        line, self._buffer = self._buffer.split(b"\n", 1)
        return line

    def _read_end(self, timeout: float | None) -> bool:
        line = self._line(timeout)
        if line is None:
            return False
        self.returncode = int(line)
        assert self._conn is not None
        self._conn.close()
        return True

    def communicate(self, input: None = None, timeout: float | None = None) -> tuple[Any, Any]:
        if self._cold is not None:
            out, err = self._cold.communicate(timeout=timeout)
            self.returncode = self._cold.returncode
            return out, err
        self.wait(timeout)
        found: list[Any] = []
        for target in (1, 2):
            captured = self._captured.get(target)
            if captured is None:
                found.append(None)
                continue
            captured.seek(0)
            data = captured.read()
            captured.close()
            found.append(data.decode("utf-8", "replace") if self._text else data)
        return found[0], found[1]

    def send_signal(self, sig: int) -> None:
        if self._cold is not None:
            self._cold.send_signal(sig)
        elif self.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, sig)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def __enter__(self) -> Child:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.returncode is None:
            self.kill()
            with contextlib.suppress(Exception):
                self.wait(START_TIMEOUT)


def run(
    argv: Sequence[str],
    *,
    cwd: str | Path = ROOT,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
    cold: bool = False,
) -> subprocess.CompletedProcess[str]:
    """``subprocess.run(argv, capture_output=True, text=True)``, warm where it can be."""
    child = Child(
        argv,
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cold=cold,
    )
    try:
        out, err = child.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait(START_TIMEOUT)
        raise
    assert child.returncode is not None
    return subprocess.CompletedProcess(child.args, child.returncode, out, err)


if __name__ == "__main__":
    _serve(sys.argv[1])
