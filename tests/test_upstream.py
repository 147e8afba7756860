"""The survey's CSV format both ways: ``export survey-csv`` and ``import-upstream``."""

from __future__ import annotations

import csv
import io
import shutil
from pathlib import Path

import pytest

from masrl_kb.contrib.export.survey_csv import (
    EXCLUDED_COLUMNS,
    PAPER_COLUMNS,
    PAPER_TAGS,
    URL_SEPARATOR,
)
from masrl_kb.kb.record_checks import validate
from masrl_kb.kb.taxonomy import load_taxonomy
from masrl_kb.kb.yamlio import load_yaml_file
from masrl_kb.query.frames import load_pool, value_counts
from tests.conftest import run_cli as run
from tests.screening_stub import copy_kb


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    return copy_kb(tmp_path / "kb")


def _export(kb: Path, out: Path) -> tuple[list[dict], list[dict]]:
    assert run("--root", str(kb), "export", "survey-csv", "-o", str(out)) == 0
    papers = list(csv.DictReader(io.StringIO((out / "papers.csv").read_text("utf-8"))))
    excluded = list(csv.DictReader(io.StringIO((out / "excluded.csv").read_text("utf-8"))))
    return papers, excluded


def _write(path: Path, rows: list[dict], columns) -> Path:
    with open(path, "w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(columns), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return path


# ---------------------------------------------------------------- export


def test_export_has_the_survey_columns_and_spellings(kb: Path, tmp_path: Path) -> None:
    papers, excluded = _export(kb, tmp_path / "out")
    header = (tmp_path / "out" / "papers.csv").read_text().splitlines()[0]
    assert header == ",".join(PAPER_COLUMNS)
    assert (tmp_path / "out" / "excluded.csv").read_text().splitlines()[0] == ",".join(
        EXCLUDED_COLUMNS
    )
    frame, exclusions = load_pool(kb)
    assert [r["key"] for r in papers] == sorted(frame.index)
    assert [r["record_id"] for r in excluded] == sorted(exclusions.index)
    tax = load_taxonomy(kb)
    for row in papers:
        record = frame.loc[row["key"]]
        assert row["first_author"] == record["authors"][0]
        assert row["one_liner"] == record["summary"]
        assert row["url"] == URL_SEPARATOR.join([record["url"], *record["extra_urls"]])
        assert row["year"] == str(record["year"])
    for row in excluded:
        assert row["source"] in {v.label for v in tax["exclusion_source"].values}
        assert row["query_family"] in {v.label for v in tax["query_family"].values}
        assert row["exclusion_reason"] == exclusions.loc[row["record_id"], "note"]


def test_export_tag_columns_give_the_same_statistics(kb: Path, tmp_path: Path) -> None:
    papers, _ = _export(kb, tmp_path / "out")
    frame = load_pool(kb)[0]
    for column, name in PAPER_TAGS.items():
        counts = {str(k): int(v) for k, v in value_counts(name, papers=frame).items() if v}
        exported: dict[str, int] = {}
        for row in papers:
            exported[row[column]] = exported.get(row[column], 0) + 1
        assert exported == counts, column


def test_export_round_trips_through_import(
    kb: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _export(kb, tmp_path / "out")
    capsys.readouterr()
    out = tmp_path / "out"
    assert (
        run(
            "--root", str(kb), "import-upstream", str(out / "papers.csv"), str(out / "excluded.csv")
        )
        == 0
    )
    assert capsys.readouterr().out.strip().endswith("0 difference(s), 0 new upstream row(s)")


# ---------------------------------------------------------------- import-upstream


def _release(kb: Path, tmp_path: Path) -> tuple[Path, Path]:
    """A newer release: a few facts and tags changed, our text changed too."""
    papers, excluded = _export(kb, tmp_path / "release")
    first, second = papers[0], papers[1]
    first["venue"] = "A Venue 2027"
    first["reward_type"] = "hybrid" if first["reward_type"] != "hybrid" else "shared"
    first["one_liner"] = "Their new sentence, which must not replace our summary."
    first["url"] = first["url"].split(URL_SEPARATOR)[0] + URL_SEPARATOR + "https://example.org/x"
    second["title"] = "!!python/object/apply:os.system ['true'] # a hostile title: x"
    second["scenario"] = "not-a-scenario"
    excluded[0]["date_screened"] = "2026-04-30"
    excluded[0]["exclusion_reason"] = "their words"
    papers.append({**papers[0], "key": "brand-new", "arxiv_id": "2611.00001", "title": "New"})
    return (
        _write(tmp_path / "papers.csv", papers, PAPER_COLUMNS),
        _write(tmp_path / "excluded.csv", excluded, EXCLUDED_COLUMNS),
    )


def test_import_reports_every_difference(
    kb: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    papers_csv, excluded_csv = _release(kb, tmp_path)
    before = {p: p.read_bytes() for p in kb.rglob("*.yaml")}
    capsys.readouterr()
    assert run("--root", str(kb), "import-upstream", str(papers_csv), str(excluded_csv)) == 0
    out = capsys.readouterr().out
    keys = sorted(load_pool(kb)[0].index)
    assert f"papers/{keys[0]}.yaml:" in out and "venue: ours" in out and "A Venue 2027" in out
    assert "reward_type: ours" in out and "extra_urls: ours" in out
    assert "scenario: ours" in out and "(not applied: not a value of scenario" in out
    assert "screened: ours '2026-04-26', upstream '2026-04-30'" in out
    assert "summary" not in out and "note:" not in out
    assert "new upstream: paper brand-new: New" in out
    assert {p: p.read_bytes() for p in kb.rglob("*.yaml")} == before  # nothing written


def test_import_apply_changes_only_those_lines(
    kb: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    papers_csv, excluded_csv = _release(kb, tmp_path)
    keys = sorted(load_pool(kb)[0].index)
    first = kb / "papers" / f"{keys[0]}.yaml"
    second = kb / "papers" / f"{keys[1]}.yaml"
    old_first = load_yaml_file(first).data
    old_lines = first.read_text().splitlines()
    assert (
        run("--root", str(kb), "import-upstream", str(papers_csv), str(excluded_csv), "--apply")
        == 0
    )
    new = load_yaml_file(first).data
    assert new["venue"] == "A Venue 2027"
    assert new["summary"] == old_first["summary"]  # our text is never imported
    assert new["decisions"] == old_first["decisions"]
    assert new["extra_urls"][-1] == "https://example.org/x"
    new_lines = first.read_text().splitlines()
    assert new_lines[0] == old_lines[0]  # the schema comment stays
    unchanged = [t for t in old_lines if t in new_lines]
    assert len(old_lines) - len(unchanged) <= 3  # venue, reward_type (+ nothing else)
    hostile = load_yaml_file(second).data
    assert hostile["title"].startswith("!!python/object/apply")  # stored as plain text
    assert hostile["scenario"] != "not-a-scenario"
    exclusion = load_yaml_file(sorted((kb / "exclusions").glob("*.yaml"))[0]).data
    assert str(exclusion["screened"]) == "2026-04-30" and exclusion["note"] != "their words"
    assert validate(kb).ok
    # applying again finds only what cannot be applied
    capsys.readouterr()
    snapshot = {p: p.read_bytes() for p in kb.rglob("*.yaml")}
    assert (
        run("--root", str(kb), "import-upstream", str(papers_csv), str(excluded_csv), "--apply")
        == 0
    )
    assert "1 difference(s)" in capsys.readouterr().out
    assert {p: p.read_bytes() for p in kb.rglob("*.yaml")} == snapshot


def test_import_rejects_a_file_in_another_format(
    kb: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "papers.csv"
    bad.write_text("key,title\nx,y\n")
    assert run("--root", str(kb), "import-upstream", str(bad)) == 2
    err = capsys.readouterr().err
    assert "papers.csv:1: header: expected the survey's columns key,title,first_author" in err
    assert "Traceback" not in err
    assert run("--root", str(kb), "import-upstream", str(tmp_path / "missing.csv")) == 2


def test_import_finds_a_renamed_key_by_arxiv_id(
    kb: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    papers, _ = _export(kb, tmp_path / "r")
    row = next(r for r in papers if r["arxiv_id"])
    row["key"] = "renamed-upstream"
    path = _write(tmp_path / "p.csv", papers, PAPER_COLUMNS)
    shutil.rmtree(tmp_path / "r")
    capsys.readouterr()
    assert run("--root", str(kb), "import-upstream", str(path)) == 0
    assert capsys.readouterr().out.strip().endswith("0 difference(s), 0 new upstream row(s)")


def test_export_as_of_a_date(kb: Path, tmp_path: Path) -> None:
    frame = load_pool(kb)[0]
    day = frame["added"].min().date()
    out = tmp_path / "old"
    assert (
        run("--root", str(kb), "export", "survey-csv", "-o", str(out), "--as-of", day.isoformat())
        == 0
    )
    rows = list(csv.DictReader(io.StringIO((out / "papers.csv").read_text("utf-8"))))
    assert len(rows) == int((frame["added"] <= str(day)).sum())
