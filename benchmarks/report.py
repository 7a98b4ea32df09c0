"""Targets (MET / MISSED with the gap), the markdown report and the plot."""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from benchmarks.long_thread import FLAT_LIMIT, LONG_SYSTEMS, flat_targets
from benchmarks.systems import (
    BASELINE,
    BOOKKEEPING,
    CREATE_AGENT_FACE,
    FLOOR,
    LABELS,
    MIDDLEWARE_LABEL,
    SYNC_GRAPH,
    SYSTEMS,
    TIMED,
)

Row = dict[str, Any]
OURS = "dynavec_graph"
AGENT = "dynavec_ReActAgent"
IMPORT_BASELINE = "langgraph + langchain_core APIs"


def _target(
    name: str,
    goal: str,
    measured: float,
    limit: float,
    *,
    at_least: bool = False,
    detail: str = "",
    unit: str = "",
) -> Row:
    met = measured >= limit if at_least else measured <= limit
    gap = (limit - measured) if at_least else (measured - limit)
    return {
        "target": name,
        "goal": goal,
        "measured": measured,
        "limit": limit,
        "status": "MET" if met else "MISSED",
        "gap": 0.0 if met else gap,
        "gap_text": ""
        if met
        else f"{gap:+.3g}{unit} {'short of' if at_least else 'over'} the limit",
        "detail": detail,
    }


def _time_target(time_rows: list[Row], saver: str, limit: float) -> Row | None:
    ours = [r for r in time_rows if r["saver"] == saver and r["system"] == OURS]
    if not ours:
        return None
    worst = max(ours, key=lambda r: r["ratio_to_create_agent"])
    cases = ", ".join(
        f"{r['steps']}x{r['calls']}: {r['ratio_to_create_agent']:.2f}"
        f" (cpu {r['cpu_ratio_to_create_agent']:.2f})"
        for r in ours
    )
    return _target(
        f"time per step, {saver}",
        f"graph <= {limit}x create_agent in every case",
        worst["ratio_to_create_agent"],
        limit,
        detail=f"worst {worst['steps']} steps x {worst['calls']} calls; per case {cases}",
        unit="x",
    )


def _spread(ratios: list[float]) -> str:
    """A median ratio with its spread: ``median (min-max, n rounds)``."""
    return f"{statistics.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f}, n={len(ratios)})"


LONG_RUN = 50
ISSUE_TARGETS: tuple[tuple[int, str, float], ...] = (
    # (steps, versus, limit): the close-to-the-floor targets, judged per saver; LONG_RUN steps
    # (the longest measured run where the sizes have none, as in --quick) and 1 x 1
    (LONG_RUN, "create_agent", 0.6),
    (LONG_RUN, FLOOR, 1.5),
    (1, "create_agent", 0.8),
)


def _floor_targets(time_rows: list[Row]) -> list[Row]:
    """Per step on SQLite and PostgreSQL: the graph against create_agent and the floor, as the
    median of the per-round ratios of one run (the worst case of the matching cases)."""
    out: list[Row] = []
    measured = {r["steps"] for r in time_rows}
    if not measured:
        return out
    for saver in ("sqlite", "postgres"):
        for wanted, versus, limit in ISSUE_TARGETS:
            steps = wanted if wanted in measured or wanted == 1 else max(measured)
            what = "one-call runs (1 x 1)" if steps == 1 else f"{steps}-step runs"
            cases = [
                r
                for r in time_rows
                if r["saver"] == saver
                and r["system"] == OURS
                and r["steps"] == steps
                and (steps != 1 or r["calls"] == 1)
            ]
            key = "ratios_to_floor" if versus == FLOOR else "ratios_to_create_agent"
            cpu_key = f"cpu_{key}"
            cases = [r for r in cases if key in r]
            if not cases:
                continue
            worst = max(cases, key=lambda r: statistics.median(r[key]))
            per_case = "; ".join(
                f"{r['steps']}x{r['calls']}: {_spread(r[key])}"
                + (f", CPU {_spread(r[cpu_key])}" if cpu_key in r else "")
                for r in cases
            )
            out.append(
                _target(
                    f"{what}, {saver}, vs {versus}",
                    f"graph <= {limit}x {versus} per step (median of the rounds, each case)",
                    statistics.median(worst[key]),
                    limit,
                    detail=f"wall median (min-max, rounds) per case, then the same ratio of the "
                    f"benchmark process's CPU time (all its threads): {per_case}",
                    unit="x",
                )
            )
    return out


