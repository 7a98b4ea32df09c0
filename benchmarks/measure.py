"""The measurements: time per step, bytes stored, peak memory, fresh-process resume, import
cost and concurrent async resumes. Each returns plain JSON-ready rows."""

from __future__ import annotations

import asyncio
import gc
import json
import statistics
import subprocess
import sys
import time
import tracemalloc
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

from benchmarks.savers import SaverName, async_postgres_saver, forget, open_saver, stored_bytes
from benchmarks.systems import (
    ANSWER,
    BOOKKEEPING,
    CREATE_AGENT_FACE,
    DECISION,
    FLOOR,
    SYSTEMS,
    TIMED,
    Outcome,
    Script,
    System,
    SystemName,
    VariantName,
    bookkeeping_graph,
    build,
    config,
)

StoredName = SystemName | Literal["bookkeeping"]
STORED: Final[tuple[StoredName, ...]] = (*SYSTEMS, BOOKKEEPING)
"""What the storage part measures: the systems, then its floor."""

MIDDLEWARE_SYSTEMS: tuple[VariantName, ...] = (
    "dynavec_graph",
    CREATE_AGENT_FACE,
    "create_agent",
)
MIDDLEWARE_SAVERS: tuple[SaverName, ...] = ("none", "sqlite")

REPO_ROOT = Path(__file__).resolve().parent.parent
Row = dict[str, Any]


class BenchmarkError(RuntimeError):
    """A system produced the wrong conversation: its numbers would mean nothing."""


@dataclass
class Settings:
    """Sizes of one benchmark run (``quick()`` for the smoke run, ``full()`` for the docs)."""

    steps: list[int]
    calls: list[int]
    savers: list[SaverName]
    reps_budget: int  # repetitions per case: about reps_budget / steps, within [min, max]
    min_reps: int
    max_reps: int
    storage_steps: list[int]
    memory_steps: int
    resume_history: int
    resume_reps: int
    import_reps: int
    threads: int
    workers: list[int]
    io_latencies_ms: list[float]  # the first is the headline (the throughput target)
    jobs: int = 1  # subprocesses run at once (>1 only in quick mode: their timings overlap)
    long_marks: list[int] = field(default_factory=lambda: [10, 100, 500])  # runs of one thread
    long_window: int = 9  # runs per median of the long_thread part, ending at each mark
    paused_threads: int = 1000  # threads paused, listed and answered by the inbox

    def reps(self, steps: int) -> int:
        return max(self.min_reps, min(self.max_reps, round(self.reps_budget / steps)))

    def pool_size(self) -> int:
        """Async pool: a connection per worker for the saver, one per worker for the resume
        lock's ``pg_try_advisory_lock`` session (taken from the pool), and two spare."""
        return 2 * max(self.workers) + 2

    @classmethod
    def full(cls) -> Settings:
        return cls(
            steps=[1, 10, 50, 200],
            calls=[1, 3],
            savers=["none", "memory", "sqlite", "postgres"],
            reps_budget=100,
            min_reps=5,
            max_reps=10,
            storage_steps=[10, 50, 100],
            memory_steps=100,
            resume_history=10,
            resume_reps=7,
            import_reps=5,
            threads=80,
            workers=[1, 8],
            io_latencies_ms=[50.0, 5.0],
        )

    @classmethod
    def quick(cls) -> Settings:
        return cls(
            steps=[1, 3],
            calls=[1, 3],
            savers=["none", "memory", "sqlite", "postgres"],
            reps_budget=1,
            min_reps=1,
            max_reps=1,
            storage_steps=[2, 4],
            memory_steps=2,
            resume_history=1,
            resume_reps=1,
            import_reps=1,
            threads=4,
            workers=[1, 8],
            io_latencies_ms=[50.0, 5.0],
            jobs=4,
            long_marks=[3, 6],
            long_window=2,
            paused_threads=5,
        )


def _check_run(name: str, outcome: Outcome, steps: int, calls: int) -> None:
    if (
        outcome.interrupted
        or outcome.answer != ANSWER
        or len(outcome.observations) != steps * calls
    ):
        raise BenchmarkError(
            f"{name}: expected {steps * calls} observations and the answer {ANSWER!r}, got "
            f"{len(outcome.observations)} and {outcome.answer!r} "
            f"(interrupted={outcome.interrupted})"
        )


