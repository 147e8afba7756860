"""The field types records are built from: ``Annotated[<python type>, Check(...)]``,
whose check returns the exact message for a bad value (or None) and whose schema is
what editors see. :class:`Axis` takes its values from the context's taxonomy (and
``x-axis`` in the schema); ``TODO`` is refused by every type (worded by :mod:`.base`).
"""

from __future__ import annotations

import datetime as dt
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Annotated, Any

from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic_core import core_schema

from masrl_kb.kb.model.base import PLACEHOLDER, describe, fail
from masrl_kb.kb.rules import HTTP_URL_PATTERN, is_http_url
from masrl_kb.kb.text import capped_list, shorten, text_problem
from masrl_kb.kb.yamlio import WrittenInt

KEY_PATTERN = r"^[a-z0-9][a-z0-9-]*[a-z0-9]$"
EXCLUSION_ID_PATTERN = r"^E[0-9]{3,}$"
BIBTEX_KEY_PATTERN = r"^[A-Za-z0-9_:.+-]+$"
# New-style ids (YYMM.NNNN[N]) or old-style archive/YYMMNNN; no version suffix.
ARXIV_ID_PATTERN = r"^(?:[0-9]{2}(?:0[1-9]|1[0-2])\.[0-9]{4,5}|[a-z-]+(?:\.[A-Z]{2})?/[0-9]{7})$"
MIN_YEAR = 1950
MIN_DATE = dt.date(MIN_YEAR, 1, 1)

ARXIV_RE = re.compile(ARXIV_ID_PATTERN)
_TEXT_SCHEMA = {"type": "string", "minLength": 1, "pattern": r"\S", "not": {"const": PLACEHOLDER}}
_URL_SCHEMA = {"type": "string", "format": "uri", "pattern": HTTP_URL_PATTERN}
_DATE_SCHEMA = {"type": "string", "format": "date"}


Test = Callable[[Any, Mapping[str, Any]], str | None]