def _resume_ratio_target(resume: dict[str, Row]) -> Row | None:
    """A fresh process's resume (setup + call) against create_agent's, round by round."""
    if OURS not in resume or BASELINE not in resume:
        return None
    base = resume[BASELINE].get("resume_samples_ms")
    if not base:
        return None
    per = {
        n: [a / b for a, b in zip(resume[n]["resume_samples_ms"], base, strict=True)]
        for n in (OURS, AGENT)
        if n in resume
    }
    worst = max(per, key=lambda n: statistics.median(per[n]))
    detail = "; ".join(
        f"{'graph' if n == OURS else 'ReActAgent'} {_spread(v)}" for n, v in per.items()
    )
    if FLOOR in resume:  # LangGraph alone, resumed the same way: for information
        floor = [a / b for a, b in zip(resume[FLOOR]["resume_samples_ms"], base, strict=True)]
        detail += f"; the floor (LangGraph alone) {_spread(floor)}"
    return _target(
        "resume in a new process vs create_agent (SQLite)",
        "setup + resume call <= 0.8x create_agent's (graph and ReActAgent, median of the rounds)",
        statistics.median(per[worst]),
        0.8,
        detail=detail,
        unit="x",
    )


def _paired(time_rows: list[Row], system: str, versus: str) -> list[tuple[float, Row]]:
    """Per case: median over the rounds of ``system``'s time / ``versus``'s in the same round."""
    out = []
    for r in time_rows:
        if r["system"] != system:
            continue
        case = (r["saver"], r["steps"], r["calls"])
        other = next(
            (
                g
                for g in time_rows
                if g["system"] == versus and (g["saver"], g["steps"], g["calls"]) == case
            ),
            None,
        )
        if other is not None:
            ratios = [a / b for a, b in zip(r["samples_ms"], other["samples_ms"], strict=True)]
            out.append((statistics.median(ratios), r))
    return out


def _overhead_target(time_rows: list[Row]) -> Row | None:
    """ReActAgent vs the graph invoked as ReActAgent invokes it (``durability="sync"``)."""
    like = [(v, r) for v, r in _paired(time_rows, AGENT, SYNC_GRAPH) if r["saver"] != "none"]
    if not like:
        return None
    default = {
        (r["saver"], r["steps"], r["calls"]): v
        for v, r in _paired(time_rows, AGENT, OURS)
        if r["saver"] != "none"
    }
    med = statistics.median(v for v, _ in like)
    worst_ratio, worst = max(like, key=lambda x: x[0])
    savers = dict.fromkeys(r["saver"] for _, r in like)
    per_saver = ", ".join(
        f"{k} {statistics.median(v for v, r in like if r['saver'] == k):.3f}" for k in savers
    )
    return _target(
        "ReActAgent overhead",
        'ReActAgent <= 1.05x the graph invoked with durability="sync" (as ReActAgent does), '
        "median over the checkpointed cases",
        med,
        1.05,
        detail=f"per saver {per_saver}; worst case {worst['saver']} "
        f"{worst['steps']}x{worst['calls']}: {worst_ratio:.2f}; for information, vs the graph "
        f'with the default durability="async": median '
        f"{statistics.median(default.values()):.3f}",
        unit="x",
    )


