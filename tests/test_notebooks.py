"""Every notebook in ``notebooks/`` runs top to bottom; its cells assert what they show.

The kernel is an ipykernel on THIS interpreter (``sys.executable``), whatever kernelspecs the
machine has: a user-level ``python3`` kernelspec pointing at another Python would otherwise run
the notebooks without this environment's packages.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import nbformat
import pytest
from ipykernel.kernelspec import get_kernel_dict
from jupyter_client.kernelspec import KernelSpec, KernelSpecManager, NoSuchKernel
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

NOTEBOOKS_DIR = Path(__file__).resolve().parent.parent / "notebooks"
NOTEBOOKS = sorted(NOTEBOOKS_DIR.glob("*.ipynb"))
KERNEL_NAME = "python3"
CELL_TIMEOUT = 120  # seconds per cell
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


class ThisInterpreterKernelSpecs(KernelSpecManager):
    """Resolves ``python3`` to ipykernel's own spec for ``sys.executable``."""

    def get_kernel_spec(self, kernel_name: str) -> KernelSpec:
        if kernel_name != KERNEL_NAME:
            raise NoSuchKernel(kernel_name)
        return KernelSpec(resource_dir=str(NOTEBOOKS_DIR), **get_kernel_dict())


def _read(path: Path) -> Any:
    return nbformat.read(path, as_version=4)  # type: ignore[no-untyped-call]


def test_the_walkthrough_is_there() -> None:
    assert [p.name for p in NOTEBOOKS][:1] == ["01_human_in_the_loop.ipynb"]


def test_kernel_runs_on_this_interpreter() -> None:
    spec = ThisInterpreterKernelSpecs().get_kernel_spec(KERNEL_NAME)
    assert spec.argv[:3] == [sys.executable, "-m", "ipykernel_launcher"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_is_stored_clean(path: Path) -> None:
    notebook = _read(path)
    nbformat.validate(notebook)
    assert notebook.nbformat == 4
    assert notebook.metadata["kernelspec"]["name"] == KERNEL_NAME
    dirty = [
        index
        for index, cell in enumerate(notebook.cells)
        if cell.cell_type == "code" and (cell.outputs or cell.execution_count is not None)
    ]
    assert dirty == [], f"{path.name}: cells {dirty} have outputs; store the notebook cleared"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs(path: Path) -> None:
    notebook = _read(path)
    kernel = AsyncKernelManager(
        kernel_name=KERNEL_NAME, kernel_spec_manager=ThisInterpreterKernelSpecs()
    )
    client = NotebookClient(
        notebook,
        km=kernel,
        kernel_name=KERNEL_NAME,
        timeout=CELL_TIMEOUT,
        resources={"metadata": {"path": str(NOTEBOOKS_DIR)}},
    )
    try:
        client.execute()
    except CellExecutionError as error:
        pytest.fail(f"{path.name} failed:\n{_ANSI.sub('', str(error))}", pytrace=False)
    code_cells = [c for c in notebook.cells if c.cell_type == "code"]
    assert code_cells, f"{path.name} has no code"
    assert all(c.execution_count is not None for c in code_cells)
