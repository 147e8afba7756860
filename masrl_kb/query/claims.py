"""The survey's claims (``claims.yaml``) re-checked on the current records."""

from __future__ import annotations

import os
from dataclasses import dataclass

import pandas as pd

from masrl_kb.kb.paths import find_root
from masrl_kb.query.args import checked
from masrl_kb.query.claim_model import Claim
from masrl_kb.query.claimsfile import CLAIMS_FILE, ClaimsFileError, claim_error, load_claims
from masrl_kb.query.lang import OPERATORS, QueryError, select_rows
from masrl_kb.query.pool import load_pool

# Re-exported: callers import the claims file's names from here, beside the evaluation.
__all__ = ["CLAIMS_FILE", "ClaimResult", "ClaimsFileError", "evaluate_claims", "load_claims"]


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
        return _expected(self.claim, self.total)

    @property
    def shown_value(self) -> str:
        """The value as a reader sees it: ``N`` or ``N of M``."""
        return f"{self.value} of {self.total}" if self.total is not None else str(self.value)


def _expected(claim: Claim, total: int | None) -> int:
    # claims.yaml allows "all" only with an ``of`` query: ``total`` is then its count.
    return claim.expected if isinstance(claim.expected, int) else total or 0


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
        name = "where" if where == claim.where else "of"
        message = f"claim {claim.id}: {err}"
        raise claim_error(CLAIMS_FILE, claim.line_of(name), name, message) from None


@checked()
def evaluate_claims(
    claims: list[Claim] | None = None,
    papers: pd.DataFrame | None = None,
    exclusions: pd.DataFrame | None = None,
    root: str | os.PathLike[str] | None = None,
) -> list[ClaimResult]:
    """Each claim's current value and whether it holds."""
    if claims is None or papers is None or exclusions is None:
        root = find_root(root)  # once, for every file read below
    claims = load_claims(root) if claims is None else claims
    if papers is None or exclusions is None:
        pool = load_pool(root)
        papers = pool[0] if papers is None else papers
        exclusions = pool[1] if exclusions is None else exclusions
    results = []
    for claim in claims:
        index = _matching(claim, papers, exclusions, claim.where)
        total = len(_matching(claim, papers, exclusions, claim.of)) if claim.of else None
        holds = OPERATORS[claim.op](len(index), _expected(claim, total))
        keys = tuple(index) if claim.where else ()
        results.append(ClaimResult(claim, len(index), holds, keys, total))
    return results
