"""Per-run data in one place: what one run of the graph carries besides its state, read from
the run's config once (:class:`RunData`), the config the package's runs are started with
(:func:`run_config`), and the durability every entry point runs with (:func:`durability`).

LangGraph hands a node its run's data in ``config["configurable"]``: the thread, the
namespace, the checkpointer, the checkpoint each namespace runs from, the run's durability,
and what this package's entry points put there (the model's keyword arguments, the caller's
record of finished calls, the settling of in-doubt calls). The nodes and the tool-call code
read it through :class:`RunData`, built once per node run and passed on explicitly; nothing
else reads those keys. (What a tool reads while it runs, the call it is in, its key, the
shared state, is set around the call by ``_tool_call.ToolCallRun.running``: the tool is the
user's code, so it cannot be passed to it.)
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final, Literal

from langgraph.constants import CONFIG_KEY_CHECKPOINTER

from dynavec_langgraph._errors import InvalidOptionError, option_text
from dynavec_langgraph._lg_names import (
    CHECKPOINT_MAP,
    DURABILITY,
    NS_SEP,
    RESUME_MAP,
    RESUMING,
    SCRATCHPAD,
    SENT_AT,
)
from dynavec_langgraph._names import (
    COMPLETED_CALLS_KEY,
    IN_DOUBT_KEY,
    MODEL_KWARGS_KEY,
    PLAIN_APPROVER_KEY,
)
from dynavec_langgraph._storable import check_id

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig
    from langgraph.types import Durability

    from dynavec_langgraph._graph.call_ids import ToolCallRef
    from dynavec_langgraph._types import CheckpointSaver, NodeUpdate, UserPayload

__all__ = [
    "AUTH_PERMISSIONS_KEY",
    "AUTH_USER_KEY",
    "CompletedCall",
    "EntryPoint",
    "RunData",
    "SignedIn",
    "current_run",
    "drop_left_over_answer",
    "durability",
    "run_config",
]

AUTH_USER_KEY: Final = "langgraph_auth_user"
"""``config["configurable"]["langgraph_auth_user"]``: the user a LangGraph API server with custom
auth (``langgraph.json`` ``"auth"``, a ``langgraph_sdk.Auth`` handler) signed in for the run,
as its handler returned it (``identity``, ``is_authenticated``, ``permissions``, any other
field). ``langgraph-api`` sets it on every run and strips it from what a client sends; a server
without auth sets ``None``. Aegra 0.6.0 keeps one a client sent (docs/scale-out.md)."""
AUTH_PERMISSIONS_KEY: Final = "langgraph_auth_permissions"
"""``config["configurable"]["langgraph_auth_permissions"]``: that user's permissions."""


@dataclass(frozen=True)
class CompletedCall:
    """A tool call that ran: what ran, and the state update the tool node returned."""

    call: ToolCallRef
    update: NodeUpdate
    """What the tool node returned: an update, or the tool's ``Command``s."""

    def describe(self) -> str:
        """``"transfer_funds({'amount': 120}) (call call_1)"``, for error messages."""
        return f"{self.call['name']}({self.call['args']!r}) (call {self.call['id']})"


ANONYMOUS: Final = "anonymous"
"""The user a server without auth signs in: Aegra (0.6.0, ``aegra_api.core.auth_middleware``)
puts ``{"identity": "anonymous", "is_authenticated": True}`` in every run's config when no
auth handler is configured. It proves nobody: such a run has no signed-in user."""


