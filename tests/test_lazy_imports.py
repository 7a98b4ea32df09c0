"""What importing the package costs: the modules ``import dynavec_langgraph`` and the names an
agent needs load (docs/benchmarks.md, the import-cost row).

The optional features (the audit trail and outbox, streaming events, memory stores, DynamoDB,
the chat providers and middleware, the inbox, the remote client) are imported where they are
used, not when the package or ``ReActAgent`` / ``create_react_agent`` / ``interrupt`` / ``tool``
are imported. Each check runs in a fresh interpreter, so a module imported eagerly again (a
top-level ``from dynavec_langgraph._audit.trail import ...`` in ``_agent.py``) fails it. The
audit trail is checked by :data:`AUDIT_TRAIL`: ``_audit.switch`` and ``_audit.hooks`` (whether a
run records, and hooks that do nothing) are what a plain pause imports of it.
"""

from __future__ import annotations

import json
import subprocess
import sys

AGENT_NAMES = "from dynavec_langgraph import ReActAgent, create_react_agent, interrupt, tool"
"""The statement the import benchmark times (benchmarks/measure.py ``IMPORTS``)."""

AUDIT_TRAIL = "dynavec_langgraph._audit.storage"
"""Where the audit trail's entries are written and read: every other module of the trail
(``trail``, ``verify``, ``in_graph``, ``notifications``) imports it."""

NOT_AT_IMPORT = (
    AUDIT_TRAIL,
    "dynavec_langgraph._remote.audit",
    "dynavec_langgraph._approvals.inbox",
    "dynavec_langgraph._dynavec.models",
    "dynavec_langgraph._middleware",
    "dynavec_langgraph._graph.prebuilt",
    "dynavec_langgraph.events",
    "dynavec_langgraph.memory",
    "dynavec_langgraph._dynavec.memory",
    "dynavec_langgraph.dynamodb",
    "dynavec_langgraph.remote",
    "dynavec_langgraph.temporal",
    "dynavec_langgraph.chat._providers",
    "langgraph.prebuilt",
    "langchain.agents",
    "langchain_core.language_models.chat_models",
    "boto3",
    "botocore",
    "psycopg",
    "temporalio",
)
"""Modules a plain agent does not need when it is imported."""

NOT_FOR_A_PLAIN_RUN = (
    AUDIT_TRAIL,
    "dynavec_langgraph._dynavec.models",
    "dynavec_langgraph._middleware",
    "dynavec_langgraph.chat._providers",
    "langgraph.prebuilt",
    "langchain.agents",
)
"""Modules a plain two-node agent of this package's own tools does not load to be built, paused
and resumed: the audit trail (off unless switched on), the dynavec-model adapter, the
create_agent mirror, LangGraph's ``ToolNode`` (the tool node runs such tools itself)."""


def _loaded_after(statement: str) -> set[str]:
    code = f"import sys, json\n{statement}\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def test_the_package_alone_loads_none_of_its_modules() -> None:
    loaded = _loaded_after("import dynavec_langgraph")
    assert "dynavec_langgraph" in loaded
    assert sorted(m for m in loaded if m.startswith("dynavec_langgraph.")) == []
    assert "langgraph" not in loaded


def test_the_names_an_agent_needs_load_no_optional_feature() -> None:
    loaded = _loaded_after(AGENT_NAMES)
    assert {"dynavec_langgraph._agent.agent", "dynavec_langgraph.interrupt"} <= loaded
    assert sorted(m for m in NOT_AT_IMPORT if m in loaded) == []


def test_each_feature_is_imported_by_the_call_that_needs_it() -> None:
    code = (
        f"{AGENT_NAMES}\n"
        "import sys\n"
        "from dynavec_langgraph.memory import InMemoryMemoryStore\n"
        "from dynavec_langgraph.testing import ScriptedChatModel\n"
        f"before = {{{AUDIT_TRAIL!r}, 'dynavec_langgraph.events'}} & set(sys.modules)\n"
        "agent = ReActAgent(ScriptedChatModel(turns=['hi', 'there']), audit=True,\n"
        "                   memory=InMemoryMemoryStore())\n"
        "assert 'dynavec_langgraph._audit.trail' in sys.modules\n"
        "events = list(agent.stream('hello', thread_id='t'))\n"
        "assert 'dynavec_langgraph.events' in sys.modules\n"
        "assert type(events[-1]).__name__ == 'ResultEvent', events\n"
        "assert events[-1].result.output == 'hi', events[-1]\n"
        "print(sorted(before), [e.kind for e in agent.audit('t')])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1].startswith("[] ")


PLAIN_RUN = '''
import sys
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from dynavec_langgraph import create_react_agent, interrupt, tool
from dynavec_langgraph.testing import ScriptedChatModel

@tool
def pay(amount: int) -> str:
    """Pay after approval."""
    return f"paid {amount}: {interrupt('approve', {'amount': amount})}"

model = ScriptedChatModel(turns=[[{"name": "pay", "args": {"amount": 5}}], "done"])
graph = create_react_agent(model, [pay], checkpointer=InMemorySaver())
config = {"configurable": {"thread_id": "t"}}
paused = graph.invoke({"messages": [("user", "pay 5")]}, config)
assert paused["__interrupt__"], paused
out = graph.invoke(Command(resume="yes"), config)
assert out["messages"][-2].content == "paid 5: yes", out["messages"][-2]
assert out["messages"][-1].content == "done", out["messages"][-1]
'''


def test_a_plain_agent_builds_pauses_and_resumes_without_the_optional_code() -> None:
    code = f"{PLAIN_RUN}\nprint([m for m in {NOT_FOR_A_PLAIN_RUN!r} if m in sys.modules])\n"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_a_recording_run_imports_the_audit_trail_at_its_pause() -> None:
    recording = PLAIN_RUN.replace(
        '{"configurable": {', '{"configurable": {"dynavec_audit": True, ', 1
    )
    assert recording != PLAIN_RUN
    code = f"{recording}\nprint('dynavec_langgraph._audit.in_graph' in sys.modules)\n"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "True"
