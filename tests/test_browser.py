"""A real browser answers the demo's approval: headless Chromium (Debian's ``chromium`` and
``chromium-driver``, driven by ``selenium``) runs the Agent Chat UI built from the npm package
``create-agent-chat-app`` (see :mod:`tests.agent_chat_ui`) against ``langgraph dev`` serving the
demo (the ``studio`` fixture of :mod:`tests.test_studio`).

Send a message, see the approval, click Accept, see the final answer; then the server shows the
thread idle with nothing pending, and the demo's ledger shows the transfer ran once. Screenshots
of each step are kept under ``test-artifacts/browser/`` (gitignored). Anything missing (the
browser, its driver, the UI build) fails the test with the reason.
"""

from __future__ import annotations

import asyncio
import io
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from langgraph_sdk import get_client
from PIL import Image
from selenium import webdriver
from selenium.common.exceptions import (
    StaleElementReferenceException,
    TimeoutException,
)
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.ui import WebDriverWait

from dynavec_langgraph.approval import EDIT_NOTICE
from dynavec_langgraph.remote import RemoteReActAgent
from tests import ui_graph
from tests.agent_chat_ui import VERSION, UIBuildError, build
from tests.chromium import ARTIFACTS, REPO, headless_chromium
from tests.pg import _free_port
from tests.test_approval_ui_gaps import ui_server
from tests.test_studio import GRAPH_ID, Studio, studio

__all__ = ["studio", "ui_server"]  # the langgraph dev fixtures, shared with their test files

DOC_IMAGES = ARTIFACTS / "docs-img"
CARD = "ancestor::div[contains(@class, 'rounded-2xl')][1]"
"""The template's approval card (its Agent Inbox view) around an element of it."""
STEP_TIMEOUT = 60.0  # a loaded CI machine; each step takes ~1-3 s here


@dataclass
class Browser:
    """The UI's URL and a driver, with per-step timings and screenshots."""

    driver: webdriver.Chrome
    ui_url: str
    shots: Path
    seconds: dict[str, float] = field(default_factory=dict)

    def until(self, what: str, found: Callable[[], WebElement | None]) -> WebElement:
        """Wait for ``found()`` to return an element; screenshot the page as ``what``."""
        started = time.monotonic()
        try:
            element = WebDriverWait(self.driver, STEP_TIMEOUT, poll_frequency=0.1).until(
                lambda _: found()
            )
        except TimeoutException:
            self.shot(f"{what}-TIMEOUT")
            body = self.driver.find_element(By.TAG_NAME, "body").text
            pytest.fail(f"the browser did not show {what} in {STEP_TIMEOUT} s; page:\n{body}")
        self.seconds[what] = time.monotonic() - started
        self.shot(what)
        assert isinstance(element, WebElement)
        return element

    def shot(self, name: str) -> None:
        """Save a screenshot ``NN-name.png``."""
        index = len(list(self.shots.glob("*.png"))) + 1
        self.driver.save_screenshot(str(self.shots / f"{index:02d}-{name}.png"))

    def doc_image(self, name: str, inside: WebElement) -> None:
        """A small PNG of the approval card holding ``inside``, for docs/img/: kept as
        ``DOC_IMAGES/NAME.png``, and written to ``docs/img/NAME.png`` too when
        ``DYNAVEC_DOC_IMAGES=1`` (how the committed images were taken)."""
        card = inside.find_element(By.XPATH, CARD)
        self.driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", card)
        image = Image.open(io.BytesIO(card.screenshot_as_png)).convert("RGB")
        image.thumbnail((640, 640))
        image = image.quantize(colors=64)  # a small PNG: the UI has few colours
        DOC_IMAGES.mkdir(parents=True, exist_ok=True)
        targets = [DOC_IMAGES / f"{name}.png"]
        if os.environ.get("DYNAVEC_DOC_IMAGES") == "1":
            targets.append(REPO / "docs" / "img" / f"{name}.png")
        for target in targets:
            image.save(target, optimize=True)

    def button(self, label: str) -> WebElement | None:
        """A displayed, enabled button whose text is ``label`` (None while React redraws)."""
        try:
            for element in self.driver.find_elements(By.TAG_NAME, "button"):
                if element.text.strip() == label and element.is_displayed():
                    return element if element.is_enabled() else None
        except StaleElementReferenceException:
            return None
        return None

    def text(self, words: str) -> WebElement | None:
        """The innermost displayed element whose text contains ``words``."""
        xpath = f"//*[contains(text(), {words!r})]"
        try:
            shown = [e for e in self.driver.find_elements(By.XPATH, xpath) if e.is_displayed()]
        except StaleElementReferenceException:
            return None
        return shown[-1] if shown else None


