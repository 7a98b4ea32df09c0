"""Cost that grows with the thread: the ``long_thread`` part of the benchmark.

**One long thread.** Each run is a goal, a tool call that pauses for approval, the resume
and the answer (``Script(steps=0, approval=True)``). The package's systems each get their own thread
on one saver (SQLite, PostgreSQL) and run it round after round, in turns, so both see the
same load on the machine; ``create_agent`` runs its thread afterwards on the same saver (it
writes the whole conversation at every step, hundreds of MB by run 500, which would load the
machine under the others' runs). A row is the median ms of one
run + resume over the ``window`` runs ending at run ``N`` (wall clock and this process's CPU).
The target: run + resume at the last mark costs at most :data:`FLAT_LIMIT` x the first
(graph and ``ReActAgent``); ``create_agent`` is measured beside them for comparison.

**Many paused threads.** ``threads`` threads paused by the package's graph on one saver, then
the approvals inbox lists them (``list_pending``, what ``dynavec-langgraph inbox list`` runs)
and answers each (``resume_graph``, what ``inbox approve`` runs); every approved tool must
have run exactly once.
"""

from __future__ import annotations

import gc
import statistics
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from benchmarks.savers import SaverName, open_saver
from benchmarks.systems import DECISION, Outcome, Script, System, VariantName, build

LONG_SYSTEMS: Final[tuple[VariantName, ...]] = (
    "dynavec_graph",
    "dynavec_ReActAgent",
    "create_agent",
)
FLAT_SYSTEMS: Final[tuple[VariantName, ...]] = ("dynavec_graph", "dynavec_ReActAgent")
"""The systems the flat-cost target is for."""
FLAT_LIMIT: Final = 1.5
LONG_SAVERS: Final[tuple[SaverName, ...]] = ("sqlite", "postgres")
Row = dict[str, Any]


class LongThreadError(RuntimeError):
    """A system produced the wrong result: its numbers would mean nothing."""


def _check(name: str, run: int, paused: Outcome, done: Outcome) -> None:
    want = f"transferred 120: {DECISION}"
    if not paused.interrupted or done.interrupted or done.observations != [want]:
        raise LongThreadError(
            f"{name}, run {run}: expected a pause, then {want!r} once; got {paused} / {done}"
        )


def _round(system: System, tid: str, run: int) -> tuple[float, float]:
    """Wall and CPU ms of one run + resume (after a collection, as the time part does: no
    system pays for the garbage another one left)."""
    gc.collect()
    cpu, start = time.process_time(), time.perf_counter()
    paused = system.run(tid)
    done = system.resume(tid)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    _check(system.name, run, paused, done)
    return wall * 1000, cpu * 1000


def long_thread(
    marks: list[int],
    window: int,
    savers: list[SaverName],
    workdir: Path,
    new_database: Callable[[], str],
    log: Callable[[str], None],
) -> list[Row]:
    """Median ms per run + resume at each of ``marks`` (runs of one thread) per system."""
    rows: list[Row] = []
    for kind in (k for k in LONG_SAVERS if k in savers):
        uri = new_database() if kind == "postgres" else None
        with open_saver(kind, workdir, uri) as saver:
            # create_agent's thread writes the whole conversation at every step (hundreds of
            # MB by run 500): it runs after the others, so its I/O does not load their runs
            for group in (FLAT_SYSTEMS, tuple(n for n in LONG_SYSTEMS if n not in FLAT_SYSTEMS)):
                rows += _one_group(group, kind, saver, marks, window, log)
    return rows


def _one_group(
    group: tuple[VariantName, ...],
    kind: SaverName,
    saver: Any,
    marks: list[int],
    window: int,
    log: Callable[[str], None],
) -> list[Row]:
    """The systems of ``group`` on one thread each, run + resume in turns, round by round."""
    rows: list[Row] = []
    systems = {n: build(n, saver, script=Script(steps=0, approval=True)) for n in group}
    threads = {n: uuid.uuid4().hex for n in group}
    wall: dict[str, list[float]] = {n: [] for n in group}
    cpu: dict[str, list[float]] = {n: [] for n in group}
    for run in range(1, max(marks) + 1):
        k = run % len(group)
        for name in (*group[k:], *group[:k]):
            w, c = _round(systems[name], threads[name], run)
            wall[name].append(w)
            cpu[name].append(c)
        if run in marks:
            first = max(0, run - window)
            for name in group:
                rows.append(
                    {
                        "saver": kind,
                        "system": name,
                        "run": run,
                        "window": run - first,
                        "messages": 4 * run,
                        "ms": statistics.median(wall[name][first:run]),
                        "cpu_ms": statistics.median(cpu[name][first:run]),
                        "mean_ms": statistics.fmean(wall[name][first:run]),
                    }
                )
            log(
                f"long_thread {kind:8} run={run:<4} "
                + "  ".join(
                    f"{r['system']}={r['ms']:.1f}ms(cpu {r['cpu_ms']:.1f})"
                    for r in rows[-len(group) :]
                )
            )
    return rows


