"""The built site shows exactly what the pandas API computes, and its links hold."""

from __future__ import annotations

import json
import posixpath
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pytest
from markupsafe import escape as html_escape

from masrl_kb.contrib.export.csv_io import records_from_csv
from masrl_kb.contrib.export.tables import papers_records
from masrl_kb.kb.paths import find_root
from masrl_kb.query.claims import evaluate_claims
from masrl_kb.query.frames import (
    cell_papers,
    crosstab,
    load_exclusions,
    load_papers,
    select,
    value_counts,
)
from masrl_kb.site import site_files
from masrl_kb.site import urls as site_urls
from masrl_kb.site.context import ALL_CROSSES
from masrl_kb.site.screening_pages import FEED_ENTRIES
from tests.test_site_support import cell_keys, hrefs, page, parse, with_attr

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def site(real_site: Path) -> Path:
    return real_site


@pytest.fixture(scope="module")
def papers():
    return load_papers()


@pytest.fixture(scope="module")
def exclusions():
    return load_exclusions()


def _stat(site: Path, name: str) -> int:
    (element,) = with_attr(parse(page(site, "")), "data-kb-stat", name)
    return int(element.text)


def test_home_shows_the_headline_numbers(site, papers, exclusions) -> None:
    assert _stat(site, "pooled") == len(papers)
    assert _stat(site, "excluded") == len(exclusions)
    assert _stat(site, "audited") == len(papers) + len(exclusions)


def _survey_claims(papers, exclusions):
    """The claims as the home page checks them: in the survey's view."""
    from masrl_kb.query.views import survey_view

    then_papers, then_exclusions = survey_view(papers, exclusions)
    return evaluate_claims(papers=then_papers, exclusions=then_exclusions)


def test_home_shows_every_claim_with_its_value(site, papers, exclusions) -> None:
    elements = parse(page(site, ""))
    results = _survey_claims(papers, exclusions)
    assert results, "claims.yaml holds claims"
    for result in results:
        (row,) = with_attr(elements, "data-claim", result.claim.id)
        assert row.get("data-holds") == str(result.holds).lower()
        value = next(e for e in elements[elements.index(row) :] if "data-kb-claim-value" in e.attrs)
        assert value.text == result.shown_value
        assert value.text.split(" of ")[0] == str(result.value)
        assert ("does not hold" in row.text) is (not result.holds)


def test_every_claim_on_home_opens_the_papers_behind_its_value(site, papers, exclusions) -> None:
    """Each claim row opens today's papers behind it in the table and as CSV (issue 30)."""
    elements = parse(page(site, ""))
    for result in evaluate_claims(papers=papers, exclusions=exclusions):
        (row,) = [e for e in with_attr(elements, "id", f"claim-{result.claim.id}")]
        names = {m.group(1) for e in elements if e.within(row) for m in [_list_view(e)] if m}
        if result.claim.table == "papers" and result.keys:
            assert f"claim-{result.claim.id}" in names
            keys = [r["key"] for r in _list_csv(site, f"claim-{result.claim.id}")]
            assert keys == list(result.keys)


def _heat_cells(site: Path, cross) -> dict[tuple[str, str], tuple[int, str | None]]:
    elements = parse(page(site, site_urls.crosstab(cross)))
    cells = {}
    for td in with_attr(elements, "data-count"):
        anchor = next((e for e in elements[elements.index(td) + 1 :][:1] if e.tag == "a"), None)
        cells[(td.get("data-row"), td.get("data-col"))] = (
            int(td.get("data-count")),
            anchor.get("href") if anchor else None,
        )
    return cells


@pytest.mark.parametrize("cross", ALL_CROSSES, ids=lambda c: c.slug)
def test_crosstab_cells_equal_the_api_and_link_to_exactly_their_papers(site, papers, cross):
    table = crosstab(cross.rows, cross.cols, strict=cross.strict, papers=papers)
    if cross.cols == "year":  # a year with no paper is no gap: the page leaves it out
        table = table.loc[:, table.sum() > 0]
    cells = _heat_cells(site, cross)
    assert len(cells) == table.size
    base = site_urls.crosstab(cross)
    for rv in table.index:
        for cv in table.columns:
            count, href = cells[(str(rv), str(cv))]
            assert count == table.at[rv, cv]
            if count == 0:
                assert href is None
                continue
            path, _, fragment = href.partition("#")
            target = posixpath.normpath(posixpath.join(base, path)) + "/"
            target += f"#{fragment}" if fragment else ""
            assert target == site_urls.cell(cross, rv, cv)
            listed = cell_keys(site, target)
            expected = list(
                cell_papers(
                    cross.rows, rv, cross.cols, cv, strict=cross.strict, papers=papers
                ).index
            )
            assert listed == expected


