"""``ReActAgent``'s reads: a thread's checkpoints as dynavec records and its audit trail."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from langgraph.types import StateSnapshot

from dynavec_langgraph._agent.core import AgentCore, exists
from dynavec_langgraph._exactly_once.shown import shown_first
from dynavec_langgraph._graph.run_data import run_config
from dynavec_langgraph._storable import check_id
from dynavec_langgraph.checkpoint import Checkpoint, dynavec_view, is_step_boundary

if TYPE_CHECKING:
    from dynavec_langgraph._audit.entries import AuditEvent

__all__ = ["Reads"]


class Reads(AgentCore):
    """``ReActAgent``'s ``get_checkpoint`` / ``list_checkpoints`` / ``audit`` and their async
    twins."""

    def _view(self, thread_id: str, snapshot: StateSnapshot) -> Checkpoint:
        return dynavec_view(snapshot, thread_id=thread_id, system_prompt=self.system_prompt)

    def get_checkpoint(self, thread_id: str, checkpoint_id: str | None = None) -> Checkpoint | None:
        """The thread's latest checkpoint (or ``checkpoint_id``) as a dynavec record.

        Works with every saver; the layout is docs/compatibility.md §5's (node ids ``init``,
        ``step_i``, ``interrupted``, ``max_steps_reached``), ``checkpoint_id`` is LangGraph's
        (pass it as ``run(..., resume_from=...)``). ``None`` for an unknown thread or id.
        """
        config = run_config(thread_id, {}, checkpoint_id=checkpoint_id)
        snapshot = self.graph.get_state(config)
        if snapshot.interrupts:  # a pause a crash made stale: its in-doubt question
            snapshot = shown_first(snapshot, self.checkpointer.get_tuple(config))
        return self._view(thread_id, snapshot) if exists(snapshot) else None

    async def aget_checkpoint(
        self, thread_id: str, checkpoint_id: str | None = None
    ) -> Checkpoint | None:
        """Async twin of :meth:`get_checkpoint`."""
        config = run_config(thread_id, {}, checkpoint_id=checkpoint_id)
        snapshot = await self.graph.aget_state(config)
        if snapshot.interrupts:
            snapshot = shown_first(snapshot, await self.checkpointer.aget_tuple(config))
        return self._view(thread_id, snapshot) if exists(snapshot) else None

    def _boundaries(
        self, thread_id: str, snapshots: Sequence[StateSnapshot], limit: int | None
    ) -> list[Checkpoint]:
        records = [self._view(thread_id, s) for s in reversed(snapshots) if is_step_boundary(s)]
        if limit is not None:
            records = records[-limit:] if limit > 0 else []
        return records

    def list_checkpoints(self, thread_id: str, limit: int | None = None) -> list[Checkpoint]:
        """The thread's checkpoints at dynavec's moments, oldest first (``limit``: newest N).

        dynavec's moments are a run's start, the end of each step, the answer, running out of
        steps and a pause; LangGraph's checkpoints in between (e.g. between two tool calls
        of a batch) are left out. :meth:`get_checkpoint` reads any of them by id.
        """
        config = run_config(thread_id, {})
        history = list(self.graph.get_state_history(config))
        if history and history[0].interrupts:  # the latest: as get_checkpoint shows it
            history[0] = shown_first(history[0], self.checkpointer.get_tuple(config))
        return self._boundaries(thread_id, history, limit)

    async def alist_checkpoints(self, thread_id: str, limit: int | None = None) -> list[Checkpoint]:
        """Async twin of :meth:`list_checkpoints`."""
        config = run_config(thread_id, {})
        history = [s async for s in self.graph.aget_state_history(config)]
        if history and history[0].interrupts:
            history[0] = shown_first(history[0], await self.checkpointer.aget_tuple(config))
        return self._boundaries(thread_id, history, limit)

    def audit(self, thread_id: str) -> list[AuditEvent]:
        """The audit trail of ``thread_id``, oldest first: its pauses, decisions, refusals
        (and the settlements other features record), as :class:`AuditEvent` entries.
        Empty unless the agent was made with ``audit=True`` or ``notify=...``."""
        check_id(thread_id, "thread_id")
        from dynavec_langgraph._audit.trail import audit_trail

        return audit_trail(self._audit_target(), thread_id)

    async def aaudit(self, thread_id: str) -> list[AuditEvent]:
        """Async twin of :meth:`audit` (for async savers)."""
        check_id(thread_id, "thread_id")
        from dynavec_langgraph._audit.trail import aaudit_trail

        return await aaudit_trail(self._audit_target(), thread_id)
