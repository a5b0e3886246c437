"""The web page in real headless Chromium (the Debian `chromium` package, driven by Playwright)."""

from __future__ import annotations

import json
import urllib.parse
import urllib.request
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
    page.locator("#results thead", has_text="attribute").wait_for(timeout=15_000)  # a GPU: attribute, value, unit
    assert "CUDA cores" in page.locator("#results").inner_text()


def test_example_and_sparql(page: Any) -> None:
    page.locator("#example-list a", has_text="frameworks for rnn").click()
    page.locator("#results tbody tr", has_text="Keras").wait_for(timeout=15_000)
    ask(page, "SELECT (COUNT(*) AS ?n) WHERE { ?g a <https://kbq.dev/ontology#GPU> }")
    page.locator("#results thead", has_text="n").wait_for(timeout=15_000)
    assert int(page.locator("#results tbody td").first.inner_text()) > 10
    ask(page, "SELECT * WHERE { SERVICE <http://127.0.0.1:9/> { ?s ?p ?o } }")
    page.locator("#error", has_text="SERVICE is refused").wait_for(timeout=15_000)


# --- charts: each kind drawn from the answer's chart spec, checked against /ask, screenshotted ---

CHARTS = {
    "breakdown": "memory for llama 3.1 70b inference at fp8 with 128k context batch 4 on 4 x h100 sxm5",
    "bars": "gpu for lstm where cooling=blower",
    "scatter": "best value gpu for resnet-50 training under $2000",
    "paired": "compare rtx 4090 vs rtx 3090",
}


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("chart-screenshots")


def _answer(server: ServerProcess, question: str) -> dict[str, Any]:
    with urllib.request.urlopen(server.url + "/ask?" + urllib.parse.urlencode({"q": question}), timeout=60) as response:
        return json.loads(response.read())  # type: ignore[no-any-return]


def _attr(page: Any, selector: str, name: str) -> list[str]:
    return page.eval_on_selector_all(selector, f"nodes => nodes.map(n => n.getAttribute('{name}'))")  # type: ignore[no-any-return]


def _numbers(values: list[str]) -> list[float]:
    return [float(v) for v in values]


def _check_breakdown(page: Any, chart: dict[str, Any]) -> None:
    assert _attr(page, "#chart rect.part", "data-part") == [p for p, _v in chart["lines"]]
    assert _numbers(_attr(page, "#chart rect.part", "data-value")) == [v for _p, v in chart["lines"]]
    assert _numbers(_attr(page, "#chart line.capacity", "data-value")) == [chart["capacity"]]
    assert _numbers(_attr(page, "#chart line.usable", "data-value")) == [chart["capacity"] * chart["usable_share"]]
    assert page.locator("#chart text.verdict").text_content() == chart["verdict"]
    widths = _numbers(_attr(page, "#chart rect.part", "width"))
    capacity_x = _numbers(_attr(page, "#chart line.capacity", "x1"))[0]
    start = _numbers(_attr(page, "#chart rect.part", "x"))[0]
    assert abs(sum(widths) / (capacity_x - start) - sum(v for _p, v in chart["lines"]) / chart["capacity"]) < 0.01


def _check_bars(page: Any, chart: dict[str, Any]) -> None:
    assert _attr(page, "#chart g.row", "data-name") == chart["names"]
    assert page.locator("#chart g.row.recommended").get_attribute("data-name") == chart["names"][chart["recommended"]]
    unknown_total = 0
    for series in chart["series"]:
        group = f"#chart g.series[data-column='{series['column']}']"
        known = [(n, v) for n, v in zip(chart["names"], series["values"], strict=True) if v is not None]
        assert _attr(page, f"{group} rect.bar", "data-name") == [n for n, _v in known]
        assert _numbers(_attr(page, f"{group} rect.bar", "data-value")) == [v for _n, v in known]
        unknown = [n for n, v in zip(chart["names"], series["values"], strict=True) if v is None]
        assert _attr(page, f"{group} g.unknown", "data-name") == unknown  # marked, not a zero-length bar
        assert all(t == "unknown" for t in page.locator(f"{group} g.unknown text").all_text_contents())
        unknown_total += len(unknown)
        texts = page.locator(f"{group} text.value").all_text_contents()
        assert texts == [f"{v:g}" for _n, v in known]
    assert unknown_total > 0  # the question has unknown figures: the test sees them drawn as unknown
    assert chart["profile"] in page.locator("#chart figcaption").inner_text()


