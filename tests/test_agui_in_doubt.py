"""In-doubt calls through the AG-UI endpoint (issue 37): a ``pay`` tool with
``on_crash="ask"`` whose process was SIGKILLed after its charge reached the payment service
(``tests/children/batch_pay.py``, started warm), then the AG-UI app on the same SQLite file
driven through its ASGI interface (httpx).

The next AG-UI run on the thread ends with an interrupt outcome for the in-doubt question;
``resume[]`` with approve runs the call again under the same idempotency key, reject or
``cancelled`` does not; an answer meant for an older pause gets ``RUN_ERROR`` and nothing runs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dynavec_langgraph.agui import create_agui_app
from tests.children.batch_pay import A_LOG_ENV, SERVICE_ENV, build, pay
from tests.payment_service import PaymentService
from tests.test_agui import Client, Events, answer, error, finished, interrupts
from tests.test_in_doubt_doors import _a_runs, _crash, _env, _run, service

__all__ = ["service"]  # the payment service's fixture, shared with tests/test_in_doubt_doors.py

APPROVE = {"type": "approve"}


class InDoubtClient(Client):
    """The AG-UI app of ``batch_pay``'s two agents on the SQLite file the children use."""

    def __init__(self, db: Path) -> None:
        self.apps = {
            shape: create_agui_app(build(shape), checkpointer=f"sqlite:///{db}", tools=[pay])
            for shape in ("batch", "approval")
        }


@pytest.fixture
def agui(tmp_path: Path, service: PaymentService, monkeypatch: pytest.MonkeyPatch) -> InDoubtClient:
    monkeypatch.setenv(SERVICE_ENV, service.url)  # `pay` runs here once approved
    monkeypatch.setenv(A_LOG_ENV, str(tmp_path / "a.log"))
    return InDoubtClient(tmp_path / "agui.db")


def _doubt(events: Events, key: str) -> dict[str, Any]:
    """The one interrupt of ``events``: the in-doubt question of ``pay`` under ``key``."""
    [pause] = interrupts(events)
    assert pause["reason"] == "confirmation", pause
    assert "may or may not have run" in pause["message"] and key in pause["message"]
    kinds = [o["title"] for o in pause["responseSchema"]["oneOf"]]
    assert kinds == ["approve", "reject", "respond"]  # no edit: the call is as it was sent
    meta = pause["metadata"]
    assert meta["nodeId"] == "in_doubt_pay" and meta["args"] == {"amount": 42}
    assert meta["payload"]["in_doubt"] is True and meta["payload"]["idempotency_key"] == key
    return pause


def _results(events: Events) -> list[str]:
    return [str(e["content"]) for e in events if e["type"] == "TOOL_CALL_RESULT"]


def _crashed_batch(agui: InDoubtClient, service: PaymentService, tmp_path: Path) -> str:
    db = str(tmp_path / "agui.db")
    return _crash(db, "batch", service, tmp_path, "raw", "run", "t1", "pay the invoice")


@pytest.mark.service  # a child process SIGKILLed, the payment service
def test_a_crashed_batch_asks_in_doubt_on_the_next_run_and_approve_charges_once(
    agui: InDoubtClient, service: PaymentService, tmp_path: Path
) -> None:
    key = _crashed_batch(agui, service, tmp_path)
    assert _a_runs(tmp_path) == 1

    asked = agui.run("batch", "t1")  # the next run, no new message: continues the thread
    pause = _doubt(asked, key)
    assert len(service.stats()["requests"]) == 1 and _a_runs(tmp_path) == 1  # nothing ran

    done = agui.run("batch", "t1", resume=[answer(pause["id"], APPROVE)])
    assert "Done: a ok | charged ch_1 (42) replayed=True" == finished(done)
    stats = service.stats()
    assert [r["key"] for r in stats["requests"]] == [key, key]  # again, under its key
    assert len(stats["charges"]) == 1 and _a_runs(tmp_path) == 1

    again = error(agui.run("batch", "t1", resume=[answer(pause["id"], APPROVE)]))
    assert again["code"] == "STALE_INTERRUPT"
    assert len(service.stats()["requests"]) == 2


