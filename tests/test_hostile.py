"""The hostile-input corpus (tests/hostile/): every case is rejected cleanly,
every probe survived cleanly.

Rejected cleanly means: a non-zero exit, a line naming the file and the
field, no traceback, no overlong line, no secret content echoed, the hostile
file and every record untouched (see :func:`tests.hostile.corpus.run_case`).
Survived cleanly (CSV formulas, caches; :mod:`tests.hostile.probes`): the
command works, the output is inert and nothing outside the data root changed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.hostile.corpus import all_cases, run_case
from tests.hostile.probes import all_probes, run_probe
from tests.hostile.release_cases import ReleaseCase, release_cases, run_release_case

CASES = all_cases()
PROBES = all_probes()


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_hostile_input_is_rejected_cleanly(case, tmp_path: Path) -> None:
    outcome = run_case(case, tmp_path)
    assert outcome.kind == "rejected", f"{outcome.kind}: {outcome.reason}\n{outcome.output[:2000]}"


@pytest.mark.parametrize("probe", PROBES, ids=[p.id for p in PROBES])
def test_hostile_input_is_survived_cleanly(probe, tmp_path: Path) -> None:
    outcome = run_probe(probe, tmp_path)
    assert outcome.kind == "clean", f"{outcome.kind}: {outcome.reason}"


RELEASE_CASES = release_cases()


@pytest.mark.parametrize("case", RELEASE_CASES, ids=[c.id for c in RELEASE_CASES])
def test_release_refuses_hostile_input_cleanly(case: ReleaseCase, tmp_path: Path) -> None:
    outcome = run_release_case(case, tmp_path)
    assert outcome.kind == "rejected" and not outcome.reasons, (outcome.reasons, outcome.output)


def test_the_corpus_covers_every_group() -> None:
    groups = {c.group for c in CASES}
    assert {"text", "year", "date", "lookalike", "yaml", "url", "echo"} <= groups
    assert {"filesystem", "taxonomy", "datafiles", "import-upstream"} <= groups
    assert {p.group for p in PROBES} == {"csv-formulas", "caches", "api-arguments"}
