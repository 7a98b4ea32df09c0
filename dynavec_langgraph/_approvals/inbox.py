"""The approvals inbox: the paused threads of a checkpointer and answers to their approvals.

What ``dynavec-langgraph inbox`` (:mod:`dynavec_langgraph._cli`) runs, without its argument
parsing, printing or exit codes:

- listing: :func:`thread_ids` of a saver, :func:`pending_approvals` of one thread's state as
  :class:`PendingApproval` rows, :func:`list_pending` for every thread;
- the agent: :func:`load_graph` imports ``--graph MODULE:ATTR`` (a dotted module or a ``.py``
  file; the command line's default is the demo agent) and :func:`graph_on` binds a copy of it
  to a saver, as the LangGraph server does;
- answering: :func:`resume_graph` answers one approval (picked with ``--node`` when several
  are pending) through the guarded resume of :mod:`dynavec_langgraph._resuming`, the one
  ``ReActAgent.resume`` uses: the thread's lock, the thread read under it, the decision
  checked (and a pending call of a tool the graph does not have refused) before anything runs.

Errors are the package's (:mod:`dynavec_langgraph._errors`), the same a ``ReActAgent`` caller
gets for the same case; :class:`~dynavec_langgraph._errors.InboxError` is for what only the
inbox does (loading ``--graph``). The command line prints them on stderr, exit code 2.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, fields
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import StateGraph
from langgraph.pregel import Pregel
from langgraph.types import StateSnapshot

from dynavec_langgraph._audit.entries import AuditEvent, Notifier
from dynavec_langgraph._audit.notifications import SWEEPER_BACKOFF, deliver
from dynavec_langgraph._audit.trail import audit_refusals, audit_trail, with_audit
from dynavec_langgraph._audit.verify import TrailReport, check_thread, trail_thread_ids
from dynavec_langgraph._errors import DynavecError, InboxError, StorageError, stopped_text
from dynavec_langgraph._exactly_once.shown import in_nested, shown_first
from dynavec_langgraph._graph.run_data import durability
from dynavec_langgraph._names import AUDIT_NS
from dynavec_langgraph._pauses.digest import review_digest
from dynavec_langgraph._pauses.policy.answers import expiry_answer
from dynavec_langgraph._pauses.policy.doors import expired_pauses
from dynavec_langgraph._pauses.policy.events import raise_timeouts
from dynavec_langgraph._pauses.value import interrupt_fields
from dynavec_langgraph._persistence.connections import postgres_rows
from dynavec_langgraph._persistence.kinds import saver_kind, stored_in
from dynavec_langgraph._resuming.answers import Answer
from dynavec_langgraph._resuming.checks import may_be_paused_elsewhere, refuse_if_damaged
from dynavec_langgraph._resuming.guarded import GuardedResume, resuming
from dynavec_langgraph._resuming.reading import read_thread as _read
from dynavec_langgraph._resuming.reading import storage_guard
from dynavec_langgraph._types import JSONObject, UserContext, UserPayload, UserState

if TYPE_CHECKING:
    from dynavec_langgraph._audit.storage import Target
    from dynavec_langgraph._types import Approver, Saver

__all__ = [
    "SEVERAL_HINT",
    "Expired",
    "Graph",
    "InboxError",
    "PendingApproval",
    "expire_pending",
    "graph_on",
    "list_pending",
    "load_graph",
    "notify_pending",
    "pending_approvals",
    "read_thread",
    "resume_graph",
    "thread_config",
    "thread_history",
    "thread_ids",
    "trail_threads",
    "verify_trails",
]

Graph = Pregel[UserState, UserContext, UserState, UserState]
"""A compiled LangGraph graph (what ``--graph`` names and the inbox drives)."""


@dataclass(frozen=True)
class PendingApproval:
    """One pending approval of a paused thread, as ``inbox list`` shows it."""

    thread_id: str
    node_id: str
    payload: Any
    since: str
    tool_call: JSONObject | None
    interrupt_id: str
    review_digest: str | None = None
    """What the person reviews (docs/approval-uis.md); ``None`` for a plain LangGraph pause."""

    def as_dict(self) -> JSONObject:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def thread_config(thread_id: str) -> RunnableConfig:
    """The config that addresses ``thread_id``.

    >>> thread_config("t1")
    {'configurable': {'thread_id': 't1'}}
    """
    return {"configurable": {"thread_id": thread_id}}


# --- listing -----------------------------------------------------------------------------


def pending_approvals(snapshot: StateSnapshot, thread_id: str) -> list[PendingApproval]:
    """The pending approvals of one thread's state."""
    rows: list[PendingApproval] = []
    for item in snapshot.interrupts:
        fields = interrupt_fields(item)
        rows.append(
            PendingApproval(
                thread_id=thread_id,
                node_id=fields.node_id or "",
                payload=fields.payload,
                since=snapshot.created_at or "",
                tool_call=fields.tool_call,
                interrupt_id=item.id,
                review_digest=review_digest(item),
            )
        )
    return rows


