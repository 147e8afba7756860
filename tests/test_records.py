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


# ---------------------------------------------------------------- the parse cache (issue 14)


def _copy_root(tmp_path):
    from masrl_kb.kb.synthetic import write_synthetic_root

    return write_synthetic_root(tmp_path / "kb", papers=5, exclusions=2)


def test_the_parse_cache_gives_the_same_records(tmp_path) -> None:
    from masrl_kb.kb.records import read_records

    root = _copy_root(tmp_path)
    cold = read_records(root, use_cache=False)
    first = read_records(root)
    assert (root / ".cache" / "records-v1.json").is_file()
    warm = read_records(root)
    for a, b, c in zip(cold.papers, first.papers, warm.papers, strict=True):
        assert a.data == b.data == c.data
        assert a.data.key_lines == c.data.key_lines and a.data.raw == c.data.raw
        assert type(c.data["added"]) is type(a.data["added"])


def test_only_a_changed_file_is_parsed_again(tmp_path, monkeypatch) -> None:
    from masrl_kb.kb import records

    root = _copy_root(tmp_path)
    records.read_records(root)
    parsed = []
    real = records.decode_yaml_bytes
    monkeypatch.setattr(records, "decode_yaml_bytes", lambda raw: parsed.append(raw) or real(raw))
    records.read_records(root)
    assert parsed == []
    path = sorted((root / "papers").glob("*.yaml"))[0]
    path.write_text(path.read_text().replace("Synthetic University", "Another University"))
    again = records.read_records(root)
    assert len(parsed) == 1 and b"Another University" in parsed[0]
    assert again.papers[0].data["affiliation"] == "Another University"


def test_a_corrupt_cache_is_ignored(tmp_path) -> None:
    import json

    from masrl_kb.kb.records import read_records

    root = _copy_root(tmp_path)
    expected = [r.data for r in read_records(root).papers]
    cache = root / ".cache" / "records-v1.json"
    data = json.loads(cache.read_text())
    for digest in data["entries"]:
        data["entries"][digest] = [[], {"M": "one", "K": 5}]  # a wrong shape
    cache.write_text(json.dumps(data))
    assert [r.data for r in read_records(root).papers] == expected
    cache.write_text("{not json")
    assert [r.data for r in read_records(root).papers] == expected
    cache.unlink()
    cache.symlink_to("/dev/zero")
    assert [r.data for r in read_records(root).papers] == expected