def _check_resumed(name: str, outcome: Outcome) -> None:
    want = f"transferred 120: {DECISION}"
    if outcome.answer != ANSWER or [o for o in outcome.observations if o.startswith("transf")] != [
        want
    ]:
        raise BenchmarkError(f"{name}: the resume did not finish the transfer once: {outcome}")


def _rotation(r: int, names: Sequence[VariantName] = SYSTEMS) -> list[VariantName]:
    """Round ``r`` of the alternation: every system goes first equally often."""
    k = r % len(names)
    return [*names[k:], *names[:k]]


def _timed(system: System) -> tuple[float, float, Outcome]:
    """Wall and CPU seconds (this process, all its threads) of one run."""
    forget(system.agent.checkpointer if system.agent is not None else system.saver)
    gc.collect()  # cheap: what the imports and builds left is frozen (see time_and_memory)
    cpu, start = time.process_time(), time.perf_counter()
    outcome = system.run()
    return time.perf_counter() - start, time.process_time() - cpu, outcome


def time_and_memory(
    settings: Settings, workdir: Path, new_database: Callable[[], str], log: Callable[[str], None]
) -> tuple[list[Row], list[Row]]:
    """Median ms per step (systems alternated round by round) and tracemalloc peaks."""
    rows: list[Row] = []
    memory: list[Row] = []
    try:
        for kind in settings.savers:
            uri = new_database() if kind == "postgres" else None
            _time_one_saver(settings, kind, workdir, uri, rows, memory, log)
    finally:
        gc.unfreeze()
    return rows, memory


def _time_one_saver(
    settings: Settings,
    kind: SaverName,
    workdir: Path,
    uri: str | None,
    rows: list[Row],
    memory: list[Row],
    log: Callable[[str], None],
) -> None:
    # The durability="sync" graph only differs from the default one with a checkpointer.
    names: tuple[VariantName, ...] = (*SYSTEMS, FLOOR) if kind == "none" else TIMED
    with open_saver(kind, workdir, uri) as saver:
        built = {name: build(name, saver) for name in names}
        for system in built.values():  # warm-up: lazy imports, schema caches
            system.script.steps, system.script.calls = 2, 1
            _check_run(system.name, system.run(), 2, 1)
        # A full collection walks every live object (~0.15 s after these imports); freeze
        # the survivors so the collection before each timed run only sees new garbage.
        gc.collect()
        gc.freeze()
        for calls in settings.calls:
            for steps in settings.steps:
                reps = settings.reps(steps)
                per_step: dict[str, list[float]] = {n: [] for n in names}
                cpu_per_step: dict[str, list[float]] = {n: [] for n in names}
                for r in range(reps):
                    for name in _rotation(r, names):
                        system = built[name]
                        system.script.steps, system.script.calls = steps, calls
                        seconds, cpu, outcome = _timed(system)
                        _check_run(name, outcome, steps, calls)
                        per_step[name].append(seconds * 1000 / steps)
                        cpu_per_step[name].append(cpu * 1000 / steps)
                base, cpu_base = per_step["create_agent"], cpu_per_step["create_agent"]
                floor = per_step[FLOOR]
                for name in names:
                    ratios = [t / b for t, b in zip(per_step[name], base, strict=True)]
                    cpu_ratios = [t / b for t, b in zip(cpu_per_step[name], cpu_base, strict=True)]
                    floor_ratios = [t / b for t, b in zip(per_step[name], floor, strict=True)]
                    rows.append(
                        {
                            "saver": kind,
                            "steps": steps,
                            "calls": calls,
                            "system": name,
                            "reps": reps,
                            "ms_per_step": statistics.median(per_step[name]),
                            "ratio_to_create_agent": statistics.median(ratios),
                            "ratios_to_create_agent": ratios,
                            "ratio_to_floor": statistics.median(floor_ratios),
                            "ratios_to_floor": floor_ratios,
                            "cpu_ms_per_step": statistics.median(cpu_per_step[name]),
                            "cpu_ratio_to_create_agent": statistics.median(cpu_ratios),
                            "cpu_ratios_to_create_agent": cpu_ratios,
                            "cpu_ratios_to_floor": [
                                t / b
                                for t, b in zip(
                                    cpu_per_step[name], cpu_per_step[FLOOR], strict=True
                                )
                            ],
                            "samples_ms": per_step[name],
                        }
                    )
                log(
                    f"time {kind:8} steps={steps:<4} calls={calls} reps={reps:<3} "
                    + "  ".join(
                        f"{r['system']}={r['ms_per_step']:.2f}ms({r['ratio_to_create_agent']:.2f})"
                        for r in rows[-len(names) :]
                    )
                )
        for name in SYSTEMS:
            system = built[name]
            system.script.steps, system.script.calls = settings.memory_steps, 1
            forget(system.agent.checkpointer if system.agent is not None else saver)
            gc.collect()
            tracemalloc.start()
            try:
                _check_run(name, system.run(), settings.memory_steps, 1)
                peak = tracemalloc.get_traced_memory()[1]
            finally:
                tracemalloc.stop()
            memory.append(
                {
                    "saver": kind,
                    "steps": settings.memory_steps,
                    "system": name,
                    "peak_bytes": peak,
                }
            )
        log(f"memory {kind}: " + ", ".join(f"{m['system']}={m['peak_bytes']}" for m in memory[-4:]))


