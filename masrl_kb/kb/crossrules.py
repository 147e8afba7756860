"""Rules across records, one function per rule: duplicates (key, arXiv id, URL, look-alike
title) across papers and exclusions, ``evaluated_on`` naming a real benchmark,
``benchmarks.yaml`` entries, the independent readings naming pooled papers, and no paper
``added`` before the survey's cut-off."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from urllib.parse import urlsplit

from masrl_kb.kb.benchmarks import BENCHMARKS_FILE, BenchmarkFile
from masrl_kb.kb.model.base import field_name, line_at, validate_mapping
from masrl_kb.kb.model.paper import BENCHMARK_CATEGORY, BenchmarkEntry, Paper
from masrl_kb.kb.problem import Problem
from masrl_kb.kb.readings import KB_READER, ReadingsError, load_readers
from masrl_kb.kb.records import RecordFile, RecordSet
from masrl_kb.kb.text import capped_list, title_skeleton
from masrl_kb.kb.yamlio import LineDict, load_yaml_file

Checked = Sequence[tuple[RecordFile, Paper]]  # the papers whose own fields are valid
_ARXIV_IN_TEXT = re.compile(
    r"(?:arxiv\.org/(?:abs|pdf)/|arxiv:)([0-9]{4}\.[0-9]{4,5}|[a-z-]+(?:\.[A-Z]{2})?/[0-9]{7})",
    re.IGNORECASE,
)


# ---------------------------------------------------------------- duplicates


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


def _arxiv_sources(data: Mapping) -> list[tuple[str, str]]:
    """(field, arXiv id) for every arXiv id a record names, without version."""
    found = []
    if isinstance(data.get("arxiv_id"), str):
        found.append(("arxiv_id", data["arxiv_id"]))
    for name in ("identifier", "url"):
        text = data.get(name)
        if isinstance(text, str) and "arxiv" in text.lower():
            found.extend((name, m.group(1)) for m in _ARXIV_IN_TEXT.finditer(text))
    return found


def arxiv_ids_of(data: Mapping) -> set[str]:
    """Every arXiv id a record names (id field, identifier or URL), without version."""
    return {aid for _, aid in _arxiv_sources(data)}


def identities(rec: RecordFile) -> Iterator[tuple[str, str, str]]:
    """(field, kind of identity, normalised value) of a record, read even when it is invalid."""
    data = rec.data
    if not isinstance(data, dict):
        return
    if isinstance(data.get(rec.id_field), str):
        yield rec.id_field, "key", data[rec.id_field]
    # Each id once, named by the field that first gives it.
    for aid, name in {aid: name for name, aid in reversed(_arxiv_sources(data))}.items():
        yield name, "arXiv id", aid
    if isinstance(data.get("url"), str):
        yield "url", "URL", normalise_url(data["url"])
    if isinstance(data.get("title"), str) and data["title"].strip():
        yield "title", "title", title_skeleton(data["title"])


def duplicate_problems(records: Sequence[RecordFile]) -> Iterator[Problem]:
    """No two records share a key, arXiv id, URL or title; none is pooled and excluded."""
    first: dict[tuple[str, str], tuple[RecordFile, str]] = {}
    for rec in records:
        for name, what, value in identities(rec):
            other, other_field = first.setdefault((what, value), (rec, name))
            if other is rec:
                continue
            where = f"{other.rel}:{other.line(other_field)}"
            if other.kind != rec.kind:
                message = f"pooled and excluded at once: same {what} as {where}"
            else:
                message = f"duplicate {what}: same as {where}"
            yield Problem(rec.rel, rec.line(name), name, message)


# ---------------------------------------------------------------- references


def unknown_benchmark_problems(papers: Checked, registry: BenchmarkFile) -> Iterator[Problem]:
    """``evaluated_on`` names a pooled benchmark record or an id of ``benchmarks.yaml``."""
    known = {p.key for _, p in papers if p.category == BENCHMARK_CATEGORY}
    known |= {b.id for b in registry.benchmarks}
    allowed = capped_list(sorted(known))
    for rec, paper in papers:
        for i, item in enumerate(paper.evaluated_on or ()):
            if item.benchmark not in known:
                message = (
                    f"{item.benchmark!r} is neither a pooled benchmark record nor an id in "
                    f"benchmarks.yaml (add it there with its url); allowed: {allowed}"
                )
                loc = ("evaluated_on", i, "benchmark")
                yield Problem(rec.rel, line_at(rec.data, loc), field_name(loc), message)


def registry_problems(
    registry: BenchmarkFile, papers: Sequence[RecordFile], ctx: Mapping[str, object]
) -> Iterator[Problem]:
    """``benchmarks.yaml``: valid entries, each id once, none a pooled record's key."""
    for line, name, message in registry.problems:
        yield Problem(BENCHMARKS_FILE, line, name, message)
    pooled = {r.data.get("key") for r in papers if isinstance(r.data, dict)}
    seen: dict[str, int] = {}
    for i, entry in enumerate(registry.entries):
        prefix = f"benchmarks[{i}]."
        yield from validate_mapping(BenchmarkEntry, entry, BENCHMARKS_FILE, ctx, prefix)[1]
        if not isinstance(entry, LineDict) or not isinstance(bid := entry.get("id"), str):
            continue
        line = entry.line_of("id")
        if bid in seen:
            message = f"{bid!r} listed twice (line {seen[bid]})"
            yield Problem(BENCHMARKS_FILE, line, f"{prefix}id", message)
        elif bid in pooled:
            message = f"{bid!r} is a pooled record's key; name the record itself instead"
            yield Problem(BENCHMARKS_FILE, line, f"{prefix}id", message)
        seen.setdefault(bid, line)


