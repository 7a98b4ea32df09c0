"""The npm projects of the AG-UI tests (``tests/agui_client``: ``@ag-ui/client`` driving the
endpoint from Node; ``tests/agui_page``: a CopilotKit page built with vite), installed with
``npm ci`` from their committed lock files into a cache outside the clone:
``$DYNAVEC_CACHE_DIR`` (default ``~/.cache/dynavec-langgraph``) / ``<project>-<hash>``, the hash
of the project's files. A cached copy is reused; a step that fails raises
:class:`NpmProjectError` with its output (the test then fails).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

TESTS = Path(__file__).resolve().parent
STEP_TIMEOUT = 900.0


class NpmProjectError(RuntimeError):
    """An npm project could not be installed or built; the message says which step and why."""


def _files(project: Path) -> list[Path]:
    skip = {"node_modules", "dist"}
    return sorted(
        p
        for p in project.rglob("*")
        if p.is_file() and not skip & set(p.relative_to(project).parts)
    )


def cache_dir(project: Path) -> Path:
    """Where ``project`` is installed (and built), keyed by the content of its files."""
    digest = hashlib.sha256()
    for path in _files(project):
        digest.update(str(path.relative_to(project)).encode() + b"\0" + path.read_bytes())
    root = os.environ.get("DYNAVEC_CACHE_DIR") or str(Path.home() / ".cache" / "dynavec-langgraph")
    return Path(root) / f"{project.name}-{digest.hexdigest()[:16]}"


def _run(argv: list[str], cwd: Path, what: str) -> None:
    env = {**os.environ, "CI": "1", "npm_config_update_notifier": "false"}
    try:
        done = subprocess.run(
            argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
            timeout=STEP_TIMEOUT,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as error:
        raise NpmProjectError(f"{what} failed: {error}") from None
    if done.returncode != 0:
        tail = (done.stdout + done.stderr)[-3000:]
        raise NpmProjectError(f"{what} failed (exit {done.returncode}): {' '.join(argv)}\n{tail}")


def prepared(name: str, *, build: bool = False) -> Path:
    """The installed copy of ``tests/<name>`` (``npm ci``; ``npm run build`` too with
    ``build``), made now unless cached. ``prepared.json`` in it says how long that took.

    Raises:
        NpmProjectError: npm is missing, or ``npm ci`` / the build failed.
    """
    project = TESTS / name
    target = cache_dir(project)
    if (target / "prepared.json").is_file():
        return target
    npm = shutil.which("npm")
    if npm is None:
        raise NpmProjectError(
            "npm not found: install Node.js and npm (Debian: apt-get install nodejs npm; "
            "`make browser-tools` does it when they are missing)"
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix=f".{name}-", dir=target.parent) as tmp:
        work = Path(tmp) / name
        for path in _files(project):
            (work / path.relative_to(project)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, work / path.relative_to(project))
        _run([npm, "ci", "--no-audit", "--no-fund"], work, f"npm ci in tests/{name}")
        if build:
            _run([npm, "run", "build"], work, f"npm run build in tests/{name}")
        seconds = round(time.monotonic() - started, 1)
        (work / "prepared.json").write_text(f'{{"seconds": {seconds}}}\n', encoding="utf-8")
        try:
            work.rename(target)
        except OSError:  # another process made it first
            if not (target / "prepared.json").is_file():
                raise
    return target
