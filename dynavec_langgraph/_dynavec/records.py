"""dynavec's records: chat messages, steps, results and the shared agent state.

The annotations are objects, not strings (no ``from __future__ import annotations``): the
classes' public module is ``dynavec_langgraph.records`` (see the end), so
``typing.get_type_hints`` must not need this module's names to read their fields.
"""

import json
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal


class Role(StrEnum):
    """A message role (``dynavec.chat.base.Role``). Members equal their strings:
    ``Message(Role.USER, ...)`` and ``Message("user", ...)`` are the same message."""

    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"


RoleName = Literal["system", "user", "assistant", "tool"]
"""A role as a plain string."""
TerminationReason = Literal["completed", "max_steps_reached", "interrupted"]
"""Why a run stopped (``AgentResult.termination_reason``)."""


@dataclass
class ToolCall:
    """A tool call issued by the model; ``arguments`` is a JSON string."""

    id: str
    name: str
    arguments: str

    def to_dict(self) -> dict[str, Any]:
        """Return the dict form stored in checkpoints (dict arguments stored as JSON)."""
        return {"id": self.id, "name": self.name, "arguments": arguments_json(self.arguments)}


def arguments_json(arguments: Any) -> str:
    """A tool call's arguments as a JSON string: a string as it is, a dict (which some dynavec
    models return despite the ``str`` annotation) as ``json.dumps`` (docs/compatibility.md,
    F1), ``None`` as ``""``."""
    if isinstance(arguments, str):
        return arguments
    if arguments is None:
        return ""
    return json.dumps(arguments, ensure_ascii=False)


@dataclass
class Message:
    """A chat message in dynavec's provider-neutral form."""

    role: Role | RoleName
    content: str | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_call_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """Return the dict form stored in checkpoints."""
        return {
            "role": self.role,
            "content": self.content,
            "tool_call_id": self.tool_call_id,
            "tool_calls": [c.to_dict() for c in self.tool_calls],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Message":
        """Build a message from its dict form."""
        calls = [
            ToolCall(str(c["id"]), str(c["name"]), arguments_json(c.get("arguments")) or "{}")
            for c in data.get("tool_calls") or []
        ]
        return cls(
            role=data["role"],
            content=data.get("content"),
            tool_calls=calls,
            tool_call_id=data.get("tool_call_id"),
        )


@dataclass
class AgentStep:
    """One model call plus the tool calls it asked for, with their results in call order."""

    step_number: int
    thought: str | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)
    observations: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """Return the dict form stored in checkpoints."""
        return {
            "step_number": self.step_number,
            "thought": self.thought,
            "tool_calls": [c.to_dict() for c in self.tool_calls],
            "observations": list(self.observations),
        }


@dataclass
class AgentResult:
    """What ``ReActAgent.run`` and ``resume`` return."""

    output: str
    steps: list[AgentStep] = field(default_factory=list)
    finished: bool = True
    termination_reason: TerminationReason = "completed"
    total_steps: int = 0
    tool_calls_count: int = 0
    interrupt_payload: dict[str, Any] | None = None
    structured_response: Any = None
    """With ``response_format``: the parsed structured response of the run."""


@dataclass
class AgentState:
    """Data shared between the agents and tools of one workflow.

    Tools read and write it by declaring a parameter annotated ``AgentState``; it is
    injected by the agent and never shown to the model.
    """

    data: dict[str, Any] = field(default_factory=dict)


# The records' public home: a checkpoint names a class by its module (LangGraph's serializer
# writes ``__module__``; ``_persistence.serde.PACKAGE_TYPES`` allows them there), and the
# checkpoints written before this module existed say ``dynavec_langgraph.records``.
for _record in (Role, ToolCall, Message, AgentStep, AgentResult, AgentState):
    _record.__module__ = "dynavec_langgraph.records"
