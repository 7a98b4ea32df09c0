"""``ReActAgent``: dynavec's run / resume API on the package's compiled LangGraph graph."""

from __future__ import annotations

from dynavec_langgraph._agent.reads import Reads
from dynavec_langgraph._agent.resumes import Resumes
from dynavec_langgraph._agent.runs import Runs

__all__ = ["ReActAgent"]


class ReActAgent(Runs, Resumes, Reads):
    """dynavec's ReAct agent, running on the package's LangGraph graph (``agent.graph``).

    Code written against ``dynavec.agents`` runs after
    ``from dynavec_langgraph import ReActAgent, interrupt, tool``.

    Args:
        model: a LangChain chat model, a ``"provider:model"`` string or a dynavec-style model.
        tools: tools (see :func:`dynavec_langgraph.create_react_agent`).
        system_prompt: ``None`` for dynavec's default ReAct prompt, ``""`` for none.
        max_steps: model calls per run; below 1 counts as 1.
        checkpointer: a LangGraph saver. Without one the agent keeps an in-process saver so
            that ``resume(thread_id=...)`` works on this agent.
        memory: a :class:`~dynavec_langgraph.memory.BaseMemory`: runs with a ``thread_id``
            that continue no checkpoint start from its history, and store their answers
            (docs/memory.md).
        parallel_tool_calls: run the calls of a turn concurrently (several approvals can be
            pending at once; answer them with ``resume(thread_id=..., decisions={...})``).
        audit: ``True`` records every pause, decision and refusal of the agent's threads
            beside their checkpoints; read them with :meth:`audit`
            (docs/audit-and-notifications.md).
        notify: a webhook URL or a callable, called (at least once, from a durable outbox)
            for every new pause and re-ask with what an approver needs; implies ``audit``.

    Raises:
        InvalidOptionError: an option that cannot be used (``audit`` that is no bool,
            an ``approval_policy=`` that is no policy, unused or unsatisfiable for a tool:
            docs/errors.md).

    Example:
        >>> from dynavec_langgraph.testing import ScriptedChatModel
        >>> agent = ReActAgent(ScriptedChatModel(turns=["4"]))
        >>> agent.run("2 + 2?").output
        '4'
    """
