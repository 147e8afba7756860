"""The built site in a real browser: Debian's chromium, headless, on 127.0.0.1.

Skips on a developer machine without chromium; in CI (CI=true) a missing
browser fails the run instead. Every request that leaves the test server is
blocked and counted as a failure. Page-wide checks (offline, widths, axe) run
on one page of each kind, so the whole file stays near a minute.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from masrl_kb.query.frames import cell_papers, evaluations, load_exclusions, load_papers, select
from masrl_kb.site import urls as site_urls
from masrl_kb.site.context import ALL_CROSSES, Cross
from tests.test_site_support import KEY, serve

# Chromium on a whole real site: minutes, so only with --all (and in CI).
pytestmark = pytest.mark.slow

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
def base_url(real_site):
    with serve(real_site) as url:
        yield url


def _open(browser, width: int):
    context = browser.new_context(viewport={"width": width, "height": 900})
    # Nothing may leave the machine: block every request that is not to the test server.
    context.route(
        "**/*",
        lambda route: (
            route.continue_() if route.request.url.startswith("http://127.0.0.1") else route.abort()
        ),
    )
    opened = context.new_page()
    dialogs: list[str] = []
    problems: list[str] = []
    inflight: set = set()  # requests not yet answered (see _settled)
    opened.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    opened.on("request", lambda r: inflight.add(r))
    opened.on("requestfinished", lambda r: inflight.discard(r))
    opened.on(
        "requestfailed",
        lambda r: (inflight.discard(r), problems.append(f"request failed: {r.url} ({r.failure})")),
    )
    opened.on(
        "console", lambda m: problems.append(f"console: {m.text}") if m.type == "error" else None
    )
    opened.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    opened.dialogs, opened.problems, opened.inflight = dialogs, problems, inflight
    return context, opened


SEARCH_READY = (
    "document.querySelector('.md-search-result__meta').textContent.includes('Type to start')"
)


def _settled(page, url: str) -> None:
    """Open ``url`` and wait until its scripts are done: search ready, no request open.

    ``networkidle`` (500 ms without a request) can fire on a busy machine before
    the page has run its scripts; the next navigation then cancels the search
    worker's script, which Chromium reports as a failed request (net::ERR_ABORTED).
    The theme's own "Type to start searching" says the worker and index arrived.
    """
    page.goto(url)
    page.wait_for_function(SEARCH_READY, timeout=15_000)  # worker script and index loaded
    for _ in range(300):
        if not page.inflight:
            return
        page.wait_for_timeout(50)
    pytest.fail(f"{url}: requests still open after 15 s: {[r.url for r in page.inflight]}")


@pytest.fixture
def page(browser):
    context, opened = _open(browser, 1280)
    yield opened
    assert not opened.dialogs, f"a script ran a dialog: {opened.dialogs}"
    context.close()


@pytest.fixture
def phone(browser):
    context, opened = _open(browser, 390)
    yield opened
    context.close()


def page_kinds() -> dict[str, str]:
    """One URL of each kind of page (the records choose the paper and the cell)."""
    papers = load_papers()
    key = papers.index[0]
    cross = ALL_CROSSES[0]
    row = papers.loc[key]
    return {
        "home": "",
        "gaps": site_urls.GAPS,
        "crosstabs": site_urls.CROSSTABS,
        "crosstab": site_urls.crosstab(Cross("decision", "reward_family")),
        "year-crosstab": site_urls.crosstab(Cross("category", "year")),
        "cell": site_urls.cell(cross, row[cross.rows], row[cross.cols]),
        "taxonomy": site_urls.axis_page("decision"),
        "papers": site_urls.PAPERS,
        "papers-list": site_urls.PAPERS + "?list=claim-o5-learned-any",
        "paper": site_urls.paper(key),
        "exclusions": site_urls.EXCLUSIONS,
        "new": site_urls.NEW,
        "downloads": site_urls.DOWNLOADS,
        "traces": site_urls.TRACES,
        "cite": site_urls.CITE,
        "contribute": site_urls.CONTRIBUTE,
        "evaluations": site_urls.EVALUATIONS,
        "benchmark": site_urls.benchmark(evaluations(papers=papers)["benchmark"].iloc[0]),
        "board": _board_page()[0],  # a benchmark with ranked values
        "agreement": site_urls.AGREEMENT,
        "authors": site_urls.AUTHORS,
        "claims": site_urls.CLAIMS,
        "since": site_urls.SINCE,
        "rounds": site_urls.ROUNDS,
        "protocol": site_urls.PROTOCOL,
    }


def _search(page, query: str, expect_href: str) -> list[tuple[str, str]]:
    """Type into Material's search once its index is ready; wait for a result link.

    Typing before the index is ready is lost, and Material searches on key events.
    A search per key falls behind on a long title once the index is large, so all but
    the last character are filled in and the last one is pressed: one search, for the
    whole query. Returns the top (href, text) pairs.
    """
    box = page.locator(".md-search__input")
    box.click()
    page.wait_for_function(SEARCH_READY, timeout=15_000)
    box.fill(query[:-1])
    box.press(query[-1])
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
    count = page.locator('[data-kb-count="cell"]')
    count.wait_for()
    listed = page.locator('[data-kb-list="cell"] li[data-key]').evaluate_all(
        "rows => rows.map(r => r.dataset.key)"
    )
    assert listed == expected
    assert count.inner_text() == str(len(expected))
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
    years = page.locator("tr[data-key]:visible td:nth-child(3)").all_inner_texts()
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


def test_hostile_record_runs_no_script(page, hostile_site) -> None:
    with serve(hostile_site) as url:
        page.goto(url + f"papers/{KEY}/")
        assert "<script>alert(1)</script>" in page.locator("h1").inner_text()
        page.goto(url + "papers/?text=alert")
        assert page.locator("tr[data-key]:visible").count() == 1
        _search(page, "heading", f"/papers/{KEY}/")  # a word of the hostile title
        assert "<script>alert(1)</script>" in page.locator(".md-search-result").inner_text()
        page.wait_for_timeout(300)
        # the page fixture fails the test if any alert() dialog opened


def test_every_kind_of_page_works_offline_without_errors(page, base_url) -> None:
    for kind, url in page_kinds().items():
        _settled(page, base_url + url)
        assert not page.problems, (kind, page.problems)
    _settled(page, base_url + site_urls.EXCLUSIONS)
    assert page.locator(".kb-diagram svg").count() == 1  # the flow, drawn without a script
    _settled(page, base_url + site_urls.TRACES)
    assert page.locator(".kb-diagram svg").count() == 1
    assert not page.problems


WIDE = "document.documentElement.scrollWidth - document.documentElement.clientWidth"


@pytest.mark.parametrize("width", [390, 1280])
def test_no_page_scrolls_sideways(browser, base_url, width) -> None:
    context, opened = _open(browser, width)
    try:
        for kind, url in page_kinds().items():
            opened.goto(base_url + url)
            overflow = opened.evaluate(WIDE)
            assert overflow <= 0, f"{kind} at {width}px scrolls sideways by {overflow}px"
            if kind == "crosstab":
                _shot(opened, f"{kind}-{width}")
    finally:
        context.close()


def test_wide_tables_scroll_in_their_box_with_a_pinned_first_column(phone, base_url) -> None:
    phone.goto(base_url + site_urls.crosstab(Cross("decision", "reward_family")))
    box = phone.locator(".kb-scroll").first
    assert "is-wide" in box.get_attribute("class")
    head = phone.locator("table.kb-heat tbody th").first
    assert head.evaluate("e => getComputedStyle(e).position") == "sticky"
    before = head.bounding_box()["x"]
    box.evaluate("e => { e.scrollLeft = 400; }")
    assert head.bounding_box()["x"] == pytest.approx(before, abs=1)


def test_phone_folds_the_filters_and_unfolds_them_on_demand(phone, base_url) -> None:
    phone.goto(base_url + site_urls.PAPERS)
    keys = phone.locator("code.kb-key")
    assert keys.first.evaluate("e => getComputedStyle(e).whiteSpace") == "nowrap"  # ids never wrap
    facets = phone.locator("[data-kb-facets]")
    assert facets.evaluate("e => e.open") is False
    assert not phone.locator(".kb-chip").first.is_visible()
    facets.locator(":scope > summary").click()
    assert phone.locator(".kb-chip").first.is_visible()
    _shot(phone, "papers-390")


def test_chip_states_are_told_apart(page, base_url) -> None:
    page.goto(base_url + site_urls.PAPERS)
    chip = page.locator('.kb-chip[data-param="category"]').first
    chip.click()
    assert chip.get_attribute("aria-pressed") == "true"
    assert "kept" in chip.get_attribute("aria-label")
    chip.click()
    assert chip.get_attribute("aria-pressed") == "false"
    assert "excluded" in chip.get_attribute("aria-label")
    chip.click()
    assert chip.get_attribute("data-state") == "none"


def _unique_first_author_surnames(limit: int) -> list[tuple[str, str]]:
    """(surname, key) of first authors whose surname no other author in the pool carries."""
    papers = load_papers()
    surnames = [a.split(",")[0].strip() for authors in papers["authors"] for a in authors]
    picked = []
    for key, authors in papers["authors"].items():
        name = authors[0].split(",")[0].strip() if authors else ""
        if len(name) > 2 and surnames.count(name) == 1:
            picked.append((name, key))
    return picked[:limit]


def test_search_finds_papers_by_first_author_surname(page, base_url) -> None:
    picked = _unique_first_author_surnames(10)
    assert len(picked) == 10, "the pool has ten first authors with distinct surnames"
    page.goto(base_url)
    for surname, key in picked:
        # the authors index's group comes first (one entry per person); the paper next
        _search_groups(page, surname, f"/papers/{key}/")


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_no_serious_accessibility_violation_on_any_kind_of_page(browser, base_url, scheme) -> None:
    """axe on the whole page, the theme's header, navigation, search and footer included."""
    from axe_playwright_python.sync_playwright import Axe

    context = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme=scheme)
    context.route("**/*", lambda r: r.continue_() if _local(r) else r.abort())
    opened = context.new_page()
    found = []
    try:
        for kind, url in page_kinds().items():
            opened.goto(base_url + url)
            results = Axe().run(opened)
            found += [
                (kind, v["id"], v["impact"], [n["target"] for n in v["nodes"]][:3])
                for v in results.response["violations"]
                if v["impact"] in ("serious", "critical")
            ]
    finally:
        context.close()
    assert not found, found


