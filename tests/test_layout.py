"""Each rule has one home: no import cycles, no module using another's private names, and one
reader of the interrupt value."""

from __future__ import annotations

import ast
import dataclasses
import functools
import inspect
import re
import subprocess
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from langgraph.types import Interrupt

import dynavec_langgraph
from dynavec_langgraph._dynavec.view import interrupted_marker
from dynavec_langgraph._pauses.value import interrupt_fields
from dynavec_langgraph.interrupt import ToolCallRef, pause_value

PACKAGE = Path(dynavec_langgraph.__file__).parent


def _dotted(path: Path) -> str:
    """``chat.base`` for ``PACKAGE/chat/base.py``, ``chat`` for ``PACKAGE/chat/__init__.py``."""
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


_FILES = {_dotted(p): p for p in PACKAGE.rglob("*.py") if p != PACKAGE / "__init__.py"}
MODULES = sorted(_FILES)
"""Every module of the package but its ``__init__``, subpackages included (``chat.base``)."""


@functools.cache
def _source(module: str) -> str:
    return _FILES[module].read_text()


@functools.cache
def _tree(module: str) -> ast.Module:
    """The module's syntax tree, parsed once for the tests below (they only read it)."""
    return ast.parse(_source(module))


@functools.cache
def _nodes(module: str) -> tuple[ast.AST, ...]:
    """Every node of the module's syntax tree (``ast.walk``'s order), walked once."""
    return tuple(ast.walk(_tree(module)))


def _target(imported: str) -> str:
    """The module of ``MODULES`` an ``from dynavec_langgraph.X import ...`` line reads."""
    name = imported.removeprefix("dynavec_langgraph.")
    while name not in _FILES and "." in name:
        name = name.rsplit(".", 1)[0]
    return name


def _imports(module: str, *, top_level_only: bool) -> list[ast.ImportFrom]:
    tree = _tree(module)
    nodes = tree.body if top_level_only else _nodes(module)
    return [
        n
        for n in nodes
        if isinstance(n, ast.ImportFrom) and (n.module or "").startswith("dynavec_langgraph.")
    ]


def test_no_module_imports_another_modules_private_names() -> None:
    private = [
        f"{m}: from {n.module} import {a.name}"
        for m in MODULES
        for n in _imports(m, top_level_only=False)
        for a in n.names
        if a.name.startswith("_")
    ]
    assert private == []