def storage(
    settings: Settings,
    workdir: Path,
    new_database: Callable[[], str],
    drop_database: Callable[[str], None],
    log: Callable[[str], None],
) -> list[Row]:
    """Bytes stored after N steps (one call per step), each on a fresh checkpointer; and the
    floor, :data:`~benchmarks.systems.BOOKKEEPING`: LangGraph alone making the package graph's
    checkpoints (counted and compared) with no message in them."""
    rows: list[Row] = []
    for kind in settings.savers:
        if kind == "none":
            continue
        for steps in settings.storage_steps:
            made: dict[str, int] = {}
            for name in STORED:
                uri = new_database() if kind == "postgres" else None
                try:
                    with open_saver(kind, workdir, uri) as saver:
                        before = 0 if kind == "memory" else stored_bytes(kind, saver)
                        _store_run(name, saver, steps)
                        size = stored_bytes(kind, saver) - before
                        made[name] = sum(1 for _ in saver.list(None))
                finally:
                    if uri is not None:
                        drop_database(uri)
                rows.append({"saver": kind, "steps": steps, "system": name, "bytes": size})
            if made[BOOKKEEPING] != made[SYSTEMS[0]]:
                raise BenchmarkError(
                    f"the storage floor made {made[BOOKKEEPING]} checkpoints for {steps} steps, "
                    f"{SYSTEMS[0]} {made[SYSTEMS[0]]}: they must make the same"
                )
            log(
                f"storage {kind:8} steps={steps:<4} "
                + "  ".join(f"{r['system']}={r['bytes']}" for r in rows[-len(STORED) :])
            )
    return rows


def _store_run(name: StoredName, saver: Any, steps: int) -> None:
    """Run ``name`` (a system, or the storage floor) for ``steps`` one-call steps on ``saver``."""
    if name == BOOKKEEPING:
        limit = 2 * steps + 10
        bookkeeping_graph(steps, saver).invoke(
            {"n": 0}, {**config("floor"), "recursion_limit": limit}
        )
        return
    system = build(name, saver, script=Script(steps=steps))
    _check_run(name, system.run(), steps, 1)


def compiled_as_installed() -> None:
    """Write the bytecode of the package and of ``benchmarks/`` as pip does when it installs a
    package: the installed libraries compared with it have theirs, and an editable checkout run
    with ``PYTHONDONTWRITEBYTECODE`` set (as on the development machine) would otherwise compile
    every module of the package from source in every fresh process the fresh-process parts
    start."""
    import compileall

    import dynavec_langgraph

    for folder in (Path(dynavec_langgraph.__file__).parent, Path(__file__).parent):
        compileall.compile_dir(folder, quiet=1)


RESUMED: Final[tuple[VariantName, ...]] = (*SYSTEMS, FLOOR)
"""The systems the fresh-process resume times: the four and the floor."""


