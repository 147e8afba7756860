"""ASReview's own readers and writers on a round's files.

asreview is not a dependency (it pins an older pandas), so this file is
collected only where asreview is installed (tests/conftest.py); .ci/run runs
it in an environment of its own.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from asreview import data as asreview_data

from masrl_kb.contrib.screen.batches import run_round
from masrl_kb.contrib.screen.decide import decide_round
from masrl_kb.contrib.sources.arxiv import Paging
from masrl_kb.kb.rounds import load_round
from tests.screening_stub import ScreeningStub, copy_kb

# Needs asreview in an environment of its own (.ci/run makes one).
pytestmark = pytest.mark.slow

ROUND = "2026-11-16_2026-11-22"


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    root = copy_kb(tmp_path / "kb")
    stub = ScreeningStub()
    try:
        run_round(
            dt.date(2026, 11, 16),
            dt.date(2026, 11, 22),
            root=root,
            paging=Paging(page_size=3, delay_seconds=0),
            endpoint=stub.url,
        )
    finally:
        stub.close()
    return root


def test_asreview_reads_our_ris(kb: Path) -> None:
    frame = asreview_data.RISReader.read_data(kb / "screening" / ROUND / "candidates.ris")
    rnd = load_round(kb, ROUND)
    assert len(frame) == rnd.counts["to_screen"]
    assert set(frame["id"]) == {"2611.90001", "2611.90002", "2611.90003", "2611.90006"}
    assert all(isinstance(t, str) and t for t in frame["title"])
    assert all(isinstance(a, str) and a for a in frame["abstract"])


def test_asreview_csv_export_decides_a_round(kb: Path, tmp_path: Path) -> None:
    frame = asreview_data.RISReader.read_data(kb / "screening" / ROUND / "candidates.ris")
    labels = {"2611.90001": 1, "2611.90003": 0}
    frame["included"] = [labels.get(i) for i in frame["id"]]
    export = tmp_path / "asreview_export.csv"
    asreview_data.CSVWriter.write_data(frame, export)
    decide_round(ROUND, export, root=kb, default_reason="out_of_scope")
    decided = load_round(kb, ROUND).decided
    assert {k: v["decision"] for k, v in decided.items()} == {
        "2611.90001": "include",
        "2611.90003": "exclude",
    }
