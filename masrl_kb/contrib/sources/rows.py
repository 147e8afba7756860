"""Candidate rows and the CSV file ``masrl-kb screen import`` reads.

Columns: ``id,title,authors,date,url,abstract,doi,arxiv_id,openreview_id``.
``id`` is the arXiv id when one is known, else ``doi:<doi>``, else
``openreview:<forum>``, else empty; ``authors`` are "Family, Given" joined by
"; "; ``date`` is the first public version (YYYY-MM-DD).

Service text is hostile: control and bidi characters become spaces, runs of
space collapse, every field is bounded in length, ids are checked against
their patterns, a cell a spreadsheet would run as a formula is prefixed with
a quote, and the file is written atomically (a temporary dot-file in the same
folder, then a rename), never through a symbolic link.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from masrl_kb.contrib.screen_entries import known_id
from masrl_kb.contrib.sources.transport import SourceError
from masrl_kb.kb.atomic import write_atomic
from masrl_kb.kb.text import strip_controls

COLUMNS = ("id", "title", "authors", "date", "url", "abstract", "doi", "arxiv_id", "openreview_id")
MAX_TITLE = 500
MAX_AUTHOR = 200
MAX_AUTHORS = 300
MAX_ABSTRACT = 6000
MAX_URL = 500
MAX_ROWS = 20000
_FORMULA_START = ("=", "+", "-", "@")
ARXIV_ID = re.compile(r"^(?:[0-9]{4}\.[0-9]{4,5}|[a-z-]+(?:\.[A-Z]{2})?/[0-9]{7})$")
_ARXIV_IN = re.compile(
    r"(?:arxiv\.org/(?:abs|pdf)/|10\.48550/arxiv\.)"
    r"([a-z-]+(?:\.[a-z]{2})?/[0-9]{7}|[0-9]{4}\.[0-9]{4,5})",
    re.I,
)
DOI = re.compile(r"^10\.[0-9]{4,9}/[^\s]{1,300}$")
OPENREVIEW_ID = re.compile(r"^[A-Za-z0-9_-]{1,40}$")


def clean(value: object, limit: int) -> str:
    """One line of at most ``limit`` characters, no control or bidi characters."""
    if not isinstance(value, str):
        return ""
    text = " ".join(strip_controls(value).split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def arxiv_in(text: object) -> str:
    """The arXiv id (no version) an arXiv URL or arXiv DOI names, else ""."""
    if not isinstance(text, str):
        return ""
    match = _ARXIV_IN.search(text)
    if not match:
        return ""
    found = match.group(1)
    return found if ARXIV_ID.match(found) else ""


def doi_of(text: object) -> str:
    """A DOI from ``10.x/...``, ``doi:10.x/...`` or a doi.org URL, lower-cased; else ""."""
    if not isinstance(text, str):
        return ""
    doi = text.strip()
    for prefix in ("https://doi.org/", "http://doi.org/", "https://dx.doi.org/", "doi:"):
        if doi.lower().startswith(prefix):
            doi = doi[len(prefix) :]
            break
    doi = doi.lower()
    return doi if DOI.match(doi) and not set(doi) & set('"<>') else ""


def iso_date(text: object) -> dt.date | None:
    """A YYYY-MM-DD date (a longer ISO timestamp is cut to its day); None otherwise."""
    if not isinstance(text, str) or len(text) < 10:
        return None
    try:
        return dt.date.fromisoformat(text[:10])
    except ValueError:
        return None


@dataclass(frozen=True)
class Candidate:
    """One row of the output, already cleaned."""

    title: str
    authors: tuple[str, ...]
    date: dt.date | None
    url: str = ""
    abstract: str = ""
    doi: str = ""
    arxiv_id: str = ""
    openreview_id: str = ""

    @property
    def id(self) -> str:
        """The id ``screen import`` will give this row (empty: named by its title)."""
        return known_id(self.arxiv_id, self.doi, self.openreview_id)

    def cells(self) -> list[str]:
        values = (
            self.id,
            self.title,
            "; ".join(self.authors),
            self.date.isoformat() if self.date else "",
            self.url,
            self.abstract,
            self.doi,
            self.arxiv_id,
            self.openreview_id,
        )
        return [_cell(v) for v in values]


def candidate(
    title: object,
    authors: Iterable[object],
    date: dt.date | None,
    *,
    url: object = "",
    abstract: object = "",
    doi: object = "",
    arxiv_id: object = "",
    openreview_id: object = "",
) -> Candidate | None:
    """A cleaned row, or None when it has no title left after cleaning."""
    text = clean(title, MAX_TITLE)
    if not text:
        return None
    names = tuple(n for n in (clean(a, MAX_AUTHOR) for a in authors) if n)[:MAX_AUTHORS]
    link = clean(url, MAX_URL)
    if not link.startswith(("https://", "http://")):
        link = ""
    aid = arxiv_id if isinstance(arxiv_id, str) and ARXIV_ID.match(arxiv_id) else ""
    forum = openreview_id if isinstance(openreview_id, str) else ""
    return Candidate(
        title=text,
        authors=names,
        date=date,
        url=link,
        abstract=clean(abstract, MAX_ABSTRACT),
        doi=doi_of(doi),
        arxiv_id=aid,
        openreview_id=forum if OPENREVIEW_ID.match(forum) else "",
    )


def _cell(text: str) -> str:
    # A leading = + - @ makes a spreadsheet run the cell as a formula.
    return f"'{text}" if text.startswith(_FORMULA_START) else text


def in_window(row: Candidate, since: dt.date | None, until: dt.date | None) -> bool:
    """Whether the row's date lies in [since, until]; an undated row only without a window."""
    if since is None and until is None:
        return True
    if row.date is None:
        return False
    return (since is None or row.date >= since) and (until is None or row.date <= until)


def unique(rows: Iterable[Candidate]) -> list[Candidate]:
    """Rows without repeats (same id, or same title when there is no id), by date then id."""
    seen: set[str] = set()
    out = []
    for row in rows:
        key = row.id or f"title:{row.title.casefold()}"
        if key not in seen:
            seen.add(key)
            out.append(row)
    return sorted(out, key=lambda r: (r.date or dt.date.min, r.id, r.title))


def csv_text(rows: list[Candidate]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(COLUMNS)
    for row in rows:
        writer.writerow(row.cells())
    return buf.getvalue()


def write_csv(path: Path, rows: list[Candidate]) -> None:
    """Write the rows atomically; refuse a link, a folder or any non-regular file at ``path``."""
    if os.path.islink(path):
        raise SourceError(f"{path}: is a symbolic link; refusing to write through it")
    if path.exists() and not path.is_file():
        raise SourceError(f"{path}: exists and is not a regular file")
    if not path.parent.is_dir():
        raise SourceError(f"{path.parent}: no such folder")
    write_atomic(path, csv_text(rows), newline="")
