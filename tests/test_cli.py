"""``dynavec-langgraph``: the demo, resume in another process, the approvals inbox, errors.

Every command runs as its own process (the installed console script or ``python -m``), with no
terminal on stdin. The demo's ledger (``DYNAVEC_DEMO_LEDGER``) records every tool run that
finished, so the tests count what ran, in which process.
"""

from __future__ import annotations

import io
import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.sqlite import SqliteSaver

from dynavec_langgraph._cli import main
from tests import inbox_graph
from tests.children.warm import run as warm_run
from tests.openai_server import OpenAIServer

SCRIPT = Path(sys.executable).parent / "dynavec-langgraph"


class Cli:
    """Runs the command line in a temp dir with a ledger: in fresh processes (``ok``, ``error``)
    or in this process (``main``, for steps that set up or check and need no new process)."""

    def __init__(self, workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
        self.workdir = workdir
        self.ledger = workdir / "ledger.jsonl"
        self.capsys = capsys

    def __call__(self, *args: str, script: bool = False) -> subprocess.CompletedProcess[str]:
        argv = [str(SCRIPT)] if script else [sys.executable, "-m", "dynavec_langgraph._cli"]
        return warm_run([*argv, *args], cwd=self.workdir, env=dict(os.environ), timeout=180)

    def ok(self, *args: str, script: bool = False) -> str:
        """Run a command in a new process; it must succeed. Return its stdout."""
        done = self(*args, script=script)
        assert done.returncode == 0, done.stderr
        assert done.stderr == ""
        return done.stdout

    def error(self, *args: str) -> str:
        """Run a command in a new process; it must fail with exit code 2. Return its stderr."""
        done = self(*args)
        assert done.returncode == 2, (done.stdout, done.stderr)
        assert done.stderr.startswith("dynavec-langgraph: error: "), done.stderr
        return done.stderr

    def main(self, *args: str, code: int = 0) -> str:
        """Run ``main(args)`` in this process; check the exit code. Return stdout (code 0) or
        stderr (otherwise)."""
        self.capsys.readouterr()
        assert main(list(args)) == code
        out, err = self.capsys.readouterr()
        if code == 0:
            assert err == ""
            return out
        assert err.startswith("dynavec-langgraph: error: "), err
        return err

    def entries(self) -> list[tuple[str, Any, Any]]:
        """``(tool, to, decision)`` of each ledger line, in order."""
        if not self.ledger.exists():
            return []
        lines = [json.loads(line) for line in self.ledger.read_text().splitlines()]
        return [(e["tool"], e.get("to"), e.get("decision")) for e in lines]


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Cli:
    """The command line in ``tmp_path``, scripted model (no OpenAI key), no terminal."""
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("DYNAVEC_DEMO_LEDGER", str(tmp_path / "ledger.jsonl"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    return Cli(tmp_path, capsys)


def _inbox(cli: Cli, db: str, *, new_process: bool = False) -> list[dict[str, Any]]:
    args = ("inbox", "list", "--db", db, "--json")
    rows: list[dict[str, Any]] = json.loads(cli.ok(*args) if new_process else cli.main(*args))
    return rows


def test_demo_with_a_decision_runs_end_to_end(cli: Cli) -> None:
    out = cli.ok("demo", "--thread", "t1", "--decision", "approve", script=True)

    lines = out.splitlines()
    assert lines[2].startswith("Paused at 'approve_transfer' (tool call transfer_funds call_")
    assert lines[:2] + lines[3:] == [
        "Thread 't1' in ./dynavec-demo.db",
        "User: Pay 120 to landlord",
        '  payload: {"amount": 120, "to": "landlord"}',
        'Resuming with "approved".',
        "  get_balance({}) -> Balance: 1000.",
        '  transfer_funds({"amount": 120, "to": "landlord"}) -> Transferred 120 to landlord.',
        "Answer: Done. Balance: 1000. Transferred 120 to landlord.",
    ]
    assert (cli.workdir / "dynavec-demo.db").is_file()  # the default SQLite file
    assert cli.entries() == [
        ("get_balance", None, None),
        ("transfer_funds", "landlord", "approved"),
    ]


def test_demo_without_terminal_pauses_and_resume_finishes_in_another_process(cli: Cli) -> None:
    out = cli.main("demo", "--db", "bank.db", "--thread", "rent", "--message", "pay 80 to Ann")

    assert '  payload: {"amount": 80, "to": "Ann"}' in out.splitlines()
    command = "dynavec-langgraph resume --db bank.db --thread rent --decision approve"
    assert out.splitlines()[-2:] == ["Thread 'rent' is paused. Resume it with:", f"  {command}"]
    assert cli.entries() == [("get_balance", None, None)]  # the transfer waits

    resumed = cli.ok(*shlex.split(command)[1:], script=True)  # the printed command, as is

    assert resumed.splitlines()[-1] == "Answer: Done. Balance: 1000. Transferred 80 to Ann."
    assert cli.entries() == [("get_balance", None, None), ("transfer_funds", "Ann", "approved")]
    cli.main("resume", "--db", "bank.db", "--thread", "rent", "--decision", "approve", code=2)
    assert len(cli.entries()) == 2  # nothing ran again


def test_a_new_message_on_a_finished_thread_continues_it(cli: Cli) -> None:
    cli.main(
        "demo",
        "--db",
        "b.db",
        "--thread",
        "t",
        "--message",
        "pay 10 to Al",
        "--decision",
        "approve",
    )
    out = cli.main(
        "demo", "--db", "b.db", "--thread", "t", "--message", "pay 15 to Bo", "--decision", "reject"
    )

    assert out.splitlines()[-1] == (
        "Answer: Done. Balance: 990. Transfer of 15 to Bo was rejected."
    )
    assert cli.entries() == [
        ("get_balance", None, None),
        ("transfer_funds", "Al", "approved"),
        ("get_balance", None, None),
        ("transfer_funds", "Bo", "rejected"),
    ]


def test_inbox_lists_and_answers_paused_threads_of_a_sqlite_file(cli: Cli) -> None:
    cli.main("demo", "--db", "ops.db", "--thread", "a", "--message", "pay 30 to Zed")
    cli.main("demo", "--db", "ops.db", "--thread", "b", "--message", "pay 40 to Yan")
    cli.main("demo", "--db", "ops.db", "--thread", "done", "--decision", "approve")

    rows = _inbox(cli, "sqlite:///ops.db", new_process=True)
    assert {r["thread_id"]: r["payload"] for r in rows} == {
        "a": {"amount": 30, "to": "Zed"},
        "b": {"amount": 40, "to": "Yan"},
    }
    assert {r["node_id"] for r in rows} == {"approve_transfer"}
    assert all(r["tool_call"]["name"] == "transfer_funds" for r in rows)
    assert all(r["since"].startswith("20") and "T" in r["since"] for r in rows)
    text = cli.main("inbox", "list", "--db", "ops.db")
    assert text.splitlines()[0] == "2 pending approval(s) in ops.db:"
    assert any(
        line.startswith("a  approve_transfer  since ")
        and line.endswith('payload {"amount": 30, "to": "Zed"}')
        for line in text.splitlines()
    )

    answered = cli.ok("inbox", "answer", "--db", "ops.db", "--thread", "a", "--reject")

    assert (
        answered.splitlines()[-1]
        == "Answer: Done. Balance: 1000. Transfer of 30 to Zed was rejected."
    )
    assert [r["thread_id"] for r in _inbox(cli, "ops.db")] == ["b"]
    decision = '{"decision": "approved", "comment": "ok by ops"}'
    cli.main("inbox", "answer", "--db", "ops.db", "--thread", "b", "--decision", decision)
    assert _inbox(cli, "ops.db") == []
    assert "No paused threads in ops.db." in cli.main("inbox", "list", "--db", "ops.db")
    transfers = [e for e in cli.entries() if e[0] == "transfer_funds"]
    assert transfers == [
        ("transfer_funds", "landlord", "approved"),
        ("transfer_funds", "Zed", "rejected"),
        ("transfer_funds", "Yan", "approved"),
    ]
    stderr = cli.main("inbox", "answer", "--db", "ops.db", "--thread", "a", "--approve", code=2)
    assert "thread 'a' is not paused" in stderr


def test_inbox_lists_and_answers_paused_threads_of_postgres(cli: Cli, pg_uri: str) -> None:
    out = cli.main("demo", "--db", pg_uri, "--thread", "pg-1", "--message", "pay 60 to Kim")
    assert "Thread 'pg-1' is paused. Resume it with:" in out

    [row] = _inbox(cli, pg_uri, new_process=True)
    assert (row["thread_id"], row["node_id"], row["payload"]) == (
        "pg-1",
        "approve_transfer",
        {"amount": 60, "to": "Kim"},
    )
    assert row["since"].startswith("20")

    answered = cli.ok("inbox", "answer", "--db", pg_uri, "--thread", "pg-1", "--approve")

    assert answered.splitlines()[-1] == "Answer: Done. Balance: 1000. Transferred 60 to Kim."
    assert _inbox(cli, pg_uri) == []
    assert cli.entries() == [("get_balance", None, None), ("transfer_funds", "Kim", "approved")]
    stderr = cli.main("inbox", "answer", "--db", pg_uri, "--thread", "nope", "--approve", code=2)
    assert "unknown thread 'nope'" in stderr


def test_errors_say_what_to_do(cli: Cli) -> None:
    cli.main("demo", "--db", "e.db", "--thread", "p")  # paused
    cli.main("demo", "--db", "e.db", "--thread", "f", "--decision", "approve")  # finished
    assert len(cli.entries()) == 3

    unknown = cli.error("resume", "--db", "e.db", "--thread", "ghost", "--decision", "approve")
    assert "unknown thread 'ghost': nothing to resume" in unknown
    assert "dynavec-langgraph inbox list --db e.db" in unknown
    finished = cli.main("resume", "--db", "e.db", "--thread", "f", "--decision", "approve", code=2)
    assert "thread 'f' is not paused: nothing to resume" in finished
    bad_json = cli.main(
        "inbox", "answer", "--db", "e.db", "--thread", "p", "--decision", "{no", code=2
    )
    assert "the decision '{no' is not approve, reject or JSON" in bad_json
    scheme = cli.main("inbox", "list", "--db", "mysql://h/db", code=2)
    assert "unknown database scheme 'mysql'" in scheme
    missing = cli.main(
        "resume", "--db", "missing.db", "--thread", "p", "--decision", "approve", code=2
    )
    assert "no SQLite database at 'missing.db'" in missing
    assert not (cli.workdir / "missing.db").exists()
    busy = cli.main("demo", "--db", "e.db", "--thread", "p", "--decision", "approve", code=2)
    assert "thread 'p' is paused and waits for a decision" in busy
    assert "dynavec-langgraph resume --db e.db --thread p --decision approve" in busy
    no_decision = cli.main("resume", "--db", "e.db", "--thread", "p", code=2)
    assert "no decision: add --decision approve" in no_decision
    invalid = cli.main(
        "resume", "--db", "e.db", "--thread", "p", "--decision", '{"decision": 1}', code=2
    )
    assert "'approve_transfer': the decision {'decision': 1} was refused" in invalid
    assert "still paused" in invalid

    assert len(cli.entries()) == 3  # no error ran a tool
    assert [r["thread_id"] for r in _inbox(cli, "e.db")] == ["p"]  # still paused, answerable
    out = cli.main("resume", "--db", "e.db", "--thread", "p", "--decision", '"rejected"')
    assert out.splitlines()[-1].endswith("Transfer of 120 to landlord was rejected.")


def test_demo_uses_chat_openai_when_a_key_is_set(
    cli: Cli, openai: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    def policy(messages: list[dict[str, Any]]) -> Any:
        if messages[-1]["role"] == "tool":
            return f"Sent. ({messages[-1]['content']})"
        return [{"name": "transfer_funds", "args": {"amount": 33, "to": "Eve"}}]

    openai.set_policy(policy)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("OPENAI_BASE_URL", openai.url)
    monkeypatch.setenv("OPENAI_MODEL", "gpt-test")

    paused = cli.main("demo", "--db", "oa.db", "--thread", "o", "--message", "send Eve 33")
    assert '  payload: {"amount": 33, "to": "Eve"}' in paused.splitlines()
    out = cli.ok("resume", "--db", "oa.db", "--thread", "o", "--decision", "approve")

    assert out.splitlines()[-1] == "Answer: Sent. (Transferred 33 to Eve.)"
    assert openai.rejections == []
    assert len(openai.requests) == 2  # one call per process; the pause made none
    assert {r["model"] for r in openai.requests} == {"gpt-test"}
    tools = {t["function"]["name"] for t in openai.requests[0]["tools"]}
    assert tools == {"get_balance", "transfer_funds"}
    assert openai.requests[1]["messages"][0]["role"] == "system"
    assert cli.entries() == [("transfer_funds", "Eve", "approved")]


def test_demo_on_a_terminal_prompts_for_the_decision(cli: Cli) -> None:
    controller, terminal = os.openpty()  # stdin is a terminal; stdout stays a pipe
    try:
        os.write(controller, b"perhaps\nreject\n")  # a bad answer is asked again
        done = subprocess.run(
            [str(SCRIPT), "demo", "--db", "tty.db", "--message", "pay 9 to Lu"],
            cwd=cli.workdir,
            env=dict(os.environ),
            stdin=terminal,
            capture_output=True,
            text=True,
            timeout=180,
        )
    finally:
        os.close(controller)
        os.close(terminal)

    assert done.returncode == 0, done.stderr
    prompt = "Decision (approve / reject / JSON): "
    assert done.stdout.count(prompt) == 2
    assert "the decision 'perhaps' is not approve, reject or JSON" in done.stdout
    assert 'Resuming with "rejected".' in done.stdout
    assert (
        done.stdout.splitlines()[-1]
        == "Answer: Done. Balance: 1000. Transfer of 9 to Lu was rejected."
    )
    assert cli.entries() == [("get_balance", None, None), ("transfer_funds", "Lu", "rejected")]


# --- inbox --graph / --node: threads paused by an agent that is not the demo ---------------

WIRE_GRAPH = "tests.inbox_graph:graph"
PARALLEL_GRAPH = "tests.inbox_graph:parallel_graph"


def _start_wire_thread(db: Path, thread_id: str, message: str, *, parallel: bool = False) -> None:
    """Run ``tests.inbox_graph``'s agent on the SQLite file ``db`` until it pauses."""
    graph = inbox_graph.parallel_graph if parallel else inbox_graph.graph
    with SqliteSaver.from_conn_string(str(db)) as saver:
        app = graph.copy(update={"checkpointer": saver})
        out = app.invoke(
            {"messages": [("user", message)]}, {"configurable": {"thread_id": thread_id}}
        )
    assert out["__interrupt__"]


def _checkpoint_id(db: Path, thread_id: str) -> str:
    with SqliteSaver.from_conn_string(str(db)) as saver:
        found = saver.get_tuple({"configurable": {"thread_id": thread_id}})
    assert found is not None
    return str(found.config["configurable"]["checkpoint_id"])


def test_inbox_answers_a_thread_of_another_agent_with_graph(cli: Cli) -> None:
    _start_wire_thread(cli.workdir / "w.db", "w1", "wire 50 to Ann")
    assert cli.entries() == [("lookup", "Ann", None)]  # the wire waits
    before = _checkpoint_id(cli.workdir / "w.db", "w1")

    [row] = _inbox(cli, "w.db")  # listing works with the demo graph too
    assert (row["node_id"], row["tool_call"]["name"]) == ("approve_wire", "wire")
    refused = cli.main("inbox", "answer", "--db", "w.db", "--thread", "w1", "--approve", code=2)
    assert "thread 'w1' waits for an approval of tool 'wire'" in refused
    assert "which this agent does not have (its tools: get_balance, transfer_funds)" in refused
    assert "Resume it with the agent that paused it (`inbox answer --graph MODULE:ATTR`)" in refused
    demo_resume = cli.main(
        "resume", "--db", "w.db", "--thread", "w1", "--decision", "approve", code=2
    )
    assert "tool 'wire'" in demo_resume
    assert _checkpoint_id(cli.workdir / "w.db", "w1") == before  # nothing written
    assert cli.entries() == [("lookup", "Ann", None)]
    assert [r["interrupt_id"] for r in _inbox(cli, "w.db")] == [row["interrupt_id"]]

    out = cli.main(
        "inbox", "answer", "--db", "w.db", "--thread", "w1", "--graph", WIRE_GRAPH, "--approve"
    )

    assert out.splitlines() == [
        "Answering thread 'w1' with \"approved\".",
        '  lookup({"to": "Ann"}) -> Ann is a known payee.',
        '  wire({"amount": 50, "to": "Ann"}) -> Wired 50 to Ann.',
        "Answer: Wired. Ann is a known payee. Wired 50 to Ann.",
    ]
    assert cli.entries() == [("lookup", "Ann", None), ("wire", "Ann", "approved")]
    assert _inbox(cli, "w.db") == []


def test_inbox_graph_accepts_a_file_in_a_fresh_process(cli: Cli) -> None:
    shutil.copy(Path(inbox_graph.__file__), cli.workdir / "agents.py")
    _start_wire_thread(cli.workdir / "f.db", "f1", "wire 9 to Bo")

    listed = cli.main("inbox", "list", "--db", "f.db", "--graph", "./agents.py:graph")
    [line] = listed.splitlines()[1:]
    assert line.startswith("f1  approve_wire  since ")
    assert "  tool wire  interrupt " in line
    assert line.endswith('payload {"amount": 9, "to": "Bo"}')
    out = cli.ok(
        "inbox",
        "answer",
        "--db",
        "f.db",
        "--thread",
        "f1",
        "--graph",
        "./agents.py:graph",
        "--reject",
    )

    assert out.splitlines()[-1] == "Answer: Wired. Bo is a known payee. Wire to Bo refused."
    assert cli.entries() == [("lookup", "Bo", None), ("wire", "Bo", "rejected")]


def test_inbox_answers_one_of_several_pending_approvals_with_node(cli: Cli) -> None:
    db = cli.workdir / "p.db"
    _start_wire_thread(db, "p1", "wire 5 to Ann and 7 to Bo", parallel=True)
    assert cli.entries() == [("lookup", "Ann", None)]
    rows = _inbox(cli, "p.db")
    ids = {r["payload"]["to"]: r["interrupt_id"] for r in rows}
    assert sorted(ids) == ["Ann", "Bo"] and len(set(ids.values())) == 2
    text = cli.main("inbox", "list", "--db", "p.db", "--graph", PARALLEL_GRAPH)
    assert all(f"  interrupt {i}  " in text for i in ids.values())
    before = _checkpoint_id(db, "p1")
    answer = ("inbox", "answer", "--db", "p.db", "--thread", "p1", "--graph", PARALLEL_GRAPH)

    several = cli.main(*answer, "--approve", code=2)
    assert "2 decisions are pending (" in several
    assert all(f"'approve_wire' (interrupt id {i})" in several for i in ids.values())
    assert "answer one with --node NODE_ID_OR_INTERRUPT_ID" in several
    twice = cli.main(*answer, "--node", "approve_wire", "--approve", code=2)
    assert "node id 'approve_wire' is pending 2 times" in twice
    unknown = cli.main(*answer, "--node", "approve_nothing", "--approve", code=2)
    assert "'approve_nothing' is not pending" in unknown
    assert _checkpoint_id(db, "p1") == before
    assert cli.entries() == [("lookup", "Ann", None)]

    first = cli.main(*answer, "--node", ids["Ann"], "--approve")

    assert "Paused at 'approve_wire' (tool call wire " in first
    assert '  payload: {"amount": 7, "to": "Bo"}' in first.splitlines()
    hint = (
        f"dynavec-langgraph inbox answer --db p.db --thread p1 --graph {PARALLEL_GRAPH} --approve"
    )
    assert first.splitlines()[-2:] == ["Thread 'p1' is still paused. Answer it with:", f"  {hint}"]
    assert cli.entries() == [("lookup", "Ann", None), ("wire", "Ann", "approved")]
    assert [r["interrupt_id"] for r in _inbox(cli, "p.db")] == [ids["Bo"]]

    last = cli.main(*answer, "--node", ids["Bo"], "--reject")

    assert last.splitlines()[-1] == (
        "Answer: Wired. Ann is a known payee. Wired 5 to Ann. Wire to Bo refused."
    )
    assert cli.entries() == [
        ("lookup", "Ann", None),
        ("wire", "Ann", "approved"),
        ("wire", "Bo", "rejected"),
    ]
    assert _inbox(cli, "p.db") == []


def test_a_bad_graph_spec_says_what_to_give(cli: Cli) -> None:
    _start_wire_thread(cli.workdir / "b.db", "b1", "wire 3 to Cy")
    answer = ("inbox", "answer", "--db", "b.db", "--thread", "b1", "--approve", "--graph")

    assert "use MODULE:ATTR, e.g. --graph mypkg.agents:graph" in cli.main(*answer, "agents", code=2)
    missing = cli.main(*answer, "no_such_mod.agents:graph", code=2)
    assert "no module named 'no_such_mod'" in missing
    assert "no file './nope.py'" in cli.main(*answer, "./nope.py:graph", code=2)
    no_attr = cli.main(*answer, "tests.inbox_graph:agent", code=2)
    assert "'tests.inbox_graph' has no attribute 'agent'" in no_attr
    not_graph = cli.main(*answer, "tests.inbox_graph:policy", code=2)
    assert "is a function, not a compiled graph" in not_graph
    assert cli.entries() == [("lookup", "Cy", None)]


def test_inbox_token_is_for_a_server_and_is_read_from_the_environment(
    cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--token`` (or ``DYNAVEC_SERVER_TOKEN``) goes to ``--server`` as a bearer token
    (tests/test_approvals_auth_server.py sends it to a server with auth)."""
    from dynavec_langgraph._cli import build_parser
    from dynavec_langgraph._cli.common import server_headers
    from dynavec_langgraph._names import TOKEN_ENV

    err = cli.main("inbox", "list", "--db", "x.db", "--token", "t0k", code=2)
    assert "--token is for --server" in err
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    parsed = build_parser().parse_args(["inbox", "list", "--server", "http://h", "--token", "a"])
    assert server_headers(parsed) == {"Authorization": "Bearer a"}
    monkeypatch.setenv(TOKEN_ENV, "b")
    parsed = build_parser().parse_args(["inbox", "history", "t1", "--server", "http://h"])
    assert server_headers(parsed) == {"Authorization": "Bearer b"}
