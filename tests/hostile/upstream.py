"""Hostile releases for ``import-upstream --apply``.

Each case exports the small data root's own ``survey-csv`` files, changes
them one hostile way and runs ``import-upstream --apply`` on them: the
command must exit 2 with one line naming the file (the release, or the record
that would break a rule) and the field, and leave every record untouched.
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Callable
from pathlib import Path

from masrl_kb.contrib.export.survey_csv import (
    EXCLUDED_COLUMNS,
    EXCLUDED_FILE,
    PAPER_COLUMNS,
    PAPERS_FILE,
    survey_csv_texts,
)

RELEASE = "release"
PAPERS = f"{RELEASE}/{PAPERS_FILE}"
EXCLUDED = f"{RELEASE}/{EXCLUDED_FILE}"
COMMAND = ("import-upstream", f"{{root}}/{PAPERS}", f"{{root}}/{EXCLUDED}", "--apply")

Rows = list[dict[str, str]]


def _rows(text: str) -> Rows:
    return list(csv.DictReader(io.StringIO(text, newline="")))


def _text(rows: Rows, columns: tuple[str, ...]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(columns), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def _release(root: Path) -> tuple[Rows, Rows]:
    texts = survey_csv_texts(root)
    (root / RELEASE).mkdir()
    return _rows(texts[PAPERS_FILE]), _rows(texts[EXCLUDED_FILE])


def _write(root: Path, papers: Rows, excluded: Rows) -> None:
    (root / PAPERS).write_text(_text(papers, PAPER_COLUMNS), encoding="utf-8")
    (root / EXCLUDED).write_text(_text(excluded, EXCLUDED_COLUMNS), encoding="utf-8")


def paper_cell(column: str, value: str, row: int = 0) -> Callable[[Path], str]:
    """Row ``row`` of papers.csv gets ``value`` in ``column``; names its record."""

    def plant(root: Path) -> str:
        papers, excluded = _release(root)
        papers[row][column] = value
        _write(root, papers, excluded)
        return f"papers/{papers[row]['key']}.yaml"

    return plant


def exclusion_cell(column: str, value: str) -> Callable[[Path], str]:
    def plant(root: Path) -> str:
        papers, excluded = _release(root)
        excluded[0][column] = value
        _write(root, papers, excluded)
        return f"exclusions/{excluded[0]['record_id']}.yaml"

    return plant


def rows_edit(edit: Callable[[Rows, Rows], str]) -> Callable[[Path], str]:
    """``edit`` changes the rows and returns the release file to name."""

    def plant(root: Path) -> str:
        papers, excluded = _release(root)
        named = edit(papers, excluded)
        _write(root, papers, excluded)
        return named

    return plant


def raw_papers(text: bytes | Callable[[Path], None]) -> Callable[[Path], str]:
    """papers.csv replaced by raw bytes (or made by a function)."""

    def plant(root: Path) -> str:
        papers, excluded = _release(root)
        _write(root, papers, excluded)
        (root / PAPERS).unlink()
        if callable(text):
            text(root / PAPERS)
        else:
            (root / PAPERS).write_bytes(text)
        return PAPERS

    return plant


def _duplicate(papers: Rows, excluded: Rows) -> str:
    papers.append(dict(papers[1]))
    return PAPERS


def _conflicting(papers: Rows, excluded: Rows) -> str:
    papers.append({**papers[1], "venue": "Another Venue"})
    return PAPERS


def _same_record(papers: Rows, excluded: Rows) -> str:
    papers.append({**papers[0], "key": "renamed-upstream"})
    return PAPERS


def _duplicate_exclusion(papers: Rows, excluded: Rows) -> str:
    excluded.append({**excluded[0], "stage": "full_text"})
    return EXCLUDED


def _good_change_first(edit: Callable[[Rows, Rows], str]) -> Callable[[Rows, Rows], str]:
    """A valid change beside the hostile one: it must not be written either."""

    def both(papers: Rows, excluded: Rows) -> str:
        papers[2]["venue"] = "A Valid Venue 2027"
        return edit(papers, excluded)

    return both


def _symlink_secret(path: Path) -> None:
    os.symlink("/etc/passwd", path)


def _fifo(path: Path) -> None:
    os.mkfifo(path)


HEADER = ",".join(PAPER_COLUMNS).encode()
HUGE_CELL = HEADER + b"\n" + b'"' + b"x" * 200_000 + b'"' + b",x" * (len(PAPER_COLUMNS) - 1) + b"\n"

# (name, field, plant)
CASES: list[tuple[str, str, Callable[[Path], str]]] = [
    ("javascript-url", "url", paper_cell("url", "javascript:alert(document.cookie)")),
    ("data-url", "url", paper_cell("url", "data:text/html,<script>alert(1)</script>")),
    ("file-url", "url", paper_cell("url", "file:///etc/passwd")),
    ("javascript-extra-url", "extra_urls", paper_cell("url", "https://a.example/x ; javascript:x")),
    ("year-99999", "year", paper_cell("year", "99999")),
    ("year-1", "year", paper_cell("year", "1")),
    ("year-huge", "year", paper_cell("year", "9" * 5000)),
    ("year-words", "year", paper_cell("year", "twenty")),
    ("exclusion-date-malformed", "screened", exclusion_cell("date_screened", "2026-13-45")),
    ("exclusion-date-far-future", "screened", exclusion_cell("date_screened", "9999-12-31")),
    ("title-escape", "title", paper_cell("title", "A \x1b[2J\x1b[31mtitle\x1b[0m")),
    ("title-bidi", "title", paper_cell("title", "Reward \u202eshaping")),
    ("title-nul", "title", paper_cell("title", "A\x00title")),
    ("venue-newline", "venue", paper_cell("venue", "ICLR\n2027")),
    ("affiliation-c1", "affiliation", paper_cell("affiliation", "Uni\x85versity")),
    ("first-author-escape", "authors", paper_cell("first_author", "Doe\x1b]0;x\x07, Jane")),
    ("arxiv-id-malformed", "arxiv_id", paper_cell("arxiv_id", "2501.1")),
    ("arxiv-id-with-version", "arxiv_id", paper_cell("arxiv_id", "2501.00001v2")),
    ("exclusion-url-javascript", "url", exclusion_cell("url", "javascript:alert(1)")),
    ("exclusion-title-escape", "title", exclusion_cell("screening_label", "X\x1b[2J")),
    ("duplicate-row", "key", rows_edit(_good_change_first(_duplicate))),
    ("conflicting-rows", "key", rows_edit(_good_change_first(_conflicting))),
    ("two-keys-one-record", "key", rows_edit(_good_change_first(_same_record))),
    ("duplicate-exclusion", "record_id", rows_edit(_good_change_first(_duplicate_exclusion))),
    ("wrong-header", "header", raw_papers(b"key,title\nx,y\n")),
    ("not-utf8", "file", raw_papers(HEADER + b"\n\xff\xfe\xfa\n")),
    ("more-cells", "row", raw_papers(HEADER + b"\n" + b"a," * (len(PAPER_COLUMNS) + 3) + b"\n")),
    ("cell-over-131072", "row", raw_papers(HUGE_CELL)),
    ("symlink-to-secret", "file", raw_papers(_symlink_secret)),
    ("fifo", "file", raw_papers(_fifo)),
    ("empty-file", "header", raw_papers(b"")),
]


def upstream_cases():
    from tests.hostile.corpus import Case

    return [Case("import-upstream", name, field, plant, COMMAND) for name, field, plant in CASES]
