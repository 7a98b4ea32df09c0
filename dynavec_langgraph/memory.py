"""dynavec's conversation memory (``dynavec.memory``): message helpers, trimming policies and
stores, for ``ReActAgent(memory=...)`` (docs/memory.md).

The code is in ``dynavec_langgraph._dynavec.memory``; this module is its public import path.
"""

from dynavec_langgraph._dynavec.memory import (
    BaseMemory,
    DynamoDBMemoryStore,
    InMemoryMemoryStore,
    MemoryPolicy,
    SummaryMemoryPolicy,
    TokenBudgetMemoryPolicy,
    WindowMemoryPolicy,
    default_token_counter,
    dict_to_message,
    message_to_dict,
)

__all__ = [
    "BaseMemory",
    "DynamoDBMemoryStore",
    "InMemoryMemoryStore",
    "MemoryPolicy",
    "SummaryMemoryPolicy",
    "TokenBudgetMemoryPolicy",
    "WindowMemoryPolicy",
    "default_token_counter",
    "dict_to_message",
    "message_to_dict",
]
