"""A tool that declares no ``on_crash`` (the default, ``"retry"``), killed after its effect, on
the raw graph under each of LangGraph's durability modes.

Real parts, as ``tests/test_exactly_once.py``: the fake payment service in its own process, the
agent in a child process (``tests/children/payment.py --policy none``) SIGKILLed once the charge
reached the service, on a SQLite file and on the PostgreSQL server the tests start. The saver
stores each checkpoint 0.3 s late (``--slow-put``: a slow database under LangGraph's background
saves), which under ``durability="async"`` used to let the tool charge before the model's turn
was stored: the thread then had nothing to continue, and the message sent again made a new call
under a new key, charged twice.

- ``"async"`` (LangGraph's default) and ``"sync"``: the call is continued (``invoke(None)``)
  under the same key; the service charges once.
- ``"exit"``: no checkpoint is stored before the run ends, so the crash loses the whole run (the
  user's message too); there is nothing to continue, and the message sent again is a new run
  whose call has a new key: the service charges again. Declaring ``on_crash`` changes nothing
  there. docs/exactly-once.md says so.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.payment_service import PaymentService
from tests.test_exactly_once import _crash, _opts, _run, service

__all__ = ["service"]  # the fixture, shared with tests/test_exactly_once.py

pytestmark = pytest.mark.service  # the payment service and the agent in processes of their own

SLOW = ("--slow-put", "0.3")


@pytest.mark.parametrize("durability", ["async", "sync"])
def test_an_undeclared_tool_is_continued_with_the_same_key(
    db: str, service: PaymentService, tmp_path: Path, durability: str
) -> None:
    mode = ("--durability", durability, *SLOW)
    key = _crash(db, service, "none", tmp_path / "hang", *mode)
    done = _run(*_opts(db, service, "none"), *mode, "continue", "t1")
    assert done["ok"] and done["interrupts"] == [] and done["next"] == []
    stats = service.stats()
    assert [r["key"] for r in stats["requests"]] == [key, key]  # the same call, the same key
    assert len(stats["charges"]) == 1
    assert [m["type"] for m in done["messages"]] == ["human", "ai", "tool", "ai"]
    assert done["messages"][-1]["content"] == f"Done: charged ch_1 (42) key={key} replayed=True"


@pytest.mark.parametrize("policy", ["none", "retry"])
def test_under_exit_durability_the_crash_loses_the_run_and_a_new_run_charges_again(
    db: str, service: PaymentService, tmp_path: Path, policy: str
) -> None:
    mode = ("--durability", "exit", *SLOW)
    key = _crash(db, service, policy, tmp_path / "hang", *mode)
    # nothing of the run was stored: the thread is empty, there is no call to continue
    again = _run(*_opts(db, service, policy), *mode, "run", "t1", "pay the invoice")
    assert again["ok"] and [m["type"] for m in again["messages"]] == ["human", "ai", "tool", "ai"]
    stats = service.stats()
    keys = [r["key"] for r in stats["requests"]]
    assert keys[0] == key and len(keys) == 2 and keys[1] != key  # a new call, a new key
    assert len(stats["charges"]) == 2  # what docs/exactly-once.md says "exit" gets
