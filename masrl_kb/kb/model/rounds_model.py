"""``screening/<round-id>/round.yaml``: one screening round, as a model that is the parser.
It arrives in pull requests, so every value the site shows is checked (the id is the
context's ``folder``, counts are bounded, records are paths under the record folders)."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Annotated, Any, Literal, Self

from pydantic import field_validator, model_validator
from pydantic_core import PydanticCustomError

from masrl_kb.kb.model.base import Finding, KbModel, Maybe, field, optional, report
from masrl_kb.kb.model.types import ARXIV_ID_PATTERN, Check, Date, check_int, check_text, pattern
from masrl_kb.kb.problem import Problem
from masrl_kb.kb.text import text_problem

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
DUPLICATES_CSV = "duplicates.csv"
MIGRATE_HINT = "run `masrl-kb screen migrate` to move it to duplicates.csv"
# Fields reported whole (``decided: 2611.00001.record: ...``): what a reader fixes is the entry.
WHOLE = ("window", "families", "capped", "decided", "waiting")
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
# A batch's public source: its kind (an exclusion_source id) and, after a colon, which one
# of that kind (a list ``github:owner/repo``, a venue ``openreview:ICLR.cc/2026``, the
# seed of ``snowball:2605.02801``). The kind alone names a source that has only one.
SOURCE_NAME = r"^[a-z][a-z0-9_]{0,60}(?::[A-Za-z0-9][A-Za-z0-9._/-]{0,119})?$"
SourceName = Annotated[str, pattern(SOURCE_NAME)]
# Two searches are independent strategies when they share no source and neither reader saw
# the other's list; a batch names its strategy so the round can estimate what both missed.
STRATEGY = r"^[A-Za-z0-9][A-Za-z0-9_-]{0,39}$"
Strategy = Annotated[str, pattern(STRATEGY)]
MAX_BATCH_TEXT = 20_000


def _batch_text(multiline: bool) -> Check:
    """A batch's query (a run's is one line per family) or file name: no control or bidi
    character (the site and the terminal show them), bounded; empty for a run's file."""

    def test(value: object, ctx: object) -> str | None:
        if not isinstance(value, str):
            return check_text(value)
        if len(value) > MAX_BATCH_TEXT:
            return f"longer than {MAX_BATCH_TEXT} characters"
        return text_problem(value, multiline) if value else None

    return Check("text", test, {"type": "string", "maxLength": MAX_BATCH_TEXT})


Query = Annotated[str, _batch_text(multiline=True)]
FileName = Annotated[str, _batch_text(multiline=False)]
MAX_WAIT_NOTE = 400


def _check_wait_note(value: object, ctx: object) -> str | None:
    """One line of record text (check_text), bounded."""
    if (problem := check_text(value)) or not isinstance(value, str):
        return problem
    return f"longer than {MAX_WAIT_NOTE} characters" if len(value) > MAX_WAIT_NOTE else None


# Why a candidate is not decided yet (one line): shown beside it on the rounds page, so a
# reviewer or contributor knows what would settle it.
WaitNote = Annotated[
    str, Check("text", _check_wait_note, {"type": "string", "maxLength": MAX_WAIT_NOTE})
]


def reach_problem(since: dt.date, until: dt.date, reached: dt.date) -> str | None:
    """A batch reaches a day of its window, or the day before it (none of the window)."""
    if since - dt.timedelta(days=1) <= reached <= until:
        return None
    return (
        f"{reached} is outside the window {since}..{until} (or the day before it, for a "
        "source that reached none of the window)"
    )


def source_kind(name: str) -> str:
    """The exclusion_source id a batch's source name starts with (``github:a/b`` -> github)."""
    return name.partition(":")[0]


class Decided(KbModel):
    """What became of one candidate."""

    decision: Literal["include", "exclude"] = field("include or exclude.")
    reason: str | None = field("An inclusion rule id or an exclusion reason.", default=None)
    record: Annotated[str, pattern(r"^(?:papers|exclusions)/[A-Za-z0-9][A-Za-z0-9_-]*\.yaml$")]
    source: Maybe[SourceName] = optional("The source batch it came from (default arxiv).")