def _serves(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


@pytest.fixture(scope="module")
def ui_site() -> Iterator[str]:
    """The built Agent Chat UI served as static files on 127.0.0.1 (a stdlib HTTP server)."""
    started = time.monotonic()
    try:
        dist = build()
    except UIBuildError as error:
        pytest.fail(f"the Agent Chat UI (create-agent-chat-app@{VERSION}) cannot be built: {error}")
    print(f"\nAgent Chat UI build ready in {time.monotonic() - started:.1f} s: {dist}")
    port = _free_port()
    argv = [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"]
    proc = subprocess.Popen(
        [*argv, "--directory", str(dist)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while not _serves(url):
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the static server for {dist} did not come up on {url}")
            time.sleep(0.1)  # polling a server that is starting
        yield url
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=15)


@pytest.fixture
def browser(ui_site: str, request: pytest.FixtureRequest) -> Iterator[Browser]:
    """Headless Chromium through chromedriver (Debian's), screenshots per test."""
    with headless_chromium(request.node.name) as (driver, shots):
        yield Browser(driver, ui_site, shots)


def _thread_id(url: str) -> str:
    query = urllib.parse.parse_qs(urllib.parse.urlparse(url).query)
    ids = query.get("threadId") or []
    assert len(ids) == 1, f"no threadId in the UI's address {url}"
    return ids[0]


async def test_agent_chat_ui_approves_the_demo_transfer(browser: Browser, studio: Studio) -> None:
    query = urllib.parse.urlencode({"apiUrl": studio.url, "assistantId": GRAPH_ID})
    browser.driver.get(f"{browser.ui_url}/?{query}")

    box = browser.until(
        "chat-input",
        lambda: next(iter(browser.driver.find_elements(By.TAG_NAME, "textarea")), None),
    )
    box.send_keys("Pay 75 to Alice")
    send = browser.button("Send")
    assert send is not None, "the chat has no Send button"
    send.click()

    # The approval, as the template's Agent Inbox view draws it: the action and an Accept button.
    accept = browser.until("approval-shown", lambda: browser.button("Accept"))
    assert browser.text("approve_transfer") is not None
    browser.doc_image("agent-chat-ui-approval", accept)
    thread_id = _thread_id(browser.driver.current_url)
    client = get_client(url=studio.url)
    assert (await client.threads.get(thread_id))["status"] == "interrupted"
    assert [e["tool"] for e in studio.entries(thread_id)] == ["get_balance"]

    accept.click()
    browser.until("final-answer", lambda: browser.text("Done. Balance:"))

    final: dict[str, Any] = {}
    deadline = time.monotonic() + STEP_TIMEOUT
    while (final := dict(await client.threads.get(thread_id)))["status"] != "idle":
        assert time.monotonic() < deadline, f"thread still {final['status']}"
        await asyncio.sleep(0.1)  # the UI showed the answer; the server may finish the run
    assert (await client.threads.get_state(thread_id))["interrupts"] == []
    transfers = [e for e in studio.entries(thread_id) if e["tool"] == "transfer_funds"]
    assert [(e["amount"], e["to"], e["decision"]) for e in transfers] == [(75, "Alice", "approved")]
    answer = browser.text("Done. Balance:")
    assert answer is not None and "Transferred 75 to Alice." in answer.text
    steps = ", ".join(f"{k} {v:.2f} s" for k, v in browser.seconds.items())
    print(f"\nbrowser steps: {steps}; screenshots in {browser.shots}")


def _open_chat(browser: Browser, server: Studio, graph_id: str, text: str) -> None:
    """Open the UI on ``graph_id`` of ``server`` and send ``text``."""
    query = urllib.parse.urlencode({"apiUrl": server.url, "assistantId": graph_id})
    browser.driver.get(f"{browser.ui_url}/?{query}")
    box = browser.until(
        "chat-input",
        lambda: next(iter(browser.driver.find_elements(By.TAG_NAME, "textarea")), None),
    )
    box.send_keys(text)
    send = browser.button("Send")
    assert send is not None, "the chat has no Send button"
    send.click()


async def _settled(client: Any, thread_id: str, runs: int) -> None:
    """Wait until the thread has ``runs`` runs and none is pending or running."""
    deadline = time.monotonic() + STEP_TIMEOUT
    while True:
        listed = await client.runs.list(thread_id)
        if len(listed) >= runs and all(r["status"] not in ("pending", "running") for r in listed):
            return
        assert time.monotonic() < deadline, f"runs of {thread_id}: {listed}"
        await asyncio.sleep(0.1)  # the UI sent the command; the server runs it


async def test_mark_as_resolved_keeps_the_approval_and_ignore_rejects_it(
    browser: Browser, studio: Studio
) -> None:
    """The template's "Mark as Resolved" sends ``Command(goto="__end__")``, which answers
    nothing in LangGraph: the approval stays pending, unchanged (a documented limit,
    docs/approval-uis.md); its Ignore button is what rejects it."""
    _open_chat(browser, studio, GRAPH_ID, "Pay 40 to Bob")
    resolve = browser.until("approval-shown", lambda: browser.button("Mark as Resolved"))
    thread_id = _thread_id(browser.driver.current_url)
    client = get_client(url=studio.url)
    (pause,) = (await client.threads.get_state(thread_id))["interrupts"]

    resolve.click()
    await _settled(client, thread_id, runs=2)
    assert (await client.threads.get(thread_id))["status"] == "interrupted"
    (still,) = (await client.threads.get_state(thread_id))["interrupts"]
    assert still["value"] == pause["value"]  # the same call, undecided (the UI also sends
    # input {} with the command, a new step: the pause may come back under a new id)
    assert [e["tool"] for e in studio.entries(thread_id)] == ["get_balance"]

    ignore = browser.until("still-pending", lambda: browser.button("Ignore"))
    ignore.click()
    browser.until("rejected-answer", lambda: browser.text("was rejected"))
    await _settled(client, thread_id, runs=3)
    assert (await client.threads.get(thread_id))["status"] == "idle"
    transfers = [e for e in studio.entries(thread_id) if e["tool"] == "transfer_funds"]
    assert [(e["amount"], e["to"], e["decision"]) for e in transfers] == [(40, "Bob", "rejected")]


def _field(browser: Browser, label: str) -> WebElement | None:
    """The template's edit box for the argument shown as ``label`` (e.g. "Amount")."""
    xpath = f"//p[normalize-space(text())={label!r}]/following-sibling::textarea"
    try:
        shown = [e for e in browser.driver.find_elements(By.XPATH, xpath) if e.is_displayed()]
    except StaleElementReferenceException:
        return None
    return shown[0] if shown and shown[0].is_enabled() else None


def _type(box: WebElement, text: str) -> None:
    box.send_keys(Keys.CONTROL, "a")
    box.send_keys(Keys.DELETE)
    box.send_keys(text)


async def test_an_edit_is_asked_again_when_invalid_and_the_model_is_told(
    browser: Browser, ui_server: Studio
) -> None:
    """``require_approval`` with Edit offered: the template draws one box per argument.
    An amount the tool refuses is asked again, the reason in the Description panel; a valid
    edit runs once, and the model is told the call was replaced."""
    _open_chat(browser, ui_server, "ui_agent", "go")
    amount = browser.until("edit-fields", lambda: _field(browser, "Amount"))
    thread_id = _thread_id(browser.driver.current_url)
    client = get_client(url=ui_server.url)
    _type(amount, "lots")
    browser.until("edited", lambda: browser.button("Submit")).click()
    await _settled(client, thread_id, runs=2)
    (again,) = (await client.threads.get_state(thread_id))["interrupts"]
    assert "the edited arguments do not fit 'send_money'" in again["value"]["error"]
    assert ui_server.entries(thread_id) == []

    _open_description(browser, "asked-again")
    reason = browser.until("reason-shown", lambda: _shown(browser, "Asked again:"))
    assert reason.text.startswith(  # the short reason first, no Python repr of the decision
        "Asked again: the edited arguments do not fit 'send_money' (invalid arguments: amount: "
    ), reason.text
    assert "{'" not in reason.text and "was refused" not in reason.text
    browser.doc_image("agent-chat-ui-refused", reason)
    _close_panel(browser)
    _type(browser.until("edit-again", lambda: _field(browser, "Amount")), "3")
    _type(browser.until("to-field", lambda: _field(browser, "To")), "Bob")
    browser.until("edited-again", lambda: browser.button("Submit")).click()
    browser.until("final-answer", lambda: browser.text("Done: Note: a human reviewer"))
    await _settled(client, thread_id, runs=3)
    assert (await client.threads.get(thread_id))["status"] == "idle"
    assert [(e["amount"], e["to"]) for e in ui_server.entries(thread_id)] == [(3, "Bob")]
    state = await client.threads.get_state(thread_id)
    values = state["values"]
    assert isinstance(values, dict)
    (told,) = [m["content"] for m in values["messages"] if m["type"] == "tool"]
    assert told.startswith(EDIT_NOTICE) and told.endswith("Tool response:\nsent 3 to Bob")


def ui_graph_count(approved: int, who: str = "") -> str:
    """The first line of ``two_approver_agent``'s description: the approvals in."""
    return f"Needs 2 approvals by different approvers: {approved} of 2 approvals in{who}."


def _open_description(browser: Browser, what: str) -> None:
    """Click the pause's Description button (the panel with the pause value's description)."""
    description = browser.until(what, lambda: browser.button("Description"))
    # under the chat's sticky header once the page scrolled: click it where it is
    browser.driver.execute_script("arguments[0].click();", description)


def _shown(browser: Browser, words: str) -> WebElement | None:
    """The innermost displayed element with a text node containing ``words`` (any of its
    text nodes: a Markdown ``code`` span splits a paragraph's text)."""
    xpath = f"//*[text()[contains(., {words!r})]]"
    try:
        shown = [e for e in browser.driver.find_elements(By.XPATH, xpath) if e.is_displayed()]
    except StaleElementReferenceException:
        return None
    return shown[-1] if shown else None


def _close_panel(browser: Browser) -> None:
    """The description panel's close (X) button, back to the actions."""
    close = browser.driver.find_element(
        By.XPATH, "//button[.//*[local-name()='svg' and contains(@class, 'lucide-x')]]"
    )
    browser.driver.execute_script("arguments[0].click();", close)


async def test_an_expired_approval_answered_from_the_ui_is_settled_as_expired(
    browser: Browser, ui_server: Studio
) -> None:
    """``require_approval(expires_in=10)``: the template shows the deadline in the pause's
    description; an Accept after it settles the approval as expired: the tool never runs, the
    answer says it expired and the thread ends idle (not broken, nothing pending)."""
    _open_chat(browser, ui_server, "expiring_agent", "go")
    browser.until("approval-shown", lambda: browser.button("Accept"))
    thread_id = _thread_id(browser.driver.current_url)
    client = get_client(url=ui_server.url)
    (pause,) = (await client.threads.get_state(thread_id))["interrupts"]
    deadline = pause["value"]["expires_at"]
    assert isinstance(deadline, str)
    when = datetime.fromisoformat(deadline).strftime("%Y-%m-%d %H:%M:%S UTC")
    assert pause["value"]["description"].startswith(f"Expires at {when}: after that it can no")
    assert pause["value"]["approval"]["on_expire"] == "rejected"
    due = datetime.fromisoformat(deadline)
    left = (due - datetime.now(UTC)).total_seconds()
    assert 0 < left <= ui_graph.EXPIRES_IN, f"the deadline {deadline} is {left:.1f} s away"

    _open_description(browser, "description-button")
    browser.doc_image(
        "agent-chat-ui-expiry",
        browser.until("deadline-shown", lambda: _shown(browser, f"Expires at {when}")),
    )
    _close_panel(browser)
    accept = browser.until("accept-again", lambda: browser.button("Accept"))
    await asyncio.sleep(max(0.0, (due - datetime.now(UTC)).total_seconds()) + 0.5)  # a real
    # deadline: nothing to wait on but the clock
    assert datetime.now(UTC) > due
    accept.click()
    browser.until("expired-answer", lambda: browser.text("Done: The approval of the tool call"))
    await _settled(client, thread_id, runs=2)
    assert (await client.threads.get(thread_id))["status"] == "idle"
    state = await client.threads.get_state(thread_id)
    assert state["interrupts"] == []
    assert ui_server.entries(thread_id) == []  # send_money never ran
    values = state["values"]
    assert isinstance(values, dict)
    (told,) = [m["content"] for m in values["messages"] if m["type"] == "tool"]
    assert told.startswith("The approval of the tool call for `send_money` expired:")
    assert f"expired at {due.isoformat()}" in told and told.endswith("The tool was not executed.")
    answer = browser.text("Done: The approval of the tool call")
    assert answer is not None and "expired" in answer.text


async def test_two_approvers_the_ui_is_asked_again_then_named_approvers_answer(
    browser: Browser, ui_server: Studio
) -> None:
    """``require_approval(approvals_required=2)``: the template's Accept carries no approver,
    so the pause is asked again with the reason (and what to do) in its description; two
    named approvers answer it instead (``RemoteReActAgent.aresume(approver="alice")``, then
    ``inbox answer --server ... --as bob``), and the reloaded UI shows the final answer."""
    _open_chat(browser, ui_server, "two_approver_agent", "go")
    accept = browser.until("approval-shown", lambda: browser.button("Accept"))
    thread_id = _thread_id(browser.driver.current_url)
    client = get_client(url=ui_server.url)
    (pause,) = (await client.threads.get_state(thread_id))["interrupts"]
    assert pause["value"]["description"].startswith(ui_graph_count(0))
    assert _field(browser, "Amount") is None  # no Edit: an edit cannot count as an approval
    browser.doc_image("agent-chat-ui-two-approvers", accept)

    accept.click()
    await _settled(client, thread_id, runs=2)
    assert (await client.threads.get(thread_id))["status"] == "interrupted"
    (again,) = (await client.threads.get_state(thread_id))["interrupts"]
    assert "'approve_send_money' needs a named approver" in again["value"]["error"]
    assert "inbox answer --server URL" in again["value"]["error"]
    assert again["value"]["approval"]["approved_by"] == []
    assert ui_server.entries(thread_id) == []
    _open_description(browser, "asked-again")
    browser.until("reason-shown", lambda: browser.text("needs a named approver"))
    browser.until("count-shown", lambda: _shown(browser, ui_graph_count(0)))
    who = browser.until("approvers-shown", lambda: _shown(browser, "Who may approve: alice, bob"))
    browser.doc_image("agent-chat-ui-who-may-approve", who)
    _close_panel(browser)

    agent = RemoteReActAgent(ui_server.url, "two_approver_agent", timeout=STEP_TIMEOUT)
    first = await agent.aresume("approved", thread_id=thread_id, approver="alice")
    assert first.termination_reason == "interrupted"
    (partial,) = (await client.threads.get_state(thread_id))["interrupts"]
    assert partial["value"]["approval"]["approved_by"] == ["alice"]
    # after the UI's replayed refusal (docs/approval-uis.md: the template's unkeyed resume)
    assert ui_graph_count(1, " (alice)") in partial["value"]["description"].split("\n\n")[:2]
    assert ui_server.entries(thread_id) == []

    argv = [sys.executable, "-m", "dynavec_langgraph._cli", "inbox", "answer"]
    argv += ["--server", ui_server.url, "--assistant", "two_approver_agent"]
    answered = await asyncio.create_subprocess_exec(
        *argv,
        *["--thread", thread_id, "--approve", "--as", "bob"],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(answered.communicate(), timeout=180)
    assert answered.returncode == 0, err.decode()
    assert "Answer: Done: sent 10 to Ann" in out.decode(), out.decode()
    await _settled(client, thread_id, runs=4)  # the UI's, alice's and bob's after the first
    assert (await client.threads.get(thread_id))["status"] == "idle"
    assert [(e["amount"], e["to"]) for e in ui_server.entries(thread_id)] == [(10, "Ann")]

    browser.driver.refresh()  # the UI did not send these answers: it reads the thread again
    browser.until("final-answer", lambda: browser.text("Done: sent 10 to Ann"))
    assert browser.button("Accept") is None


def test_a_ui_that_cannot_be_built_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the browser test fails with when the build is impossible (here: no npm)."""
    monkeypatch.setenv("DYNAVEC_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(UIBuildError, match=r"npm/npx not found: install Node.js and npm"):
        build()
    assert list(tmp_path.iterdir()) == []  # nothing half-built is left to be taken for a build


async def test_two_pauses_at_once_the_ui_s_unkeyed_accept_is_refused_and_both_stay(
    browser: Browser, ui_server: Studio
) -> None:
    """``parallel_agent``: two calls paused at once. The template's Accept is an unkeyed
    resume, which cannot say which pause it answers: the run fails with UnkeyedResumeError
    before anything runs, both pauses stay; answered by their ids both run, and the reloaded
    UI shows the answer."""
    _open_chat(browser, ui_server, "parallel_agent", "go")
    accept = browser.until("approval-shown", lambda: browser.button("Accept"))
    thread_id = _thread_id(browser.driver.current_url)
    client = get_client(url=ui_server.url)
    pauses = (await client.threads.get_state(thread_id))["interrupts"]
    assert [p["value"]["args"]["to"] for p in pauses] == ["Ann", "Bob"]

    accept.click()
    await _settled(client, thread_id, runs=2)
    (failed, _) = await client.runs.list(thread_id)  # newest first
    assert failed["status"] == "error", failed
    joined: Any = await client.runs.join(thread_id, failed["run_id"])
    assert joined["__error__"]["error"] == "UnkeyedResumeError", joined
    assert (await client.threads.get_state(thread_id))["interrupts"] == pauses
    assert ui_server.entries(thread_id) == []
    # the template shows the run's error in a toast: the package's reason and what to do
    browser.until("refused-shown", lambda: _shown(browser, "2 pauses are pending on thread"))
    assert _shown(browser, "nothing ran and") is not None

    answers = {p["id"]: [{"type": "accept", "args": None}] for p in pauses}
    await client.runs.wait(thread_id, "parallel_agent", command={"resume": answers})
    assert sorted(e["to"] for e in ui_server.entries(thread_id)) == ["Ann", "Bob"]
    browser.driver.refresh()
    browser.until("final-answer", lambda: browser.text("Done: 2 answers"))
