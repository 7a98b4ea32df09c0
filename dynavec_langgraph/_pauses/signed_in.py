"""Who gave an answer on a LangGraph API server with custom auth: the user the server signed in
for the run that gave it, bound to the answer for good.

On such a server the run's config carries the signed-in user (``langgraph_auth_user``, read by
:class:`~dynavec_langgraph._graph.run_data.SignedIn`). But a paused tool reads every answer it was
given, in order, each time it runs again, under the config of the *latest* run: the user
signed in now is not the one who gave the earlier answers (alice's run replays mallory's
refused answer). So the first time the tool reads an answer, in the run that gave it, that
run's user (and the run's ``config["configurable"]["approver"]``, the name it claimed) is
written to the graph's store, and every later read of the same answer reads it back
(:func:`answered_by`).

A user LangSmith signed in (its own auth, or Studio on a deployment with a handler: a
``StudioUser`` that is authenticated) is not one of the deployment's users: such an answer
names its approver, as without auth, and is bound as such, so a later run's user never takes
it over (:attr:`~dynavec_langgraph._graph.run_data.SignedIn.proves_approver`).

The entry is keyed by the thread, the checkpoint the task runs from, the task's namespace and
the answer's index, and holds a digest of the answer: an answer read again is the same answer
(the same digest), a different one at that place (a resume that replaced an answer never read)
is bound afresh. Entries live in the store under :data:`ANSWERED_BY_NS`; a LangGraph API server
always gives its graphs a store. Without one, or when the store cannot be read where the pause
runs, the answer is refused (the pause stays, nothing runs) with the reason.

The store is read synchronously, which a LangGraph API server's store refuses on its event
loop: ``require_approval``'s async path runs its pause in a worker thread on such runs
(:func:`needs_worker_thread`).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
from dataclasses import dataclass
from typing import Final

from dynavec_langgraph._errors import InvalidDecisionError
from dynavec_langgraph._graph.run_data import SignedIn, current_run
from dynavec_langgraph._names import ANSWERED_BY_NS, LINK_KEYS_ENV
from dynavec_langgraph._types import JSONMapping, JSONObject, UserPayload

__all__ = ["Answerer", "answered_by", "needs_worker_thread"]


@dataclass(frozen=True)
class Answerer:
    """The signed-in user who gave one answer, and the approver that run's config named."""

    user: SignedIn
    configured: UserPayload = None
    """``config["configurable"]["approver"]`` of the run that gave the answer (a claim)."""

    def approver(self) -> JSONObject:
        """The approver a rule sees: ``{"name", "roles", "permissions", "authenticated_by"}``."""
        return {
            "name": self.user.name,
            "roles": list(self.user.roles),
            "permissions": list(self.user.permissions),
            "authenticated_by": "server",
        }


def needs_worker_thread() -> bool:
    """Whether the running graph run's pauses read the store: the run has a signed-in user,
    or the deployment holds approval-link keys (``DYNAVEC_LINK_KEYS``: a link answer binds its
    single use there, ``dynavec_langgraph._approvals.links``)."""
    run = current_run()
    if run is None:
        return False
    return run.signed_in is not None or bool(os.environ.get(LINK_KEYS_ENV, "").strip())


def _digest(raw: UserPayload) -> str:
    text = json.dumps(raw, sort_keys=True, default=repr, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _entry(user: SignedIn | None, configured: UserPayload, digest: str) -> JSONObject:
    """The store entry of an answer given by ``user`` (``None``: one that names its approver,
    given by a user LangSmith signed in)."""
    if user is None:
        return {"explicit": True, "answer": digest}
    return {
        "name": user.name,
        "roles": list(user.roles),
        "permissions": list(user.permissions),
        "authenticated": user.authenticated,
        "configured": configured,
        "answer": digest,
    }


def _read(entry: JSONMapping) -> Answerer | None:
    if entry.get("explicit"):
        return None
    user = SignedIn(
        name=str(entry["name"]),
        roles=tuple(str(r) for r in entry.get("roles") or ()),
        permissions=tuple(str(p) for p in entry.get("permissions") or ()),
        authenticated=bool(entry.get("authenticated", True)),
    )
    return Answerer(user, entry.get("configured"))


_NO_STORE: Final = (
    "the signed-in approver cannot be bound to this answer: the graph has no store (a "
    "LangGraph API server gives its graphs one; compile an in-process graph with store=...). "
    "The answer was refused and nothing ran"
)
_ON_THE_LOOP: Final = (
    "the signed-in approver cannot be bound to this answer: the pause runs on the server's "
    "event loop (an async tool), where its store cannot be read synchronously. Ask for "
    "approvers with require_approval, or from a sync tool. The answer was refused and "
    "nothing ran"
)


def answered_by(index: int, raw: UserPayload) -> Answerer | None:
    """Who gave ``raw``, the ``index``-th answer the running pause read (1 for the first):
    the user bound to it, or, read for the first time, the running run's signed-in user
    (then bound to it). ``None`` when the answer names its approver, as without auth: the run
    has no signed-in user (no server, or a server without auth), or the answer was given by
    a user LangSmith signed in (:attr:`SignedIn.proves_approver`; bound as such, so a later
    run's user never takes it over).

    Raises:
        InvalidDecisionError: the signed-in user cannot be bound (no store, or a store that
            cannot be read here); the caller refuses the answer with this reason.
    """
    run = current_run()
    if run is None or run.signed_in is None:
        return None
    user = run.signed_in
    now = Answerer(user, run.approver) if user.proves_approver else None
    if run.thread_id is None:  # no checkpointer: no later run replays this answer
        return now
    from langgraph.config import get_store

    try:
        store = get_store()
    except RuntimeError:  # not inside a run
        store = None
    if store is None:
        if now is None:  # nothing was bound where nothing can be: as without auth
            return None
        raise InvalidDecisionError(_NO_STORE)
    key = f"{run.thread_id}|{run.parent_checkpoint_id or ''}|{run.checkpoint_ns}|{index}"
    digest = _digest(raw)
    try:
        found = store.get((ANSWERED_BY_NS,), key)
        if found is not None and found.value.get("answer") == digest:
            return _read(found.value)
        entry = _entry(now.user if now else None, run.approver, digest)
        store.put((ANSWERED_BY_NS,), key, entry, index=False)
    except asyncio.InvalidStateError:  # a server's store, called on its own event loop
        if now is None:  # such a pause binds no answer of anyone: as without auth
            return None
        raise InvalidDecisionError(_ON_THE_LOOP) from None
    return now