def _local(route) -> bool:
    return route.request.url.startswith("http://127.0.0.1")


@pytest.mark.parametrize("kind", ["home", "papers", "paper", "agreement"])
def test_no_serious_accessibility_violation_on_a_phone(phone, base_url, kind) -> None:
    from axe_playwright_python.sync_playwright import Axe

    phone.goto(base_url + page_kinds()[kind])
    violations = Axe().run(phone).response["violations"]
    serious = [(v["id"], v["impact"]) for v in violations if v["impact"] in ("serious", "critical")]
    assert not serious, serious


# ---------------------------------------------------------------- readers' paths (issue 20)


def test_unknown_url_parameters_are_ignored(page, base_url) -> None:
    papers = load_papers()
    methods = select('category == "rl_method"', papers=papers)
    for query, expected in (
        ("?utm_source=newsletter&fbclid=abc123", len(papers)),
        ("?category=rl_method&utm_medium=social&gclid=x", len(methods)),
    ):
        page.goto(base_url + site_urls.PAPERS + query)
        page.wait_for_function(
            f"document.querySelector('[data-kb-shown]').textContent == '{expected}'"
        )
        assert page.locator("tr[data-key]:visible").count() == expected


def test_the_filtered_view_downloads_as_csv_and_bibtex(page, base_url) -> None:
    import csv
    import io

    papers = load_papers()
    wanted = select('category == "benchmark"', papers=papers)
    page.goto(base_url + site_urls.PAPERS + "?category=benchmark")
    with page.expect_download() as got:
        page.locator('[data-kb-download="csv"]').click()
    rows = list(csv.DictReader(io.StringIO(Path(got.value.path()).read_text())))
    assert sorted(r["key"] for r in rows) == sorted(wanted.index)
    with page.expect_download() as got:
        page.locator('[data-kb-download="bibtex"]').click()
    bib = Path(got.value.path()).read_text()
    cites = sorted(re.findall(r"^@\w+\{([^,]+),", bib, re.M))
    assert cites == sorted(str(papers.at[k, "bibtex_key"]) for k in wanted.index)


