"""Headless Chromium for the browser tests (tests/test_browser.py, tests/test_agui_clients.py),
started in one place: Debian's ``chromium`` and ``chromium-driver`` driven by ``selenium``,
screenshots under ``test-artifacts/browser/`` (gitignored). A missing browser or driver, or one
that does not start, fails the test with the reason."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.chrome.service import Service

REPO = Path(__file__).resolve().parents[1]
ARTIFACTS = REPO / "test-artifacts" / "browser"
"""Where the screenshots go: one folder a test."""
ARGUMENTS = (
    "--headless=new",
    "--no-sandbox",  # CI runs as root
    "--disable-dev-shm-usage",
    "--disable-gpu",
    "--window-size=1280,1100",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


@contextmanager
def headless_chromium(name: str) -> Iterator[tuple[webdriver.Chrome, Path]]:
    """A driver of headless Chromium and the emptied folder ``ARTIFACTS/name`` for its
    screenshots. On leaving, ``quit()`` closes the browser and stops chromedriver (selenium
    stops it by its PID)."""
    chromium, chromedriver = shutil.which("chromium"), shutil.which("chromedriver")
    if chromium is None or chromedriver is None:
        pytest.fail(
            "chromium and chromedriver are needed: apt-get install chromium chromium-driver "
            "(`make browser-tools` does it)"
        )
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for argument in ARGUMENTS:
        options.add_argument(argument)
    shots = ARTIFACTS / name
    shutil.rmtree(shots, ignore_errors=True)
    shots.mkdir(parents=True)
    try:
        driver = webdriver.Chrome(service=Service(chromedriver), options=options)
    except WebDriverException as error:
        pytest.fail(f"headless Chromium did not start: {error.msg}")
    try:
        yield driver, shots
    finally:
        driver.quit()
