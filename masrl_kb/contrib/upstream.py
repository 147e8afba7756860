"""``masrl-kb import-upstream``: compare a newer release of the survey's CSV files
with the records, and with ``apply=True`` update the differing facts and tags.

Only the survey's facts (title, first author, affiliation, year, arXiv id,
venue, links; for exclusions title, identifier, link, source, query family,
date and stage) and its tags are compared; our own text (summary, notes,
exclusion notes) and judgements outside the survey's columns (decisions,
strict credit, citation) are never touched. A record file is edited in place:
only the lines of a changed field are replaced, so comments and every other
field stay exactly as they were; the result is re-read and checked before it
replaces the file atomically.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from masrl_kb.contrib.export.survey_csv import (
    EXCLUDED_COLUMNS,
    EXCLUDED_FACTS,
    EXCLUDED_LABELLED,
    PAPER_COLUMNS,
    PAPER_FACTS,
    PAPER_TAGS,
    URL_SEPARATOR,
)
from masrl_kb.kb.paths import find_root
from masrl_kb.kb.records import RecordFile, read_records
from masrl_kb.kb.taxonomy import Taxonomy, load_taxonomy
from masrl_kb.kb.yamlio import load_yaml_text

MAX_CSV_BYTES = 20 * 1024 * 1024
_TOP_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*\s*:")
_LATEX = re.compile(r"\\")


class UpstreamError(ValueError):
    """A release file is missing or malformed."""


@dataclass(frozen=True)
class Change:
    """One field whose upstream value differs from the record's."""

    rel: str  # record file
    line: int
    column: str  # survey column
    field: str  # record field
    ours: object
    theirs: object
    applicable: bool = True
    why_not: str = ""


@dataclass
class UpstreamReport:
    changes: list[Change] = field(default_factory=list)
    new_upstream: list[str] = field(default_factory=list)
    applied: list[str] = field(default_factory=list)  # files written
    apply: bool = False

    def lines(self) -> list[str]:
        out = []
        for c in self.changes:
            note = "" if c.applicable else f" (not applied: {c.why_not})"
            out.append(
                f"{c.rel}:{c.line}: {c.field}: ours {_shown(c.ours)}, upstream "
                f"{_shown(c.theirs)} [{c.column}]{note}"
            )
        out += [f"new upstream: {n}" for n in self.new_upstream]
        if self.apply:
            out += [f"updated {rel}" for rel in self.applied]
        n = len(self.changes)
        out.append(
            f"{n} difference(s), {len(self.new_upstream)} new upstream row(s)"
            + (f"; {len(self.applied)} file(s) updated" if self.apply else "")
        )
        return out


def _shown(value: object) -> str:
    return repr(value.isoformat()) if isinstance(value, dt.date) else repr(value)


# ---------------------------------------------------------------- reading


def read_release(path: str | os.PathLike[str], columns: tuple[str, ...]) -> list[tuple[int, dict]]:
    """Rows of a release CSV with exactly ``columns``; (line, row) pairs."""
    file = Path(path)
    if not file.is_file():
        raise UpstreamError(f"{file}: no such file")
    if file.stat().st_size > MAX_CSV_BYTES:
        raise UpstreamError(f"{file}: larger than {MAX_CSV_BYTES // 2**20} MB")
    try:
        text = file.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError:
        raise UpstreamError(f"{file}:1: file: not UTF-8 text") from None
    reader = csv.DictReader(io.StringIO(text))
    header = tuple(reader.fieldnames or ())
    if header != columns:
        raise UpstreamError(
            f"{file.name}:1: header: expected the survey's columns {','.join(columns)}; "
            f"got {','.join(header) or 'nothing'}"
        )
    rows = []
    for row in reader:
        if None in row:
            raise UpstreamError(f"{file.name}:{reader.line_num}: row: more cells than columns")
        rows.append((reader.line_num, {k: (v or "").strip() for k, v in row.items()}))
    return rows


def plain_name(text: str) -> str:
    """A name with LaTeX accents (``Gr\\'{e}goire``) turned into Unicode."""
    if not _LATEX.search(text):
        return text
    from pylatexenc.latex2text import LatexNodes2Text

    return LatexNodes2Text().latex_to_text(text)


def _as_text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, dt.date):
        return value.isoformat()
    return str(value)


# ---------------------------------------------------------------- comparing


def _paper_wanted(row: dict, tax: Taxonomy) -> dict[str, tuple[str, object, str]]:
    """Record field -> (survey column, upstream value, reason it cannot apply or '')."""
    wanted: dict[str, tuple[str, object, str]] = {}
    for column, name in PAPER_FACTS.items():
        value: object = row[column]
        if name == "year":
            value = int(value) if value.isdigit() else value
            reason = "" if isinstance(value, int) else "not a year"
        else:
            reason = ""
        if name == "arxiv_id" and not value:
            value = None
        wanted[name] = (column, value, reason)
    urls = [u.strip() for u in row["url"].split(URL_SEPARATOR.strip()) if u.strip()]
    wanted["url"] = ("url", urls[0] if urls else "", "" if urls else "empty")
    wanted["extra_urls"] = ("url", urls[1:] or None, "")
    wanted["authors[0]"] = ("first_author", plain_name(row["first_author"]), "")
    for column, name in PAPER_TAGS.items():
        value = row[column]
        axis = tax[name]
        reason = "" if value in axis.ids else f"not a value of {name} in taxonomy.yaml"
        wanted[name] = (column, value, reason)
    return wanted


