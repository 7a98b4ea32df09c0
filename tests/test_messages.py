"""The messages reducer: provider-safe order, add_messages semantics, batching invariance,
and the fast path giving exactly what the full merge gives."""

from __future__ import annotations

import random
from typing import Any

from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    HumanMessage,
    RemoveMessage,
    ToolMessage,
)

from dynavec_langgraph._graph.messages import merge_conversation, pending_calls, run_steps


def _full_merge(state: list[AnyMessage], writes: list[Any]) -> list[AnyMessage]:
    """The reducer with its fast path defeated (a RemoveMessage of an unknown id forces the
    full merge and changes nothing else)."""
    return merge_conversation(state, [*writes, RemoveMessage(id="no-such-message")])


def _random_conversation(rng: random.Random, turns: int) -> list[list[Any]]:
    """Batches of writes as a paused, interrupted, re-entered agent thread produces them."""
    batches: list[list[Any]] = [[HumanMessage("go", id="h0")]]
    for t in range(turns):
        calls = [
            {"name": "f", "args": {"i": i}, "id": f"c{t}.{i}", "type": "tool_call"}
            for i in range(rng.randint(0, 3))
        ]
        batches.append([AIMessage("", tool_calls=calls, id=f"a{t}")])
        answers = [
            ToolMessage(f"r{c['id']}", tool_call_id=c["id"], id=f"t{c['id']}") for c in calls
        ]
        if rng.random() < 0.3:
            rng.shuffle(answers)  # parallel tasks finish in any order
        for answer in answers:
            if rng.random() < 0.2:  # a user message sent while calls are unanswered
                batches.append([HumanMessage(f"hurry {t}", id=f"h{t}.{answer.id}")])
            batches.append([answer])
        if rng.random() < 0.1:  # a node writes an existing message again (replace by id)
            batches.append([AIMessage("", tool_calls=calls, id=f"a{t}")])
    return batches


def assert_provider_valid(messages: list[AnyMessage]) -> None:
    i = 0
    while i < len(messages):
        m = messages[i]
        if isinstance(m, AIMessage) and m.tool_calls:
            ids = [c["id"] for c in m.tool_calls]
            following = messages[i + 1 : i + 1 + len(ids)]
            answered = [t.tool_call_id for t in following if isinstance(t, ToolMessage)]
            assert answered == ids[: len(answered)], messages
            i += len(answered)
        i += 1


def test_fast_path_equals_full_merge_and_batching_is_invariant() -> None:
    for seed in range(200):
        rng = random.Random(seed)
        batches = _random_conversation(rng, rng.randint(1, 6))
        fast: list[AnyMessage] = []
        full: list[AnyMessage] = []
        for batch in batches:
            fast = merge_conversation(fast, batch)
            full = _full_merge(full, batch)
            assert [m.id for m in fast] == [m.id for m in full], seed
        flat = [m for batch in batches for m in batch]
        at_once = merge_conversation([], flat)
        assert [m.id for m in at_once] == [m.id for m in fast], seed
        split = rng.randint(0, len(flat))
        two = merge_conversation(merge_conversation([], flat[:split]), flat[split:])
        assert [m.id for m in two] == [m.id for m in fast], seed
        assert_provider_valid(fast)


def test_a_user_message_sent_while_paused_moves_after_the_answers() -> None:
    calls: list[Any] = [
        {"name": "f", "args": {}, "id": c, "type": "tool_call"} for c in ("c1", "c2")
    ]
    state = merge_conversation(
        [], [HumanMessage("go", id="h"), AIMessage("", tool_calls=calls, id="a")]
    )
    state = merge_conversation(state, [ToolMessage("1", tool_call_id="c1", id="t1")])
    state = merge_conversation(state, [HumanMessage("hurry", id="h2")])
    assert [m.id for m in state] == ["h", "a", "t1", "h2"]
    assert [c["id"] for c in pending_calls(state)] == ["c2"]
    state = merge_conversation(state, [ToolMessage("2", tool_call_id="c2", id="t2")])
    assert [m.id for m in state] == ["h", "a", "t1", "t2", "h2"]
    assert pending_calls(state) == []
    assert run_steps(state) == 0


def test_messages_without_ids_get_the_same_id_on_every_replay() -> None:
    first = merge_conversation([], [("user", "hi"), ("assistant", "hello")])
    again = merge_conversation([], [("user", "hi"), ("assistant", "hello")])
    assert [m.id for m in first] == [m.id for m in again]
    assert all(m.id for m in first)


def test_pending_calls_and_run_steps_follow_a_growing_conversation() -> None:
    calls = [{"name": "f", "args": {}, "id": "c1", "type": "tool_call"}]
    state: list[AnyMessage] = merge_conversation([], [HumanMessage("go", id="h")])
    assert (pending_calls(state), run_steps(state)) == ([], 0)
    state = merge_conversation(state, [AIMessage("", tool_calls=calls, id="a")])
    assert [c["id"] for c in pending_calls(state)] == ["c1"]
    assert run_steps(state) == 1
    older = state
    state = merge_conversation(state, [ToolMessage("x", tool_call_id="c1", id="t")])
    assert pending_calls(state) == []
    assert [c["id"] for c in pending_calls(older)] == ["c1"]  # an older list is read right
    assert pending_calls(state) == []