class Batch(KbModel):
    """One source batch: where its candidates came from and what became of them."""

    name: SourceName = field("The public source: an exclusion_source id, ':' and which one.")
    query: Query = field("The query or search that was run.")
    file: FileName = field("The imported file's name ('' for a run).")
    imported_on: Date = field("The day the batch was added.")
    identified: Count = field("Entries the source returned.")
    duplicates_removed: Count = field("Entries already known.")
    outside_window: Count = field("Entries first published outside the window.")
    reached: Maybe[Date] = optional(
        "The last first-publication day the source's list reached (default: the window's end)."
    )
    strategy: Maybe[Strategy] = optional("The independent search strategy the batch belongs to.")


class Counts(KbModel):
    retrieved: Count = field("Entries retrieved.")
    outside_window: Count = field("Entries outside the window.")
    duplicates_removed: Count = field("Entries already known.")
    to_screen: Count = field("Candidates left to screen.")


class Duplicates(KbModel):
    """The round's removed duplicates, summarised: the list is the side file ``file``
    (a round.yaml listing thousands would pass validate's size limit)."""

    count: Count = field("Duplicates removed by the round's batches.")
    listed: Count = field("Rows of the side file (fewer than count when it hit its bound).")
    file: Literal["duplicates.csv"] = field("The side file listing {id, duplicate_of, match}.")

    @model_validator(mode="after")
    def _listed(self) -> Self:
        if self.listed > self.count:
            report([Finding(("listed",), f"{self.listed} is more than count ({self.count})")])
        return self


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
    duplicates: Duplicates | None = field(
        "{count, listed, file}: the duplicates removed, listed in duplicates.csv.", default=None
    )
    decided: dict[Annotated[str, pattern(CANDIDATE_ID)], Decided] | None = field(
        "Candidate id: {decision, reason, record, source}.", default=None
    )
    sources: list[Batch] | None = field("The source batches.", default=None)
    waiting: dict[Annotated[str, pattern(CANDIDATE_ID)], WaitNote] | None = field(
        "Candidate id: why it still awaits a decision (one line; `screen decide` drops it).",
        default=None,
    )
    source: Maybe[SourceId] = optional("The one source of a round older than batches.")
    decision_counts: dict[str, Count] | None = field("Decisions made (derived).", default=None)
    in_progress: bool | None = field(
        "True while the window has not ended (`screen import --in-progress`).", default=None
    )

    @field_validator("duplicates", mode="before")
    @classmethod
    def _old_list(cls, value: object) -> object:
        if isinstance(value, list):
            message = f"a list of duplicates is the old shape; {MIGRATE_HINT}"
            raise PydanticCustomError("old_shape", message)
        return value

    @model_validator(mode="after")
    def _in_progress(self) -> Self:
        if self.in_progress and self.run_on > self.window.until:
            message = f"the window ended on {self.window.until} before run_on {self.run_on}"
            report([Finding(("in_progress",), message + "; remove in_progress")])
        return self

    @model_validator(mode="after")
    def _reach_in_window(self) -> Self:
        since, until = self.window.since, self.window.until
        found = [
            Finding(("sources", i, "reached"), problem)
            for i, b in enumerate(self.sources or [])
            if b.reached is not None and (problem := reach_problem(since, until, b.reached))
        ]
        if found:
            report(found)
        return self

    @model_validator(mode="after")
    def _one_strategy_per_source(self) -> Self:
        """A source belongs to one strategy: what a decided candidate was found by is
        kept as its source's name, so a name under two strategies would credit both
        strategies' finds to one of them and the recall estimate would be wrong."""
        first: dict[str, tuple[int, str | None]] = {}
        found = []
        for i, b in enumerate(self.sources or []):
            mine = b.strategy or None
            j, strategy = first.setdefault(b.name, (i, mine))
            if strategy == mine:
                continue
            # a batch without a strategy shares its finds' source name too: its finds
            # would count for the other's strategy, or the other's for none
            had, fix = (
                (f"is strategy {strategy}", f"use {strategy}")
                if strategy
                else ("has no strategy", "leave this one without")
            )
            message = (
                f"source {b.name} {had} in sources[{j}]; a source belongs to one strategy: "
                f"{fix}, or name the source apart (e.g. its list or seed after ':')"
            )
            found.append(Finding(("sources", i, "strategy" if mine else "name"), message))
        report(found)
        return self

    @model_validator(mode="after")
    def _duplicates_counted(self) -> Self:
        dups, removed = self.duplicates, self.counts.duplicates_removed
        if dups is not None and dups.count != removed:
            message = f"count {dups.count} differs from counts.duplicates_removed ({removed})"
            report([Finding(("duplicates", "count"), message)])
        return self

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
