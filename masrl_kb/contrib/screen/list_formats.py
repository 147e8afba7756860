"""The three formats of an exported candidate list, each read into :class:`RawCandidate`
rows of text not yet checked: ``.csv`` (:data:`COLUMNS`), ``.ris`` (tags, rispy) and
``.bib``/``.bibtex`` (bibtexparser). The first line must agree with the extension.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from masrl_kb.contrib.export.csv_io import unguard_cell
from masrl_kb.contrib.record_keys import family_given
from masrl_kb.contrib.screen.list_text import Problems

MAX_CELL = 131_072  # csv's own default field limit, kept for every format
FORMATS = {".csv": "csv", ".ris": "ris", ".bib": "bibtex", ".bibtex": "bibtex"}
CSV_REQUIRED = ("id", "title")
COLUMNS = ("id", "title", "authors", "date", "url", "abstract", "doi", "arxiv_id", "openreview_id")
_RIS_TAG = re.compile(r"^([A-Z][A-Z0-9])  -(?: (.*))?$")
_MONTHS = {m: i for i, m in enumerate("jan feb mar apr may jun jul aug sep oct nov dec".split(), 1)}
_RIS_NUMBER = re.compile(r"^[0-9]{1,9}\.\s*$")  # rispy numbers the records it writes


@dataclass
class RawCandidate:
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


def _first_line(text: str, skip: str = "") -> tuple[int, str]:
    for number, line in enumerate(text.split("\n"), 1):
        if line.strip() and not (skip and line.lstrip().startswith(skip)):
            if not _RIS_NUMBER.match(line):
                return number, line
    return 1, ""


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


def csv_raws(text: str, problems: Problems) -> Iterator[RawCandidate]:
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
        yield RawCandidate(line=line, authors=authors, **cells)


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


def ris_raws(text: str, problems: Problems) -> Iterator[RawCandidate]:
    for line, ref in ris_refs(text, problems):
        urls = [u for u in _texts(ref.get("urls")) if u]
        ids = [_first(ref.get(k)) for k in ("id", "doi", "journal_name", "accession_number")]
        openreview = next((u for u in urls if "openreview.net" in u.lower()), "")
        yield RawCandidate(
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


def bibtex_raws(text: str, problems: Problems) -> Iterator[RawCandidate]:
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


def _raw_from_bibtex(fields: dict, line: int) -> RawCandidate:
    on_arxiv = fields.get("archiveprefix", "arxiv").lower() == "arxiv"
    eprint = fields.get("eprint", "") if on_arxiv else ""
    url = fields.get("url", "")
    authors = [a.strip() for a in re.split(r"\s+and\s+", fields.get("author", "")) if a.strip()]
    more = [fields.get(k, "") for k in ("arxivid", "journal", "howpublished")]
    return RawCandidate(
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
