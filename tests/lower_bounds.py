"""The lower bounds of ``pyproject.toml``'s dependencies are true: ``make lower-bounds``.

Each ``name>=X`` of ``[project].dependencies`` is pinned to ``name==X`` and installed (pip
resolves the rest) into a throwaway virtualenv kept in ``~/.cache/dynavec-langgraph/`` (one per
set of pins, so a run after the first costs a second). Then, with this checkout on
``PYTHONPATH``, a smoke run in that venv imports the package and drives an agent through a
pause and its resume, ``ReActAgent.run`` and ``ChatOpenAI``'s import. A bound that is too low
(an API the package uses arrived later) fails here, naming the pins.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "dynavec-langgraph"

SMOKE = """
from importlib.metadata import version
from langchain_openai import ChatOpenAI  # noqa: F401
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
import dynavec_langgraph as d
from dynavec_langgraph import ReActAgent, create_react_agent, interrupt, tool
from dynavec_langgraph.testing import ScriptedChatModel

for name, pinned in PINS.items():
    assert version(name) == pinned, f"{name} {version(name)} installed, {pinned} pinned"

@tool
def pay(amount: int) -> str:
    '''Pay.'''
    return "paid" if interrupt("approve", {"amount": amount}) == "yes" else "refused"

model = ScriptedChatModel(turns=[[{"name": "pay", "args": {"amount": 3}}], "Done."])
graph = create_react_agent(model, [pay], checkpointer=InMemorySaver(), version="v1")
config = {"configurable": {"thread_id": "1"}}
assert "__interrupt__" in graph.invoke({"messages": [("user", "go")]}, config)
out = graph.invoke(Command(resume="yes"), config)
assert [m.content for m in out["messages"][-2:]] == ["paid", "Done."], out
assert ReActAgent(ScriptedChatModel(turns=["hi"]), []).run("hello").output == "hi"
print("lower bounds ok:", ", ".join(f"{n}=={v}" for n, v in PINS.items()), "-", d.__file__)
"""


def pins(pyproject: Path = REPO / "pyproject.toml") -> dict[str, str]:
    """``{name: lower bound}`` of the project's (non-optional) dependencies."""
    found = {}
    for spec in tomllib.loads(pyproject.read_text())["project"]["dependencies"]:
        match = re.match(r"^([A-Za-z0-9_.-]+)(?:\[[^\]]*\])?\s*(.*)$", spec)
        if match is None:
            raise SystemExit(f"cannot read the dependency {spec!r}")
        name, rest = match.groups()
        lower = re.search(r">=\s*([0-9][^,;\s]*)", rest)
        if lower is None:
            raise SystemExit(f"{spec!r} has no lower bound (>=): give it one")
        found[name] = lower.group(1)
    return found


def main() -> int:
    pinned = pins()
    key = hashlib.sha256(repr(sorted(pinned.items())).encode()).hexdigest()[:12]
    venv = CACHE / f"lower-bounds-{key}"
    python = venv / "bin" / "python"
    if not (venv / ".installed").exists():
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
        subprocess.run(
            [str(python), "-m", "pip", "install", "-q", *(f"{n}=={v}" for n, v in pinned.items())],
            check=True,
        )
        (venv / ".installed").touch()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    smoke = f"PINS = {pinned!r}\n{SMOKE}"
    return subprocess.run([str(python), "-c", smoke], env=env, cwd=CACHE, check=False).returncode


if __name__ == "__main__":
    sys.exit(main())
