"""Build (once) the Agent Chat UI the browser test drives, from the npm package
``create-agent-chat-app`` (its vite template), and cache the build outside the clone.

``make agent-chat-ui`` runs ``python -m tests.agent_chat_ui`` (a prerequisite of ``make pytest``);
the browser test calls :func:`build` too, so it also works alone. A cached build is reused; a
build that cannot be made raises :class:`UIBuildError` with the reason (the test then fails).

The cache is ``$DYNAVEC_CACHE_DIR`` (default ``~/.cache/dynavec-langgraph``) /
``agent-chat-ui-<version>``: ``dist/`` (the static site) and ``build.json`` (how long it took).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

VERSION = "0.1.6"
"""The ``create-agent-chat-app`` version built (its vite template: the Agent Chat UI that reads
Agent Inbox interrupts, before the UI's LangChain 1.0 schema change)."""
STEP_TIMEOUT = 900.0


class UIBuildError(RuntimeError):
    """The Agent Chat UI could not be built; the message says which step failed and why."""


def cache_dir() -> Path:
    """Where the build of :data:`VERSION` is kept."""
    root = os.environ.get("DYNAVEC_CACHE_DIR") or str(Path.home() / ".cache" / "dynavec-langgraph")
    return Path(root) / f"agent-chat-ui-{VERSION}"


def _run(argv: list[str], cwd: Path, what: str) -> None:
    env = {**os.environ, "CI": "1", "npm_config_update_notifier": "false"}
    try:
        done = subprocess.run(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=STEP_TIMEOUT,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise UIBuildError(f"{what} failed: {error}") from None
    if done.returncode != 0:
        tail = (done.stdout + done.stderr)[-3000:]
        raise UIBuildError(f"{what} failed (exit {done.returncode}): {' '.join(argv)}\n{tail}")


def build() -> Path:
    """The ``dist`` folder of the Agent Chat UI, built now unless cached.

    Raises:
        UIBuildError: npm is missing, or a step (scaffold, install, build) failed.
    """
    target = cache_dir()
    dist = target / "dist"
    if (dist / "index.html").is_file():
        return dist
    npx, npm = shutil.which("npx"), shutil.which("npm")
    if npx is None or npm is None:
        raise UIBuildError(
            "npm/npx not found: install Node.js and npm (Debian: apt-get install nodejs npm; "
            "`make agent-chat-ui` does it when they are missing)"
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix=".agent-chat-ui-", dir=target.parent) as tmp:
        work = Path(tmp)
        scaffold = [npx, "-y", f"create-agent-chat-app@{VERSION}", "--yes"]
        scaffold += ["--project-name", "app", "--package-manager", "npm"]
        scaffold += ["--install-deps", "false", "--framework", "vite", "--include-agent", "react"]
        _run(scaffold, work, f"scaffolding with create-agent-chat-app@{VERSION}")
        web = work / "web"  # the UI alone, outside the scaffold's npm workspace
        shutil.copytree(work / "app" / "apps" / "web", web)
        _run([npm, "install", "--no-audit", "--no-fund"], web, "npm install of the UI")
        _run([npm, "run", "build:internal"], web, "building the UI (tsc -b && vite build)")
        if not (web / "dist" / "index.html").is_file():
            raise UIBuildError(f"the UI build left no dist/index.html in {web}")
        staged = work / "staged"
        staged.mkdir()
        shutil.move(web / "dist", staged / "dist")
        shutil.copy(web / "package-lock.json", staged / "package-lock.json")
        seconds = time.monotonic() - started
        (staged / "build.json").write_text(
            json.dumps({"version": VERSION, "seconds": round(seconds, 1)}), encoding="utf-8"
        )
        if target.exists():  # a half-finished earlier build (no index.html)
            shutil.rmtree(target)
        staged.rename(target)
    return dist


def main() -> int:
    """``python -m tests.agent_chat_ui``: build unless cached; print where and how long."""
    cached = (cache_dir() / "dist" / "index.html").is_file()
    try:
        dist = build()
    except UIBuildError as error:
        print(f"Agent Chat UI: {error}", file=sys.stderr)
        return 1
    info = json.loads((dist.parent / "build.json").read_text(encoding="utf-8"))
    state = "cached" if cached else "built"
    print(f"Agent Chat UI {VERSION}: {state} at {dist} (build took {info['seconds']} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