LAYERS: tuple[tuple[str, frozenset[str]], ...] = (
    (
        "foundations: errors, wire names, LangGraph names, messages and records, the audit "
        "trail's storage, the resume locks, the chat-model types, dynavec's self-contained topics",
        frozenset(
            {
                "_approvals", "_approvals.links", "_audit", "_audit.entries", "_audit.in_graph",
                "_audit.notifications", "_audit.storage", "_audit.switch", "_audit.trail",
                "_audit.verify", "_dynavec", "_dynavec.conversion", "_dynavec.memory",
                "_dynavec.planner", "_dynavec.records", "_dynavec.supervisor", "_errors", "_extras",
                "_graph", "_graph.call_ids", "_graph.conversation_view", "_graph.messages",
                "_graph.run_data", "_graph.subagent_cause", "_lg_names", "_names", "_pauses",
                "_pauses.digest", "_persistence.dynamodb.values", "_persistence.kinds",
                "_persistence.locks", "_persistence.serde", "_persistence.stored", "_plans",
                "_storable",
                "_types", "chat", "chat._providers", "chat.anthropic", "chat.base", "chat.bedrock",
                "chat.openai", "exceptions", "memory", "planner", "records", "supervisor",
                "testing",
            }
        ),
    ),
    (
        "pauses and tools: interrupt() and its value, decisions, approval policies, the "
        "exactly-once marks and claims, the tool types, the record view",
        frozenset(
            {
                "_audit.hooks", "_dynavec.connectors", "_dynavec.models", "_dynavec.registry",
                "_dynavec.view", "_exactly_once", "_exactly_once.claims", "_exactly_once.gate",
                "_exactly_once.guarded", "_exactly_once.keys", "_exactly_once.marks",
                "_exactly_once.shown", "_exactly_once.wait", "_graph.binding", "_pauses.approval",
                "_pauses.ask", "_pauses.decisions", "_pauses.policy", "_pauses.policy.answers",
                "_pauses.policy.ask", "_pauses.policy.doors", "_pauses.policy.events",
                "_pauses.policy.scope", "_pauses.policy.spec", "_pauses.signed_in", "_pauses.value",
                "_tools", "_tools.adapters", "_tools.agent_tool", "_tools.calls", "_tools.policies",
                "_tools.schemas", "approval", "connectors", "interrupt", "registry",
            }
        ),
    ),
    (
        "persistence: dynavec's checkpointers (DynamoDB included), the saver wrappers, the "
        "adapter, connection strings",
        frozenset(
            {
                "_persistence", "_persistence.adapter", "_persistence.base",
                "_persistence.connections", "_persistence.dynamodb",
                "_persistence.dynamodb.checkpointer", "_persistence.dynamodb.lock",
                "_persistence.dynamodb.records", "_persistence.dynamodb.table",
                "_persistence.history", "_persistence.records", "_persistence.scratch",
                "checkpoint", "dynamodb", "savers",
            }
        ),
    ),
    (
        "the graph's parts: the agent's spec, state and reducers, task planning, routing, the "
        "tool call, the nodes",
        frozenset(
            {"_graph.nodes", "_graph.routing", "_graph.spec", "_graph.state", "_graph.tasks",
            "_graph.tool_call", "_graph.tool_errors"}
        ),
    ),
    (
        "the create_agent mirror, the prebuilt options",
        frozenset(
            {
                "_graph.options", "_graph.prebuilt", "_middleware", "_middleware.face",
                "_middleware.graph", "_middleware.hooks", "_middleware.model_node",
                "_middleware.options", "_middleware.per_call_review", "_middleware.structured",
                "_middleware.tool_calls",
            }
        ),
    ),
    ("the factory", frozenset({"_graph.factory", "_graph.create_agent"})),
    (
        "runs: ReActAgent, the guarded resume, events, the inbox, the remote agent, dynavec's "
        "graph engine, Temporal, the demo",
        frozenset(
            {
                "_agent", "_agent.agent", "_agent.core", "_agent.reads", "_agent.resumes",
                "_agent.runs", "_approvals.inbox", "_demo", "_dynavec.flow",
                "_dynavec.flow.conditions", "_dynavec.flow.graph", "_dynavec.flow.in_process",
                "_dynavec.flow.parts", "_dynavec.flow.results", "_dynavec.flow.rounds", "_remote",
                "_remote.agent", "_remote.audit", "_remote.errors", "_remote.expiry",
                "_remote.inbox", "_remote.requests", "_remote.runs", "_remote.server",
                "_remote.threads", "_resuming", "_resuming.answers", "_resuming.checks",
                "_resuming.guarded", "_resuming.reading", "audit", "demo", "events", "remote",
                "temporal", "temporal._client", "temporal._shapes", "temporal._temporalio",
                "temporal._worker", "temporal._workflow",
            }
        ),
    ),
    (
        "entry points: the command line, Studio's graph, the AG-UI app, signed links' app, the "
        "dynavec.agents shim",
        frozenset(
            {
                "_agui", "_agui.app", "_agui.decisions", "_agui.events", "_agui.extra",
                "_agui.pauses", "_approvals.link_app", "_cli", "_cli.__main__", "_cli.audit",
                "_cli.common", "_cli.db", "_cli.demo", "_cli.inbox", "agents", "agents.base",
                "agents.connectors", "agents.graph", "agents.handoff", "agents.planner",
                "agents.react", "agents.registry", "agents.state", "agents.supervisor", "agui",
                "links", "studio", "temporal.__main__",
            }
        ),
    ),
)  # fmt: skip
"""The package's layers, bottom first (README "Layout"): a module imports modules of its own
layer or of a lower one, never of a higher one (every import counts: function-level ones and
those under ``if TYPE_CHECKING:`` too)."""


