"""Every notebook in ``notebooks/`` runs top to bottom, from any working directory, and shows
what it is stored with.

The notebooks are stored WITH their outputs, so a reader sees the results without running them.
The test runs each one again (in a fresh temporary directory, not ``notebooks/``) and compares
every cell's outputs with the stored ones after :func:`normalize`, which masks what differs from
run to run: ids (interrupt, tool-call, message and run ids, UUIDs), timestamps, durations,
memory addresses and temporary paths. Any other difference fails the test; after a deliberate
change, store the new outputs with ``python -m tests.test_notebooks`` (``make notebooks``) and
review the diff.

The kernel is an ipykernel on THIS interpreter (``sys.executable``), whatever kernelspecs the
machine has: a user-level ``python3`` kernelspec pointing at another Python would otherwise run
the notebooks without this environment's packages.
"""

from __future__ import annotations

import copy
import difflib
import re
import sys
import tempfile
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
_MASKS = [
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"), "<uuid>"),
    (re.compile(r"\b[0-9a-f]{32}\b"), "<id>"),  # interrupt ids
    (re.compile(r"\b(call|run|lc_run--|toolu)_?-?[0-9A-Za-z-]{6,}"), r"\1_<id>"),  # call_3f9a...
    (re.compile(r"\b0x[0-9a-f]{6,}\b"), "0x<address>"),
    (re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(\+00:00|Z)?"), "<timestamp>"),
    (re.compile(r"\b\d+(\.\d+)?\s?(ms|s|seconds)\b"), "<duration>"),
    (re.compile(r"/tmp/[\w./-]+"), "<tmp path>"),
]


def normalize(text: str) -> str:
    """``text`` with what changes from run to run masked."""
    text = _ANSI.sub("", text)
    for pattern, replacement in _MASKS:
        text = pattern.sub(replacement, text)
    return text


class ThisInterpreterKernelSpecs(KernelSpecManager):
    """Resolves ``python3`` to ipykernel's own spec for ``sys.executable``."""

    def get_kernel_spec(self, kernel_name: str) -> KernelSpec:
        if kernel_name != KERNEL_NAME:
            raise NoSuchKernel(kernel_name)
        return KernelSpec(resource_dir=str(NOTEBOOKS_DIR), **get_kernel_dict())


def _read(path: Path) -> Any:
    return nbformat.read(path, as_version=4)  # type: ignore[no-untyped-call]


def execute(notebook: Any, workdir: Path) -> Any:
    """Run a copy of ``notebook`` with ``workdir`` as the kernel's working directory."""
    ran = copy.deepcopy(notebook)
    kernel = AsyncKernelManager(
        kernel_name=KERNEL_NAME, kernel_spec_manager=ThisInterpreterKernelSpecs()
    )
    client = NotebookClient(
        ran,
        km=kernel,
        kernel_name=KERNEL_NAME,
        timeout=CELL_TIMEOUT,
        resources={"metadata": {"path": str(workdir)}},
    )
    client.execute()
    return ran


def shown(cell: Any) -> list[str]:
    """What a code cell shows, one normalized string per output (pictures by kind only)."""
    parts: list[str] = []
    streams: list[tuple[str, str]] = []  # a stream arrives in pieces that differ run to run
    for output in cell.outputs:
        kind = output.output_type
        if kind == "stream":
            if streams and streams[-1][0] == output.name:
                streams[-1] = (output.name, streams[-1][1] + output.text)
            else:
                streams.append((output.name, output.text))
            continue
        parts += [f"{name}: {normalize(text)}" for name, text in streams]
        streams = []
        if kind in ("execute_result", "display_data"):
            data = output.get("data", {})
            text = data.get("text/plain", "")
            pictures = sorted(k for k in data if k.startswith("image/"))
            parts.append(f"{kind}: {normalize(text)} {pictures}")
        else:
            parts.append(f"{kind}: {output.get('ename')}: {normalize(output.get('evalue', ''))}")
    parts += [f"{name}: {normalize(text)}" for name, text in streams]
    return parts


def test_the_walkthrough_is_there() -> None:
    assert [p.name for p in NOTEBOOKS][:1] == ["01_human_in_the_loop.ipynb"]


def test_kernel_runs_on_this_interpreter() -> None:
    spec = ThisInterpreterKernelSpecs().get_kernel_spec(KERNEL_NAME)
    assert spec.argv[:3] == [sys.executable, "-m", "ipykernel_launcher"]


def test_normalize_masks_only_what_changes_between_runs() -> None:
    line = (
        "call_8b55953df8e04921bd94149e 3f2a9c1e0b7d4e5f8a6b1c2d3e4f5a6b at 0x7f32a2aecea0 "
        "2026-12-01T09:53:39.123+00:00 in 12.5 ms /tmp/tmpab_c1/parent.sqlite"
    )
    assert normalize(line) == ("call_<id> <id> at 0x<address> <timestamp> in <duration> <tmp path>")
    assert normalize("paid 240 on INV-7") == "paid 240 on INV-7"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_is_stored_with_its_outputs(path: Path) -> None:
    notebook = _read(path)
    nbformat.validate(notebook)
    assert notebook.nbformat == 4
    assert notebook.metadata["kernelspec"]["name"] == KERNEL_NAME
    code = [c for c in notebook.cells if c.cell_type == "code"]
    counts = [c.execution_count for c in code]
    assert counts == list(range(1, len(code) + 1)), f"{path.name}: run it top to bottom"
    assert any(c.outputs for c in code), f"{path.name}: stored without outputs"
    errors = [c.execution_count for c in code if any(o.output_type == "error" for o in c.outputs)]
    assert errors == []


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs_anywhere_and_shows_what_it_is_stored_with(
    path: Path, tmp_path: Path
) -> None:
    stored = _read(path)
    try:
        ran = execute(stored, tmp_path)  # not notebooks/: any working directory works
    except CellExecutionError as error:
        pytest.fail(f"{path.name} failed:\n{_ANSI.sub('', str(error))}", pytrace=False)
    code_stored = [c for c in stored.cells if c.cell_type == "code"]
    code_ran = [c for c in ran.cells if c.cell_type == "code"]
    assert code_ran, f"{path.name} has no code"
    for index, (before, now) in enumerate(zip(code_stored, code_ran, strict=True), start=1):
        if shown(before) != shown(now):
            diff = "\n".join(
                difflib.unified_diff(shown(before), shown(now), "stored", "now", lineterm="")
            )
            pytest.fail(
                f"{path.name}, code cell {index} shows something else than it is stored with "
                f"(store the new outputs with `python -m tests.test_notebooks` if intended):\n"
                f"{diff}",
                pytrace=False,
            )


def main(argv: list[str] | None = None) -> int:
    """Run every notebook (or the ones named) and store it with its outputs."""
    names = set(argv if argv is not None else sys.argv[1:])
    for path in NOTEBOOKS:
        if names and path.name not in names:
            continue
        with tempfile.TemporaryDirectory() as workdir:
            ran = execute(_read(path), Path(workdir))
        for cell in ran.cells:
            cell.metadata.pop("execution", None)  # timings: nothing a reader needs
        nbformat.write(ran, path)  # type: ignore[no-untyped-call]
        print(f"stored {path.name} with its outputs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