def _line_of(root: Path, reader: str, field: str = "compare_with") -> int:
    """The line of a top-level field in readings/<reader>.yaml (1 when not found), read
    through the same bounded loader that validated the file."""
    loaded = load_yaml_file(root / "readings" / f"{reader}.yaml")
    return line_at(loaded.data, (field,))


def readings_problems(records: RecordSet) -> Iterator[Problem]:
    """The independent readings (readings/*.yaml) name pooled papers: the first problem."""
    keys = {r.data.get("key") for r in records.papers if isinstance(r.data, dict)}
    try:
        readers = load_readers({k for k in keys if isinstance(k, str)}, records.root)
    except ReadingsError as err:
        yield err.problem
        return
    ids = {r.id for r in readers} | {KB_READER}
    for r in readers:
        if r.compare_with is not None and (r.compare_with not in ids or r.compare_with == r.id):
            allowed = capped_list(sorted(ids - {r.id}))
            message = f"no other reader {r.compare_with!r}; allowed: {allowed}"
            line = _line_of(records.root, r.id)
            yield Problem(f"readings/{r.id}.yaml", line, "compare_with", message)
    views = [r.id for r in readers if r.view == "survey"]
    if len(views) > 1:
        message = f"view: survey is given by {len(views)} readers ({', '.join(views)}); keep one"
        yield Problem(f"readings/{views[1]}.yaml", 1, "view", message)


# ---------------------------------------------------------------- the survey's cut-off


def baseline_problems(papers: Checked, root: Path) -> Iterator[Problem]:
    """A paper ``added`` before the survey's cut-off (``protocol.yaml`` ``survey.baseline``)
    would join the survey's fixed pool after the fact; the rule is off without a protocol
    (a bare data root), and a broken protocol is reported by the whole ``validate``."""
    from masrl_kb.kb.protocol import PROTOCOL_FILE, ProtocolError, protocol_baseline
    from masrl_kb.kb.taxonomy import TaxonomyError

    try:
        baseline = protocol_baseline(root)
    except (ProtocolError, TaxonomyError):
        return
    if baseline is None:
        return
    for rec, paper in papers:
        if paper.added < baseline:
            message = (
                f"{paper.added.isoformat()} is before the survey's cut-off "
                f"{baseline.isoformat()} ({PROTOCOL_FILE} survey.baseline); the survey's pool "
                "is fixed: a paper added since takes the day it entered the pool (today)"
            )
            yield Problem(rec.rel, line_at(rec.data, ("added",)), "added", message)
