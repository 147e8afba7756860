"""What a release would change in the records (``import-upstream``): each row matched to its
record (by key, else arXiv id), duplicate and conflicting rows refused, and every
differing fact or tag a :class:`Change`, applied, *not applied* (a value the taxonomy or
a record cannot hold) or *kept (curated)* (:func:`curated` says when).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from masrl_kb.contrib.export.survey_csv import (
    EXCLUDED_COLUMNS,
    EXCLUDED_FACTS,
    EXCLUDED_LABELLED,
    PAPER_COLUMNS,
    PAPER_FACTS,
    PAPER_TAGS,
    URL_SEPARATOR,
)
from masrl_kb.contrib.upstream_release import plain_name
from masrl_kb.kb.records import RecordFile, RecordSet
from masrl_kb.kb.taxonomy import Taxonomy

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


def _as_text(value: object) -> str:
    return "" if value is None else value.isoformat() if isinstance(value, dt.date) else str(value)


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


def record_data(rec: RecordFile) -> dict[str, Any]:
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


def curated(rec: RecordFile, name: str, ours: object, theirs: object) -> str:
    """Why a difference must not replace the record's value ('' when it may)."""
    top = name.split("[")[0]
    if top in sourced_fields(record_data(rec)):
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


def changes_of(rec: RecordFile, wanted: dict[str, tuple[str, object, str]]) -> list[Change]:
    out = []
    for name, (column, theirs, reason) in wanted.items():
        ours = _current(record_data(rec), name)
        if _same(ours, theirs):
            continue
        kept = curated(rec, name, ours, theirs)
        status, why = (KEPT, kept) if kept else ((NOT_APPLIED, reason) if reason else ("", ""))
        top = name.split("[")[0]
        out.append(Change(rec.rel, rec.line(top), column, name, ours, theirs, status, why))
    return out


def match_rows(
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


def finders(records: RecordSet) -> tuple[Callable[[dict], RecordFile | None], ...]:
    """How a papers row (by key, else arXiv id) and an excluded row find their record."""
    papers = {r.stem: r for r in records.papers if isinstance(r.data, dict)}
    by_arxiv = {
        record_data(r).get("arxiv_id"): r for r in papers.values() if record_data(r).get("arxiv_id")
    }
    exclusions = {r.stem: r for r in records.exclusions if isinstance(r.data, dict)}
    return (
        lambda row: papers.get(row["key"]) or by_arxiv.get(row["arxiv_id"] or None),
        lambda row: exclusions.get(row["record_id"]),
    )


# (kind, columns, id column, title column, wanted values) of papers.csv and excluded.csv
RELEASES = (
    ("paper", PAPER_COLUMNS, "key", "title", _paper_wanted),
    ("exclusion", EXCLUDED_COLUMNS, "record_id", "screening_label", _exclusion_wanted),
)
