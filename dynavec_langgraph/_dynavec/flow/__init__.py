"""dynavec's graph engine (``dynavec.agents.graph``), compiled to a LangGraph ``StateGraph``.

An :class:`AgentGraph` is built as in dynavec (nodes, edges with conditions, parallel branches,
join barriers, reducers on a :class:`GraphState`) and :meth:`AgentGraph.run` returns dynavec's
:class:`GraphResult` with its traces, errors and quirks (docs/compatibility.md, "Graph
engine"). Underneath, :meth:`AgentGraph.compile` turns it into a compiled LangGraph graph:

- every dynavec node is a LangGraph node of the same name; the nodes of one dynavec round
  (the batch of ready nodes) run in one LangGraph superstep, in parallel when there are
  several (``max_workers`` is LangGraph's ``max_concurrency``);
- after each round one routing node, ``__flow_dispatch__``, merges the round's results in
  batch order with the state's reducers, writes the traces and evaluates the edges (dynavec's
  dispatch and barrier rules, its per-node ``max_iterations``, the silent stop at
  ``max_steps``); ``__flow_start__`` starts a run. So a round costs two supersteps;
- the graph's state has three channels: ``flow_state`` (the dynavec state's values: the input
  and output), ``flow_result`` (``GraphResult.to_dict()`` once the run ended, an output) and
  the private ``flow_run`` / ``flow_outcomes`` (the run's bookkeeping, JSON only).

So the compiled graph runs with any LangGraph checkpointer, in ``langgraph dev`` and as a node
of another graph, and LangGraph's ``interrupt()`` (or this package's
:func:`~dynavec_langgraph.interrupt.interrupt`) inside a node pauses it: the run stops with the
interrupt, and ``Command(resume=decision)`` (or :meth:`AgentGraph.resume`) re-runs that node,
whose ``interrupt()`` then returns the decision, and carries on. Node exceptions are captured
in the result as dynavec does; LangGraph's interrupt exceptions never are.

Reducers are Python functions and are not stored in checkpoints: a run gets them from the
start state (:meth:`AgentGraph.run`), from ``compile(reducers=...)``, or, when resuming,
from ``resume(reducers=...)``.

The engine, one module per part: ``parts`` (the errors, reducers, state, nodes and edges),
``conditions`` (the condition language), ``results`` (traces and results), ``rounds`` (the
compiled graph's channels and nodes: a dynavec round in LangGraph supersteps),
``in_process`` (the serializer of a run kept in process) and ``graph`` (``AgentGraph``:
building, validation, compile, run and resume, the pause mapping).
"""
