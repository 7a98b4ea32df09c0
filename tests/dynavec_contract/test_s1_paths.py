"""dynavec's module paths and names after the import rewrite (docs/compatibility.md N6-N10,
E1): ``dynavec.agents`` and ``dynavec.chat`` are packages whose submodules import on their
own, every name is one object wherever it appears, and importing ``chat`` loads no provider."""

from __future__ import annotations

import importlib
import subprocess
import sys
from typing import Any

import pytest

import dynavec_langgraph
import dynavec_langgraph.agents as agents
import dynavec_langgraph.chat as chat
from dynavec_langgraph.agents.base import (
    AgentResult,
    AgentStep,
    AgentTool,
    Plan,
    PlanStep,
    interrupt,
    tool,
)
from dynavec_langgraph.agents.connectors import (
    create_http_tool,
    create_python_code_tool,
    mcp_tools_from_session,
    mcp_tools_from_session_async,
)
from dynavec_langgraph.agents.handoff import Handoff
from dynavec_langgraph.agents.planner import DEFAULT_PLANNER_SYSTEM_PROMPT, Planner
from dynavec_langgraph.agents.react import DEFAULT_REACT_SYSTEM_PROMPT, ReActAgent
from dynavec_langgraph.agents.registry import ToolRegistry, default_registry
from dynavec_langgraph.agents.state import AgentState
from dynavec_langgraph.agents.supervisor import AgentLike, Supervisor
from dynavec_langgraph.chat import ChatChunk, ChatModel, ChatResult, Message, Role, Tool, ToolCall
from dynavec_langgraph.chat.anthropic import AnthropicChatModel
from dynavec_langgraph.chat.bedrock import BedrockChatModel
from dynavec_langgraph.chat.openai import OpenAIChatModel
from dynavec_langgraph.checkpoint import (
    BaseCheckpointer,
    Checkpoint,
    DynamoDBCheckpointer,
    MemoryCheckpointer,
)

SUBMODULES = {
    "dynavec_langgraph.agents.base": [
        "AgentStep", "AgentResult", "PlanStep", "Plan", "AgentTool", "tool", "interrupt",
    ],
    "dynavec_langgraph.agents.react": ["ReActAgent", "DEFAULT_REACT_SYSTEM_PROMPT"],
    "dynavec_langgraph.agents.planner": ["Planner", "DEFAULT_PLANNER_SYSTEM_PROMPT"],
    "dynavec_langgraph.agents.registry": ["ToolRegistry", "default_registry"],
    "dynavec_langgraph.agents.connectors": [
        "create_http_tool", "create_python_code_tool", "mcp_tools_from_session",
        "mcp_tools_from_session_async",
    ],
    "dynavec_langgraph.agents.state": ["AgentState"],
    "dynavec_langgraph.agents.handoff": ["Handoff"],
    "dynavec_langgraph.agents.supervisor": ["AgentLike", "Supervisor"],
    "dynavec_langgraph.chat.base": [
        "Role", "ToolCall", "Message", "Tool", "ChatResult", "ChatChunk", "ChatModel",
    ],
    "dynavec_langgraph.chat.openai": ["OpenAIChatModel"],
    "dynavec_langgraph.chat.anthropic": ["AnthropicChatModel"],
    "dynavec_langgraph.chat.bedrock": ["BedrockChatModel"],
}  # fmt: skip
"""dynavec's module table (part 2 §1.3/§1.4), as docs/compatibility.md N6 lists it."""

PROVIDER_SDKS = ("openai", "anthropic", "boto3", "botocore")
PROVIDER_PACKAGES = ("langchain_openai", "langchain_anthropic", "langchain_aws")