def test_zero_cells_are_marked_as_gaps(site) -> None:
    elements = parse(page(site, "crosstabs/reward_family-x-credit_unit/"))
    (cell,) = [e for e in with_attr(elements, "data-row", "R5") if e.get("data-col") == "token"]
    assert cell.tag == "td" and cell.classes() == ["kb-cell", "kb-gap"]
    assert cell.get("data-count") == "0"


@pytest.mark.parametrize(
    "axis", ["reward_family", "credit_unit", "topology", "category", "scenario"]
)
def test_taxonomy_pages_count_each_value(site, papers, axis) -> None:
    elements = parse(page(site, f"taxonomy/{axis}/"))
    counts = value_counts(axis, papers=papers)
    rows = with_attr(elements, "data-value")
    assert [r.get("data-value") for r in rows] == [str(v) for v in counts.index]
    shown = [int(e.text) for e in with_attr(elements, "data-kb-count", "Papers")]
    assert shown == [int(n) for n in counts]


def test_decision_page_counts_touched_and_learned(site, papers) -> None:
    elements = parse(page(site, "taxonomy/decision/"))
    touched = [int(e.text) for e in with_attr(elements, "data-kb-count", "Touched")]
    learned = [int(e.text) for e in with_attr(elements, "data-kb-count", "Learned")]
    assert touched == list(value_counts("decision", papers=papers))
    assert learned == list(value_counts("decision_learned", papers=papers))


def test_papers_table_lists_every_paper_with_its_tags(site, papers) -> None:
    rows = with_attr(parse(page(site, "papers/")), "data-key")
    newest_first = sorted(
        papers.index,
        key=lambda k: (-papers.at[k, "year"], -papers.at[k, "added"].toordinal(), k),
    )
    assert [r.get("data-key") for r in rows] == newest_first
    for row in rows:
        paper = papers.loc[row.get("data-key")]
        assert row.get("data-category") == paper["category"]
        assert row.get("data-year") == str(paper["year"])
        learned = [d for d in ("O1", "O2", "O3", "O4", "O5") if paper[d] == "learned"]
        assert row.get("data-learned") == " ".join(learned)


def test_every_paper_has_a_page_with_its_citation(site, papers) -> None:
    for key, paper in papers.iterrows():
        html = page(site, site_urls.paper(key)).read_text()
        assert f"{{{paper['bibtex_key']}," in html


def test_gaps_page_shows_o5_with_the_computed_count_and_papers(site, papers) -> None:
    elements = parse(page(site, "gaps/"))
    layers = [r for r in evaluate_claims(papers=papers) if r.claim.group == "o5-stop"]
    assert layers, "claims.yaml reads O5 at several depths"
    for i, result in enumerate(layers):
        (number,) = with_attr(elements, "data-kb-gap", f"o5-stop:{i}")
        assert number.text == result.shown_value
    learners = select('O5 == "learned"', papers=papers)
    assert len(learners) in {r.value for r in layers}  # one layer counts every learner
    linked = hrefs(elements)
    for key in learners.index:
        assert f"../{site_urls.paper(key)}" in linked
    # The closest list shows its first INLINE_LIMIT papers and counts the rest: a new
    # valid record past the limit is counted, not linked (nothing here holds records to it).
    from masrl_kb.site.gaps import INLINE_LIMIT

    present = list(select('O5 == "present"', papers=papers).index)
    for key in present[:INLINE_LIMIT]:
        assert f"../{site_urls.paper(key)}" in linked
    if len(present) > INLINE_LIMIT:
        text = page(site, "gaps/").read_text()
        assert f"and {len(present) - INLINE_LIMIT} more" in text


def test_exclusions_flow_numbers(site, papers, exclusions) -> None:
    elements = parse(page(site, "exclusions/"))
    flow = {e.get("data-kb-flow"): int(e.text) for e in with_attr(elements, "data-kb-flow")}
    assert flow["screened"] == len(papers) + len(exclusions)
    assert flow["retained"] == len(papers)
    assert flow["excluded"] == len(exclusions)
    for stage, n in value_counts("stage", papers=exclusions).items():
        assert flow[f"stage-{stage}"] == n
    html = page(site, "exclusions/").read_text()
    assert "<svg" in html and "mermaid" not in html  # drawn at build time, no script
    assert f"Records screened: {len(papers) + len(exclusions)}" in html
    assert len(with_attr(elements, "data-exclusion")) == len(exclusions)