def _imported(module: str, node: ast.Import | ast.ImportFrom) -> Iterator[str]:
    """The modules of ``MODULES`` one import statement of ``module`` names: ``import
    dynavec_langgraph.x``, ``from dynavec_langgraph.x import ...``, ``from dynavec_langgraph
    import _x`` and the relative forms (``from . import x``, ``from ..x import y``)."""
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names if a.name.startswith("dynavec_langgraph.")]
        yield from (_target(n) for n in names)
        return
    if node.level:  # relative: from the package holding ``module``
        package = _dotted(_FILES[module]).split(".")
        if _FILES[module].name != "__init__.py":
            package = package[:-1]
        package = package[: len(package) - (node.level - 1)] if node.level > 1 else package
        base = ".".join([*package, *([node.module] if node.module else [])]).strip(".")
    elif node.module == "dynavec_langgraph" or (node.module or "").startswith("dynavec_langgraph."):
        base = str(node.module).removeprefix("dynavec_langgraph").removeprefix(".")
    else:
        return
    for alias in node.names:
        full = f"{base}.{alias.name}".lstrip(".")
        yield full if full in _FILES else _target(f"dynavec_langgraph.{base}")


@functools.cache
def _deps(module: str) -> frozenset[str]:
    """Every package module ``module`` imports, wherever the import is: at the top, under
    ``if TYPE_CHECKING:``, inside a function or a method. An import the type checker alone
    reads, or one a function makes on first use, still ties the two modules together: the
    lower one could not be understood, checked or moved without the higher one."""
    deps = {
        d
        for node in _nodes(module)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for d in _imported(module, node)
    }
    return frozenset(d for d in deps if d in _FILES and d != module)


def _graph() -> dict[str, frozenset[str]]:
    """Every module's imports, all of them (no exceptions: none goes the wrong way)."""
    return {m: _deps(m) for m in MODULES}


def _cycles(graph: dict[str, frozenset[str]]) -> list[list[str]]:
    """Every import cycle of ``graph`` (each once, from its first module by name), shortest
    first: ``["a", "b", "a"]`` for ``a`` importing ``b`` importing ``a``."""
    cycles: list[list[str]] = []

    def walk(path: list[str]) -> None:
        for dep in sorted(graph.get(path[-1], ())):
            if dep == path[0]:
                cycles.append([*path, dep])
            elif dep not in path and dep > path[0]:
                walk([*path, dep])

    for m in sorted(graph):
        walk([m])
    return sorted(cycles, key=lambda c: (len(c), c))


def test_module_imports_have_no_cycle() -> None:
    """No cycle, counting every import (``if TYPE_CHECKING:`` and function-level ones too);
    on failure the cycles are listed shortest first, a to-do list."""
    cycles = _cycles(_graph())
    shown = "\n".join(" -> ".join(c) for c in cycles[:50])
    more = f"\n... and {len(cycles) - 50} longer" if len(cycles) > 50 else ""
    assert cycles == [], f"{len(cycles)} import cycles:\n{shown}{more}"
    assert len(MODULES) > 20  # the walk saw the package