def in_doubt_first(
    app: Graph, saver: Saver, snapshot: StateSnapshot, thread_id: str
) -> StateSnapshot:
    """``snapshot`` with each pause whose approved call's run died (the call may have run)
    shown as the call's in-doubt question, which the next run asks first
    (:func:`~dynavec_langgraph._exactly_once.shown.shown_first`; one more read of the thread when
    it is paused; for an agent nested in a parent graph, ``app``, also its subgraph's
    checkpoint: :func:`~dynavec_langgraph._exactly_once.shown.in_nested`)."""
    if not snapshot.interrupts:
        return snapshot
    config = thread_config(thread_id)
    nested = in_nested(app, saver, config, snapshot)
    shown: StateSnapshot = shown_first(snapshot, saver.get_tuple(config), nested)
    return shown


_THREADS_SQL = (
    "SELECT thread_id, MAX(checkpoint_id) AS latest FROM checkpoints WHERE checkpoint_ns = '' "
    "GROUP BY thread_id ORDER BY latest DESC"
)


def _sql_thread_ids(saver: Any, sql: str = _THREADS_SQL) -> list[str] | None:
    """The thread ids ``sql`` selects from a SQLite or PostgreSQL saver's table (by default
    those of every thread, read from the table itself so one unreadable record does not hide
    the other threads); None for other savers."""
    saver = stored_in(saver)
    conn = getattr(saver, "conn", None)
    kind = saver_kind(saver)
    if kind == "sqlite" and conn is not None:
        with saver.lock:
            return [str(r[0]) for r in conn.execute(sql)]
    if kind == "postgres" and conn is not None:
        rows = postgres_rows(conn, sql)
        return [str(r["thread_id"] if isinstance(r, dict) else r[0]) for r in rows]
    return None


def thread_ids(saver: Saver) -> list[str]:
    """Every thread of ``saver`` that has a top-level checkpoint, newest activity first."""
    from_sql = _sql_thread_ids(saver)
    if from_sql is not None:
        return from_sql
    listing = getattr(getattr(saver, "checkpointer", None), "threads", None)
    if callable(listing):  # a dynavec checkpointer that lists its threads (DynamoDB)
        return [str(t) for t in listing()]
    seen: dict[str, str] = {}
    for item in saver.list(None):
        configurable = item.config.get("configurable") or {}
        if configurable.get("checkpoint_ns", ""):
            continue
        tid = str(configurable["thread_id"])
        ts = str(item.checkpoint.get("ts", ""))
        seen[tid] = max(seen.get(tid, ""), ts)
    return sorted(seen, key=lambda t: seen[t], reverse=True)