def test_n6_every_submodule_imports_on_its_own_in_a_fresh_interpreter() -> None:
    code = (
        "import importlib, sys\n"
        f"for module, names in {SUBMODULES!r}.items():\n"
        "    for k in [k for k in sys.modules if k.startswith('dynavec_langgraph')]:\n"
        "        del sys.modules[k]\n"
        "    m = importlib.import_module(module)\n"
        "    print(module, sorted(n for n in names if hasattr(m, n)) == sorted(names))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [w for m in SUBMODULES for w in (m, "True")]


def test_n6_every_name_is_one_object_wherever_it_appears() -> None:
    assert agents.tool is tool is dynavec_langgraph.tool
    assert agents.AgentTool is AgentTool and agents.interrupt is interrupt
    assert agents.AgentStep is AgentStep and agents.AgentResult is AgentResult
    assert agents.Plan is Plan and agents.PlanStep is PlanStep and agents.Planner is Planner
    assert agents.ReActAgent is ReActAgent is dynavec_langgraph.ReActAgent
    assert agents.DEFAULT_REACT_SYSTEM_PROMPT is DEFAULT_REACT_SYSTEM_PROMPT
    assert agents.DEFAULT_PLANNER_SYSTEM_PROMPT is DEFAULT_PLANNER_SYSTEM_PROMPT
    assert agents.ToolRegistry is ToolRegistry and agents.default_registry is default_registry
    assert agents.AgentState is AgentState is dynavec_langgraph.AgentState
    assert agents.Handoff is Handoff and agents.Supervisor is Supervisor
    assert agents.AgentLike is AgentLike
    assert agents.create_http_tool is create_http_tool
    assert agents.create_python_code_tool is create_python_code_tool
    assert agents.mcp_tools_from_session is mcp_tools_from_session
    assert agents.mcp_tools_from_session_async is mcp_tools_from_session_async
    assert agents.Checkpoint is Checkpoint and agents.BaseCheckpointer is BaseCheckpointer
    assert agents.MemoryCheckpointer is MemoryCheckpointer
    assert agents.DynamoDBCheckpointer is DynamoDBCheckpointer
    assert agents.Message is Message is chat.base.Message and agents.ToolCall is ToolCall
    for module, names in SUBMODULES.items():
        mod = importlib.import_module(module)
        for name in names:
            if hasattr(agents, name):
                assert getattr(mod, name) is getattr(agents, name), (module, name)
            if hasattr(chat, name):
                assert getattr(mod, name) is getattr(chat, name), (module, name)


def test_n6_agents_exports_the_union_of_the_branches() -> None:
    expected = {
        "ReActAgent", "interrupt", "tool", "AgentTool", "AgentResult", "AgentStep", "Plan",
        "PlanStep", "Planner", "AgentState", "AgentLike", "Supervisor", "Handoff",
        "ToolRegistry", "default_registry", "create_http_tool", "create_python_code_tool",
        "mcp_tools_from_session", "mcp_tools_from_session_async", "Checkpoint",
        "BaseCheckpointer", "MemoryCheckpointer", "DynamoDBCheckpointer",
    }  # fmt: skip
    assert expected <= set(agents.__all__)
    for name in agents.__all__:
        assert getattr(agents, name) is not None


def test_n7_chat_lists_ten_names_and_loads_providers_lazily() -> None:
    assert sorted(chat.__all__) == sorted(
        [
            "Role", "ToolCall", "Message", "Tool", "ChatResult", "ChatChunk", "ChatModel",
            "OpenAIChatModel", "AnthropicChatModel", "BedrockChatModel",
        ]
    )  # fmt: skip
    assert chat.OpenAIChatModel is OpenAIChatModel
    assert chat.AnthropicChatModel is AnthropicChatModel
    assert chat.BedrockChatModel is BedrockChatModel
    assert (Role, ToolCall, Tool, ChatResult, ChatChunk, ChatModel) == (
        chat.base.Role, chat.base.ToolCall, chat.base.Tool, chat.base.ChatResult,
        chat.base.ChatChunk, chat.base.ChatModel,
    )  # fmt: skip
    with pytest.raises(AttributeError, match="NoSuchModel"):
        chat.NoSuchModel  # noqa: B018


def test_n7_importing_chat_imports_no_provider_sdk() -> None:
    watched = PROVIDER_SDKS + PROVIDER_PACKAGES
    code = (
        "import sys\n"
        "import dynavec_langgraph.chat, dynavec_langgraph.agents\n"
        "import dynavec_langgraph.chat.openai, dynavec_langgraph.chat.anthropic\n"
        "import dynavec_langgraph.chat.bedrock\n"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {watched!r}))\n"
        "from dynavec_langgraph.chat import AnthropicChatModel\n"
        "AnthropicChatModel(api_key='k')\n"
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({watched!r})))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    before, after = done.stdout.splitlines()
    assert before == "[]"  # the submodules import without their SDK
    assert "'anthropic'" in after and "'langchain_anthropic'" in after  # at construction
    assert "'openai'" not in after and "'boto3'" not in after


def test_n8_dotted_string_paths_work_with_monkeypatch(monkeypatch: pytest.MonkeyPatch) -> None:
    def fake_init(self: Any, model: str = "gpt-4o", **kwargs: Any) -> None:
        self.model = model
        self._client = "a fake client"

    monkeypatch.setattr("dynavec_langgraph.chat.openai.OpenAIChatModel.__init__", fake_init)
    model = OpenAIChatModel("gpt-x")
    assert (model.model, model._client) == ("gpt-x", "a fake client")
    monkeypatch.setattr("dynavec_langgraph.agents.react.DEFAULT_REACT_SYSTEM_PROMPT", "patched")
    assert importlib.import_module(
        "dynavec_langgraph.agents.react"
    ).DEFAULT_REACT_SYSTEM_PROMPT == ("patched")
    monkeypatch.setattr("dynavec_langgraph.chat.anthropic.AnthropicChatModel.__init__", fake_init)
    assert AnthropicChatModel().model == "gpt-4o"
