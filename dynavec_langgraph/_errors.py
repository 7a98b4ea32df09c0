"""Errors raised by dynavec_langgraph.

Every error is a :class:`DynavecError`; each also subclasses the builtin a caller of
``dynavec.agents`` would already catch, so existing ``except`` clauses keep working::

    DynavecError
    ├── ThreadPausedError(RuntimeError)      run() on a thread waiting for a decision
    ├── ConcurrentResumeError(RuntimeError)  another caller answered the same pause first
    ├── NothingToResumeError(ValueError)     resume() with no paused call to answer
    ├── InvalidDecisionError(ValueError)     a decision that does not fit what is pending
    │   ├── ApproverRefusedError(ValueError)  an approver the pause's policy does not allow
    │   │   │                                (nothing ran, the pause stays)
    │   │   └── ApproverMismatchError(ValueError)  an answer naming another approver than
    │   │                                    the user the server signed in
    │   ├── ApproverRequiredError(ValueError)  a pause whose policy needs a named approver,
    │   │                                    answered without one (nothing ran, it stays)
    │   ├── IncompatibleThreadError(ValueError)  a thread another graph wrote, that
    │   │                                    this graph cannot continue (names what differs)
    │   ├── StaleDecisionError(ValueError)   a decision bound to another pause (its review
    │   │                                    digest is not the pending pause's)
    │   ├── InvalidLinkError(ValueError)     a signed approval link that is forged, expired,
    │   │                                    used, or for another pause (nothing ran)
    │   └── UnkeyedResumeError(ValueError)   a resume with no interrupt id (what the Agent
    │                                        Chat UI and Agent Inbox send) while several
    │                                        pauses are pending; also a RuntimeError
    ├── InvalidInputError(ValueError)        text or data that cannot be stored as given
    │   │                                    (names the field and the position)
    │   └── InterruptCallError(TypeError)    interrupt() with a node id or payload that
    │                                        cannot be stored: raised to the developer
    ├── InvalidOptionError(ValueError)       an option that cannot be used (its type, its
    │                                        value, a policy no answer can satisfy), refused
    │                                        when given; also a TypeError (names the option)
    ├── CheckpointNotFoundError(ValueError)  resume_from= / checkpoint_id= unknown
    ├── CheckpointerConfigError(ValueError)  a checkpointer argument that cannot be used
    ├── StorageError(RuntimeError)           the checkpointer failed to read or write
    │   └── DamagedThreadError(RuntimeError)  a thread whose records contradict each other
    ├── ServerUnavailableError(ConnectionError)  RemoteReActAgent: no answer from the server
    ├── RemoteRunError(RuntimeError)         RemoteReActAgent: the run failed on the server
    ├── ThreadAccessError(PermissionError)   RemoteReActAgent: a thread the server's auth
    │                                        does not let the signed-in user use
    ├── InboxError(ValueError)               an inbox request that cannot be served (a
    │                                        --graph that does not load, a server that
    │                                        cannot be reached)
    ├── InDoubtCallError(RuntimeError)       a tool call with on_crash="fail" was running when
    │                                        its process died: it may or may not have run
    ├── ApprovalPolicyError(RuntimeError)    an approval policy's own callable (its clock, an
    │                                        approver rule) raised: the answer was not
    │                                        applied, nothing ran, the pause stays
    └── ToolContextError(RuntimeError)       idempotency_key() asked outside a tool call

The texts of the errors live here, as the classes' constructors or as the functions below
them; the modules that raise them pass the facts.

Every caller gets the same error for the same case: ``ReActAgent``, the inbox and the
command line all answer a pause through :mod:`dynavec_langgraph._resuming`, and the command
line prints the error it gets (exit code 2) without re-wrapping it.

LangGraph's own interrupt exceptions (``GraphInterrupt`` and the rest of ``GraphBubbleUp``)
are never caught or wrapped by this package.
"""

from __future__ import annotations

from typing import Any, Final

__all__ = [
    "ApprovalPolicyError",
    "ApproverMismatchError",
    "ApproverRefusedError",
    "ApproverRequiredError",
    "CheckpointNotFoundError",
    "CheckpointerConfigError",
    "ConcurrentResumeError",
    "DamagedThreadError",
    "DynavecError",
    "InDoubtCallError",
    "InboxError",
    "IncompatibleThreadError",
    "InterruptCallError",
    "InvalidDecisionError",
    "InvalidInputError",
    "InvalidLinkError",
    "InvalidOptionError",
    "NothingToResumeError",
    "RemoteRunError",
    "ServerUnavailableError",
    "StaleDecisionError",
    "StorageError",
    "ThreadAccessError",
    "ThreadPausedError",
    "ToolContextError",
    "UnkeyedResumeError",
]


