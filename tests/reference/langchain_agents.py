"""LangChain's own agent unit tests, run against ``dynavec_langgraph.create_agent``.

``python -m tests.reference.langchain_agents`` (``make reference-langchain``, part of
``make test``) fetches the ``langchain`` source release of the installed version by package name
(``pip download --no-deps --no-binary :all: langchain==VERSION``) into
``~/.cache/dynavec-langgraph/`` (outside the clone; nothing of it is committed), unpacks its
``tests/unit_tests/agents/`` afresh, unmodified, and runs it with pytest. The plugin
:mod:`tests.reference.langchain_plugin` swaps ``langchain.agents.create_agent`` (and the name
``langchain.agents.factory.create_agent`` the tests import) for this package's.

Which tests run: every test that builds an agent, found mechanically: the suite runs once on
LangChain's own ``create_agent`` and the plugin records each test during which
``create_agent`` was called (kept in the cache per installed langchain, langchain-core and
langgraph version); those tests, except the ones named in
``tests/reference/langchain_deselected.txt`` (one line each: the test id, the reason, the
docs/compatibility.md row it rests on), then run on this package's ``create_agent``. Every one
must pass (pytest's exit code is the target's).

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


def _env(root: Path, *, swap: bool, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    # the suite's `tests` package first; this clone for dynavec_langgraph and the plugin
    env["PYTHONPATH"] = os.pathsep.join([str(root), str(REPO / "tests" / "reference"), str(REPO)])
    env["DYNAVEC_REFERENCE_DESELECTED"] = str(DESELECTED)
    env["DYNAVEC_REFERENCE_SWAP"] = "1" if swap else "0"
    env.update(extra)
    return env


def _versions() -> str:
    return "-".join(
        f"{name}{version(name)}" for name in ("langchain", "langchain-core", "langgraph")
    )


def agent_tests(root: Path) -> Path:
    """The ids of the tests that build an agent, found by running the suite on LangChain's
    own ``create_agent`` (kept per installed langchain / langchain-core / langgraph). Every
    one of them must pass there: a failure means this machine cannot run the suite (or the
    deselection file misses a test that fails on the reference too)."""
    listing = root.parent / f"agent-tests-{_versions()}.tsv"
    if listing.exists() and listing.stat().st_mtime >= DESELECTED.stat().st_mtime:
        return listing
    print("finding the tests that build an agent (the suite on langchain's create_agent)")
    report = root.parent / "reference-report.tsv"
    subprocess.run(
        [sys.executable, "-m", "pytest", SUITE, "-q", "--no-header"],
        cwd=root,
        env=_env(root, swap=False, DYNAVEC_REFERENCE_REPORT=str(report)),
        check=False,
        stdout=subprocess.DEVNULL,
    )
    rows = [line.split("\t") for line in report.read_text().splitlines()]
    failing = [nodeid for nodeid, outcome in rows if outcome != "passed"]
    if failing or not rows:
        raise SystemExit(
            f"langchain's own create_agent fails {len(failing)} of its agent tests here "
            f"({failing[:5]}...): fix the environment (the suite's test dependencies are in "
            f"the dev extra), or name the tests in {DESELECTED.name} with the row they rest on"
        )
    listing.write_text("".join(f"{nodeid}\n" for nodeid, _ in rows))
    return listing


def main(argv: list[str]) -> int:
    reference = "--reference" in argv
    args = [a for a in argv if a != "--reference"]
    release = version("langchain")
    root = unpack(sdist(release), release)
    selected = agent_tests(root)
    count = len(selected.read_text().split())
    face = "langchain.agents.create_agent" if reference else "dynavec_langgraph.create_agent"
    print(f"langchain {release}'s {SUITE}: the {count} tests that build an agent, on {face}")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", *(args or [SUITE])],
        cwd=root,
        env=_env(root, swap=not reference, DYNAVEC_REFERENCE_SELECT=str(selected)),
        check=False,
    )
    return done.returncode


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
