"""The record field lists: the one place that says what a record holds.

The validator, the JSON Schema generator and ``masrl-kb add`` all read these
lists together with ``taxonomy.yaml``; nothing else spells out record fields.
"""

from __future__ import annotations

from dataclasses import dataclass

PLACEHOLDER = "TODO"
KEY_PATTERN = r"^[a-z0-9][a-z0-9-]*[a-z0-9]$"
EXCLUSION_ID_PATTERN = r"^E[0-9]{3,}$"
# New-style ids (YYMM.NNNN[N]) or old-style archive/YYMMNNN; no version suffix.
ARXIV_ID_PATTERN = r"^(?:[0-9]{2}(?:0[1-9]|1[0-2])\.[0-9]{4,5}|[a-z-]+(?:\.[A-Z]{2})?/[0-9]{7})$"


@dataclass(frozen=True)
class Field:
    """One field of a record.

    ``kind`` is one of: text, int, bool, date, url, urls, strings, axis,
    arxiv_id, pattern, decisions, citation, object (a mapping of ``sub``
    fields), objects (a list of such mappings) and artifact (a URL, or
    ``{none: DATE}`` saying when it was checked and found missing).
    """

    name: str
    kind: str
    doc: str
    required: bool = True
    axis: str | None = None
    pattern: str | None = None
    sub: tuple[Field, ...] = ()
    multiline: bool = False  # text that may hold line breaks (\n only)


EVIDENCE_FIELDS: tuple[Field, ...] = (
    Field("source", "axis", "What the reading rests on.", axis="evidence_source"),
    Field("where", "text", "Section, figure, table, or file path in the released code."),
    Field("url", "url", "Link to the paper, page or code file."),
    Field("note", "text", "Why the reading holds, in the curators' own words.", False),
    Field("provisional", "text", "Why no primary source is cited yet (shown as a badge).", False),
)

SOURCE_FIELDS: tuple[Field, ...] = (
    Field("field", "text", "The record field this source settles (authors, arxiv_id...)."),
    Field("url", "url", "Where the fact was looked up."),
    Field("provisional", "text", "Why no primary source is cited yet (shown as a badge).", False),
)

ARTIFACT_FIELDS: tuple[Field, ...] = (
    Field("code", "artifact", "Released code: a URL, or {none: DATE} when checked and absent."),
    Field("weights", "artifact", "Released model weights: a URL or {none: DATE}."),
    Field("data", "artifact", "Released training or evaluation data: a URL or {none: DATE}."),
    Field("traces", "artifact", "Released agent rollouts or traces: a URL or {none: DATE}."),
    Field("license", "text", "The code's licence as its repository states it.", False),
    Field("source", "url", "Where the links were found (the paper, project page, README)."),
    Field("provisional", "text", "Why no primary source is cited yet (shown as a badge).", False),
)

RESULT_FIELDS: tuple[Field, ...] = (
    Field("metric", "text", "The metric as the paper names it (success rate, win rate...)."),
    Field("value", "text", "The reported value with its unit, as printed (e.g. '71.3%')."),
    Field("setting", "text", "What produced it: the trained model, team size, split."),
    Field("where", "text", "Table or figure of the source that prints the value."),
    Field("source", "url", "The paper or repository page the value was read from."),
)

EVALUATION_FIELDS: tuple[Field, ...] = (
    Field(
        "benchmark",
        "pattern",
        "A pooled benchmark record's key, or an id from benchmarks.yaml (outside the pool).",
        pattern=KEY_PATTERN,
    ),
    Field("metric", "text", "The metric reported (accuracy, pass@1, success rate...)."),
    Field("multi_agent_native", "bool", "The setting scores the team, not only an answer."),
    Field("note", "text", "What the setting was, when it matters (a split, a mode).", False),
    Field(
        "results",
        "objects",
        "Values the paper reports on this benchmark, each with its source.",
        False,
        sub=RESULT_FIELDS,
    ),
)

NO_EVALUATION_FIELDS: tuple[Field, ...] = (
    Field("reason", "text", "Why the work reports no benchmark, in the curators' words."),
    Field("url", "url", "The primary page that shows it."),
    Field("provisional", "text", "Why no primary source is cited yet (shown as a badge).", False),
)

BENCHMARK_FIELDS: tuple[Field, ...] = (
    Field("id", "pattern", "Short unique id that evaluated_on entries name.", pattern=KEY_PATTERN),
    Field("name", "text", "The benchmark's name as its authors write it."),
    Field("url", "url", "The benchmark's paper or home page."),
    Field("evaluates", "text", "What it scores, in the curators' words."),
    Field("multi_agent_native", "bool", "It scores a team, its messages or orchestration."),
)

