"""The dynavec test double the dynavec-area test modules share: a ``ChatModel`` subclass, the
way dynavec's own tests wrote their models (it imports only from ``dynavec_langgraph.chat``).

Each turn of the script is answer text or a list of tool calls (``(name, arguments)`` pairs,
arguments a dict or a JSON string). Ids are ``call_<n>`` numbered across the whole run unless
``fixed_id`` is given (a provider that reuses one id every turn). Counters show which entry
points the agent used.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from dynavec_langgraph.chat import ChatModel, ChatResult, Message, Role, Tool, ToolCall

Script = str | list[tuple[str, Any]]


class ScriptedDynavecModel(ChatModel):
    """Answers from a script (or ``policy(messages)``); counts ``invoke`` and ``ainvoke``."""

    def __init__(
        self,
        turns: Sequence[Script] = (),
        *,
        policy: Callable[[list[Message]], Script] | None = None,
        fixed_id: str | None = None,
        use_default_ainvoke: bool = False,
    ) -> None:
        self.turns = list(turns)
        self.policy = policy
        self.fixed_id = fixed_id
        self.use_default_ainvoke = use_default_ainvoke
        self.calls = 0
        self.invoke_calls = 0
        self.ainvoke_calls = 0
        self.seen: list[list[Message]] = []
        self.tools_seen: list[list[Tool]] = []
        self.tools_given: list[Sequence[Tool] | None] = []  # as passed: None when there are none
        self.kwargs_seen: list[dict[str, Any]] = []

    def _answer(
        self, messages: Sequence[Message], tools: Sequence[Tool] | None, kwargs: Any
    ) -> ChatResult:
        self.seen.append(list(messages))
        self.tools_seen.append(list(tools or []))
        self.tools_given.append(tools)
        self.kwargs_seen.append(dict(kwargs))
        if self.policy is not None:
            turn = self.policy(list(messages))
        else:
            if self.calls >= len(self.turns):
                raise AssertionError(
                    f"the script has {len(self.turns)} turns; call {self.calls + 1}"
                )
            turn = self.turns[self.calls]
        self.calls += 1
        if isinstance(turn, str):
            return ChatResult(Message(Role.ASSISTANT, turn), finish_reason="stop")
        calls = []
        for i, (name, args) in enumerate(turn):
            call_id = self.fixed_id if self.fixed_id is not None else f"call_{self.calls}_{i}"
            arguments = args if isinstance(args, str) else json.dumps(args)
            calls.append(ToolCall(call_id, name, arguments))
        return ChatResult(Message(Role.ASSISTANT, None, calls), finish_reason="tool_calls")

    def invoke(
        self, messages: Sequence[Message], tools: Sequence[Tool] | None = None, **kwargs: Any
    ) -> ChatResult:
        self.invoke_calls += 1
        return self._answer(messages, tools, kwargs)

    async def ainvoke(
        self, messages: Sequence[Message], tools: Sequence[Tool] | None = None, **kwargs: Any
    ) -> ChatResult:
        if self.use_default_ainvoke:
            return await super().ainvoke(messages, tools, **kwargs)
        self.ainvoke_calls += 1
        return self._answer(messages, tools, kwargs)
