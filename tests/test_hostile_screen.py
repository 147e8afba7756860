"""The screening groups of the hostile-input corpus (tests/hostile/screen_cases.py):
``screen import``, ``screen decide`` and ``screen run feeds``, each case rejected
cleanly: a non-zero exit within its time, one ``file:line: field:`` line (or the
expected message), no traceback, no control characters, no data file changed."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.hostile.screen_cases import run_screen_case, screen_cases

CASES = screen_cases()


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_screening_input_is_rejected_cleanly(case, tmp_path: Path) -> None:
    outcome = run_screen_case(case, tmp_path)
    assert outcome.kind == "rejected", f"{outcome.kind}: {outcome.reasons}\n{outcome.output[:2000]}"


def test_the_screening_groups_are_covered() -> None:
    groups = {c.group for c in CASES}
    assert groups == {"screen import", "screen decide", "screen run feeds"}
    assert len({c.id for c in CASES}) == len(CASES)