@dataclass(frozen=True)
class Check:
    """A field type: its ``kind`` (for field lists), its rule ``test(value, context)``
    (the message for a bad value, or None) and its JSON Schema."""

    kind: str
    test: Test
    schema: Mapping[str, Any] = field(default_factory=dict)

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        return core_schema.with_info_plain_validator_function(self._run)

    def __get_pydantic_json_schema__(
        self, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> dict[str, Any]:
        return dict(self.schema)

    def _run(self, value: object, info: core_schema.ValidationInfo) -> object:
        if isinstance(value, str) and value == PLACEHOLDER:
            fail(PLACEHOLDER)  # worded with the field's doc by base.problems_of
        problem = self.test(value, info.context or {})
        if problem:
            fail(problem)
        return value


# ---------------------------------------------------------------- the checks


def bool_hint(value: object) -> str:
    return (
        f"got {describe(value)}: YAML reads unquoted yes/no/on/off/true/false as booleans; "
        "put the word in quotes"
    )


def check_text(value: object, multiline: bool = False) -> str | None:
    """Why ``value`` is no text of a record (empty, not a string, control characters)."""
    if value is None:
        return "must not be empty"
    if isinstance(value, bool):
        return bool_hint(value)
    if not isinstance(value, str):
        return f"expected text, got {describe(value)}"
    if not value.strip():
        return "must not be empty"
    return text_problem(value, multiline)


def check_url(value: object) -> str | None:
    if problem := check_text(value):
        return problem
    return None if is_http_url(value) else f"{shorten(value)} is not an http(s) URL"


def _check_arxiv(value: object) -> str | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return (
            f"got {describe(value)}: quote arXiv ids (e.g. '2508.04652'); "
            "unquoted they are read as numbers and lose trailing zeros"
        )
    if (problem := check_text(value)) or not isinstance(value, str):
        return problem
    if ARXIV_RE.match(value):
        return None
    return f"malformed arXiv id {shorten(value)}: expected YYMM.NNNNN (e.g. 2508.04652), no version"


def check_int(value: object) -> str | None:
    if isinstance(value, WrittenInt):  # 0x7E9, 2_025, 20:15: YAML 1.1 integers
        return f"write the number in plain decimal digits, got {shorten(value.text)}"
    if isinstance(value, bool) or not isinstance(value, int):
        return f"expected a whole number, got {describe(value)}"
    return None


def latest_date() -> dt.date:
    """The latest date a record may carry: a year from today (typos, not plans)."""
    return _latest(int(time.time() // 60))


@lru_cache(maxsize=1)
def _latest(minute: int) -> dt.date:
    # date.today() reads the local time zone: once a minute, not once per date field.
    today = dt.date.today()
    return today.replace(year=today.year + 1, day=28 if today.month == 2 else today.day)


def _check_year(value: object) -> str | None:
    if (problem := check_int(value)) or not isinstance(value, int):
        return problem
    last = latest_date().year
    return None if MIN_YEAR <= value <= last else f"year {value} is outside {MIN_YEAR}..{last}"


def check_bool(value: object) -> str | None:
    return None if isinstance(value, bool) else f"expected true or false, got {describe(value)}"


def check_date(value: object) -> str | None:
    if isinstance(value, dt.datetime) or not isinstance(value, dt.date):
        return f"expected a date written YYYY-MM-DD without quotes, got {describe(value)}"
    last = latest_date()
    if not MIN_DATE <= value <= last:
        return f"date {value.isoformat()} is outside {MIN_DATE.isoformat()}..{last.isoformat()}"
    return None


def word_count(low: int, high: int | None, what: str, multiline: bool = False) -> Test:
    """A text of ``low`` to ``high`` words (no upper bound when None): a reason or a
    summary says something, and a summary stays a summary."""

    def test(value: object, ctx: object = None) -> str | None:
        if (problem := check_text(value, multiline)) or not isinstance(value, str):
            return problem
        n = len(value.split())
        if n < low or (high is not None and n > high):
            span = f"{low} to {high} words" if high is not None else f"at least {low} words"
            return f"{what}: {span}, got {n}"
        return None

    return test


def _each(check: Callable[[object], str | None], what: str, empty: bool = True) -> Any:
    """A check of a list whose items pass ``check`` (the first bad item is named)."""

    def test(value: object) -> str | None:
        if not isinstance(value, list) or not (value or empty):
            return f"expected {what}, got {describe(value)}"
        return next((f"item {i + 1}: {p}" for i, x in enumerate(value) if (p := check(x))), None)

    return test


def _check_artifact(value: object) -> str | None:
    if isinstance(value, dict):
        if set(value) != {"none"}:
            return "expected a URL, or {none: YYYY-MM-DD} (the day it was checked and not found)"
        problem = check_date(value["none"])
        return f"none: {problem}" if problem else None
    return check_url(value)


def pattern(regex: str) -> Check:
    """Text matching ``regex`` (keys, ids)."""
    compiled = re.compile(regex)

    def test(value: object, ctx: object) -> str | None:
        if (problem := check_text(value)) or not isinstance(value, str):
            return problem
        return None if compiled.fullmatch(value) else f"{shorten(value)} does not match {regex}"

    return Check("pattern", test, {"type": "string", "pattern": regex})


class Axis(Check):
    """A value of a ``taxonomy.yaml`` axis (``context["taxonomy"]``)."""

    axis: str  # not a dataclass field: set once, read by _run and the field lists

    def __init__(self, axis: str) -> None:
        super().__init__("axis", lambda v, ctx: None, {"type": "string", "x-axis": axis})
        object.__setattr__(self, "axis", axis)

    def _run(self, value: object, info: core_schema.ValidationInfo) -> object:
        ids = (info.context or {})["taxonomy"][self.axis].ids
        if type(value) is str and value in ids:
            return value
        if value == PLACEHOLDER:
            fail(PLACEHOLDER)
        why = bool_hint(value) if isinstance(value, bool) else f"unknown value {describe(value)}"
        fail(f"{why}; allowed: {capped_list(ids)}")


def allowed_values(info: core_schema.ValidationInfo, axis: str) -> str:
    """The values of a taxonomy axis for a message (``context["taxonomy"]``, capped)."""
    return capped_list((info.context or {})["taxonomy"][axis].ids)


def _plain(kind: str, test: Callable[[Any], str | None], schema: Mapping[str, Any]) -> Check:
    return Check(kind, lambda value, ctx: test(value), schema)


_ARTIFACT_NONE = {
    "type": "object",
    "properties": {"none": _DATE_SCHEMA},
    "required": ["none"],
    "additionalProperties": False,
}
Text = Annotated[str, _plain("text", check_text, _TEXT_SCHEMA)]
MULTILINE = _plain("text", lambda v: check_text(v, True), _TEXT_SCHEMA)
LongText = Annotated[str, MULTILINE]
# The shortest real reason and summary in the pool are this long (tests held them to it).
MIN_WHY_WORDS = 4
SUMMARY_WORDS = (5, 90)
Reason = Annotated[
    str,
    Check(
        "text",
        word_count(MIN_WHY_WORDS, None, "one line saying what in the work makes this decision"),
        _TEXT_SCHEMA,
    ),
]
Summary = Annotated[
    str, Check("text", word_count(*SUMMARY_WORDS, "one or two sentences", True), _TEXT_SCHEMA)
]
Url = Annotated[str, _plain("url", check_url, _URL_SCHEMA)]
Urls = Annotated[
    list[str],
    _plain("urls", _each(check_url, "a list of URLs"), {"type": "array", "items": _URL_SCHEMA}),
]
Names = Annotated[
    list[str],
    _plain(
        "strings",
        _each(check_text, "a non-empty list of names", empty=False),
        {"type": "array", "minItems": 1, "items": _TEXT_SCHEMA},
    ),
]
Bool = Annotated[bool, _plain("bool", check_bool, {"type": "boolean"})]
Int = Annotated[int, _plain("int", check_int, {"type": "integer"})]
Year = Annotated[int, _plain("int", _check_year, {"type": "integer", "minimum": MIN_YEAR})]
Date = Annotated[dt.date, _plain("date", check_date, _DATE_SCHEMA)]
ArxivId = Annotated[
    str, _plain("arxiv_id", _check_arxiv, {"type": "string", "pattern": ARXIV_ID_PATTERN})
]
Artifact = Annotated[
    str | dict[str, dt.date],
    _plain("artifact", _check_artifact, {"oneOf": [_URL_SCHEMA, _ARTIFACT_NONE]}),
]
Key = Annotated[str, pattern(KEY_PATTERN)]