def test_the_import_graph_counts_every_kind_of_import() -> None:
    """The graph sees imports under ``if TYPE_CHECKING:``, inside functions and methods,
    ``import dynavec_langgraph.x`` and relative ones; and the cycle walk finds a cycle."""
    probe = ast.parse(
        "from typing import TYPE_CHECKING\n"
        "import dynavec_langgraph._errors\n"
        "if TYPE_CHECKING:\n"
        "    from dynavec_langgraph._tools import AgentTool\n"
        "def f():\n"
        "    from dynavec_langgraph import _pauses\n"
        "class C:\n"
        "    def m(self):\n"
        "        from . import registry\n"
        "        from .chat.base import Message\n"
    )
    found = {
        d
        for node in ast.walk(probe)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for d in _imported("_types", node)
    }
    assert found == {"_errors", "_tools", "_pauses", "registry", "chat.base"}
    relative = ast.parse("from . import base\nfrom .. import _errors\nfrom ..chat import openai\n")
    assert [
        d for node in relative.body if isinstance(node, ast.ImportFrom)
        for d in _imported("chat.anthropic", node)
    ] == ["chat.base", "_errors", "chat.openai"]  # fmt: skip
    ring = {"a": frozenset({"b"}), "b": frozenset({"c", "a"}), "c": frozenset({"a"})}
    assert _cycles(ring) == [["a", "b", "a"], ["a", "b", "c", "a"]]


def _layer_of() -> dict[str, int]:
    return {m: i for i, (_, members) in enumerate(LAYERS) for m in members}


def test_every_module_has_one_layer() -> None:
    placed = [m for _, members in LAYERS for m in members]
    assert len(placed) == len(set(placed))  # in one layer only
    assert sorted(placed) == MODULES  # every module, and no module that is gone


def test_no_module_imports_a_higher_layer() -> None:
    layer = _layer_of()
    upward = [
        f"{m} ({LAYERS[layer[m]][0].split(':')[0]}) imports {d} "
        f"({LAYERS[layer[d]][0].split(':')[0]})"
        for m, deps in _graph().items()
        for d in sorted(deps)
        if layer[d] > layer[m]
    ]
    assert upward == []


def test_the_factory_is_the_only_importer_of_the_middleware_code() -> None:
    importers = sorted(
        m
        for m, deps in _graph().items()
        if not m.startswith("_middleware") and any(d.startswith("_middleware") for d in deps)
    )
    assert importers == ["_graph.factory"]
    assert [m for m, deps in _graph().items() if "_graph.factory" in deps] == sorted(
        ["_agent.core", "_graph.create_agent", "_demo"]
    )  # the faces on top, nothing below


TYPED_MODULES = (
    "_graph.options", "_graph.create_agent", "_graph.factory", "_middleware.face",
    "_middleware.graph", "_middleware.model_node", "_middleware.options", "_middleware.tool_calls",
    "_graph.nodes", "_graph.prebuilt", "_graph.spec",
)  # fmt: skip
"""The factory, its faces, its spec and the nodes it builds: what truly is ``Any`` there (the
user's values) is named by an alias of ``_types`` (``UserPayload``, ``UserState``, ...)."""


def _any_per_100_lines(module: str) -> float:
    source = _source(module)
    lines = [line for line in source.splitlines() if line.strip()]
    return 100 * len(re.findall(r"\bAny\b", source)) / max(1, len(lines))


def test_the_factory_takes_one_typed_spec_and_names_its_payloads() -> None:
    """The faces (``create_react_agent``, ``create_agent``, ``ReActAgent``) hand the factory one
    ``AgentSpec``, not a relay of keywords; the factory's modules write ``Any`` at most 3 times
    per 100 non-blank lines (issue 39)."""
    from dynavec_langgraph._graph.factory import build_agent
    from dynavec_langgraph._graph.spec import AgentSpec

    assert list(inspect.signature(build_agent).parameters) == ["spec"]
    assert dataclasses.is_dataclass(AgentSpec) and AgentSpec.__dataclass_params__.frozen  # type: ignore[attr-defined]
    dense = {m: round(_any_per_100_lines(m), 1) for m in TYPED_MODULES}
    assert {m: n for m, n in dense.items() if n > 3} == {}


