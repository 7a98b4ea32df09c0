"""The idempotency key of a tool call, and the ``on_crash`` policy a tool declares."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Final, Literal, get_args

from langchain_core.runnables import RunnableConfig

from dynavec_langgraph._errors import ToolContextError
from dynavec_langgraph._graph.run_data import RunData
from dynavec_langgraph._lg_names import NS_SEP
from dynavec_langgraph._names import IDEMPOTENCY_KEY

__all__ = [
    "NS_END",
    "OnCrash",
    "call_key",
    "check_on_crash",
    "declared_on_crash",
    "idempotency_key",
    "keyed",
    "on_crash_of",
    "with_key",
]

OnCrash = Literal["retry", "ask", "fail"]
"""What happens to a tool call that was running when its process died (module doc)."""
_NS_SEP: Final = NS_SEP
NS_END: Final = ":"
_running_key: ContextVar[str | None] = ContextVar("dynavec_idempotency_key", default=None)


def call_key(data: RunData, call_id: str, turn: str) -> str:
    """The idempotency key of call ``call_id`` made by the assistant message ``turn`` (its id,
    or ``"#<position>"``), in the thread and namespace of the run ``data``."""
    thread = data.thread_id
    if thread is None:  # nothing durable: nothing re-runs this call, a key per run
        return f"dynavec-{uuid.uuid4().hex}"
    ns = data.checkpoint_ns
    parts = ns.split(_NS_SEP)[:-1]  # the graphs this agent runs in, not its own task
    path = _NS_SEP.join(p.split(NS_END, 1)[0] for p in parts)
    text = "\x00".join((str(thread), path, turn, call_id))
    return f"dynavec-{hashlib.sha256(text.encode()).hexdigest()[:32]}"


def with_key(config: RunnableConfig, key: str) -> RunnableConfig:
    """``config`` with the call's key in ``configurable`` (what LangChain tools read)."""
    return {**config, "configurable": {**(config.get("configurable") or {}), IDEMPOTENCY_KEY: key}}


@contextmanager
def keyed(key: str) -> Iterator[None]:
    """While a call runs: :func:`idempotency_key` returns ``key``."""
    token = _running_key.set(key)
    try:
        yield
    finally:
        _running_key.reset(token)


def idempotency_key(source: object = None) -> str:
    """The idempotency key of the tool call running now: the same on every re-run of that
    call (resumes, re-asked approvals, crash continuations, retries, another server), another
    one for every other call. Pass it to the service the tool calls (an ``Idempotency-Key``
    header) so a repeat after a crash does the work once.

    Args:
        source: nothing inside a tool (this package's ``@tool``, a plain function, a
            LangChain tool run by the agent), or a LangChain tool's ``ToolRuntime`` or
            ``RunnableConfig``.

    Raises:
        ToolContextError: called outside a tool call run by this package's agent.

    Example:
        >>> from dynavec_langgraph import idempotency_key, tool
        >>> @tool
        ... def pay(amount: int) -> str:
        ...     "Pay."
        ...     return f"charged {amount} under {idempotency_key()}"
    """
    if source is not None:
        config = getattr(source, "config", source)
        conf = config.get("configurable") if isinstance(config, Mapping) else None
        key = (conf or {}).get(IDEMPOTENCY_KEY)
        if isinstance(key, str):
            return key
    key = _running_key.get()
    if key is None:
        raise ToolContextError(
            "idempotency_key() was called outside a tool call of a dynavec_langgraph agent: "
            "call it inside the tool while the agent runs it (or pass the tool's ToolRuntime "
            "or RunnableConfig)"
        )
    return key


def check_on_crash(value: Any, tool_name: str) -> OnCrash:
    """``value`` as an :data:`OnCrash`.

    Raises:
        ValueError: anything but ``"retry"``, ``"ask"`` or ``"fail"``.
    """
    if value not in get_args(OnCrash):
        raise ValueError(
            f"tool {tool_name!r}: on_crash={value!r}; use 'retry' (run again with the same "
            "idempotency key, the default), 'ask' (pause: it may or may not have run) or "
            "'fail' (stop with InDoubtCallError)"
        )
    result: OnCrash = value
    return result


def on_crash_of(tool: object) -> OnCrash:
    """A tool's declared ``on_crash`` (``@tool(on_crash=...)``, or ``metadata={"on_crash":
    ...}`` on a LangChain tool), ``"retry"`` if none."""
    return declared_on_crash(tool) or "retry"


def declared_on_crash(tool: object) -> OnCrash | None:
    """A tool's declared ``on_crash``, ``None`` if it declares none (it then is ``"retry"``,
    writing no marks)."""
    for source in (tool, getattr(tool, "_origin", None)):
        metadata = getattr(source, "metadata", None)
        if isinstance(metadata, Mapping) and metadata.get("on_crash") is not None:
            return check_on_crash(metadata["on_crash"], str(getattr(tool, "name", "?")))
    return None
