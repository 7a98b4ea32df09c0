"""The bank of the ``ReActAgent`` scenario tests (tests/test_agent.py), and the agent their
Temporal workers run (``--agent tests.temporal_scenarios:build``).

A scenario test builds its agent from a scripted model and a :class:`Bank` (tools with
counters). In process, both live in the test. On Temporal the tools and the model run in two
worker processes, so what a scenario needs crosses through a :class:`Store`, a folder both
sides see (``DYNAVEC_SCENARIO_STORE``), one file per thread and per bank, each change under a
file lock:

* the thread's file holds the turns the test's model has left and the calls the workers'
  model made (the test replays them on its own model: its ``calls`` and ``remaining`` then
  say what the workers' model saw);
* the bank's file holds its counters, which the workers' tools change and the test reads.

The workers' agent is one ``ReActAgent`` on PostgreSQL (``DYNAVEC_SCENARIO_DB``) with the
default ``system_prompt`` and ``max_steps``: its model (:func:`scripted_turn`) and its tools
(:class:`ThreadBank`) find the thread's script and bank from the thread id LangGraph runs
(``langgraph.config.get_config``).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import pickle
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from langchain_core.messages import BaseMessage, messages_from_dict, messages_to_dict
from langgraph.config import get_config

from dynavec_langgraph import AgentTool, ReActAgent, interrupt, tool
from dynavec_langgraph.testing import ScriptedChatModel, Turn

STORE_ENV = "DYNAVEC_SCENARIO_STORE"
DB_ENV = "DYNAVEC_SCENARIO_DB"


class Store:
    """A folder of pickled dicts shared by the test process and the workers."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def _path(self, name: str) -> Path:
        return self.folder / f"{hashlib.sha256(name.encode()).hexdigest()[:32]}.pickle"

    @contextmanager
    def change(self, name: str) -> Iterator[dict[str, Any]]:
        """The dict stored under ``name`` (empty at first), saved again on exit, under a lock."""
        path = self._path(name)
        with path.with_suffix(".lock").open("a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            data: dict[str, Any] = pickle.loads(path.read_bytes()) if path.exists() else {}
            yield data
            part = path.with_suffix(".part")
            part.write_bytes(pickle.dumps(data))
            part.replace(path)

    def read(self, name: str) -> dict[str, Any]:
        with self.change(name) as data:
            return dict(data)


def thread_key(thread_id: str) -> str:
    return f"thread:{thread_id}"


def _running_thread() -> str:
    thread_id = get_config()["configurable"]["thread_id"]
    assert isinstance(thread_id, str)
    return thread_id


class Bank:
    """Tools with counters: what reached the approval point, what decision the tool got,
    what was really transferred, how often the balance was read. In process the counters live
    in the object; once :meth:`share` put them in a :class:`Store`, they live there."""

    def __init__(self, balance: int = 500) -> None:
        self.name = f"bank:{uuid.uuid4().hex}"
        self._store: Store | None = None
        self._data: dict[str, Any] = {
            "balance": balance,
            "asked": [],
            "decisions": [],
            "transferred": [],
            "balance_reads": 0,
        }

    @classmethod
    def stored(cls, store: Store, name: str) -> Bank:
        """The bank :meth:`share` put in ``store`` under ``name``."""
        bank = cls.__new__(cls)
        bank.name, bank._store, bank._data = name, store, {}
        return bank

    def share(self, store: Store) -> None:
        """Keep the counters in ``store`` from now on (where the workers' tools change them)."""
        if self._store is None:
            with store.change(self.name) as data:
                data.update(self._data)
            self._store = store

    @contextmanager
    def _change(self) -> Iterator[dict[str, Any]]:
        if self._store is None:
            yield self._data
        else:
            with self._store.change(self.name) as data:
                yield data

    def _get(self, key: str) -> Any:
        return self._data[key] if self._store is None else self._store.read(self.name)[key]

    @property
    def balance(self) -> int:
        value: int = self._get("balance")
        return value

    @property
    def asked(self) -> list[int]:
        return list(self._get("asked"))

    @property
    def decisions(self) -> list[tuple[int, Any]]:
        return [(d[0], d[1]) for d in self._get("decisions")]

    @property
    def transferred(self) -> list[int]:
        return list(self._get("transferred"))

    @property
    def balance_reads(self) -> int:
        value: int = self._get("balance_reads")
        return value

    def here(self) -> Bank:
        """The bank a running tool changes (this one; a worker's: the running thread's)."""
        return self

    def tools(self) -> list[AgentTool]:
        @tool()
        def transfer_funds(amount: int) -> str:
            """Transfer money; a person must approve."""
            bank = self.here()
            with bank._change() as data:
                data["asked"].append(amount)
            decision = interrupt("approve_transfer", {"amount": amount})
            with bank._change() as data:
                data["decisions"].append((amount, decision))
                if decision == "approved":
                    data["balance"] -= amount
                    data["transferred"].append(amount)
            return f"Transferred {amount}." if decision == "approved" else "Cancelled."

        @tool
        def get_balance() -> int:
            """The account balance."""
            with self.here()._change() as data:
                data["balance_reads"] += 1
                balance: int = data["balance"]
            return balance

        @tool
        def wire(amount: int) -> str:
            """A transfer through a bank that is down after approval."""
            interrupt("approve_wire", {"amount": amount})
            raise ConnectionError("bank offline")

        return [transfer_funds, get_balance, wire]


class ThreadBank(Bank):
    """The workers' bank: each tool call changes the bank of the thread it runs in."""

    def __init__(self, store: Store) -> None:
        super().__init__()
        self.store = store

    def here(self) -> Bank:
        script = self.store.read(thread_key(_running_thread()))
        return Bank.stored(self.store, script["bank"])


def scripted_turn(store: Store) -> Callable[[list[BaseMessage]], Turn]:
    """The workers' model: the next turn the thread's test left, each call recorded."""

    def turn(messages: list[BaseMessage]) -> Turn:
        thread_id = _running_thread()
        with store.change(thread_key(thread_id)) as script:
            if not script.get("turns"):
                raise RuntimeError(f"the script of thread {thread_id!r} has no turn left")
            script["calls"].append(messages_to_dict(messages))
            given: Turn = script["turns"].pop(0)
        return given

    return turn


def share_script(store: Store, thread_id: str, turns: list[Any], bank: Bank | None) -> None:
    """Give the workers the turns left of the test's model and the test's bank for a thread."""
    if bank is not None:
        bank.share(store)
    with store.change(thread_key(thread_id)) as script:
        script.update(turns=list(turns), calls=[], bank=bank.name if bank else None)


def calls_made(store: Store, thread_id: str) -> list[list[BaseMessage]]:
    """The messages of each call the workers' model made for the thread since it was shared."""
    return [messages_from_dict(c) for c in store.read(thread_key(thread_id)).get("calls", [])]


def build() -> ReActAgent:
    """The scenario agent of every worker, on the shared PostgreSQL database."""
    store = Store(Path(os.environ[STORE_ENV]))
    model = ScriptedChatModel(policy=scripted_turn(store), max_recorded_calls=0)
    return ReActAgent(model, ThreadBank(store).tools(), checkpointer=os.environ[DB_ENV])
