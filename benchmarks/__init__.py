"""Side-by-side benchmark of this package's agent and LangGraph's prebuilt agents.

Run ``python -m benchmarks.run`` from the repository root (``--quick`` for a smoke run).
Results go to ``benchmarks/results/``: ``results.json``, ``results.md`` and ``plot.png``.
"""