@pytest.mark.parametrize(("width", "height"), [(390, 844), (1280, 800)])
def test_first_screen_has_the_coverage_date_suggest_and_findings(browser, base_url, width, height):
    from masrl_kb.query.views import pool_coverage

    context = browser.new_context(viewport={"width": width, "height": height})
    opened = context.new_page()
    try:
        opened.goto(base_url)
        for selector in ("[data-kb-coverage]", ".kb-first a.kb-action", "[data-kb-finding]"):
            box = opened.locator(selector).first.bounding_box()
            assert box and box["y"] + box["height"] <= height, (selector, box)
        coverage = opened.locator("[data-kb-coverage]").first.inner_text()
        assert coverage == pool_coverage().isoformat()
        assert "Suggest a paper" in opened.locator(".kb-first a.kb-action").inner_text()
        _shot(opened, f"home-first-{width}")
    finally:
        context.close()


def test_agreement_figures_fit_a_phone_without_splitting_words(phone, base_url) -> None:
    phone.goto(base_url + site_urls.AGREEMENT)
    tables = phone.locator("table.kb-agreement")
    assert tables.count() > 0
    for i in range(tables.count()):
        table = tables.nth(i)
        assert table.evaluate("t => t.scrollWidth <= t.parentElement.clientWidth + 1")
        last = table.locator("thead th").last.bounding_box()
        assert last["x"] + last["width"] <= 390, "kappa and alpha stay on screen"
        # Every cell's text fits on its line: no axis name broken inside a word.
        broken = table.evaluate(
            "t => [...t.querySelectorAll('td, th')].filter(c => {"
            " const r = document.createRange(); r.selectNodeContents(c);"
            " const size = parseFloat(getComputedStyle(c).fontSize);"
            " return c.textContent.trim().indexOf(' ') < 0"
            "   && r.getBoundingClientRect().height > 1.8 * size;"
            "}).map(c => c.textContent)"
        )
        assert not broken, broken


