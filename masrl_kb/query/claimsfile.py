"""``claims.yaml`` read and checked, with no pandas (``validate`` runs this): each claim is
a :class:`~masrl_kb.query.claim_model.Claim`, its queries parsed; their columns and values
are checked when :mod:`masrl_kb.query.claims` runs them."""

from __future__ import annotations

import os

from masrl_kb.kb.model import base
from masrl_kb.kb.paths import find_root
from masrl_kb.kb.problem import Problem
from masrl_kb.kb.text import shorten
from masrl_kb.kb.yamlio import LineDict, load_yaml_file
from masrl_kb.query.args import checked
from masrl_kb.query.claim_model import Claim

CLAIMS_FILE = "claims.yaml"


class ClaimsFileError(ValueError):
    """``claims.yaml`` is malformed: the message is the first problem, ``found`` each one
    (not ``problems``: the command line would call a claims file invalid records)."""

    def __init__(self, found: list[Problem]) -> None:
        super().__init__(str(found[0]))
        self.found = found


def claim_error(path: str, line: int, field: str, message: str) -> ClaimsFileError:
    return ClaimsFileError([Problem(path, line, field, message)])


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
