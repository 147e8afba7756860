"""``masrl-kb import-upstream``: compare a newer release of the survey's CSV files
with the records, and with ``apply=True`` update the differing facts and tags.

Only the survey's facts and tags are compared; our own text and judgements are never
touched, and curated values are *kept (curated)* (:func:`_curated` says when). Applying
is all or nothing: each edited record is re-read and the would-be pool validated before
files are swapped, and a failure puts back every file already swapped.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import os
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from masrl_kb.contrib.export.csv_io import unguard_cell
from masrl_kb.contrib.export.survey_csv import (
    EXCLUDED_COLUMNS,
    EXCLUDED_FACTS,
    EXCLUDED_LABELLED,
    PAPER_COLUMNS,
    PAPER_FACTS,
    PAPER_TAGS,
    URL_SEPARATOR,
)
from masrl_kb.contrib.new_record import terminate_as_exit
from masrl_kb.contrib.outside_text import clean_text
from masrl_kb.contrib.yaml_edit import edit_fields
from masrl_kb.kb.atomic import write_atomic
from masrl_kb.kb.paths import find_root
from masrl_kb.kb.record_checks import validate_records
from masrl_kb.kb.records import RecordFile, RecordSet, read_records
from masrl_kb.kb.taxonomy import Taxonomy, load_taxonomy
from masrl_kb.kb.text import shorten, shorten_name
from masrl_kb.kb.yamlio import UnsafeFileError, load_yaml_text, read_regular_file

MAX_CSV_BYTES = 20 * 1024 * 1024
MAX_LINE = 400  # characters of one printed line
# What a release writes for a fact it does not know (compared case-insensitively).
# Tag columns are not compared with this list: ``NA`` is a real tag value there.
UNKNOWN = frozenset({"", "unknown", "none", "null", "nan", "n/a", "anonymous", "anon", "tbd"})
KEPT = "kept (curated)"
MAX_DIGITS = 9  # a year or a count; longer digit strings are not parsed as numbers
# Values no record could hold: the whole release is refused (tags outside the
# taxonomy are only left out: the survey may use a value we have not adopted).
NOT_A_YEAR = "not a year"
NOT_A_DATE = "not a date YYYY-MM-DD"
MALFORMED = (NOT_A_YEAR, NOT_A_DATE)
NOT_APPLIED = "not applied"


class UpstreamError(ValueError):
    """A release is missing or malformed, or applying it would break a rule (``problems``:
    one ``path:line: field: message`` line each)."""

    def __init__(self, message: str, problems: list[str] | None = None) -> None:
        self.problems = [clean_text(p, MAX_LINE) for p in problems or []]
        super().__init__(clean_text(message, MAX_LINE))


@dataclass(frozen=True)
class Change:
    """One field whose upstream value differs from the record's."""

    rel: str  # record file
    line: int
    column: str  # survey column
    field: str  # record field
    ours: object
    theirs: object
    status: str = ""  # "" (applied), NOT_APPLIED or KEPT
    why: str = ""


@dataclass
class UpstreamReport:
    changes: list[Change] = field(default_factory=list)
    new_upstream: list[str] = field(default_factory=list)
    applied: list[str] = field(default_factory=list)  # files written
    apply: bool = False

    def lines(self) -> list[str]:
        out, kept = [], sum(c.status == KEPT for c in self.changes)
        for c in self.changes:
            note = f" ({c.status}: {c.why})" if c.status else ""
            out.append(
                f"{c.rel}:{c.line}: {c.field}: ours {_shown(c.ours)}, upstream "
                f"{_shown(c.theirs)} [{c.column}]{note}"
            )
        out += [f"new upstream: {n}" for n in self.new_upstream]
        if self.apply:
            out += [f"updated {rel}" for rel in self.applied]
        out.append(
            f"{len(self.changes)} difference(s), {len(self.new_upstream)} new upstream row(s)"
            + (f"; {kept} {KEPT}" if kept else "")
            + (f"; {len(self.applied)} file(s) updated" if self.apply else "")
        )
        return [clean_text(line, MAX_LINE) for line in out]


def _shown(value: object) -> str:
    return shorten(value.isoformat() if isinstance(value, dt.date) else value, 120)


# ---------------------------------------------------------------- reading


