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
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from langgraph_sdk import get_client
from selenium import webdriver
from selenium.common.exceptions import (
    StaleElementReferenceException,
    TimeoutException,
    WebDriverException,
)
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.ui import WebDriverWait

from tests.agent_chat_ui import VERSION, UIBuildError, build
from tests.test_studio import GRAPH_ID, Studio, studio

__all__ = ["studio"]  # the langgraph dev fixture, shared with tests/test_studio.py

REPO = Path(__file__).resolve().parents[1]
ARTIFACTS = REPO / "test-artifacts" / "browser"
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


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


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
    chromium, chromedriver = shutil.which("chromium"), shutil.which("chromedriver")
    if chromium is None or chromedriver is None:
        pytest.fail(
            "chromium and chromedriver are needed: apt-get install chromium chromium-driver "
            "(`make browser-tools` does it)"
        )
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for argument in (
        "--headless=new",
        "--no-sandbox",  # CI runs as root
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--window-size=1280,1100",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
    ):
        options.add_argument(argument)
    shots = ARTIFACTS / request.node.name
    shutil.rmtree(shots, ignore_errors=True)
    shots.mkdir(parents=True)
    try:
        driver = webdriver.Chrome(service=Service(chromedriver), options=options)
    except WebDriverException as error:
        pytest.fail(f"headless Chromium did not start: {error.msg}")
    try:
        yield Browser(driver, ui_site, shots)
    finally:
        driver.quit()


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


def test_a_ui_that_cannot_be_built_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the browser test fails with when the build is impossible (here: no npm)."""
    monkeypatch.setenv("DYNAVEC_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(UIBuildError, match=r"npm/npx not found: install Node.js and npm"):
        build()
    assert list(tmp_path.iterdir()) == []  # nothing half-built is left to be taken for a build