def _accented_author() -> tuple[str, str]:
    """(the accent-free surname, a key of their paper) for an author with accents."""
    from masrl_kb.query.authors import authors, fold

    table = authors()
    for name, key in zip(table["author"], table["key"], strict=True):
        surname = name.split(",")[0].strip()
        if fold(surname) != surname.casefold() and len(surname) > 3:
            return fold(surname), key
    pytest.fail("the pool has an author whose name carries an accent")


def test_search_folds_accents_and_reads_arxiv_versions(page, base_url) -> None:
    papers = load_papers()
    plain, key = _accented_author()
    page.goto(base_url)
    _search(page, plain, f"/papers/{key}/")
    arxiv = papers["arxiv_id"].dropna()
    key, number = arxiv.index[0], arxiv.iloc[0]
    for probe in (f"{number}v2", f"arXiv:{number}"):
        page.locator(".md-search__input").fill("")
        _search(page, probe, f"/papers/{key}/")


def test_the_authors_index_lists_papers_and_coauthors(page, base_url) -> None:
    from masrl_kb.query.authors import authors

    table = authors()
    name = table["person"].value_counts().index[0]  # the person with the most papers
    page.goto(base_url + site_urls.AUTHORS)
    entry = page.locator("ul.kb-authors li", has=page.locator(f'h3[id="{_anchor(name)}"]'))
    links = entry.locator("a[href*='papers/']").evaluate_all("a => a.map(x => x.href)")
    expected = set(table.loc[table["person"] == name, "key"])
    assert {h.rstrip("/").rsplit("/", 1)[-1] for h in links} == expected


def test_paper_page_puts_links_by_the_title_and_folds_long_author_lists(page, base_url) -> None:
    papers = load_papers()
    long = papers[papers["authors"].map(len) > 10]
    assert len(long), "the pool has a paper with more than ten authors"
    key = long.index[0]
    page.goto(base_url + site_urls.paper(key))
    actions = page.locator(".kb-actions a.kb-action").all_inner_texts()
    assert actions[:1] == ["Cite"] and ("PDF" in actions) == isinstance(
        papers.at[key, "arxiv_id"], str
    )
    h1 = page.locator("h1").bounding_box()
    bar = page.locator(".kb-actions").bounding_box()
    assert 0 <= bar["y"] - (h1["y"] + h1["height"]) < 40, "the links sit right under the title"
    fold = page.locator("details.kb-more-authors")
    assert fold.evaluate("d => d.open") is False
    assert (
        len(papers.at[key, "authors"])
        and f"show all {len(papers.at[key, 'authors'])} authors" in fold.inner_text()
    )
    _shot(page, "paper-long-authors")


# ---------------------------------------------------------------- leaderboards (issue 30)


def _board_page() -> tuple[str, int]:
    """The benchmark page and the board (its index) with the most numbers to sort."""
    from masrl_kb.query.frames import results
    from masrl_kb.query.values import boards

    papers = load_papers()
    table = boards(results(papers), evaluations(papers), papers)
    sized = table[table["value_num"].notna()].groupby(["benchmark", "group"]).size()
    (bench, group), n = max(sized.items(), key=lambda kv: (kv[1], -kv[0][1]))
    assert n >= 2, "a board has two numbers to sort"
    index = sorted(table[table["benchmark"] == bench]["group"].unique()).index(group)
    return site_urls.benchmark(bench), index


def _column(board, label: str) -> list[str]:
    return board.locator(f'tbody td[data-label="{label}"]').evaluate_all(
        "cells => cells.map(c => c.getAttribute('data-sort'))"
    )


@pytest.mark.parametrize("width", [390, 1280])
def test_a_benchmark_board_sorts_by_clicking_and_fits_the_screen(browser, base_url, width):
    url, index = _board_page()
    context, opened = _open(browser, width)
    try:
        _settled(opened, base_url + url)
        board = opened.locator(f'[data-kb-board="{index}"] table[data-kb-sortable]')
        assert board.get_attribute("data-kb-sort-ready") == ""
        ranks = [int(r) for r in _column(board, "Rank") if r]
        assert ranks == sorted(ranks)  # arrives ranked
        value = board.locator('th[data-sort-key="value"] button')
        value.click()
        numbers = [float(v) for v in _column(board, "Value") if v]
        lower = board.locator('th[data-sort-key="value"]').get_attribute("data-sort-first")
        assert numbers == sorted(numbers, reverse=lower == "descending")
        assert board.locator('th[data-sort-key="value"]').get_attribute("aria-sort") == lower
        assert board.locator('th[data-sort-key="rank"]').get_attribute("aria-sort") == "none"
        value.click()  # the other way
        again = [float(v) for v in _column(board, "Value") if v]
        assert again == sorted(numbers, reverse=lower != "descending")
        board.locator('th[data-sort-key="paper"] button').click()
        titles = _column(board, "Paper")
        assert titles == sorted(titles)
        assert opened.evaluate(WIDE) <= 0, f"the page scrolls sideways at {width}px"
        box = board.evaluate("t => [t.scrollWidth, t.parentElement.clientWidth]")
        assert box[0] <= box[1] + 1, f"the table scrolls in its box at {width}px: {box}"
        # Every sort button is a target of 24 px and more (WCAG 2.2, 2.5.8).
        for b in board.locator("thead button").all():
            size = b.bounding_box()
            assert size["height"] >= 24 and size["width"] >= 24, size
        if width == 390:  # each value a card: its labels written before the cells
            label = board.locator('tbody td[data-label="Value"]').first.evaluate(
                "c => getComputedStyle(c, '::before').content"
            )
            assert label == '"Value: "'
        assert not opened.problems
        _shot(opened, f"benchmark-board-{width}")
        board.scroll_into_view_if_needed()
        _shot(opened, f"benchmark-board-table-{width}")
    finally:
        context.close()


