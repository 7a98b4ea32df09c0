"""``dynavec_langgraph.agui`` through a real server and real clients: uvicorn on 127.0.0.1
serving ``tests.agui_graph:app`` on a SQLite file, driven by ``@ag-ui/client`` from Node
(``tests/agui_client/drive.mjs``: pause, resume one, several, cancel, stale, expiry,
concurrent answers, M-of-N). Each check reads the server's ledger: the side effect ran exactly
as decided. The npm packages are installed by ``npm ci`` from the committed lock into a cache
outside the clone (tests/agui_npm.py); a missing node/npm fails the test."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.parse
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from selenium import webdriver
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.wait import WebDriverWait

from tests.agui_npm import NpmProjectError, prepared
from tests.chromium import headless_chromium
from tests.pg import _free_port

pytestmark = pytest.mark.service

REPO = Path(__file__).resolve().parents[1]


@dataclass
class AguiServer:
    """The test graphs' AG-UI endpoints (``{url}/agents/<name>/``) and their ledger."""

    url: str
    ledger: Path

    def sent(self, thread: str) -> list[tuple[int, str]]:
        if not self.ledger.exists():
            return []
        rows = [json.loads(line) for line in self.ledger.read_text().splitlines()]
        return [(r["amount"], r["to"]) for r in rows if r["thread_id"] == thread]


@contextmanager
def _serving(work: Path, page: Path | None = None) -> Iterator[AguiServer]:
    """uvicorn serving ``tests.agui_graph:app`` on 127.0.0.1 (and ``page`` under ``/page/``),
    stopped by its PID."""
    port = _free_port()
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "DYNAVEC_AGUI_DB": str(work / "agui.db"),
        "DYNAVEC_DEMO_LEDGER": str(work / "ledger.jsonl"),
    }
    if page is not None:
        env["DYNAVEC_AGUI_PAGE"] = str(page)
    argv = [
        sys.executable, "-m", "uvicorn", "tests.agui_graph:app", "--host", "127.0.0.1",
        "--port", str(port), "--log-level", "warning",
    ]  # fmt: skip
    log = work / "server.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            argv, cwd=REPO, env=env, stdin=subprocess.DEVNULL, stdout=out,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"the AG-UI server did not start:\n{log.read_text()[-3000:]}")
                time.sleep(0.1)  # polling a server that is starting
        yield AguiServer(f"http://127.0.0.1:{port}", work / "ledger.jsonl")
    finally:
        proc.kill()  # by its PID
        proc.wait(timeout=10)


@pytest.fixture(scope="module")
def agui_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AguiServer]:
    with _serving(tmp_path_factory.mktemp("agui")) as server:
        yield server


@pytest.fixture(scope="module")
def node_client() -> Path:
    """``tests/agui_client`` with its packages installed (cached)."""
    return prepared("agui_client")


