"""``import-upstream`` respects curation, applies all rows or none, and CSVs stay inert.

Releases are made from the project's own ``export survey-csv`` output, then
changed the way the survey's real release differs from the records.
"""

from __future__ import annotations

import csv
import io
import os
from pathlib import Path

import pytest

from masrl_kb.contrib import upstream
from masrl_kb.contrib.export.csv_io import (
    FORMULA_START,
    guard_cell,
    records_from_csv,
    unguard_cell,
)
from masrl_kb.contrib.export.survey_csv import EXCLUDED_COLUMNS, PAPER_COLUMNS, URL_SEPARATOR
from masrl_kb.contrib.export.tables import records_csv
from masrl_kb.kb.record_checks import validate
from masrl_kb.kb.yamlio import load_yaml_file
from tests.conftest import run_cli as run
from tests.screening_stub import copy_kb


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    return copy_kb(tmp_path / "kb")


def _snapshot(kb: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in sorted(kb.rglob("*")) if p.is_file()}


def _export(kb: Path, out: Path) -> tuple[list[dict], list[dict]]:
    assert run("--root", str(kb), "export", "survey-csv", "-o", str(out)) == 0
    return (
        list(csv.DictReader(io.StringIO((out / "papers.csv").read_text("utf-8")))),
        list(csv.DictReader(io.StringIO((out / "excluded.csv").read_text("utf-8")))),
    )


