"""``claims.yaml`` read and checked, with no pandas: ``validate`` runs this.

Every claim is checked the same way a record is: ``claims.yaml:line: field:
message``. Ids are unique, counts bounded, texts single lines, and the
queries (``where``, ``of``) are parsed by the query language itself; their
columns and values are checked when :mod:`masrl_kb.query.claims` evaluates
them on a table.
"""

from __future__ import annotations

import operator
import os
from dataclasses import dataclass

from masrl_kb.kb.paths import find_root
from masrl_kb.kb.text import shorten, shorten_name, text_problem
from masrl_kb.kb.yamlio import load_yaml_file
from masrl_kb.query.lang import QueryError, parse

CLAIMS_FILE = "claims.yaml"
TABLES = ("papers", "exclusions", "audited")
MAX_EXPECTED = 1_000_000  # a count of records; anything larger is a typo
FIELDS = ("id", "statement", "table", "where", "op", "expected", "of", "group", "label")
OPERATORS = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


class ClaimsFileError(ValueError):
    """``claims.yaml`` is malformed; the message names file, line and field."""


@dataclass(frozen=True)
class Claim:
    """One claim: count ``table`` rows matching ``where``, compare with ``expected``."""

    id: str
    statement: str
    table: str
    where: str | None
    op: str
    expected: int | str  # a count, or "all": every row matching ``of``
    of: str | None = None  # the denominator's query: the value reads "N of M"
    group: str | None = None  # claims read together (one headline, several readings)
    label: str | None = None  # a short name for the reading, shown beside its count
    where_line: int = 0  # the line of ``where`` in claims.yaml, for error messages
    of_line: int = 0


def claim_error(path: str, line: int, field: str, message: str) -> ClaimsFileError:
    return ClaimsFileError(f"{path}:{line}: {field}: {message}")


def _check_texts(raw: dict, path: str) -> None:
    for name in ("id", "statement", "where", "of", "group", "label"):
        if name not in raw:
            continue
        value = raw[name]
        if not isinstance(value, str) or not value.strip():
            raise claim_error(path, raw.line_of(name), name, "must be text")
        problem = text_problem(value)
        if problem:
            raise claim_error(path, raw.line_of(name), name, problem)


def _check_expected(raw: dict, path: str) -> None:
    expected = raw["expected"]
    line = raw.line_of("expected")
    if expected == "all" and not raw.get("of"):
        raise claim_error(path, line, "expected", '"all" needs an `of` query')
    if expected != "all" and (isinstance(expected, bool) or not isinstance(expected, int)):
        message = 'must be a whole number, or "all" with an `of` query'
        raise claim_error(path, line, "expected", message)
    if expected != "all" and not 0 <= expected <= MAX_EXPECTED:
        message = f"{shorten(expected)} is outside 0..{MAX_EXPECTED}"
        raise claim_error(path, line, "expected", message)


def _parse_claim(raw: object, path: str) -> Claim:
    line = getattr(raw, "line", 1)
    if not isinstance(raw, dict):
        raise claim_error(path, line, "claims", "each claim must be a mapping")
    for name in ("id", "statement", "table", "op", "expected"):
        if name not in raw:
            raise claim_error(path, line, name, "missing required field")
    unknown = [k for k in raw if k not in FIELDS]
    if unknown:
        name = shorten_name(unknown[0])
        message = f"unknown field; allowed: {', '.join(FIELDS)}"
        raise claim_error(path, raw.line_of(unknown[0]) or line, name, message)
    _check_texts(raw, path)
    if raw["table"] not in TABLES:
        allowed = ", ".join(TABLES)
        raise claim_error(path, raw.line_of("table"), "table", f"allowed: {allowed}")
    if raw["op"] not in OPERATORS:
        allowed = ", ".join(OPERATORS)
        raise claim_error(path, raw.line_of("op"), "op", f"allowed: {allowed}")
    _check_expected(raw, path)
    where = raw.get("where")
    where_line = raw.line_of("where") if "where" in raw else line
    of_line = raw.line_of("of") if "of" in raw else line
    for name, text, at in (("where", where, where_line), ("of", raw.get("of"), of_line)):
        if text is not None:
            try:
                parse(text)  # the language's own rules; columns and values are checked per table
            except QueryError as err:
                raise claim_error(path, at, name, str(err)) from None
    return Claim(
        raw["id"],
        raw["statement"],
        raw["table"],
        where,
        raw["op"],
        raw["expected"],
        raw.get("of"),
        raw.get("group"),
        raw.get("label"),
        where_line,
        of_line,
    )


def _unique(claims: list[Claim], raws: list) -> None:
    seen: dict[str, int] = {}
    for claim, raw in zip(claims, raws, strict=True):
        line = raw.line_of("id")
        if claim.id in seen:
            message = f"{shorten(claim.id)} given twice (line {seen[claim.id]})"
            raise claim_error(CLAIMS_FILE, line, "id", message)
        seen[claim.id] = line


def load_claims(root: str | os.PathLike[str] | None = None) -> list[Claim]:
    """Read and check ``claims.yaml``."""
    path = find_root(root) / CLAIMS_FILE
    loaded = load_yaml_file(path)
    if loaded.problems:
        p = loaded.problems[0]
        raise claim_error(CLAIMS_FILE, p.line, p.field, p.message)
    raws = loaded.data.get("claims") if isinstance(loaded.data, dict) else None
    if not isinstance(raws, list):
        raise claim_error(CLAIMS_FILE, 1, "claims", "expected a list of claims")
    claims = [_parse_claim(raw, CLAIMS_FILE) for raw in raws]
    _unique(claims, raws)
    return claims
