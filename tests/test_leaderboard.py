"""Benchmark pages as leaderboards, the results CSVs, and the cite page's pool state, on
a small synthetic root whose values are chosen for each rule (no MkDocs: the generated
files of ``site_files``)."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import pytest
import yaml

from masrl_kb.kb.record_checks import validate
from masrl_kb.kb.synthetic import dump_record, write_synthetic_root
from masrl_kb.query.views import pool_coverage
from masrl_kb.site import site_files
from masrl_kb.site.about import cff_bibtex
from masrl_kb.site.judgement_pages import RESULTS_CSV_COLUMNS
from tests.test_site_support import SCRIPT

BENCH = "benchmarks/synthetic-bench/"
FORMULA = '=HYPERLINK("https://example.org","x")'


def _result(i: int, metric: str, value: str, setting: str) -> dict:
    where = f"Table {i}"
    return {"metric": metric, "value": value, "setting": setting, "where": where,
            "source": f"https://example.org/papers/{i}"}  # fmt: skip


# paper number -> (its arXiv month, its values on the synthetic benchmark)
VALUES = {
    0: ("2501", [("accuracy", "50.0%", "first"), ("accuracy", "45%", f"baseline {SCRIPT}")]),
    1: ("2503", [("accuracy", "61.5%", "second")]),
    2: ("2502", [("accuracy", "40%", FORMULA)]),
    3: ("2504", [("win rate", "n/a", "a value that is no number")]),
}


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, str]:
    root = write_synthetic_root(tmp_path_factory.mktemp("boards") / "kb", papers=5)
    for i, (month, values) in VALUES.items():
        path = root / "papers" / f"synthetic-{i:05d}.yaml"
        record = yaml.safe_load(path.read_text())
        arxiv = f"{month}.{10000 + i:05d}"
        record["arxiv_id"], record["year"] = arxiv, 2025
        record["citation"]["journal"] = f"arXiv preprint arXiv:{arxiv}"
        record["added"] = max(record["added"], record["added"].replace(month=5, day=4))
        record["evaluated_on"][0].update(
            multi_agent_native=False,
            metric=values[0][0],
            results=[_result(i, *v) for v in values],
        )
        path.write_text(dump_record(record))
    report = validate(root)
    assert report.ok, report.problems
    return site_files(root)


def _rows(text: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text)))


def test_the_page_ranks_like_values_and_notes_where_metrics_differ(files) -> None:
    html = files[BENCH + "index.md"]
    assert html.count("data-kb-sortable") == 2  # accuracy, win rate: two tables
    assert "data-kb-differ" in html and "differ in metrics" in html
    first = html.split('data-kb-board="1"')[0]
    # Ranked best first: 61.5% (paper 1), 50.0% and 45% (paper 0), 40% (paper 2).
    values = re.findall(r"<strong>([^<]+)</strong>", first)
    assert values == ["61.5%", "50.0%", "45%", "40%"]
    ranks = re.findall(r'data-label="Rank" data-sort="(\d*)"', first)
    assert ranks == ["1", "2", "3", "4"]
    dates = re.findall(r'data-label="Date" data-sort="([^"]*)"', first)
    assert dates == ["2025-03", "2025-01", "2025-01", "2025-02"]  # each paper's own month
    assert 'data-sort-key="value" data-sort-first="descending"' in first
    second = html.split('data-kb-board="1"')[1]
    assert 'data-label="Rank" data-sort=""' in second and "n/a" in second  # unread: no rank


def test_record_text_is_escaped_on_the_page(files) -> None:
    html = files[BENCH + "index.md"]
    assert SCRIPT not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_a_group_with_three_dates_gets_a_best_over_time_chart(files) -> None:
    html = files[BENCH + "index.md"]
    assert html.count('class="kb-figure kb-best"') == 1  # accuracy only: win rate has one
    chart = html.split('class="kb-figure kb-best"')[1].split("</figure>")[0]
    assert chart.count("<circle") == 3  # 2025-01, -02, -03
    tips = re.findall(r"<circle[^>]*><title>([^<]+)</title>", chart)
    assert [t.split(" (")[0] for t in tips] == [
        "2025-01 · best so far: 50%",
        "2025-02 · best so far: 50%",  # paper 2's 40% does not beat it
        "2025-03 · best so far: 61.5%",
    ]
    after = html.split('class="kb-figure kb-best"')[1].split("</figure>", 1)[1]
    assert after.startswith('<details class="kb-chart-data"')  # the numbers, as a table


def test_results_csv_per_benchmark_and_whole_with_inert_cells(files) -> None:
    one = _rows(files[BENCH + "results.csv"])
    whole = _rows(files["downloads/results.csv"])
    assert one == whole  # one benchmark holds every value here
    assert list(one[0]) == RESULTS_CSV_COLUMNS
    assert len(one) == sum(len(v) for _, v in VALUES.values())
    by_value = {r["value"]: r for r in one}
    assert by_value["61.5%"]["value_num"] == "61.5" and by_value["61.5%"]["unit"] == "%"
    assert by_value["61.5%"]["rank"] == "1" and by_value["61.5%"]["date"] == "2025-03"
    assert by_value["n/a"]["value_num"] == "" and by_value["n/a"]["rank"] == ""
    assert by_value["40%"]["setting"] == "'" + FORMULA  # a spreadsheet shows, never runs it
    assert 'href="results.csv"' in files[BENCH + "index.md"]
    assert "results.csv" in files["downloads/index.md"]


def test_a_benchmark_without_values_has_no_table_and_no_csv(tmp_path) -> None:
    files = site_files(write_synthetic_root(tmp_path / "kb", papers=3))
    assert "data-kb-sortable" not in files[BENCH + "index.md"]
    assert BENCH + "results.csv" not in files
    assert _rows(files["downloads/results.csv"]) == []
    assert files["downloads/results.csv"].startswith('"benchmark","key"')


CFF = {
    "title": "masrl-kb",
    "authors": [{"name": "masrl-kb contributors"}],
    "version": "0.2.0",
    "date-released": "2026-12-02",
    "url": "https://example.org/kb",
}


def test_bibtex_names_the_version_and_the_pool_state() -> None:
    import datetime as dt

    early = cff_bibtex(CFF, dt.date(2026, 9, 4), 122)[0]
    later = cff_bibtex(CFF, dt.date(2026, 11, 30), 122)[0]
    larger = cff_bibtex(CFF, dt.date(2026, 9, 4), 130)[0]
    assert "note = {version 0.2.0; pool covers papers up to 2026-09-04 (122 papers)}" in early
    assert early.startswith("@misc{masrlkb-0.2.0-2026-09-04,")
    assert later.startswith("@misc{masrlkb-0.2.0-2026-11-30,")
    assert len({early, later, larger}) == 3  # three pool states, three citations
    with_doi = cff_bibtex({**CFF, "doi": "10.5281/zenodo.123"}, dt.date(2026, 9, 4), 1)[0]
    assert "doi = {10.5281/zenodo.123}" in with_doi
    assert "doi" not in cff_bibtex({**CFF, "doi": "not a doi}"}, None, 1)[0]


def test_the_cite_page_names_version_and_coverage(real_site_files: dict[str, str]) -> None:
    page = real_site_files["cite/index.md"]  # the repository's pool and CITATION.cff
    cff = yaml.safe_load((Path(__file__).parents[1] / "CITATION.cff").read_text())
    version, covers = cff["version"], pool_coverage().isoformat()
    assert f'data-kb-version="{version}" data-kb-covers="{covers}"' in page
    assert f"note = {{version {version}; pool covers papers up to {covers}" in page
    assert f"@misc{{masrlkb-{version}-{covers}," in page
    moved = cff["date-released"].isoformat() < covers  # the pool grew after the release
    assert (f"This site shows the pool after release {version}" in page) == moved
