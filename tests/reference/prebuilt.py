"""LangGraph's own prebuilt test suite, run against ``dynavec_langgraph.create_react_agent``.

``make reference-prebuilt`` (part of ``make test``) runs ``python -m tests.reference.prebuilt``:

1. **Fetch.** The source release of the installed ``langgraph-prebuilt`` is fetched by package
   name, ``pip download --no-deps --no-binary :all: langgraph-prebuilt==<installed version>``,
   into ``~/.cache/dynavec-langgraph/reference/`` (outside the clone; nothing of it is
   committed). A cached archive is reused.
2. **Unpack.** Each run unpacks the archive afresh into a temporary folder, so the suite's files
   are exactly the released ones (never modified).
3. **Swap.** A ``conftest.py`` is added at the root of the unpacked release (beside ``tests/``,
   loaded before the suite's own conftest and before any test module is imported). It replaces
   ``create_react_agent`` in ``langgraph.prebuilt`` and ``langgraph.prebuilt.chat_agent_executor``
   (the two places the suite imports it from) with ``dynavec_langgraph.create_react_agent``, and
   an autouse fixture checks the swap before every test.
4. **Select, mechanically.** Only tests that build an agent run: every ``test_*`` function (or
   method of a ``Test*`` class) in ``tests/test_*.py`` whose own source contains a call to a name
   or attribute ``create_react_agent`` (found with ``ast``). That includes the ``ToolNode`` tests
   that pass a ``ToolNode`` to the agent; tests of ``ToolNode`` alone are not run.
5. **Deselect.** The tests named in ``tests/reference/prebuilt_deselected.txt`` are left out
   (``--deselect``; one line each: node id, reason, the docs/compatibility.md row it rests on).
   A line naming no selected test is an error, so the file cannot go stale.

The run fails (non-zero exit) on any failure, on an empty selection, or when the release cannot
be fetched. Services: the suite's default (fast) mode uses in-memory savers and stores only.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path

PACKAGE = "langgraph-prebuilt"
HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
DESELECTED = HERE / "prebuilt_deselected.txt"
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "dynavec-langgraph"

CONFTEST = '''\
"""Added by dynavec-langgraph's tests/reference/prebuilt.py: the suite's create_react_agent
is dynavec_langgraph.create_react_agent."""

import langgraph.prebuilt
import langgraph.prebuilt.chat_agent_executor
import pytest

from dynavec_langgraph import create_react_agent as _dynavec_create_react_agent

langgraph.prebuilt.create_react_agent = _dynavec_create_react_agent
langgraph.prebuilt.chat_agent_executor.create_react_agent = _dynavec_create_react_agent


@pytest.fixture(autouse=True)
def _dynavec_swap_in_place(request):
    module = request.module
    for where in (langgraph.prebuilt, langgraph.prebuilt.chat_agent_executor, module):
        found = getattr(where, "create_react_agent", _dynavec_create_react_agent)
        assert found is _dynavec_create_react_agent, f"{where.__name__} has another agent"
'''


@dataclass(frozen=True)
class Deselection:
    node_id: str
    reason: str
    row: str


def read_deselected(path: Path = DESELECTED) -> list[Deselection]:
    """The deselection file: ``node id | reason | docs row`` per line; ``#`` starts a comment."""
    entries = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = [p.strip() for p in line.split("|")]
        if len(parts) != 3 or not all(parts):
            raise SystemExit(f"{path}:{number}: write 'node id | reason | docs row', got {line!r}")
        entries.append(Deselection(*parts))
    return entries


def _calls_create_react_agent(node: ast.AST) -> bool:
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call):
            func = sub.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            if name == "create_react_agent":
                return True
    return False


def select(tests_dir: Path) -> list[str]:
    """Node ids (``tests/test_x.py::test_y``, ``tests/test_x.py::TestC::test_y``) of the tests
    whose own source calls ``create_react_agent``."""
    selected = []
    for path in sorted(tests_dir.glob("test_*.py")):
        module = ast.parse(path.read_text(), str(path))
        prefix = f"{tests_dir.name}/{path.name}"
        for node in module.body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                if node.name.startswith("test") and _calls_create_react_agent(node):
                    selected.append(f"{prefix}::{node.name}")
            elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
                for item in node.body:
                    if (
                        isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
                        and item.name.startswith("test")
                        and _calls_create_react_agent(item)
                    ):
                        selected.append(f"{prefix}::{node.name}::{item.name}")
    return selected


def fetch(release: str) -> Path:
    """The source archive of ``langgraph-prebuilt==release`` (downloaded by name once)."""
    folder = CACHE / "reference" / f"{PACKAGE}-{release}"
    found = sorted(folder.glob("*.tar.gz"))
    if not found:
        folder.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                *(sys.executable, "-m", "pip", "download", "-q", "--no-deps"),
                *("--no-binary", ":all:", f"{PACKAGE}=={release}", "-d", str(folder)),
            ],
            check=True,
        )
        found = sorted(folder.glob("*.tar.gz"))
    if not found:
        raise SystemExit(f"pip download left no source archive of {PACKAGE}=={release} in {folder}")
    return found[0]


def unpack(archive: Path, into: Path) -> Path:
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")
    (root,) = [p for p in into.iterdir() if p.is_dir()]
    if not (root / "tests").is_dir():
        raise SystemExit(f"{archive.name} has no tests/ folder: cannot run the reference suite")
    return root


def main(argv: list[str] | None = None) -> int:
    """Fetch, unpack, select and run; extra arguments go to pytest (e.g. ``-x``, ``-k``)."""
    release = version(PACKAGE)
    archive = fetch(release)
    deselected = read_deselected()
    with tempfile.TemporaryDirectory(prefix="dynavec-prebuilt-") as tmp:
        root = unpack(archive, Path(tmp))
        (root / "conftest.py").write_text(CONFTEST)
        selected = select(root / "tests")
        if not selected:
            raise SystemExit(f"no test of {archive.name} calls create_react_agent")
        stale = [
            d.node_id
            for d in deselected
            if not any(d.node_id.split("[")[0] == s or d.node_id == s for s in selected)
        ]
        if stale:
            raise SystemExit(f"{DESELECTED.name} names tests that are not selected: {stale}")
        print(
            f"{PACKAGE} {release}: {len(selected)} test functions build an agent; "
            f"{len(deselected)} deselected ({DESELECTED.relative_to(REPO)})",
            flush=True,
        )
        env = dict(os.environ)
        # the release's `tests` package first, then this checkout (dynavec_langgraph)
        env["PYTHONPATH"] = os.pathsep.join(
            [str(root), str(REPO), *filter(None, [env.get("PYTHONPATH")])]
        )
        command = [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "--rootdir",
            str(root),
            "-c",
            str(root / "pyproject.toml"),
            "-o",
            "addopts=--strict-markers --strict-config",
            "-q",
            *selected,
            *(f"--deselect={d.node_id}" for d in deselected),
            *(argv if argv is not None else sys.argv[1:]),
        ]
        return subprocess.run(command, cwd=root, env=env, check=False).returncode


if __name__ == "__main__":
    sys.exit(main())
