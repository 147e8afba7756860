"""``screening/<round-id>/round.yaml``: one screening round, as a model that is also the parser.

``round.yaml`` arrives in pull requests: every value the site shows is
checked (the id must be the folder's name, counts are bounded, records are
paths under ``papers/`` or ``exclusions/``). The validation context carries
the folder's name (``{"folder": ...}``).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import ValidationError

from masrl_kb.kb.model.base import KbModel, describe, field, field_name
from masrl_kb.kb.model.types import ARXIV_ID_PATTERN, Check, Date, check_date, check_int, pattern
from masrl_kb.kb.text import shorten

ROUND_ID = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}_[0-9]{4}-[0-9]{2}-[0-9]{2}$")
MAX_COUNT = 1_000_000  # no real round comes near; a bigger number is a typo or tampering
MAX_TEXT = 20_000
SOURCE_ID_PATTERN = r"^[a-z][a-z0-9_]{0,60}$"
RECORD_PATH_PATTERN = r"^(?:papers|exclusions)/[A-Za-z0-9][A-Za-z0-9_-]*\.yaml$"
# A screening candidate's id: a bare arXiv id (as rounds always had), a DOI, an
# OpenReview forum id, or a hash of the normalised title when the source gives none.
DOI_PATTERN = r"10\.[0-9]{4,9}/[\x21-\x7e]{1,200}"
OPENREVIEW_PATTERN = r"[A-Za-z0-9_-]{4,40}"
CANDIDATE_ID = re.compile(
    rf"^(?:{ARXIV_ID_PATTERN[1:-1]}|doi:{DOI_PATTERN}|openreview:{OPENREVIEW_PATTERN}"
    r"|title:[0-9a-f]{16})$"
)


def _check_count(value: object) -> str | None:
    problem = check_int(value)
    if problem or not isinstance(value, int):
        return problem
    if not 0 <= value <= MAX_COUNT:
        return f"{value if abs(value) < 10**12 else 'a huge number'} is outside 0..{MAX_COUNT}"
    return None


def _check_round_id(value: object, ctx: Mapping[str, Any]) -> str | None:
    folder = ctx.get("folder")
    if not isinstance(value, str) or not ROUND_ID.match(value) or (folder and value != folder):
        return "expected the folder's name, YYYY-MM-DD_YYYY-MM-DD"
    return None


def _check_window(value: object) -> str | None:
    if not isinstance(value, dict) or set(value) != {"since", "until"}:
        return "expected since: and until: dates"
    for key in ("since", "until"):
        problem = check_date(value[key])
        if problem:
            return f"{key}: {problem}"
    if value["since"] > value["until"]:
        return f"since {value['since'].isoformat()} is after until {value['until'].isoformat()}"
    return None


def _check_names(value: object) -> str | None:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return "expected a list of family ids"
    return None


def _check_bounded(value: object) -> str | None:
    if not isinstance(value, str) or len(value) > MAX_TEXT:
        return f"expected text of at most {MAX_TEXT} characters, got {describe(value)}"
    return None


def _check_decided(value: object) -> str | None:
    """Today's one message for the whole mapping, naming the entry and field at fault."""
    if value is None:
        return None
    if not isinstance(value, dict):
        return f"expected candidate id: {{decision, reason, record}}, got {describe(value)}"
    for key, entry in value.items():
        if not isinstance(key, str) or not CANDIDATE_ID.match(key):
            return (
                f"{shorten(key)} is not a candidate id "
                "(arXiv id, doi:..., openreview:... or title:...)"
            )
        try:
            Decided.model_validate(entry)
        except ValidationError as err:
            first = err.errors()[0]
            message = first.get("ctx", {}).get("message") or first["msg"]
            return f"{key}.{field_name(first['loc']) or 'entry'}: {message}"
    return None


def _plain(kind: str, test: Any, schema: dict[str, Any]) -> Check:
    return Check(kind, lambda value, ctx: test(value), schema)


Count = Annotated[int, _plain("int", _check_count, {"type": "integer", "minimum": 0})]
SourceId = Annotated[str, pattern(SOURCE_ID_PATTERN)]
Bounded = Annotated[str, _plain("bounded", _check_bounded, {"type": "string"})]
Names = Annotated[list[str], _plain("names", _check_names, {"type": "array"})]
MaybeNames = Annotated[
    list[str] | None,
    _plain("names", lambda v: None if v is None else _check_names(v), {"type": "array"}),
]
_DATES = {"type": "string", "format": "date"}
_WINDOW = {"type": "object", "properties": {"since": _DATES, "until": _DATES}}


class Decided(KbModel):
    """What became of one candidate."""

    decision: Literal["include", "exclude"] = field("include or exclude.")
    reason: str | None = field("An inclusion rule id or an exclusion reason.", required=False)
    record: Annotated[str, pattern(RECORD_PATH_PATTERN)] = field("The record written.")
    source: SourceId = field("The source batch it came from (default arxiv).", required=False)


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


class RoundFile(KbModel):
    """One ``round.yaml``."""

    round: Annotated[str, Check("round_id", _check_round_id, {"pattern": ROUND_ID.pattern})] = (
        field("The round's id: the folder's name, YYYY-MM-DD_YYYY-MM-DD.")
    )
    window: Annotated[dict[str, dt.date], _plain("window", _check_window, _WINDOW)] = field(
        "The first-publication dates screened, since and until (both inclusive)."
    )
    run_on: Date = field("The day the round was run.")
    families: Names = field("The query families run.")
    counts: Counts = field("The round's counts.")
    capped: MaybeNames = field("Families that hit the result limit.", required=False)
    retrieved_per_family: dict[str, Count] | None = field("Entries per family.", required=False)
    duplicates: list[dict[str, str]] | None = field("{id, duplicate_of, match}.", required=False)
    decided: Annotated[dict[str, Any], _plain("decided", _check_decided, {"type": "object"})] = (
        field("Candidate id: {decision, reason, record, source}.", required=False)
    )
    sources: list[Batch] | None = field("The source batches.", required=False)
    source: SourceId = field("The one source of a round older than batches.", required=False)
    decision_counts: dict[str, Count] | None = field("Decisions made (derived).", required=False)
