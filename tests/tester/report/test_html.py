"""The HTML report of a real short run, opened in a real headless browser: Debian's chromium driven
by Playwright through the system browser (nothing is downloaded; `make chromium` installs it).

Checked: no console error and no request leaving the file, every image loaded with a size and alt
text, the answers (each with its plot) on the first screen, the comparison table with a column per
target, table headers with their scope, no sideways scrolling on a phone, no navigation in print.
A screenshot of the first screen (and of a phone's) is saved with the results.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import BrowserContext, Page, sync_playwright

from labtester.report.compare import load_results
from labtester.report.contents import gather

CHROMIUM = Path("/usr/bin/chromium")
# Without the background-networking flags Chromium's own connections are refused by the closed
# network and logged; a fresh profile per session (Playwright's user data dir).
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SCREEN = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}

LabRun = tuple[subprocess.CompletedProcess[str], Path]


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrowserContext]:
    assert CHROMIUM.exists(), f"{CHROMIUM} is missing: `make chromium` installs Debian's chromium"
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            tmp_path_factory.mktemp("chromium-profile"),
            executable_path=CHROMIUM,
            args=FLAGS,
            headless=True,
            viewport=SCREEN,
        )
        yield context
        context.close()


class Opened:
    """The report open in a page, with every console error and every request it made."""

    def __init__(self, browser: BrowserContext, report: Path, viewport: dict[str, int]) -> None:
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.page: Page = browser.new_page()
        self.page.set_viewport_size(viewport)  # type: ignore[arg-type]
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.page.on("requestfailed", lambda r: self.errors.append(f"request failed: {r.url}"))
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.goto(report.as_uri(), wait_until="load")


@pytest.fixture(scope="module")
def opened(browser: BrowserContext, lab_run: LabRun) -> Iterator[Opened]:
    page = Opened(browser, lab_run[1] / "report.html", SCREEN)
    page.page.screenshot(path=lab_run[1] / "report.png")
    yield page
    page.page.close()


def test_no_console_error_and_nothing_fetched_from_outside(opened: Opened) -> None:
    assert opened.errors == []
    assert opened.requests and all(url.startswith(("file:", "data:")) for url in opened.requests)


def test_every_image_loaded_with_a_size_and_alt_text(opened: Opened, lab_run: LabRun) -> None:
    images = opened.page.evaluate(
        "Array.from(document.images).map(i => [i.complete, i.naturalWidth, i.naturalHeight, i.alt])"
    )
    plots = list((lab_run[1] / "plots").glob("*.png"))
    assert len(images) == len(plots) > 0
    for complete, width, height, alt in images:
        assert complete and width > 0 and height > 0 and len(alt) > 20


def test_the_first_screen_answers_with_numbers_and_a_plot(opened: Opened, lab_run: LabRun) -> None:
    answers = gather(load_results(lab_run[1])).answers
    page = opened.page
    articles = page.locator("#answers article.answer")
    assert articles.count() == len(answers) >= 4
    assert [articles.nth(i).locator("h3").inner_text() for i in range(len(answers))] == [
        a.question for a in answers
    ]
    first = articles.first
    assert answers[0].evidence in first.inner_text()
    plot = first.locator("img").bounding_box()
    assert plot is not None and plot["y"] + plot["height"] / 2 < SCREEN["height"]  # on the first screen


def test_the_comparison_has_a_column_per_target_and_headers_with_scope(
    opened: Opened, lab_run: LabRun
) -> None:
    contents = gather(load_results(lab_run[1]))
    page = opened.page
    heads = page.locator("table.comparison thead th").all_inner_texts()
    assert [h.split("\n")[0] for h in heads[1:]] == contents.targets
    assert page.locator("table.comparison tbody tr").count() == len(contents.rows)
    assert page.evaluate("document.querySelectorAll('th:not([scope])').length") == 0
    assert page.evaluate("Array.from(document.querySelectorAll('table')).every(t => t.caption)")
    # every detail section is reachable from the contents
    targets = page.evaluate("Array.from(document.querySelectorAll('nav a')).map(a => a.hash.slice(1))")
    assert targets and all(page.locator(f"#{t}").count() == 1 for t in targets)


def test_a_phone_reads_it_without_scrolling_sideways(browser: BrowserContext, lab_run: LabRun) -> None:
    phone = Opened(browser, lab_run[1] / "report.html", PHONE)
    assert phone.page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    phone.page.screenshot(path=lab_run[1] / "report-phone.png")
    phone.page.emulate_media(media="print")
    assert phone.page.evaluate("getComputedStyle(document.querySelector('nav')).display") == "none"
    assert phone.errors == []
    phone.page.close()


def test_the_screenshot_is_saved_with_the_results(opened: Opened, lab_run: LabRun) -> None:
    shot = (lab_run[1] / "report.png").read_bytes()
    assert shot.startswith(b"\x89PNG") and int.from_bytes(shot[16:20], "big") == SCREEN["width"]
