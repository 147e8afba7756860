"""Candidate lists exported elsewhere, read for ``masrl-kb screen import``: ``.csv``
(:data:`COLUMNS`), ``.ris`` and ``.bib``/``.bibtex`` (CONTRIBUTING.md describes them).

The extension and the first line must agree on the format (never guessed). A malformed
file is refused whole with :class:`ImportFileError`; reading is bounded.
"""

from __future__ import annotations

import contextlib
import csv
import datetime as dt
import io
import logging
import re
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from masrl_kb.contrib.export.csv_io import unguard_cell
from masrl_kb.contrib.outside_text import MAX_ABSTRACT, MAX_TITLE, MAX_URL, clean_names, clean_text
from masrl_kb.contrib.record_keys import family_given
from masrl_kb.contrib.screen.entries import (
    Entry,
    arxiv_of,
    or_empty,
    parse_doi,
    parse_openreview,
)
from masrl_kb.contrib.sources.arxiv import parse_arxiv_id
from masrl_kb.kb.rules import is_http_url

MAX_FILE_BYTES = 50 * 1024 * 1024
MAX_WARNINGS = 5  # a parser's own warnings shown per file; the rest are counted
MAX_CELL = 131_072  # csv's own default field limit, kept for every format
EARLIEST = dt.date(1950, 1, 1)
FORMATS = {".csv": "csv", ".ris": "ris", ".bib": "bibtex", ".bibtex": "bibtex"}
CSV_REQUIRED = ("id", "title")
COLUMNS = ("id", "title", "authors", "date", "url", "abstract", "doi", "arxiv_id", "openreview_id")
_RIS_TAG = re.compile(r"^([A-Z][A-Z0-9])  -(?: (.*))?$")
_RIS_NUMBER = re.compile(r"^[0-9]{1,9}\.\s*$")  # rispy numbers the records it writes
# A date cell is one day and nothing after it (a range or an extra digit is refused, never
# cut to its first day): YYYY-MM-DD, or RIS's YYYY/MM/DD with the optional "/other info"
# its DA tag defines (no digit in it, so no second date).
_ISO_DAY = re.compile(r"([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})")
_RIS_DAY = re.compile(r"([0-9]{4})/([0-9]{1,2})/([0-9]{1,2})(?:/[^0-9]*)?")
_MONTHS = {m: i for i, m in enumerate("jan feb mar apr may jun jul aug sep oct nov dec".split(), 1)}


class ImportFileError(ValueError):
    """The file is malformed: ``problems`` are ``path:line: field: message`` lines."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        more = f" (and {len(problems) - 1} more problem(s))" if len(problems) > 1 else ""
        super().__init__(problems[0] + more)


@dataclass
class _Raw:
    """One candidate's fields as the file gives them (text, not yet checked)."""

    line: int
    id: str = ""
    title: str = ""
    authors: tuple[str, ...] = ()
    date: str = ""
    url: str = ""
    abstract: str = ""
    doi: str = ""
    arxiv_id: str = ""
    openreview_id: str = ""
    more: tuple[str, ...] = ()  # other cells that may name an id (RIS UR lines, BibTeX eprint)


class Problems:
    """The ``path:line: field: message`` lines of one file, each terminal-safe, raised
    at once as ``error``."""

    def __init__(self, name: str, error: type[ValueError] = ImportFileError) -> None:
        self.name = name
        self.error = error
        self.lines: list[str] = []

    def add(self, line: int, field: str, message: str) -> None:
        self.lines.append(clean_text(f"{self.name}:{line}: {field}: {message}", 500))

    def raise_any(self) -> None:
        if self.lines:
            raise self.error(self.lines)

    def fail(self, line: int, field: str, message: str) -> NoReturn:
        self.add(line, field, message)
        raise self.error(self.lines)


def shown_name(path: Path | str) -> str:
    """A file name as printed and stored: one line, control and bidi characters gone."""
    return clean_text(str(path), 300) or "?"


class LibraryWarnings:
    """A parser's own warnings (bibtexparser logs one per bad block, with the block's bytes),
    kept instead of printed: the first :data:`MAX_WARNINGS` cleaned, the rest counted."""

    def __init__(self) -> None:
        self.kept: list[str] = []
        self.more = 0

    def add(self, message: object) -> None:
        if len(self.kept) < MAX_WARNINGS:
            self.kept.append(clean_text(str(message), 300))
        else:
            self.more += 1

    def lines(self, name: str) -> list[str]:
        more = [f"{name}: and {self.more} more warning(s) of the parser"] if self.more else []
        return [f"{name}: {w}" for w in self.kept] + more

    @contextlib.contextmanager
    def catching(self, *loggers: str) -> Iterator[None]:
        keep = self

        class _Keep(logging.Handler):
            def emit(self, record: logging.LogRecord) -> None:
                keep.add(record.getMessage())

        handler = _Keep(logging.WARNING)
        found = [logging.getLogger(n) for n in loggers]
        old = [(lg.propagate, lg.level) for lg in found]
        for lg in found:
            lg.addHandler(handler)
            lg.propagate = False  # nothing reaches logging's last-resort printer
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("always")
                warnings.showwarning = lambda message, *args, **kw: keep.add(message)
                yield
        finally:
            for lg, (propagate, _level) in zip(found, old, strict=True):
                lg.removeHandler(handler)
                lg.propagate = propagate


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
    reader = {"csv": _csv_raws, "ris": _ris_raws, "bibtex": _bibtex_raws}[kind]
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


