"""The web page in real headless Chromium (the Debian `chromium` package, driven by Playwright)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from server_helpers import ServerProcess, shared_kbq

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

pytestmark = [
    pytest.mark.browser,
    pytest.mark.server,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs the system browser: apt-get install -y chromium"),
]


@pytest.fixture(scope="module")
def server() -> ServerProcess:
    return shared_kbq()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, headless=True)
        yield browser
        browser.close()


@pytest.fixture
def page(browser: Any, server: ServerProcess) -> Iterator[Any]:
    context = browser.new_context()
    page = context.new_page()
    outside: list[str] = []
    page.on("request", lambda r: None if r.url.startswith(server.url) else outside.append(r.url))
    page.goto(server.url + "/")
    yield page
    assert outside == [], f"the page fetched from outside the server: {outside}"
    context.close()


def ask(page: Any, text: str) -> None:
    page.fill("#q", text)
    page.click("#run")


def test_question_shows_the_expected_gpu(page: Any) -> None:
    ask(page, "best gpu for bert on dense 9-card chassis as of 2020-03")
    first = page.locator("#results tbody tr").first
    first.wait_for(timeout=15_000)
    assert "Quadro RTX 8000" in first.inner_text()
    assert "memory (GB)" in page.locator("#results thead").inner_text()
    assert "best: Quadro RTX 8000" in page.locator("#explanation").inner_text()
    assert "q=best" in page.url


def test_bad_question_shows_the_error(page: Any) -> None:
    ask(page, "gpu for lstm where coolin=blower")
    error = page.locator("#error")
    error.wait_for(state="visible", timeout=15_000)
    text = error.inner_text()
    assert "unknown key 'coolin'" in text and "did you mean cooling" in text
    assert page.locator("#answer").is_hidden()


def test_gpu_name_links_to_describe(page: Any) -> None:
    ask(page, "gpu for lstm where cooling=blower")
    link = page.locator("#results a.describe", has_text="Quadro RTX 8000")
    link.wait_for(timeout=15_000)
    link.click()
    page.wait_for_function("document.querySelector('#q').value === 'describe Quadro RTX 8000'")
    page.locator("#results thead", has_text="property").wait_for(timeout=15_000)
    assert "CUDA cores" in page.locator("#results").inner_text()


def test_example_and_sparql(page: Any) -> None:
    page.locator("#example-list a", has_text="frameworks for rnn").click()
    page.locator("#results tbody tr", has_text="Keras").wait_for(timeout=15_000)
    ask(page, "SELECT (COUNT(*) AS ?n) WHERE { ?g a <https://kbq.dev/ontology#GPU> }")
    page.locator("#results thead", has_text="n").wait_for(timeout=15_000)
    assert int(page.locator("#results tbody td").first.inner_text()) > 10
    ask(page, "SELECT * WHERE { SERVICE <http://127.0.0.1:9/> { ?s ?p ?o } }")
    page.locator("#error", has_text="SERVICE is refused").wait_for(timeout=15_000)
