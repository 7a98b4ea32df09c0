"""Exactly once across crashes: an idempotency key per tool call, and in-doubt calls.

**The key.** Every tool call the agent's tool node runs has an idempotency key,
:func:`~.keys.idempotency_key`, derived from what the thread stores durably: the thread id, the
checkpoint namespace the agent runs in (node names only, without LangGraph's task ids), the
assistant message that made the call (its id, else its position) and the tool call id. So it
is the same on every re-run of that call (a resumed pause, a re-asked approval, a crash
continuation, a ``ToolRetryMiddleware`` retry, another process or server continuing the
thread) and differs for every other call (the same tool and arguments in a later turn, or in
another thread). A call run without a thread (no checkpointer) gets a random key per run.

**In-doubt calls.** A tool may declare what happens when its call was running when the
process died (``on_crash``, see :data:`~.keys.OnCrash`). For ``"ask"`` and ``"fail"`` the tool node
writes a durable start mark before the tool body runs, as a pending write on the checkpoint
the node runs from (in the thread's own saver, with the machinery of
:mod:`dynavec_langgraph._exactly_once.claims`: a task id and a channel of its own, which LangGraph
ignores when it loads the checkpoint), and an end mark when the body ends (``done`` with the node's
update, ``closed`` when it paused, ``raised`` when it raised). A later run of the same call
from the same checkpoint that finds a start mark without an end finds the call in doubt:

- ``"retry"`` (the default): no mark is written at all; the call runs again, with the same key;
- ``"ask"``: the call becomes a pause "this call may or may not have run" (node id
  ``in_doubt_<tool>``), answered like any approval: approve = run it again (same key),
  respond = it ran and the message is its result, reject = skip it (the model is told);
- ``"fail"``: :class:`~dynavec_langgraph._errors.InDoubtCallError` names the call, its key and
  how to settle it; nothing runs.

A call whose ``done`` mark holds its update (the process died after the tool returned, before
LangGraph saved the result) is answered from that record and never runs again. Tools that
declare no ``on_crash`` write no mark and read none. Under LangGraph's default
``durability="async"`` every call (declared or not: undeclared is ``"retry"``) starts only
once the checkpoint it runs from is stored (LangGraph saves it in the background; the graph's
saver says when its save returns, :func:`~.wait.stored`): a crash then re-runs the same call, never
a new model turn with a new key.

**Notes for a server's views.** A LangGraph API server's thread state does not return pending
writes, so a client of the server cannot read the marks. While an ``"ask"`` call runs, the
tool node therefore also keeps a *note* in the run's store (``langgraph.config.get_store()``,
when the graph has one: every LangGraph API server gives it one), in the namespace
``(NOTE_NS, thread_id)`` under the call's key, written after the start mark and deleted after
the end mark. A note left behind (the process died while the call ran) on the checkpoint the
thread still shows tells a client (``RemoteReActAgent``, ``inbox --server``) that the pause it
shows for that call is stale: the call may have run (:func:`~.shown.noted_in_doubt`).

The in-doubt pause is asked at a fixed position among the task's interrupts (how many
decisions the task had when the doubt was found, kept in a ``doubt`` mark), and re-read on
every later run of the task, so LangGraph's matching of resume values by position stays right
for the tool's own pauses after it. What it reads from LangGraph that is not a public name
(langgraph 1.2.24, pinned by ``tests/test_exactly_once.py``): the task config's
``"checkpoint_map"``, the namespace separators ``"|"`` and ``":"`` (the task id is the last
part), and the ``"__resume__"`` pending write of a task (``langgraph._internal._constants``).

One concern a module: ``keys`` (the key, the declared ``on_crash``), ``marks`` (where the marks
are written, how they are read back, the note), ``gate`` (the decision from the marks: run,
answer, ask the in-doubt question or fail), ``wait`` (the wait for the checkpoint, sync and
async), ``guarded`` (the doors ``guarded`` / ``aguarded``: each differs from its twin only in
its I/O calls, what they share is planned and finished by one ``_Guard``), ``shown`` (what a
door that only reads shows: ``in_doubt_pauses``, ``shown_first``, ``noted_in_doubt``,
``superseded``).
"""