def fresh_process_resume(
    settings: Settings, workdir: Path, log: Callable[[str], None]
) -> list[Row]:
    """Pause threads in a SQLite file here, resume each in a new ``python`` process.

    The floor resumes too: what LangGraph alone costs for the same fresh-process resume."""
    from benchmarks.savers import sqlite_saver

    compiled_as_installed()

    db = workdir / "resume.db"
    saver = sqlite_saver(db)
    threads: dict[str, list[str]] = {}
    try:
        for name in RESUMED:
            system = build(name, saver, script=Script(steps=settings.resume_history, approval=True))
            threads[name] = []
            for _ in range(settings.resume_reps):
                tid = uuid.uuid4().hex
                outcome = system.run(tid)
                if not outcome.interrupted:
                    raise BenchmarkError(f"{name}: the transfer did not pause: {outcome}")
                threads[name].append(tid)
    finally:
        saver.conn.close()
    samples: dict[str, list[Row]] = {n: [] for n in RESUMED}

    def child(name: VariantName, r: int) -> Row:
        start = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "benchmarks.resume_child", name, str(db), threads[name][r]],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            check=False,
        )
        wall = (time.perf_counter() - start) * 1000
        if proc.returncode != 0:
            raise BenchmarkError(
                f"{name}: resume in a new process failed:\n{proc.stderr[-3000:]}\n{proc.stdout}"
            )
        result: Row = json.loads(proc.stdout.strip().splitlines()[-1])
        result["process_ms"] = wall
        return result

    runs = [(name, r) for r in range(settings.resume_reps) for name in _rotation(r, RESUMED)]
    for (ran, _), result in zip(runs, _in_jobs(settings.jobs, child, runs), strict=True):
        samples[ran].append(result)
    rows = []
    for name in RESUMED:
        keys = ("import_ms", "setup_ms", "invoke_ms", "resume_ms", "process_ms")
        row: Row = {
            "system": name,
            "reps": settings.resume_reps,
            "history_steps": settings.resume_history,
        }
        row.update({k: statistics.median(s[k] for s in samples[name]) for k in keys})
        row["resume_samples_ms"] = [s["resume_ms"] for s in samples[name]]  # round r = index r
        rows.append(row)
        log(f"resume {name}: " + ", ".join(f"{k}={row[k]:.1f}" for k in keys))
    return rows


IMPORTS: dict[str, str] = {
    "langgraph, langchain_core": "import langgraph, langchain_core",
    "langgraph + langchain_core APIs": (
        "import langgraph.graph, langgraph.types, langgraph.channels, langchain_core.messages, "
        "langchain_core.language_models, langchain_core.runnables, langchain_core.tools"
    ),
    # the package's names are imported on first use: import the ones an agent needs
    "dynavec_langgraph": (
        "from dynavec_langgraph import ReActAgent, create_react_agent, interrupt, tool"
    ),
    "langchain.agents": "import langchain.agents",
    "langgraph.prebuilt": "import langgraph.prebuilt",
}