def read_thread(app: Graph, thread_id: str) -> StateSnapshot:
    """The state of one thread.

    Raises:
        StorageError: its record cannot be read (written by something else, damaged or
            crafted), or the storage failed; nothing was changed.
    """
    return _read(app, thread_config(thread_id), thread_id)


def list_pending(
    app: Graph, saver: Saver, unreadable: list[str] | None = None
) -> list[PendingApproval]:
    """The pending approvals of every thread of ``saver``, newest thread first.

    ``app`` is the graph bound to ``saver`` (:func:`graph_on`). A thread whose record cannot
    be read, or is damaged, raises :class:`~dynavec_langgraph._errors.StorageError` (a
    ``DamagedThreadError`` then), or, when ``unreadable`` is given, is skipped and its error
    appended there; so is a note for each thread stopped with an unanswered tool call and no
    pause (a crashed run, a breakpoint, a lost pause record). A storage failure raises
    ``StorageError``.
    """
    rows: list[PendingApproval] = []
    with storage_guard(saver, None):
        for tid in thread_ids(saver):
            try:
                snapshot = read_thread(app, tid)
                refuse_if_damaged(snapshot, tid)
                rows += pending_approvals(in_doubt_first(app, saver, snapshot, tid), tid)
                if unreadable is not None and snapshot.next and may_be_paused_elsewhere(snapshot):
                    unreadable.append(stopped_text(tid, ", ".join(map(repr, snapshot.next))))
            except StorageError as error:
                if unreadable is None:
                    raise
                unreadable.append(str(error))
    return rows


# --- the agent ---------------------------------------------------------------------------


def _import_failed(spec: str, error: Exception) -> InboxError:
    where = ""
    if isinstance(error, SyntaxError) and error.filename:
        where = f" ({error.filename}, line {error.lineno})"
    return InboxError(
        f"--graph {spec!r}: importing it failed with {type(error).__name__}: {error}{where}. "
        "Fix the module (run `python -c 'import MODULE'` to see the whole traceback); nothing "
        "was changed"
    )


def _import_module(spec: str, module_part: str) -> Any:
    if module_part.endswith(".py") or "/" in module_part or os.sep in module_part:
        path = Path(module_part).resolve()
        if not path.is_file():
            raise InboxError(f"--graph {spec!r}: no file {module_part!r}")
        digest = hashlib.sha256(str(path).encode()).hexdigest()[:12]
        name = f"dynavec_inbox_graph_{path.stem}_{digest}"
        if name in sys.modules:
            return sys.modules[name]
        found = importlib.util.spec_from_file_location(name, path)
        if found is None or found.loader is None:
            raise InboxError(f"--graph {spec!r}: cannot load {module_part!r} as Python")
        module = importlib.util.module_from_spec(found)
        sys.modules[name] = module
        try:
            found.loader.exec_module(module)
        except Exception as error:
            del sys.modules[name]
            raise _import_failed(spec, error) from None
        except BaseException:
            del sys.modules[name]
            raise
        return module
    cwd = os.getcwd()
    added = cwd not in sys.path and "" not in sys.path
    if added:
        sys.path.insert(0, cwd)
    try:
        return importlib.import_module(module_part)
    except ModuleNotFoundError as error:
        if error.name is None or not (module_part + ".").startswith(error.name + "."):
            raise _import_failed(spec, error) from None
        raise InboxError(
            f"--graph {spec!r}: no module named {error.name!r}; run from the directory that "
            "holds it, install it, or give a file: --graph ./path/to/agents.py:graph"
        ) from None
    except Exception as error:
        raise _import_failed(spec, error) from None
    finally:
        if added and cwd in sys.path:
            sys.path.remove(cwd)


