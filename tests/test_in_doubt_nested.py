"""Issue 34, silent case 2, in process, for the package's agent NESTED in a parent graph:
``require_approval(pay)`` + ``on_crash="ask"`` as the node ``payments`` of a parent
``StateGraph`` compiled with the checkpointer (``tests/children/batch_pay.py``, shape
``nested``), the process SIGKILLed after the approved ``pay`` charged.

The crash marks are pending writes of the subgraph's checkpoint (namespace
``payments:<task id>``), not of the thread's; the parent's state lists the subgraph's pause
(``approve_pay``). The doors that read the marks read the pending subgraphs' checkpoints too
(``_exactly_once.shown.in_nested``): ``inbox list`` / ``inbox answer`` (each its own
process) and the AG-UI app (its ASGI interface, httpx) show and ask ``in_doubt_pay`` first.

Real parts: the fake payment service in its own process, the child SIGKILLed, a SQLite file and
the PostgreSQL server the tests start.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.runnables import RunnableConfig

from dynavec_langgraph.agui import create_agui_app
from tests.children.batch_pay import SERVICE_ENV, _connection, build, pay
from tests.children.scenario import open_saver
from tests.payment_service import PaymentService
from tests.test_agui import Client, answer, error, finished, interrupts
from tests.test_agui_in_doubt import APPROVE, _doubt
from tests.test_in_doubt_doors import CHILD, _cli, _crash, _env, _nodes, _run, service

__all__ = ["service"]  # the payment service's fixture, shared with tests/test_in_doubt_doors.py

CONFIG: RunnableConfig = {"configurable": {"thread_id": "t1"}}


def _approved_and_killed(db: str, service: PaymentService, tmp_path: Path, how: str) -> str:
    """The parent graph paused at ``approve_pay``, then approved in a child SIGKILLed while
    the approved ``pay`` ran (its charge reached the service); the call's key. ``how``:
    ``resume-id`` (by interrupt id, as the package's doors answer) or ``resume`` (a plain
    ``Command(resume=...)``)."""
    env = _env(service, tmp_path)
    assert _nodes(_run(db, "nested", env, "raw", "run", "t1", "pay the invoice")) == ["approve_pay"]
    return _crash(db, "nested", service, tmp_path, "raw", how, "t1", json.dumps("approved"))


def _stored(db: str) -> list[str]:
    """The pauses the parent's stored state lists (LangGraph's own ``get_state``)."""
    with open_saver(db) as saver:
        return [i.value["node_id"] for i in build("nested", saver).get_state(CONFIG).interrupts]


def _requests(service: PaymentService) -> list[str]:
    return [r["key"] for r in service.stats()["requests"]]


# --- 1. the inbox ------------------------------------------------------------------------


@pytest.mark.service  # child processes and the payment service
def test_nested_after_a_crash_behind_an_approval_the_inbox_asks_the_in_doubt_question_first(
    db: str, service: PaymentService, tmp_path: Path
) -> None:
    """``inbox list`` (text and ``--json``) shows ``in_doubt_pay`` with its key, not the
    ``approve_pay`` the parent's state still lists; the stale ``--approve`` is refused (exit
    2, nothing runs); ``--node in_doubt_pay`` approve asks the approval again; approving it
    runs ``pay`` again under its key: two requests, one charge."""
    key = _approved_and_killed(db, service, tmp_path, "resume-id")
    env = _env(service, tmp_path)
    where = ("--db", db, "--graph", f"{CHILD}:graph_nested")
    assert _stored(db) == ["approve_pay"]

    listed = _cli(env, "list", *where, "--json")
    assert listed.returncode == 0, listed.stderr
    [row] = json.loads(listed.stdout)
    assert row["node_id"] == "in_doubt_pay" and row["payload"]["idempotency_key"] == key
    text = _cli(env, "list", *where)
    assert text.returncode == 0, text.stderr
    assert "in_doubt_pay" in text.stdout and key in text.stdout
    assert "approve_pay" not in text.stdout
    assert _stored(db) == ["approve_pay"]  # listing wrote nothing

    refused = _cli(env, "answer", *where, "--thread", "t1", "--approve")
    assert refused.returncode == 2, (refused.stdout, refused.stderr)
    assert "may or may not have run" in refused.stderr and key in refused.stderr
    assert "The thread now asks 'in_doubt_pay'" in refused.stderr
    assert "Traceback" not in refused.stderr
    assert _requests(service) == [key]  # nothing ran
    assert _stored(db) == ["in_doubt_pay"]  # asked now, durably

    decided = ("--node", "in_doubt_pay", "--decision", json.dumps({"type": "approve"}))
    again = _cli(env, "answer", *where, "--thread", "t1", *decided)
    assert again.returncode == 0, (again.stdout, again.stderr)
    assert _stored(db) == ["approve_pay"]  # the approval is asked again (the crash lost it)
    assert _requests(service) == [key]

    done = _cli(env, "answer", *where, "--thread", "t1", "--approve")
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert "replayed=True" in done.stdout
    assert _requests(service) == [key, key] and len(service.stats()["charges"]) == 1
    assert json.loads(_cli(env, "list", *where, "--json").stdout) == []


@pytest.mark.service  # child processes and the payment service
def test_nested_after_a_crash_an_answer_by_the_approvals_interrupt_id_is_refused(
    db: str, service: PaymentService, tmp_path: Path
) -> None:
    """The in-doubt question gets the approval's interrupt id (LangGraph keys an id by the
    answers its task stored; the approval's, sent by id, died with the run), so an answer by
    that id given before the question was asked was meant for the approval: refused (exit 2,
    nothing runs), not taken as "run it again"."""
    key = _approved_and_killed(db, service, tmp_path, "resume-id")
    env = _env(service, tmp_path)
    where = ("--db", db, "--graph", f"{CHILD}:graph_nested")
    with open_saver(db) as saver:
        (approval,) = build("nested", saver).get_state(CONFIG).interrupts
    [row] = json.loads(_cli(env, "list", *where, "--json").stdout)
    assert row["node_id"] == "in_doubt_pay" and row["interrupt_id"] == approval.id

    decided = ("--node", approval.id, "--decision", json.dumps({"type": "approve"}))
    refused = _cli(env, "answer", *where, "--thread", "t1", *decided)
    assert refused.returncode == 2, (refused.stdout, refused.stderr)
    assert "may or may not have run" in refused.stderr and key in refused.stderr
    assert _requests(service) == [key] and _stored(db) == ["in_doubt_pay"]


# --- 2. the AG-UI app --------------------------------------------------------------------


class NestedClient(Client):
    """The AG-UI app of the nested parent graph on the database the children use."""

    def __init__(self, db: str) -> None:
        graph = build("nested")
        self.apps = {"nested": create_agui_app(graph, checkpointer=_connection(db), tools=[pay])}


MESSAGE = {"id": "m1", "role": "user", "content": "pay the invoice"}


def _agui_approved_and_killed(
    db: str, service: PaymentService, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[NestedClient, dict[str, Any], str]:
    """Paused for approval through the AG-UI app, approved (by interrupt id, as the app
    answers) in a child SIGKILLed while ``pay`` ran: the app, the approval's pause, the key."""
    monkeypatch.setenv(SERVICE_ENV, service.url)  # `pay` runs here once approved
    agui = NestedClient(db)
    [approval] = interrupts(agui.run("nested", "t1", messages=[MESSAGE]))
    assert approval["metadata"]["nodeId"] == "approve_pay"
    key = _crash(db, "nested", service, tmp_path, "raw", "resume-id", "t1", json.dumps("approved"))
    assert _stored(db) == ["approve_pay"]
    return agui, approval, key


