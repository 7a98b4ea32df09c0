"""LangChain's own agent unit tests, run against ``dynavec_langgraph.create_agent``.

``python -m tests.reference.langchain_agents`` (``make reference-langchain``, part of
``make test``) fetches the ``langchain`` source release of the installed version by package name
(``pip download --no-deps --no-binary :all: langchain==VERSION``) into
``~/.cache/dynavec-langgraph/`` (outside the clone; nothing of it is committed), unpacks its
``tests/unit_tests/agents/`` afresh, unmodified, and runs it with pytest. The plugin
:mod:`tests.reference.langchain_plugin` swaps ``langchain.agents.create_agent`` (and the name
``langchain.agents.factory.create_agent`` the tests import) for this package's.

Which tests run: every test the suite collects, except those named in
``tests/reference/langchain_deselected.txt`` (one line each: the test id, the reason, the
docs row it rests on). What counts: the tests that build an agent, found mechanically: the
plugin records each test during which ``create_agent`` was called, and the summary line
counts those (``agent tests: N passed, M failed``). A test that fails fails the run whether it
builds an agent or not.

``--reference`` runs the same selection on LangChain's own ``create_agent`` (no swap), for
comparison. Other arguments go to pytest (``-k``, ``-x``, a file of the suite).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
from importlib.metadata import version
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CACHE = Path(os.environ.get("DYNAVEC_CACHE", "~/.cache/dynavec-langgraph")).expanduser()
DESELECTED = Path(__file__).with_name("langchain_deselected.txt")
SUITE = "tests/unit_tests/agents"
KEEP = ("tests/__init__.py", "tests/unit_tests/__init__.py", f"{SUITE}/")
PYTEST_INI = """\
[pytest]
# langchain's [tool.pytest.ini_options] (its pyproject.toml), without its verbosity options
addopts = --strict-markers -p no:cacheprovider -p tests_reference_plugin -q
markers =
    requires: mark tests as requiring a specific library
    scheduled: mark tests to run in scheduled testing
    compile: mark placeholder test used to compile integration tests without running them
    benchmark: mark benchmark tests
    vcr: replays recorded provider HTTP (pytest-recording; these tests call a live API)
asyncio_mode = auto
asyncio_default_fixture_loop_scope = function
filterwarnings =
    ignore::langchain_core._api.beta_decorator.LangChainBetaWarning
    ignore::langchain_core._api.deprecation.LangChainDeprecationWarning:tests
    ignore::langchain_core._api.deprecation.LangChainPendingDeprecationWarning:tests
"""


def sdist(release: str) -> Path:
    """The ``langchain`` source release, downloaded once into the cache."""
    folder = CACHE / f"langchain-{release}"
    archive = folder / f"langchain-{release}.tar.gz"
    if not archive.exists():
        folder.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
             "-q", f"langchain=={release}", "-d", str(folder)],
            check=True,
        )  # fmt: skip
    if not archive.exists():
        raise FileNotFoundError(f"pip download did not produce {archive}")
    return archive


def unpack(archive: Path, release: str) -> Path:
    """A fresh copy of the suite (and the package markers it imports through)."""
    root = archive.parent / "suite"
    if root.exists():
        shutil.rmtree(root)
    root.mkdir()
    prefix = f"langchain-{release}/"
    with tarfile.open(archive) as tar:
        members = []
        for member in tar.getmembers():
            name = member.name.removeprefix(prefix)
            if member.isfile() and name.startswith(KEEP):
                member.name = name
                members.append(member)
        tar.extractall(root, members=members, filter="data")
    if not (root / SUITE / "conftest.py").exists():
        raise FileNotFoundError(f"langchain {release}'s sdist has no {SUITE}/conftest.py")
    (root / "pytest.ini").write_text(PYTEST_INI)
    return root


def main(argv: list[str]) -> int:
    reference = "--reference" in argv
    args = [a for a in argv if a != "--reference"]
    release = version("langchain")
    root = unpack(sdist(release), release)
    env = dict(os.environ)
    # the suite's `tests` package first; this clone for dynavec_langgraph and the plugin
    env["PYTHONPATH"] = os.pathsep.join([str(root), str(REPO / "tests" / "reference"), str(REPO)])
    env["DYNAVEC_REFERENCE_DESELECTED"] = str(DESELECTED)
    env["DYNAVEC_REFERENCE_SWAP"] = "0" if reference else "1"
    print(
        f"langchain {release}'s {SUITE} against "
        + ("langchain.agents.create_agent" if reference else "dynavec_langgraph.create_agent"),
        flush=True,
    )
    done = subprocess.run(
        [sys.executable, "-m", "pytest", *(args or [SUITE])], cwd=root, env=env, check=False
    )
    return done.returncode


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