def drive(node_client: Path, server: AguiServer, scenario: str) -> dict[str, Any]:
    node = shutil.which("node")
    assert node is not None, "node not found: `make browser-tools` installs Node.js"
    done = subprocess.run(
        [node, "drive.mjs", server.url, scenario], cwd=node_client, capture_output=True,
        text=True, timeout=120, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    report: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return report


def test_node_pause_resume_one_then_stale_and_unknown_answers(
    node_client: Path, agui_server: AguiServer
) -> None:
    report = drive(node_client, agui_server, "pause_resume_one")
    paused = report["paused"]
    assert paused["error"] is None
    assert paused["events"][0] == "RUN_STARTED" and paused["events"][-1] == "RUN_FINISHED"
    assert "TOOL_CALL_START" in paused["events"]
    [pause] = paused["interrupts"]
    assert pause["reason"] == "tool_call" and pause["toolCallId"]
    assert [o["title"] for o in pause["responseSchema"]["oneOf"]] == [
        "approve", "edit", "reject", "respond",
    ]  # fmt: skip
    resumed = report["resumed"]
    assert resumed["error"] is None and resumed["interrupts"] == []
    assert resumed["lastText"] == "Done: sent 10 to Ann"
    assert "TEXT_MESSAGE_CONTENT" in resumed["events"] and "TOOL_CALL_RESULT" in resumed["events"]
    assert report["stale"]["error"]["code"] == "STALE_INTERRUPT"
    assert report["unknown"]["error"]["code"] == "STALE_INTERRUPT"
    assert agui_server.sent(report["thread"]) == [(10, "Ann")]


def test_node_resumes_several_interrupts_at_once_each_applied_once(
    node_client: Path, agui_server: AguiServer
) -> None:
    report = drive(node_client, agui_server, "resume_several")
    assert len(report["paused"]["interrupts"]) == 2
    resumed = report["resumed"]
    assert resumed["error"] is None and resumed["interrupts"] == []
    assert resumed["events"].count("TOOL_CALL_RESULT") == 2
    assert sorted(agui_server.sent(report["thread"])) == [(3, "Bob"), (10, "Ann")]


def test_node_an_invalid_edit_runs_nothing_and_cancelled_tells_the_model(
    node_client: Path, agui_server: AguiServer
) -> None:
    report = drive(node_client, agui_server, "invalid_then_cancel")
    assert report["invalid"]["error"]["code"] == "INVALID_ARGUMENTS"
    assert report["invalid"]["events"] == ["RUN_STARTED", "RUN_ERROR"]
    cancelled = report["cancelled"]
    assert cancelled["error"] is None and "not today" in cancelled["lastText"]
    assert agui_server.sent(report["thread"]) == []


def test_node_a_late_answer_to_an_expiring_approval_is_refused(
    node_client: Path, agui_server: AguiServer
) -> None:
    report = drive(node_client, agui_server, "expiry")
    [pause] = report["paused"]["interrupts"]
    assert pause["expiresAt"] and pause["metadata"]["approval"]["expires_at"] == pause["expiresAt"]
    assert report["expiredOnClient"] is True  # @ag-ui/client's isInterruptExpired agrees
    # @ag-ui/client itself refuses to answer it; the server refuses a client that does
    assert "expired" in report["clientRefuses"]["error"]["message"]
    assert report["late"]["error"]["code"] == "INTERRUPT_EXPIRED"
    assert report["closed"]["error"] is None and report["closed"]["interrupts"] == []
    assert agui_server.sent(report["thread"]) == []


def test_node_concurrent_answers_one_applies_the_others_are_refused(
    node_client: Path, agui_server: AguiServer
) -> None:
    report = drive(node_client, agui_server, "concurrent")
    errors = [a["error"] for a in report["answers"]]
    assert sum(e is None for e in errors) == 1, errors
    refused = {e["code"] for e in errors if e is not None}
    assert refused <= {"ConcurrentResumeError", "STALE_INTERRUPT"}, errors
    assert agui_server.sent(report["thread"]) == [(10, "Ann")]


def test_node_m_of_n_two_distinct_approvers(node_client: Path, agui_server: AguiServer) -> None:
    report = drive(node_client, agui_server, "two_approvers")
    assert report["nobody"]["error"]["code"] == "APPROVER_REQUIRED"
    assert report["ann"]["error"] is None
    [second] = report["ann"]["interrupts"]
    assert second["metadata"]["approval"]["approved_by"] == ["ann"]
    assert report["annAgain"]["error"]["code"] == "ApproverRefusedError"
    assert report["bob"]["error"] is None and report["bob"]["interrupts"] == []
    assert agui_server.sent(report["thread"]) == [(10, "Ann")]


# --- CopilotKit in headless Chromium ---------------------------------------------------------

WAIT = 30.0


@pytest.fixture(scope="module")
def page_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AguiServer]:
    """The CopilotKit page (tests/agui_page, built with vite, cached) served beside the
    endpoints, so the page reaches them on its own origin."""
    started = time.monotonic()
    try:
        dist = prepared("agui_page", build=True) / "dist"
    except NpmProjectError as error:
        pytest.fail(f"the CopilotKit page cannot be built: {error}")
    print(f"\nCopilotKit page ready in {time.monotonic() - started:.1f} s: {dist}")
    with _serving(tmp_path_factory.mktemp("agui-page"), dist) as server:
        yield server