def read_release(path: str | os.PathLike[str], columns: tuple[str, ...]) -> list[tuple[int, dict]]:
    """(line, row) pairs of a release CSV with exactly ``columns``: a regular file of
    bounded size (no link, FIFO or device), guarded cells (``'=...``) read as written."""
    file = str(path)
    try:
        raw = read_regular_file(path, MAX_CSV_BYTES)
    except UnsafeFileError as err:
        raise UpstreamError(f"{file}:1: file: {err}") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise UpstreamError(f"{file}:1: file: not UTF-8 text") from None
    reader = csv.DictReader(io.StringIO(text, newline=""))
    rows = []
    try:
        header = tuple(reader.fieldnames or ())
        if header != columns:
            raise UpstreamError(
                f"{file}:1: header: expected the survey's columns {','.join(columns)}; "
                f"got {shorten_name(','.join(header) or 'nothing')}"
            )
        for row in reader:
            if None in row:
                raise UpstreamError(f"{file}:{reader.line_num}: row: more cells than columns")
            cells = {k: unguard_cell((v or "").strip()) for k, v in row.items()}
            rows.append((reader.line_num, cells))
    except csv.Error as err:
        raise UpstreamError(f"{file}:{reader.line_num}: row: {err}") from None
    return rows


def plain_name(text: str) -> str:
    """A name with LaTeX accents (``Gr\\'{e}goire``) turned into Unicode."""
    if "\\" not in text:
        return text
    from pylatexenc.latex2text import LatexNodes2Text

    return LatexNodes2Text().latex_to_text(text)


def _as_text(value: object) -> str:
    return "" if value is None else value.isoformat() if isinstance(value, dt.date) else str(value)


# ---------------------------------------------------------------- comparing


def _paper_wanted(row: dict, tax: Taxonomy) -> dict[str, tuple[str, object, str]]:
    """Record field -> (survey column, upstream value, reason it cannot apply or '')."""
    wanted: dict[str, tuple[str, object, str]] = {
        name: (column, row[column], "") for column, name in PAPER_FACTS.items()
    }
    wanted["arxiv_id"] = ("arxiv_id", row["arxiv_id"] or None, "")
    year = row["year"]
    if year.isdigit() and len(year) <= MAX_DIGITS:
        wanted["year"] = ("year", int(year), "")
    else:
        wanted["year"] = ("year", year, NOT_A_YEAR)
    urls = [u.strip() for u in row["url"].split(URL_SEPARATOR.strip()) if u.strip()]
    wanted["url"] = ("url", urls[0] if urls else "", "" if urls else "empty")
    wanted["extra_urls"] = ("url", urls[1:] or None, "")
    wanted["authors[0]"] = ("first_author", plain_name(row["first_author"]), "")
    for column, name in PAPER_TAGS.items():
        reason = f"not a value of {name} in taxonomy.yaml"
        wanted[name] = (column, row[column], "" if row[column] in tax[name].ids else reason)
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
                reason = NOT_A_DATE
        elif name == "stage" and value not in tax["exclusion_stage"].ids:
            reason = "not a value of exclusion_stage in taxonomy.yaml"
        wanted[name] = (column, value, reason)
    for column, axis in EXCLUDED_LABELLED.items():
        by_label = {v.label: v.id for v in tax[axis].values}
        value = by_label.get(row[column], row[column])
        reason = "" if value in tax[axis].ids else f"not a label of {axis} in taxonomy.yaml"
        wanted[column] = (column, value, reason)
    return wanted


# Fields holding facts (not tags): the downgrade rules apply to these.
FACT_FIELDS = frozenset(
    {*PAPER_FACTS.values(), *EXCLUDED_FACTS.values(), "url", "extra_urls", "authors[0]"}
)


def _current(data: dict, name: str) -> object:
    if name == "authors[0]":
        authors = data.get("authors")
        return authors[0] if isinstance(authors, list) and authors else None
    return data.get(name)


def _data(rec: RecordFile) -> dict[str, Any]:
    """The record's mapping (records that are not one are never matched to a row)."""
    return rec.data if isinstance(rec.data, dict) else {}


def _as_list(value: object) -> list[object]:
    return list(value) if isinstance(value, list) else []


def _same(ours: object, theirs: object) -> bool:
    if isinstance(theirs, list) or isinstance(ours, list):
        return _as_list(ours) == _as_list(theirs)
    return _as_text(ours) == _as_text(theirs)


