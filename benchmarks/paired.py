"""The package at another commit against this tree, paired: ``python -m benchmarks.paired REV
[--processes N] [--rounds R] [--steps 50,1]``.

For a change that must not move the step's cost (a refactoring), on a machine shared with other
work: the package of ``REV`` (``git archive`` of its ``dynavec_langgraph/`` into a temporary
folder) and the package of this tree each run in their own processes, the two alternated
(``N`` processes each), all with the benchmark code of this tree (``benchmarks/systems.py``).
Each process times, on a fresh SQLite file per run, the package's graph
(``create_react_agent``), ``langchain.agents.create_agent`` and the floor, rotated over ``R``
rounds after a warm-up, each step count in turn, and reports process CPU time per step (all
its threads: LangGraph's background saves included). A ratio is the package's CPU per step
over ``create_agent``'s (or the floor's) in the same round of the same process, which removes
most of the load other processes put on the machine; the table gives each tree's median ratio
and its range over the processes' medians.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import uuid
from io import BytesIO
from pathlib import Path
from typing import Final

ROOT: Final = Path(__file__).resolve().parent.parent
NAMES: Final = ("dynavec_graph", "create_agent", "floor")


def child(steps_list: list[int], rounds: int) -> dict[str, dict[str, list[float]]]:
    """CPU ms per step of each system, per step count, over ``rounds`` rotated rounds."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    from benchmarks.systems import Script, build

    out: dict[str, dict[str, list[float]]] = {}
    with tempfile.TemporaryDirectory() as work:
        for steps in steps_list:
            cpu: dict[str, list[float]] = {name: [] for name in NAMES}
            for r in range(rounds + 1):  # round 0 warms up
                k = r % len(NAMES)
                for name in (*NAMES[k:], *NAMES[:k]):
                    saver = SqliteSaver.from_conn_string(f"{work}/{uuid.uuid4().hex}.db")
                    with saver as s:
                        system = build(name, s, script=Script(steps=steps))  # type: ignore[arg-type]
                        gc.collect()
                        start = time.process_time()
                        outcome = system.run()
                        spent = time.process_time() - start
                    if len(outcome.observations) != steps:
                        raise SystemExit(f"{name}: the run did not finish: {outcome}")
                    if r:
                        cpu[name].append(1000 * spent / steps)
            out[str(steps)] = cpu
    return out


def _tree_of(rev: str, into: Path) -> Path:
    data = subprocess.run(
        ["git", "archive", "--format=tar", rev, "dynavec_langgraph"],
        cwd=ROOT,
        check=True,
        capture_output=True,
    ).stdout
    with tarfile.open(fileobj=BytesIO(data)) as tar:
        tar.extractall(into, filter="data")
    return into


def _run_child(package_root: Path, steps: str, rounds: int) -> dict[str, dict[str, list[float]]]:
    code = (
        "import json, sys\n"
        f"sys.path[:1] = [{str(package_root)!r}, {str(ROOT)!r}]\n"
        "import dynavec_langgraph\n"
        f"assert dynavec_langgraph.__file__.startswith({str(package_root)!r})\n"
        "from benchmarks.paired import child\n"
        f"print(json.dumps(child([{steps}], {rounds})))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=package_root, capture_output=True, text=True
    )
    if done.returncode:
        raise SystemExit(done.stderr)
    result: dict[str, dict[str, list[float]]] = json.loads(done.stdout.splitlines()[-1])
    return result


def _ratios(runs: list[dict[str, dict[str, list[float]]]], steps: str, base: str) -> list[float]:
    """Each process's median of the per-round ratio of the package to ``base``."""
    return [
        statistics.median(
            p / b for p, b in zip(run[steps]["dynavec_graph"], run[steps][base], strict=True)
        )
        for run in runs
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.paired", description=__doc__)
    parser.add_argument("rev", help="the commit to compare this tree with")
    parser.add_argument("--processes", type=int, default=4, help="processes per tree (4)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds per process (5)")
    parser.add_argument("--steps", default="50,1", help="comma list of step counts (50,1)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        before = _tree_of(args.rev, Path(tmp))
        runs: dict[str, list[dict[str, dict[str, list[float]]]]] = {args.rev: [], "this tree": []}
        for i in range(args.processes):
            order = [(args.rev, before), ("this tree", ROOT)]
            for label, root in order if i % 2 == 0 else order[::-1]:
                runs[label].append(_run_child(root, args.steps, args.rounds))
                print(f"process {i + 1}/{args.processes}: {label} done", file=sys.stderr)
    print("| steps | tree | package / create_agent (CPU) | package / floor (CPU) | package ms |")
    print("|---|---|---|---|---|")
    for steps in args.steps.split(","):
        for label, tree_runs in runs.items():
            cells = []
            for base in ("create_agent", "floor"):
                r = _ratios(tree_runs, steps, base)
                cells.append(f"{statistics.median(r):.2f} ({min(r):.2f}-{max(r):.2f})")
            ms = statistics.median(
                statistics.median(run[steps]["dynavec_graph"]) for run in tree_runs
            )
            print(f"| {steps} x 1 | {label} | {cells[0]} | {cells[1]} | {ms:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
