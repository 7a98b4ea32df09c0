"""Every code block of README.md and of each page under docs/ runs as written.

The convention for the blocks of a page (README.md and every ``docs/*.md``, found by glob, so a
new page is checked without touching this file):

- A page runs in a fresh temporary directory, its blocks in page order. Files a block writes
  (``sqlite:///bank.db``, ``./dynavec-demo.db``) land there; ``.venv`` there links to the
  environment running the tests, so ``.venv/bin/dynavec-langgraph`` works as in a clone.
- `````python`` blocks share ONE namespace per page: a block may use only what an earlier block
  of the same page defined (imports included), never something of another page. Show what a
  reader can paste: build the model in the page (``ScriptedChatModel`` offline, or
  ``ChatOpenAI`` for a block listed in :data:`SERVED`).
- `````bash`` blocks run with ``bash -euo pipefail`` in the same directory, with the tests'
  ``bin`` directory first on ``PATH`` (what ``. .venv/bin/activate`` gives).
- A block that cannot run in CI (it starts a server that runs until Ctrl-C, needs a key you
  must paste, or is ``make test`` itself) has the line ``<!-- not run: REASON -->`` right above
  its opening fence; the reason is required. Other fences (``json``, ``text``, none) are not run.
- A block that needs a server names it in :data:`SERVED` (page, a string the block contains,
  the server): ``openai`` is tests/openai_server.py with a policy, reached through
  ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY`` as ``ChatOpenAI`` and the OpenAI SDK read them;
  ``studio`` is the ``langgraph dev`` server of tests/test_studio.py, reached through
  ``LANGGRAPH_URL``. The block itself shows the plain user code.
- Every page under docs/ is linked from the README, and every relative link of a page resolves.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import types
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.openai_server import OpenAIServer
from tests.test_studio import Studio, studio  # noqa: F401  (the fixture, for SERVED)

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
_FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
_NOT_RUN = re.compile(r"<!-- not run: (.+?) -->\s*$")
RUN = ("python", "bash")


@dataclass
class Block:
    """One fenced block of a page."""

    page: str
    line: int
    language: str
    code: str
    not_run: str | None  # the reason, for a block marked ``<!-- not run: ... -->``


def blocks(path: Path) -> list[Block]:
    """The fenced blocks of ``path`` in page order."""
    text = path.read_text(encoding="utf-8")
    found = []
    for match in _FENCE.finditer(text):
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        marker = _NOT_RUN.search(before)
        found.append(
            Block(
                path.relative_to(REPO).as_posix(),
                text.count("\n", 0, match.start()) + 1,
                match.group(1),
                match.group(2),
                marker.group(1).strip() if marker else None,
            )
        )
    return found


# --- servers some blocks need ------------------------------------------------------------------


def _served_policy(messages: list[dict[str, Any]]) -> Any:
    """The model of the served blocks over HTTP: the quickstart's one transfer, then a final
    answer; a plain answer to any other request (providers-and-tools.md offers no tool)."""
    last = messages[-1]
    if last["role"] == "tool":
        return f"Done: {last['content']}"
    if "landlord" in str(last["content"]):
        return [{"name": "transfer_funds", "args": {"amount": 120, "to": "landlord"}}]
    return "Hello."


def _openai(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    server: OpenAIServer = request.getfixturevalue("openai")
    server.set_policy(_served_policy)
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")


def _studio(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    server: Studio = request.getfixturevalue("studio")
    monkeypatch.setenv("LANGGRAPH_URL", server.url)


SERVERS: dict[str, Callable[[pytest.FixtureRequest, pytest.MonkeyPatch], None]] = {
    "openai": _openai,
    "studio": _studio,
}
SERVED: list[tuple[str, str, str]] = [
    ("README.md", "ChatOpenAI(", "openai"),
    ("docs/providers-and-tools.md", "OpenAIChatModel(", "openai"),
    ("docs/scale-out.md", "RemoteReActAgent(", "studio"),
]
"""``(page, a string the block contains, server)``: the blocks that run against a server."""


def _servers_for(block: Block) -> list[str]:
    return [s for page, text, s in SERVED if page == block.page and text in block.code]


# --- the tests ---------------------------------------------------------------------------------


def test_every_page_is_found() -> None:
    names = [p.relative_to(REPO).as_posix() for p in PAGES]
    assert "README.md" in names and "docs/persistence.md" in names
    assert sum(len([b for b in blocks(p) if b.language == "python"]) for p in PAGES) >= 10


def test_every_not_run_marker_gives_a_reason_and_every_served_block_exists() -> None:
    every = [b for p in PAGES for b in blocks(p)]
    for b in every:
        if b.not_run is not None:
            assert b.language in RUN, f"{b.page}:{b.line}: a marker on a block never run"
            assert len(b.not_run) > 10, f"{b.page}:{b.line}: say why it cannot run"
    for page, text, server in SERVED:
        assert server in SERVERS
        assert any(b.page == page and text in b.code for b in every), (page, text)


def _page_params() -> list[Any]:
    """Each page; one that runs shell commands or needs ``langgraph dev`` is marked
    ``service`` (they start processes)."""
    params = []
    for path in PAGES:
        name = path.relative_to(REPO).as_posix()
        studio_page = any(page == name and server == "studio" for page, _, server in SERVED)
        shell = any(b.language == "bash" and b.not_run is None for b in blocks(path))
        marks = [pytest.mark.service] if studio_page or shell else []
        params.append(pytest.param(path, id=name, marks=marks))
    return params


@pytest.mark.parametrize("path", _page_params())
def test_the_blocks_of_a_page_run_as_written(
    path: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
    capsys: pytest.CaptureFixture[str],
) -> None:
    page = blocks(path)
    runnable = [b for b in page if b.language in RUN and b.not_run is None]
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL", "DYNAVEC_DEMO_LEDGER"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".venv").symlink_to(Path(sys.prefix))
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    for server in sorted({s for b in runnable for s in _servers_for(b)}):
        SERVERS[server](request, monkeypatch)
    main = types.ModuleType("__main__")  # the page runs as a script does
    monkeypatch.setitem(sys.modules, "__main__", main)
    namespace = main.__dict__
    ran = {"python": 0, "bash": 0}
    for block in runnable:
        where = f"{block.page}:{block.line}"
        if block.language == "python":
            try:
                exec(compile(block.code, where, "exec"), namespace)
            except Exception as error:
                out = capsys.readouterr().out
                pytest.fail(f"{where}: {type(error).__name__}: {error}\n{out}", pytrace=True)
        else:
            done = subprocess.run(
                ["bash", "-euo", "pipefail", "-c", block.code],
                cwd=tmp_path,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=300,
            )
            assert done.returncode == 0, f"{where}:\n{block.code}\n{done.stdout}\n{done.stderr}"
        ran[block.language] += 1
    skipped = len([b for b in page if b.not_run is not None])
    with capsys.disabled():
        print(f"\n{block_summary(path, ran, skipped)}")


def block_summary(path: Path, ran: dict[str, int], not_run: int) -> str:
    name = path.relative_to(REPO).as_posix()
    return f"{name}: ran {ran['python']} python and {ran['bash']} bash blocks, {not_run} marked"


_LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def test_the_readme_links_every_page_and_no_link_is_broken() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    linked = set(_LINK.findall(readme))
    pages = {p.relative_to(REPO).as_posix() for p in PAGES if p.name != "README.md"}
    assert pages - linked == set(), "link every docs/ page from the README"
    for path in PAGES:
        for target in _LINK.findall(path.read_text(encoding="utf-8")):
            if "://" in target:
                continue
            assert (path.parent / target).exists(), f"{path.relative_to(REPO)}: {target}"
