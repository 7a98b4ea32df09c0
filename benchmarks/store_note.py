"""What the in-doubt note costs on a server: ``python -m benchmarks.store_note [--pairs N]
[--calls K]``.

Started here, on 127.0.0.1: PostgreSQL (tests/pg.py) and one ``langhost serve`` server
(tests/cluster.py: stock langgraph-api on PostgreSQL + Redis, this package from its built
wheel) serving ``benchmarks/store_note.json``: three agents making ``K`` sequential calls of a
no-op tool (``benchmarks/store_note_graph.py``): the tool declaring nothing (``plain``),
``on_crash="ask"`` (``ask``: a read of the checkpoint, the start and end marks and the note's
two store writes per call), and an async tool declaring nothing that makes the note's two
store writes itself (``writes``: the note alone, ``aput`` / ``adelete`` of a note of the
package's size). Runs go through the LangGraph SDK (``runs.wait``,
``durability="sync"`` as ``RemoteReActAgent`` sends), one of each kind in turn, ``N`` times
(paired: the three runs of a round run back to back). Printed: the median per-call time of
each kind, and the medians of the per-round differences to ``plain``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

CONFIG = Path(__file__).resolve().with_name("store_note.json")
KINDS = ("plain", "ask", "writes")


def main(argv: list[str] | None = None) -> int:
    from langgraph_sdk import get_sync_client

    from tests.cluster import Cluster, ClusterUnavailable

    parser = argparse.ArgumentParser(prog="python -m benchmarks.store_note", description=__doc__)
    parser.add_argument("--pairs", type=int, default=15, help="rounds (default 15)")
    parser.add_argument("--calls", type=int, default=20, help="tool calls per run (default 20)")
    args = parser.parse_args(argv)
    cluster = Cluster(config=CONFIG, servers=1, env={"N_JOBS_PER_WORKER": "2"})
    try:
        cluster.start()
    except ClusterUnavailable as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    try:
        client = get_sync_client(url=cluster.running[0].url, timeout=120)
        goal: dict[str, Any] = {"messages": [{"role": "user", "content": f"steps {args.calls}"}]}

        def run(kind: str) -> float:
            thread: Any = client.threads.create()
            began = time.perf_counter()
            out = client.runs.wait(
                thread["thread_id"], f"{kind}_steps", input=goal, durability="sync"
            )
            took = time.perf_counter() - began
            assert isinstance(out, dict), out
            assert out["messages"][-1]["content"] == f"done after {args.calls}", out
            return float(took / args.calls)

        for kind in KINDS:  # warm up: imports, connections
            run(kind)
        per_call: dict[str, list[float]] = {k: [] for k in KINDS}
        for _ in range(args.pairs):
            for kind in KINDS:
                per_call[kind].append(run(kind))
    finally:
        cluster.stop()
    ms = {k: statistics.median(v) * 1000 for k, v in per_call.items()}
    for kind in KINDS:
        print(f"{kind:7} median {ms[kind]:.2f} ms per call")
    for kind in ("ask", "writes"):
        diffs = [(a - p) * 1000 for a, p in zip(per_call[kind], per_call["plain"], strict=True)]
        q = statistics.quantiles(diffs, n=4)
        print(
            f"{kind} - plain: median {statistics.median(diffs):+.2f} ms per call "
            f"(quartiles {q[0]:+.2f} .. {q[2]:+.2f}), ratio {ms[kind] / ms['plain']:.2f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