def targets(results: dict[str, Any]) -> list[Row]:
    """Evaluate every target of the benchmark on the measured results."""
    out: list[Row] = []
    time_rows: list[Row] = results["time"]
    for saver, limit in (("sqlite", 0.8), ("postgres", 0.8), ("none", 1.0)):
        row = _time_target(time_rows, saver, limit)
        if row:
            out.append(row)
    out.extend(_floor_targets(time_rows))
    overhead = _overhead_target(time_rows)
    if overhead:
        out.append(overhead)
    storage: list[Row] = results["storage"]
    steps = sorted({r["steps"] for r in storage})
    if len(steps) >= 2:
        lo, hi = steps[-2], steps[-1]
        growths, shares, floors = [], [], []
        for saver in sorted({r["saver"] for r in storage}):
            size = {(r["system"], r["steps"]): r["bytes"] for r in storage if r["saver"] == saver}
            growths.append((size[(OURS, hi)] / size[(OURS, lo)], saver))
            shares.append((size[(OURS, hi)] / size[(BASELINE, hi)], saver))
            if (BOOKKEEPING, hi) in size:
                floors.append((size[(BOOKKEEPING, hi)] / size[(BASELINE, hi)], saver))
        g, gs = max(growths)
        out.append(
            _target(
                f"storage growth {lo}->{hi} steps",
                "<= 2.2 (linear)",
                g,
                2.2,
                detail=f"worst {gs}; " + ", ".join(f"{s}: {v:.2f}" for v, s in growths),
            )
        )
        s, ss = max(shares)
        out.append(
            _target(
                f"bytes at {hi} steps vs create_agent",
                "<= 0.10 of create_agent's",
                s,
                0.10,
                detail=f"worst {ss}; "
                + ", ".join(f"{k}: {v:.3f}" for v, k in shares)
                + (
                    "; the floor (LangGraph's own records of the same checkpoints, no message): "
                    + ", ".join(f"{k}: {v:.3f}" for v, k in floors)
                    if floors
                    else ""
                ),
            )
        )
    resume = {r["system"]: r for r in results["resume"]}
    if OURS in resume:
        worst_sys = max((OURS, AGENT), key=lambda n: resume[n]["resume_ms"])
        out.append(
            _target(
                "resume in a new process (SQLite)",
                "setup + resume call < 50 ms after imports (graph and ReActAgent)",
                resume[worst_sys]["resume_ms"],
                50.0,
                detail=f"graph {resume[OURS]['resume_ms']:.1f} ms, ReActAgent "
                f"{resume[AGENT]['resume_ms']:.1f} ms (invoke alone "
                f"{resume[OURS]['invoke_ms']:.1f} / {resume[AGENT]['invoke_ms']:.1f} ms)",
                unit=" ms",
            )
        )
    resume_ratio = _resume_ratio_target(resume)
    if resume_ratio:
        out.append(resume_ratio)
    imports = {r["label"]: r["median_ms"] for r in results["imports"]}
    paired = results.get("import_added") or {}
    if paired:
        out.append(
            _target(
                "import cost",
                f"import dynavec_langgraph adds < 10% to `{IMPORT_BASELINE}` (both in one "
                "interpreter, the collector paused)",
                paired["ratio"],
                0.10,
                detail=f"{paired['added_ms']:.0f} ms on {paired['baseline_ms']:.0f} ms, median "
                f"of {paired['reps']} interpreters; in separate interpreters "
                f"{imports.get('dynavec_langgraph', 0):.0f} vs "
                f"{imports.get(IMPORT_BASELINE, 0):.0f} ms" + _collector_on(results["imports"]),
            )
        )
    for saver, system, ratio, detail in flat_targets(results.get("long_thread") or []):
        label = "graph" if system == OURS else "ReActAgent"
        out.append(
            _target(
                f"flat cost on a long thread, {saver} ({label})",
                f"run + resume at the last mark <= {FLAT_LIMIT}x the first",
                ratio,
                FLAT_LIMIT,
                detail=detail,
                unit="x",
            )
        )
    tput = results["throughput"]
    if tput:
        latency = _headline_latency(results)
        tput = [r for r in tput if r["io_latency_ms"] == latency]
        for name in (OURS, AGENT):
            by_w = {r["workers"]: r["threads_per_s"] for r in tput if r["system"] == name}
            lo_w, hi_w = min(by_w), max(by_w)
            out.append(
                _target(
                    f"async resumes on PostgreSQL ({'graph' if name == OURS else 'ReActAgent'})",
                    f"{hi_w} workers >= 3x the throughput of {lo_w} (the approved action "
                    f"awaits {latency:g} ms)",
                    by_w[hi_w] / by_w[lo_w],
                    3.0,
                    at_least=True,
                    detail=f"{by_w[lo_w]:.1f} vs {by_w[hi_w]:.1f} threads/s",
                    unit="x",
                )
            )
    return out


def _collector_on(rows: list[Row]) -> str:
    """The import-cost ratio with the collector running, for the target's detail."""
    on = {r["label"]: r.get("gc_on_median_ms") for r in rows}
    ours, base = on.get("dynavec_langgraph"), on.get(IMPORT_BASELINE)
    if not ours or not base:
        return ""
    return f"; with the collector on {ours:.0f} vs {base:.0f} ms ({ours / base - 1:.3f})"


def _headline_latency(results: dict[str, Any]) -> float:
    """The approved action's latency the throughput target is judged at."""
    latencies = results.get("meta", {}).get("settings", {}).get("io_latencies_ms")
    return (
        float(latencies[0]) if latencies else max(r["io_latency_ms"] for r in results["throughput"])
    )


