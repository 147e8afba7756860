"""Facts the knowledge base's own records must keep (not counts: those are computed)."""

from __future__ import annotations

import datetime as dt

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
def test_representative_papers_carry_their_decision(decision: str) -> None:
    # The survey's figure is the survey's reading: checked in its view, where the codings
    # its claims were checked against stand (a later adjudication may differ, C-SRV-1).
    from masrl_kb.query.views import survey_view

    papers = survey_view(*masrl_kb.load_pool())[0]
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


def test_survey_pool_entered_on_cut_off_and_rounds_after_it(papers: pd.DataFrame) -> None:
    """What validate holds the pool to, and no more (it is the whole gate): no paper is
    added before the survey's cut-off or after today, and every inclusion a round records
    is a pooled paper. A paper added later by pull request outside any round is accepted;
    the rounds page lists it under "Added outside screening rounds"."""
    from masrl_kb.kb.rounds import load_rounds
    from masrl_kb.query.views import survey_baseline

    baseline = pd.Timestamp(survey_baseline())
    assert (papers["added"] >= baseline).all()
    assert (papers["added"] <= pd.Timestamp(dt.date.today())).all()
    brought = {
        d["record"] for r in load_rounds() for d in r.decided.values() if d["decision"] == "include"
    }
    assert brought <= {f"papers/{k}.yaml" for k in papers.index}


# ------------------------------------------------ no parse cache in the clone (issue 22)


def _copy_root(tmp_path):
    from masrl_kb.kb.synthetic import write_synthetic_root

    return write_synthetic_root(tmp_path / "kb", papers=5, exclusions=2)


def _plant_old_caches(root) -> None:
    """What the caches of issue 14 kept in the clone, forged: a broken record parses fine."""
    import json

    folder = root / ".cache"
    folder.mkdir()
    entry = json.dumps([[], {"affiliation": "Forged University", "\u0000l": 1, "\u0000k": [1]}])
    body = json.dumps({"entries": {"0" * 40: entry}, "checks": {}})
    (folder / "records-v2.json").write_text('{"format": "masrl-kb-records/2"}\n' + body)
    (folder / "frames-v1.json").symlink_to("/dev/zero")


def test_records_are_always_parsed_from_their_files(tmp_path, monkeypatch) -> None:
    from masrl_kb.kb import records

    root = _copy_root(tmp_path)
    _plant_old_caches(root)
    first = records.read_records(root)
    parsed = []
    real = records.decode_yaml_bytes
    monkeypatch.setattr(records, "decode_yaml_bytes", lambda raw: parsed.append(raw) or real(raw))
    again = records.read_records(root)
    assert len(parsed) == len(first.papers) + len(first.exclusions) == 7
    for a, b in zip(first.papers, again.papers, strict=True):
        assert a.data == b.data and a.data.key_lines == b.data.key_lines
    assert {r.data["affiliation"] for r in again.papers} == {"Synthetic University"}


def test_a_cache_planted_in_the_clone_cannot_hide_a_broken_record(tmp_path) -> None:
    """A pull request may carry any file: nothing under the clone is read as a cache."""
    from masrl_kb.query.datafiles import validate

    root = _copy_root(tmp_path)
    assert validate(root).ok
    _plant_old_caches(root)
    bad = sorted((root / "papers").glob("*.yaml"))[0]
    bad.write_text(bad.read_text().replace("year: ", "year: 0x", 1))
    report = validate(root)
    assert not report.ok and report.problems[0].field == "year"