def test_downloads_hold_the_pool(site, papers) -> None:
    data = json.loads((site / "downloads" / "papers.json").read_text())
    assert data == papers_records(papers)
    rows = records_from_csv((site / "downloads" / "papers.csv").read_text())
    assert [r["key"] for r in rows] == list(papers.index)
    # entries, not "@" signs: a title may hold one (Pass@K)
    bib = (site / "downloads" / "papers.bib").read_text()
    assert len(re.findall(r"^@\w+\{", bib, flags=re.M)) == len(papers)


def test_atom_feed_lists_the_newest_additions(site, papers) -> None:
    ns = {"a": "http://www.w3.org/2005/Atom"}
    feed = ET.parse(site / "feed.xml").getroot()
    newest = papers["added"].max().date().isoformat()
    assert feed.find("a:updated", ns).text.startswith(newest)
    entries = feed.findall("a:entry", ns)
    assert len(entries) == min(len(papers), FEED_ENTRIES)
    assert len({e.find("a:id", ns).text for e in entries}) == len(entries)


def _html_files(site: Path) -> list[Path]:
    return sorted(site.rglob("*.html"))


def test_every_href_is_relative_or_http(site) -> None:
    for path in _html_files(site):
        for element in parse(path):
            for name in ("href", "src"):
                value = element.get(name)
                if value is None:
                    continue
                scheme = urlsplit(value).scheme
                assert scheme in ("", "http", "https"), f"{path}: {name}={value!r}"


def test_internal_links_and_anchors_resolve(site) -> None:
    ids: dict[Path, set[str]] = {}
    for path in _html_files(site):
        if path.name == "404.html":
            continue
        url = "http://x/" + path.relative_to(site).as_posix()
        for element in with_attr(parse(path), "href"):
            href = element.get("href")
            if urlsplit(href).scheme or href.startswith("#") and len(href) == 1:
                continue
            target = urlsplit(urljoin(url, href))
            file = site / target.path.lstrip("/")
            file = file / "index.html" if target.path.endswith("/") else file
            assert file.is_file(), f"{path}: broken link {href}"
            if target.fragment and file.suffix == ".html":
                if file not in ids:
                    ids[file] = {e.get("id") for e in with_attr(parse(file), "id")}
                assert target.fragment in ids[file], f"{path}: missing anchor {href}"


def test_generated_pages_are_deterministic_and_not_committed(real_site_files) -> None:
    assert site_files(find_root()) == real_site_files  # a second render, the same files
    docs = {p.relative_to(REPO / "docs").as_posix() for p in (REPO / "docs").rglob("*.md")}
    assert not docs & {"index.md", "papers/index.md", "gaps/index.md"}


def test_cli_contract_exit_code(tmp_path) -> None:
    from masrl_kb.site import build_site

    # A root without records fails validation inside the build, so MkDocs exits non-zero.
    (tmp_path / "taxonomy.yaml").write_text((find_root() / "taxonomy.yaml").read_text())
    (tmp_path / "papers").mkdir()
    (tmp_path / "papers" / "broken.yaml").write_text("key: broken\n")
    assert build_site(tmp_path, site_dir=tmp_path / "site") != 0


def test_sitemap_dates_are_the_newest_record_date(site, papers) -> None:
    newest = papers["added"].max().date().isoformat()
    dates = set(re.findall(r"<lastmod>([^<]*)</lastmod>", (site / "sitemap.xml").read_text()))
    assert dates == {newest}


def test_per_paper_and_cell_pages_stay_out_of_the_navigation(site, papers) -> None:
    for url in ("", "papers/", site_urls.paper(papers.index[0])):
        nav = [
            e.get("href") or ""
            for e in parse(page(site, url))
            if "md-nav__link" in (e.get("class") or "")
        ]
        assert nav, "the page has a navigation"
        assert not [h for h in nav if "cells/" in h or re.search(r"papers/[^/]+/$", h)]


def test_nav_lists_every_crosstab_page() -> None:
    config = (REPO / "mkdocs.yml").read_text()
    listed = re.findall(r"crosstabs/([^/\s]+)/index\.md", config)
    assert listed == [c.slug for c in ALL_CROSSES]


def test_no_page_loads_anything_from_another_host(site) -> None:
    for path in _html_files(site):
        html = path.read_text()
        assert "mermaid" not in html and "unpkg" not in html, path
        for element in parse(path):
            if element.tag in ("script", "img", "iframe") or (
                element.tag == "link" and element.get("rel") == "stylesheet"
            ):
                src = element.get("src") or element.get("href") or ""
                assert not urlsplit(src).scheme, f"{path}: {src}"


