"""Candidate lists exported elsewhere, read for ``masrl-kb screen import``: ``.csv``
(:data:`COLUMNS`), ``.ris`` and ``.bib``/``.bibtex`` (CONTRIBUTING.md describes them).

The extension and the first line must agree on the format (never guessed). A malformed
file is refused whole with :class:`ImportFileError`; reading is bounded. The file's text
and problems come from `masrl_kb/contrib/screen/list_text.py`, the three formats from
`masrl_kb/contrib/screen/list_formats.py`; here each candidate's date and ids are checked
into an :class:`Entry`. The names this module offered are re-exported.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

from masrl_kb.contrib.outside_text import MAX_ABSTRACT, MAX_TITLE, MAX_URL, clean_names, clean_text
from masrl_kb.contrib.screen.entries import (
    Entry,
    arxiv_of,
    or_empty,
    parse_doi,
    parse_openreview,
)
from masrl_kb.contrib.screen.list_formats import (
    COLUMNS,
    CSV_REQUIRED,
    FORMATS,
    MAX_CELL,
    RawCandidate,
    bibtex_raws,
    csv_raws,
    csv_rows,
    ris_raws,
    ris_refs,
)
from masrl_kb.contrib.screen.list_text import (
    MAX_FILE_BYTES,
    MAX_WARNINGS,
    ImportFileError,
    LibraryWarnings,
    Problems,
    read_text,
    shown_name,
)
from masrl_kb.contrib.sources.arxiv import parse_arxiv_id
from masrl_kb.kb.rules import is_http_url

__all__ = [  # what this module has always offered, wherever it now lives
    "COLUMNS",
    "CSV_REQUIRED",
    "EARLIEST",
    "FORMATS",
    "MAX_CELL",
    "MAX_FILE_BYTES",
    "MAX_WARNINGS",
    "ImportFileError",
    "LibraryWarnings",
    "Problems",
    "csv_rows",
    "read_candidates",
    "read_text",
    "ris_refs",
    "shown_name",
]

EARLIEST = dt.date(1950, 1, 1)

# A date cell is one day and nothing after it (a range or an extra digit is refused, never
# cut to its first day): YYYY-MM-DD, or RIS's YYYY/MM/DD with the optional "/other info"
# its DA tag defines (no digit in it, so no second date).
_ISO_DAY = re.compile(r"([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})")
_RIS_DAY = re.compile(r"([0-9]{4})/([0-9]{1,2})/([0-9]{1,2})(?:/[^0-9]*)?")


def read_candidates(
    path: Path,
    source: str,
    today: dt.date,
    empty_ok: bool = False,
    notes: list[str] | None = None,
) -> list[Entry]:
    """The candidates of an exported list; :class:`ImportFileError` when malformed. A file
    with no candidate is an error unless ``empty_ok`` (an empty search, never by accident).
    ``notes`` receives the parser's own warnings of a file that was read, capped and cleaned."""
    problems = Problems(shown_name(path))
    kind = FORMATS.get(path.suffix.lower())
    if kind is None:
        problems.fail(1, "file", f"unknown extension {path.suffix!r}; allowed: .csv, .ris, .bib")
    text = read_text(path, problems)
    reader = {"csv": csv_raws, "ris": ris_raws, "bibtex": bibtex_raws}[kind]
    caught = LibraryWarnings()
    with caught.catching("bibtexparser", "rispy"):
        raws = list(reader(text, problems))
    problems.raise_any()  # the parser's warnings restate these problems: not shown
    if not raws and not empty_ok:
        message = f"no candidate in this {kind.upper()} file (--empty-ok records an empty search)"
        problems.add(1, "file", message)
    entries = [e for e in (_entry(r, source, today, problems) for r in raws) if e is not None]
    problems.raise_any()
    if notes is not None:
        notes += caught.lines(shown_name(path.name))
    return entries


def _date(raw: RawCandidate, today: dt.date, problems: Problems) -> dt.date | None:
    text = raw.date.strip()
    found = _ISO_DAY.fullmatch(text) or _RIS_DAY.fullmatch(text)
    if not found:
        what = "no date" if not text else f"{text[:40]!r} is not one day"
        problems.add(raw.line, "date", f"{what}; expected YYYY-MM-DD, the first public version")
        return None
    try:
        day = dt.date(*(int(g) for g in found.groups()))
    except ValueError:
        problems.add(raw.line, "date", f"{text[:40]!r} is not a day of the calendar")
        return None
    if not EARLIEST <= day <= today:
        problems.add(raw.line, "date", f"{day} is not between {EARLIEST} and today ({today})")
        return None
    return day


def _arxiv_column(value: str) -> str:
    """An ``arxiv_id`` cell: any form :func:`arxiv_of` reads, else the parser's error."""
    return arxiv_of(value) or parse_arxiv_id(value)


def _ids(raw: RawCandidate, problems: Problems) -> tuple[str, str, str] | None:
    """(arXiv id, DOI, OpenReview id) from the explicit columns, then from every other
    id-bearing cell (id, url, an arXiv DataCite DOI in doi): the first that names one wins."""
    out: dict[str, str] = {}
    explicit = {"arxiv_id": raw.arxiv_id, "doi": raw.doi, "openreview_id": raw.openreview_id}
    parsers = {"arxiv_id": _arxiv_column, "doi": parse_doi, "openreview_id": parse_openreview}
    for name, value in explicit.items():
        if not value:
            continue
        try:
            out[name] = parsers[name](value)
        except ValueError as err:  # an EntryError, ArxivError or a URL urlsplit refuses
            if name == "doi" and arxiv_of(value):
                continue  # an arXiv address in the doi column: read as the arXiv id below
            problems.add(raw.line, name, str(err))
            return None
    for text in (raw.doi, raw.id, raw.url, *raw.more):
        out["arxiv_id"] = out.get("arxiv_id") or arxiv_of(text)
        if not out.get("doi") and text.lower().startswith(_DOI_STARTS):
            out["doi"] = or_empty(parse_doi, text)
        if not out.get("openreview_id") and _names_openreview(text):
            out["openreview_id"] = or_empty(parse_openreview, text)
    return out.get("arxiv_id") or "", out.get("doi") or "", out.get("openreview_id") or ""


_DOI_STARTS = ("doi:", "10.", "https://doi.org/", "http://doi.org/", "https://dx.doi.org/")


def _names_openreview(text: str) -> bool:
    return text.lower().startswith("openreview:") or "openreview.net" in text.lower()


def _entry(raw: RawCandidate, source: str, today: dt.date, problems: Problems) -> Entry | None:
    title = clean_text(raw.title, MAX_TITLE)
    if not title:
        problems.add(raw.line, "title", "empty; every candidate needs its title")
        return None
    url = raw.url.strip()
    if url and (not is_http_url(url) or len(url) > MAX_URL or clean_text(url, MAX_URL) != url):
        problems.add(raw.line, "url", f"{url[:80]!r} is not an http(s) URL")
        return None
    day = _date(raw, today, problems)
    ids = _ids(raw, problems)
    if day is None or ids is None:
        return None
    if not (url or any(ids)):
        needs = "empty; a candidate without an arXiv id, DOI or OpenReview id needs one"
        problems.add(raw.line, "url", needs)
        return None
    return Entry(
        arxiv_id=ids[0],
        title=title,
        authors=clean_names(raw.authors),
        submitted=day,
        primary_category="",
        abstract=clean_text(raw.abstract, MAX_ABSTRACT),
        doi=ids[1],
        openreview_id=ids[2],
        url=url,
        source=source,
    )