class DynavecError(Exception):
    """Base class of every error this package raises."""


class ThreadPausedError(DynavecError, RuntimeError):
    """``run()`` was called on a thread that is paused at an interrupt.

    Nothing was written: answer the pause with ``resume()`` (or ``Command(resume=...)``).
    """

    def __init__(self, thread_id: str, node_ids: list[str]) -> None:
        self.thread_id = thread_id
        self.node_ids = node_ids
        pending = ", ".join(repr(n) for n in node_ids)
        super().__init__(
            f"Thread {thread_id!r} is paused at {pending} and waits for a human decision. "
            f"Call resume(thread_id={thread_id!r}, human_decision=...) to answer it; "
            "run() changed nothing."
        )


class ConcurrentResumeError(DynavecError, RuntimeError):
    """Another caller resumed the same paused thread first; this decision was not applied."""


class NothingToResumeError(DynavecError, ValueError):
    """``resume()`` found no paused tool call to answer."""


class InvalidDecisionError(DynavecError, ValueError):
    """A decision that does not match what is pending (several pauses, unknown node id...)."""


class ApproverRefusedError(InvalidDecisionError):
    """An approver the pause's approval policy does not allow (not among its approvers, or
    one who already approved a pause needing several): nothing ran, the thread is still
    paused at the same approval; another approver answers it.

    Attributes:
        node_id: the pause's node id.
        approver: the refused approver's name.
    """

    recorded: bool = False
    """Whether the paused tool refused it (and so recorded it in an audited thread's trail);
    False when a door refused it before sending anything."""

    def __init__(self, node_id: Any, approver: str, why: str) -> None:
        self.node_id = node_id
        self.approver = approver
        super().__init__(
            f"approver {approver!r} may not answer {node_id!r}: {why}. Nothing ran and the "
            "thread is still paused at the same approval: let an allowed approver answer it "
            "(resume(..., approver=NAME), inbox answer --as NAME)"
        )


class ApproverRequiredError(InvalidDecisionError):
    """A pause whose approval policy needs a named approver (``approvers=``, or
    ``approvals_required`` > 1) answered without one: nothing ran and the thread is still
    paused at the same approval; answer it again naming the approver (``resume(...,
    approver=NAME)``, ``inbox answer --as NAME``). The message is the one the paused tool
    wrote in the pause's ``error``.

    Attributes:
        node_id: the pause's node id.
    """

    def __init__(self, node_id: Any, message: str) -> None:
        self.node_id = node_id
        super().__init__(message)


class ApproverMismatchError(ApproverRefusedError):
    """On a LangGraph API server with custom auth the signed-in user is the approver: an answer
    that names another one (``approver_decision(d, NAME)``, ``resume(..., approver=NAME)``,
    ``inbox answer --as NAME``, ``config["configurable"]["approver"]``) is refused. Nothing ran,
    the thread is still paused at the same approval (docs/approvals-in-production.md).

    Attributes:
        node_id: the pause's node id.
        approver: the user the server signed in (who answered).
        claimed: the approver the answer named.
    """

    recorded = True  # only the paused tool knows who is signed in: its trail has it

    def __init__(self, node_id: Any, approver: str, claimed: str) -> None:
        self.node_id = node_id
        self.approver = approver
        self.claimed = claimed
        InvalidDecisionError.__init__(
            self,
            f"{node_id!r}: {mismatch_text(approver, claimed)}. Nothing ran and the thread is "
            "still paused at the same approval",
        )


def mismatch_text(approver: str, claimed: str) -> str:
    """Why an answer naming ``claimed`` given by the signed-in ``approver`` is refused."""
    return (
        f"the answer names approver {claimed!r}, but the server signed in {approver!r}, who is "
        "the approver of an answer there: answer without naming an approver, or sign in as "
        f"{claimed!r}"
    )


class StaleDecisionError(InvalidDecisionError):
    """A decision carrying the review digest of another pause than the pending one (the
    approval was asked again since, or it is another call): refused, nothing ran, the pause
    stays. Read the pause again and decide on what it shows (docs/approval-uis.md)."""


