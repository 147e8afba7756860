"""The paper record (``papers/<key>.yaml``): its fields, their docs and its own rules (the
``_rules`` validators, run once every field is well formed). A field is added here, once:
the validator, the editor schema, the field lists and ``masrl-kb add`` read this model.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from typing import Annotated, Self

from pydantic import ValidationInfo, model_validator

from masrl_kb.kb.model.base import Finding, KbModel, Maybe, repeated, report
from masrl_kb.kb.model.base import field as doc  # Source.field would shadow field()
from masrl_kb.kb.model.base import optional as opt
from masrl_kb.kb.model.types import (
    BIBTEX_KEY_PATTERN,
    Artifact,
    ArxivId,
    Axis,
    Bool,
    Check,
    Date,
    Key,
    LongText,
    Names,
    Reason,
    Summary,
    Text,
    Url,
    Urls,
    Year,
    allowed_values,
    pattern,
)
from masrl_kb.kb.rules import NA
from masrl_kb.kb.text import shorten, suggest

EVALUATED_CATEGORIES = ("rl_method", "framework")
BENCHMARK_CATEGORY = "benchmark"
BENCHMARK_RECORD_FIELDS = ("evaluates", "multi_agent_native")
PROVISIONAL = "Why no primary source is cited yet (shown as a badge)."


class Evidence(KbModel):
    """What the coding rests on."""

    source: Annotated[str, Axis("evidence_source")] = doc("What the reading rests on.")
    where: Text = doc("Section, figure, table, or file path in the released code.")
    url: Url = doc("Link to the paper, page or code file.")
    note: Maybe[Text] = opt("Why the reading holds, in the curators' own words.")
    provisional: Maybe[Text] = opt(PROVISIONAL)


class Source(KbModel):
    """Where corrected or added facts were looked up."""

    field: Text = doc("The record field this source settles (authors, arxiv_id...).")
    url: Url = doc("Where the fact was looked up.")
    provisional: Maybe[Text] = opt(PROVISIONAL)

    @model_validator(mode="after")
    def _rules(self) -> Self:
        if self.field not in Paper.model_fields:
            allowed = suggest(self.field, sorted(Paper.model_fields), "allowed")
            message = f"unknown record field {shorten(self.field)}{allowed}"
            report([Finding(("field",), message)])
        return self


class Artifacts(KbModel):
    """What the work released: code, weights, data, traces."""

    code: Artifact = doc("Released code: a URL, or {none: DATE} when checked and absent.")
    weights: Artifact = doc("Released model weights: a URL or {none: DATE}.")
    data: Artifact = doc("Released training or evaluation data: a URL or {none: DATE}.")
    traces: Artifact = doc("Released agent rollouts or traces: a URL or {none: DATE}.")
    license: Maybe[Text] = opt("The code's licence as its repository states it.")
    source: Url = doc("Where the links were found (the paper, project page, README).")
    provisional: Maybe[Text] = opt(PROVISIONAL)

    def links(self) -> dict[str, str]:
        """Kind -> URL of the released artifacts (those not checked-and-absent)."""
        return {k: v for k in ARTIFACT_KINDS if isinstance(v := getattr(self, k), str)}


# The kinds of release: the fields of Artifacts typed as an artifact (a URL or {none: DATE}).
ARTIFACT_KINDS = tuple(
    name
    for name, info in Artifacts.model_fields.items()
    if any(isinstance(m, Check) and m.kind == "artifact" for m in info.metadata)
)


class Result(KbModel):
    """One value the paper reports on a benchmark."""

    metric: Text = doc("The metric as the paper names it (success rate, win rate...).")
    value: Text = doc("The reported value with its unit, as printed (e.g. '71.3%').")
    setting: Text = doc("What produced it: the trained model, team size, split.")
    where: Text = doc("Table or figure of the source that prints the value.")
    source: Url = doc("The paper or repository page the value was read from.")


class Evaluation(KbModel):
    """One benchmark the work reports results on."""

    benchmark: Key = doc(
        "A pooled benchmark record's key, or an id from benchmarks.yaml (outside the pool)."
    )
    metric: Text = doc("The metric reported (accuracy, pass@1, success rate...).")
    multi_agent_native: Bool = doc("The setting scores the team, not only an answer.")
    note: Maybe[Text] = opt("What the setting was, when it matters (a split, a mode).")
    results: Maybe[list[Result]] = opt(
        "Values the paper reports on this benchmark, each with its source."
    )


class BenchmarkEntry(KbModel):
    """A benchmark outside the pool (an entry of benchmarks.yaml)."""

    id: Key = doc("Short unique id that evaluated_on entries name.")
    name: Text = doc("The benchmark's name as its authors write it.")
    url: Url = doc("The benchmark's paper or home page.")
    evaluates: Text = doc("What it scores, in the curators' words.")
    multi_agent_native: Bool = doc("It scores a team, its messages or orchestration.")


class NoEvaluation(KbModel):
    """Why an RL method or framework lists no benchmark."""

    reason: Text = doc("Why the work reports no benchmark, in the curators' words.")
    url: Url = doc("The primary page that shows it.")
    provisional: Maybe[Text] = opt(PROVISIONAL)


class Decision(KbModel):
    """One orchestration decision the work touches."""

    id: Annotated[str, Axis("decision")] = doc("An id of the decision axis.")
    learned: Bool = doc("True when an RL or post-training update acts on it.")
    why: Reason = doc("One line: what in the work makes this decision.")
    mechanism: Maybe[Annotated[str, Axis("decision_mechanism")]] = opt(
        "How the RL update reaches it (learned only)."
    )
    evidence: Maybe[Evidence] = opt("What the coding rests on (required when learned).")

    @model_validator(mode="after")
    def _rules(self, info: ValidationInfo) -> Self:
        found = []
        if self.learned and self.mechanism is None:
            allowed = allowed_values(info, "decision_mechanism")
            message = f"a learned decision states its mechanism; allowed: {allowed}"
            found.append(Finding(("mechanism",), message, at=("learned",)))
        if self.learned and self.evidence is None:
            message = "a learned decision carries evidence: {source, where, url}"
            found.append(Finding(("evidence",), message, at=("learned",)))
        if not self.learned and self.mechanism is not None:
            message = (
                "a mechanism belongs only to a learned decision; remove it or set learned: true"
            )
            found.append(Finding(("mechanism",), message))
        report(found)
        return self


class Citation(KbModel):
    """What BibTeX export needs."""

    bibtex_key: Annotated[str, pattern(BIBTEX_KEY_PATTERN)] = doc("The survey's BibTeX key.")
    entry_type: Annotated[str, Axis("entry_type")] = doc("BibTeX entry type.")
    journal: Maybe[Text] = opt("Journal field (articles).")
    booktitle: Maybe[Text] = opt("Proceedings title (inproceedings).")
    volume: Maybe[Text] = opt("Volume.")
    number: Maybe[Text] = opt("Issue number.")
    pages: Maybe[Text] = opt("Page range.")
    publisher: Maybe[Text] = opt("Publisher.")


class Paper(KbModel):
    """One pooled paper: papers/<key>.yaml."""

    key: Key = doc("Short unique id; equals the file name.")
    title: Text = doc("Title exactly as published.")
    authors: Names = doc("Authors as 'Family, Given', in publication order.")
    authors_truncated: Maybe[Bool] = opt("True only for team-authored works (needs authors_note).")
    authors_note: Maybe[Text] = opt("Why the author list is a team name (team-authored works).")
    year: Year = doc("Year of publication.")
    venue: Text = doc("Where it appeared (arXiv, NeurIPS 2025, Tech Blog...).")
    arxiv_id: Maybe[ArxivId] = opt("arXiv identifier without version, e.g. '2508.04652'.")
    url: Url = doc("Canonical http(s) link.")
    extra_urls: Maybe[Urls] = opt("Further http(s) links.")
    own_sites: Maybe[Urls] = opt(
        "The authors' or vendor's own pages beyond artifacts.code (project page, lab account);"
        " primary sources for this record."
    )
    affiliation: Text = doc("Lead affiliation ('unknown' when not stated).")
    category: Annotated[str, Axis("category")] = doc("Kind of work.")
    is_rl: Annotated[str, Axis("is_rl")] = doc("Whether RL is used.")
    reward_type: Annotated[str, Axis("reward_type")] = doc("Reward tag (its family is derived).")
    credit_unit: Annotated[str, Axis("credit_unit")] = doc("Finest credit unit, broad reading.")
    topology: Annotated[str, Axis("topology")] = doc("Team topology.")
    scenario: Annotated[str, Axis("scenario")] = doc("Task domain.")
    pool_role: Annotated[str, Axis("pool_role")] = doc("Role in the survey's argument.")
    verified: Annotated[str, Axis("verified")] = doc("How far the metadata was checked.")
    credit_strict: Bool = doc("Estimator or reward shaping at credit_unit (strict reading).")
    credit_mechanism: Maybe[Annotated[str, Axis("credit_mechanism")]] = opt(
        "Explicit estimator or reward shaping (required when credit_strict is true)."
    )
    credit_evidence: Maybe[Evidence] = opt(
        "What the strict reading rests on (required when credit_strict is true)."
    )
    decisions: list[Decision] = doc("Orchestration decisions touched: {id, learned, why}.")
    added: Date = doc("Day the record entered the pool (YYYY-MM-DD, unquoted).")
    summary: Summary = doc("One or two sentences in the curators' own words.")
    notes: Maybe[LongText] = opt("Curators' remarks and recorded doubts.")
    citation: Citation = doc("What BibTeX export needs.")
    sources: Maybe[list[Source]] = opt("Where corrected or added facts were looked up.")
    artifacts: Artifacts = doc("What the work released: code, weights, data, traces.")
    evaluated_on: Maybe[list[Evaluation]] = opt("Benchmarks the work reports results on.")
    evaluated_on_none: Maybe[NoEvaluation] = opt(
        "Why an RL method or framework lists no benchmark: {reason, url}."
    )
    evaluation_source: Maybe[Url] = opt("Where the evaluations were read (paper, tables).")
    evaluation_provisional: Maybe[Text] = opt(
        "Why evaluation_source is not yet a primary page (shown as a badge)."
    )
    evaluates: Maybe[Text] = opt("Benchmarks: what they score, in the curators' words.")
    multi_agent_native: Maybe[Bool] = opt(
        "Benchmarks: whether they score a team, its messages or its orchestration."
    )

    @model_validator(mode="after")
    def _rules(self, info: ValidationInfo) -> Self:
        report(
            [
                *self._credit(allowed_values(info, "credit_mechanism")),
                *self._authors(),
                *self._decisions(),
                *self._artifacts(),
                *self._evaluations(),
                *self._benchmark_record(),
                *self._added(),
            ]
        )
        return self

    def _added(self) -> Iterator[Finding]:
        today = dt.date.today()
        if self.added > today:
            message = (
                f"{self.added.isoformat()} is later than today ({today.isoformat()}); "
                "added is the day the record entered the pool: set today's date"
            )
            yield Finding(("added",), message)
        published = self._first_month()
        if published is not None and published > (self.added.year, self.added.month):
            year, month = published
            message = (
                f"{self.added.isoformat()} is before the paper appeared ({year}-{month:02d}); "
                "a record enters the pool on or after that: set the day you add it (today)"
            )
            yield Finding(("added",), message)

    def _first_month(self) -> tuple[int, int] | None:
        """The earliest (year, month) the paper can have appeared: its arXiv id's month
        (new-style ids are YYMM.NNNNN), else January of its year."""
        if self.arxiv_id is not None and self.arxiv_id[:4].isdigit() and self.arxiv_id[4] == ".":
            return 2000 + int(self.arxiv_id[:2]), int(self.arxiv_id[2:4])
        return self.year, 1

    def _credit(self, mechanisms: str) -> Iterator[Finding]:
        strict = ("credit_strict",)
        if self.credit_strict and self.credit_unit == NA:
            yield Finding(strict, f"true needs a credit unit, but credit_unit is {NA}")
        if self.credit_strict and self.credit_evidence is None:
            message = "credit_strict: true needs credit_evidence: {source, where, url}"
            yield Finding(("credit_evidence",), message, at=strict)
        if self.credit_strict and self.credit_mechanism is None:
            message = f"credit_strict: true needs credit_mechanism; allowed: {mechanisms}"
            yield Finding(("credit_mechanism",), message, at=strict)
        if not self.credit_strict and self.credit_mechanism is not None:
            message = "a credit mechanism belongs only to credit_strict: true; remove it"
            yield Finding(("credit_mechanism",), message)

    def _authors(self) -> Iterator[Finding]:
        if self.authors_truncated and self.authors_note is None:
            message = "a truncated author list needs authors_note saying why (a team-authored work)"
            yield Finding(("authors_note",), message, at=("authors_truncated",))
        if not self.authors_truncated and self.authors_note is not None:
            message = (
                "authors_note explains a team author list; set authors_truncated: true or drop it"
            )
            yield Finding(("authors_note",), message)

    def _decisions(self) -> Iterator[Finding]:
        return repeated(("decisions",), (d.id for d in self.decisions), "decision ")

    def _artifacts(self) -> Iterator[Finding]:
        """An artifact link never leads back to the paper's own page (two kinds may share
        a URL: one repository may hold a benchmark's code and data)."""
        own = {self.url, self.arxiv_id}
        for kind, url in self.artifacts.links().items():
            if url in own:
                message = "the paper's own page is not a released artifact; give the release's URL"
                yield Finding(("artifacts", kind), message)

    def _evaluations(self) -> Iterator[Finding]:
        if self.category in EVALUATED_CATEGORIES and self.evaluated_on is None:
            message = "RL methods and frameworks list evaluated_on (an empty list when none)"
            yield Finding(("evaluated_on",), message, at=("category",))
        if self.evaluated_on and self.evaluation_source is None:
            message = "evaluated_on needs evaluation_source: the URL the results were read from"
            yield Finding(("evaluation_source",), message, at=("evaluated_on",))
        if self.evaluation_provisional is not None and self.evaluation_source is None:
            message = (
                "evaluation_provisional says why evaluation_source is not primary; "
                "give evaluation_source (the URL the results were read from) or remove it"
            )
            yield Finding(("evaluation_provisional",), message)
        benchmarks = (e.benchmark for e in self.evaluated_on or ())
        yield from repeated(("evaluated_on",), benchmarks, "benchmark ", "benchmark")

    def _benchmark_record(self) -> Iterator[Finding]:
        """A benchmark record says what it scores and whether that is the team."""
        is_benchmark = self.category == BENCHMARK_CATEGORY
        for name in BENCHMARK_RECORD_FIELDS:
            given = getattr(self, name) is not None
            if is_benchmark and not given:
                doc = Paper.model_fields[name].description
                message = f"a benchmark record states {name} ({doc})"
                yield Finding((name,), message, at=("category",))
            if given and not is_benchmark:
                message = f"{name} describes benchmark records only (category is not benchmark)"
                yield Finding((name,), message)
