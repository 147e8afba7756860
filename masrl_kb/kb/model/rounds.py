"""``screening/<round-id>/round.yaml``: one screening round, as a model that is the parser.
It arrives in pull requests, so every value the site shows is checked (the id is the
context's ``folder``, counts are bounded, records are paths under the record folders)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Annotated, Any, Literal, Self

from pydantic import StringConstraints, model_validator

from masrl_kb.kb.model.base import Finding, KbModel, Maybe, field, optional, report
from masrl_kb.kb.model.types import ARXIV_ID_PATTERN, Check, Date, check_int, pattern
from masrl_kb.kb.problem import Problem

ROUND_ID = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}_[0-9]{4}-[0-9]{2}-[0-9]{2}$")
MAX_COUNT = 1_000_000  # no real round comes near; a bigger number is a typo or tampering
# A screening candidate's id: a bare arXiv id (as rounds always had), a DOI, an
# OpenReview forum id, or a hash of the normalised title when the source gives none.
DOI_PATTERN = r"10\.[0-9]{4,9}/[\x21-\x7e]{1,200}"
OPENREVIEW_PATTERN = r"[A-Za-z0-9_-]{4,40}"
CANDIDATE_ID = (
    rf"^(?:{ARXIV_ID_PATTERN[1:-1]}|doi:{DOI_PATTERN}|openreview:{OPENREVIEW_PATTERN}"
    r"|title:[0-9a-f]{16})$"
)
# Fields reported whole (``decided: 2611.00001.record: ...``): what a reader fixes is the entry.
WHOLE = ("window", "families", "capped", "decided")
# (the round's count, the batch count it sums)
BATCH_TOTALS = (
    ("retrieved", "identified"),
    ("duplicates_removed", "duplicates_removed"),
    ("outside_window", "outside_window"),
)


def _check_count(value: object, ctx: object) -> str | None:
    if (problem := check_int(value)) or not isinstance(value, int) or 0 <= value <= MAX_COUNT:
        return problem
    return f"{value if abs(value) < 10**12 else 'a huge number'} is outside 0..{MAX_COUNT}"


def _check_round_id(value: object, ctx: Mapping[str, Any]) -> str | None:
    folder = ctx.get("folder")
    if not isinstance(value, str) or not ROUND_ID.match(value) or (folder and value != folder):
        return "expected the folder's name, YYYY-MM-DD_YYYY-MM-DD"
    return None


Count = Annotated[int, Check("int", _check_count, {"type": "integer", "minimum": 0})]
SourceId = Annotated[str, pattern(r"^[a-z][a-z0-9_]{0,60}$")]
Bounded = Annotated[str, StringConstraints(max_length=20_000)]


class Decided(KbModel):
    """What became of one candidate."""

    decision: Literal["include", "exclude"] = field("include or exclude.")
    reason: str | None = field("An inclusion rule id or an exclusion reason.", default=None)
    record: Annotated[str, pattern(r"^(?:papers|exclusions)/[A-Za-z0-9][A-Za-z0-9_-]*\.yaml$")]
    source: Maybe[SourceId] = optional("The source batch it came from (default arxiv).")


class Batch(KbModel):
    """One source batch: where its candidates came from and what became of them."""

    name: SourceId = field("The source (an exclusion_source id).")
    query: Bounded = field("The query or search that was run.")
    file: Bounded = field("The imported file's name ('' for a run).")
    imported_on: Date = field("The day the batch was added.")
    identified: Count = field("Entries the source returned.")
    duplicates_removed: Count = field("Entries already known.")
    outside_window: Count = field("Entries first published outside the window.")


class Counts(KbModel):
    retrieved: Count = field("Entries retrieved.")
    outside_window: Count = field("Entries outside the window.")
    duplicates_removed: Count = field("Entries already known.")
    to_screen: Count = field("Candidates left to screen.")


class Window(KbModel):
    since: Date = field("The first day screened.")
    until: Date = field("The last day screened.")

    @model_validator(mode="after")
    def _ordered(self) -> Self:
        if self.since > self.until:
            message = f"since {self.since.isoformat()} is after until {self.until.isoformat()}"
            report([Finding((), message)])
        return self


class RoundFile(KbModel):
    """One ``round.yaml``."""

    round: Annotated[str, Check("round_id", _check_round_id, {"pattern": ROUND_ID.pattern})]
    window: Window = field("First-publication dates screened, both inclusive.")
    run_on: Date = field("The day the round was run.")
    families: list[str] = field("The query families run.")
    counts: Counts = field("The round's counts.")
    capped: list[str] | None = field("Families that hit the result limit.", default=None)
    retrieved_per_family: dict[str, Count] | None = field("Entries per family.", default=None)
    duplicates: list[dict[str, str]] | None = field("{id, duplicate_of, match}.", default=None)
    decided: dict[Annotated[str, pattern(CANDIDATE_ID)], Decided] | None = field(
        "Candidate id: {decision, reason, record, source}.", default=None
    )
    sources: list[Batch] | None = field("The source batches.", default=None)
    source: Maybe[SourceId] = optional("The one source of a round older than batches.")
    decision_counts: dict[str, Count] | None = field("Decisions made (derived).", default=None)

    @model_validator(mode="after")
    def _batches_add_up(self) -> Self:
        """The round's counts are its batches' sums (what ``screen import`` writes); a
        hand edit of one without the other would make the PRISMA flow disagree."""
        if not self.sources:
            return self
        found = []
        for total, each in BATCH_TOTALS:
            summed = sum(getattr(b, each) for b in self.sources)
            given = getattr(self.counts, total)
            if summed != given:
                message = (
                    f"{given} disagrees with the sources' {each} ({summed}); "
                    f"counts.{total} is the sum over sources: set it to {summed} "
                    f"or correct the batches"
                )
                found.append(Finding(("counts", total), message))
        report(found)
        return self


def whole(problem: Problem) -> Problem:
    """A problem inside a :data:`WHOLE` field, reported on that field."""
    name, dot, rest = problem.field.partition(".")
    name, bracket, index = name.partition("[")
    if name not in WHOLE or not (dot or bracket):
        return problem
    inner = f"[{index}{dot}{rest}" if bracket else rest
    return replace(problem, field=name, message=f"{inner}: {problem.message}")