def read_text(path: Path, problems: Problems, max_bytes: int = MAX_FILE_BYTES) -> str:
    """A bounded UTF-8 text file with LF line endings (no link, no NUL byte)."""
    if path.is_symlink() or not path.is_file():
        problems.fail(1, "file", "no such file (symbolic links and special files are refused)")
    if path.stat().st_size > max_bytes:
        problems.fail(1, "file", f"larger than {max_bytes} bytes")
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as err:
        problems.fail(path.read_bytes()[: err.start].count(b"\n") + 1, "file", "not UTF-8 text")
    if "\x00" in text:
        problems.fail(text[: text.index("\x00")].count("\n") + 1, "file", "holds a NUL byte")
    # CR-only files (old Mac exports) would otherwise read as one long line.
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _first_line(text: str, skip: str = "") -> tuple[int, str]:
    for number, line in enumerate(text.split("\n"), 1):
        if line.strip() and not (skip and line.lstrip().startswith(skip)):
            if not _RIS_NUMBER.match(line):
                return number, line
    return 1, ""


# ---------------------------------------------------------------- CSV


def csv_rows(text: str, problems: Problems, header_ok) -> list[tuple[int, dict[str, str]]]:
    """(first line, {column: cell}) of each row that is not blank, once ``header_ok`` accepts
    the lower-cased header (else it adds the problem and nothing is read). Cells are stripped
    and unguarded; a row of another width, an overlong cell or a CSV error is a problem."""
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    rows, start = [], 1
    try:
        header = [h.strip().lower() for h in next(reader, [])]
        if not header_ok(header, reader.line_num or 1):
            return []
        start = reader.line_num + 1
        for cells in reader:
            line, start = start, reader.line_num + 1
            long = [h for h, c in zip(header, cells, strict=False) if len(c) > MAX_CELL]
            if not any(c.strip() for c in cells):
                continue
            if len(cells) != len(header):
                problems.add(line, "row", f"{len(cells)} cells, the header has {len(header)}")
            elif long:
                problems.add(line, long[0], f"a cell longer than {MAX_CELL} characters")
            else:
                values = [unguard_cell(c.strip()) for c in cells]
                rows.append((line, dict(zip(header, values, strict=True))))
    except csv.Error as err:
        problems.add(start, "csv", str(err)[:200])  # the line the faulty row starts on
    return rows


def _csv_raws(text: str, problems: Problems) -> Iterator[_Raw]:
    line, first = _first_line(text)
    if _RIS_TAG.match(first) or first.lstrip().startswith("@"):
        problems.add(
            line, "header", "this .csv file holds RIS or BibTeX; give it its own extension"
        )
        return

    def header_ok(header: list[str], line: int) -> bool:
        missing = [c for c in CSV_REQUIRED if c not in header]
        unknown = [h for h in header if h not in COLUMNS]  # a misspelt column would be lost
        if missing or unknown or len(set(header)) != len(header):
            problems.add(
                line,
                "header",
                f"expected the columns {','.join(COLUMNS)} (id and title required, "
                f"each at most once, no others); got "
                f"{','.join(h[:40] for h in header)[:300] or 'nothing'}",
            )
            return False
        return True

    for line, values in csv_rows(text, problems, header_ok):
        authors = tuple(a for a in values.pop("authors", "").split(";") if a.strip())
        cells: dict[str, Any] = values  # text cells of the known columns, by name
        yield _Raw(line=line, authors=authors, **cells)


# ---------------------------------------------------------------- RIS


def _ris_records(text: str, problems: Problems) -> Iterator[tuple[int, str]]:
    """(first line, text) of each TY ... ER record; a structural fault is a problem."""
    header, first = _first_line(text)
    if not _RIS_TAG.match(first):
        problems.add(
            header, "header", "not RIS: the first line must be a tag line such as 'TY  - '"
        )
        return
    start, body = 0, []
    for number, line in enumerate(text.split("\n"), 1):
        if len(line) > MAX_CELL:
            problems.add(number, "ris", f"a line longer than {MAX_CELL} characters")
            return
        tag = _RIS_TAG.match(line)
        if not start:
            if not line.strip() or _RIS_NUMBER.match(line):
                continue
            if not tag or tag.group(1) != "TY":
                problems.add(number, "ris", "expected a record starting with 'TY  - '")
                return
            start, body = number, [line]
        elif tag and tag.group(1) == "TY":
            problems.add(number, "ris", f"the record of line {start} has no 'ER  - ' line")
            return
        else:
            body.append(line)
            if tag and tag.group(1) == "ER":
                yield start, "\n".join(body) + "\n"
                start, body = 0, []
    if start:
        problems.add(start, "ris", "truncated: the last record has no 'ER  - ' line")


