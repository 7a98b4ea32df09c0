"""Where a step's time goes: ``python -m benchmarks.profile_step [SYSTEM ...] [--steps N]``.

Runs each system (default: the package's graph and the floor) for ``--steps`` model turns of
one tool call on a ``SqliteSaver`` file under :mod:`cProfile`, after a warm-up run, and prints
the top entries by own time and by cumulative time, with each entry's share of the run. The
profiler's clock is the main thread's CPU time, so the time other processes take the CPU is
not charged to whatever function was running (on a loaded machine it otherwise lands on
arbitrary cheap calls); the checkpoint writes LangGraph runs on its background thread are
not in it. Call counts are exact whatever the load (docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, cast

from benchmarks.savers import open_saver
from benchmarks.systems import FLOOR, TIMED, Script, VariantName, build


def profile(name: VariantName, steps: int, workdir: Path) -> pstats.Stats:
    """Profile one ``steps``-step run of ``name`` on a fresh SQLite file (after a warm-up)."""
    with open_saver("sqlite", workdir, None) as saver:
        system = build(name, saver, script=Script(steps=2))
        system.run()
        system.script.steps = steps
        profiler = cProfile.Profile(time.thread_time)  # CPU time: preemption is not counted
        profiler.enable()
        outcome = system.run()
        profiler.disable()
        if outcome.answer is None or len(outcome.observations) != steps:
            raise SystemExit(f"{name}: the run did not finish: {outcome}")
    return pstats.Stats(profiler)


def top(stats: pstats.Stats, key: str, count: int) -> str:
    """The ``count`` first entries by ``key`` ("tottime" or "cumulative"), with shares."""
    raw = cast(dict[Any, Any], stats.stats)  # type: ignore[attr-defined]
    total = cast(float, stats.total_tt)  # type: ignore[attr-defined]
    index = 2 if key == "tottime" else 3
    rows = sorted(raw.items(), key=lambda kv: kv[1][index], reverse=True)[:count]
    out = io.StringIO()
    out.write(f"{'share':>6} {'calls':>8} {'own s':>8} {'cum s':>8}  function\n")
    for (file, line, func), (_, calls, own, cum, _) in rows:
        where = f"{Path(file).parent.name}/{Path(file).name}:{line}" if line else file
        share = (own if index == 2 else cum) / total
        out.write(f"{share:>6.1%} {calls:>8} {own:8.4f} {cum:8.4f}")
        out.write(f"  {func} ({where})\n")
    return out.getvalue()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.profile_step", description=__doc__)
    parser.add_argument("systems", nargs="*", default=["dynavec_graph", FLOOR])
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args(argv)
    unknown = set(args.systems) - set(TIMED)
    if unknown:
        parser.error(f"unknown system(s) {sorted(unknown)}; the systems are {', '.join(TIMED)}")
    with tempfile.TemporaryDirectory(prefix="dynavec-profile-") as tmp:
        for name in args.systems:
            stats = profile(cast(VariantName, name), args.steps, Path(tmp))
            total = cast(float, stats.total_tt)  # type: ignore[attr-defined]
            calls = cast(int, stats.total_calls)  # type: ignore[attr-defined]
            print(f"== {name}: {args.steps} steps on SQLite, {total * 1000 / args.steps:.2f} ms")
            print(f"   main-thread CPU per step, {calls / args.steps:.0f} calls per step")
            for key in ("tottime", "cumulative"):
                print(f"-- by {'own' if key == 'tottime' else 'cumulative'} time")
                print(top(stats, key, args.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
