"""The README's commands as ``make`` plans them (``make -n``: printed, not run), the licence
file pyproject.toml names, and CI's entry point."""

from __future__ import annotations

import os
import subprocess
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _plan(target: str, venv: Path, *variables: str) -> list[str]:
    # run from `make test` itself, make would add "Entering directory" lines (MAKELEVEL)
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}
    done = subprocess.run(
        ["make", "-n", "--no-print-directory", target, f"VENV={venv}", *variables],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout.splitlines()


def test_make_demo_installs_only_what_the_demo_needs(tmp_path: Path) -> None:
    tools, venv = tmp_path / "tools", tmp_path / "venv"
    plan = _plan("demo", venv, f"TOOLS={tools}", f"UV={tools}/uv/bin/uv")

    # uv, by package name, into the tools folder outside the clone (kept when .venv is deleted)
    assert f"--target {tools}/uv uv" in plan[1]
    installs = [line.strip() for line in plan if " install " in line and "-e " in line]
    assert installs == [  # with uv, and with pip when uv fails: the `sqlite` extra only
        f"{tools}/uv/bin/uv pip install -q --python {venv}/bin/python -e '.[sqlite]'; }} || \\",
        f"{venv}/bin/python -m pip install -q --disable-pip-version-check -e '.[sqlite]'; }}",
    ]
    assert f"{tools}/uv/bin/uv venv -q --seed" in "\n".join(plan)  # with pip, for `make test`
    assert plan[-1] == f"{venv}/bin/dynavec-langgraph demo"


def test_make_test_installs_the_rest_and_runs_the_whole_suite(tmp_path: Path) -> None:
    tools = tmp_path / "tools"
    plan = _plan("test", tmp_path / "venv", f"TOOLS={tools}", f"UV={tools}/uv/bin/uv")

    # the dev extras with uv, bytecode compiled (the tests' child processes import LangGraph
    # from it), and with pip when uv fails
    uv = f"{tools}/uv/bin/uv pip install -q --compile-bytecode --python {tmp_path}/venv/bin/python"
    assert any(line.strip().startswith(f"{uv} -e '.[dev]'") for line in plan), plan
    assert any(line.strip().endswith("pip install -q -e '.[dev]'; }") for line in plan), plan
    # mypy's cache outside the clone: a fresh clone re-checks only what changed
    assert f"{tmp_path}/venv/bin/mypy --strict --cache-dir {tools}/mypy" in plan
    # every test: on pytest-xdist workers (a module per worker) but the `timing` ones, then those
    python = f"{tmp_path}/venv/bin/python"
    assert f'{python} -m pytest -n 4 --dist loadfile --durations=20 -m "not timing"' in plan
    assert f"{python} -m pytest -p no:xdist -m timing" in plan
    assert f"{tmp_path}/venv/bin/python -m tests.reference.prebuilt" in plan
    assert f"{tmp_path}/venv/bin/python -m tests.reference.langchain_agents" in plan
    assert "make test" in (REPO / ".ci" / "run").read_text().splitlines()[-1]


def test_make_test_fast_leaves_out_the_service_tests(tmp_path: Path) -> None:
    plan = _plan("test-fast", tmp_path / "venv")

    python = f"{tmp_path}/venv/bin/python"
    ram_disk = "TMPDIR=/dev/shm " if Path("/dev/shm").is_dir() else ""  # the temporary files
    fast = f"{ram_disk}PYTHONDONTWRITEBYTECODE= {python} -m pytest -q -n auto --dist loadfile"
    # a worker per core, a module per worker, no service test and no slow one
    assert plan[-1].startswith(f'{fast} -m "not service and not slow"')
    # no test uses these installed packages' pytest plugins: not loaded in the fast subset
    assert plan[-1].endswith(" -p no:langsmith_plugin -p no:syrupy -p no:platformdirs ")


def test_make_test_fast_narrows_to_one_file_and_takes_a_worker_count(tmp_path: Path) -> None:
    plan = _plan("test-fast", tmp_path / "venv", "FAST=tests/test_graph.py", "FAST_WORKERS=2")

    assert " -n 2 --dist loadfile " in plan[-1]
    assert plan[-1].endswith(" -p no:platformdirs tests/test_graph.py")


def test_the_licence_is_the_one_pyproject_names() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert project["license"] == "MIT"
    assert project["license-files"] == ["LICENSE"]
    text = (REPO / "LICENSE").read_text()
    assert text.startswith("MIT License\n")
    assert 'THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND' in text