@pytest.mark.parametrize("width", [390, 1280])
def test_a_benchmark_board_reads_in_full_without_scripts(browser, base_url, width) -> None:
    from masrl_kb.query.frames import results

    url, index = _board_page()
    bench = url.split("/")[1]
    values = results(load_papers())
    context = browser.new_context(
        viewport={"width": width, "height": 900}, java_script_enabled=False
    )
    context.route("**/*", lambda r: r.continue_() if _local(r) else r.abort())
    opened = context.new_page()
    try:
        opened.goto(base_url + url)
        rows = opened.locator("table[data-kb-sortable] tbody tr")
        assert rows.count() == (values["benchmark"] == bench).sum()
        assert opened.locator("table[data-kb-sortable] thead button").count() == 0
        board = opened.locator(f'[data-kb-board="{index}"] table')
        ranks = [int(r) for r in _column(board, "Rank") if r]
        assert ranks == sorted(ranks)
        assert opened.evaluate(WIDE) <= 0
        heads = opened.locator("table[data-kb-sortable] thead").first
        assert heads.is_visible() == (width == 1280)  # a phone needs no header to read cards
        _shot(opened, f"benchmark-board-noscript-{width}")
    finally:
        context.close()


def test_the_cite_page_names_the_version_and_the_pool_date(page, base_url) -> None:
    from masrl_kb.query.views import pool_coverage

    _settled(page, base_url + site_urls.CITE)
    covers = pool_coverage().isoformat()
    version = page.locator("[data-kb-version]").get_attribute("data-kb-version")
    assert page.locator("[data-kb-version]").get_attribute("data-kb-covers") == covers
    bibtex = page.locator("code.language-bibtex, pre code").first.inner_text()
    assert f"note = {{version {version}; pool covers papers up to {covers}" in bibtex
    assert not page.problems
    _shot(page, "cite-1280")


# ------------------------------------------------------- every number leads somewhere (issue 30)


def _shown(page, expected: int) -> None:
    page.wait_for_function(
        f"(document.querySelector('[data-kb-shown]') || {{}}).textContent == '{expected}'",
        timeout=15_000,
    )


def _visible_keys(page) -> list[str]:
    return page.locator("tr[data-key]:visible").evaluate_all("rows => rows.map(r => r.dataset.key)")


@pytest.mark.parametrize("width", [390, 1280])
def test_each_finding_opens_the_table_filtered_to_exactly_its_papers(browser, base_url, width):
    from masrl_kb.query.claims import evaluate_claims
    from masrl_kb.site.gaps import FINDINGS

    papers = load_papers()
    claims = {r.claim.id: r.claim for r in evaluate_claims(papers=papers)}
    context, opened = _open(browser, width)
    try:
        for finding in FINDINGS:
            expected = select(claims[finding.claim].where, papers=papers)
            if not len(expected):
                continue
            opened.goto(base_url)
            door = opened.locator(f'[data-kb-finding="{finding.claim}"] [data-kb-view]')
            door.click()
            opened.wait_for_url("**/papers/?list=*")
            _shown(opened, len(expected))
            assert sorted(_visible_keys(opened)) == sorted(expected.index), finding.claim
            assert opened.evaluate(WIDE) <= 0
        _shot(opened, f"papers-finding-{width}")
    finally:
        context.close()


@pytest.mark.parametrize("width", [390, 1280])
def test_gap_cells_and_and_n_more_open_their_whole_lists(browser, base_url, width) -> None:
    from masrl_kb.site.gaps import SURVEY_TABLES

    papers = load_papers()
    context, opened = _open(browser, width)
    try:
        # A gap cell: its strict or learned count opens exactly that reading's papers.
        broad, variant = SURVEY_TABLES[0]
        opened.goto(base_url + site_urls.GAPS)
        fold = opened.locator(f"details#{broad.slug}")
        fold.locator("summary").click()
        reading = "td:nth-child(3) [data-kb-set]"  # the strict or learned count, when not 0
        row = fold.locator("tr[data-row]").filter(has=opened.locator(reading)).first
        rv, cv = row.get_attribute("data-row"), row.get_attribute("data-col")
        door = row.locator(reading)
        cross = variant or broad
        expected = cell_papers(cross.rows, rv, cross.cols, cv, strict=cross.strict, papers=papers)
        assert door.inner_text() == str(len(expected))
        door.click()
        opened.wait_for_url("**/papers/?list=*")
        _shown(opened, len(expected))
        assert sorted(_visible_keys(opened)) == sorted(expected.index)
        # "and N more" under a headline gap opens all of its papers.
        opened.goto(base_url + site_urls.GAPS)
        more = opened.locator("a[data-kb-more]").first
        name = more.get_attribute("data-kb-more")
        total = opened.locator(f'[data-kb-set="{name}"]').first.get_attribute("data-n")
        more.click()
        opened.wait_for_url("**/papers/?list=*")
        _shown(opened, int(total))
        assert opened.locator("[data-kb-list-name]").inner_text() == name
        _shot(opened, f"papers-more-{width}")
    finally:
        context.close()