def stale_text(thread_id: str | None, call: str, given: str, pending: str | None) -> str:
    """The text of a :class:`StaleDecisionError`."""
    thread = f"thread {thread_id!r}" if thread_id else "the thread"
    now = f"the pending pause's digest is {pending}" if pending else "no pause is pending there"
    return (
        f"stale decision for {thread}, {call}: it was given for review digest {given} but "
        f"{now} (the approval was asked again since, or it is another call). It was refused: "
        "nothing ran and the pause stays. Read the pause again (inbox list, result(thread_id), "
        "get_state) and decide on what it shows now"
    )


class InvalidLinkError(InvalidDecisionError):
    """A signed approval link (``dynavec_langgraph.links``) that cannot answer the pause: a bad
    signature, an unknown key id, expired, used already, for another thread or pause, or
    with a decision the link does not carry. Nothing ran and the pause stays; ask for a new
    link (docs/security.md)."""


class UnkeyedResumeError(InvalidDecisionError, RuntimeError):
    """A resume that names no interrupt id (``Command(resume=decision)``: what the Agent Chat
    UI and Agent Inbox send) while several pauses are pending, so it cannot say which one it
    answers: refused before anything runs, every pause stays. Also a ``RuntimeError``, the
    class LangGraph raises for it. Answer each pause by its interrupt id, or bind the
    decision to the pause it answers (docs/approval-uis.md)."""


def unkeyed_text(thread_id: str, pending: str, count: int) -> str:
    """The text of an :class:`UnkeyedResumeError`."""
    return (
        f"{count} pauses are pending on thread {thread_id!r} ({pending}): a resume without an "
        "interrupt id (what the Agent Chat UI and Agent Inbox send) cannot say which one it "
        "answers, so it was not applied: nothing ran and every pause stays. Answer each by its "
        "interrupt id (Command(resume={interrupt_id: decision}); resume_command builds it; "
        "ReActAgent.resume(decisions={interrupt_id: decision})), or bind the decision to the "
        "pause it answers (bind_decision(decision, pause))"
    )


class IncompatibleThreadError(InvalidDecisionError):
    """A thread written by another graph (LangGraph's prebuilt agent, LangChain's
    ``create_agent``, another application) that this graph cannot continue: it is paused in a
    node this graph does not have, or at a call of a tool it does not have. The message names
    what differs; nothing was changed. Resume it with the agent that paused it."""


class InvalidInputError(DynavecError, ValueError):
    """A value given to the agent that cannot be stored or read as it is: a string with a
    lone surrogate, ``AgentState`` data the checkpointer cannot store, a resume message that is
    no message. Refused before anything runs or is written.

    Attributes:
        field: what was given, with the place inside it (``"goal"``,
            ``"human_decision['note'][1]"``, ``"state.data['f']"``, ``"messages[0]"``).
    """

    def __init__(self, message: str, field: str) -> None:
        super().__init__(message)
        self.field = field


class InterruptCallError(InvalidInputError, TypeError):
    """``interrupt(node_id, payload)`` called with a node id or payload that cannot be stored.

    Raised to the developer, not turned into an error observation for the model: the run
    stops with this error, the steps before it stay saved and the tool call stays unanswered
    (fix the tool, then ``run()`` the thread again, which runs that call again).
    """


class InvalidOptionError(DynavecError, ValueError, TypeError):
    """An option that cannot be used: of the wrong type, out of range, or a combination no
    answer can ever satisfy (an ``ApprovalPolicy`` needing more approvers than it names).

    Refused where it is given, before anything runs or is written: building the policy, the
    tool (``require_approval``) or the agent; ``interrupt(...)`` when the tool calls it (raised
    to the developer, as :class:`InterruptCallError`, not shown to the model); a
    ``config["configurable"]`` key at the first node of the run that carries it. The message
    names the option and says what to pass. Both a ``ValueError`` and a ``TypeError``: the
    builtins these checks raised before, for a wrong value and a wrong type.

    Attributes:
        option: the option as the caller wrote it (``"expires_in"``, ``"approval_policy"``,
            ``"configurable['dynavec_in_doubt']"``, ``"--server"``).
    """

    def __init__(self, message: str, option: str) -> None:
        super().__init__(message)
        self.option = option


