"""``RemoteReActAgent``: dynavec's run / resume API against a LangGraph API deployment.

The agent runs on LangGraph API servers (``langgraph dev``, ``langhost serve``, LangSmith
Deployment) that serve a graph of :func:`dynavec_langgraph.create_react_agent`; this client
talks to them over ``langgraph_sdk`` (the ``studio`` extra) and returns the same
:class:`~dynavec_langgraph.records.AgentResult` and errors as
:class:`~dynavec_langgraph.ReActAgent`.

How a resume stays single when several callers (or servers) answer the same pause:

- the decision is keyed by the pending interrupt's id (``{interrupt_id: decision}``), so a late
  decision never answers a newer pause of the thread;
- on a server whose ``/info`` reports strict resume (:func:`reports_strict_resume`), resumes
  are sent with ``strict_resume=True``: the server itself refuses an answer to an interrupt
  that is no longer pending (LangGraph's ``UnknownInterruptError``, raised here as
  :class:`ConcurrentResumeError`; the thread is unchanged). Asked once per client, cached;
  langgraph-api 0.16.7 does not report it, and then nothing changes;
- runs are sent with ``multitask_strategy="reject"``: while another run of the thread is in
  flight the server answers HTTP 409, raised as :class:`ConcurrentResumeError`;
- runs of a thread never overlap then, so after the run, a run created between this caller's
  read of the pause and its own run that answered the same interrupt (and did not fail) means
  another caller resumed first (:class:`ConcurrentResumeError`; this decision was not applied:
  its interrupt id was no longer pending).

Runs use ``durability="sync"`` (each step's checkpoint is written before the next step), so a
server that dies mid-run leaves the last finished tool call saved; another server of the
deployment re-claims the run after the heartbeat and finishes it.

Errors of this module beside the package's: :class:`ServerUnavailableError`
(``ConnectionError``: refused connection or timeout) and :class:`RemoteRunError`
(``RuntimeError``: the run failed on the server), and :class:`ThreadAccessError`
(``PermissionError``: a thread the server's auth rules keep from the signed-in user).

On a server with custom auth every request carries the client's credentials (``headers=``,
``api_key=``) and the server applies its auth handler's thread rules itself: a thread the
user may not access is one the server does not show (HTTP 404; ``resume`` / ``result``
raise :class:`NothingToResumeError` saying so), and ``run`` on such a thread id is refused
with :class:`ThreadAccessError`.
"""

from __future__ import annotations

from dynavec_langgraph._errors import RemoteRunError, ServerUnavailableError, ThreadAccessError
from dynavec_langgraph._remote.agent import DEFAULT_TIMEOUT, RemoteReActAgent
from dynavec_langgraph._remote.requests import reports_strict_resume, server_thread_id

__all__ = [
    "DEFAULT_TIMEOUT",
    "RemoteReActAgent",
    "RemoteRunError",
    "ServerUnavailableError",
    "ThreadAccessError",
    "reports_strict_resume",
    "server_thread_id",
]
