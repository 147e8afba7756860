"""Rules that tie a record's judgements to their evidence.

The field checks in :mod:`masrl_kb.kb.validate` say whether each value is well
formed; these rules say whether the record is complete as a reading: a learned
decision names its mechanism and its evidence, a strict credit reading names
what it rests on, a team author list says why, and an evaluation points at a
real benchmark. They only look at values whose shape is already right, so a
malformed field is reported once, by the field check.
"""

from __future__ import annotations

from collections.abc import Iterator

from masrl_kb.kb.fields import PAPER_FIELDS
from masrl_kb.kb.records import RecordFile
from masrl_kb.kb.yamlio import LineDict

Found = tuple[str, int, str, str]  # (path, line, field, message)
EVALUATED_CATEGORIES = ("rl_method", "framework")
BENCHMARK_CATEGORY = "benchmark"
_PAPER_FIELD_NAMES = frozenset(f.name for f in PAPER_FIELDS)
BENCHMARK_RECORD_FIELDS = ("evaluates", "multi_agent_native")
_BENCHMARK_DOCS = {f.name: f.doc for f in PAPER_FIELDS if f.name in BENCHMARK_RECORD_FIELDS}


def _line(data: object, name: str, default: int) -> int:
    if isinstance(data, LineDict):
        return data.line_of(name) or data.line or default
    return default


def _decision_problems(rec: RecordFile) -> Iterator[Found]:
    decisions = rec.data.get("decisions")
    if not isinstance(decisions, list):
        return
    for i, item in enumerate(decisions):
        if not isinstance(item, dict):
            continue
        name = f"decisions[{i}]"
        line = _line(item, "learned", rec.line("decisions"))
        if item.get("learned") is True:
            for needed in ("mechanism", "evidence"):
                if needed not in item:
                    yield rec.rel, line, f"{name}.{needed}", _why_needed(needed)
        elif item.get("learned") is False and "mechanism" in item:
            message = (
                "a mechanism belongs only to a learned decision; remove it or set learned: true"
            )
            yield rec.rel, _line(item, "mechanism", line), f"{name}.mechanism", message


def _why_needed(field: str) -> str:
    if field == "mechanism":
        return "a learned decision states its mechanism; allowed: explicit, implicit"
    return "a learned decision carries evidence: {source, where, url}"


def _credit_problems(rec: RecordFile) -> Iterator[Found]:
    data = rec.data
    strict = data.get("credit_strict")
    if strict is True and "credit_evidence" not in data:
        message = "credit_strict: true needs credit_evidence: {source, where, url}"
        yield rec.rel, rec.line("credit_strict"), "credit_evidence", message
    if strict is True and "credit_mechanism" not in data:
        message = "credit_strict: true needs credit_mechanism; allowed: estimator, shaping"
        yield rec.rel, rec.line("credit_strict"), "credit_mechanism", message
    if strict is False and "credit_mechanism" in data:
        message = "a credit mechanism belongs only to credit_strict: true; remove it"
        yield rec.rel, rec.line("credit_mechanism"), "credit_mechanism", message


def _author_problems(rec: RecordFile) -> Iterator[Found]:
    data = rec.data
    truncated = data.get("authors_truncated") is True
    if truncated and "authors_note" not in data:
        message = "a truncated author list needs authors_note saying why (a team-authored work)"
        yield rec.rel, rec.line("authors_truncated"), "authors_note", message
    if not truncated and "authors_note" in data:
        message = "authors_note explains a team author list; set authors_truncated: true or drop it"
        yield rec.rel, rec.line("authors_note"), "authors_note", message


def _source_problems(rec: RecordFile) -> Iterator[Found]:
    sources = rec.data.get("sources")
    if not isinstance(sources, list):
        return
    for i, item in enumerate(sources):
        field = item.get("field") if isinstance(item, dict) else None
        if isinstance(field, str) and field not in _PAPER_FIELD_NAMES:
            allowed = ", ".join(sorted(_PAPER_FIELD_NAMES))
            message = f"unknown record field {field!r}; allowed: {allowed}"
            yield rec.rel, _line(item, "field", rec.line("sources")), f"sources[{i}].field", message