@dataclass(frozen=True)
class SignedIn:
    """The user the LangGraph API server signed in for this run (:data:`AUTH_USER_KEY`)."""

    name: str
    """The user's ``identity``."""
    roles: tuple[str, ...] = ()
    """The ``roles`` the auth handler returned with the user (a list of strings), if any."""
    permissions: tuple[str, ...] = ()
    """The user's permissions (:data:`AUTH_PERMISSIONS_KEY`)."""
    authenticated: bool = True
    """The user's ``is_authenticated``: False for Studio's local user on ``langgraph dev``
    (``langgraph-studio-user``), whom the server lets in without the auth handler."""
    studio: bool = False
    """A Studio user (``langgraph_sdk.Auth.types.StudioUser``), signed in by LangSmith (its API
    keys or login; authenticated) or ``langgraph dev``'s local Studio user (not
    authenticated), not by the deployment's own auth handler."""

    @property
    def proves_approver(self) -> bool:
        """Whether this user is the approver of the run's answers: any user of the
        deployment's own auth handler, and Studio's unauthenticated local user (who then
        approves nothing that names approvers). A user LangSmith signed in (its auth without
        a handler of the deployment's, or Studio on one) is not: the answer names its approver,
        as without auth."""
        return not (self.studio and self.authenticated)

    @classmethod
    def of(cls, conf: Mapping[str, object]) -> SignedIn | None:
        """The signed-in user of a run's ``configurable``; ``None`` when there is none (no
        server, or a server without auth) or it has no ``identity``."""
        user = conf.get(AUTH_USER_KEY)
        if user is None:
            return None
        name = _field(user, "identity")
        if not isinstance(name, str) or not name or name == ANONYMOUS:
            return None
        authenticated = _field(user, "is_authenticated")
        permissions = conf.get(AUTH_PERMISSIONS_KEY)
        if permissions is None:
            permissions = _field(user, "permissions")
        return cls(
            name=name,
            roles=_strings(_field(user, "roles")),
            permissions=_strings(permissions),
            authenticated=authenticated is not False,
            studio=_is_studio(user),
        )


def _is_studio(user: object) -> bool:
    """Whether ``user`` is LangGraph's Studio user: an instance of ``langgraph_sdk``'s
    ``StudioUser`` (loaded whenever a server made one), or its dict (``kind``)."""
    if isinstance(user, Mapping):
        return user.get("kind") == "StudioUser"
    types = sys.modules.get("langgraph_sdk.auth.types")
    studio = getattr(types, "StudioUser", None)
    return isinstance(studio, type) and isinstance(user, studio)


def _field(user: object, name: str) -> object:
    """``user.name`` or ``user[name]`` (the server's user objects offer both; a dict the
    second), else ``None``."""
    if isinstance(user, Mapping):
        return user.get(name)
    try:
        return getattr(user, name, None)
    except NotImplementedError:  # starlette's BaseUser leaves some properties to subclasses
        return None


def _strings(value: object) -> tuple[str, ...]:
    if isinstance(value, list | tuple | set | frozenset):
        return tuple(str(v) for v in value if isinstance(v, str))
    return ()


