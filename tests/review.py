"""What a re-asked approval is: the same pause with ``error`` set and a new review digest."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def same_ask_again(first: Mapping[str, Any], again: Mapping[str, Any]) -> bool:
    """``again`` asks what ``first`` asked, with the refusal in ``error`` and another review
    digest (a re-ask is another pause: a decision bound to ``first`` no longer fits)."""
    assert again["error"], again
    assert again["review_digest"] != first["review_digest"]
    skip = {"error", "review_digest"}
    return {k: v for k, v in again.items() if k not in skip} == {
        k: v for k, v in first.items() if k not in skip
    }