def paused_threads(
    count: int,
    savers: list[SaverName],
    workdir: Path,
    new_database: Callable[[], str],
    log: Callable[[str], None],
) -> list[Row]:
    """``count`` paused threads: time to pause them, list them, answer them all (no rows
    for ``count=0``)."""
    from dynavec_langgraph._approvals.inbox import graph_on, list_pending, resume_graph

    rows: list[Row] = []
    for kind in (k for k in LONG_SAVERS if k in savers and count > 0):
        uri = new_database() if kind == "postgres" else None
        with open_saver(kind, workdir, uri) as saver:
            system = build("dynavec_graph", saver, script=Script(steps=0, approval=True))
            app = graph_on(system.graph, saver)
            threads = [uuid.uuid4().hex for _ in range(count)]
            start = time.perf_counter()
            for tid in threads:
                if not system.run(tid).interrupted:
                    raise LongThreadError(f"thread {tid} did not pause")
            pause_s = time.perf_counter() - start
            start = time.perf_counter()
            pending = list_pending(app, saver)
            list_s = time.perf_counter() - start
            if sorted(p.thread_id for p in pending) != sorted(threads):
                raise LongThreadError(f"inbox list: {len(pending)} rows for {count} threads")
            start = time.perf_counter()
            ran = 0
            for tid in threads:
                after = resume_graph(app, saver, tid, DECISION)
                done = [
                    m
                    for m in after.values["messages"]
                    if getattr(m, "type", "") == "tool" and str(m.content).startswith("transf")
                ]
                if after.interrupts or len(done) != 1:
                    raise LongThreadError(f"thread {tid}: the tool ran {len(done)} times")
                ran += len(done)
            resume_s = time.perf_counter() - start
            if ran != count:
                raise LongThreadError(f"{ran} tools ran for {count} threads")
            if list_pending(app, saver):
                raise LongThreadError("threads still pending after every one was answered")
            rows.append(
                {
                    "saver": kind,
                    "threads": count,
                    "pause_s": pause_s,
                    "list_s": list_s,
                    "resume_all_s": resume_s,
                    "tools_ran": ran,
                }
            )
            log(
                f"paused_threads {kind:8} {count} threads: pause {pause_s:.1f}s, inbox list "
                f"{list_s:.2f}s, resume all {resume_s:.1f}s, tools ran {ran}"
            )
    return rows


def flat_targets(rows: list[Row]) -> list[tuple[str, str, float, str]]:
    """``(saver, system, ratio last mark / first mark, detail)`` for the flat-cost target."""
    out: list[tuple[str, str, float, str]] = []
    nan = float("nan")
    for kind in dict.fromkeys(r["saver"] for r in rows):
        for name in FLAT_SYSTEMS:
            mine = sorted(
                (r for r in rows if r["saver"] == kind and r["system"] == name),
                key=lambda r: r["run"],
            )
            if len(mine) < 2:
                continue
            lo, hi = mine[0], mine[-1]
            base = {
                r["run"]: r["ms"]
                for r in rows
                if r["saver"] == kind and r["system"] == "create_agent"
            }
            detail = (
                f"run {lo['run']}: {lo['ms']:.1f} ms, run {hi['run']}: {hi['ms']:.1f} ms "
                f"(cpu {lo['cpu_ms']:.1f} -> {hi['cpu_ms']:.1f}); create_agent "
                f"{base.get(lo['run'], nan):.1f} -> {base.get(hi['run'], nan):.1f} ms"
            )
            out.append((kind, name, hi["ms"] / lo["ms"], detail))
    return out
