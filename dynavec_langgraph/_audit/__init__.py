"""The audit trail of a thread's approvals and the notification outbox of its pauses.

Both live beside the thread's checkpoints, in the thread's own storage, append-only:

- on a checkpointer (every ``BaseCheckpointSaver``: memory, SQLite, PostgreSQL, the dynavec
  adapter and DynamoDB), each entry is one checkpoint of the thread in its own checkpoint
  namespace (:data:`AUDIT_NS`, :data:`OUTBOX_NS`), holding the entry (an audit entry in a
  pending write, see "The chain" below; an outbox entry in its metadata); the graph's own
  checkpoints (namespace ``""``) are untouched, so listing, history and resuming do not see
  them, and deleting the thread deletes them;
- on a LangGraph store (a LangGraph API server, ``langgraph dev``: the graph gets the
  server's store), each entry is one item under ``(AUDIT_NS, thread_id)`` /
  ``(OUTBOX_NS, thread_id)`` keyed by its event id, which ``langgraph_sdk``'s
  ``client.store.search_items`` reads.

Entries are written where decisions are read, inside the graph (``in_graph.on_pause`` and
``in_graph.on_decision``, called by :func:`dynavec_langgraph._pauses.ask.ask`), so a raw graph,
``langgraph dev`` and the servers record them too; what happens outside a graph (a concurrent
resume refused by the lock) is recorded by the caller with ``trail.record``. Every entry has a
deterministic event id: a re-run of the paused tool reads its stored answers again and writes
the same ids, which are written once (a writer reads the trail before appending, and again
after losing its place; an outbox duplicate found later is dropped on reading).

**The chain.** Every entry of the audit trail carries its thread's sequence number ``seq`` (1,
2, ...), the ``hash`` of the entry before it (``prev_hash``; :data:`GENESIS` for the first) and
its own ``hash``: SHA-256 of the entry without ``hash``, as canonical JSON (``entries.entry_hash``).
On a checkpointer entry ``n`` is the pending write of task :data:`ENTRY_TASK` on the checkpoint
``dynavec-audit-<n, 12 digits>`` of :data:`AUDIT_NS`: the savers keep the first write of a
``(checkpoint, task, index)`` and ignore later ones (SQLite ``INSERT OR IGNORE``, PostgreSQL
``ON CONFLICT DO NOTHING``, the in-memory saver, the DynamoDB adapter's conditional put), so
two writers that both try entry ``n`` cannot both get it: the loser reads the winner back and
appends after it. On a store (no conditional put) a writer puts its item, reads the items of
its ``seq`` back and, finding another one, deletes its own and tries again.
``verify.check_thread`` reads it all back and names every entry that was edited, deleted,
reordered or inserted; entries written before the chain (no ``hash``) are counted as
unchained, not as tampering.

Recording is opt-in (the agent's ``audit=True`` / ``notify=...``, the graph's config keys
:data:`AUDIT_KEY` / :data:`NOTIFY_KEY`, or the environment variables :data:`AUDIT_ENV` /
:data:`NOTIFY_ENV` for a server): a pause without them pays one dict lookup.

Notifications (``notifications.deliver``) are sent at least once from the outbox: every pause (and
re-ask) is first written to the outbox, then sent by a background thread of the process that
paused (a few tries, backing off) and by the sweeper (``dynavec-langgraph inbox notify``)
for whatever is still undelivered; each try is recorded, a failing receiver never fails or
blocks the run, and a duplicate carries the same ``event_id`` (also the ``X-Dynavec-Event-Id``
and ``Idempotency-Key`` headers).

The modules, one concern each: ``entries`` (the entry, its names, id and hash), ``storage``
(a checkpoint per entry or a store item: writing once, appending to the chain, reading),
``trail`` (recording and reading from outside the graph; what the agent's doors call),
``verify`` (the chain checked), ``in_graph`` (the hooks a pause and a decision call),
``notifications`` (the outbox and its delivery), ``switch`` (whether a run records, read
without importing the rest) and ``hooks`` (the in-graph hooks, or hooks that do nothing).
The public face is :mod:`dynavec_langgraph.audit`.
"""