def ris_refs(text: str, problems: Problems) -> list[tuple[int, dict]]:
    """(first line, rispy's reference) of every record, once the whole file is well formed."""
    import rispy

    records = list(_ris_records(text, problems))
    refs = []
    for start, record in records if not problems.lines else []:
        try:
            found = rispy.loads(record)
        except Exception as err:  # noqa: BLE001 - rispy raises plain exceptions on bad records
            problems.add(start, "ris", f"cannot read the record ({str(err)[:120]})")
            continue
        if len(found) != 1:
            problems.add(start, "ris", "cannot read the record")
            continue
        refs.append((start, found[0]))
    return refs


def _first(value: object) -> str:
    if isinstance(value, list):
        value = value[0] if value else ""
    return value if isinstance(value, str) else ""


def _ris_raws(text: str, problems: Problems) -> Iterator[_Raw]:
    for line, ref in ris_refs(text, problems):
        urls = [u for u in _texts(ref.get("urls")) if u]
        ids = [_first(ref.get(k)) for k in ("id", "doi", "journal_name", "accession_number")]
        openreview = next((u for u in urls if "openreview.net" in u.lower()), "")
        yield _Raw(
            line=line,
            id=_first(ref.get("id")),
            title=_first(ref.get("title") or ref.get("primary_title")),
            authors=_texts(ref.get("authors") or ref.get("first_authors")),
            date=_first(ref.get("date") or ref.get("publication_year") or ref.get("year")),
            url=urls[0] if urls else "",
            abstract=_first(ref.get("abstract") or ref.get("notes_abstract")),
            doi=_first(ref.get("doi")),
            openreview_id=openreview,
            more=(*urls[1:], *ids),
        )


def _texts(value: object) -> tuple[str, ...]:
    """The text items of a list field; one text is one item (never its characters)."""
    if isinstance(value, str):
        return (value,)
    return tuple(v for v in value if isinstance(v, str)) if isinstance(value, list) else ()


# ---------------------------------------------------------------- BibTeX


def _bibtex_raws(text: str, problems: Problems) -> Iterator[_Raw]:
    import bibtexparser

    line, first = _first_line(text, skip="%")
    if not first.lstrip().startswith("@"):
        problems.add(line, "header", "not BibTeX: the first entry must start with '@'")
        return
    for number, row in enumerate(text.split("\n"), 1):
        if len(row) > MAX_CELL:
            problems.add(number, "bibtex", f"a line longer than {MAX_CELL} characters")
            return
    try:
        library = bibtexparser.parse_string(text)
    except Exception as err:  # noqa: BLE001 - the parser's errors have no common type
        problems.add(1, "bibtex", f"cannot read the file ({str(err)[:120]})")
        return
    for block in library.failed_blocks:
        message = "malformed or truncated entry"
        if "Duplicate" in type(block).__name__:
            message = f"entry key {getattr(block, 'key', '?')!r} appears twice"
        problems.add((block.start_line or 0) + 1, "bibtex", message)
    for entry in library.entries:
        fields = {k.lower(): _bib_text(f.value) for k, f in entry.fields_dict.items()}
        yield _raw_from_bibtex(fields, (entry.start_line or 0) + 1)


def _bib_text(value: object) -> str:
    text = str(value or "")
    text = re.sub(r"\\[a-zA-Z]+\s*|\\.", "", text) if "\\" in text else text
    return text.replace("{", "").replace("}", "").strip()


def _bibtex_date(fields: dict) -> str:
    if fields.get("date"):
        return fields["date"]
    year, day = fields.get("year", ""), fields.get("day", "")
    month = fields.get("month", "").lower()[:3]
    month = str(_MONTHS.get(month, month))
    return f"{year}-{month}-{day}" if year and month and day else year


def _raw_from_bibtex(fields: dict, line: int) -> _Raw:
    on_arxiv = fields.get("archiveprefix", "arxiv").lower() == "arxiv"
    eprint = fields.get("eprint", "") if on_arxiv else ""
    url = fields.get("url", "")
    authors = [a.strip() for a in re.split(r"\s+and\s+", fields.get("author", "")) if a.strip()]
    more = [fields.get(k, "") for k in ("arxivid", "journal", "howpublished")]
    return _Raw(
        line=line,
        id=eprint,
        title=fields.get("title", ""),
        authors=tuple(family_given(a) for a in authors),
        date=_bibtex_date(fields),
        url=url,
        abstract=fields.get("abstract", ""),
        doi=fields.get("doi", ""),
        openreview_id=url if "openreview.net" in url.lower() else "",
        more=tuple(m for m in more if m),
    )


# ---------------------------------------------------------------- checking


def _date(raw: _Raw, today: dt.date, problems: Problems) -> dt.date | None:
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


def _ids(raw: _Raw, problems: Problems) -> tuple[str, str, str] | None:
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


def _entry(raw: _Raw, source: str, today: dt.date, problems: Problems) -> Entry | None:
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
