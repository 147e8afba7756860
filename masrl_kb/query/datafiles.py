"""``validate`` over every data file: the records, then ``claims.yaml``,
``protocol.yaml`` and the screening rounds (``screening/*/round.yaml``).

The readings (``readings/``) and the benchmark registry (``benchmarks.yaml``)
are checked with the records (:func:`masrl_kb.kb.validate.validate_records`).
Each file's own loader is the rule book; this module turns what it raises
into :class:`~masrl_kb.kb.problem.Problem` lines (``path:line: field:
message``) and adds bounds the loaders leave open. No pandas is needed.
"""

from __future__ import annotations

import datetime as dt
import os
import re
from pathlib import Path

from masrl_kb.kb import cache
from masrl_kb.kb.paths import find_root
from masrl_kb.kb.problem import Problem
from masrl_kb.kb.protocol import PROTOCOL_FILE, ProtocolError, load_protocol
from masrl_kb.kb.rounds import COUNTS, ROUND_FILE, SCREENING_DIR, Round, RoundError, load_rounds
from masrl_kb.kb.taxonomy import TaxonomyError, load_taxonomy
from masrl_kb.kb.validate import MIN_DATE, Report, latest_date
from masrl_kb.kb.validate import validate as validate_records_only
from masrl_kb.kb.yamlio import LineDict, load_yaml_file
from masrl_kb.query.claimsfile import CLAIMS_FILE, ClaimsFileError, load_claims

MAX_ROUND_COUNT = 1_000_000  # entries one screening round may count
_PROBLEM = re.compile(r"^(?P<path>[^:\n]+):(?P<line>[0-9]+): (?P<field>[^:\n]+): (?P<message>.*)$")


def as_problem(text: str, path: str, field: str) -> Problem:
    """A loader's ``path:line: field: message`` text as a Problem (else one on ``path``)."""
    first = text.splitlines()[0] if text else ""
    match = _PROBLEM.match(first)
    if match:
        return Problem(match["path"], int(match["line"]), match["field"], match["message"])
    return Problem(path, 1, field, first or "cannot be read")


def _present(path: Path) -> bool:
    return path.is_symlink() or path.exists()


def claims_problems(root: Path) -> list[Problem]:
    if not _present(root / CLAIMS_FILE):  # a bare data root may carry no claims
        return []
    try:
        load_claims(root)
    except ClaimsFileError as err:
        return [as_problem(str(err), CLAIMS_FILE, "claims")]
    return []


def protocol_problems(root: Path) -> list[Problem]:
    if not _present(root / PROTOCOL_FILE):  # the site then shows the clone's protocol
        return []
    try:
        load_protocol(root)
    except ProtocolError as err:
        return list(err.problems)
    return []


def _bounded(data: LineDict, rel: str, name: str, prefix: str = "") -> list[Problem]:
    value = data.get(name)
    if isinstance(value, int) and not 0 <= value <= MAX_ROUND_COUNT:
        line = data.line_of(name) or data.line
        message = (
            f"{value if abs(value) < 10**12 else 'a huge number'} is outside 0..{MAX_ROUND_COUNT}"
        )
        return [Problem(rel, line, f"{prefix}{name}", message)]
    return []


def _round_bounds(root: Path, rnd: Round) -> list[Problem]:
    """Counts and dates of a parsed round that its parser does not bound."""
    rel = f"{SCREENING_DIR}/{rnd.id}/{ROUND_FILE}"
    data = load_yaml_file(root / rel).data
    if not isinstance(data, LineDict):
        return []
    problems = []
    # (table, the names it must bound): every name of the per-family table is a family.
    for prefix, names in (("counts", COUNTS), ("retrieved_per_family", None)):
        table = data.get(prefix)
        if isinstance(table, LineDict):
            problems += [p for n in names or table for p in _bounded(table, rel, n, f"{prefix}.")]
    last = latest_date()
    for name, day in (("window", rnd.since), ("window", rnd.until), ("run_on", rnd.run_on)):
        if isinstance(day, dt.datetime) or not MIN_DATE <= day <= last:
            message = (
                f"date {day.isoformat()} is outside {MIN_DATE.isoformat()}..{last.isoformat()}"
            )
            problems.append(Problem(rel, data.line_of(name) or 1, name, message))
    dated = not any(isinstance(d, dt.datetime) for d in (rnd.since, rnd.until))
    if dated and rnd.since > rnd.until:
        message = f"since {rnd.since.isoformat()} is after until {rnd.until.isoformat()}"
        problems.append(Problem(rel, data.line_of("window") or 1, "window", message))
    return problems


def round_problems(root: Path) -> list[Problem]:
    try:
        rounds = load_rounds(root)
    except RoundError as err:
        return [as_problem(str(err), f"{SCREENING_DIR}/", "round")]
    return [p for rnd in rounds for p in _round_bounds(root, rnd)]


def data_file_problems(root: str | os.PathLike[str] | None = None) -> list[Problem]:
    """Every problem of claims.yaml, protocol.yaml and the screening rounds."""
    base = find_root(root)
    return claims_problems(base) + protocol_problems(base) + round_problems(base)


def _records_report(base: Path) -> Report:
    """The records' report: as kept for an unchanged pool (:mod:`masrl_kb.kb.cache`)
    or computed, and then kept."""
    key = cache.pool_fingerprint(base, "validate")
    kept = cache.load(f"validate-{key}") if key is not None else None
    if isinstance(kept, Report):
        return kept
    report = validate_records_only(base)
    if key is not None:
        cache.store(f"validate-{key}", report)
    return report


def validate(root: str | os.PathLike[str] | None = None) -> Report:
    """Validate every record and every data file under the data root."""
    base = find_root(root)
    report = _records_report(base)
    try:
        load_taxonomy(base)
    except TaxonomyError:
        return report  # the taxonomy's problems are the report; the rest reads it
    problems = sorted(set(report.problems) | set(data_file_problems(base)))
    return Report(problems, report.papers, report.exclusions)
