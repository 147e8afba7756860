"""The built site in a real browser: Debian's chromium, headless, on 127.0.0.1.

Skips on a developer machine without chromium; in CI (CI=true) a missing
browser fails the run instead.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from masrl_kb.query.frames import cell_papers, load_exclusions, load_papers, select
from masrl_kb.site import urls as site_urls
from masrl_kb.site.context import Cross
from tests.test_site_support import KEY, build_hostile_site, real_site, serve

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
CELL = Cross("reward_family", "credit_unit")
SHOTS = os.environ.get("MASRL_KB_SHOTS")  # a folder to keep screenshots in, if set


def _chromium() -> str:
    path = shutil.which("chromium") or (
        "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None
    )
    if path is None:
        if os.environ.get("CI") == "true":
            pytest.fail("chromium is missing: CI must install Debian's chromium")
        pytest.skip("chromium is not installed")
    return path


@pytest.fixture(scope="module")
def browser():
    executable = _chromium()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        if os.environ.get("CI") == "true":
            pytest.fail("playwright is missing: install the dev extras")
        pytest.skip("playwright is not installed")
    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def base_url(tmp_path_factory):
    with serve(real_site(tmp_path_factory)) as url:
        yield url


@pytest.fixture
def page(browser, tmp_path):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    # Nothing may leave the machine: block every request that is not to the test server.
    context.route(
        "**/*",
        lambda route: (
            route.continue_() if route.request.url.startswith("http://127.0.0.1") else route.abort()
        ),
    )
    opened = context.new_page()
    dialogs: list[str] = []
    opened.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    opened.dialogs = dialogs
    yield opened
    assert not dialogs, f"a script ran a dialog: {dialogs}"
    context.close()


def _search(page, query: str, expect_href: str) -> list[tuple[str, str]]:
    """Type into Material's search once its index is ready; wait for a result link.

    Typing before the index is ready is lost, and Material listens to key
    events, so the query is typed key by key. Returns the top (href, text) pairs.
    """
    page.locator(".md-search__input").click()
    page.wait_for_function(
        "document.querySelector('.md-search-result__meta').textContent.includes('Type to start')",
        timeout=15_000,
    )
    page.locator(".md-search__input").press_sequentially(query)
    page.wait_for_function(
        "href => [...document.querySelectorAll('.md-search-result__link')].slice(0, 5)"
        ".some(a => a.href.includes(href))",
        arg=expect_href,
        timeout=15_000,
    )
    return page.locator(".md-search-result__link").evaluate_all(
        "links => links.slice(0, 5).map(a => [a.href, a.innerText])"
    )


def _shot(page, name: str) -> None:
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SHOTS) / f"{name}.png"), full_page=False)


def test_home_shows_the_computed_numbers(page, base_url) -> None:
    papers, exclusions = load_papers(), load_exclusions()
    page.goto(base_url)
    stat = page.locator("[data-kb-stat]")
    assert stat.nth(0).inner_text() == str(len(papers))
    assert page.locator('[data-kb-stat="excluded"]').inner_text() == str(len(exclusions))
    audited = page.locator('[data-kb-stat="audited"]').inner_text()
    assert audited == str(len(papers) + len(exclusions))
    _shot(page, "home")


def test_clicking_a_crosstab_cell_lists_exactly_its_papers(page, base_url) -> None:
    papers = load_papers()
    page.goto(base_url + site_urls.crosstab(CELL))
    cell = page.locator('td[data-row="R1"][data-col="agent"] a')
    expected = list(cell_papers(CELL.rows, "R1", CELL.cols, "agent", papers=papers).index)
    assert cell.inner_text() == str(len(expected))
    _shot(page, "crosstab")
    cell.click()
    page.wait_for_url("**/cells/**")
    page.locator("[data-kb-count]").wait_for()
    listed = page.locator("tr[data-key]").evaluate_all("rows => rows.map(r => r.dataset.key)")
    assert listed == expected
    assert page.locator("[data-kb-count]").inner_text() == str(len(expected))
    _shot(page, "cell")


def test_search_finds_a_paper_by_its_title(page, base_url) -> None:
    title = load_papers().loc["puppeteer", "title"]
    page.goto(base_url)
    links = _search(page, title, "/papers/puppeteer/")
    hits = [text for href, text in links if "/papers/puppeteer/" in href]
    assert hits and title in hits[0]
    _shot(page, "search")


def test_papers_table_filters_from_the_url_and_by_clicking(page, base_url) -> None:
    papers = load_papers()
    page.goto(base_url + "papers/?category=rl_method&-topology=debate")
    visible = page.locator("tr[data-key]:visible")
    expected = select('category == "rl_method" and topology != "debate"', papers=papers)
    page.wait_for_function(
        f"document.querySelector('[data-kb-shown]').textContent == '{len(expected)}'"
    )
    assert visible.count() == len(expected)
    page.locator('.kb-chip[data-param="learned"][data-value="O2"]').click()
    assert "learned=O2" in page.url
    narrowed = select(
        'category == "rl_method" and topology != "debate" and O2 == "learned"', papers=papers
    )
    assert visible.count() == len(narrowed)
    page.locator('th[data-sort-key="year"] button').click()
    years = page.locator("tr[data-key]:visible td:nth-child(2)").all_inner_texts()
    assert years == sorted(years)
    _shot(page, "papers-filtered")
    page.reload()
    assert visible.count() == len(narrowed)  # the state survived in the URL


def test_dark_mode_toggle(page, base_url) -> None:
    page.goto(base_url + site_urls.crosstab(Cross("decision", "topology")))
    page.locator("label.md-header__button[for^='__palette']:visible").first.click()
    scheme = page.locator("body").get_attribute("data-md-color-scheme")
    assert scheme == "slate"
    _shot(page, "dark")


def test_hostile_record_runs_no_script(page, tmp_path_factory) -> None:
    with serve(build_hostile_site(tmp_path_factory)) as url:
        page.goto(url + f"papers/{KEY}/")
        assert "<script>alert(1)</script>" in page.locator("h1").inner_text()
        page.goto(url + "papers/?text=alert")
        assert page.locator("tr[data-key]:visible").count() == 1
        _search(page, "heading", f"/papers/{KEY}/")  # a word of the hostile title
        assert "<script>alert(1)</script>" in page.locator(".md-search-result").inner_text()
        page.wait_for_timeout(300)
        # the page fixture fails the test if any alert() dialog opened