def test_the_site_ships_only_the_assets_a_reader_loads(site) -> None:
    """Every script and stylesheet a page names exists; no source maps, no unused tokenisers."""
    assets = {p.relative_to(site).as_posix() for p in (site / "assets").rglob("*") if p.is_file()}
    assert not [a for a in assets if a.endswith(".map")]
    language = json.loads((site / "search" / "search_index.json").read_text())["config"]["lang"]
    assert language == ["en"] and not [a for a in assets if "/lunr/" in a]
    for element in parse(site / "index.html"):
        src = element.get("src") if element.tag == "script" else None
        if element.tag == "link" and element.get("rel") == "stylesheet":
            src = element.get("href")
        if src:
            assert (site / src).is_file(), src


def _totals(site: Path, cross) -> tuple[list[int], list[int], int]:
    elements = parse(page(site, site_urls.crosstab(cross)))
    rows = [int(e.text) for e in with_attr(elements, "data-kb-total", "row")]
    cols = [int(e.text) for e in with_attr(elements, "data-kb-total", "col")]
    (everything,) = with_attr(elements, "data-kb-total", "all")
    return rows, cols, int(everything.text)


@pytest.mark.parametrize("cross", ALL_CROSSES, ids=lambda c: c.slug)
def test_crosstab_totals_count_each_paper_once(site, papers, cross) -> None:
    table = crosstab(cross.rows, cross.cols, strict=cross.strict, papers=papers)
    rows, cols, everything = _totals(site, cross)
    subset = papers[papers["credit_strict"]] if cross.strict else papers

    def members(axis: str, value) -> set[str]:
        return set(select_axis(subset, axis, value))

    row_sets = [members(cross.rows, rv) for rv in table.index]
    order = list(table.columns)
    if cross.cols == "year":  # oldest first, and only years with a paper
        order = sorted(c for c in table.columns if table[c].sum())
    col_sets = [members(cross.cols, cv) for cv in order]
    assert rows == [len(s) for s in row_sets]
    assert cols == [len(s) for s in col_sets]
    assert everything == len(set().union(*row_sets) & set().union(*col_sets))


def select_axis(papers, axis: str, value) -> list[str]:
    from masrl_kb.query.frames import axis_mask

    return list(papers[axis_mask(papers, axis, value)].index)


def test_year_columns_run_oldest_to_newest(site) -> None:
    elements = parse(page(site, "crosstabs/category-x-year/"))
    years = [int(e.get("data-col")) for e in with_attr(elements, "data-count")]
    first_row = years[: len(set(years))]
    assert first_row == sorted(first_row)


def test_shading_ignores_the_na_cells(site, papers) -> None:
    cross = ALL_CROSSES[0]  # reward family x credit unit, where NA x NA is large
    table = crosstab(cross.rows, cross.cols, papers=papers)
    real = table.drop(index="NA", columns="NA", errors="ignore")
    peak = int(real.to_numpy().max())
    shades = {
        (td.get("data-row"), td.get("data-col")): float(td.get("style").removeprefix("--h:"))
        for td in with_attr(parse(page(site, site_urls.crosstab(cross))), "style")
        if td.tag == "td"
    }
    hottest = [(r, c) for r, c in real.stack().index if real.at[r, c] == peak]
    assert all(shades[cell] == 1.0 for cell in hottest)


def test_paper_pages_link_their_source_and_carry_scholar_tags(site, papers) -> None:
    key = papers.index[0]
    paper = papers.loc[key]
    elements = parse(page(site, site_urls.paper(key)))
    hrefs = [e.get("href") or "" for e in elements if e.tag == "a"]
    assert any(h.endswith(f"/edit/main/papers/{key}.yaml") for h in hrefs)
    assert any("/issues/new?" in h and f"key={key}" in h for h in hrefs)
    meta = {}
    for e in elements:
        if e.tag == "meta" and (e.get("name") or "").startswith("citation_"):
            meta.setdefault(e.get("name"), []).append(e.get("content"))
    assert meta["citation_title"] == [paper["title"]]
    assert meta["citation_author"] == list(paper["authors"])
    feeds = [e for e in elements if e.tag == "link" and e.get("type") == "application/atom+xml"]
    assert feeds and feeds[0].get("href").endswith("feed.xml")


