"""The audit hooks a pause and a decision call (``on_pause`` / ``on_decision``, and
``written``, awaited after an async tool): the audit trail's own
(:mod:`dynavec_langgraph._audit.in_graph`) when the run switches it on
(:mod:`dynavec_langgraph._audit.switch`), else hooks that do nothing, so a run that records
nothing never imports the audit trail."""

from __future__ import annotations

from types import ModuleType
from typing import Any, Final

from dynavec_langgraph._audit.switch import switched_on

__all__ = ["recorder"]


class _Off:
    """The audit hooks of a run that records nothing: each returns at once."""

    @staticmethod
    def on_pause(*_args: Any, **_kwargs: Any) -> None:
        return None

    @staticmethod
    def on_decision(*_args: Any, **_kwargs: Any) -> None:
        return None

    @staticmethod
    async def written() -> None:
        return None


_OFF: Final = _Off()


def recorder() -> ModuleType | _Off:
    """The audit hooks (``on_pause`` / ``on_decision``) for the run in this context: the audit
    trail's own (:mod:`dynavec_langgraph._audit.in_graph`, imported then) when the run's config
    or the environment switches it on, else hooks that do nothing."""
    from langgraph.config import get_config

    try:
        conf = get_config().get("configurable") or {}
    except RuntimeError:  # not inside a run: nothing to record in
        return _OFF
    if not switched_on(conf):
        return _OFF
    from dynavec_langgraph._audit import in_graph

    return in_graph
