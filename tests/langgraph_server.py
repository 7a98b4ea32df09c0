"""``langgraph dev`` for the tests, started in one place: :func:`langgraph_dev` writes or takes
the config, starts the server in a session of its own, polls it until it answers (one that does
not come up fails the test with its log) and stops it by its PID (its process group) on
leaving. Every test file that starts ``langgraph dev`` goes through it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.pg import _free_port

__all__ = ["LANGGRAPH", "REPO", "START_TIMEOUT", "Served", "answers", "langgraph_dev", "stop"]

REPO = Path(__file__).resolve().parents[1]
LANGGRAPH = Path(sys.executable).parent / "langgraph"
START_TIMEOUT = 120.0  # the first start imports langgraph-api; slow on a loaded machine
OFFLINE = {
    "LANGGRAPH_CLI_NO_ANALYTICS": "1",
    "LANGGRAPH_NO_VERSION_CHECK": "1",
    "LANGSMITH_TRACING": "false",
}
"""No analytics, no version check, no tracing: the server runs offline."""


@dataclass
class Served:
    """A running ``langgraph dev``: its URL, the demo tools' ledger (``DYNAVEC_DEMO_LEDGER``),
    its output and how long it took to answer."""

    url: str
    ledger: Path
    log: Path
    start_seconds: float


def answers(url: str) -> bool:
    """Whether the server at ``url`` answers ``/ok``."""
    try:
        with urllib.request.urlopen(f"{url}/ok", timeout=2) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def stop(proc: subprocess.Popen[bytes]) -> None:
    """Stop a process started in a session of its own, by its PID (process group = PID):
    SIGTERM, then SIGKILL after 15 s."""
    if proc.poll() is not None:
        return
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=15)


def _environment(ledger: Path, first_on_path: Sequence[Path]) -> dict[str, str]:
    """This process's environment, offline, without an OpenAI key (the scripted models), the
    ledger in ``DYNAVEC_DEMO_LEDGER`` and ``first_on_path`` first on ``PYTHONPATH``."""
    env = {k: v for k, v in os.environ.items() if k not in {"OPENAI_API_KEY", "OPENAI_BASE_URL"}}
    env |= OFFLINE | {"DYNAVEC_DEMO_LEDGER": str(ledger)}
    if first_on_path:
        path = [*map(str, first_on_path), *filter(None, [env.get("PYTHONPATH")])]
        env["PYTHONPATH"] = os.pathsep.join(path)
    return env


@contextmanager
def langgraph_dev(
    work: Path,
    config: Mapping[str, Any] | Path | None,
    extra_env: Mapping[str, str] | None = None,
    *,
    cwd: Path | None = None,
    first_on_path: Sequence[Path] = (REPO,),
    env: Mapping[str, str] | None = None,
    langgraph: Path = LANGGRAPH,
) -> Iterator[Served]:
    """``langgraph dev`` (``langgraph``, by default this interpreter's) on a free port of
    127.0.0.1, run in ``cwd`` (default ``work``), its output in ``work/server.log``.

    ``config``: a dict is written to ``work/langgraph.json`` and served; a path is served as
    it is; ``None`` serves the ``langgraph.json`` of ``cwd``. ``env``: the server's whole
    environment (default: this process's, offline, without an OpenAI key, the ledger
    ``work/ledger.jsonl`` in ``DYNAVEC_DEMO_LEDGER``, ``first_on_path`` first on
    ``PYTHONPATH``); ``extra_env`` is added to it, ``{url}`` in a value standing for the
    server's URL. One that does not come up within ``START_TIMEOUT`` fails the test."""
    ledger, log_path = work / "ledger.jsonl", work / "server.log"
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    argv = [str(langgraph), "dev", "--host", "127.0.0.1", "--port", str(port)]
    argv += ["--no-browser", "--no-reload"]
    if isinstance(config, Mapping):
        (work / "langgraph.json").write_text(json.dumps(config), encoding="utf-8")
        config = work / "langgraph.json"
    if config is not None:
        argv += ["--config", str(config)]
    environment = dict(env) if env is not None else _environment(ledger, first_on_path)
    environment |= {k: v.replace("{url}", url) for k, v in (extra_env or {}).items()}
    with log_path.open("wb") as log:
        started = time.monotonic()
        proc = subprocess.Popen(
            argv,
            cwd=cwd or work,
            env=environment,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        while not answers(url):
            if proc.poll() is not None or time.monotonic() - started > START_TIMEOUT:
                tail = log_path.read_text(errors="replace")[-4000:]
                served = config or "langgraph.json"
                pytest.fail(f"langgraph dev ({served}) did not come up on {url}:\n{tail}")
            time.sleep(0.2)  # polling a server that is starting; nothing to wait on instead
        yield Served(url, ledger, log_path, time.monotonic() - started)
    finally:
        stop(proc)
