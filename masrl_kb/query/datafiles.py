"""``validate`` over every data file: the records (with the readings and benchmarks),
then ``claims.yaml``, ``protocol.yaml`` and the screening rounds. No pandas is needed.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from masrl_kb.kb import cache
from masrl_kb.kb.paths import find_root
from masrl_kb.kb.problem import Problem
from masrl_kb.kb.protocol import PROTOCOL_FILE, ProtocolError, load_protocol
from masrl_kb.kb.rounds import SCREENING_DIR, RoundError, load_rounds
from masrl_kb.kb.taxonomy import TaxonomyError, load_taxonomy
from masrl_kb.kb.validate import Report
from masrl_kb.kb.validate import validate as validate_records_only
from masrl_kb.query.claimsfile import CLAIMS_FILE, ClaimsFileError, load_claims


def _problems(load: Callable[[Path], object], root: Path, rel: str) -> list[Problem]:
    """What loading one data file raises, as problems (none when it is absent)."""
    if rel.endswith(".yaml") and not os.path.lexists(root / rel):
        return []  # a bare data root may carry no claims; the site then shows the clone's protocol
    try:
        load(root)
    except ProtocolError as err:
        return err.problems
    except (ClaimsFileError, RoundError) as err:
        return err.found or [Problem(rel, 1, "file", str(err))]
    return []


def data_file_problems(root: str | os.PathLike[str] | None = None) -> list[Problem]:
    """Every problem of claims.yaml, protocol.yaml and the screening rounds."""
    base = find_root(root)
    return [
        *_problems(load_claims, base, CLAIMS_FILE),
        *_problems(load_protocol, base, PROTOCOL_FILE),
        *_problems(load_rounds, base, f"{SCREENING_DIR}/"),
    ]


def _records_report(base: Path) -> Report:
    """The records' report, kept for an unchanged pool (:mod:`masrl_kb.kb.cache`)."""
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
