"""``claims.yaml`` read and checked, with no pandas (``validate`` runs this): queries are
parsed here, their columns and values checked when :mod:`masrl_kb.query.claims` runs them."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Annotated, Any, Self

from pydantic import PrivateAttr, model_validator

from masrl_kb.kb.model import base
from masrl_kb.kb.model.base import Finding, KbModel, Maybe, describe, field, optional, report
from masrl_kb.kb.model.types import Check, Text, check_text
from masrl_kb.kb.paths import find_root
from masrl_kb.kb.problem import Problem
from masrl_kb.kb.text import shorten
from masrl_kb.kb.yamlio import LineDict, load_yaml_file
from masrl_kb.query.args import checked
from masrl_kb.query.lang import OPERATORS, QueryError, parse

CLAIMS_FILE = "claims.yaml"
TABLES = ("papers", "exclusions", "audited")
MAX_EXPECTED = 1_000_000  # a count of records; anything larger is a typo


class ClaimsFileError(ValueError):
    """``claims.yaml`` is malformed: the message is the first problem, ``found`` each one
    (not ``problems``: the command line would call a claims file invalid records)."""

    def __init__(self, found: list[Problem]) -> None:
        super().__init__(str(found[0]))
        self.found = found


def claim_error(path: str, line: int, field: str, message: str) -> ClaimsFileError:
    return ClaimsFileError([Problem(path, line, field, message)])


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


def _unique(claims: list[Claim], raws: list[LineDict]) -> list[Problem]:
    seen: dict[str, int] = {}
    found = []
    for claim, raw in zip(claims, raws, strict=True):
        line = raw.line_of("id")
        if claim.id in seen:
            message = f"{shorten(claim.id)} given twice (line {seen[claim.id]})"
            found.append(Problem(CLAIMS_FILE, line, "id", message))
        seen.setdefault(claim.id, line)
    return found


@checked()
def load_claims(root: str | os.PathLike[str] | None = None) -> list[Claim]:
    """Read and check ``claims.yaml``; :class:`ClaimsFileError` lists every problem."""
    loaded = load_yaml_file(find_root(root) / CLAIMS_FILE)
    if loaded.problems:
        raise ClaimsFileError(
            [Problem(CLAIMS_FILE, p.line, p.field, p.message) for p in loaded.problems]
        )
    raws = loaded.data.get("claims") if isinstance(loaded.data, dict) else None
    if not isinstance(raws, list):
        raise claim_error(CLAIMS_FILE, 1, "claims", "expected a list of claims")
    claims, problems = [], []
    for raw in raws:
        if not isinstance(raw, LineDict):
            problems.append(Problem(CLAIMS_FILE, 1, "claims", "each claim must be a mapping"))
            continue
        claim, found = base.validate_mapping(Claim, raw, CLAIMS_FILE)
        problems += found
        if claim:  # the lines of queries checked later, on a table
            claim._lines = {name: raw.line_of(name) for name in ("where", "of")}
            claims.append(claim)
    if not problems:
        problems = _unique(claims, raws)
    if problems:
        raise ClaimsFileError(sorted(problems))
    return claims