def _check_scatter(page: Any, chart: dict[str, Any]) -> None:
    dots = "#chart circle.point[data-name]"
    xs, ys = _numbers(_attr(page, dots, "data-x")), _numbers(_attr(page, dots, "data-y"))
    drawn = dict(zip(_attr(page, dots, "data-name"), zip(xs, ys, strict=True), strict=True))
    assert drawn == {p["name"]: (p["x"], p["y"]) for p in chart["points"]}
    assert set(_attr(page, "#chart circle.point.on-front[data-name]", "data-name")) == set(chart["front"])
    front = page.locator("#chart path.front")
    assert front.get_attribute("data-count") == str(len(chart["front"]))
    assert front.get_attribute("d").count("L") == len(chart["front"]) - 1  # type: ignore[union-attr]
    assert _attr(page, "#chart circle.point.recommended[data-name]", "data-name") == [chart["recommended"]]


def _check_paired(page: Any, chart: dict[str, Any]) -> None:
    assert _attr(page, "#chart g.attribute", "data-column") == [a["column"] for a in chart["attributes"]]
    for attribute in chart["attributes"]:
        group = f"#chart g.attribute[data-column='{attribute['column']}']"
        known = [(n, v) for n, v in zip(chart["names"], attribute["values"], strict=True) if v is not None]
        assert _numbers(_attr(page, f"{group} rect.bar", "data-value")) == [v for _n, v in known]
        assert len(_attr(page, f"{group} g.unknown", "data-name")) == len(chart["names"]) - len(known)
        top = max(abs(v) for _n, v in known)
        widths = _numbers(_attr(page, f"{group} rect.bar", "width"))
        assert max(widths) == pytest.approx(max(widths[i] * top / abs(v) for i, (_n, v) in enumerate(known) if v), rel=0.02)
    sources = page.locator("#chart .chart-sources").text_content() or ""
    for name in chart["names"]:
        assert all(url in sources for url in chart["sources"][name])


@pytest.mark.parametrize("kind", list(CHARTS))
def test_chart_of_each_kind(page: Any, server: ServerProcess, shots: Path, kind: str) -> None:
    question = CHARTS[kind]
    data = _answer(server, question)
    chart = data["extra"]["chart"]
    assert chart["type"] == kind
    ask(page, question)
    figure = page.locator(f"#chart figure.chart[data-kind='{kind}']")
    figure.wait_for(timeout=30_000)
    svg = figure.locator("svg")
    assert svg.get_attribute("role") == "img"
    title, desc = figure.locator("svg > title").text_content(), figure.locator("svg > desc").text_content()
    assert title and desc and svg.get_attribute("aria-labelledby") == "chart-title chart-desc"  # the text alternative
    assert figure.locator("p.visually-hidden").text_content() == desc
    {"breakdown": _check_breakdown, "bars": _check_bars, "scatter": _check_scatter, "paired": _check_paired}[kind](page, chart)
    details = figure.locator("details.chart-data")
    details.locator("summary").click()
    table = details.locator("table.chart-table")
    table.wait_for()
    assert table.locator("tbody tr").count() >= 1 and table.is_visible()
    assert page.locator("#results tbody tr").count() == len(data["rows"])  # the table is kept
    path = shots / f"{kind}.png"
    figure.screenshot(path=str(path))
    assert path.stat().st_size > 5_000
    resources = page.evaluate("performance.getEntriesByType('resource').map(e => e.name)")
    assert resources and all(url.startswith(server.url) for url in resources), resources