def test_an_unknown_list_says_so_and_shows_every_paper(page, base_url) -> None:
    papers = load_papers()
    page.goto(base_url + site_urls.PAPERS + "?list=no-such-list")
    _shown(page, len(papers))
    assert page.locator("[data-kb-list-missing]").is_visible()
    page.goto(base_url + site_urls.PAPERS + "?list=../../etc/passwd")  # never a path
    _shown(page, len(papers))
    assert not page.locator("[data-kb-list-note]").is_visible()


@pytest.mark.parametrize(("width", "height"), [(390, 844), (1280, 800)])
def test_claims_tables_rows_stay_within_half_a_screen(browser, base_url, width, height) -> None:
    context = browser.new_context(viewport={"width": width, "height": height})
    opened = context.new_page()
    try:
        for url in ("", site_urls.CLAIMS):
            opened.goto(base_url + url)
            heights = opened.locator("table.kb-claims tbody tr").evaluate_all(
                "rows => rows.map(r => r.getBoundingClientRect().height)"
            )
            assert heights and max(heights) <= height / 2, (url, max(heights))
            assert opened.evaluate(WIDE) <= 0
        _shot(opened, f"claims-{width}")
        # The moved-by list is one click away, behind its count.
        fold = opened.locator("details.kb-movers").first
        assert fold.evaluate("d => d.open") is False
        fold.locator("summary").click()
        assert fold.locator("a[href*='papers/']").first.is_visible()
    finally:
        context.close()


@pytest.mark.parametrize("width", [390, 1280])
def test_papers_table_filters_on_evaluation_and_rl_use(browser, base_url, width) -> None:
    papers = load_papers()
    benchmark = evaluations(papers=papers)["benchmark"].value_counts().index[0]
    on_it = set(evaluations(papers=papers).query("benchmark == @benchmark")["key"])
    cases = [
        ("?evaluation=ma_native", set(papers.index[papers["ma_native_eval"]])),
        (f"?benchmark={benchmark}", on_it),
        (
            "?category=rl_method&is_rl=yes",
            set(select('category == "rl_method" and is_rl == "yes"', papers=papers).index),
        ),
    ]
    context, opened = _open(browser, width)
    try:
        for query, expected in cases:
            opened.goto(base_url + site_urls.PAPERS + query)
            _shown(opened, len(expected))
            assert set(_visible_keys(opened)) == expected, query
            assert opened.evaluate(WIDE) <= 0
        # Clicking the chip does what the URL does.
        opened.goto(base_url + site_urls.PAPERS)
        opened.locator("[data-kb-facets]").evaluate("d => { d.open = true; }")
        opened.locator('.kb-chip[data-param="evaluation"][data-value="ma_native"]').click()
        _shown(opened, len(cases[0][1]))
        assert "evaluation=ma_native" in opened.url
        _shot(opened, f"papers-eval-{width}")
    finally:
        context.close()


def test_decisions_are_on_screen_at_1280_without_scrolling_sideways(page, base_url) -> None:
    for query in ("", "?learned=O5", "?list=claim-o5-learned-any"):
        page.goto(base_url + site_urls.PAPERS + query)
        page.wait_for_function("document.querySelector('[data-kb-shown]').textContent != '…'")
        head = page.locator('th[data-sort-key="decisions"]').bounding_box()
        assert head["x"] + head["width"] <= 1280, query
        box = page.locator(".kb-scroll").first
        assert box.evaluate("b => b.scrollWidth <= b.clientWidth + 1"), query
        marks = page.locator("tr[data-key]:visible td:nth-child(4) .kb-dec").first.bounding_box()
        assert marks["x"] + marks["width"] <= 1280
    _shot(page, "papers-1280")


# ---------------------------------------------------------------- researchers' search, authors,
# targets and the flow (issue 30, items 4, 6 and 8)

WIDTHS = [390, 1280]