def load_graph(spec: str) -> Graph:
    """The graph of ``--graph MODULE:ATTR``, without a checkpointer yet.

    ``MODULE`` is a dotted module or a ``.py`` file; ``ATTR`` a compiled graph or a
    ``StateGraph`` (compiled here).

    Raises:
        InboxError: a malformed spec, a missing module, file or attribute, or an attribute
            that is not a graph.
    """
    module_part, _, attr = spec.rpartition(":")
    if not module_part or not attr:
        raise InboxError(
            f"--graph {spec!r}: use MODULE:ATTR, e.g. --graph mypkg.agents:graph or "
            "--graph ./agents.py:graph"
        )
    module = _import_module(spec, module_part)
    try:
        graph = getattr(module, attr)
    except AttributeError:
        raise InboxError(f"--graph {spec!r}: {module_part!r} has no attribute {attr!r}") from None
    if isinstance(graph, StateGraph):
        graph = graph.compile()
    if not isinstance(graph, Pregel):
        raise InboxError(
            f"--graph {spec!r} is a {type(graph).__name__}, not a compiled graph: name the "
            "graph create_react_agent(...) returned (compiled without a checkpointer)"
        )
    return graph


def graph_on(graph: Graph, saver: Saver) -> Graph:
    """A copy of ``graph`` that runs on ``saver`` (what the LangGraph server does)."""
    return graph.copy(update={"checkpointer": saver})


# --- answering ---------------------------------------------------------------------------

SEVERAL_HINT = (
    "answer one with --node NODE_ID_OR_INTERRUPT_ID (`inbox list` shows them); nothing was changed"
)
"""What the inbox tells a caller who gave one decision while several approvals are pending."""


def resume_graph(
    app: Graph,
    saver: Saver,
    thread_id: str,
    decision: UserPayload,
    node: str | None = None,
    *,
    before: Callable[[], None] | None = None,
    approver: Approver = None,
) -> StateSnapshot:
    """Answer the approval ``node`` names (or the only one) of ``thread_id`` with ``decision``
    through the guarded resume (:func:`dynavec_langgraph._resuming.guarded.resuming`); ``before`` is
    called once every check passed, right before the graph runs.

    Returns the thread's state afterwards.

    Raises:
        ConcurrentResumeError: another caller is running or resuming the thread.
        NothingToResumeError: an unknown thread, one not paused, or one stopped without an
            approval (a breakpoint or a crashed run: there is nothing to answer).
        InvalidDecisionError: ``node`` names no pending approval, several are pending and
            none is named, a pending call of a tool ``app`` does not have, or a decision the
            approval refuses (its ``response_schema``, or the tool asked again).
        StorageError: the thread cannot be read, or the storage failed.
    """
    config = thread_config(thread_id)
    answer = Answer(decision, node=node, several=SEVERAL_HINT, approver=approver)
    with (
        audit_refusals(app, saver, thread_id, decision, "cli"),
        resuming(GuardedResume(app, saver, thread_id, answer, config, crashed="refuse")) as plan,
    ):
        if before is not None:
            before()
        with raise_timeouts(thread_id):
            app.invoke(plan.graph_input, config, durability=durability("inbox"))
            after = app.get_state(config)
            plan.settle(after.interrupts)
    return after


# --- the audit trail and the notification outbox (dynavec_langgraph._audit) ---------------


def thread_history(saver: Saver, thread_id: str) -> list[AuditEvent]:
    """The audit trail of ``thread_id`` (``inbox history``), oldest first.

    Raises:
        StorageError: the storage failed.
    """
    with storage_guard(saver, thread_id):
        return audit_trail(saver, thread_id)


_TRAIL_THREADS_SQL = (
    f"SELECT DISTINCT thread_id FROM checkpoints WHERE checkpoint_ns = '{AUDIT_NS}' "
    "ORDER BY thread_id"
)


def trail_threads(target: Target) -> list[str]:
    """The threads of ``target`` (a checkpointer or a store) that have an audit trail; a
    SQLite or PostgreSQL saver's are read from its table."""
    found = _sql_thread_ids(target, _TRAIL_THREADS_SQL)
    return found if found is not None else trail_thread_ids(target)