def _approve_in_doubt_then_the_approval(
    agui: NestedClient, pause: dict[str, Any], key: str, service: PaymentService
) -> None:
    [asked] = interrupts(agui.run("nested", "t1", resume=[answer(pause["id"], APPROVE)]))
    assert asked["metadata"]["nodeId"] == "approve_pay"  # asked again: the crash lost it
    assert _requests(service) == [key]
    done = agui.run("nested", "t1", resume=[answer(asked["id"], APPROVE)])
    assert finished(done).endswith("charged ch_1 (42) replayed=True")
    assert _requests(service) == [key, key] and len(service.stats()["charges"]) == 1


@pytest.mark.service  # a child process SIGKILLed, the payment service
def test_nested_after_a_crash_the_agui_app_shows_the_in_doubt_question_not_the_approval(
    db: str, service: PaymentService, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run without a new message (the client shows the thread again) asks the in-doubt
    question (nothing runs) and ends with it, not with the ``approve_pay`` the parent's state
    listed; approving it asks the approval again; approving that runs ``pay`` again under its
    key: two requests, one charge.

    The question has the approval's interrupt id: LangGraph keys an id by the answers the
    task stored, and the approval's answer (sent by id) died with the run. Once the question
    is shown, an answer by that id is its answer."""
    agui, approval, key = _agui_approved_and_killed(db, service, tmp_path, monkeypatch)

    pause = _doubt(agui.run("nested", "t1", messages=[MESSAGE]), key)
    assert pause["id"] == approval["id"]
    assert _requests(service) == [key]  # nothing ran
    assert _stored(db) == ["in_doubt_pay"]  # asked, durably

    _approve_in_doubt_then_the_approval(agui, pause, key, service)


@pytest.mark.service  # a child process SIGKILLed, the payment service
def test_nested_after_a_crash_the_agui_app_refuses_the_old_approvals_answer(
    db: str, service: PaymentService, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The answer to the approval the client showed before the crash (its interrupt id)
    gets ``RUN_ERROR`` (``StaleDecisionError``: the call may have run), nothing runs; the
    in-doubt question is what the thread shows from then on."""
    agui, approval, key = _agui_approved_and_killed(db, service, tmp_path, monkeypatch)

    refused = error(agui.run("nested", "t1", resume=[answer(approval["id"], APPROVE)]))
    assert refused["code"] == "StaleDecisionError", refused
    assert "may or may not have run" in refused["message"] and key in refused["message"]
    assert _requests(service) == [key]
    assert _stored(db) == ["in_doubt_pay"]

    pause = _doubt(agui.run("nested", "t1"), key)
    _approve_in_doubt_then_the_approval(agui, pause, key, service)


# --- 3. the raw parent graph -------------------------------------------------------------


@pytest.mark.service  # child processes and the payment service
def test_nested_after_a_crash_behind_an_approval_the_raw_parent_graph_asks_in_doubt(
    db: str, service: PaymentService, tmp_path: Path
) -> None:
    """LangGraph's own doors on the parent: ``invoke(None)`` shows the in-doubt pause;
    ``Command(resume="approved")`` (the stale approval's answer) is not applied: the in-doubt
    pause is pending with ``payload["superseded"]``; nothing runs. Approved, it asks the
    approval again; approved, the call runs again under its key: two requests, one charge."""
    key = _approved_and_killed(db, service, tmp_path, "resume")
    env = _env(service, tmp_path)

    shown = _run(db, "nested", env, "raw", "continue", "t1")
    assert shown["ok"] and _nodes(shown) == ["in_doubt_pay"], shown
    assert shown["interrupts"][0]["payload"]["idempotency_key"] == key
    assert _requests(service) == [key]

    moved = _run(db, "nested", env, "raw", "resume", "t1", json.dumps("approved"))
    assert moved["ok"] and _nodes(moved) == ["in_doubt_pay"], moved
    (value,) = moved["interrupts"]
    assert value["payload"]["superseded"] is True and value["payload"]["idempotency_key"] == key
    assert _requests(service) == [key]  # nothing ran

    again = _run(db, "nested", env, "raw", "resume", "t1", json.dumps({"type": "approve"}))
    assert again["ok"] and _nodes(again) == ["approve_pay"], again  # the approval, again
    assert _requests(service) == [key]
    done = _run(db, "nested", env, "raw", "resume", "t1", json.dumps("approved"))
    assert done["ok"] and done["interrupts"] == [], done
    assert "charged ch_1 (42) replayed=True" in done["messages"][-2]
    assert _requests(service) == [key, key] and len(service.stats()["charges"]) == 1
