"""Screening files read and written safely (issue 27): arXiv ids from every id-bearing
column, a small ``round.yaml`` with its duplicates in a side file, tampered round files
refused in one line, ``decide`` writing all or nothing, sanitised names and warnings.

Every entry below is fictional except where it repeats a pooled record on purpose
(magrpo, arXiv 2508.04652) to be recognised as a duplicate.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from tests.conftest import run_cli as run
from tests.screening_stub import copy_kb

SINCE, UNTIL = "2026-06-01", "2026-06-30"
ROUND = f"{SINCE}_{UNTIL}"
HEADER = "id,title,authors,date,url,abstract,doi,arxiv_id,openreview_id\n"
POOLED = "2508.04652"  # papers/magrpo.yaml


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    return copy_kb(tmp_path / "kb")


def _write(tmp_path: Path, name: str, data: str | bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return path


def _import(kb: Path, path: Path, *extra: str, source: str = "openalex") -> int:
    args = ("screen", "import", str(path), "--source", source, "--since", SINCE)
    return run("--root", str(kb), *args, "--until", UNTIL, *extra)


def _rows(kb: Path, rid: str = ROUND) -> dict[str, dict]:
    text = (kb / "screening" / rid / "candidates.csv").read_text(encoding="utf-8")
    return {r["id"]: r for r in csv.DictReader(io.StringIO(text))}


def _snapshot(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in root.rglob("*")
        if p.is_file() and not p.name.endswith(".lock")
    }


def _one_error(capsys: pytest.CaptureFixture[str], fragment: str) -> str:
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(err) == 1, err
    assert fragment in err[0], err
    return err[0]


# ---------------------------------------------------------------- arXiv ids in any column

# Each row names the pooled paper 2508.04652 (or an old-style id) in another column or form.
ID_FORMS = [
    ("url-abs", f"W1,T1,,2026-06-03,https://arxiv.org/abs/{POOLED}v2,,,,"),
    ("url-pdf", f"W1,T1,,2026-06-03,https://arxiv.org/pdf/{POOLED}v1.pdf,,,,"),
    ("url-html", f"W1,T1,,2026-06-03,https://arxiv.org/html/{POOLED}v3,,,,"),
    ("url-export", f"W1,T1,,2026-06-03,http://export.arxiv.org/abs/{POOLED},,,,"),
    ("url-doi-org", f"W1,T1,,2026-06-03,https://doi.org/10.48550/arXiv.{POOLED},,,,"),
    ("doi-datacite", f"W1,T1,,2026-06-03,,,10.48550/arXiv.{POOLED},,"),
    ("doi-prefixed", f"W1,T1,,2026-06-03,,,doi:10.48550/ARXIV.{POOLED},,"),
    ("doi-is-a-url", f"W1,T1,,2026-06-03,,,https://arxiv.org/abs/{POOLED},,"),
    ("id-arxiv-prefix", f"arXiv:{POOLED}v4,T1,,2026-06-03,,,,,"),
    ("arxiv-id-url", f"W1,T1,,2026-06-03,,,,https://arxiv.org/abs/{POOLED}v1,"),
    ("arxiv-id-doi", f"W1,T1,,2026-06-03,,,,10.48550/arXiv.{POOLED},"),
]


@pytest.mark.parametrize(("name", "row"), ID_FORMS, ids=[n for n, _ in ID_FORMS])
def test_a_pooled_arxiv_id_in_any_column_is_a_duplicate(
    kb: Path, tmp_path: Path, name: str, row: str
) -> None:
    from masrl_kb.contrib.screen.round_files import read_duplicates

    assert _import(kb, _write(tmp_path, "list.csv", HEADER + row + "\n"), "--empty-ok") == 0
    found = {d["id"]: (d["duplicate_of"], d["match"]) for d in read_duplicates(kb, ROUND)}
    assert found == {POOLED: ("papers/magrpo.yaml", "same arXiv id")}
    assert _rows(kb)[POOLED]["duplicate_of"] == "papers/magrpo.yaml"


def test_old_style_ids_in_urls_are_one_paper(kb: Path, tmp_path: Path) -> None:
    rows = (
        "W1,A Fictional Old Paper,,2026-06-03,https://arxiv.org/abs/hep-th/9901001v2,,,,\n"
        "W2,Another Title Entirely,,2026-06-04,https://arxiv.org/pdf/hep-th/9901001,,,,\n"
    )
    assert _import(kb, _write(tmp_path, "list.csv", HEADER + rows)) == 0
    rows_by_id = _rows(kb)
    assert rows_by_id["hep-th/9901001"]["duplicate_of"].startswith("this batch")


def test_ris_and_bibtex_read_arxiv_ids_from_their_id_fields(kb: Path, tmp_path: Path) -> None:
    from masrl_kb.contrib.screen.round_files import read_duplicates

    ris = (
        "TY  - JOUR\nTI  - Fictional A\nDA  - 2026/06/03\nUR  - https://example.org/a\n"
        f"UR  - https://arxiv.org/html/{POOLED}v2\nER  -\n"
    )
    bib = (
        "@misc{b, title={Fictional B}, date={2026-06-04}, "
        f"doi={{10.48550/arXiv.{POOLED}}}}}\n"
    )
    assert _import(kb, _write(tmp_path, "a.ris", ris), "--empty-ok") == 0
    assert _import(kb, _write(tmp_path, "b.bib", bib), "--empty-ok", source="web_search") == 0
    dups = read_duplicates(kb, ROUND)
    assert [(d["id"], d["duplicate_of"]) for d in dups] == [(POOLED, "papers/magrpo.yaml")] * 2