def verify_trails(target: Target, thread_id: str | None = None) -> TrailReport:
    """Verify the hash chain of ``thread_id``'s audit trail in ``target`` (a checkpointer or
    a store), or of every trail there (``audit verify``); reads only.

    Raises:
        StorageError: the storage failed.
    """

    def run() -> TrailReport:
        ids = [thread_id] if thread_id is not None else trail_threads(target)
        checked = [check_thread(target, t) for t in ids]
        kept = [
            c for c in checked if thread_id is not None or c.chained or c.unchained or c.problems
        ]
        return TrailReport(tuple(kept))

    if isinstance(target, BaseCheckpointSaver):
        with storage_guard(target, thread_id):
            return run()
    return run()


def notify_pending(
    saver: Saver,
    notify: Notifier,
    thread_id: str | None = None,
    *,
    backoff: float = SWEEPER_BACKOFF,
    force: bool = False,
) -> dict[str, tuple[int, int]]:
    """Send the undelivered, due notifications of ``thread_id`` (or of every thread) from
    the outbox (``inbox notify``, the sweeper); ``{thread_id: (delivered, failed)}`` for the
    threads that had something to send. A failing receiver is a failed try (recorded,
    retried after ``backoff`` seconds, doubled each time), never an error here.

    Raises:
        StorageError: the storage failed.
    """
    done: dict[str, tuple[int, int]] = {}
    with storage_guard(saver, thread_id):
        for tid in [thread_id] if thread_id is not None else thread_ids(saver):
            counts = deliver(saver, tid, notify, backoff=backoff, force=force)
            if counts != (0, 0):
                done[tid] = counts
    return done


def recording_on(graph: Graph, saver: Saver, thread_id: str) -> Graph:
    """``graph`` recording the command line's decisions when the thread keeps an audit trail
    (an agent with ``audit=True`` or ``notify=`` paused it), else ``graph`` unchanged."""
    if not audit_trail(saver, thread_id):
        return graph
    return with_audit(graph, audit=True, notify=None, surface="cli")  # type: ignore[no-any-return]


@dataclass(frozen=True)
class Expired:
    """One expired approval the sweeper settled (or could not: ``error``)."""

    thread_id: str
    node_id: str
    interrupt_id: str
    expires_at: str
    error: str | None = None

    def as_dict(self) -> JSONObject:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def expire_pending(app: Graph, saver: Saver, now: datetime | None = None) -> list[Expired]:
    """Settle every expired approval of ``saver`` (``dynavec-langgraph inbox expire``):
    each thread with a pending pause whose ``expires_at`` has passed is resumed, through the
    guarded resume, with :func:`~dynavec_langgraph._pauses.policy.answers.expiry_answer`; the paused
    tool settles it (the call never runs; the tool's answer says it expired). A thread another
    caller holds is left for the next sweep (its ``error`` says so); others go on."""
    done: list[Expired] = []
    with storage_guard(saver, None):
        tids = thread_ids(saver)
    for tid in tids:
        try:
            snapshot = read_thread(app, tid)
        except StorageError as error:
            done.append(Expired(tid, "", "", "", str(error)))
            continue
        for item in expired_pauses(snapshot.interrupts, now):
            value = item.value
            row = Expired(tid, str(value.get("node_id")), item.id, str(value.get("expires_at")))
            answer = Answer(decisions={item.id: expiry_answer()})
            graph = recording_on(app, saver, tid)  # an audited thread records the expiry
            try:
                resume = GuardedResume(
                    graph, saver, tid, answer, thread_config(tid), crashed="refuse"
                )
                with resuming(resume) as plan:
                    graph.invoke(plan.graph_input, plan.config, durability=durability("inbox"))
                    plan.settle(graph.get_state(plan.config).interrupts)
            except DynavecError as error:
                row = Expired(
                    row.thread_id, row.node_id, row.interrupt_id, row.expires_at, str(error)
                )
            done.append(row)
    return done