@pytest.mark.parametrize(
    "reply",
    [answer("", {"type": "reject"}), answer("", None, "cancelled")],
    ids=["reject", "cancelled"],
)
@pytest.mark.service  # a child process SIGKILLed, the payment service
def test_a_crashed_batch_reject_or_cancelled_does_not_run_it_again(
    agui: InDoubtClient, service: PaymentService, tmp_path: Path, reply: dict[str, Any]
) -> None:
    key = _crashed_batch(agui, service, tmp_path)
    pause = _doubt(agui.run("batch", "t1"), key)
    done = agui.run("batch", "t1", resume=[{**reply, "interruptId": pause["id"]}])
    finished(done)
    [skipped] = [r for r in _results(done) if r.startswith("Not run again")]
    assert key in skipped
    assert len(service.stats()["requests"]) == 1 and _a_runs(tmp_path) == 1


@pytest.mark.service  # a child process SIGKILLed, the payment service
def test_after_a_crash_behind_an_approval_the_old_approvals_answer_is_refused(
    agui: InDoubtClient, service: PaymentService, tmp_path: Path
) -> None:
    """Paused for approval through AG-UI, approved by another process that was killed while
    ``pay`` ran: the thread still lists the approval. Its answer (the approval's id) gets
    ``RUN_ERROR``, nothing runs; the next run shows the in-doubt question; the approval's id
    is stale from then on; approving it asks the approval again (the plain answer the killed
    process was given stays on the checkpoint, but a run answered by id does not take it: it
    was given for the pause before the crash); approving that runs ``pay`` again under its
    key."""
    db = str(tmp_path / "agui.db")
    message = {"id": "m1", "role": "user", "content": "pay the invoice"}
    [approval] = interrupts(agui.run("approval", "t1", messages=[message]))
    assert approval["metadata"]["nodeId"] == "approve_pay"
    key = _crash(db, "approval", service, tmp_path, "raw", "resume", "t1", json.dumps("approved"))

    refused = error(agui.run("approval", "t1", resume=[answer(approval["id"], APPROVE)]))
    assert refused["code"] == "StaleDecisionError", refused
    assert "may or may not have run" in refused["message"] and key in refused["message"]
    assert len(service.stats()["requests"]) == 1

    pause = _doubt(agui.run("approval", "t1", messages=[message]), key)
    stale = error(agui.run("approval", "t1", resume=[answer(approval["id"], APPROVE)]))
    assert stale["code"] == "STALE_INTERRUPT" and pause["id"] in stale["message"]
    assert len(service.stats()["requests"]) == 1

    [asked] = interrupts(agui.run("approval", "t1", resume=[answer(pause["id"], APPROVE)]))
    assert asked["metadata"]["nodeId"] == "approve_pay"  # asked again: not the kept answer
    assert len(service.stats()["requests"]) == 1
    done = agui.run("approval", "t1", resume=[answer(asked["id"], APPROVE)])
    assert finished(done).endswith("charged ch_1 (42) replayed=True")
    stats = service.stats()
    assert [r["key"] for r in stats["requests"]] == [key, key] and len(stats["charges"]) == 1


@pytest.mark.service  # a child process, the payment service
def test_a_thread_paused_by_another_door_is_read_as_it_is(
    agui: InDoubtClient, service: PaymentService, tmp_path: Path
) -> None:
    """A pause made by another process (no crash): a run without a new message shows it;
    with a new message it is refused (the thread waits for a decision)."""
    env = _env(service, tmp_path)
    paused = _run(str(tmp_path / "agui.db"), "approval", env, "raw", "run", "t1", "pay")
    assert [i["node_id"] for i in paused["interrupts"]] == ["approve_pay"]
    [shown] = interrupts(agui.run("approval", "t1"))
    assert shown["metadata"]["nodeId"] == "approve_pay" and shown["reason"] == "tool_call"
    message = {"id": "new", "role": "user", "content": "again"}
    assert error(agui.run("approval", "t1", messages=[message]))["code"] == "ThreadPausedError"
    assert service.stats()["requests"] == []
