"""The benchmark's quick mode runs end to end and reports every system and every case.

No timing assertions: only that every figure is there, every target is judged, and the plot
is drawn. It starts its own PostgreSQL server (a failure to start is a failure, not a skip).
"""

from __future__ import annotations

import json
import subprocess
import sys
from itertools import product
from pathlib import Path
from typing import Any

from benchmarks.long_thread import LONG_SAVERS, LONG_SYSTEMS
from benchmarks.measure import IMPORTS, MIDDLEWARE_SAVERS, MIDDLEWARE_SYSTEMS, RESUMED, Settings
from benchmarks.savers import SAVERS
from benchmarks.systems import BOOKKEEPING, FLOOR, SYNC_GRAPH, SYSTEMS, TIMED

REPO = Path(__file__).resolve().parent.parent


def test_quick_benchmark_reports_every_system_and_case(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks.run", "--quick", "--out", str(tmp_path)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    results: dict[str, Any] = json.loads((tmp_path / "results.json").read_text())
    quick = Settings.quick()

    time_cases = {(r["saver"], r["steps"], r["calls"], r["system"]) for r in results["time"]}
    # The durability="sync" graph (ReActAgent's like-for-like baseline) only with a checkpointer;
    # the floor (LangGraph alone) with every checkpointer.
    assert time_cases == set(product(("none",), quick.steps, quick.calls, (*SYSTEMS, FLOOR))) | set(
        product(("memory", "sqlite", "postgres"), quick.steps, quick.calls, TIMED)
    )
    assert SYNC_GRAPH not in SYSTEMS and FLOOR in TIMED and FLOOR not in SYSTEMS
    assert len(results["time"]) == len(time_cases)
    for row in results["time"]:
        assert row["ms_per_step"] > 0 and row["cpu_ms_per_step"] > 0
        assert len(row["samples_ms"]) == row["reps"] == quick.reps(row["steps"])
        if row["system"] == "create_agent":
            assert row["ratio_to_create_agent"] == 1.0
        if row["system"] == FLOOR:
            assert row["ratio_to_floor"] == 1.0
        assert len(row["ratios_to_floor"]) == len(row["ratios_to_create_agent"]) == row["reps"]
        assert row["ratio_to_floor"] > 0

    mw_cases = {(r["saver"], r["steps"], r["calls"], r["system"]) for r in results["middleware"]}
    assert mw_cases == set(product(MIDDLEWARE_SAVERS, quick.steps, quick.calls, MIDDLEWARE_SYSTEMS))
    assert all(r["ms_per_step"] > 0 for r in results["middleware"])
    assert "With two middleware" in (tmp_path / "results.md").read_text()

    stored = {(r["saver"], r["steps"], r["system"]): r["bytes"] for r in results["storage"]}
    assert set(stored) == set(
        product(("memory", "sqlite", "postgres"), quick.storage_steps, (*SYSTEMS, BOOKKEEPING))
    )
    assert all(size > 0 for size in stored.values())
    for saver, steps in product(("sqlite", "postgres"), quick.storage_steps):  # the floor
        assert stored[(saver, steps, BOOKKEEPING)] <= stored[(saver, steps, "dynavec_graph")]
    bytes_target = next(t for t in results["targets"] if t["target"].startswith("bytes at"))
    assert "the floor (LangGraph's own records of the same checkpoints" in bytes_target["detail"]

    memory = {(r["saver"], r["system"]) for r in results["memory"] if r["peak_bytes"] > 0}
    assert memory == set(product(SAVERS, SYSTEMS))

    resumed = {r["system"]: r for r in results["resume"]}
    assert set(resumed) == set(RESUMED) == {*SYSTEMS, FLOOR}
    for row in resumed.values():
        assert row["import_ms"] > 0 and row["invoke_ms"] > 0
        assert row["resume_ms"] >= row["invoke_ms"]
        assert len(row["resume_samples_ms"]) == quick.resume_reps

    assert {r["label"] for r in results["imports"]} == set(IMPORTS)
    paired = results["import_added"]
    assert paired["reps"] == len(paired["samples"]) >= 1
    assert paired["baseline_ms"] > 0 and paired["added_ms"] > 0
    assert any(t["target"] == "import cost" for t in results["targets"])

    throughput = {(r["system"], r["workers"], r["io_latency_ms"]) for r in results["throughput"]}
    assert throughput == set(product(SYSTEMS, quick.workers, quick.io_latencies_ms))
    assert len(results["throughput"]) == len(throughput)
    assert all(r["threads"] == quick.threads for r in results["throughput"])
    assert all(r["pool_size"] >= 2 * max(quick.workers) + 2 for r in results["throughput"])

    long_rows = {(r["saver"], r["system"], r["run"]) for r in results["long_thread"]}
    assert long_rows == set(product(LONG_SAVERS, LONG_SYSTEMS, quick.long_marks))
    assert all(r["ms"] > 0 and r["cpu_ms"] > 0 for r in results["long_thread"])
    assert [(r["saver"], r["threads"], r["tools_ran"]) for r in results["paused_threads"]] == [
        (saver, quick.paused_threads, quick.paused_threads) for saver in LONG_SAVERS
    ]

    judged = {t["target"]: t["status"] for t in results["targets"]}
    assert set(judged.values()) <= {"MET", "MISSED"}
    assert {
        "time per step, sqlite",
        "time per step, postgres",
        "time per step, none",
        "ReActAgent overhead",
        "resume in a new process (SQLite)",
        "import cost",
        "async resumes on PostgreSQL (graph)",
        "async resumes on PostgreSQL (ReActAgent)",
        "flat cost on a long thread, sqlite (graph)",
        "flat cost on a long thread, sqlite (ReActAgent)",
        "flat cost on a long thread, postgres (graph)",
        "flat cost on a long thread, postgres (ReActAgent)",
        "resume in a new process vs create_agent (SQLite)",
    } <= set(judged)
    assert {
        f"{what}, {saver}, vs {versus}"
        for saver in ("sqlite", "postgres")
        for what, versus in (
            (f"{max(quick.steps)}-step runs", "create_agent"),  # 50 steps in the full run
            (f"{max(quick.steps)}-step runs", FLOOR),
            ("one-call runs (1 x 1)", "create_agent"),
        )
    } <= set(judged)
    assert any(name.startswith("storage growth") for name in judged)
    assert any(name.startswith("bytes at") for name in judged)

    plot = tmp_path / "plot.png"
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert plot.stat().st_size > 10_000
    markdown = (tmp_path / "results.md").read_text()
    assert "### Targets" in markdown and all(s in markdown for s in TIMED)
    assert f"dynavec_graph / {FLOOR}" in markdown
    assert "the floor (LangGraph alone)" in markdown  # the fresh resume's floor, for information
    assert all(f"awaits {ms:g} ms" in markdown for ms in quick.io_latencies_ms)
    assert "One long thread" in markdown and "paused threads" in markdown
    assert markdown in proc.stdout


def test_quick_temporal_benchmark_reports_every_row(tmp_path: Path) -> None:
    """``benchmarks.temporal --quick``: its own PostgreSQL, dev server and two workers; every
    row is there with positive figures (no timing assertion)."""
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks.temporal", "--quick", "--out", str(tmp_path)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    rows: dict[str, Any] = json.loads((tmp_path / "results-temporal.json").read_text())
    assert [r["steps"] for r in rows["per_step"]] == [1, 10]
    for row in [*rows["per_step"], rows["per_segment"]]:
        assert row["in_process_ms"] > 0 and row["temporal_ms"] > 0 and row["ratio"] > 0
    at_once = rows["resumed_at_once"]
    assert at_once["threads"] == 6
    assert at_once["one_worker_per_s"] > 0 and at_once["two_workers_per_s"] > 0


def test_store_note_benchmark_runs_every_kind_on_a_server() -> None:
    """``benchmarks.store_note`` at its smallest: its own PostgreSQL, Redis and langhost
    server (the wheel); each kind's runs finish and are reported (no timing assertion)."""
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks.store_note", "--pairs", "2", "--calls", "2"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    for kind in ("plain", "ask", "writes"):
        assert f"{kind:7} median " in proc.stdout, proc.stdout
    assert "ask - plain: median" in proc.stdout and "writes - plain: median" in proc.stdout


def test_profile_step_profiles_the_package_and_the_floor() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks.profile_step", "--steps", "3", "--top", "5"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    out = proc.stdout
    for name in ("dynavec_graph", FLOOR):
        assert f"== {name}: 3 steps on SQLite" in out
    assert out.count("-- by own time") == out.count("-- by cumulative time") == 2
    assert "stream (pregel/main.py" in out  # LangGraph's loop: the top cumulative entry
    bad = subprocess.run(
        [sys.executable, "-m", "benchmarks.profile_step", "nope"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert bad.returncode == 2 and "unknown system(s) ['nope']" in bad.stderr
