"""What the adapters share: the pool and the exclusions as seeds in, candidate rows out.

Rows make the CSV file ``masrl-kb screen import`` reads (:data:`COLUMNS`): ``id`` as
``screen import`` will give it, authors "Family, Given" joined by "; ", ``date`` the first
public version. Service text is hostile: every value is cleaned and bounded, ids are checked
as ``screen import`` checks them, formula-like cells are guarded, and the file is written
atomically, never through a symbolic link.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from masrl_kb.contrib.export.csv_io import csv_text
from masrl_kb.contrib.outside_text import MAX_ABSTRACT, MAX_TITLE, MAX_URL, clean_names, clean_text
from masrl_kb.contrib.record_keys import family_given
from masrl_kb.contrib.screen.entries import known_id, or_empty, parse_doi, parse_openreview
from masrl_kb.contrib.screen.import_files import COLUMNS
from masrl_kb.contrib.sources.arxiv import parse_arxiv_id
from masrl_kb.contrib.sources.http import SourceError
from masrl_kb.kb.atomic import write_atomic
from masrl_kb.kb.crossrules import arxiv_ids_of
from masrl_kb.kb.records import read_records


def doi_of(text: object) -> str:
    """A DOI from ``10.x/...``, ``doi:10.x/...`` or a doi.org URL, lower-cased; else ""."""
    return or_empty(parse_doi, text)


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

    def cells(self) -> dict[str, str]:
        """The row under :data:`COLUMNS` (guarded when written)."""
        date = self.date.isoformat() if self.date else ""
        values = asdict(self) | {"id": self.id, "authors": "; ".join(self.authors), "date": date}
        return {c: values[c] for c in COLUMNS}


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
    text = clean_text(title, MAX_TITLE)
    if not text:
        return None
    names = tuple(family_given(n) for n in clean_names(authors))
    link = clean_text(url, MAX_URL)
    return Candidate(
        title=text,
        authors=names,
        date=date,
        url=link if link.startswith(("https://", "http://")) else "",
        abstract=clean_text(abstract, MAX_ABSTRACT),
        doi=doi_of(doi),
        arxiv_id=or_empty(parse_arxiv_id, arxiv_id),
        openreview_id=or_empty(parse_openreview, openreview_id),
    )


@dataclass(frozen=True)
class Fetched:
    """What one fetch found: the rows, the query text to record, the records read."""

    rows: list[Candidate]
    query: str
    seen: int
    unresolved: list[str] = field(default_factory=list)  # pooled papers the index lacks
    undated: int = 0  # records without a publication date (dropped)


def in_window(row: Candidate, since: dt.date | None, until: dt.date | None) -> bool:
    """Whether the row's date lies in [since, until]; an undated row only without a window."""
    if since is None and until is None:
        return True
    day = row.date
    return day is not None and (since is None or day >= since) and (until is None or day <= until)


def unique(rows: Iterable[Candidate]) -> list[Candidate]:
    """Rows without repeats (same id, or same title when there is no id), by date then id."""
    first: dict[str, Candidate] = {}
    for row in rows:
        first.setdefault(row.id or f"title:{row.title.casefold()}", row)
    return sorted(first.values(), key=lambda r: (r.date or dt.date.min, r.id, r.title))


def write_csv(path: Path, rows: list[Candidate]) -> None:
    """Write the rows atomically; refuse a link, a folder or any non-regular file at ``path``."""
    if os.path.islink(path):
        raise SourceError(f"{path}: is a symbolic link; refusing to write through it")
    if path.exists() and not path.is_file():
        raise SourceError(f"{path}: exists and is not a regular file")
    if not path.parent.is_dir():
        raise SourceError(f"{path.parent}: no such folder")
    write_atomic(path, csv_text(COLUMNS, [r.cells() for r in rows]), newline="")


@dataclass(frozen=True)
class Seed:
    """One record as a seed for a citation or recommendation query."""

    name: str  # key or id, for messages
    arxiv_id: str
    doi: str
    title: str


def _seed(data: object, id_field: str) -> Seed | None:
    if not isinstance(data, dict):
        return None
    arxiv = sorted(arxiv_ids_of(data))
    dois = (doi_of(data.get(name)) for name in ("doi", "identifier", "url"))
    return Seed(
        name=str(data.get(id_field, "")),
        arxiv_id=arxiv[0] if arxiv else "",
        doi=next((d for d in dois if d), ""),
        title=clean_text(data.get("title"), MAX_TITLE),
    )


def seeds(root: str | Path | None) -> tuple[list[Seed], list[Seed]]:
    """(pooled papers, exclusions) as seeds, in file order; unreadable records are skipped
    (``masrl-kb validate`` reports them)."""
    records = read_records(root)
    papers = [s for r in records.papers if (s := _seed(r.data, "key"))]
    excluded = [s for r in records.exclusions if (s := _seed(r.data, "id"))]
    return papers, excluded
