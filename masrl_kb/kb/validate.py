"""Validation of records against the field lists and the taxonomy.

Every rule reports a :class:`Problem` (``path:line: field: message``); a run
collects all of them rather than stopping at the first.
"""

from __future__ import annotations

import datetime as dt
import difflib
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from urllib.parse import urlsplit

from masrl_kb.kb.benchmarks import BENCHMARKS_FILE, BenchmarkFile, read_benchmarks
from masrl_kb.kb.fields import (
    ARXIV_ID_PATTERN,
    BENCHMARK_FIELDS,
    CITATION_FIELDS,
    DECISION_FIELDS,
    EXCLUSION_FIELDS,
    PAPER_FIELDS,
    PLACEHOLDER,
    Field,
)
from masrl_kb.kb.judgements import judgement_problems
from masrl_kb.kb.problem import Problem
from masrl_kb.kb.provenance import provenance_problems
from masrl_kb.kb.readings import ReadingsError, load_readers
from masrl_kb.kb.records import RecordFile, RecordSet, read_records
from masrl_kb.kb.rules import NA, is_http_url
from masrl_kb.kb.taxonomy import Taxonomy, TaxonomyError, load_taxonomy
from masrl_kb.kb.text import shorten, shorten_name, text_problem, title_skeleton
from masrl_kb.kb.yamlio import LineDict, load_yaml_text

MIN_YEAR = 1950
MIN_DATE = dt.date(MIN_YEAR, 1, 1)
_DECIMAL = re.compile(r"0|[1-9][0-9]*")
_ARXIV_RE = re.compile(ARXIV_ID_PATTERN)
_ARXIV_IN_TEXT = re.compile(
    r"(?:arxiv\.org/(?:abs|pdf)/|arxiv:)([0-9]{4}\.[0-9]{4,5}|[a-z-]+(?:\.[A-Z]{2})?/[0-9]{7})",
    re.IGNORECASE,
)


@dataclass
class Report:
    """What ``validate`` found."""

    problems: list[Problem]
    papers: int
    exclusions: int

    @property
    def ok(self) -> bool:
        return not self.problems

    def summary(self) -> str:
        if self.ok:
            return f"ok: {self.papers} papers and {self.exclusions} exclusions are valid"
        files = len({p.path for p in self.problems})
        return f"{len(self.problems)} problem(s) in {files} file(s)"


# ---------------------------------------------------------------- values


def describe(value: object) -> str:
    """How a value reads in an error message."""
    if value is None:
        return "an empty value"
    if isinstance(value, bool):
        return f"boolean {str(value).lower()}"
    if isinstance(value, int | float):
        return f"number {value!r}"
    if isinstance(value, dt.date):
        return f"date {value.isoformat()}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return shorten(value)


def _allowed(ids: Iterable[str]) -> str:
    return "allowed: " + ", ".join(ids)


def _bool_hint(value: object) -> str:
    return (
        f"got {describe(value)}: YAML reads unquoted yes/no/on/off/true/false as booleans; "
        "put the word in quotes"
    )


def _check_text(value: object, multiline: bool = False) -> str | None:
    if value is None:
        return "must not be empty"
    if isinstance(value, bool):
        return _bool_hint(value)
    if not isinstance(value, str):
        return f"expected text, got {describe(value)}"
    if not value.strip():
        return "must not be empty"
    return text_problem(value, multiline)


def _check_url(value: object) -> str | None:
    problem = _check_text(value)
    if problem:
        return problem
    if not is_http_url(value):
        return f"{shorten(value)} is not an http(s) URL"
    return None


def _check_axis(value: object, f: Field, tax: Taxonomy) -> str | None:
    ids = tax[f.axis].ids
    if isinstance(value, bool):
        return f"{_bool_hint(value)}; {_allowed(ids)}"
    if not isinstance(value, str) or value not in ids:
        return f"unknown value {describe(value)}; {_allowed(ids)}"
    return None


def _check_arxiv(value: object) -> str | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return (
            f"got {describe(value)}: quote arXiv ids (e.g. '2508.04652'); "
            "unquoted they are read as numbers and lose trailing zeros"
        )
    problem = _check_text(value)
    if problem:
        return problem
    if not _ARXIV_RE.match(value):
        return (
            f"malformed arXiv id {shorten(value)}: "
            "expected YYMM.NNNNN (e.g. 2508.04652), no version"
        )
    return None


def _check_int(value: object, f: Field, raw: str | None = None) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int):
        return f"expected a whole number, got {describe(value)}"
    if raw is not None and not _DECIMAL.fullmatch(raw):
        # YAML 1.1 also reads 0x7E9, 0o3751, 2_025 and 20:15 as integers.
        return f"write the number in plain decimal digits, got {shorten(raw)}"
    if f.name == "year":
        last = dt.date.today().year + 1
        if not MIN_YEAR <= value <= last:
            return f"year {value} is outside {MIN_YEAR}..{last}"
    return None