def _artifact_problems(rec: RecordFile) -> Iterator[Found]:
    """An artifact link must lead somewhere new: not back to the paper's own page.

    One repository may hold a benchmark's code and its data, so two kinds may
    share a URL; the paper's abstract page is never a release of anything.
    """
    artifacts = rec.data.get("artifacts")
    if not isinstance(artifacts, dict):
        return
    own = {u for u in (rec.data.get("url"), rec.data.get("arxiv_id")) if isinstance(u, str)}
    for kind in ("code", "weights", "data", "traces"):
        url = artifacts.get(kind)
        if isinstance(url, str) and url in own:
            message = "the paper's own page is not a released artifact; give the release's URL"
            yield (
                rec.rel,
                _line(artifacts, kind, rec.line("artifacts")),
                f"artifacts.{kind}",
                message,
            )


def _evaluation_problems(rec: RecordFile, benchmarks: frozenset[str]) -> Iterator[Found]:
    data = rec.data
    evaluations = data.get("evaluated_on")
    if data.get("category") in EVALUATED_CATEGORIES and "evaluated_on" not in data:
        message = "RL methods and frameworks list evaluated_on (an empty list when none)"
        yield rec.rel, rec.line("category"), "evaluated_on", message
    if not isinstance(evaluations, list):
        return
    if evaluations and "evaluation_source" not in data:
        message = "evaluated_on needs evaluation_source: the URL the results were read from"
        yield rec.rel, rec.line("evaluated_on"), "evaluation_source", message
    seen: set[str] = set()
    for i, item in enumerate(evaluations):
        if isinstance(item, dict):
            yield from _evaluation_item(rec, i, item, benchmarks, seen)


def _evaluation_item(
    rec: RecordFile, i: int, item: dict, benchmarks: frozenset[str], seen: set[str]
) -> Iterator[Found]:
    name = f"evaluated_on[{i}].benchmark"
    line = _line(item, "benchmark", rec.line("evaluated_on"))
    key = item.get("benchmark")
    if not isinstance(key, str):
        return
    if key not in benchmarks:
        allowed = ", ".join(sorted(benchmarks)) or "none"
        message = (
            f"{key!r} is neither a pooled benchmark record nor an id in benchmarks.yaml "
            f"(add it there with its url); allowed: {allowed}"
        )
        yield rec.rel, line, name, message
    if key in seen:
        yield rec.rel, line, name, f"benchmark {key!r} is listed twice"
    seen.add(key)


def _benchmark_record_problems(rec: RecordFile) -> Iterator[Found]:
    """A benchmark record says what it scores and whether that is the team."""
    data = rec.data
    is_benchmark = data.get("category") == BENCHMARK_CATEGORY
    for field in BENCHMARK_RECORD_FIELDS:
        if is_benchmark and field not in data:
            message = f"a benchmark record states {field} ({_BENCHMARK_DOCS[field]})"
            yield rec.rel, rec.line("category"), field, message
        if not is_benchmark and field in data and data.get("category") is not None:
            message = f"{field} describes benchmark records only (category is not benchmark)"
            yield rec.rel, rec.line(field), field, message


def benchmark_keys(papers: list[RecordFile]) -> frozenset[str]:
    """Keys of the pooled benchmark records (what ``evaluated_on`` may name)."""
    return frozenset(
        rec.data["key"]
        for rec in papers
        if isinstance(rec.data, dict)
        and rec.data.get("category") == BENCHMARK_CATEGORY
        and isinstance(rec.data.get("key"), str)
    )


def judgement_problems(
    papers: list[RecordFile], outside: frozenset[str] = frozenset()
) -> Iterator[Found]:
    """Every evidence and completeness problem in the paper records.

    ``outside`` holds the ids of ``benchmarks.yaml`` that ``evaluated_on`` may
    name beside the pooled benchmark records.
    """
    benchmarks = benchmark_keys(papers) | outside
    for rec in papers:
        if not isinstance(rec.data, dict):
            continue
        yield from _decision_problems(rec)
        yield from _credit_problems(rec)
        yield from _author_problems(rec)
        yield from _source_problems(rec)
        yield from _artifact_problems(rec)
        yield from _evaluation_problems(rec, benchmarks)
        yield from _benchmark_record_problems(rec)