@dataclass
class Page:
    """Headless Chromium on the CopilotKit page, a screenshot per step."""

    driver: webdriver.Chrome
    server: AguiServer
    shots: Path
    thread: str = ""
    step: int = 0

    def shot(self, name: str) -> None:
        self.step += 1
        self.driver.save_screenshot(str(self.shots / f"{self.step:02d}-{name}.png"))

    def until(self, what: str, found: Any) -> Any:
        try:
            return WebDriverWait(self.driver, WAIT, poll_frequency=0.1).until(lambda _: found())
        except TimeoutException:
            self.shot(f"timeout-{what}")
            pytest.fail(f"the page did not show {what} within {WAIT} s (see {self.shots})")

    def open(self, agent: str, cards: int = 1) -> list[WebElement]:
        """Open a new thread of ``agent``, send a message, wait for ``cards`` approval cards."""
        self.thread = str(uuid.uuid4())
        query = urllib.parse.urlencode({"agent": agent, "thread": self.thread})
        self.driver.get(f"{self.server.url}/page/?{query}")
        box = self.until(
            "the chat input", lambda: self.visible("[data-testid=copilot-chat-textarea]")
        )
        box.send_keys("go")
        box.send_keys(Keys.ENTER)
        found = self.until(f"{cards} approval card(s)", lambda: self.cards(cards))
        self.shot(f"{agent}-paused")
        return list(found)

    def visible(self, css: str) -> WebElement | None:
        shown = [e for e in self.driver.find_elements(By.CSS_SELECTOR, css) if e.is_displayed()]
        return shown[0] if shown else None

    def cards(self, count: int) -> list[WebElement] | None:
        found = self.driver.find_elements(By.CSS_SELECTOR, "[data-testid=interrupt]")
        return found if len(found) == count else None

    def says(self, text: str, name: str) -> None:
        """Wait until the page shows ``text`` (the model's answer in the chat)."""
        self.until(repr(text), lambda: text in self.driver.find_element(By.TAG_NAME, "body").text)
        self.shot(name)

    def click(self, card: WebElement, testid: str) -> None:
        card.find_element(By.CSS_SELECTOR, f"[data-testid={testid}]").click()

    def type(self, card: WebElement, testid: str, text: str) -> None:
        field = card.find_element(By.CSS_SELECTOR, f"[data-testid={testid}]")
        field.send_keys(Keys.CONTROL, "a")
        field.send_keys(Keys.DELETE)
        field.send_keys(text)

    def sent(self) -> list[tuple[int, str]]:
        return self.server.sent(self.thread)


@pytest.fixture
def page(page_server: AguiServer, request: pytest.FixtureRequest) -> Iterator[Page]:
    with headless_chromium(request.node.name) as (driver, shots):
        yield Page(driver, page_server, shots)


def test_copilotkit_approves_edits_and_rejects_each_exactly_as_decided(page: Page) -> None:
    [card] = page.open("approval")
    assert "send_money(amount=10, to='Ann')" in card.text
    page.click(card, "approve")
    page.says("Done: sent 10 to Ann", "approved")
    assert page.sent() == [(10, "Ann")]

    [card] = page.open("approval")
    page.type(card, "edit-amount", "3")
    page.type(card, "edit-to", "Bob")
    page.shot("edited")
    page.click(card, "edit")
    page.says("sent 3 to Bob", "edit-ran")
    assert page.sent() == [(3, "Bob")]

    [card] = page.open("approval")
    page.type(card, "reason", "too much")
    page.click(card, "reject-reason")
    page.says("with reason: too much", "rejected")
    assert page.sent() == []


def test_copilotkit_answers_an_m_of_n_approval_with_two_approvers(page: Page) -> None:
    [card] = page.open("two_approvers")
    assert "approvals 0 of 2" in card.text and "may approve: ann, bob, cy" in card.text
    page.driver.find_element(By.CSS_SELECTOR, "[data-testid=as-ann]").click()
    page.click(card, "approve")
    page.until("the second ask", lambda: "1 of 2 approvals in (ann)" in page.driver.page_source)
    page.shot("one-of-two")
    assert page.sent() == []
    page.driver.find_element(By.CSS_SELECTOR, "[data-testid=as-bob]").click()
    [card] = page.until("the card", lambda: page.cards(1))
    page.click(card, "approve")
    page.says("Done: sent 10 to Ann", "two-of-two")
    assert page.sent() == [(10, "Ann")]


def test_copilotkit_answers_a_parallel_pause_both_calls_in_one_resume(page: Page) -> None:
    ann, bob = page.open("parallel", cards=2)
    assert "to='Ann'" in ann.text and "to='Bob'" in bob.text
    page.click(ann, "approve")
    page.click(bob, "reject")  # cancel(): a rejection the model is told about
    page.says("Done: sent 10 to Ann", "parallel-answered")
    assert page.sent() == [(10, "Ann")]


def test_copilotkit_shows_an_expiring_approval_and_closes_it_after_the_deadline(
    page: Page,
) -> None:
    [card] = page.open("expiring")
    assert card.find_element(By.CSS_SELECTOR, "[data-testid=expiry]").text.startswith("Expire")
    page.until("the expiry", lambda: page.visible("[data-testid=expiry][data-expired=yes]"))
    page.shot("expired")
    [card] = page.cards(1) or []
    assert card.find_elements(By.CSS_SELECTOR, "[data-testid=approve]") == []
    assert card.find_elements(By.CSS_SELECTOR, "[data-testid=reject]") == []
    page.click(card, "close-expired")  # a cancelled resume (useInterrupt drops expired ones)
    # the policy settles it as expired: the model is told, the tool never runs
    page.says("expired: the approval of 'approve_send_money' expired", "expired-closed")
    assert "The tool was not executed" in page.driver.find_element(By.TAG_NAME, "body").text
    assert page.sent() == []