def sourced_fields(data: dict) -> set[str]:
    """Top-level fields the record backs with a ``sources`` entry."""
    sources = data.get("sources")
    if not isinstance(sources, list):
        return set()
    names = (s.get("field") for s in sources if isinstance(s, dict))
    return {n.split("[")[0].split(".")[0] for n in names if isinstance(n, str)}


def is_unknown(value: object) -> bool:
    """A value that says nothing: empty, None, or a word for 'not known'."""
    if value is None or value == []:
        return True
    return isinstance(value, str) and value.strip().casefold() in UNKNOWN


def _personal_name(value: object) -> bool:
    """A person's name as the records write it: ``Family, Given``."""
    return isinstance(value, str) and ", " in value.strip(", ")


def _curated(rec: RecordFile, name: str, ours: object, theirs: object) -> str:
    """Why a difference must not replace the record's value ('' when it may)."""
    top = name.split("[")[0]
    if top in sourced_fields(_data(rec)):
        return f"the record gives a source for {top}"
    if name not in FACT_FIELDS or is_unknown(ours):
        return ""
    if is_unknown(theirs):
        return "the release gives no value"
    if name == "authors[0]" and _personal_name(ours) and not _personal_name(theirs):
        return "a team or organisation name would replace a named author"
    if isinstance(ours, list) and not set(ours) <= set(_as_list(theirs)):
        return "the release would delete links"
    return ""


def _changes(rec: RecordFile, wanted: dict[str, tuple[str, object, str]]) -> list[Change]:
    out = []
    for name, (column, theirs, reason) in wanted.items():
        ours = _current(_data(rec), name)
        if _same(ours, theirs):
            continue
        kept = _curated(rec, name, ours, theirs)
        status, why = (KEPT, kept) if kept else ((NOT_APPLIED, reason) if reason else ("", ""))
        top = name.split("[")[0]
        out.append(Change(rec.rel, rec.line(top), column, name, ours, theirs, status, why))
    return out


# ---------------------------------------------------------------- matching rows


def _match_rows(
    rows: list[tuple[int, dict]], file: str, id_column: str, find, problems: list[str]
) -> list[tuple[dict, RecordFile | None]]:
    """Each row with its record; duplicate rows and rows sharing a record are problems."""
    by_id: dict[str, tuple[int, dict]] = {}
    by_record: dict[str, int] = {}
    out = []
    for line, row in rows:
        rid = row[id_column]
        if rid in by_id:
            first, earlier = by_id[rid]
            what = "duplicate row" if earlier == row else "conflicting rows"
            problems.append(f"{file}:{line}: {id_column}: {what}: {rid!r} is also on line {first}")
            continue
        by_id[rid] = (line, row)
        rec = find(row)
        if rec is not None and rec.rel in by_record:
            problems.append(
                f"{file}:{line}: {id_column}: conflicting rows: {rid!r} is the same record "
                f"({rec.rel}) as line {by_record[rec.rel]}"
            )
            continue
        if rec is not None:
            by_record[rec.rel] = line
        out.append((row, rec))
    return out


def _finders(records: RecordSet) -> tuple[Callable[[dict], RecordFile | None], ...]:
    """How a papers row (by key, else arXiv id) and an excluded row find their record."""
    papers = {r.stem: r for r in records.papers if isinstance(r.data, dict)}
    by_arxiv = {_data(r).get("arxiv_id"): r for r in papers.values() if _data(r).get("arxiv_id")}
    exclusions = {r.stem: r for r in records.exclusions if isinstance(r.data, dict)}
    return (
        lambda row: papers.get(row["key"]) or by_arxiv.get(row["arxiv_id"] or None),
        lambda row: exclusions.get(row["record_id"]),
    )


# (kind, columns, id column, title column, wanted values) of papers.csv and excluded.csv
_RELEASES = (
    ("paper", PAPER_COLUMNS, "key", "title", _paper_wanted),
    ("exclusion", EXCLUDED_COLUMNS, "record_id", "screening_label", _exclusion_wanted),
)


# ---------------------------------------------------------------- applying


def _record_values(rec: RecordFile, changes: list[Change]) -> dict[str, object]:
    values: dict[str, object] = {}
    for c in changes:
        if c.status:
            continue
        if c.field == "authors[0]":
            authors = list(_data(rec)["authors"])
            authors[0] = c.theirs
            values["authors"] = authors
        else:
            values[c.field] = c.theirs
    return values


@dataclass
class _Edit:
    """One record file's new text, not yet written."""

    path: Path
    old: str
    new: str
    record: RecordFile  # the new text, as read back


