"""Run the whole benchmark: ``python -m benchmarks.run [--quick] [--out DIR] [--skip ...]``.

Systems (same scripted zero-latency model, same tools, one process run):
``dynavec_langgraph.create_react_agent``, ``dynavec_langgraph.ReActAgent``,
``langchain.agents.create_agent``, ``langgraph.prebuilt.create_react_agent`` (v2); in the time
part also the floor (LangGraph alone making the same calls and checkpoints, see
``benchmarks.systems.floor_graph``). A throwaway PostgreSQL server is started for the
PostgreSQL cases. ``python -m benchmarks.profile_step`` profiles a step of the package and of
the floor.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import sys
import tempfile
import time
from importlib.metadata import version
from pathlib import Path
from typing import Any

from benchmarks import long_thread, measure, report
from benchmarks.savers import SAVERS

RESULTS = Path(__file__).resolve().parent / "results"
PARTS = ("time", "middleware", "storage", "resume", "imports", "throughput", "long_thread")
PACKAGES = (
    "langgraph",
    "langgraph-prebuilt",
    "langgraph-checkpoint",
    "langgraph-checkpoint-sqlite",
    "langgraph-checkpoint-postgres",
    "langchain",
    "langchain-core",
)


def _log(message: str) -> None:
    print(message, flush=True)


def _byte_compile_package() -> None:
    """Compile the package's modules to bytecode first, as ``pip install`` does for a wheel:
    the libraries it is compared with are compiled in site-packages, and without this an
    editable install under ``PYTHONDONTWRITEBYTECODE=1`` (where it is set) would compile
    the package's sources again in every fresh process the import and resume parts start."""
    import compileall

    import dynavec_langgraph

    package = Path(dynavec_langgraph.__file__).parent
    if not compileall.compile_dir(str(package), quiet=1):
        raise SystemExit(f"could not byte-compile {package}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small sizes (smoke run)")
    parser.add_argument("--out", type=Path, default=RESULTS, help="output directory")
    parser.add_argument(
        "--savers", default=",".join(SAVERS), help="comma list of none,memory,sqlite,postgres"
    )
    parser.add_argument("--steps", help="comma list of step counts (default 1,10,50,200)")
    parser.add_argument("--skip", default="", help=f"comma list of parts to skip: {PARTS}")
    parser.add_argument("--only", default="", help="comma list of the only parts to run")
    parser.add_argument("--long-runs", help="comma list of run marks of the long_thread part")
    parser.add_argument("--paused", type=int, help="threads of the paused-threads row")
    args = parser.parse_args(argv)
    settings = measure.Settings.quick() if args.quick else measure.Settings.full()
    settings.savers = [s for s in SAVERS if s in args.savers.split(",")]
    if args.steps:
        settings.steps = [int(n) for n in args.steps.split(",")]
    if args.long_runs:
        settings.long_marks = [int(n) for n in args.long_runs.split(",")]
    if args.paused is not None:
        settings.paused_threads = args.paused
    skip = set(filter(None, args.skip.split(",")))
    only = set(filter(None, args.only.split(",")))
    if only - set(PARTS) or skip - set(PARTS):
        parser.error(f"unknown part in --only/--skip; the parts are {', '.join(PARTS)}")
    if only:
        skip |= set(PARTS) - only
    _byte_compile_package()
    started = time.perf_counter()
    results: dict[str, Any] = {
        "time": [],
        "middleware": [],
        "memory": [],
        "storage": [],
        "resume": [],
        "imports": [],
        "import_added": {},
        "throughput": [],
        "long_thread": [],
        "paused_threads": [],
    }
    phases: dict[str, float] = {}

    def timed(part: str, start: float) -> None:
        phases[part] = time.perf_counter() - start

    need_pg = "postgres" in settings.savers or "throughput" not in skip
    with tempfile.TemporaryDirectory(prefix="dynavec-bench-") as tmp:
        workdir = Path(tmp)
        server: Any = None
        if need_pg:
            from tests.pg import PostgresServer

            server = PostgresServer().start()
        try:
            new_db = server.create_database if server else _no_postgres
            drop_db = server.drop_database if server else (lambda uri: None)
            if "time" not in skip:
                t = time.perf_counter()
                results["time"], results["memory"] = measure.time_and_memory(
                    settings, workdir, new_db, _log
                )
                timed("time", t)
            if "middleware" not in skip:
                t = time.perf_counter()
                results["middleware"] = measure.middleware_time(settings, workdir, _log)
                timed("middleware", t)
            if "storage" not in skip:
                t = time.perf_counter()
                results["storage"] = measure.storage(settings, workdir, new_db, drop_db, _log)
                timed("storage", t)
            if "resume" not in skip:
                t = time.perf_counter()
                results["resume"] = measure.fresh_process_resume(settings, workdir, _log)
                timed("resume", t)
            if "imports" not in skip:
                t = time.perf_counter()
                results["imports"] = measure.import_cost(settings, _log)
                results["import_added"] = measure.import_added(settings, _log)
                timed("imports", t)
            if "throughput" not in skip:
                t = time.perf_counter()
                results["throughput"] = asyncio.run(
                    measure.async_throughput(settings, new_db(), _log)
                )
                timed("throughput", t)
            if "long_thread" not in skip:
                t = time.perf_counter()
                results["long_thread"] = long_thread.long_thread(
                    settings.long_marks,
                    settings.long_window,
                    settings.savers,
                    workdir,
                    new_db,
                    _log,
                )
                results["paused_threads"] = long_thread.paused_threads(
                    settings.paused_threads, settings.savers, workdir, new_db, _log
                )
                timed("long_thread", t)
        finally:
            if server is not None:
                server.stop()
    results["meta"] = {
        "mode": "quick" if args.quick else "full",
        "settings": vars(settings),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "machine": platform.machine(),
        "versions": {p: version(p) for p in PACKAGES},
        "seconds": time.perf_counter() - started,
        "phase_seconds": phases,
    }
    results["targets"] = report.targets(results)
    args.out.mkdir(parents=True, exist_ok=True)
    # --only writes its own files (results-PART.json / .md), leaving the full run's alone
    stem = "results-" + "-".join(p for p in PARTS if p in only) if only else "results"
    (args.out / f"{stem}.json").write_text(json.dumps(results, indent=1) + "\n")
    text = report.markdown(results, only=[p for p in PARTS if p in only] or None)
    (args.out / f"{stem}.md").write_text(text)
    if not only:
        report.plot(results, args.out / "plot.png")
    print(text)
    print(f"wrote {args.out}/{stem}.json, {stem}.md" + ("" if only else ", plot.png"))
    return 0


def _no_postgres() -> str:
    raise RuntimeError("no PostgreSQL server was started")


if __name__ == "__main__":
    sys.exit(main())