def _search_groups(
    page, query: str, expect_href: str, groups: int = 3, links: int = 1000
) -> list[list[str]]:
    """Type ``query`` (the search opened first: on a phone behind the header's button) and
    wait until one of the first ``groups`` result groups links ``expect_href`` among its first
    ``links`` links (a result's link carries the theme's highlight parameter, ``?h=``, between
    path and anchor). Results for a prefix of the query arrive first, so a test that checks
    a link's rank passes ``links`` to wait for the ranking it checks."""
    box = page.locator(".md-search__input")
    if page.viewport_size["width"] < 960 and not page.locator("#__search").is_checked():
        page.locator("label.md-header__button[for='__search']").click()  # a phone's button
    box.click()
    box.fill("")
    box.press_sequentially(query)
    page.wait_for_function(
        "([href, n, k]) => [...document.querySelectorAll('.md-search-result__item')].slice(0, n)"
        ".some(g => [...g.querySelectorAll('a')].slice(0, k)"
        ".some(a => (a.pathname + a.hash).includes(href)))",
        arg=[expect_href, groups, links],
        timeout=20_000,
    )
    return page.locator(".md-search-result__item").evaluate_all(
        "gs => gs.slice(0, 5).map(g => [...g.querySelectorAll('a')].map(a => a.pathname + a.hash))"
    )


def _merged_person() -> tuple[str, str]:
    """(a spelling that differs from its person's, that person) from the records."""
    from masrl_kb.query.authors import authors

    table = authors()
    merged = table[table["author"] != table["person"]]
    assert len(merged), "the pool has a person written two ways (C-AUT-2)"
    return merged["author"].iloc[0], merged["person"].iloc[0]


def _anchor(person: str) -> str:
    from masrl_kb.query.authors import authors
    from masrl_kb.site.author_pages import author_anchors

    return author_anchors(set(authors()["person"]))[person]


@pytest.mark.parametrize("width", WIDTHS)
def test_search_finds_phrases_stems_benchmarks_and_people(browser, base_url, width) -> None:
    from masrl_kb.query.frames import evaluations

    papers = load_papers()
    evals = evaluations(papers=papers)
    hanabi = [
        k
        for k in evals.loc[evals["benchmark"] == "hanabi", "key"]
        if "hanabi" not in (papers.at[k, "title"] + papers.at[k, "summary"]).lower()
    ]
    assert hanabi, "a paper reports on Hanabi without naming it in its title or summary"
    spelling, person = _merged_person()
    family = person.split(",")[0]
    context, opened = _open(browser, width)
    try:
        _settled(opened, base_url)
        for query in ("when to stop", '"when to stop"', "stopping"):
            _search_groups(opened, query, site_urls.GAPS + "#o5-stop")
        if width == 390:
            _shot(opened, "search-stopping-390")
        found = _search_groups(opened, "Hanabi", site_urls.paper(hanabi[0]), groups=5)
        assert found
        # a paper's result shows the search tags that matched, and only those
        item = opened.locator(
            ".md-search-result__item",
            has=opened.locator(f"a[href*='{site_urls.paper(hanabi[0])}']"),
        ).first
        tags = item.locator(".md-tag").all_inner_texts()
        assert tags and all("hanabi" in t.lower() for t in tags), tags
        _shot(opened, f"search-hanabi-{width}")
        groups = _search_groups(opened, family, site_urls.AUTHORS + "#" + _anchor(person), links=2)
        first = next(g for g in groups if any(site_urls.AUTHORS in h for h in g))
        assert any(h.endswith("#" + _anchor(person)) for h in first[:2]), first  # the person
        _shot(opened, f"search-person-{width}")
        assert not opened.problems, opened.problems
    finally:
        context.close()


def test_search_documents_load_when_a_reader_types(page, base_url) -> None:
    """Pages fetch only the index's settings; the documents come with the first query."""
    loaded: list[str] = []
    page.on("request", lambda r: loaded.append(r.url))
    _settled(page, base_url + site_urls.GAPS)
    page.goto(base_url + site_urls.PAPERS)
    page.wait_for_function(SEARCH_READY, timeout=15_000)
    assert not [u for u in loaded if "search_docs" in u]
    assert [u for u in loaded if u.endswith("search/search_index.json")]
    _search_groups(page, "stopping", site_urls.GAPS + "#o5-stop")
    assert len([u for u in loaded if u.endswith("search/search_docs.json")]) == 1