def import_cost(settings: Settings, log: Callable[[str], None]) -> list[Row]:
    """Median in-process import time of each statement, each in a fresh interpreter, with the
    garbage collector paused during the statement (``median_ms``) and running
    (``gc_on_median_ms``). The import-cost target is judged on :func:`import_added` (the
    package's statement after the baseline's, in one interpreter).

    Why paused: with it running, the figure depends on where the statement leaves the
    collector's counters, not on the statement's work. The baseline statement ends a couple of
    young collections short of a full one, so any import after it that keeps a few thousand
    objects (this package's, ``langgraph.prebuilt``, ``langchain.agents`` alike) starts a full
    collection of the ~100,000 objects the baseline loaded, 100-250 ms, which a process
    would pay at its next allocations anyway (docs/benchmarks.md)."""
    compiled_as_installed()
    samples: dict[tuple[str, bool], list[float]] = {
        (k, on): [] for k in IMPORTS for on in (False, True)
    }
    names = list(IMPORTS)

    def child(label: str, collector_on: bool) -> float:
        pause = "" if collector_on else "import gc; gc.disable(); "
        code = (
            f"{pause}import time; t = time.perf_counter(); "
            f"{IMPORTS[label]}; print((time.perf_counter() - t) * 1000)"
        )
        proc = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        )
        return float(proc.stdout.strip())

    runs = [
        (label, r % 2 == 1)
        for r in range(2 * settings.import_reps)
        for label in names[r % len(names) :] + names[: r % len(names)]
    ]
    for (label, on), ms in zip(runs, _in_jobs(settings.jobs, child, runs), strict=True):
        samples[(label, on)].append(ms)
    rows = [
        {
            "statement": IMPORTS[k],
            "label": k,
            "reps": settings.import_reps,
            "median_ms": statistics.median(samples[(k, False)]),
            "samples_ms": samples[(k, False)],
            "gc_on_median_ms": statistics.median(samples[(k, True)]),
            "gc_on_samples_ms": samples[(k, True)],
        }
        for k in IMPORTS
    ]
    log(
        "imports (collector paused / on): "
        + ", ".join(f"{r['label']}={r['median_ms']:.0f}/{r['gc_on_median_ms']:.0f}ms" for r in rows)
    )
    return rows


def import_added(settings: Settings, log: Callable[[str], None]) -> Row:
    """What importing the package adds to the baseline statement, both timed in one fresh
    interpreter, one after the other (the collector paused): ``added_ms / baseline_ms`` per
    interpreter, and their median (the import-cost target). Paired in one process, the ratio
    is free of what moves between interpreters (the baseline's 1-2 s vary by 100-300 ms from
    one to the next, more than the 10% the target allows)."""
    compiled_as_installed()
    from benchmarks.report import IMPORT_BASELINE

    code = (
        "import gc; gc.disable(); import time; t0 = time.perf_counter(); "
        f"{IMPORTS[IMPORT_BASELINE]}; t1 = time.perf_counter(); "
        f"{IMPORTS['dynavec_langgraph']}; t2 = time.perf_counter(); "
        "print((t1 - t0) * 1000, (t2 - t1) * 1000)"
    )

    def child() -> tuple[float, float]:
        proc = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        )
        base, added = proc.stdout.split()
        return float(base), float(added)

    pairs = _in_jobs(settings.jobs, child, [() for _ in range(settings.resume_reps)])
    ratios = [added / base for base, added in pairs]
    row: Row = {
        "baseline": IMPORTS[IMPORT_BASELINE],
        "added": IMPORTS["dynavec_langgraph"],
        "reps": len(pairs),
        "baseline_ms": statistics.median(b for b, _ in pairs),
        "added_ms": statistics.median(a for _, a in pairs),
        "ratio": statistics.median(ratios),
        "samples": [list(p) for p in pairs],
    }
    log(
        f"import added in one interpreter: {row['added_ms']:.0f} ms on "
        f"{row['baseline_ms']:.0f} ms (median ratio {row['ratio']:.3f})"
    )
    return row


def _in_jobs(jobs: int, fn: Callable[..., Any], args: list[tuple[Any, ...]]) -> list[Any]:
    """``fn(*a)`` for each ``a`` in order; ``jobs`` at once (1: one after the other)."""
    if jobs <= 1:
        return [fn(*a) for a in args]
    with ThreadPoolExecutor(jobs) as pool:
        return list(pool.map(lambda a: fn(*a), args))


async def _resume_all(system: System, threads: list[str], workers: int) -> list[Outcome]:
    queue: asyncio.Queue[str] = asyncio.Queue()
    for tid in threads:
        queue.put_nowait(tid)
    outcomes: list[Outcome] = []

    async def worker() -> None:
        while not queue.empty():
            tid = queue.get_nowait()
            outcomes.append(await system.aresume(tid))

    await asyncio.gather(*(worker() for _ in range(workers)))
    return outcomes


async def _pause_many(system: System, count: int) -> list[str]:
    threads = [uuid.uuid4().hex for _ in range(count)]
    sem = asyncio.Semaphore(8)

    async def pause(tid: str) -> None:
        async with sem:
            outcome = await system.arun(tid)
        if not outcome.interrupted:
            raise BenchmarkError(f"{system.name}: the transfer did not pause: {outcome}")

    await asyncio.gather(*(pause(t) for t in threads))
    return threads