def test_any_is_at_most_3_per_100_lines_overall_and_in_each_module_over_200_lines() -> None:
    """``Any`` at most 3 times per 100 non-blank lines in the whole package and in every module
    over 200 non-blank lines (issue 39); what truly is ``Any`` is named by an alias of
    ``_types``."""
    count = {m: len(re.findall(r"\bAny\b", _source(m))) for m in _FILES}
    lines = {m: sum(1 for line in _source(m).splitlines() if line.strip()) for m in _FILES}
    assert 100 * sum(count.values()) / sum(lines.values()) <= 3
    over = {m: count[m] for m in MODULES if lines[m] > 200 and 100 * count[m] / lines[m] > 3}
    assert over == {}


def test_every_module_imports_first_in_a_fresh_interpreter() -> None:
    code = (
        "import importlib, sys\n"
        f"for m in {MODULES!r}:\n"
        "    for k in [k for k in sys.modules if k.startswith('dynavec_langgraph')]:\n"
        "        del sys.modules[k]\n"
        "    importlib.import_module('dynavec_langgraph.' + m)\n"
        "print('ok', len(" + repr(MODULES) + "))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["ok", str(len(MODULES))]


def test_interrupt_fields_reads_the_package_value_and_plain_langgraph_values() -> None:
    call: ToolCallRef = {"id": "call_1", "name": "send", "args": {}}
    ours = pause_value(
        "approve_send", {"to": "x"}, tool_call=call, name="send", args={}, description="ok?"
    )
    fields = interrupt_fields(Interrupt(ours, id="1" * 32))
    assert (fields.node_id, fields.payload, fields.tool_call, fields.ours) == (
        "approve_send",
        {"to": "x"},
        call,
        True,
    )
    assert fields.tool_call_id == "call_1" and fields.label() == "approve_send"
    assert interrupt_fields(ours) == fields  # a value as a remote server sends it
    plain = interrupt_fields(Interrupt({"question": "why?"}, id="2" * 32))
    assert (plain.node_id, plain.payload, plain.tool_call, plain.ours) == (
        None,
        {"question": "why?"},
        None,
        False,
    )
    assert plain.label() == repr({"question": "why?"})
    assert interrupt_fields("why?").payload == "why?"
    request = {  # LangChain's HumanInTheLoopMiddleware
        "action_requests": [{"name": "send", "args": {"to": "x"}, "description": "d"}],
        "review_configs": [{"action_name": "send", "allowed_decisions": ["approve"]}],
    }
    hitl = interrupt_fields(Interrupt(request, id="3" * 32))
    assert (hitl.node_id, hitl.payload, hitl.tool_call, hitl.ours) == (
        "send",
        request,
        {"name": "send", "args": {"to": "x"}},
        False,
    )
    assert hitl.tool_call_id is None and hitl.label() == "send"
    no_actions: dict[str, list[Any]] = {"action_requests": [], "review_configs": []}
    assert interrupt_fields(no_actions).node_id is None


def test_interrupted_marker_is_built_from_the_first_pause() -> None:
    call: ToolCallRef = {"id": "call_7", "name": "send", "args": {}}
    value = pause_value("n", 3, tool_call=call, name="send", args={}, description="d")
    assert interrupted_marker(Interrupt(value, id="3" * 32), 2, "t") == {
        "node_id": "n",
        "payload": 3,
        "tool_call_id": "call_7",
        "step": 2,
        "thread_id": "t",
    }


def test_database_url_schemes_are_written_in_savers_only() -> None:
    prefixes = ('"sqlite:///"', '"postgresql://"', '"postgres://"')
    found = [f"{m}: {p}" for m in MODULES if m != "savers" for p in prefixes if p in _source(m)]
    assert found == []
    assert '"postgres://"' in (PACKAGE / "savers.py").read_text()


WIRE_PREFIX = "dynavec"
"""The prefix of the package's wire names (``dynavec_audit``, ``DYNAVEC_AUDIT``,
``DynavecThread``, ``dynavec-claim:`` ...), in any case."""


def _wire_name_declared(node: ast.AST) -> bool:
    """``NAME: Final = "dynavec..."`` or ``NAME = "DYNAVEC..."``: a string constant (a name in
    capitals, or one annotated ``Final``) whose value starts with :data:`WIRE_PREFIX`."""
    target: ast.expr
    if isinstance(node, ast.AnnAssign):
        target, value = node.target, node.value
        final = "Final" in ast.unparse(node.annotation)
    elif isinstance(node, ast.Assign) and len(node.targets) == 1:
        target, value, final = node.targets[0], node.value, False
    else:
        return False
    return (
        isinstance(target, ast.Name)
        and (final or target.id.lstrip("_").isupper())
        and isinstance(value, ast.Constant)
        and isinstance(value.value, str)
        and value.value.lower().startswith(WIRE_PREFIX)
    )


def test_wire_names_are_declared_in_names_only() -> None:
    """Every name the package writes where others read it (a config key, an environment
    variable, a store or checkpoint namespace, a Temporal workflow ...) is declared once, in
    ``_names``, and imported from there (issue 39): no other module declares a string constant
    with the wire prefix."""
    found = [
        f"{m}: {ast.unparse(node)}"
        for m in MODULES
        if m != "_names"
        for node in _nodes(m)
        if _wire_name_declared(node)
    ]
    assert found == []
    declared = [n for n in _nodes("_names") if _wire_name_declared(n)]
    assert len(declared) > 30  # the check sees the declarations it forbids elsewhere
    probe = ast.parse('A: Final = "dynavec_x"\n_B = "DYNAVEC_Y"\nc = "dynavec"\nD = "other"')
    assert [_wire_name_declared(n) for n in probe.body] == [True, True, False, False]


def test_only_the_interrupt_module_pauses_and_builds_the_pause_value() -> None:
    """_pauses.approval.py, the tool node and the rest pause through ``_pause.ask`` / ``interrupt``
    and build the value with ``pause_value``: nothing but the pause itself
    (``_pause``, behind the public ``interrupt`` module) calls LangGraph's ``interrupt`` or
    constructs an ``InterruptValue``."""
    home = "_pauses.ask"
    offenders: list[str] = []
    for m in MODULES:
        if m == home:
            continue
        for node in _nodes(m):
            if isinstance(node, ast.ImportFrom) and node.module in ("langgraph.types", "langgraph"):
                offenders += [
                    f"{m}: langgraph interrupt" for a in node.names if a.name == "interrupt"
                ]
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "InterruptValue"
            ):
                offenders.append(f"{m}: InterruptValue(...)")
    assert offenders == []
    assert "pause_value" in (PACKAGE / "_pauses/approval.py").read_text()


