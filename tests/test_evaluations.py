"""Releases and evaluations: the query functions, the evaluations and benchmark pages, and
the paper pages."""

from __future__ import annotations

from pathlib import Path

import pytest

from masrl_kb.kb.benchmarks import read_benchmarks
from masrl_kb.query.frames import ARTIFACT_KINDS, benchmark_matrix, evaluations, load_papers
from tests.test_site_support import hrefs, page, parse, with_attr


@pytest.fixture(scope="module")
def site(real_site: Path) -> Path:
    return real_site


@pytest.fixture(scope="module")
def papers():
    return load_papers()


def test_one_row_per_paper_and_benchmark(papers) -> None:
    table = evaluations(papers)
    listed = sum(len(e) for e in papers["evaluated_on"] if isinstance(e, list))
    assert len(table) == listed
    assert not table.duplicated(["key", "benchmark"]).any()
    pooled = set(papers.index[papers["category"] == "benchmark"])
    outside = {b.id: b for b in read_benchmarks().benchmarks}
    for row in table.itertuples():
        assert row.pooled == (row.benchmark in pooled)
        expected = papers.at[row.benchmark, "title"] if row.pooled else outside[row.benchmark].name
        assert row.label == expected


def test_release_columns_follow_the_artifacts(papers) -> None:
    for key, row in papers.iterrows():
        for kind in ARTIFACT_KINDS:
            value = row["artifacts"][kind]
            assert row[f"has_{kind}"] == isinstance(value, str), (key, kind)


def test_benchmark_use_counts_rl_methods(papers) -> None:
    table = evaluations(papers)
    methods = table[table["category"] == "rl_method"]
    for key in papers.index[papers["category"] == "benchmark"]:
        users = methods.loc[methods["benchmark"] == key, "key"].nunique()
        assert papers.at[key, "rl_methods_using"] == users


def test_matrix_puts_pooled_benchmarks_first_then_the_most_used(papers) -> None:
    matrix = benchmark_matrix(papers, outside=5)
    pooled = sorted(papers.index[papers["category"] == "benchmark"])
    assert list(matrix.columns[: len(pooled)]) == pooled
    table = evaluations(papers)
    counts = table[~table["pooled"]].groupby("benchmark")["key"].nunique()
    shown = list(matrix.columns[len(pooled) :])
    assert len(shown) == min(5, len(counts))
    assert all(counts[b] >= counts.drop(shown).max() for b in shown)


def _tables(elements) -> dict[str, set[str]]:
    """Each benchmark section's papers (data-benchmark section, data-paper rows)."""
    listed: dict[str, set[str]] = {}
    current = None
    for e in elements:
        if e.tag == "section" and "data-benchmark" in e.attrs:
            current = listed.setdefault(e.get("data-benchmark"), set())
        elif e.tag == "tr" and "data-paper" in e.attrs and current is not None:
            current.add(e.get("data-paper"))
    return listed


def test_each_benchmark_table_lists_its_papers_values_first(site, papers) -> None:
    from masrl_kb.query.frames import results
    from masrl_kb.site.judgement_pages import GROUP_ROWS

    table = evaluations(papers)
    valued = set(zip(*[results(papers)[c] for c in ("key", "benchmark")], strict=True))
    listed = _tables(parse(page(site, "evaluations/")))
    assert listed, "the page has benchmark tables"
    for bench, keys in listed.items():
        users = set(table.loc[table["benchmark"] == bench, "key"])
        assert keys <= users and len(keys) == min(len(users), GROUP_ROWS), bench
        with_values = {k for k in users if (k, bench) in valued}
        assert with_values <= keys or len(keys) == GROUP_ROWS, bench
    native = set(table.loc[table["multi_agent_native"], "benchmark"])
    assert native <= set(listed), "every multi-agent-native benchmark has its table"


def test_pooled_benchmarks_are_tabled_when_used_and_named_when_not(site, papers) -> None:
    elements = parse(page(site, "evaluations/"))
    tabled = set(_tables(elements))
    line = [e for e in elements if e.tag == "p" and "kb-unused" in e.classes()]
    linked = hrefs(elements, within=line[0]) if line else set()
    named = {h.removeprefix("../papers/").rstrip("/") for h in linked}
    used = set(evaluations(papers)["benchmark"])
    assert tabled <= used
    for key in papers.index[papers["category"] == "benchmark"]:
        assert (key in tabled) == (key in used), key
        assert (key in named) == (key not in used), key


def test_every_used_benchmark_has_a_page_listing_its_papers(site, papers) -> None:
    table = evaluations(papers)
    for bench, rows in table.groupby("benchmark"):
        elements = parse(page(site, f"benchmarks/{bench}/"))
        keys = {e.get("data-paper") for e in with_attr(elements, "data-paper")}
        assert keys == set(rows["key"]), bench


def test_recorded_results_appear_with_their_source(site, papers) -> None:
    from masrl_kb.query.frames import results

    values = results(papers)
    assert len(values), "the records hold sourced results"
    for r in values.itertuples():
        elements = parse(page(site, f"benchmarks/{r.benchmark}/"))
        rows = [e for e in with_attr(elements, "data-paper", r.key) if e.tag == "tr"]
        row = next(
            (
                row
                for row in rows
                if any(e.tag == "strong" and e.text == r.value and e.within(row) for e in elements)
            ),
            None,
        )
        assert row, (r.key, r.benchmark, r.value)
        assert r.source in hrefs(elements, within=row)


def test_evaluation_claims_are_on_the_gaps_page(site) -> None:
    layers = {
        e.get("data-kb-layer") for e in with_attr(parse(page(site, "gaps/")), "data-kb-layer")
    }
    for claim in (
        "rl-methods-ma-native-eval",
        "pooled-benchmarks-unused",
        "rl-methods-release-code",
    ):
        assert claim in layers


def test_papers_table_filters_by_release(site, papers) -> None:
    elements = parse(page(site, "papers/"))
    rows = {e.get("data-key"): e for e in with_attr(elements, "data-key")}
    assert set(rows) == set(papers.index)
    for key, row in rows.items():
        kinds = set((row.get("data-releases") or "").split())
        expected = {k for k in ("code", "weights", "traces", "data") if papers.at[key, f"has_{k}"]}
        assert kinds == expected, key


def test_paper_page_badges_match_the_record(site, papers) -> None:
    for key in list(papers.index)[::7]:
        elements = parse(page(site, f"papers/{key}/"))
        released = {e.get("data-release") for e in with_attr(elements, "data-release")}
        missing = {e.get("data-release-none") for e in with_attr(elements, "data-release-none")}
        expected = {k for k in ARTIFACT_KINDS if papers.at[key, f"has_{k}"]}
        assert released == expected and missing == set(ARTIFACT_KINDS) - expected, key