def test_paper_pages_never_repeat_a_link(site, papers) -> None:
    """The record's facts (byline and fields table) name each outside link once;
    the evidence notes below may cite the same paper for several readings."""
    for key in papers.index:
        elements = parse(page(site, site_urls.paper(key)))
        first_section = next(i for i, e in enumerate(elements) if e.tag == "h2")
        elements = elements[:first_section]
        article = [
            e.get("href") for e in elements if e.tag == "a" and "http" in (e.get("href") or "")
        ]
        outbound = [h for h in article if "github.com" not in h]
        assert len(outbound) == len(set(outbound)), key


def _search_entries(site: Path) -> list[dict]:
    return json.loads((site / "search" / "search_docs.json").read_text())


def _search_docs(site: Path) -> dict[str, str]:
    docs: dict[str, str] = {}
    for doc in _search_entries(site):
        base = doc["location"].split("#")[0]
        docs[base] = docs.get(base, "") + " " + doc["title"] + " " + doc["text"]
    return docs


def test_pages_load_only_the_search_settings_and_name_the_deferring_worker(site) -> None:
    """The index every page fetches holds no documents (they load on the first query),
    and each page's configuration names masrl-kb's worker, which imports the theme's."""
    index = json.loads((site / "search" / "search_index.json").read_text())
    assert index["docs"] == [] and index["config"]["separator"]
    assert len(_search_entries(site)) > 1000
    config = next(e for e in parse(site / "index.html") if e.get("id") == "__config")
    worker = json.loads(config.text)["search"]
    assert re.search(r"assets/javascripts/workers/kb-search\.[0-9a-f]{8}\.js$", worker)
    text = (site / worker).read_text()
    (theme,) = re.findall(r'var MATERIAL = "([^"]+)"', text)
    assert (site / "assets/javascripts/workers" / theme).is_file()
    assert '"search/search_docs.json"' in text.replace("../../../", "")


def test_paper_pages_are_found_by_tags_decisions_and_benchmarks(site, papers) -> None:
    """Search tags: a paper is found by its benchmarks and by the decisions it learns,
    though its title and summary name neither."""
    from masrl_kb.query.frames import evaluations

    tags = {d["location"]: d.get("tags", []) for d in _search_entries(site)}
    evals = evaluations(papers=papers)
    for key, label in zip(evals["key"], evals["label"], strict=True):
        assert any(t.startswith(str(html_escape(label))) for t in tags[site_urls.paper(key)])
    for key in select('O5 == "learned"', papers=papers).index:
        assert "learns O5 Stop" in tags[site_urls.paper(key)], key


def test_search_index_finds_every_paper_by_surname_key_and_arxiv_id(site, papers) -> None:
    docs = _search_docs(site)
    for key, paper in papers.iterrows():
        text = docs[site_urls.paper(key)].lower()
        for author in paper["authors"]:
            surname = author.split(",")[0].strip().lower()
            assert surname in text, (key, surname)
        assert key.lower() in text
        if isinstance(paper["arxiv_id"], str):
            assert paper["arxiv_id"] in text
        assert "authors" + paper["authors"][0].lower()[:3] not in text  # label glued to name


def test_search_index_leaves_out_tables_and_cells_without_a_finding(site, papers) -> None:
    """Cross-tab tables and paper lists stay out; a cell page is in only when the Gaps
    page lists it (a near-empty cell), and then without its list of papers."""
    from masrl_kb.site.context import load_context
    from masrl_kb.site.crosstabs import gap_count

    docs = _search_docs(site)
    assert not [u for u in docs if u.startswith("crosstabs/") and u != "crosstabs/"]
    key = papers.index[0]
    assert "orchestration decisions" not in docs[site_urls.paper(key)].lower()
    ctx = load_context()
    indexed = {u for u in docs if u.startswith("cells/")}
    gaps = {
        site_urls.cell(cross, rv, cv)
        for (cross, rv, cv) in ctx.cells
        if gap_count(ctx, cross, rv, cv) is not None
    }
    assert indexed == gaps and gaps
    for url in gaps:
        assert "A gap:" in docs[url]
        listed = cell_keys(site, url)
        assert not [k for k in listed if ctx.rows[k]["title"] in docs[url]], url


def test_gaps_page_folds_cells_by_axis_pair_naming_papers_by_title(site, papers) -> None:
    from masrl_kb.site.gaps import SURVEY_TABLES

    elements = parse(page(site, "gaps/"))
    folds = [e for e in elements if e.tag == "details" and "kb-fold" in (e.get("class") or "")]
    assert [f.get("id") for f in folds] == [broad.slug for broad, _ in SURVEY_TABLES]
    titles = set(papers["title"])
    start = elements.index(folds[0])
    paper_page = re.compile(r"(?:\.\./)*papers/[^/?#]+/")  # not the table's ?list= views
    linked = [
        e.text
        for e in elements[start:]
        if e.tag == "a" and paper_page.fullmatch(e.get("href") or "")
    ]
    assert linked and all(text in titles for text in linked)