def _write(path: Path, rows: list[dict], columns) -> Path:
    with open(path, "w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(columns), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return path


def _unsourced(kb: Path) -> None:
    """Drop every ``sources`` list, so the downgrade rules are tested on their own."""
    for path in (kb / "papers").glob("*.yaml"):
        text = path.read_text("utf-8")
        path.write_text(upstream.edit_fields(text, {"sources": None}, {}), "utf-8")


def _import(kb: Path, papers: Path, excluded: Path | None = None, apply: bool = True) -> int:
    argv = ["--root", str(kb), "import-upstream", str(papers)]
    argv += [str(excluded)] if excluded else []
    return run(*argv, *(["--apply"] if apply else []))


def _by_key(rows: list[dict]) -> dict[str, dict]:
    return {r["key"]: r for r in rows}


def _record(kb: Path, key: str) -> dict:
    return dict(load_yaml_file(kb / "papers" / f"{key}.yaml").data)


# ---------------------------------------------------------------- curation


def test_a_release_with_less_information_changes_nothing(
    kb: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _unsourced(kb)
    papers, excluded = _export(kb, tmp_path / "release")
    rows = _by_key(papers)
    named = [k for k, r in rows.items() if ", " in r["first_author"]]
    with_arxiv = [k for k, r in rows.items() if r["arxiv_id"]]
    with_links = [k for k, r in rows.items() if URL_SEPARATOR in r["url"]]
    rows[named[0]]["first_author"] = "Anonymous"
    rows[named[1]]["first_author"] = "Some Lab Engineering"  # a team for a named list
    rows[named[2]]["affiliation"] = "unknown"
    rows[named[3]]["venue"] = "None"
    for key in with_arxiv[:7]:
        rows[key]["arxiv_id"] = ""
    rows[with_links[0]]["url"] = rows[with_links[0]]["url"].split(URL_SEPARATOR)[0]
    excluded[0]["identifier"] = "N/A"
    before = _snapshot(kb)
    path = _write(tmp_path / "papers.csv", list(rows.values()), PAPER_COLUMNS)
    ex_path = _write(tmp_path / "excluded.csv", excluded, EXCLUDED_COLUMNS)
    capsys.readouterr()
    assert _import(kb, path, ex_path) == 0
    out = capsys.readouterr().out
    assert _snapshot(kb) == before
    assert out.count("(kept (curated): ") == 13  # 4 facts, 7 arXiv ids, links, identifier
    assert "a team or organisation name would replace a named author" in out
    assert "extra_urls: ours" in out and "identifier: ours" in out
    assert out.rstrip().endswith("13 kept (curated); 0 file(s) updated")
    assert validate(kb).ok


def test_a_sourced_field_is_never_replaced(
    kb: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    papers, _ = _export(kb, tmp_path / "release")
    sourced = {}
    for row in papers:
        data = _record(kb, row["key"])
        fields = {s["field"] for s in data.get("sources") or []}
        if "affiliation" in fields and "affiliation" not in sourced:
            row["affiliation"] = "A Plausible Other University"
            sourced["affiliation"] = row["key"]
        if "authors" in fields and "authors" not in sourced:
            row["first_author"] = "Other, Person"
            sourced["authors"] = row["key"]
    assert set(sourced) == {"affiliation", "authors"}
    old = {key: _record(kb, key) for key in sourced.values()}
    capsys.readouterr()
    assert _import(kb, _write(tmp_path / "p.csv", papers, PAPER_COLUMNS)) == 0
    out = capsys.readouterr().out
    assert {key: _record(kb, key) for key in sourced.values()} == old
    assert "kept (curated): the record gives a source for affiliation" in out
    assert "kept (curated): the record gives a source for authors" in out


def test_a_real_correction_is_still_applied(kb: Path, tmp_path: Path) -> None:
    _unsourced(kb)
    papers, _ = _export(kb, tmp_path / "release")
    papers[0]["venue"] = "ICLR 2027"
    assert _import(kb, _write(tmp_path / "p.csv", papers, PAPER_COLUMNS)) == 0
    assert _record(kb, papers[0]["key"])["venue"] == "ICLR 2027"
    assert validate(kb).ok


# ---------------------------------------------------------------- all or nothing


HOSTILE_ROWS = {
    "javascript-url": ("url", "javascript:alert(1)", "url"),
    "year-99999": ("year", "99999", "year"),
    "escape-in-title": ("title", "A \x1b[2J\x1b[31mtitle", "title"),
    "bidi-in-venue": ("venue", "ICLR \u202e2027", "venue"),
    "newline-in-affiliation": ("affiliation", "One\nTwo", "affiliation"),
}


@pytest.mark.parametrize("name", sorted(HOSTILE_ROWS))
def test_a_row_that_breaks_a_rule_writes_nothing(
    name: str, kb: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _unsourced(kb)
    column, value, field = HOSTILE_ROWS[name]
    papers, _ = _export(kb, tmp_path / "release")
    papers[0]["venue"] = "A Good Change 2027"  # applicable on its own
    papers[-1][column] = value
    before = _snapshot(kb)
    capsys.readouterr()
    assert _import(kb, _write(tmp_path / "p.csv", papers, PAPER_COLUMNS)) == 2
    err = capsys.readouterr().err
    assert _snapshot(kb) == before
    assert f"papers/{papers[-1]['key']}.yaml:" in err and f" {field}: " in err
    assert "nothing written" in err
    assert "\x1b" not in err and "\u202e" not in err and "Traceback" not in err


@pytest.mark.parametrize("kind", ["duplicate", "conflicting", "same-record"])
def test_duplicate_or_conflicting_rows_are_refused_first(
    kind: str, kb: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _unsourced(kb)
    papers, _ = _export(kb, tmp_path / "release")
    papers[0]["venue"] = "A Good Change 2027"
    copy = dict(papers[1])
    if kind == "conflicting":
        copy["venue"] = "Another Venue"
    elif kind == "same-record":  # another key, but the same arXiv id
        copy = dict(next(r for r in papers if r["arxiv_id"]), key="renamed-upstream")
    papers.append(copy)
    before = _snapshot(kb)
    capsys.readouterr()
    assert _import(kb, _write(tmp_path / "p.csv", papers, PAPER_COLUMNS)) == 2
    err = capsys.readouterr().err
    assert _snapshot(kb) == before
    line = len(papers) + 1  # the header is line 1
    word = {"duplicate": "duplicate row", "conflicting": "conflicting rows"}.get(kind, "conflict")
    assert f"p.csv:{line}: key: {word}" in err


class _Interrupted(KeyboardInterrupt):
    pass


@pytest.mark.parametrize("after", [0, 1, 3])
def test_an_interrupt_mid_apply_puts_every_file_back(
    after: int, kb: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _unsourced(kb)
    papers, _ = _export(kb, tmp_path / "release")
    for row in papers[:6]:
        row["venue"] = "Changed Venue 2027"
    path = _write(tmp_path / "p.csv", papers, PAPER_COLUMNS)
    before = _snapshot(kb)
    real = os.replace
    calls = []

    def replace(src, dst):
        calls.append(dst)
        if len(calls) == after + 1:
            raise _Interrupted
        real(src, dst)

    monkeypatch.setattr(upstream.os, "replace", replace)
    with pytest.raises(_Interrupted):
        upstream.compare_upstream(path, root=kb, apply=True)
    monkeypatch.setattr(upstream.os, "replace", real)
    assert _snapshot(kb) == before  # no record changed, no temporary file left
    assert validate(kb).ok


def test_new_rows_are_echoed_without_control_characters(
    kb: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    papers, _ = _export(kb, tmp_path / "release")
    papers.append(
        {**papers[0], "key": "new\x1b]0;owned\x07", "arxiv_id": "", "title": "T\x1b[2J\u202eX"}
    )
    capsys.readouterr()
    assert _import(kb, _write(tmp_path / "p.csv", papers, PAPER_COLUMNS), apply=False) == 0
    out = capsys.readouterr().out
    assert "new upstream: paper new" in out
    assert not any(c in out for c in "\x1b\x07\u202e")


# ---------------------------------------------------------------- formulas


@pytest.mark.parametrize("start", FORMULA_START)
def test_guard_and_unguard_round_trip(start: str) -> None:
    for text in (f"{start}1+1", f"'{start}x", f"''{start}", start):
        guarded = guard_cell(text)
        assert guarded.startswith("'") and guarded[1:] == text
        assert unguard_cell(guarded) == text
    for text in ("'plain", "plain", "", "'"):
        assert guard_cell(text) == text == unguard_cell(text)


@pytest.mark.parametrize("start", FORMULA_START)
def test_records_csv_cells_are_inert_and_read_back_exactly(start: str) -> None:
    record = {
        "key": "k",
        "title": f'{start}HYPERLINK("http://x")',
        "note": f"{start}cmd|' /C calc'!A0",
    }
    text = records_csv([record])
    for row in csv.DictReader(io.StringIO(text, newline="")):
        assert all(not v.startswith(FORMULA_START) for v in row.values())
        assert {k: unguard_cell(v) for k, v in row.items()} == record


FORMULAS = {"title": "=1+1 A Title", "venue": "+Venue", "affiliation": "@Home", "notes": "-x"}


def _plant_formulas(kb: Path) -> str:
    path = sorted((kb / "papers").glob("*.yaml"))[0]
    text = upstream.edit_fields(path.read_text("utf-8"), FORMULAS, {})
    path.write_text(text, "utf-8")
    return path.stem


def test_every_written_csv_guards_formulas(kb: Path, tmp_path: Path) -> None:
    key = _plant_formulas(kb)
    assert validate(kb).ok
    out = tmp_path / "export.csv"
    assert run("--root", str(kb), "export", "csv", "-o", str(out)) == 0
    text = out.read_text("utf-8")
    rows = list(csv.DictReader(io.StringIO(text, newline="")))
    row = next(r for r in rows if r["key"] == key)
    assert {k: row[k] for k in FORMULAS} == {k: "'" + v for k, v in FORMULAS.items()}
    back = next(r for r in records_from_csv(text) if r["key"] == key)
    assert {k: back[k] for k in FORMULAS} == FORMULAS
    papers, _ = _export(kb, tmp_path / "survey")
    survey = next(r for r in papers if r["key"] == key)
    assert survey["title"] == "'" + FORMULAS["title"] and survey["notes"] == "'-x"


def test_survey_csv_round_trips_through_import_with_formulas(
    kb: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _plant_formulas(kb)
    out = tmp_path / "survey"
    _export(kb, out)
    capsys.readouterr()
    assert _import(kb, out / "papers.csv", out / "excluded.csv", apply=False) == 0
    assert capsys.readouterr().out.strip().endswith("0 difference(s), 0 new upstream row(s)")
