"""Facts the knowledge base's own records must keep (not counts: those are computed)."""

from __future__ import annotations

import pandas as pd
import pytest

import masrl_kb

# The survey's figure names these papers as representatives of each decision.
REPRESENTATIVES = {
    "O1": ["kimi-k2-5", "agentspawn", "halo"],
    "O2": ["puppeteer", "paramanager"],
    "O3": ["debate-as-reward", "latentmas"],
    "O4": ["m-grpo", "context-folding"],
}


@pytest.fixture(scope="module")
def papers() -> pd.DataFrame:
    return masrl_kb.load_papers()


@pytest.mark.parametrize("decision", sorted(REPRESENTATIVES))
def test_representative_papers_carry_their_decision(papers: pd.DataFrame, decision: str) -> None:
    for key in REPRESENTATIVES[decision]:
        assert papers.loc[key, decision] != "absent", key


def test_kimi_parl_learns_spawning(papers: pd.DataFrame) -> None:
    assert papers.loc["kimi-k2-5", "O1"] == "learned"


def test_spot_check_disagreement_keeps_the_survey_tag(papers: pd.DataFrame) -> None:
    # The second reader would tag HALO's credit unit as orchestrator; the survey's tag stays.
    assert papers.loc["halo", "credit_unit"] == "role"


def test_every_decision_has_a_reason(papers: pd.DataFrame) -> None:
    for key, decisions in papers["decisions"].items():
        for d in decisions:
            assert len(d["why"].split()) >= 4, (key, d)


def test_summaries_are_short(papers: pd.DataFrame) -> None:
    for key, summary in papers["summary"].items():
        assert 5 <= len(summary.split()) <= 90, key


def test_survey_pool_entered_on_cut_off(papers: pd.DataFrame) -> None:
    assert (papers["added"] == pd.Timestamp("2026-05-04")).all()