@dataclass(frozen=True)
class RunData:
    """One node run's per-run data, read from its config by :meth:`of`."""

    thread_id: str | None = None
    """The thread (``None``: a run without a checkpointer's thread)."""
    checkpoint_ns: str = ""
    """The namespace of the running task (``parent|child:task``)."""
    saver: CheckpointSaver | None = None
    """The run's checkpointer (LangGraph's ``BaseCheckpointSaver``), ``None`` without one."""
    checkpoint_map: Mapping[str, str] = field(default_factory=dict)
    """``{namespace: checkpoint id}``: the checkpoint each namespace of the task runs from."""
    resuming: bool = False
    """Whether the run resumes a paused one (LangGraph's task config says so)."""
    durability: Durability = "async"
    """The run's ``durability`` (LangGraph's default, ``"async"``, when the run names none)."""
    model_kwargs: Mapping[str, UserPayload] = field(default_factory=dict)
    """Extra keyword arguments for the model call (:data:`MODEL_KWARGS_KEY`)."""
    completed: dict[str, CompletedCall] = field(default_factory=dict)
    """The caller's record of finished calls (:data:`COMPLETED_CALLS_KEY`): the tool node
    writes each call that ran into it. A throwaway dict when the caller passed none."""
    in_doubt: Mapping[str, str] = field(default_factory=dict)
    """``{call id: "retry" | "skip"}`` (:data:`IN_DOUBT_KEY`)."""
    approver: object = None
    """Who answers a plain decision of this run (:data:`PLAIN_APPROVER_KEY`), ``None`` if unsaid."""
    signed_in: SignedIn | None = None
    """The user a LangGraph API server with auth signed in for this run, ``None`` without one
    (in-process runs, a server without auth)."""
    answers: tuple[UserPayload, ...] | None = None
    """The answers the running task has for its pauses in this run, as LangGraph gave them to
    it when the node started: those recorded on the checkpoint when the run loaded it, then
    this run's own decision if it answers the task (``None``: LangGraph does not say)."""
    null_answer: bool = False
    """Whether the run carries a decision given without an interrupt id
    (``Command(resume=value)``) that no pause has taken yet when the node starts. A run given
    its decisions by interrupt id carries none: one its checkpoint still holds is left over
    (:func:`drop_left_over_answer`)."""
    sent_at: float | None = None
    """When the request that created this run reached a LangGraph API server (seconds, the
    server's clock; :data:`~dynavec_langgraph._lg_names.SENT_AT`), ``None`` when unsaid (in
    process, Aegra)."""

    @classmethod
    def of(cls, config: RunnableConfig) -> RunData:
        """The per-run data of ``config`` (a node's config, or any ``RunnableConfig``)."""
        conf = config.get("configurable") or {}
        thread = conf.get("thread_id")
        completed = conf.get(COMPLETED_CALLS_KEY)
        return cls(
            thread_id=None if thread is None else str(thread),
            checkpoint_ns=str(conf.get("checkpoint_ns") or ""),
            saver=conf.get(CONFIG_KEY_CHECKPOINTER),
            checkpoint_map=conf.get(CHECKPOINT_MAP) or {},
            resuming=bool(conf.get(RESUMING)),
            durability=conf.get(DURABILITY) or "async",
            model_kwargs=conf.get(MODEL_KWARGS_KEY) or {},
            completed=completed if isinstance(completed, dict) else {},
            in_doubt=_in_doubt(conf.get(IN_DOUBT_KEY)),
            approver=conf.get(PLAIN_APPROVER_KEY),
            signed_in=SignedIn.of(conf),
            answers=_answers(conf.get(SCRATCHPAD)),
            null_answer=not conf.get(RESUME_MAP) and _null_answer(conf.get(SCRATCHPAD)),
            sent_at=_sent_at(conf.get(SENT_AT)),
        )

    @property
    def parent_ns(self) -> str:
        """The namespace of the graph the running task belongs to (``""`` at the top)."""
        ns = self.checkpoint_ns
        return ns.rsplit(NS_SEP, 1)[0] if NS_SEP in ns else ""

    @property
    def parent_checkpoint_id(self) -> str | None:
        """The checkpoint the running task's graph runs from (``None`` without one)."""
        return self.checkpoint_map.get(self.parent_ns) or None


def _in_doubt(value: object) -> Mapping[str, str]:
    """``config["configurable"][IN_DOUBT_KEY]``, checked at the first node of the run.

    Raises:
        InvalidOptionError: not ``{call_id: "retry" | "skip"}``.
    """
    if value is None:
        return {}
    if isinstance(value, Mapping) and all(
        isinstance(k, str) and v in ("retry", "skip") for k, v in value.items()
    ):
        return value
    option = f"configurable[{IN_DOUBT_KEY!r}]"
    raise InvalidOptionError(
        option_text(
            option,
            value,
            "pass a dict {call_id: 'retry' | 'skip'} naming the in-doubt calls (the "
            "InDoubtCallError gives the call id). The run stopped before the model or any tool "
            "was called: correct it and continue the thread (graph.invoke(None, config))",
        ),
        option,
    )


def _answers(scratchpad: object) -> tuple[UserPayload, ...] | None:
    resume = getattr(scratchpad, "resume", None)
    return tuple(resume) if isinstance(resume, list) else None


def _null_resume(scratchpad: object) -> Callable[[bool], object] | None:
    """The scratchpad's ``get_null_resume(consume)``: the decision given without an interrupt
    id that no pause has taken yet (``consume``: take it), ``None`` if it has none."""
    get = getattr(scratchpad, "get_null_resume", None)
    return get if callable(get) else None


