"""The reference-suite harness (tests/reference/prebuilt.py): its selection rule and its one
deselection file, whose every line names a docs/compatibility.md row that exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.reference.prebuilt import DESELECTED, REPO, read_deselected, select


def test_selection_is_the_tests_that_call_create_react_agent(tmp_path: Path) -> None:
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_a.py").write_text(
        "from langgraph.prebuilt import create_react_agent, ToolNode\n"
        "import langgraph.prebuilt as lp\n"
        "def helper():\n    return create_react_agent(1, [])\n"
        "def test_builds():\n    create_react_agent(1, [])\n"
        "async def test_builds_async():\n    lp.create_react_agent(1, [])\n"
        "def test_tool_node_only():\n    ToolNode([])\n"
        "def test_uses_helper():\n    helper()\n"
        "class TestGroup:\n"
        "    def test_in_class(self):\n        create_react_agent(1, [])\n"
        "    def test_not(self):\n        pass\n"
    )
    (tests / "other.py").write_text("def test_x():\n    create_react_agent(1, [])\n")
    assert select(tests) == [
        "tests/test_a.py::test_builds",
        "tests/test_a.py::test_builds_async",
        "tests/test_a.py::TestGroup::test_in_class",
    ]


def test_every_deselection_rests_on_a_documented_row() -> None:
    entries = read_deselected()
    assert entries, "the file is read"
    rows = set(re.findall(r"^\| (PB\d+) \|", (REPO / "docs/compatibility.md").read_text(), re.M))
    for entry in entries:
        assert entry.node_id.startswith("tests/test_"), entry
        (row,) = re.findall(r"docs/compatibility\.md (PB\d+)$", entry.row)
        assert row in rows, entry
    assert len({e.node_id for e in entries}) == len(entries)


def test_a_malformed_deselection_line_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "deselected.txt"
    bad.write_text("# comment\ntests/test_x.py::test_y | no row given\n")
    with pytest.raises(SystemExit, match=r"write 'node id \| reason \| docs row'"):
        read_deselected(bad)
    assert DESELECTED.name == "prebuilt_deselected.txt"