def _exclusion_wanted(row: dict, tax: Taxonomy) -> dict[str, tuple[str, object, str]]:
    wanted: dict[str, tuple[str, object, str]] = {}
    for column, name in EXCLUDED_FACTS.items():
        value: object = row[column]
        reason = ""
        if name == "screened":
            try:
                value = dt.date.fromisoformat(row[column])
            except ValueError:
                reason = "not a date YYYY-MM-DD"
        elif name == "stage" and value not in tax["exclusion_stage"].ids:
            reason = "not a value of exclusion_stage in taxonomy.yaml"
        wanted[name] = (column, value, reason)
    for column, axis in EXCLUDED_LABELLED.items():
        by_label = {v.label: v.id for v in tax[axis].values}
        value = by_label.get(row[column], row[column])
        reason = "" if value in tax[axis].ids else f"not a label of {axis} in taxonomy.yaml"
        wanted[column] = (column, value, reason)
    return wanted


def _current(data: dict, name: str) -> object:
    if name == "authors[0]":
        authors = data.get("authors")
        return authors[0] if isinstance(authors, list) and authors else None
    return data.get(name)


def _same(ours: object, theirs: object) -> bool:
    if isinstance(theirs, list) or isinstance(ours, list):
        return list(ours or []) == list(theirs or [])
    return _as_text(ours) == _as_text(theirs)


def _changes(rec: RecordFile, wanted: dict[str, tuple[str, object, str]]) -> list[Change]:
    out = []
    for name, (column, theirs, reason) in wanted.items():
        ours = _current(rec.data, name)
        if _same(ours, theirs):
            continue
        top = name.split("[")[0]
        out.append(Change(rec.rel, rec.line(top), column, name, ours, theirs, not reason, reason))
    return out


# ---------------------------------------------------------------- applying


def _field_span(lines: list[str], name: str) -> tuple[int, int] | None:
    """Line indexes [start, end) of a top-level field's text, or None."""
    start = next((i for i, t in enumerate(lines) if re.match(rf"^{re.escape(name)}\s*:", t)), None)
    if start is None:
        return None
    end = start + 1
    while end < len(lines) and not _TOP_KEY.match(lines[end]) and not lines[end].startswith("#"):
        end += 1
    return start, end


def _field_text(name: str, value: object) -> list[str]:
    text = yaml.safe_dump({name: value}, sort_keys=False, allow_unicode=True, width=88)
    return text.splitlines()


def edit_fields(text: str, values: dict[str, object], after: dict[str, str]) -> str:
    """``text`` with each top-level field in ``values`` replaced (None: removed).

    A field that is absent is inserted after the field ``after[name]`` names.
    """
    lines = text.splitlines()
    for name, value in values.items():
        span = _field_span(lines, name)
        new = [] if value is None else _field_text(name, value)
        if span is not None:
            lines[span[0] : span[1]] = new
        elif new:
            anchor = _field_span(lines, after.get(name, ""))
            at = anchor[1] if anchor else len(lines)
            lines[at:at] = new
    return "\n".join(lines) + "\n"


def _record_values(rec: RecordFile, changes: list[Change]) -> dict[str, object]:
    values: dict[str, object] = {}
    for c in changes:
        if not c.applicable:
            continue
        if c.field == "authors[0]":
            authors = list(rec.data["authors"])
            authors[0] = c.theirs
            values["authors"] = authors
        else:
            values[c.field] = c.theirs
    return values


def _apply(root: Path, rec: RecordFile, changes: list[Change]) -> bool:
    values = _record_values(rec, changes)
    if not values:
        return False
    path = root / rec.rel
    old_text = path.read_text(encoding="utf-8")
    new_text = edit_fields(old_text, values, {"extra_urls": "url"})
    loaded = load_yaml_text(new_text)
    expected = {k: v for k, v in rec.data.items() if k not in values}
    expected.update({k: v for k, v in values.items() if v is not None})
    if loaded.problems or dict(loaded.data) != expected:
        raise UpstreamError(f"{rec.rel}: could not edit the fields {', '.join(values)} safely")
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(new_text)
    os.replace(tmp, path)
    return True


def compare_upstream(
    papers_csv: str | os.PathLike[str],
    excluded_csv: str | os.PathLike[str] | None = None,
    root: str | os.PathLike[str] | None = None,
    apply: bool = False,
) -> UpstreamReport:
    """Every difference between a release and the records; ``apply`` writes them."""
    base = find_root(root)
    tax = load_taxonomy(base)
    records = read_records(base)
    report = UpstreamReport(apply=apply)
    papers = {r.stem: r for r in records.papers if isinstance(r.data, dict)}
    by_arxiv = {r.data.get("arxiv_id"): r for r in papers.values() if r.data.get("arxiv_id")}
    work: list[tuple[RecordFile, list[Change]]] = []
    for _, row in read_release(papers_csv, PAPER_COLUMNS):
        rec = papers.get(row["key"]) or by_arxiv.get(row["arxiv_id"] or None)
        if rec is None:
            report.new_upstream.append(f"paper {row['key']}: {row['title']}")
            continue
        work.append((rec, _changes(rec, _paper_wanted(row, tax))))
    if excluded_csv is not None:
        exclusions = {r.stem: r for r in records.exclusions if isinstance(r.data, dict)}
        for _, row in read_release(excluded_csv, EXCLUDED_COLUMNS):
            rec = exclusions.get(row["record_id"])
            if rec is None:
                report.new_upstream.append(
                    f"exclusion {row['record_id']}: {row['screening_label']}"
                )
                continue
            work.append((rec, _changes(rec, _exclusion_wanted(row, tax))))
    report.changes = [c for _, changes in work for c in changes]
    if apply:
        for rec, changes in work:
            if _apply(base, rec, changes):
                report.applied.append(rec.rel)
    return report