def _null_answer(scratchpad: object) -> bool:
    peek = _null_resume(scratchpad)
    return peek is not None and peek(False) is not None  # False: look, do not take it


def drop_left_over_answer() -> None:
    """Keep a decision an earlier run gave without an interrupt id from answering a pause of
    this run, when this run was given its decisions by interrupt id.

    LangGraph keeps a ``Command(resume=value)`` on the checkpoint it resumed until that
    graph's step ends, and hands it to the next pause no answer addresses, in whichever later
    run asks it: a parent graph whose subgraph pauses again, or a run that died after the
    pause it answered (langgraph 1.2.24, ``interrupt`` in ``langgraph/types.py`` reading the
    scratchpad's ``get_null_resume``). A person who answers by interrupt id (every door of the
    package does) answers one pause; the kept value, given for a pause that is gone, must not
    answer the next one. A run resumed by id carries no value without one
    (:data:`~dynavec_langgraph._lg_names.RESUME_MAP`), so the one kept is taken out of this
    run, unused, before the package's pause asks: LangGraph's own taking of it, in memory only,
    as ``interrupt`` does. Pinned by ``tests/test_stale_plain_answer.py``."""
    from langgraph.config import get_config  # at first use: not at the package's import

    try:
        conf = get_config().get("configurable") or {}
    except RuntimeError:  # called directly, outside a graph run
        return
    if not conf.get(RESUME_MAP):
        return
    take = _null_resume(conf.get(SCRATCHPAD))
    if take is not None:
        take(True)  # True: take it (LangGraph keeps it nowhere else in this run)


def _sent_at(value: object) -> float | None:
    """``configurable[SENT_AT]`` (milliseconds) in seconds; ``None`` if it is not a number."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) / 1000


def current_run() -> RunData | None:
    """The per-run data of the graph run this code runs in (LangGraph's ``get_config``),
    ``None`` outside a run."""
    from langgraph.config import get_config  # at first use: not at the package's import

    try:
        return RunData.of(get_config())
    except RuntimeError:  # called directly, outside a graph run
        return None


def run_config(
    thread_id: str,
    model_kwargs: Mapping[str, UserPayload],
    *,
    checkpoint_id: str | None = None,
    completed: dict[str, CompletedCall] | None = None,
) -> RunnableConfig:
    """The config the package's entry points start a run with: the thread (and checkpoint),
    the model's keyword arguments and the caller's record of finished calls.

    Raises:
        InvalidInputError: an id no saver can store as it is (:func:`check_id`).
    """
    check_id(thread_id, "thread_id")  # also for the reads (get_checkpoint, ...)
    if checkpoint_id:
        check_id(checkpoint_id, "checkpoint_id")
    configurable: dict[str, object] = {"thread_id": thread_id, MODEL_KWARGS_KEY: model_kwargs}
    if checkpoint_id:
        configurable["checkpoint_id"] = checkpoint_id
    if completed is not None:
        configurable[COMPLETED_CALLS_KEY] = completed
    return {"configurable": configurable}


EntryPoint = Literal["agent", "inbox", "remote"]
"""The package's entry points that run a graph: ``ReActAgent`` (and the ``dynavec.agents``
shim on it), the approvals inbox, ``RemoteReActAgent``'s runs on a server."""


def durability(entry: EntryPoint) -> Durability:
    """The ``durability`` the entry point ``entry`` runs the graph with: ``"sync"`` for each.

    Each step's checkpoint is written before the next step starts: a process killed right
    after a tool call finished does not run that call again when the thread is resumed (with
    LangGraph's default, ``"async"``, the last finished call is lost about half the time). A
    compiled graph invoked directly keeps LangGraph's default (the caller chooses).
    """
    return _DURABILITY[entry]


_DURABILITY: Final[Mapping[EntryPoint, Durability]] = {
    "agent": "sync",
    "inbox": "sync",
    "remote": "sync",
}