async def async_throughput(settings: Settings, uri: str, log: Callable[[str], None]) -> list[Row]:
    """Paused threads resumed by N async workers on ``AsyncPostgresSaver`` (pooled), for each
    I/O latency of the approved action (``settings.io_latencies_ms``)."""
    rows: list[Row] = []
    try:
        async with async_postgres_saver(uri, settings.pool_size()) as saver:
            await _throughput(settings, saver, rows, log)
    finally:
        gc.unfreeze()
    return rows


async def _throughput(
    settings: Settings, saver: Any, rows: list[Row], log: Callable[[str], None]
) -> None:
    for latency_ms in settings.io_latencies_ms:
        for name in SYSTEMS:
            system = build(
                name,
                saver,
                script=Script(steps=2, approval=True),
                io_latency=latency_ms / 1000,
            )
            for tid in await _pause_many(system, 2):  # warm-up
                _check_resumed(name, await system.aresume(tid))
            gc.collect()
            gc.freeze()  # as in time_and_memory: keep the collections below cheap
            for workers in settings.workers:
                threads = await _pause_many(system, settings.threads)
                gc.collect()
                start = time.perf_counter()
                outcomes = await _resume_all(system, threads, workers)
                seconds = time.perf_counter() - start
                if len(outcomes) != len(threads):
                    raise BenchmarkError(f"{name}: {len(outcomes)} of {len(threads)} resumed")
                for outcome in outcomes:
                    _check_resumed(name, outcome)
                rows.append(
                    {
                        "system": name,
                        "workers": workers,
                        "threads": len(threads),
                        "seconds": seconds,
                        "threads_per_s": len(threads) / seconds,
                        "io_latency_ms": latency_ms,
                        "pool_size": settings.pool_size(),
                    }
                )
            log(
                f"throughput {latency_ms:g}ms {name}: "
                + ", ".join(
                    f"{r['workers']}w={r['threads_per_s']:.1f}/s"
                    for r in rows[-len(settings.workers) :]
                )
            )


def middleware_time(settings: Settings, workdir: Path, log: Callable[[str], None]) -> list[Row]:
    """Median ms per step of the package's graph and ``create_agent``, both with the same two
    middleware (``systems.two_middleware``), alternated round by round as in the time part."""
    rows: list[Row] = []
    for kind in MIDDLEWARE_SAVERS:
        with open_saver(kind, workdir, None) as saver:
            built = {n: build(n, saver, middleware=True) for n in MIDDLEWARE_SYSTEMS}
            for system in built.values():
                system.script.steps, system.script.calls = 2, 1
                _check_run(system.name, system.run(), 2, 1)
            for calls in settings.calls:
                for steps in settings.steps:
                    reps = settings.reps(steps)
                    per_step: dict[str, list[float]] = {n: [] for n in MIDDLEWARE_SYSTEMS}
                    for r in range(reps):
                        for name in _rotation(r, MIDDLEWARE_SYSTEMS):
                            system = built[name]
                            system.script.steps, system.script.calls = steps, calls
                            seconds, _cpu, outcome = _timed(system)
                            _check_run(name, outcome, steps, calls)
                            per_step[name].append(seconds * 1000 / steps)
                    base = per_step["create_agent"]
                    for name in MIDDLEWARE_SYSTEMS:
                        ratios = [t / b for t, b in zip(per_step[name], base, strict=True)]
                        rows.append(
                            {
                                "saver": kind,
                                "steps": steps,
                                "calls": calls,
                                "system": name,
                                "reps": reps,
                                "ms_per_step": statistics.median(per_step[name]),
                                "ratio_to_create_agent": statistics.median(ratios),
                            }
                        )
                    log(
                        f"middleware {kind:6} steps={steps:<4} calls={calls} "
                        + "  ".join(
                            f"{r['system']}={r['ms_per_step']:.2f}ms"
                            f"({r['ratio_to_create_agent']:.2f})"
                            for r in rows[-len(MIDDLEWARE_SYSTEMS) :]
                        )
                    )
    return rows
