"""What a re-asked approval is: the same pause with ``error`` set (and the reason in its
descriptions) and a new review digest."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dynavec_langgraph.interrupt import first_asked, refusal_note


def same_ask_again(first: Mapping[str, Any], again: Mapping[str, Any]) -> bool:
    """``again`` asks what ``first`` (a first ask) asked, with the refusal in ``error`` and
    another review digest (a re-ask is another pause: a decision bound to ``first`` no longer
    fits)."""
    assert again["error"], again
    assert again["review_digest"] != first["review_digest"]
    return {**first_asked(again), "review_digest": first["review_digest"]} == dict(first)


def says_why_first(value: Mapping[str, Any]) -> bool:
    """Both descriptions of a re-asked pause (what the UIs show) start with the short reason
    of its ``error`` (:func:`~dynavec_langgraph.interrupt.refusal_note`), without the Python
    ``repr`` of the refused decision that ``error`` quotes."""
    note = refusal_note(value["error"])
    texts = [value["description"], *(a["description"] for a in value["action_requests"])]
    assert "was refused:" not in note and "{'" not in note, note
    return all(text.startswith(note + "\n\n") for text in texts)
