"""``masrl-kb screen fetch`` against hostile loopback servers (tests/hostile/sources_cases.py).

Each case must be refused with one clean line, the documented exit code and
no file, or, for a 429 then a good answer and for text that only needs
cleaning, write a CSV free of control characters; never a hang past the
deadline, a traceback or a control character on the terminal.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.hostile.sources_cases import SourceCase, run_source_case, source_cases

CASES = source_cases()


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_fetch_survives_a_hostile_server(case: SourceCase, tmp_path: Path) -> None:
    outcome = run_source_case(case, tmp_path)
    expected = "rejected" if case.expect == "reject" else "accepted"
    assert outcome.kind == expected and not outcome.reasons, (outcome.reasons, outcome.output)


def test_every_adapter_meets_the_whole_group() -> None:
    names: dict[str, set[str]] = {}
    for case in CASES:
        names.setdefault(case.adapter.source, set()).add(case.name)
    assert set(names) == {"openreview", "openalex", "semantic-scholar"}
    shared = set.intersection(*names.values())
    for wanted in ("malformed-json", "wrong-shape", "oversized", "hung", "always-429"):
        assert wanted in shared