def option_text(option: str, value: Any, what: str) -> str:
    """The text of an :class:`InvalidOptionError`: ``option=<value>: what`` (``what`` says
    what to pass instead)."""
    try:
        shown = repr(value)
    except RecursionError:
        shown = "<a value nested too deeply to show>"
    if len(shown) > 80:
        shown = shown[:77] + "..."
    return f"{option}={shown}: {what}"


class CheckpointNotFoundError(DynavecError, ValueError):
    """A checkpoint id that the thread does not have."""


class CheckpointerConfigError(DynavecError, ValueError):
    """A ``checkpointer=`` argument that cannot be used."""


class StorageError(DynavecError, RuntimeError):
    """The checkpointer failed to read or write (database down, file or folder read-only).

    The message names the storage and says what happened to the thread: unchanged (nothing
    ran), or which tool calls ran before their results could be saved (``completed``). The
    ``ReActAgent`` that raised it remembers those results: resuming the thread with the same
    agent once the storage works again answers them from memory instead of running them again.

    Attributes:
        thread_id: the thread.
        completed: ``"tool(args) (call id)"`` for each call that ran but was not saved.
    """

    def __init__(self, message: str, thread_id: str | None, completed: list[str]) -> None:
        super().__init__(message)
        self.thread_id = thread_id
        self.completed = completed


class DamagedThreadError(StorageError):
    """A thread whose stored records contradict each other (a record deleted, garbled or
    pointing nowhere): it cannot be resumed safely. Nothing was changed and no decision was
    applied; ``inbox list`` shows the thread as damaged."""


class ServerUnavailableError(DynavecError, ConnectionError):
    """``RemoteReActAgent``: the server refused the connection or did not answer in time."""


class RemoteRunError(DynavecError, RuntimeError):
    """``RemoteReActAgent``: the run failed on the server (the message carries its error)."""


class ThreadAccessError(DynavecError, PermissionError):
    """``RemoteReActAgent``: the thread exists on the server, but its auth rules (the
    deployment's ``@auth.on.threads`` handler) do not let the signed-in user read or run it.
    Nothing was sent."""


class InboxError(DynavecError, ValueError):
    """An inbox request that cannot be served: a ``--graph`` that does not load, a server
    that cannot be reached or refused the request. Nothing was changed. (Refused decisions,
    unknown or unpaused threads and concurrent answers raise the errors above, as they do
    for ``ReActAgent``.)"""


# --- the texts of the errors raised by more than one module ----------------------------------


class InDoubtCallError(DynavecError, RuntimeError):
    """A tool declared with ``on_crash="fail"`` was running when its process died (its
    durable start mark has no end): it may or may not have done its work, so it is not run
    again. Nothing ran; the thread is unchanged. The message names the call, its idempotency
    key and the two ways to settle it (docs/exactly-once.md).

    Attributes:
        thread_id: the thread.
        call_id: the tool call's id.
        tool: the tool's name.
        key: the call's idempotency key (look the call up with it in the service it calls).
    """

    def __init__(self, thread_id: str, call_id: str, tool: str, key: str) -> None:
        self.thread_id, self.call_id, self.tool, self.key = thread_id, call_id, tool, key
        super().__init__(
            f"thread {thread_id!r}: call {call_id!r} of {tool!r} was running when its process "
            f"stopped and may or may not have run (idempotency key {key!r}); on_crash='fail' "
            "does not run it again, and nothing ran now. Look the key up in the service the "
            "tool calls, then settle the call: if it ran, answer it with graph.update_state("
            f"config, {{'messages': [ToolMessage(content=<its result>, tool_call_id={call_id!r})]}}"
            ", as_node='tools') and continue the thread; to run it again with the same key, "
            f"continue with config['configurable']['dynavec_in_doubt'] = {{{call_id!r}: 'retry'}}"
            f" (or 'skip' to answer it as not run again)"
        )


