"""Signed, single-use approval links: approve or reject a pause from an e-mail or a chat button.

A link carries a token signed with a key the deployment holds (HMAC-SHA256; several keys with
ids, the current one signs, the older ones still verify: :class:`LinkKeys`, or the environment
variable ``DYNAVEC_LINK_KEYS``). It binds the thread, the pause (its review digest), the
decision, the approver and an expiry. The LangGraph server serves the link itself, as a custom
route (``langgraph.json``: ``"http": {"app": "dynavec_langgraph.links:app"}``): ``GET`` shows a
confirm page and changes nothing (a chat app's link preview approves nothing), ``POST``
answers the pause. The paused tool verifies the token again and binds its single use in the
server's store, so a token used twice, for another pause, after the pause was answered or
expired, changed, or badly signed is refused and changes nothing; two arriving at once apply
once. ``RemoteReActAgent.resume(link=TOKEN)`` and ``dynavec-langgraph inbox answer --server URL
--link TOKEN`` send the same tokens. See docs/security.md.

Example:
    >>> from datetime import UTC, datetime, timedelta
    >>> keys = LinkKeys({"k1": "a-long-random-secret-0123456789"})
    >>> pause = {"thread_id": "t1", "review_digest": "0" * 32}
    >>> links = approval_links(pause, approver="alice", keys=keys, base_url="https://x.test")
    >>> sorted(links), links["approve"].startswith("https://x.test/dynavec/link/dl1.k1.")
    (['approve', 'reject'], True)
    >>> token = links["approve"].rsplit("/", 1)[1]
    >>> claims = verify_link(token, keys)
    >>> (claims.thread_id, claims.decision, claims.approver)
    ('t1', 'approved', 'alice')
"""

from __future__ import annotations

from typing import Any

from dynavec_langgraph._approvals.link_app import approval_links, create_app
from dynavec_langgraph._approvals.links import LinkClaims, LinkKeys, verify_link
from dynavec_langgraph._errors import InvalidLinkError
from dynavec_langgraph._names import LINK_KEYS_ENV

__all__ = [
    "LINK_KEYS_ENV",
    "InvalidLinkError",
    "LinkClaims",
    "LinkKeys",
    "approval_links",
    "create_app",
    "verify_link",
]


def __getattr__(name: str) -> Any:
    """``app``: :func:`create_app` with its defaults (built when first asked for, so importing
    this module needs no server packages)."""
    if name == "app":
        return create_app()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
