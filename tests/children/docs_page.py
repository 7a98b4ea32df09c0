"""A fresh interpreter that runs code blocks of a documentation page, in order.

Usage (tests/test_docs_blocks.py starts it, in the directory the blocks run in)::

    python -m tests.children.docs_page < PLAN.json

``PLAN`` is a JSON list of blocks, each ``{"path": the page's file, "line": the line of its
opening fence, "language": "python" or "bash", "code": ..., "namespace": ...}``. A Python block
runs as pasted into ``python``: in the module ``__main__`` of its ``namespace`` (blocks with
the same ``namespace`` share one, a new one starts empty), compiled at its own lines of the page
so a traceback shows the page's line. A bash block runs with ``bash -euo pipefail``. The first
block that fails stops the run: its traceback or its exit status goes to stderr, and this
process exits 1.
"""

from __future__ import annotations

import json
import subprocess
import sys
import traceback
import types


def main() -> int:
    plan = json.load(sys.stdin)
    namespaces: dict[str, types.ModuleType] = {}
    for block in plan:
        where = f"{block['path']}:{block['line']}"
        sys.stdout.flush()
        if block["language"] == "bash":
            done = subprocess.run(
                ["bash", "-euo", "pipefail", "-c", block["code"]],
                stdin=subprocess.DEVNULL,
                timeout=300,
            )
            if done.returncode != 0:
                print(f"{where}: bash exited {done.returncode}:\n{block['code']}", file=sys.stderr)
                return 1
            continue
        module = namespaces.setdefault(block["namespace"], types.ModuleType("__main__"))
        sys.modules["__main__"] = module
        code = compile("\n" * block["line"] + block["code"], block["path"], "exec")
        try:
            exec(code, module.__dict__)
        except BaseException:
            traceback.print_exc()
            print(f"{where}: the block above failed", file=sys.stderr)
            return 1
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    code = main()
    if "temporalio.bridge.temporal_sdk_bridge" in sys.modules:
        # a block used Temporal's client: skip the finalization its bridge can abort (see
        # dynavec_langgraph.temporal._worker.exit_past_the_bridge; the exit handlers still run)
        from dynavec_langgraph.temporal._worker import exit_past_the_bridge

        exit_past_the_bridge(code)
    sys.exit(code)