class ApprovalPolicyError(DynavecError, RuntimeError):
    """A callable of a pause's approval policy (its ``clock``, an ``approvers`` rule) raised
    while an answer was being checked. The answer was not applied: nothing ran, nothing was
    told to the model, and the thread is still paused at the same approval. Fix the policy,
    then answer again (the same answer works); raised before the approval was first asked,
    the tool call stays unanswered (run the thread again). The policy's exception is
    ``__cause__``.

    Attributes:
        node_id: the pause's node id (``None``: the agent's ``approval_policy=`` clock, read
            by ``ReActAgent``'s doors before they answer).
        part: which callable raised (``"clock"``, ``"approvers"``).
    """

    def __init__(self, node_id: Any, part: str, cause: BaseException) -> None:
        self.node_id = node_id
        self.part = part
        what = "approver rule" if part == "approvers" else part
        policy = (
            "the agent's approval policy"
            if node_id is None
            else f"the approval policy of {node_id!r}"
        )
        super().__init__(
            f"{policy} failed: its {what} raised "
            f"{type(cause).__name__}: {cause!s:.200}. The answer was not applied: nothing "
            "ran and the thread is as it was, still paused at the same approval (or, when "
            f"it raised before the approval was first asked, with the tool call unanswered). "
            f"Fix the policy's {what}, then answer again (or run the thread again)"
        )


class ToolContextError(DynavecError, RuntimeError):
    """``idempotency_key()`` was called outside a tool call run by this package's tool node
    (call it inside the tool, or pass the tool's ``ToolRuntime`` / ``RunnableConfig``)."""


NOTHING_TO_RESUME_TEXT: Final = (
    "nothing to resume: pass the paused messages or thread_id= of a paused thread"
)
"""A resume given neither the paused messages nor a thread."""


def no_decision_text(given: str = "None") -> str:
    """A decision that is ``None`` (``given``: how the caller wrote it)."""
    return f"{given} is no decision: answer with a value"


def not_paused_text(thread_id: str, what_to_do: str, *, graph: str | None = None) -> str:
    """A resume of a thread that is not paused; ``what_to_do`` follows (``"; call run() to
    continue it"``, ``" (run() starts a run)"``)."""
    where = f"thread {thread_id!r}" if graph is None else f"thread {thread_id!r} of graph {graph!r}"
    return f"{where} is not paused: nothing to resume{what_to_do}"


class UnappliedResumeWarning(UserWarning):
    """A ``Command(resume=...)`` sent to a thread of this package's graph that has no pause
    to answer and no step to continue: the answer was not applied (another caller's answer
    finished the thread first, or it was never paused). Not an error, as in LangGraph, whose
    graph returns the thread's state unchanged; under strict resume the graph raises
    LangGraph's ``UnknownInterruptError`` instead. ``thread_id`` names the thread."""

    def __init__(self, thread_id: str, given: str) -> None:
        super().__init__(unapplied_resume_text(thread_id, given))
        self.thread_id = thread_id


def unapplied_resume_text(thread_id: str, given: str) -> str:
    """A resume that answered nothing (``given``: the resume value, shortened)."""
    return not_paused_text(
        thread_id,
        f"; the resume {given} was not applied (another caller's answer finished the thread "
        "first, or it was never paused). Read the thread (graph.get_state(config)) before "
        "deciding again",
    )


def install_command(extra: str) -> str:
    """The command that installs ``extra``: what every missing-extra message ends with
    (``MissingDependencyError``'s, ``_extras.missing_extra``'s and the hints that name one).

    Example:
        >>> install_command("sqlite")
        "pip install 'dynavec-langgraph[sqlite]'"
    """
    return f"pip install 'dynavec-langgraph[{extra}]'"


def webhook_url_text(given: str) -> str:
    """A notification receiver that is no web URL (``given``: the option and its value)."""
    return f"{given}: a webhook URL starts with http:// or https://"


def lone_surrogate_text(field: str, index: int, char: str) -> str:
    """A string with half of a UTF-16 surrogate pair (``"pay \\ud83d rent"``)."""
    return (
        f"{field}: character {index} ({char!r}) is a lone surrogate, half of a UTF-16 pair "
        "whose other half is missing, which no checkpointer stores as it is (the SQLite, "
        "PostgreSQL and in-memory savers would store '?' in its place). Nothing ran and "
        "nothing was written: send valid Unicode text (a split emoji, text read with "
        "errors='surrogateescape' or JSON such as \"\\ud83d\" holds one)"
    )


def nul_text(field: str, index: int) -> str:
    """An id (a thread id, a checkpoint id) holding the NUL character."""
    return (
        f"{field}: character {index} is NUL ('\\x00'), which PostgreSQL cannot store in an id "
        "(and an id must move between savers). Nothing ran and nothing was written: use an id "
        "without control characters"
    )


