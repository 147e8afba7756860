"""``validate``: every record checked against its model, then the rules across records
(:mod:`.crossrules`, :mod:`.provenance`); every problem is reported, not the first.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from masrl_kb.kb import crossrules
from masrl_kb.kb.benchmarks import read_benchmarks
from masrl_kb.kb.model.base import context, validate_mapping
from masrl_kb.kb.model.exclusion import Exclusion
from masrl_kb.kb.model.paper import Paper
from masrl_kb.kb.paths import Root
from masrl_kb.kb.problem import Problem, Report
from masrl_kb.kb.provenance import provenance_problems
from masrl_kb.kb.records import RecordFile, RecordSet, read_records
from masrl_kb.kb.taxonomy import Taxonomy, TaxonomyError, load_taxonomy
from masrl_kb.kb.text import shorten
from masrl_kb.kb.yamlio import load_yaml_text

MODELS: dict[str, type[Paper] | type[Exclusion]] = {"paper": Paper, "exclusion": Exclusion}


def _file_name(rec: RecordFile) -> Iterator[Problem]:
    """A record's key (or exclusion id) equals its file name."""
    rid = rec.data.get(rec.id_field) if isinstance(rec.data, dict) else None
    if isinstance(rid, str) and rid != rec.stem:
        message = f"{rec.id_field} {shorten(rid)} differs from the file name {shorten(rec.stem)}"
        yield Problem(rec.rel, rec.line(rec.id_field), rec.id_field, message)


def check_record(
    rec: RecordFile, ctx: Mapping[str, object]
) -> tuple[Paper | Exclusion | None, list[Problem]]:
    """One record file as its typed model (None when invalid) and all its own problems."""
    problems = [Problem(rec.rel, p.line, p.field, p.message) for p in rec.problems]
    if rec.problems and rec.data is None:
        return None, problems
    record, found = validate_mapping(MODELS[rec.kind], rec.data, rec.rel, ctx, partial=True)
    return record, problems + found + list(_file_name(rec))


def record_text_problems(kind: str, rel: str, text: str, tax: Taxonomy) -> list[Problem]:
    """What ``validate`` would say of one record file's text, ``TODO`` placeholders aside
    (tools check a record before writing it)."""
    loaded = load_yaml_text(text)
    rec = RecordFile(kind, rel, loaded.data, loaded.problems)
    found = check_record(rec, context(tax))[1]
    return sorted(p for p in found if not p.message.startswith("unfinished"))


def validate_records(records: RecordSet, tax: Taxonomy) -> list[Problem]:
    """All problems in a parsed record set, sorted by file and line."""
    problems = [Problem(f"{name}/", 1, "folder", msg) for name, msg in records.folder_problems]
    problems += [Problem(rel, 1, "file", "record files must end in .yaml") for rel in records.stray]
    ctx = context(tax)
    papers: list[tuple[RecordFile, Paper]] = []
    for rec in records.papers + records.exclusions:
        record, found = check_record(rec, ctx)
        problems += found
        if isinstance(record, Paper):
            papers.append((rec, record))
    registry = read_benchmarks(records.root)
    problems += crossrules.registry_problems(registry, records.papers, ctx)
    problems += crossrules.readings_problems(records)
    problems += crossrules.unknown_benchmark_problems(papers, registry)
    problems += provenance_problems(papers, records.root)
    problems += crossrules.duplicate_problems(records.papers + records.exclusions)
    problems += crossrules.baseline_problems(papers, records.root)
    return sorted(set(problems))


def validate(root: Root = None) -> Report:
    """Validate every record under the data root."""
    records = read_records(root)
    try:
        problems = validate_records(records, load_taxonomy(records.root))
    except TaxonomyError as err:
        problems = list(err.problems)
    return Report(problems, len(records.papers), len(records.exclusions))