def _check_bool(value: object) -> str | None:
    if not isinstance(value, bool):
        return f"expected true or false, got {describe(value)}"
    return None


def latest_date() -> dt.date:
    """The latest date a record may carry: a year from today (typos, not plans)."""
    today = dt.date.today()
    return today.replace(year=today.year + 1, day=28 if today.month == 2 else today.day)


def _check_date(value: object) -> str | None:
    if isinstance(value, dt.datetime) or not isinstance(value, dt.date):
        return f"expected a date written YYYY-MM-DD without quotes, got {describe(value)}"
    last = latest_date()
    if not MIN_DATE <= value <= last:
        return f"date {value.isoformat()} is outside {MIN_DATE.isoformat()}..{last.isoformat()}"
    return None


def _check_strings(value: object) -> str | None:
    if not isinstance(value, list) or not value:
        return f"expected a non-empty list of names, got {describe(value)}"
    for i, item in enumerate(value):
        problem = _check_text(item)
        if problem:
            return f"item {i + 1}: {problem}"
    return None


def _check_urls(value: object) -> str | None:
    if not isinstance(value, list):
        return f"expected a list of URLs, got {describe(value)}"
    for i, item in enumerate(value):
        problem = _check_url(item)
        if problem:
            return f"item {i + 1}: {problem}"
    return None


def _check_pattern(value: object, f: Field) -> str | None:
    problem = _check_text(value)
    if problem:
        return problem
    if not re.fullmatch(f.pattern, value):
        return f"{shorten(value)} does not match {f.pattern}"
    return None


def _check_artifact(value: object) -> str | None:
    if isinstance(value, dict):
        if set(value) != {"none"}:
            return "expected a URL, or {none: YYYY-MM-DD} (the day it was checked and not found)"
        problem = _check_date(value["none"])
        return f"none: {problem}" if problem else None
    return _check_url(value)


_SIMPLE = {
    "artifact": lambda v, f, t: _check_artifact(v),
    "text": lambda v, f, t: _check_text(v, f.multiline),
    "url": lambda v, f, t: _check_url(v),
    "urls": lambda v, f, t: _check_urls(v),
    "axis": lambda v, f, t: _check_axis(v, f, t),
    "arxiv_id": lambda v, f, t: _check_arxiv(v),
    "int": lambda v, f, t: _check_int(v, f),
    "bool": lambda v, f, t: _check_bool(v),
    "date": lambda v, f, t: _check_date(v),
    "strings": lambda v, f, t: _check_strings(v),
    "pattern": lambda v, f, t: _check_pattern(v, f),
}

# ---------------------------------------------------------------- mappings

Found = tuple[int, str, str]  # (line, field, message)
_KNOWN: dict[int, dict[str, Field]] = {}


def _known(fields: tuple[Field, ...]) -> dict[str, Field]:
    known = _KNOWN.get(id(fields))
    if known is None:
        known = _KNOWN[id(fields)] = {f.name: f for f in fields}
    return known


def _check_mapping(
    data: object, fields: tuple[Field, ...], tax: Taxonomy, prefix: str, line: int
) -> list[Found]:
    if not isinstance(data, LineDict):
        name = prefix.rstrip(".") or "record"
        return [(line, name, f"expected a mapping of field: value, got {describe(data)}")]
    known = _known(fields)
    found: list[Found] = [
        (data.line_of(key), f"{prefix}{shorten_name(key)}", _unknown_field(key, known))
        for key in data
        if key not in known
    ]
    for f in fields:
        if f.name in data:
            found.extend(_check_value(data, f, tax, prefix))
        elif f.required:
            found.append((data.line, f"{prefix}{f.name}", f"missing required field ({f.doc})"))
    return found