def test_paper_pages_link_the_cells_and_readings_that_list_them(site, papers) -> None:
    for key in papers.index:
        elements = parse(page(site, site_urls.paper(key)))
        (block,) = [e for e in elements if e.tag == "ul" and e.classes() == ["kb-cells"]]
        cells = sorted(h.removeprefix("../../") for h in hrefs(elements, within=block))
        assert cells and all(h.startswith("cells/") for h in cells), key
        for target in cells:
            assert key in cell_keys(site, target), (key, target)
        readings = {t for t in cells if "#" in t}
        strict = (
            papers.at[key, "credit_strict"] and papers.at[key, "credit_unit"] != "NA"
        )  # NA x NA is not a cell
        assert any(t.endswith("#strict") for t in readings) == bool(strict), key


def test_the_agreement_page_leads_with_the_declared_pairs(site, papers) -> None:
    from masrl_kb.query.agreement import (
        agreement,
        codebook_examples,
        declared_pairs,
        reader_list,
        readings,
        without_papers,
    )

    pairs = declared_pairs(reader_list())
    table = readings(papers)
    full = agreement(table=table, pairs=pairs).set_index(["readers", "axis"])
    out = agreement(table=without_papers(table, codebook_examples()), pairs=pairs)
    out = out.set_index(["readers", "axis"])
    elements = parse(page(site, site_urls.AGREEMENT))

    def table_of(e):
        while e is not None and e.tag != "table":
            e = e.parent
        return e

    def headline(e) -> bool:
        table = table_of(e)
        return table is not None and "kb-headline" in table.get("class").split()

    def subset(e) -> str:
        return table_of(e).get("data-kb-subset")

    everything = [e for e in with_attr(elements, "data-readers") if e.tag == "tr" and headline(e)]
    rows = [e for e in everything if subset(e) == "all"]
    not_cited = {
        (e.get("data-readers"), e.get("data-axis")): e
        for e in everything
        if subset(e) == "not-cited"
    }
    assert {r.get("data-readers") for r in rows} == set(full.index.get_level_values(0))
    for row in rows:
        name = (row.get("data-readers"), row.get("data-axis"))
        cells = [e.text.strip() for e in elements if e.tag == "td" and e.parent is row]
        assert int(cells[1]) == full.loc[name, "n"]
        assert cells[2] == f"{full.loc[name, 'agreement']:.0%}"
        other = [e.text.strip() for e in elements if e.tag == "td" and e.parent is not_cited[name]]
        assert int(other[1]) == (out.loc[name, "n"] if name in out.index else 0)


def test_the_rounds_page_says_how_far_the_searches_reached_beyond_the_coverage(site) -> None:
    from masrl_kb.kb.rounds import load_rounds
    from masrl_kb.query.views import pool_coverage, pool_searched

    elements = parse(page(site, site_urls.ROUNDS))
    (covers,) = [e for e in with_attr(elements, "data-kb-coverage") if e.tag == "strong"]
    assert covers.get("data-kb-coverage") == pool_coverage().isoformat()
    waiting = sum(r.awaiting for r in load_rounds())
    if pool_searched() > pool_coverage():
        (searched,) = with_attr(elements, "data-kb-searched")
        (awaiting,) = with_attr(elements, "data-kb-awaiting")
        assert searched.get("data-kb-searched") == pool_searched().isoformat()
        assert int(awaiting.get("data-kb-awaiting")) == waiting > 0
    else:
        assert not with_attr(elements, "data-kb-searched")


# ------------------------------------------------------- every number leads somewhere (issue 30)

LIST_VIEW = re.compile(r"(?:\.\./)*papers/\?list=([A-Za-z0-9_-]+)")


def _list_csv(site: Path, name: str) -> list[dict[str, str]]:
    import csv
    import io

    text = (site / "downloads" / "lists" / f"{name}.csv").read_text(encoding="utf-8")
    return list(csv.DictReader(io.StringIO(text)))


def _list_view(element) -> re.Match | None:
    return LIST_VIEW.fullmatch(element.get("href") or "")


def _views(elements: list) -> list[str]:
    """The list names the page's links open in the papers table."""
    return [m.group(1) for e in elements if (m := LIST_VIEW.fullmatch(e.get("href") or ""))]


