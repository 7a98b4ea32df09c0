"""Whether a run records its audit trail or notifies approvers: the one rule, read without
importing the audit trail itself (the other modules of :mod:`dynavec_langgraph._audit`, which a
plain pause or decision does not need).

The switches are the run's ``config["configurable"]`` keys and two environment variables (a
server deployment sets them once for every graph).
"""

from __future__ import annotations

import os
from typing import Any

from dynavec_langgraph._errors import InvalidOptionError, option_text
from dynavec_langgraph._names import AUDIT_ENV, AUDIT_KEY, NOTIFY_ENV, NOTIFY_KEY
from dynavec_langgraph._types import JSONMapping, UserPayload

__all__ = [
    "audit_flag",
    "check_audit",
    "notifier",
    "switched_on",
]


def audit_flag(conf: JSONMapping) -> bool:
    """Whether ``conf`` (or :data:`AUDIT_ENV`) asks for the audit trail itself."""
    env = os.environ.get(AUDIT_ENV, "") not in ("", "0")
    return bool(conf.get(AUDIT_KEY)) or conf.get(NOTIFY_KEY) is not None or env


def notifier(conf: JSONMapping) -> Any:
    """The webhook URL or callable ``conf`` (or :data:`NOTIFY_ENV`) names; None if none."""
    return conf.get(NOTIFY_KEY) or os.environ.get(NOTIFY_ENV) or None


def switched_on(conf: JSONMapping) -> bool:
    """Whether a run with the configurable ``conf`` records or notifies anything."""
    return audit_flag(conf) or notifier(conf) is not None


def check_audit(value: UserPayload) -> bool:
    """An agent's ``audit=`` option (``ReActAgent``, ``RemoteReActAgent``): a bool.

    Raises:
        InvalidOptionError: anything else (``audit="no"`` would have switched it on).
    """
    if not isinstance(value, bool):
        raise InvalidOptionError(
            option_text(
                "audit",
                value,
                "pass True to record every pause, decision and refusal of the agent's threads, "
                "or False (the default); the webhook goes to notify=",
            ),
            "audit",
        )
    return value