def too_deep_text(field: str, limit: int) -> str:
    """A value nested deeper than the savers store."""
    return (
        f"{field} is nested more than {limit} levels deep, deeper than the checkpointers store "
        "(and the JSON decoder reads back). Nothing was written: send a flatter value"
    )


def not_storable_text(field: str, detail: str) -> str:
    """A value the checkpointer's serializer refuses (a function, an open file...)."""
    return (
        f"{field} cannot be stored by the checkpointer ({detail}); nothing ran and nothing "
        "was written: use JSON-like values (str, number, bool, list, dict) or pydantic models"
    )


def not_a_message_text(field: str, value: str, detail: str) -> str:
    """A resume message that is no message."""
    return (
        f"{field} = {value} is not a message ({detail}): pass "
        "paused.interrupt_payload['messages'] of a paused run (dynavec Messages, their dicts "
        "or LangChain messages); nothing ran"
    )


def interrupt_call_text(node_id: str, detail: str) -> str:
    """``interrupt()`` with a payload or node id that cannot be stored."""
    return (
        f"interrupt({node_id!r}): {detail}. This is an error in the tool, so it is raised "
        "instead of being shown to the model: the run stopped before the pause, the steps "
        "before it are saved and the tool call is unanswered; fix the tool and run the thread "
        "again"
    )


def damaged_text(thread_id: str, detail: str) -> str:
    """A thread whose records contradict each other."""
    return (
        f"thread {thread_id!r} cannot be read: it is damaged ({detail}). Nothing ran and no "
        "decision was applied: restore its records from a backup, or delete the thread "
        "(saver.delete_thread(thread_id)) and start it again"
    )


def foreign_node_text(thread_id: str, nodes: list[str], ours: list[str]) -> str:
    """A thread paused in a node this graph does not have."""
    return (
        f"thread {thread_id!r} is paused in {', '.join(repr(n) for n in nodes)}, a node this "
        f"graph does not have (its nodes: {', '.join(ours)}): another graph wrote it (e.g. "
        "LangChain's create_agent with HumanInTheLoopMiddleware). Resume it with the agent "
        "that paused it; nothing was changed"
    )


def foreign_tool_text(thread_id: str, name: str, pending: str, tools: list[str]) -> str:
    """A pause at a call of a tool this graph does not have."""
    return (
        f"thread {thread_id!r} waits for an approval of tool {name!r} ({pending}), which this "
        f"agent does not have (its tools: {', '.join(tools) or 'none'}). Resume it with the "
        "agent that paused it (`inbox answer --graph MODULE:ATTR`); nothing was changed"
    )


def foreign_table_text(where: str, table: str, columns: list[str], missing: list[str]) -> str:
    """Another application's table under the name LangGraph's saver uses."""
    return (
        f"{where} holds a table {table!r} that is not a LangGraph checkpoint table (its "
        f"columns: {', '.join(columns) or 'none'}; missing: {', '.join(missing)}): another "
        "application uses that name. Give the agent a database of its own (another SQLite "
        "file, another PostgreSQL database, or a PostgreSQL schema of its own: "
        "'postgresql://...?options=-csearch_path%3Dagent' after CREATE SCHEMA agent); nothing "
        "was written"
    )


def no_pause_record_text(thread_id: str, nodes: str) -> str:
    """A decision for a thread that has an unfinished tool call and no pause."""
    return (
        f"thread {thread_id!r} cannot be resumed with a decision: it stopped before {nodes} "
        "with its tool call unanswered but holds no pause, so there is nothing the decision "
        "could answer: its pause record is missing (the thread is damaged), its run died "
        "before the tool asked, or a breakpoint (interrupt_before) stopped it. The decision "
        "was not applied and nothing ran: resume it "
        "without a decision (ReActAgent.resume(thread_id=...)) to run the call again, which "
        "asks again if it needs an approval"
    )


def stopped_text(thread_id: str, nodes: str) -> str:
    """``inbox list``: a thread with an unanswered tool call, stopped without a pause."""
    return (
        f"thread {thread_id!r} stopped before {nodes} with a tool call unanswered and no "
        "pause: its run died, a breakpoint stopped it, or its pause record is missing (the "
        "thread is damaged). It has no approval to answer; continue it with "
        "ReActAgent.resume(thread_id=...) (the call runs again and asks again if it needs "
        "an approval)"
    )