def _unknown_field(key: object, known: dict[str, Field]) -> str:
    close = difflib.get_close_matches(str(key), list(known), n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    # The field column already echoes the key; a shorter echo keeps the line readable.
    return f"unknown field {shorten(key, 40)}{hint}; allowed fields: {', '.join(known)}"


def _check_value(data: LineDict, f: Field, tax: Taxonomy, prefix: str) -> list[Found]:
    value = data[f.name]
    name = f"{prefix}{f.name}"
    if value == PLACEHOLDER:
        message = f"unfinished: replace the {PLACEHOLDER} placeholder ({f.doc})"
        return [(data.line_of(f.name), name, message)]
    if f.kind == "decisions":
        return _check_decisions(value, tax, name, data.line_of(f.name))
    if f.kind == "citation":
        return _check_mapping(value, CITATION_FIELDS, tax, f"{name}.", data.line_of(f.name))
    if f.kind == "object":
        return _check_mapping(value, f.sub, tax, f"{name}.", data.line_of(f.name))
    if f.kind == "objects":
        return _check_objects(value, f, tax, name, data.line_of(f.name))
    if f.kind == "int":
        problem = _check_int(value, f, data.raw_of(f.name))
    else:
        problem = _SIMPLE[f.kind](value, f, tax)
    return [(data.line_of(f.name), name, problem)] if problem else []


def _check_objects(value: object, f: Field, tax: Taxonomy, name: str, line: int) -> list[Found]:
    if not isinstance(value, list):
        return [(line, name, f"expected a list of mappings, got {describe(value)}")]
    found: list[Found] = []
    for i, item in enumerate(value):
        item_line = item.line if isinstance(item, LineDict) else line
        found.extend(_check_mapping(item, f.sub, tax, f"{name}[{i}].", item_line))
    return found


def _check_decisions(value: object, tax: Taxonomy, name: str, line: int) -> list[Found]:
    if not isinstance(value, list):
        return [
            (line, name, f"expected a list of {{id, learned, why}} entries, got {describe(value)}")
        ]
    found: list[Found] = []
    seen: dict[str, int] = {}
    for i, item in enumerate(value):
        item_line = item.line if isinstance(item, LineDict) else line
        found.extend(_check_mapping(item, DECISION_FIELDS, tax, f"{name}[{i}].", item_line))
        did = item.get("id") if isinstance(item, dict) else None
        if not isinstance(did, str):
            continue
        if did in seen:
            message = f"decision {did} listed twice (first on line {seen[did]})"
            found.append((item_line, f"{name}[{i}].id", message))
        else:
            seen[did] = item_line
    return found


# ---------------------------------------------------------------- records


def _record_problems(rec: RecordFile, tax: Taxonomy) -> Iterator[Problem]:
    for p in rec.problems:
        yield Problem(rec.rel, p.line, p.field, p.message)
    if rec.problems and rec.data is None:
        return
    fields = PAPER_FIELDS if rec.kind == "paper" else EXCLUSION_FIELDS
    for line, name, message in _check_mapping(rec.data, fields, tax, "", 1):
        yield Problem(rec.rel, line, name, message)
    yield from _semantic_problems(rec)


def _semantic_problems(rec: RecordFile) -> Iterator[Problem]:
    data = rec.data
    if not isinstance(data, dict):
        return
    id_field = rec.id_field
    rid = data.get(id_field)
    if isinstance(rid, str) and rid != rec.stem:
        yield Problem(
            rec.rel,
            rec.line(id_field),
            id_field,
            f"{id_field} {shorten(rid)} differs from the file name {shorten(rec.stem)}",
        )
    if data.get("credit_strict") is True and data.get("credit_unit") == NA:
        yield Problem(
            rec.rel,
            rec.line("credit_strict"),
            "credit_strict",
            f"true needs a credit unit, but credit_unit is {NA}",
        )


# ---------------------------------------------------------------- uniqueness


def normalise_title(title: str) -> str:
    """Title reduced to what a reader sees, for duplicate checks (see ``title_skeleton``)."""
    return title_skeleton(title)


def normalise_url(url: str) -> str:
    """URL without scheme, ``www.``, case of host, query-less trailing slash."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return url.strip()
    host = parts.netloc.lower().removeprefix("www.")
    path = parts.path.rstrip("/")
    query = f"?{parts.query}" if parts.query else ""
    return f"{host}{path}{query}"


def _arxiv_sources(data: dict) -> list[tuple[str, str]]:
    """(field, arXiv id) for every arXiv id a record names, without version."""
    found = []
    if isinstance(data.get("arxiv_id"), str):
        found.append(("arxiv_id", data["arxiv_id"]))
    for name in ("identifier", "url"):
        text = data.get(name)
        if isinstance(text, str) and "arxiv" in text.lower():
            found.extend((name, m.group(1)) for m in _ARXIV_IN_TEXT.finditer(text))
    return found


def arxiv_ids_of(data: dict) -> set[str]:
    """Every arXiv id a record names (id field, identifier or URL), without version."""
    return {aid for _, aid in _arxiv_sources(data)}


def _identities(rec: RecordFile) -> Iterator[tuple[str, str, str]]:
    """(field, kind of identity, normalised value) for duplicate checks."""
    data = rec.data
    if not isinstance(data, dict):
        return
    id_field = rec.id_field
    if isinstance(data.get(id_field), str):
        yield id_field, "key", data[id_field]
    seen = set()
    for field_name, aid in _arxiv_sources(data):
        if aid not in seen:
            seen.add(aid)
            yield field_name, "arXiv id", aid
    if isinstance(data.get("url"), str):
        yield "url", "URL", normalise_url(data["url"])
    if isinstance(data.get("title"), str) and data["title"].strip():
        yield "title", "title", normalise_title(data["title"])


def _duplicate_problems(
    records: list[RecordFile], identities: dict[int, list[tuple[str, str, str]]]
) -> Iterator[Problem]:
    first: dict[tuple[str, str], tuple[RecordFile, str]] = {}
    for rec in records:
        for field_name, what, value in identities[id(rec)]:
            slot = (what, value)
            if slot not in first:
                first[slot] = (rec, field_name)
                continue
            other, other_field = first[slot]
            if other is rec:
                continue
            where = f"{other.rel}:{other.line(other_field)}"
            if other.kind != rec.kind:
                message = f"pooled and excluded at once: same {what} as {where}"
            else:
                message = f"duplicate {what}: same as {where}"
            yield Problem(rec.rel, rec.line(field_name), field_name, message)


# ---------------------------------------------------------------- entry points


def record_text_problems(kind: str, rel: str, text: str, tax: Taxonomy) -> list[Problem]:
    """What ``validate`` would say of one record file's text, ``TODO`` placeholders aside.

    Used before a tool writes a record, so nothing is written that breaks a rule.
    """
    loaded = load_yaml_text(text)
    rec = RecordFile(kind, rel, loaded.data, loaded.problems)
    return sorted(p for p in _record_problems(rec, tax) if not p.message.startswith("unfinished"))


def _readings_problems(records: RecordSet) -> Iterator[Problem]:
    """The first problem of the independent readings (readings/*.yaml), if any."""
    keys = {r.data.get("key") for r in records.papers if isinstance(r.data, dict)}
    try:
        load_readers({k for k in keys if isinstance(k, str)}, records.root)
    except ReadingsError as err:
        yield err.problem


def _benchmark_problems(
    registry: BenchmarkFile, papers: list[RecordFile], tax: Taxonomy
) -> Iterator[Problem]:
    for line, name, message in registry.problems:
        yield Problem(BENCHMARKS_FILE, line, name, message)
    pooled = {r.data.get("key") for r in papers if isinstance(r.data, dict)}
    seen: dict[str, int] = {}
    for i, entry in enumerate(registry.entries):
        prefix = f"benchmarks[{i}]."
        for line, name, message in _check_mapping(entry, BENCHMARK_FIELDS, tax, prefix, entry.line):
            yield Problem(BENCHMARKS_FILE, line, name, message)
        bid = entry.get("id")
        if not isinstance(bid, str):
            continue
        line = entry.line_of("id")
        if bid in seen:
            yield Problem(
                BENCHMARKS_FILE, line, f"{prefix}id", f"{bid!r} listed twice (line {seen[bid]})"
            )
        elif bid in pooled:
            message = f"{bid!r} is a pooled record's key; name the record itself instead"
            yield Problem(BENCHMARKS_FILE, line, f"{prefix}id", message)
        seen.setdefault(bid, line)


def validate_records(records: RecordSet, tax: Taxonomy) -> list[Problem]:
    """All problems in a parsed record set, sorted by file and line."""
    problems = [Problem(f"{name}/", 1, "folder", msg) for name, msg in records.folder_problems]
    problems += [Problem(rel, 1, "file", "record files must end in .yaml") for rel in records.stray]
    identities: dict[int, list[tuple[str, str, str]]] = {}
    everything = records.papers + records.exclusions
    for rec in everything:
        problems.extend(_record_problems(rec, tax))
        identities[id(rec)] = list(_identities(rec))
    registry = read_benchmarks(records.root)
    problems.extend(_benchmark_problems(registry, records.papers, tax))
    problems.extend(_readings_problems(records))
    outside = frozenset(b.id for b in registry.benchmarks)
    problems.extend(Problem(*found) for found in judgement_problems(records.papers, outside))
    problems.extend(Problem(*found) for found in provenance_problems(records.papers, records.root))
    problems.extend(_duplicate_problems(everything, identities))
    return sorted(set(problems))


def validate(root: str | os.PathLike[str] | None = None) -> Report:
    """Validate every record under the data root."""
    records = read_records(root)
    try:
        tax = load_taxonomy(records.root)
    except TaxonomyError as err:
        return Report(list(err.problems), len(records.papers), len(records.exclusions))
    problems = validate_records(records, tax)
    return Report(problems, len(records.papers), len(records.exclusions))
