"""What a re-asked approval is: the same pause with ``error`` set (and the reason in its
descriptions) and a new review digest."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dynavec_langgraph.interrupt import first_asked


def same_ask_again(first: Mapping[str, Any], again: Mapping[str, Any]) -> bool:
    """``again`` asks what ``first`` (a first ask) asked, with the refusal in ``error`` and
    another review digest (a re-ask is another pause: a decision bound to ``first`` no longer
    fits)."""
    assert again["error"], again
    assert again["review_digest"] != first["review_digest"]
    return {**first_asked(again), "review_digest": first["review_digest"]} == dict(first)