def test_interrupt_and_require_approval_ask_through_one_loop() -> None:
    """One ask path (issue 39): the ask loop is ``_pause.ask``; an approval policy plugs its
    checks into it (``_policy.ask.PolicyRules``) rather than running a second loop, so only the
    loop, the in-doubt replay and the per-call review of a redirected edit read an answer slot,
    and ``interrupt()`` and ``require_approval()`` ask through ``ask`` with ``rules_for``."""
    readers = sorted(
        m
        for m in MODULES
        for node in _nodes(m)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "answer_slot"
    )
    assert sorted(set(readers)) == [
        "_exactly_once.gate",
        "_middleware.per_call_review",
        "_pauses.ask",
    ]
    assert readers.count("_pauses.ask") == 1  # the one loop's one read
    for face in ("interrupt", "_pauses.approval"):
        called = {
            node.func.id
            for node in _nodes(face)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
        }
        assert {"ask", "rules_for"} <= called, face


def _class_attribute(node: ast.AST, attr: str) -> bool:
    """``type(x).<attr>`` or ``x.__class__.<attr>``."""
    if not (isinstance(node, ast.Attribute) and node.attr == attr):
        return False
    owner = node.value
    if isinstance(owner, ast.Attribute) and owner.attr == "__class__":
        return True
    return (
        isinstance(owner, ast.Call) and isinstance(owner.func, ast.Name) and owner.func.id == "type"
    )


