"""The package as a user installs it: the wheel and the sdist built from this tree.

:func:`built` builds both once per content of the tree (``python -m build``: the sdist, then the
wheel from the sdist, in an isolated build environment, as a release does) and caches them under
``~/.cache/dynavec-langgraph/dist-KEY/``; concurrent callers (pytest-xdist workers) wait for one
build. :func:`wheel_venv` makes a fresh virtualenv outside the clone holding the **wheel** (no
editable install, no ``PYTHONPATH``), with the extras asked for, cached the same way.

The release test (tests/test_release.py) and the servers a deployment test starts (the
LangGraph API cluster of tests/cluster.py) install from here, never from the checkout.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "dynavec-langgraph"
PACKAGE = "dynavec_langgraph"
RELEASE_FILES = ("pyproject.toml", "README.md", "LICENSE", "CHANGELOG.md", "MANIFEST.in")
"""The files of the tree, besides the package folder, that a release is built from."""
KEEP_SECONDS = 24 * 3600
"""Builds and virtualenvs of other trees unused this long are removed when a new one is made."""
_SKIP = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "build", "dist")


class DistUnavailable(RuntimeError):
    """The wheel or a virtualenv could not be built (the message has the tool's output)."""


@dataclass(frozen=True)
class Dist:
    """A wheel and an sdist built from the tree."""

    wheel: Path
    sdist: Path


def _tail(text: str, lines: int = 40) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def _run(argv: list[str], *, cwd: Path | None = None, env: dict[str, str] | None = None) -> None:
    proc = subprocess.run(
        argv, cwd=cwd, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL
    )
    if proc.returncode != 0:
        raise DistUnavailable(f"{' '.join(argv)} failed:\n{_tail(proc.stdout + proc.stderr)}")


def source_files() -> list[Path]:
    """Every file a release is built from, relative to the repository (sorted)."""
    package = [
        p.relative_to(REPO)
        for p in (REPO / PACKAGE).rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
    ]
    return sorted([*package, *(Path(f) for f in RELEASE_FILES if (REPO / f).exists())])


def tree_key() -> str:
    """A digest of every file a release is built from (names and contents)."""
    digest = hashlib.sha256()
    for rel in source_files():
        digest.update(rel.as_posix().encode() + b"\0" + (REPO / rel).read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def source_modules() -> set[str]:
    """The dotted names of every module of the package in the tree."""
    return {
        ".".join(rel.with_suffix("").parts).removesuffix(".__init__")
        for rel in source_files()
        if rel.suffix == ".py"
    }


def _locked(path: Path) -> int:
    CACHE.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_CREAT | os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)  # one builder; the others wait and reuse its result
    return fd


def _prune() -> None:
    """Remove the builds and virtualenvs of other trees that were not used for a day."""
    now = time.time()
    layers = CACHE.glob("*-venv-*-dist-*")  # tests/cluster.py's wheel over a server stack
    for path in [*CACHE.glob("dist-*"), *CACHE.glob("wheel-venv-*"), *layers]:
        mark = path / ".complete"
        if path.is_dir() and (not mark.exists() or now - mark.stat().st_mtime > KEEP_SECONDS):
            if not mark.exists() and now - path.stat().st_mtime < KEEP_SECONDS:
                continue  # being built now
            shutil.rmtree(path, ignore_errors=True)


def used(path: Path) -> None:
    """Mark a build or a virtualenv made from one as complete and used now (kept a day)."""
    (path / ".complete").touch()


def built() -> Dist:
    """The wheel and the sdist of the tree as it is now; built when the cache has none.

    The tree is copied to a temporary folder first, so building writes nothing into the clone.

    Raises:
        DistUnavailable: ``python -m build`` failed (its output included).
    """
    out = CACHE / f"dist-{tree_key()}"
    fd = _locked(CACHE / f"{out.name}.lock")
    try:
        if not (out / ".complete").exists():
            _prune()
            shutil.rmtree(out, ignore_errors=True)
            with tempfile.TemporaryDirectory(prefix="dynavec-build-") as tmp:
                src = Path(tmp) / "src"
                shutil.copytree(REPO / PACKAGE, src / PACKAGE, ignore=_SKIP)
                for name in RELEASE_FILES:
                    if (REPO / name).exists():
                        shutil.copy2(REPO / name, src / name)
                _run([sys.executable, "-m", "build", "--outdir", str(out), str(src)])
        used(out)
        (wheel,) = out.glob("*.whl")
        (sdist,) = out.glob("*.tar.gz")
        return Dist(wheel, sdist)
    finally:
        os.close(fd)


def _uv() -> str | None:
    """The ``uv`` of the Makefile (on PATH, or the one ``make`` installed into the cache)."""
    found = shutil.which("uv")
    if found:
        return found
    cached = CACHE / "uv/bin/uv"
    return str(cached) if cached.exists() else None


def install(venv: Path, requirements: list[str]) -> None:
    """Make the virtualenv ``venv`` (outside the clone) and install ``requirements`` into it:
    uv when it can be had (seconds, from its cache), else pip."""
    uv = _uv()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    if uv is not None:
        _run([uv, "venv", "-q", "--seed", "--python", sys.executable, str(venv)], env=env)
        _run(
            [uv, "pip", "install", "-q", "--python", str(venv / "bin/python"), *requirements],
            env=env,
        )
        return
    _run([sys.executable, "-m", "venv", str(venv)], env=env)
    _run(
        [
            str(venv / "bin/python"),
            "-m",
            "pip",
            "install",
            "-q",
            "--disable-pip-version-check",
            *requirements,
        ],
        env=env,
    )


def wheel_venv(extras: str = "", *, extra_requirements: tuple[str, ...] = ()) -> Path:
    """A cached virtualenv outside the clone holding the built wheel with ``extras``
    (``"sqlite,studio"``; ``""`` for the core alone) and ``extra_requirements``.

    Raises:
        DistUnavailable: the wheel or the virtualenv could not be built.
    """
    dist = built()
    spec = (
        f"{PACKAGE.replace('_', '-')}[{extras}] @ {dist.wheel.as_uri()}"
        if extras
        else str(dist.wheel)
    )
    key = hashlib.sha256(
        "\n".join(
            [sys.version.split()[0], dist.wheel.parent.name, spec, *extra_requirements]
        ).encode()
    ).hexdigest()[:12]
    venv = CACHE / f"wheel-venv-{key}"
    fd = _locked(CACHE / f"{venv.name}.lock")
    try:
        if not (venv / ".complete").exists():
            shutil.rmtree(venv, ignore_errors=True)
            install(venv, [spec, *extra_requirements])
        used(venv)
        return venv
    finally:
        os.close(fd)