PAPER_FIELDS: tuple[Field, ...] = (
    Field("key", "pattern", "Short unique id; equals the file name.", pattern=KEY_PATTERN),
    Field("title", "text", "Title exactly as published."),
    Field("authors", "strings", "Authors as 'Family, Given', in publication order."),
    Field(
        "authors_truncated",
        "bool",
        "True only for team-authored works (needs authors_note).",
        False,
    ),
    Field(
        "authors_note", "text", "Why the author list is a team name (team-authored works).", False
    ),
    Field("year", "int", "Year of publication."),
    Field("venue", "text", "Where it appeared (arXiv, NeurIPS 2025, Tech Blog...)."),
    Field("arxiv_id", "arxiv_id", "arXiv identifier without version, e.g. '2508.04652'.", False),
    Field("url", "url", "Canonical http(s) link."),
    Field("extra_urls", "urls", "Further http(s) links.", False),
    Field(
        "own_sites",
        "urls",
        "The authors' or vendor's own pages beyond artifacts.code (project page, lab account);"
        " primary sources for this record.",
        False,
    ),
    Field("affiliation", "text", "Lead affiliation ('unknown' when not stated)."),
    Field("category", "axis", "Kind of work.", axis="category"),
    Field("is_rl", "axis", "Whether RL is used.", axis="is_rl"),
    Field("reward_type", "axis", "Reward tag (its family is derived).", axis="reward_type"),
    Field("credit_unit", "axis", "Finest credit unit, broad reading.", axis="credit_unit"),
    Field("topology", "axis", "Team topology.", axis="topology"),
    Field("scenario", "axis", "Task domain.", axis="scenario"),
    Field("pool_role", "axis", "Role in the survey's argument.", axis="pool_role"),
    Field("verified", "axis", "How far the metadata was checked.", axis="verified"),
    Field("credit_strict", "bool", "Explicit credit estimator at credit_unit (strict reading)."),
    Field(
        "credit_mechanism",
        "axis",
        "Explicit estimator or reward shaping (required when credit_strict is true).",
        False,
        axis="credit_mechanism",
    ),
    Field(
        "credit_evidence",
        "object",
        "What the strict reading rests on (required when credit_strict is true).",
        False,
        sub=EVIDENCE_FIELDS,
    ),
    Field("decisions", "decisions", "Orchestration decisions touched: {id, learned, why}."),
    Field("added", "date", "Day the record entered the pool (YYYY-MM-DD, unquoted)."),
    Field("summary", "text", "One or two sentences in the curators' own words.", multiline=True),
    Field("notes", "text", "Curators' remarks and recorded doubts.", False, multiline=True),
    Field("citation", "citation", "What BibTeX export needs."),
    Field(
        "sources",
        "objects",
        "Where corrected or added facts were looked up.",
        False,
        sub=SOURCE_FIELDS,
    ),
    Field(
        "artifacts",
        "object",
        "What the work released: code, weights, data, traces.",
        sub=ARTIFACT_FIELDS,
    ),
    Field(
        "evaluated_on",
        "objects",
        "Benchmarks the work reports results on.",
        False,
        sub=EVALUATION_FIELDS,
    ),
    Field(
        "evaluated_on_none",
        "object",
        "Why an RL method or framework lists no benchmark: {reason, url}.",
        False,
        sub=NO_EVALUATION_FIELDS,
    ),
    Field("evaluation_source", "url", "Where the evaluations were read (paper, tables).", False),
    Field(
        "evaluation_provisional",
        "text",
        "Why evaluation_source is not yet a primary page (shown as a badge).",
        False,
    ),
    Field("evaluates", "text", "Benchmarks: what they score, in the curators' words.", False),
    Field(
        "multi_agent_native",
        "bool",
        "Benchmarks: whether they score a team, its messages or its orchestration.",
        False,
    ),
)

DECISION_FIELDS: tuple[Field, ...] = (
    Field("id", "axis", "Decision id, O1..O5.", axis="decision"),
    Field("learned", "bool", "True when an RL or post-training update acts on it."),
    Field("why", "text", "One line: what in the work makes this decision."),
    Field(
        "mechanism",
        "axis",
        "How the RL update reaches it (learned only).",
        False,
        axis="decision_mechanism",
    ),
    Field(
        "evidence",
        "object",
        "What the coding rests on (required when learned).",
        False,
        sub=EVIDENCE_FIELDS,
    ),
)

CITATION_FIELDS: tuple[Field, ...] = (
    Field("bibtex_key", "pattern", "The survey's BibTeX key.", pattern=r"^[A-Za-z0-9_:.+-]+$"),
    Field("entry_type", "axis", "BibTeX entry type.", axis="entry_type"),
    Field("journal", "text", "Journal field (articles).", False),
    Field("booktitle", "text", "Proceedings title (inproceedings).", False),
    Field("volume", "text", "Volume.", False),
    Field("number", "text", "Issue number.", False),
    Field("pages", "text", "Page range.", False),
    Field("publisher", "text", "Publisher.", False),
)

EXCLUSION_FIELDS: tuple[Field, ...] = (
    Field("id", "pattern", "Log id E001...; equals the file name.", pattern=EXCLUSION_ID_PATTERN),
    Field("title", "text", "Title or label of the screened record."),
    Field("identifier", "text", "arXiv:..., OpenReview:..., ACL:... or a label for docs."),
    Field("url", "url", "http(s) link to the screened record."),
    Field("source", "axis", "Where it was found.", axis="exclusion_source"),
    Field("query_family", "axis", "Query family that surfaced it.", axis="query_family"),
    Field("screened", "date", "Screening date (YYYY-MM-DD, unquoted)."),
    Field("stage", "axis", "Screening stage that excluded it.", axis="exclusion_stage"),
    Field("reason", "axis", "Exclusion reason code.", axis="exclusion_reason"),
    Field("note", "text", "Why, in the curators' own words.", multiline=True),
)

# The survey's tags: every required axis field (credit_mechanism qualifies a reading, it is no tag).
TAG_FIELDS: tuple[str, ...] = tuple(f.name for f in PAPER_FIELDS if f.kind == "axis" and f.required)