def _is_class_name(node: ast.AST) -> bool:
    """``type(x).__name__`` or ``x.__class__.__name__``."""
    return _class_attribute(node, "__name__")


def _reads_class_module(node: ast.AST) -> bool:
    """``type(x).__module__`` or ``x.__class__.__module__``."""
    return _class_attribute(node, "__module__")


def _raised_texts(nodes: Iterable[ast.AST]) -> Iterator[tuple[str, int]]:
    """The pieces of text (35 characters or more) of every ``raise X(...)`` among ``nodes``."""
    for node in nodes:
        if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
            for part in ast.walk(node.exc):
                if isinstance(part, ast.Constant) and isinstance(part.value, str):
                    text = part.value.strip()
                    if len(text) >= 35:
                        yield text, part.lineno


def test_no_error_text_is_written_twice() -> None:
    """An error's words have one home: a text raised from two places is built by one
    function (most in ``_errors``: ``not_paused_text``, ``webhook_url_text`` ...), so the
    two errors cannot drift apart."""
    places: dict[str, list[str]] = {}
    for m in MODULES:
        for text, line in _raised_texts(_nodes(m)):
            places.setdefault(text, []).append(f"{m}:{line}")
    assert {text: where for text, where in places.items() if len(where) > 1} == {}
    probe = 'raise ValueError(f"{x}: a webhook URL starts with http:// or https://")'
    assert [t for t, _ in _raised_texts(ast.walk(ast.parse(probe)))] == [
        ": a webhook URL starts with http:// or https://"
    ]


def test_no_saver_is_recognised_by_its_module_name() -> None:
    """LangGraph's SQLite and PostgreSQL savers are told apart in one place
    (``_persistence.kinds.saver_kind``, by ``isinstance``), never by reading an object's
    class's module: ``type(saver).__module__.startswith("langgraph.checkpoint.sqlite")``
    passes for any class of that module and fails for a subclass defined elsewhere."""
    found = [
        f"{m}:{node.lineno}: {ast.unparse(node)}"
        for m in MODULES
        for node in _nodes(m)
        if isinstance(node, ast.Attribute) and _reads_class_module(node)
    ]
    assert found == []
    probe = ast.parse("type(saver).__module__").body[0]
    assert isinstance(probe, ast.Expr) and _reads_class_module(probe.value)


def test_no_class_is_recognised_by_its_name() -> None:
    """Objects are told apart by ``isinstance`` or a declared attribute, never by comparing
    their class's name (``type(x).__name__ == "..."`` / ``in {...}``): a class of that name
    from elsewhere would pass, a subclass would not."""
    found = [
        f"{m}:{node.lineno}: {ast.unparse(node)}"
        for m in MODULES
        for node in _nodes(m)
        if isinstance(node, ast.Compare)
        and any(_is_class_name(side) for side in [node.left, *node.comparators])
    ]
    assert found == []
    probe = ast.parse('type(model).__name__ == "DynavecChatModel"').body[0]
    assert isinstance(probe, ast.Expr) and isinstance(probe.value, ast.Compare)
    assert _is_class_name(probe.value.left)  # the check sees the form it forbids


MAX_MODULE_LINES = 700
"""No module of the package is longer (issue 39): a module that grows past it is split into a
folder named for its feature, one concern a module (``_agent/``, ``_policy/``, ...)."""


def test_no_module_is_over_700_lines() -> None:
    """Every module of the package, ``__init__`` files included, is at most 700 lines."""
    files = [*_FILES.values(), PACKAGE / "__init__.py"]
    long = {
        str(p.relative_to(PACKAGE)): n
        for p in files
        if (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES
    }
    assert long == {}
    assert len(files) == len(set(files)) > 100  # every module read, once
