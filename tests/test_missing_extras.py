"""One home for the missing-extra error: every feature whose optional dependencies are not
installed raises a ``MissingDependencyError`` (an ``ImportError``) that names the extra."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

import dynavec_langgraph
from dynavec_langgraph import MissingDependencyError
from dynavec_langgraph._cli.db import open_saver
from dynavec_langgraph._errors import install_command
from dynavec_langgraph._extras import missing_extra
from dynavec_langgraph.savers import resolve_checkpointer

PACKAGE = Path(dynavec_langgraph.__file__).parent


def test_a_sqlite_url_without_the_sqlite_extra_names_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setitem(sys.modules, "langgraph.checkpoint.sqlite", None)
    url = f"sqlite:///{tmp_path}/x.db"
    with pytest.raises(MissingDependencyError) as raised:
        resolve_checkpointer(url)
    assert str(raised.value) == (
        f"checkpointer={url!r} requires the 'langgraph-checkpoint-sqlite' package. Install it "
        "with:  pip install 'dynavec-langgraph[sqlite]'"
    )
    assert not (tmp_path / "x.db").exists()  # nothing was opened


@pytest.mark.parametrize(
    ("module", "package"),
    [("langgraph.checkpoint.postgres", "langgraph-checkpoint-postgres"), ("psycopg", "psycopg")],
)
def test_a_postgres_url_without_the_postgres_extra_names_it(
    monkeypatch: pytest.MonkeyPatch, module: str, package: str
) -> None:
    monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(MissingDependencyError) as raised:
        resolve_checkpointer("postgresql://ada:secret@127.0.0.1:1/db")
    assert (raised.value.package, raised.value.extra) == (package, "postgres")
    assert "'postgresql://ada:***@127.0.0.1:1/db'" in str(raised.value)  # password masked
    assert str(raised.value).endswith("pip install 'dynavec-langgraph[postgres]'")


def test_the_command_line_reading_a_database_names_the_extra(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    db = tmp_path / "x.db"
    db.touch()
    monkeypatch.setitem(sys.modules, "langgraph.checkpoint.sqlite", None)
    with pytest.raises(MissingDependencyError, match=r"dynavec-langgraph\[sqlite\]"):
        open_saver(str(db), must_exist=True, read_only=True).__enter__()
    monkeypatch.setitem(sys.modules, "psycopg", None)
    with pytest.raises(MissingDependencyError, match=r"'psycopg' package.*\[postgres\]"):
        open_saver("postgresql://127.0.0.1:1/db", must_exist=False, read_only=True).__enter__()


def test_the_helper_keeps_a_caller_text_only_when_it_names_the_command() -> None:
    error = missing_extra(
        "x=", "langchain", "middleware", text="x= needs it: " + install_command("middleware")
    )
    assert isinstance(error, ImportError) and str(error) == (
        "x= needs it: pip install 'dynavec-langgraph[middleware]'"
    )
    assert (error.feature, error.package, error.extra) == ("x=", "langchain", "middleware")
    with pytest.raises(ValueError, match="names"):
        missing_extra("x=", "langchain", "middleware", text="x= needs langchain")


def _docstrings(tree: ast.Module) -> set[int]:
    found: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            found.add(id(body[0].value))
    return found


def test_no_module_but_the_helper_builds_the_install_command() -> None:
    """``pip install 'dynavec-langgraph[...]'`` is built by ``_errors.install_command``
    only; every other message, ``MissingDependencyError``'s too, calls it (docstrings may
    show the command)."""
    writers: set[str] = set()
    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text())
        docs = _docstrings(tree)
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and "pip install 'dynavec-langgraph[" in node.value
                and id(node) not in docs
            ):
                writers.add(str(path.relative_to(PACKAGE)))
    assert sorted(writers) == ["_errors.py"]
