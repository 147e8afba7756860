"""The shape of one claim of ``claims.yaml`` (:class:`Claim`), with no pandas: its queries
are parsed here by the query language, their columns and values checked when
:mod:`masrl_kb.query.claims` runs them; :mod:`masrl_kb.query.claimsfile` reads the file."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Self

from pydantic import PrivateAttr, model_validator

from masrl_kb.kb.model.base import Finding, KbModel, Maybe, describe, field, optional, report
from masrl_kb.kb.model.types import Check, Text, check_text
from masrl_kb.kb.text import shorten
from masrl_kb.query.lang import OPERATORS, QueryError, parse

TABLES = ("papers", "exclusions", "audited")
MAX_EXPECTED = 1_000_000  # a count of records; anything larger is a typo


def _one_of(allowed: tuple[str, ...]) -> Check:
    def test(value: object, ctx: Mapping[str, Any]) -> str | None:
        return None if value in allowed else f"allowed: {', '.join(allowed)}"

    return Check("choice", test, {"enum": list(allowed)})


def _check_query(value: object, ctx: Mapping[str, Any]) -> str | None:
    problem = check_text(value)
    if problem or not isinstance(value, str):
        return problem
    try:
        parse(value)  # the language's own rules; columns and values are checked per table
    except QueryError as err:
        return str(err)
    return None


def _check_expected(value: object, ctx: Mapping[str, Any]) -> str | None:
    if value == "all":
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        return f'must be a whole number, or "all" with an `of` query, got {describe(value)}'
    if not 0 <= value <= MAX_EXPECTED:
        return f"{shorten(value)} is outside 0..{MAX_EXPECTED}"
    return None


Query = Annotated[str, Check("query", _check_query, {"type": "string"})]


class Claim(KbModel):
    """One claim: count ``table`` rows matching ``where``, compare with ``expected``."""

    id: Text = field("The claim's id (unique).")
    statement: Text = field("The claim as the survey words it.")
    table: Annotated[str, _one_of(TABLES)] = field("The table counted.")
    where: Maybe[Query] = optional("Which rows count (the query language).")
    op: Annotated[str, _one_of(tuple(OPERATORS))] = field("How the count compares.")
    expected: Annotated[int | str, Check("expected", _check_expected, {})] = field(
        'The count expected, or "all" (every row matching `of`).'
    )
    of: Maybe[Query] = optional("The denominator's query: the value reads 'N of M'.")
    group: Maybe[Text] = optional("Claims read together (one headline).")
    label: Maybe[Text] = optional("A short name for the reading, shown beside its count.")
    _lines: dict[str, int] = PrivateAttr(default_factory=dict)

    @model_validator(mode="after")
    def _all_needs_of(self) -> Self:
        if self.expected == "all" and not self.of:
            report([Finding(("expected",), '"all" needs an `of` query')])
        return self

    def line_of(self, query: str) -> int:
        """The line of ``where`` or ``of`` in claims.yaml (the claim's own line without it)."""
        return self._lines[query]
