"""Property-based tests: records with arbitrary Unicode text.

``validate`` never raises on any text (it reports or accepts), and a record it
accepts comes back unchanged from every export: CSV and JSON field for field,
BibTeX in every prose field (title, authors, venue fields). Examples are few
and the pool is one synthetic paper, so the module runs in well under a minute.
"""

from __future__ import annotations

import datetime as dt
import shutil
import tempfile
import unicodedata
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from masrl_kb.contrib.export.bibtex import read_bibtex, to_bibtex
from masrl_kb.contrib.export.csv_io import canonical_record, records_from_csv, records_from_json
from masrl_kb.contrib.export.tables import papers_records, records_json, to_csv, to_json
from masrl_kb.kb.record_checks import validate
from masrl_kb.kb.synthetic import dump_record, write_synthetic_root
from masrl_kb.query.frames import load_papers
from tests.conftest import GOOD_PAPER

SETTINGS = settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
# Anything a YAML file can hold (no surrogates).
ANY_TEXT = st.text(st.characters(exclude_categories=("Cs",)), min_size=0, max_size=40)
# Text a record accepts: no control characters, line breaks or bidi controls.
PRINTABLE = st.text(
    st.characters(
        exclude_categories=("Cs", "Cc", "Zl", "Zp"),
        exclude_characters="\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\x85",
    ),
    min_size=1,
    max_size=40,
).filter(lambda t: t.strip())


def _nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


@pytest.fixture(scope="module")
def base_root():
    with tempfile.TemporaryDirectory() as tmp:
        yield write_synthetic_root(Path(tmp) / "kb", papers=1, exclusions=0)


def _record(title: str, author: str, venue: str, journal: str, summary: str) -> dict:
    data = yaml.safe_load(GOOD_PAPER)
    data.update(title=title, authors=[author, "Doe, Jane"], venue=venue, summary=summary)
    data["citation"] = {**data["citation"], "journal": journal}
    data["added"] = dt.date(2026, 5, 4)
    return data


def _root_with(base: Path, record: dict) -> Path:
    root = Path(tempfile.mkdtemp())
    shutil.copytree(base, root, dirs_exist_ok=True)
    (root / "papers" / "bad.yaml").write_text(dump_record(record), encoding="utf-8")
    return root


@SETTINGS
@given(ANY_TEXT, ANY_TEXT, ANY_TEXT, ANY_TEXT, ANY_TEXT)
def test_validate_never_raises(base_root, title, author, venue, journal, summary) -> None:
    root = _root_with(base_root, _record(title, author, venue, journal, summary))
    try:
        report = validate(root)
        assert all(p.path == "papers/bad.yaml" for p in report.problems), report.problems
    finally:
        shutil.rmtree(root)


@pytest.mark.slow  # a property search over five free-text fields, each round a full export
@SETTINGS
@given(PRINTABLE, PRINTABLE, PRINTABLE, PRINTABLE, PRINTABLE)
def test_exports_read_back_the_same_records(
    base_root, title, author, venue, journal, summary
) -> None:
    record = _record(title, author, venue, journal, summary)
    root = _root_with(base_root, record)
    try:
        report = validate(root)
        if not report.ok:  # a look-alike of the other paper's title, say: reported, fine
            assert all(p.path == "papers/bad.yaml" for p in report.problems)
            return
        papers = load_papers(root)
    finally:
        shutil.rmtree(root)
    expected = canonical_record(record)
    by_key = {r["key"]: r for r in records_from_csv(to_csv(papers))}
    assert by_key["bad"] == expected
    for text in (to_json(papers), records_json(papers_records(papers), compact=True)):
        by_key = {r["key"]: r for r in records_from_json(text)}
        assert by_key["bad"] == expected
    entry = next(e for e in read_bibtex(to_bibtex(papers)) if e["ID"] == "bad2025")
    # LaTeX decoding gives canonically equivalent text (U+2329 comes back as U+3008).
    assert _nfc(entry["title"]) == _nfc(title)
    assert [_nfc(a) for a in entry["author"]] == [_nfc(author), "Doe, Jane"]
    assert _nfc(entry["journal"]) == _nfc(journal)
    assert set(entry) == {"ID", "ENTRYTYPE", "title", "author", "journal", "year", "url"} | {
        "eprint",
        "archivePrefix",
    }