# --- markdown ----------------------------------------------------------------------------


def _table(header: list[str], rows: Iterable[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def _kb(n: float) -> str:
    return f"{n / 1024:,.0f} KB" if n < 10 * 1024 * 1024 else f"{n / 1024 / 1024:,.1f} MB"


def markdown(results: dict[str, Any], only: list[str] | None = None) -> str:
    """The whole report as markdown (``only``: the targets and the sections of those parts,
    for ``--only``; the long_thread part is the one with sections of its own there)."""
    parts: list[str] = []
    meta = results["meta"]
    parts.append(
        f"Mode: **{meta['mode']}**, {meta['cpus']} CPUs, Python {meta['python']}, "
        + ", ".join(f"{k} {v}" for k, v in meta["versions"].items())
        + f". Total {meta['seconds']:.0f} s."
    )
    parts.append("Systems: " + "; ".join(f"`{k}` = {v}" for k, v in LABELS.items()) + ".")
    parts.append(
        "### Targets\n\n"
        + _table(
            ["target", "goal", "measured", "status", "gap", "detail"],
            (
                [
                    t["target"],
                    t["goal"],
                    f"{t['measured']:.3g}",
                    t["status"],
                    t["gap_text"],
                    t["detail"],
                ]
                for t in results["targets"]
            ),
        )
    )
    if only is not None:
        return "\n\n".join(parts + _long_sections(results)) + "\n"
    header = ["checkpointer", "steps x calls", *TIMED, f"{OURS} / {FLOOR}"]
    rows = []
    for r in results["time"]:
        if r["system"] != SYSTEMS[0]:
            continue
        same = [
            x
            for x in results["time"]
            if (x["saver"], x["steps"], x["calls"]) == (r["saver"], r["steps"], r["calls"])
        ]
        by = {x["system"]: x for x in same}
        rows.append(
            [r["saver"], f"{r['steps']} x {r['calls']}"]
            + [
                f"{by[s]['ms_per_step']:.2f} ({by[s]['ratio_to_create_agent']:.2f}x)"
                if s in by
                else "-"
                for s in TIMED
            ]
            + [_spread(by[OURS]["ratios_to_floor"]) if "ratios_to_floor" in by[OURS] else "-"]
        )
    parts.append(
        "### Median ms per step (ratio to create_agent, runs alternated)\n\n"
        f"`{SYNC_GRAPH}` runs only with a checkpointer (without one, durability changes "
        f"nothing). `{FLOOR}`: LangGraph alone making the same calls and checkpoints. The last "
        "column: the package's graph over the floor, median of the rounds (min-max, rounds)."
        "\n\n" + _table(header, rows)
    )
    mw = results.get("middleware") or []
    mw_systems = [s for s in ("dynavec_graph", CREATE_AGENT_FACE, "create_agent") if s in LABELS]
    if mw:
        mrows = []
        for r in mw:
            if r["system"] != "dynavec_graph":
                continue
            by = {
                x["system"]: x
                for x in mw
                if (x["saver"], x["steps"], x["calls"]) == (r["saver"], r["steps"], r["calls"])
            }
            mrows.append(
                [r["saver"], f"{r['steps']} x {r['calls']}"]
                + [
                    f"{by[s]['ms_per_step']:.2f} ({by[s]['ratio_to_create_agent']:.2f}x)"
                    if s in by
                    else "-"
                    for s in mw_systems
                ]
            )
        parts.append(
            f"### With two middleware ({MIDDLEWARE_LABEL}): median ms per step\n\n"
            "Each system gets the same two middleware; ratio to create_agent with them "
            f"(`{CREATE_AGENT_FACE}` = `dynavec_langgraph.create_agent`, the drop-in, side by "
            "side with `langchain.agents.create_agent` in one run).\n\n"
            + _table(["checkpointer", "steps x calls", *mw_systems], mrows)
        )
    crows = []
    for r in results["time"]:
        if r["system"] != SYSTEMS[0]:
            continue
        by = {
            x["system"]: x
            for x in results["time"]
            if (x["saver"], x["steps"], x["calls"]) == (r["saver"], r["steps"], r["calls"])
        }
        crows.append(
            [r["saver"], f"{r['steps']} x {r['calls']}"]
            + [
                f"{by[s]['cpu_ms_per_step']:.2f} ({by[s]['cpu_ratio_to_create_agent']:.2f}x)"
                if s in by
                else "-"
                for s in TIMED
            ]
        )
    parts.append(
        "### CPU ms per step of the benchmark process (ratio to create_agent)\n\n"
        "Less sensitive to other load on the machine; excludes the PostgreSQL server's CPU "
        "and I/O waits.\n\n" + _table(header[:-1], crows)
    )
    srows = []
    stored = {r["system"] for r in results["storage"]}
    columns = [*SYSTEMS, *((BOOKKEEPING,) if BOOKKEEPING in stored else ())]
    for saver in dict.fromkeys(r["saver"] for r in results["storage"]):
        steps = sorted({r["steps"] for r in results["storage"] if r["saver"] == saver})
        size = {
            (r["system"], r["steps"]): r["bytes"] for r in results["storage"] if r["saver"] == saver
        }
        for n in steps:
            srows.append([saver, str(n)] + [_kb(size[(s, n)]) for s in columns])
        if len(steps) >= 2:
            srows.append(
                [saver, f"growth {steps[-2]}->{steps[-1]}"]
                + [f"{size[(s, steps[-1])] / size[(s, steps[-2])]:.2f}" for s in columns]
            )
    parts.append(
        "### Bytes stored (one call per step)\n\n"
        + (
            f"`{BOOKKEEPING}`: LangGraph alone making the same checkpoints with no message in "
            "them (the floor of what any agent making them stores).\n\n"
            if BOOKKEEPING in stored
            else ""
        )
        + _table(["checkpointer", "steps", *columns], srows)
    )
    parts.append(
        "### Resume of a paused thread in a new process (SQLite, median ms)\n\n"
        + _table(
            [
                "system",
                "imports",
                "setup (saver + build)",
                "resume call",
                "resume total",
                "process wall",
            ],
            (
                [
                    r["system"],
                    f"{r['import_ms']:.0f}",
                    f"{r['setup_ms']:.1f}",
                    f"{r['invoke_ms']:.1f}",
                    f"{r['resume_ms']:.1f}",
                    f"{r['process_ms']:.0f}",
                ]
                for r in results["resume"]
            ),
        )
    )
    parts.append(
        "### Import time (fresh interpreter, median ms)\n\n"
        + _table(
            ["statement", "ms (collector paused)", "ms (collector on)"],
            (
                [
                    f"`{r['statement']}`",
                    f"{r['median_ms']:.0f}",
                    f"{r['gc_on_median_ms']:.0f}" if "gc_on_median_ms" in r else "",
                ]
                for r in results["imports"]
            ),
        )
    )
    mem = results["memory"]
    mrows = []
    for saver in dict.fromkeys(r["saver"] for r in mem):
        by = {r["system"]: r for r in mem if r["saver"] == saver}
        mrows.append(
            [saver, str(by[SYSTEMS[0]]["steps"])] + [_kb(by[s]["peak_bytes"]) for s in SYSTEMS]
        )
    parts.append(
        "### Peak memory per run (tracemalloc)\n\n"
        + _table(["checkpointer", "steps", *SYSTEMS], mrows)
    )
    tput = results["throughput"]
    if tput:
        workers = sorted({r["workers"] for r in tput})
        for latency in dict.fromkeys(r["io_latency_ms"] for r in tput):
            trows = []
            same = [r for r in tput if r["io_latency_ms"] == latency]
            for s in SYSTEMS:
                by = {r["workers"]: r for r in same if r["system"] == s}
                first, last = by[workers[0]]["threads_per_s"], by[workers[-1]]["threads_per_s"]
                trows.append(
                    [s]
                    + [f"{by[w]['threads_per_s']:.1f}" for w in workers]
                    + [f"{last / first:.2f}x"]
                )
            parts.append(
                "### Paused threads resumed by async workers "
                f"(PostgreSQL, {same[0]['threads']} threads; the approved action awaits "
                f"{latency:g} ms, as a call to an external API would; threads/s)\n\n"
                f"One `AsyncPostgresSaver` on an `AsyncConnectionPool` of "
                f"{same[0].get('pool_size', '?')} connections (two per worker: the saver's and "
                "the resume lock's advisory-lock session, plus two spare).\n\n"
                + _table(["system", *(f"{w} workers" for w in workers), "speed-up"], trows)
            )
    return "\n\n".join(parts + _long_sections(results)) + "\n"


def _long_sections(results: dict[str, Any]) -> list[str]:
    """The long_thread part: ms per run + resume along one thread, and many paused threads."""
    parts: list[str] = []
    rows: list[Row] = results.get("long_thread") or []
    if rows:
        marks = sorted({r["run"] for r in rows})
        by = {(r["saver"], r["system"], r["run"]): r for r in rows}
        table = []
        for saver in dict.fromkeys(r["saver"] for r in rows):
            for system in LONG_SYSTEMS:
                cells = [f"{by[(saver, system, m)]['ms']:.1f}" for m in marks]
                ratio = by[(saver, system, marks[-1])]["ms"] / by[(saver, system, marks[0])]["ms"]
                cpu = [f"{by[(saver, system, m)]['cpu_ms']:.1f}" for m in marks]
                table.append([saver, system, *cells, f"{ratio:.2f}x", " / ".join(cpu)])
        window = rows[0]["window"] if rows else 0
        parts.append(
            "### One long thread: ms per run + resume (median of the last "
            f"{window} runs at each mark)\n\n"
            "Each run is a goal, a tool call that pauses for approval, the resume and the "
            f"answer (4 messages a run). Target: the last mark <= {FLAT_LIMIT}x the first for "
            "the graph and ReActAgent.\n\n"
            + _table(
                [
                    "checkpointer",
                    "system",
                    *(f"run {m}" for m in marks),
                    f"run {marks[-1]} / run {marks[0]}",
                    "CPU ms at each mark",
                ],
                table,
            )
        )
    paused: list[Row] = results.get("paused_threads") or []
    if paused:
        parts.append(
            f"### {paused[0]['threads']:,} paused threads (dynavec_graph; the inbox lists and "
            "answers them)\n\n"
            + _table(
                ["checkpointer", "threads", "pause all", "inbox list", "resume all", "tools ran"],
                (
                    [
                        r["saver"],
                        f"{r['threads']:,}",
                        f"{r['pause_s']:.1f} s",
                        f"{r['list_s']:.2f} s",
                        f"{r['resume_all_s']:.1f} s",
                        f"{r['tools_ran']:,} (each once)",
                    ]
                    for r in paused
                ),
            )
        )
    return parts


# --- plot --------------------------------------------------------------------------------


def plot(results: dict[str, Any], path: Path) -> None:
    """Time per step and bytes stored against steps, one line per system."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    savers = list(dict.fromkeys(r["saver"] for r in results["time"]))
    ssavers = list(dict.fromkeys(r["saver"] for r in results["storage"]))
    cols = max(len(savers), len(ssavers), 1)
    fig, axes = plt.subplots(2, cols, figsize=(4.2 * cols, 7.5), squeeze=False)
    colors = dict(
        zip(
            TIMED,
            ("tab:blue", "tab:cyan", "tab:red", "tab:orange", "tab:purple", "tab:gray"),
            strict=True,
        )
    )
    for i, saver in enumerate(savers):
        ax = axes[0][i]
        for s in TIMED:
            for calls, style in ((1, "-"), (3, "--")):
                pts = sorted(
                    (r["steps"], r["ms_per_step"])
                    for r in results["time"]
                    if r["saver"] == saver and r["system"] == s and r["calls"] == calls
                )
                if pts:
                    ax.plot(
                        *zip(*pts, strict=True),
                        style,
                        marker="o",
                        color=colors[s],
                        label=f"{s} ({calls}/step)",
                    )
        ax.set_xscale("log")
        ticks = sorted({r["steps"] for r in results["time"]})
        ax.set_xticks(ticks, [str(t) for t in ticks])
        ax.minorticks_off()
        ax.set_title(f"ms per step, {saver}")
        ax.set_xlabel("steps")
    for i, saver in enumerate(ssavers):
        ax = axes[1][i]
        for s in SYSTEMS:
            pts = sorted(
                (r["steps"], r["bytes"] / 1024)
                for r in results["storage"]
                if r["saver"] == saver and r["system"] == s
            )
            ax.plot(*zip(*pts, strict=True), marker="o", color=colors[s], label=s)
        ax.set_yscale("log")
        ax.set_title(f"KB stored, {saver}")
        ax.set_xlabel("steps")
    for j in range(len(ssavers), cols):
        axes[1][j].axis("off")
    handles, labels = max(
        (ax.get_legend_handles_labels() for ax in axes[0]), key=lambda hl: len(hl[1])
    )
    fig.legend(handles, labels, loc="lower right", fontsize=8, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
