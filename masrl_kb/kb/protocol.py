"""The survey's search and screening protocol, read from ``protocol.yaml``.

The file is checked like a record: every problem is reported as
``protocol.yaml:line: field: message``, and ids that name a vocabulary
(sources, query families, the screening axes) must exist in ``taxonomy.yaml``
so that the exclusion records a screening round writes validate.
"""

from __future__ import annotations

import datetime as dt
import os
import re
from dataclasses import dataclass

from masrl_kb.kb.paths import find_root
from masrl_kb.kb.taxonomy import Taxonomy, load_taxonomy
from masrl_kb.kb.validate import Problem, describe
from masrl_kb.kb.yamlio import LineDict, load_yaml_file

PROTOCOL_FILE = "protocol.yaml"
RULE_ID = re.compile(r"^I[0-9]+$")
_TOP = (
    "version",
    "survey",
    "sources",
    "query_families",
    "inclusion_rules",
    "screening_stages",
    "exclusion_reasons",
    "deduplication",
    "ranking",
)


class ProtocolError(ValueError):
    """``protocol.yaml`` is malformed; ``problems`` lists every problem found."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


@dataclass(frozen=True)
class Source:
    id: str
    label: str
    automated: bool


@dataclass(frozen=True)
class QueryFamily:
    """One query family: its id (a ``query_family`` value), label and terms."""

    id: str
    label: str
    terms: tuple[str, ...]


@dataclass(frozen=True)
class InclusionRule:
    id: str
    label: str
    rule: str


@dataclass(frozen=True)
class Protocol:
    """The whole protocol, checked against the taxonomy."""

    survey_title: str
    survey_arxiv_id: str
    baseline: dt.date
    sources: tuple[Source, ...]
    families: tuple[QueryFamily, ...]
    inclusion_rules: tuple[InclusionRule, ...]
    stage_axis: str
    reason_axis: str
    title_similarity: float
    family_weight: float

    def family(self, family_id: str) -> QueryFamily:
        for f in self.families:
            if f.id == family_id:
                return f
        raise KeyError(family_id)


class _Checker:
    """Collects problems while reading fields of the loaded mapping."""

    def __init__(self, tax: Taxonomy) -> None:
        self.tax = tax
        self.problems: list[Problem] = []

    def add(self, line: int, name: str, message: str) -> None:
        self.problems.append(Problem(PROTOCOL_FILE, line, name, message))

    def mapping(self, data: object, name: str, line: int, fields: tuple[str, ...]) -> LineDict:
        if not isinstance(data, LineDict):
            self.add(line, name, f"expected a mapping, got {describe(data)}")
            return LineDict()
        for key in data:
            if key not in fields:
                where = f"{name}.{key}" if name else str(key)
                self.add(data.line_of(key), where, f"unknown field; allowed: {', '.join(fields)}")
        for key in fields:
            if key not in data and key != "automated":
                self.add(data.line, f"{name}.{key}" if name else key, "missing required field")
        return data

    def text(self, data: LineDict, key: str, name: str) -> str:
        value = data.get(key)
        if key in data and (not isinstance(value, str) or not value.strip()):
            self.add(data.line_of(key), name, f"expected non-empty text, got {describe(value)}")
        return value.strip() if isinstance(value, str) else ""

    def number(self, data: LineDict, key: str, name: str, low: float, high: float) -> float:
        value = data.get(key)
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        if key in data and (not ok or not low <= value <= high):
            self.add(data.line_of(key), name, f"expected a number from {low:g} to {high:g}")
        return float(value) if ok else 0.0

    def axis_id(self, data: LineDict, key: str, name: str, axis: str) -> str:
        value = self.text(data, key, name)
        ids = self.tax[axis].ids
        if value and value not in ids:
            allowed = ", ".join(ids)
            self.add(
                data.line_of(key),
                name,
                f"unknown {axis} {value!r}; allowed (taxonomy.yaml): {allowed}",
            )
        return value

    def listing(self, data: LineDict, key: str) -> list:
        value = data.get(key)
        if key in data and (not isinstance(value, list) or not value):
            self.add(data.line_of(key), key, f"expected a non-empty list, got {describe(value)}")
            return []
        return value if isinstance(value, list) else []

    def unique(self, seen: dict[str, int], value: str, line: int, name: str) -> None:
        if value in seen:
            self.add(line, name, f"{value!r} given twice (first on line {seen[value]})")
        seen.setdefault(value, line)


def _sources(c: _Checker, data: LineDict) -> tuple[Source, ...]:
    out, seen = [], {}
    for i, raw in enumerate(c.listing(data, "sources")):
        name = f"sources[{i}]"
        item = c.mapping(raw, name, data.line_of("sources"), ("id", "automated"))
        sid = c.axis_id(item, "id", f"{name}.id", "exclusion_source")
        automated = item.get("automated", False)
        if not isinstance(automated, bool):
            c.add(item.line_of("automated"), f"{name}.automated", "expected true or false")
        c.unique(seen, sid, item.line, f"{name}.id")
        if sid in c.tax["exclusion_source"].ids:
            out.append(Source(sid, c.tax["exclusion_source"].label_of(sid), automated is True))
    return tuple(out)


def _families(c: _Checker, data: LineDict) -> tuple[QueryFamily, ...]:
    out, seen = [], {}
    for i, raw in enumerate(c.listing(data, "query_families")):
        name = f"query_families[{i}]"
        item = c.mapping(raw, name, data.line_of("query_families"), ("id", "label", "terms"))
        fid = c.axis_id(item, "id", f"{name}.id", "query_family")
        label = c.text(item, "label", f"{name}.label")
        terms = item.get("terms")
        good = (
            isinstance(terms, list)
            and terms
            and all(isinstance(t, str) and t.strip() and '"' not in t for t in terms)
        )
        if "terms" in item and not good:
            c.add(item.line_of("terms"), f"{name}.terms", "expected a list of terms without '\"'")
        c.unique(seen, fid, item.line, f"{name}.id")
        out.append(QueryFamily(fid, label, tuple(t.strip() for t in terms) if good else ()))
    return tuple(out)


def _rules(c: _Checker, data: LineDict) -> tuple[InclusionRule, ...]:
    out, seen = [], {}
    for i, raw in enumerate(c.listing(data, "inclusion_rules")):
        name = f"inclusion_rules[{i}]"
        item = c.mapping(raw, name, data.line_of("inclusion_rules"), ("id", "label", "rule"))
        rid = c.text(item, "id", f"{name}.id")
        if rid and not RULE_ID.match(rid):
            c.add(item.line_of("id"), f"{name}.id", f"{rid!r} does not match {RULE_ID.pattern}")
        c.unique(seen, rid, item.line, f"{name}.id")
        label, rule = c.text(item, "label", f"{name}.label"), c.text(item, "rule", f"{name}.rule")
        out.append(InclusionRule(rid, label, rule))
    return tuple(out)


def _axis_name(c: _Checker, data: LineDict, key: str, wanted: str) -> str:
    value = data.get(key)
    if key in data and value != wanted:
        c.add(data.line_of(key), key, f"must name the taxonomy axis {wanted!r}, got {value!r}")
    return wanted


def check_protocol(data: object, tax: Taxonomy) -> tuple[Protocol | None, list[Problem]]:
    """The protocol and every problem found in the loaded YAML ``data``."""
    c = _Checker(tax)
    top = c.mapping(data, "", 1, _TOP)
    if top.get("version", 1) != 1:
        c.add(top.line_of("version"), "version", "only version 1 is known")
    survey = c.mapping(
        top.get("survey"), "survey", top.line_of("survey"), ("title", "arxiv_id", "baseline")
    )
    title = c.text(survey, "title", "survey.title")
    arxiv_id = c.text(survey, "arxiv_id", "survey.arxiv_id")
    baseline = survey.get("baseline")
    if "baseline" in survey and not isinstance(baseline, dt.date):
        c.add(survey.line_of("baseline"), "survey.baseline", "expected a date YYYY-MM-DD")
    dedup = c.mapping(
        top.get("deduplication"),
        "deduplication",
        top.line_of("deduplication"),
        ("title_similarity",),
    )
    ranking = c.mapping(top.get("ranking"), "ranking", top.line_of("ranking"), ("family_weight",))
    protocol = Protocol(
        survey_title=title,
        survey_arxiv_id=arxiv_id,
        baseline=baseline if isinstance(baseline, dt.date) else dt.date.min,
        sources=_sources(c, top),
        families=_families(c, top),
        inclusion_rules=_rules(c, top),
        stage_axis=_axis_name(c, top, "screening_stages", "exclusion_stage"),
        reason_axis=_axis_name(c, top, "exclusion_reasons", "exclusion_reason"),
        title_similarity=c.number(
            dedup, "title_similarity", "deduplication.title_similarity", 50, 100
        ),
        family_weight=c.number(ranking, "family_weight", "ranking.family_weight", 0, 1),
    )
    return (None if c.problems else protocol), c.problems


def load_protocol(root: str | os.PathLike[str] | None = None) -> Protocol:
    """Read and check ``protocol.yaml``; raise :class:`ProtocolError` listing every problem."""
    base = find_root(root)
    path = base / PROTOCOL_FILE
    if not path.is_file():
        raise ProtocolError([Problem(PROTOCOL_FILE, 1, "file", f"no {PROTOCOL_FILE} in {base}")])
    loaded = load_yaml_file(path)
    if loaded.problems:
        raise ProtocolError(
            [Problem(PROTOCOL_FILE, p.line, p.field, p.message) for p in loaded.problems]
        )
    protocol, problems = check_protocol(loaded.data, load_taxonomy(base))
    if problems:
        raise ProtocolError(problems)
    assert protocol is not None
    return protocol
