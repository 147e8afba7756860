"""The hostile-input corpus (tests/hostile/): every case is rejected cleanly.

Cleanly means: a non-zero exit, a line naming the file and the field, no
traceback, no overlong line, no secret content echoed and the hostile file
untouched (see :func:`tests.hostile.corpus.run_case`).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.hostile.corpus import all_cases, run_case

CASES = all_cases()


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_hostile_input_is_rejected_cleanly(case, tmp_path: Path) -> None:
    outcome = run_case(case, tmp_path)
    assert outcome.kind == "rejected", f"{outcome.kind}: {outcome.reason}\n{outcome.output[:2000]}"


def test_the_corpus_covers_every_group() -> None:
    groups = {c.group for c in CASES}
    assert {"text", "year", "date", "lookalike", "yaml", "url", "echo"} <= groups
    assert {"filesystem", "taxonomy"} <= groups
