"""The survey's claims (``claims.yaml``) re-checked on the current records."""

from __future__ import annotations

import operator
import os
from dataclasses import dataclass

import pandas as pd

from masrl_kb.kb.paths import find_root
from masrl_kb.kb.yamlio import load_yaml_file
from masrl_kb.query.frames import load_exclusions, load_papers, load_pool
from masrl_kb.query.lang import QueryError, parse, select_rows

CLAIMS_FILE = "claims.yaml"
TABLES = ("papers", "exclusions", "audited")
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


@dataclass(frozen=True)
class ClaimResult:
    """A claim with its value on the current records."""

    claim: Claim
    value: int
    holds: bool
    keys: tuple[str, ...]  # the matching records (empty for counts of whole tables)
    total: int | None = None  # rows matching ``of``, when the claim has one

    @property
    def expected_value(self) -> int:
        """The number the value is compared with ("all" resolves to ``total``)."""
        return self.total if self.claim.expected == "all" else self.claim.expected

    @property
    def shown_value(self) -> str:
        """The value as a reader sees it: ``N`` or ``N of M``."""
        return f"{self.value} of {self.total}" if self.total is not None else str(self.value)


def _claim_error(path: str, line: int, field: str, message: str) -> ClaimsFileError:
    return ClaimsFileError(f"{path}:{line}: {field}: {message}")


def _parse_claim(raw: object, path: str) -> Claim:
    line = getattr(raw, "line", 1)
    if not isinstance(raw, dict):
        raise _claim_error(path, line, "claims", "each claim must be a mapping")
    for name in ("id", "statement", "table", "op", "expected"):
        if name not in raw:
            raise _claim_error(path, line, name, "missing required field")
    if raw["table"] not in TABLES:
        allowed = ", ".join(TABLES)
        raise _claim_error(path, raw.line_of("table"), "table", f"allowed: {allowed}")
    if raw["op"] not in OPERATORS:
        allowed = ", ".join(OPERATORS)
        raise _claim_error(path, raw.line_of("op"), "op", f"allowed: {allowed}")
    expected = raw["expected"]
    if expected == "all" and not raw.get("of"):
        raise _claim_error(path, raw.line_of("expected"), "expected", '"all" needs an `of` query')
    if expected != "all" and (isinstance(expected, bool) or not isinstance(expected, int)):
        message = 'must be a whole number, or "all" with an `of` query'
        raise _claim_error(path, raw.line_of("expected"), "expected", message)
    for name in ("of", "group", "label"):
        if name in raw and not isinstance(raw[name], str):
            raise _claim_error(path, raw.line_of(name), name, "must be text")
    where = raw.get("where")
    where_line = raw.line_of("where") if "where" in raw else line
    of_line = raw.line_of("of") if "of" in raw else line
    for name, text, at in (("where", where, where_line), ("of", raw.get("of"), of_line)):
        if text is not None:
            try:
                parse(text)  # the language's own rules; columns and values are checked per table
            except QueryError as err:
                raise _claim_error(path, at, name, str(err)) from None
    return Claim(
        str(raw["id"]),
        str(raw["statement"]),
        raw["table"],
        where,
        raw["op"],
        expected,
        raw.get("of"),
        raw.get("group"),
        raw.get("label"),
        where_line,
        of_line,
    )


def load_claims(root: str | os.PathLike[str] | None = None) -> list[Claim]:
    """Read and check ``claims.yaml``."""
    path = find_root(root) / CLAIMS_FILE
    loaded = load_yaml_file(path)
    if loaded.problems:
        p = loaded.problems[0]
        raise _claim_error(CLAIMS_FILE, p.line, p.field, p.message)
    raws = loaded.data.get("claims") if isinstance(loaded.data, dict) else None
    if not isinstance(raws, list):
        raise _claim_error(CLAIMS_FILE, 1, "claims", "expected a list of claims")
    return [_parse_claim(raw, CLAIMS_FILE) for raw in raws]


def _matching(
    claim: Claim, papers: pd.DataFrame, exclusions: pd.DataFrame, where: str | None
) -> pd.Index:
    if claim.table == "audited":
        return papers.index.append(exclusions.index)
    table = papers if claim.table == "papers" else exclusions
    if not where:
        return table.index
    try:
        return select_rows(table, where).index
    except QueryError as err:
        name, line = ("where", claim.where_line) if where == claim.where else ("of", claim.of_line)
        raise _claim_error(CLAIMS_FILE, line, name, f"claim {claim.id}: {err}") from None


def evaluate_claims(
    claims: list[Claim] | None = None,
    papers: pd.DataFrame | None = None,
    exclusions: pd.DataFrame | None = None,
    root: str | os.PathLike[str] | None = None,
) -> list[ClaimResult]:
    """Each claim's current value and whether it holds."""
    claims = load_claims(root) if claims is None else claims
    if papers is None and exclusions is None:
        papers, exclusions = load_pool(root)
    papers = load_papers(root) if papers is None else papers
    exclusions = load_exclusions(root) if exclusions is None else exclusions
    results = []
    for claim in claims:
        index = _matching(claim, papers, exclusions, claim.where)
        total = len(_matching(claim, papers, exclusions, claim.of)) if claim.of else None
        value = len(index)
        keys = tuple(index) if claim.where else ()
        expected = total if claim.expected == "all" else claim.expected
        holds = OPERATORS[claim.op](value, expected)
        results.append(ClaimResult(claim, value, holds, keys, total))
    return results


def claims_frame(results: list[ClaimResult]) -> pd.DataFrame:
    """Claim results as a table: id, statement, expected, value, holds."""
    rows = [
        {
            "id": r.claim.id,
            "statement": r.claim.statement,
            "expected": f"{r.claim.op} {r.expected_value}",
            "value": r.shown_value,
            "holds": r.holds,
        }
        for r in results
    ]
    return pd.DataFrame(rows, columns=["id", "statement", "expected", "value", "holds"])