def test_the_page_links_the_language_reference(page: Any) -> None:
    page.click("#reference-link")
    page.wait_for_url("**/docs/language.html")
    assert page.locator("main h1").first.inner_text() == "The kbq question language"  # rendered, not raw markdown
    assert page.locator("main h2").count() > 10 and page.locator("main pre code").count() > 10
    assert "## " not in page.locator("main").inner_text()


# --- the answer first, on a desktop and on a phone (issue 21) ---------------------------------

SMALLEST_CHART_TEXT = """() => {
  let smallest = Infinity;
  for (const text of document.querySelectorAll('#chart svg text')) {
    if (!text.getClientRects().length || !text.textContent.trim()) continue;
    const size = parseFloat(getComputedStyle(text).fontSize) * text.getScreenCTM().a;
    smallest = Math.min(smallest, size);
  }
  return smallest;
}"""


@pytest.mark.parametrize("width", [1400, 400])
@pytest.mark.parametrize("question", [CHARTS["breakdown"], "gpu for llama 3.1 8b inference", CHARTS["paired"]])
def test_headline_above_the_fold_and_chart_text_readable(browser: Any, server: ServerProcess, width: int, question: str) -> None:
    context = browser.new_context(viewport={"width": width, "height": 800})
    page = context.new_page()
    page.goto(server.url + "/?q=" + urllib.parse.quote(question))
    headline = page.locator("#headline")
    headline.wait_for(state="visible", timeout=30_000)
    page.locator("#chart svg").first.wait_for(timeout=30_000)
    page.wait_for_timeout(200)
    assert headline.inner_text() == _answer(server, question)["headline"]
    box = headline.bounding_box()
    assert box is not None and 0 <= box["y"] and box["y"] + box["height"] <= 800, box  # on the first screen
    chart = page.locator("#chart").bounding_box()
    assert chart is not None and chart["y"] > box["y"]  # headline, then chart, then table
    assert page.locator("#results").bounding_box()["y"] > chart["y"]  # type: ignore[index]
    assert page.evaluate("document.querySelector('#examples').open") is False  # folded after the first question
    smallest = page.evaluate(SMALLEST_CHART_TEXT)
    assert smallest >= 10, f"chart text of {smallest:.1f} px at {width} px"
    context.close()


def test_table_sorts_and_sources_are_links(page: Any) -> None:
    ask(page, "compare rtx 4090 vs rtx 3090")
    page.locator("#explanation a").first.wait_for(timeout=15_000)
    hrefs = _attr(page, "#explanation a", "href")
    assert hrefs and all(h.startswith(("http://", "https://")) for h in hrefs)
    ask(page, "gpus where memory >= 24gb and nvlink = yes order by bandwidth desc limit 5")
    page.locator("#results tbody tr").first.wait_for(timeout=15_000)
    heads = page.locator("#results thead th")
    memory = next(i for i in range(heads.count()) if heads.nth(i).inner_text().startswith("memory"))
    cells = f"#results tbody tr td:nth-child({memory + 1})"
    heads.nth(memory).click()
    up = [float(t) for t in page.locator(cells).all_inner_texts()]
    assert up == sorted(up) and heads.nth(memory).get_attribute("aria-sort") == "ascending"
    heads.nth(memory).click()
    assert [float(t) for t in page.locator(cells).all_inner_texts()] == sorted(up, reverse=True)


def test_tiers_are_shown_above_the_chart(page: Any, server: ServerProcess) -> None:
    question = "gpu for llama 3.1 8b inference"
    ask(page, question)
    rows = page.locator("#tiers table.tiers tbody tr")
    rows.first.wait_for(timeout=30_000)
    expected = _answer(server, question)["tiers"]
    assert rows.count() == len(expected)
    assert rows.first.locator("td").nth(1).inner_text() == expected[0]["gpu"]
    assert page.locator("#tiers").bounding_box()["y"] < page.locator("#chart").bounding_box()["y"]  # type: ignore[index]