def test_every_list_a_page_opens_has_its_csv_and_every_csv_is_linked(site) -> None:
    opened: set[str] = set()
    for path in _html_files(site):
        opened |= set(_views(parse(path)))
    written = {p.stem for p in (site / "downloads" / "lists").glob("*.csv")}
    assert opened and opened == written


def test_each_finding_opens_exactly_the_papers_its_claim_counts(site, papers, exclusions) -> None:
    from masrl_kb.site.gaps import FINDINGS

    results = {r.claim.id: r for r in evaluate_claims(papers=papers, exclusions=exclusions)}
    for url in ("", "gaps/"):
        elements = parse(page(site, url))
        for finding in FINDINGS:
            (item,) = with_attr(elements, "data-kb-finding", finding.claim)
            inside = [e for e in elements if e.within(item)]
            names = sorted(set(_views(inside)))
            claim = results[finding.claim].claim
            expected = list(select(claim.where, papers=papers).index)
            if not expected:  # nothing to open: the number stands alone
                assert names == [], (url, finding.claim)
                continue
            assert names == [f"claim-{finding.claim}"], (url, finding.claim)
            assert [r["key"] for r in _list_csv(site, names[0])] == expected
            (door,) = [e for e in inside if "data-kb-set" in e.attrs]
            assert door.get("data-n") == str(len(expected))
            csv_links = [e.get("href") for e in inside if e.tag == "a" and "download" in e.attrs]
            assert csv_links == [f"{'../' if url else ''}downloads/lists/{names[0]}.csv"]


def test_gap_lists_link_every_paper_and_no_plain_and_n_more_remains(site, papers) -> None:
    from masrl_kb.site.gaps import HEADLINES, INLINE_LIMIT

    for url in ("", "gaps/", "claims/", "since-survey/"):
        elements = parse(page(site, url))
        plain = [
            e.text
            for e in elements
            if re.fullmatch(r"and \d+ more", e.text.strip()) and e.tag != "a"
        ]
        assert not plain, (url, plain)
    elements = parse(page(site, "gaps/"))
    for gap in HEADLINES:
        members = list(select(gap.members, papers=papers).index)
        if members:  # an empty gap writes no list
            assert [r["key"] for r in _list_csv(site, f"gap-{gap.id}-members")] == members
        more = with_attr(elements, "data-kb-more", f"gap-{gap.id}-members")
        assert len(more) == (len(members) > INLINE_LIMIT)
        if more:
            assert more[0].text == f"and {len(members) - INLINE_LIMIT} more"


def test_gap_cells_open_their_papers_under_both_readings(site, papers) -> None:
    from masrl_kb.site.gaps import SURVEY_TABLES

    elements = parse(page(site, "gaps/"))
    checked = 0
    for broad, variant in SURVEY_TABLES:
        (fold,) = with_attr(elements, "id", broad.slug)
        rows = [e for e in elements if e.tag == "tr" and e.within(fold) and e.get("data-row")]
        for row in rows:
            rv, cv = row.get("data-row"), row.get("data-col")
            doors = [e for e in elements if e.within(row) and e.get("data-kb-set")]
            for cross, door in zip([broad, variant or broad], doors, strict=False):
                expected = cell_papers(
                    cross.rows, rv, cross.cols, cv, strict=cross.strict, papers=papers
                )
                assert door.text == str(len(expected))
                keys = [r["key"] for r in _list_csv(site, door.get("data-kb-set"))]
                assert sorted(keys) == sorted(expected.index)
                checked += 1
    assert checked > 10


def test_list_csvs_are_deterministic_and_inert_in_a_spreadsheet(tmp_path) -> None:
    import csv
    import io

    from masrl_kb.kb.synthetic import write_synthetic_root
    from masrl_kb.site import lists
    from masrl_kb.site.context import load_context
    from tests.test_site_support import _rewrite

    root = write_synthetic_root(tmp_path / "kb", papers=4, exclusions=1)
    record = sorted((root / "papers").glob("*.yaml"))[0]
    _rewrite(record, {"title": '=HYPERLINK("http://x", "y")', "venue": "@SUM(A1)"})
    ctx = load_context(root)
    key = record.stem
    shown = lists.register(ctx, "some-list", [key])
    assert shown == {
        "name": "some-list",
        "n": 1,
        "view": "papers/?list=some-list",
        "csv": "downloads/lists/some-list.csv",
    }
    assert lists.register(ctx, "empty", [])["n"] == 0
    (text,) = lists.list_files(ctx).values()  # the empty list writes no file
    (row,) = csv.DictReader(io.StringIO(text))
    assert row["key"] == key and row["title"] == '\'=HYPERLINK("http://x", "y")'
    assert row["venue"] == "'@SUM(A1)"
    assert lists.list_files(ctx) == {"downloads/lists/some-list.csv": text}
    with pytest.raises(ValueError, match="different papers"):
        lists.register(ctx, "some-list", [])
    with pytest.raises(ValueError, match="not a list name"):
        lists.register(ctx, "../papers", [key])