def _edited(root: Path, rec: RecordFile, changes: list[Change]) -> _Edit | None:
    """The record's new text with the applicable changes, checked by re-reading it."""
    values = _record_values(rec, changes)
    if not values:
        return None
    path = root / rec.rel
    old_text = read_regular_file(path).decode("utf-8")
    new_text = edit_fields(old_text, values, {"extra_urls": "url"})
    loaded = load_yaml_text(new_text)
    expected = {k: v for k, v in _data(rec).items() if k not in values}
    expected.update({k: v for k, v in values.items() if v is not None})
    if loaded.problems or dict(loaded.data) != expected:
        name = next(iter(values))
        raise UpstreamError(
            f"{rec.rel}:{rec.line(name)}: {name}: the release's value cannot be written "
            f"and read back unchanged: {shorten(values[name])}"
        )
    return _Edit(path, old_text, new_text, replace(rec, data=loaded.data, problems=loaded.problems))


def _new_problems(records: RecordSet, edits: list[_Edit], tax: Taxonomy) -> list[str]:
    """Rule violations the edits would add to the pool (what was broken before is not theirs)."""
    replaced = {e.record.rel: e.record for e in edits}

    def swap(recs: list[RecordFile]) -> list[RecordFile]:
        return [replaced.get(r.rel, r) for r in recs]

    after = replace(records, papers=swap(records.papers), exclusions=swap(records.exclusions))
    before = {(p.path, p.field, p.message) for p in validate_records(records, tax)}
    return [
        str(p) for p in validate_records(after, tax) if (p.path, p.field, p.message) not in before
    ]


def swap_files(edits: list[_Edit]) -> list[str]:
    """Write every edit, all or none: each file is replaced atomically, and any
    failure, interrupt or SIGTERM/SIGHUP puts back the files already replaced."""
    done: list[_Edit] = []
    try:
        with terminate_as_exit():
            for e in edits:
                write_atomic(e.path, e.new)
                done.append(e)
    except BaseException:
        for e in reversed(done):
            write_atomic(e.path, e.old)
        raise
    return [e.record.rel for e in done]


def _refuse(problems: list[str], what: str) -> None:
    if problems:
        raise UpstreamError(f"{len(problems)} {what}: nothing written", problems)


def _compared(files: tuple, records: RecordSet, tax: Taxonomy, report: UpstreamReport):
    """(record, its changes) for every row matched to a record (unmatched rows are new
    upstream), after refusing duplicate or conflicting rows."""
    problems: list[str] = []
    matched = []
    for path, release, find in zip(files, _RELEASES, _finders(records), strict=True):
        if path is not None:
            rows = read_release(path, release[1])
            matched += [
                (release, *m) for m in _match_rows(rows, str(path), release[2], find, problems)
            ]
    _refuse(problems, "duplicate or conflicting row(s)")
    work: list[tuple[RecordFile, list[Change]]] = []
    for (kind, _, id_column, title, wanted), row, rec in matched:
        if rec is None:
            rid, name = shorten_name(row[id_column], 60), shorten_name(row[title])
            report.new_upstream.append(f"{kind} {rid}: {name}")
        else:
            work.append((rec, _changes(rec, wanted(row, tax))))
    report.changes = [c for _, changes in work for c in changes]
    return work


def compare_upstream(
    papers_csv: str | os.PathLike[str],
    excluded_csv: str | os.PathLike[str] | None = None,
    root: str | os.PathLike[str] | None = None,
    apply: bool = False,
) -> UpstreamReport:
    """Every difference between a release and the records; ``apply`` writes them. Raises
    :class:`UpstreamError` (nothing written) for bad rows or values or a broken rule."""
    base = find_root(root)
    tax = load_taxonomy(base)
    records = read_records(base)
    report = UpstreamReport(apply=apply)
    work = _compared((papers_csv, excluded_csv), records, tax, report)
    _refuse(
        [
            f"{c.rel}:{c.line}: {c.field}: the release gives {_shown(c.theirs)}: {c.why}"
            for c in report.changes
            if c.status == NOT_APPLIED and c.why in MALFORMED
        ],
        "malformed value(s)",
    )
    edits = [e for rec, changes in work if (e := _edited(base, rec, changes)) is not None]
    _refuse(
        _new_problems(records, edits, tax) if edits else [], "problem(s) in the would-be records"
    )
    if apply:
        report.applied = swap_files(edits)
    return report