@pytest.mark.parametrize("width", WIDTHS)
def test_one_entry_per_person_linked_from_bylines_with_ranked_coauthors(
    browser, base_url, width
) -> None:
    from masrl_kb.query.authors import authors, coauthors

    table = authors()
    spelling, person = _merged_person()
    key = table.loc[table["author"] == spelling, "key"].iloc[0]
    context, opened = _open(browser, width)
    try:
        opened.goto(base_url + site_urls.paper(key))
        byline = opened.locator(".kb-byline a", has_text=spelling).first
        byline.click()
        opened.wait_for_url(f"**/authors/#{_anchor(person)}")
        entry = opened.locator(f'h3[id="{_anchor(person)}"]')
        assert entry.inner_text() == person
        box = entry.bounding_box()
        assert box and 0 <= box["y"] < 900, "the link lands on the person"
        headings = opened.locator("ul.kb-authors h3", has_text=person.split(",")[0] + ",")
        names = headings.all_inner_texts()
        assert names.count(person) == 1 and spelling not in names  # one entry, not two
        item = opened.locator("ul.kb-authors li", has=entry)
        assert spelling in item.locator("[data-kb-variants]").inner_text()
        _shot(opened, f"authors-person-{width}")
        # the most prolific co-author network: every co-author linked, most shared first
        busiest = table["person"].value_counts().index[0]
        expected = coauthors(busiest)
        row = opened.locator("ul.kb-authors li", has=opened.locator(f'h3[id="{_anchor(busiest)}"]'))
        more = row.locator("details.kb-more-coauthors")
        if more.count():
            more.locator("summary").click()
            assert more.evaluate("d => d.open")
        links = row.locator(".kb-coauthors a")
        assert links.count() == len(expected)
        hrefs = links.evaluate_all("a => a.map(x => x.hash)")
        by_anchor = {"#" + _anchor(n): int(k) for n, k in expected.items()}
        assert sorted(hrefs) == sorted(by_anchor)
        shared = [by_anchor[h] for h in hrefs]
        assert shared == sorted(shared, reverse=True), "most papers shared first"
        target = hrefs[0]
        links.first.click()
        opened.wait_for_url(f"**/authors/{target}")
        overflow = opened.evaluate(WIDE)
        assert overflow <= 0, f"authors at {width}px scrolls sideways by {overflow}px"
    finally:
        context.close()


TARGETS = [
    ("home", "", ".kb-legend a"),
    ("rounds", site_urls.ROUNDS, "a.kb-dec"),
    ("papers", site_urls.PAPERS, ".kb-chip"),
]


@pytest.mark.parametrize("width", WIDTHS)
def test_targets_are_at_least_24_px(browser, base_url, width) -> None:
    """WCAG 2.2 target size (2.5.8): the legend links, decision marks and filter chips."""
    context, opened = _open(browser, width)
    try:
        for kind, url, selector in TARGETS:
            opened.goto(base_url + url)
            if kind == "papers" and width == 390:
                opened.locator("[data-kb-facets] summary").first.click()  # the top-level fold
            sizes = opened.locator(selector).evaluate_all(
                "els => els.filter(e => e.offsetParent).map(e => {"
                " const r = e.getBoundingClientRect();"
                " return [e.textContent, r.width, r.height]; })"
            )
            assert sizes, (kind, selector)
            small = [s for s in sizes if s[1] < 24 or s[2] < 24]
            assert not small, (kind, width, small[:3])
            if kind == "rounds":
                _shot(opened, f"rounds-marks-{width}")
            assert opened.evaluate(WIDE) <= 0, (kind, width)
    finally:
        context.close()


def test_round_ids_keep_their_underscore_above_the_link_line(page, base_url) -> None:
    page.goto(base_url + site_urls.ROUNDS)
    link = page.locator("tr[data-round] td a:has(code)").first
    assert "_" in link.inner_text()
    offset, size = link.evaluate(
        "a => [parseFloat(getComputedStyle(a).textUnderlineOffset),"
        " parseFloat(getComputedStyle(a.querySelector('code')).fontSize)]"
    )
    assert offset >= 0.3 * size, (offset, size)  # an underscore sits about 0.2 em down


CROSSINGS = """svg => {
  const boxes = [...svg.querySelectorAll('text')].map(t => t.getBBox());
  const hits = [];
  for (const edge of svg.querySelectorAll('.kb-edge')) {
    const total = edge.getTotalLength();
    for (let s = 0; s <= total; s += 2) {
      const p = edge.getPointAtLength(s);
      for (const b of boxes)
        if (p.x > b.x && p.x < b.x + b.width && p.y > b.y && p.y < b.y + b.height)
          hits.push([Math.round(p.x), Math.round(p.y)]);
    }
  }
  return hits;
}"""


@pytest.mark.parametrize("width", WIDTHS)
def test_the_prisma_flow_reads_on_a_phone_and_no_line_crosses_text(browser, base_url, width):
    context, opened = _open(browser, width)
    try:
        opened.goto(base_url + site_urls.ROUNDS)
        shown = opened.locator(".kb-flow-stacked" if width == 390 else ".kb-flow-wide").first
        hidden = opened.locator(".kb-flow-wide" if width == 390 else ".kb-flow-stacked").first
        assert shown.is_visible() and not hidden.is_visible()
        region = shown.locator(".kb-scroll")
        assert region.evaluate("r => r.scrollWidth <= r.clientWidth + 1"), "the flow fits"
        svg = shown.locator("svg")
        assert svg.evaluate(CROSSINGS) == []
        first = svg.locator("g.kb-box text").first.text_content()
        assert first.startswith("Records identified")  # not an empty column first
        region.scroll_into_view_if_needed()
        _shot(opened, f"prisma-{width}")
    finally:
        context.close()