def test_papers_table_filters_on_evaluation_benchmark_and_rl_use(site, papers) -> None:
    from masrl_kb.query.frames import evaluations, results

    elements = parse(page(site, "papers/"))
    table = evaluations(papers=papers)
    reported = set(results(papers=papers)["key"])
    for row in with_attr(elements, "data-key"):
        key = row.get("data-key")
        evaluation = set((row.get("data-evaluation") or "").split())
        assert ("ma_native" in evaluation) == bool(papers.at[key, "ma_native_eval"]), key
        assert ("benchmark" in evaluation) == bool(papers.at[key, "n_benchmarks"] > 0), key
        assert ("results" in evaluation) == (key in reported), key
        on = sorted(set(table.loc[table["key"] == key, "benchmark"]))
        assert (row.get("data-benchmark") or "").split() == on
        assert row.get("data-is_rl") == papers.at[key, "is_rl"]
    chips = {(e.get("data-param"), e.get("data-value")) for e in with_attr(elements, "data-param")}
    assert {("benchmark", b) for b in table["benchmark"]} <= chips
    assert {("evaluation", v) for v in ("ma_native", "results", "benchmark")} <= chips
    assert {("is_rl", v) for v in ("yes", "partial", "no")} <= chips
    # "RL method" is the survey's category: the table says how many of them use no RL.
    methods = papers[papers["category"] == "rl_method"]
    (note,) = with_attr(elements, "data-kb-rl-note")
    assert f"of the {len(methods)} papers" in note.text
    assert f"{(methods['is_rl'] == 'no').sum()} are tagged as not using RL" in note.text
    # Decisions come right after the year, before the tag columns.
    heads = [e.get("data-sort-key") for e in with_attr(elements, "data-sort-key")]
    assert heads[:4] == ["paper", "authors", "year", "decisions"]


def test_search_text_keeps_a_space_between_cells_items_and_lines(site) -> None:
    """The indexer drops tags, so text written with no whitespace between table cells,
    list items or a line break ran together ("84today 179"); the hook spaces them."""
    claims = next(
        d for d in _search_entries(site) if d["location"].endswith("#the-surveys-claims-re-checked")
    )
    text = re.sub(r"\s+", " ", claims["text"])
    assert "Status Claim Value Expected Papers" in text
    assert re.search(r"\b84 today \d+ == 84 the papers table", text)
    glued = [d["location"] for d in _search_entries(site) if re.search(r"[a-z]today \d", d["text"])]
    assert glued == []


def test_spacing_for_search_leaves_preformatted_text_alone() -> None:
    from masrl_kb.site.search import spaced_for_search

    pre = "<pre><code><td>a</td><td>b</td></code></pre>"
    spaced = spaced_for_search("<ul><li>x</li><li>y</li></ul>" + pre + "<p>a<br>b</p>")
    assert pre in spaced
    assert re.sub(r"<[^>]+>", "", spaced.replace(pre, "")).split() == ["x", "y", "a", "b"]


def test_each_paper_page_tables_the_other_readings_of_the_api(real_site_files) -> None:
    """A paper page's "Other readings" has one row per reader of ``paper_readings()`` and
    marks exactly the codings that differ from the record's."""
    from masrl_kb.kb.readings import KB_READER, READING_AXES
    from masrl_kb.query.agreement import paper_readings, readings

    table = readings()
    shown = 0
    for key in sorted(set(table["key"])):
        frame = paper_readings(key, table=table)
        text = real_site_files[f"papers/{key}/index.md"]
        rows = re.findall(r'<tr data-reader="([^"]+)">(.*?)</tr>', text)
        assert [r for r, _ in rows] == [KB_READER, *sorted(set(frame.index) - {KB_READER})]
        others = frame.drop(index=KB_READER)
        axes = [a for a in READING_AXES if a in others and others[a].notna().any()]
        differ = sum(
            isinstance(v, str | bool) and v != frame.at[KB_READER, a]
            for a in axes
            for v in others[a]
        )
        assert sum(cells.count('class="kb-differs"') for _, cells in rows) == differ, key
        shown += bool(differ)
    assert shown > 10  # the real readings disagree on many papers
