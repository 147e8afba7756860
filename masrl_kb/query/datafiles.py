"""``validate`` over every data file: the records (with the readings and benchmarks),
then ``claims.yaml``, ``protocol.yaml`` and the screening rounds. No pandas is needed.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from masrl_kb.kb import cache
from masrl_kb.kb.paths import find_root
from masrl_kb.kb.problem import Problem, Report
from masrl_kb.query.args import checked


def _problems(load: Callable[[Path], object], root: Path, rel: str) -> list[Problem]:
    """What loading one data file raises, as problems (none when it is absent)."""
    from masrl_kb.kb.protocol import ProtocolError
    from masrl_kb.kb.rounds import RoundError
    from masrl_kb.query.claimsfile import ClaimsFileError

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
    from masrl_kb.kb.protocol import PROTOCOL_FILE, load_protocol
    from masrl_kb.kb.rounds import (
        SCREENING_DIR,
        decided_record_problems,
        load_rounds,
        source_kind_problems,
        waiting_problems,
    )
    from masrl_kb.query.claimsfile import CLAIMS_FILE, load_claims

    base = find_root(root)
    return [
        *_problems(load_claims, base, CLAIMS_FILE),
        *_problems(load_protocol, base, PROTOCOL_FILE),
        *_problems(load_rounds, base, f"{SCREENING_DIR}/"),
        *decided_record_problems(base),
        *source_kind_problems(base),
        *waiting_problems(base),
    ]


def compute_report(base: Path) -> Report:
    """Validate every record and data file under ``base`` (no cache)."""
    from masrl_kb.kb.record_checks import validate as validate_records_only
    from masrl_kb.kb.taxonomy import TaxonomyError, load_taxonomy

    report = validate_records_only(base)
    try:
        load_taxonomy(base)
    except TaxonomyError:
        return report  # the taxonomy's problems are the report; the rest reads it
    problems = sorted(set(report.problems) | set(data_file_problems(base)))
    return Report(problems, report.papers, report.exclusions)


def _validate_key(base: Path) -> str | None:
    return cache.data_fingerprint(base, "validate")


def _kept(base: Path, key: str | None) -> Report | None:
    kept = cache.load(f"validate-{key}", base) if key is not None else None
    return kept if isinstance(kept, Report) else None


def kept_report(root: str | os.PathLike[str] | None = None) -> Report | None:
    """The report kept in the user's cache (:mod:`masrl_kb.kb.cache`) for this very pool,
    or None. Reading it imports no model: a warm ``validate`` never loads pydantic."""
    base = find_root(root)
    return _kept(base, _validate_key(base))


@checked()
def validate(root: str | os.PathLike[str] | None = None) -> Report:
    """Validate every record and every data file under the data root (the kept report
    of an unchanged pool, else computed and kept)."""
    base = find_root(root)
    key = _validate_key(base)  # before reading: the report is of the files as they were then
    kept = _kept(base, key)
    if kept is not None:
        return kept
    report = compute_report(base)
    cache.store_if_unchanged("validate", key, report, lambda: _validate_key(base), base)
    return report
