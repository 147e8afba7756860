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


def test_survey_pool_entered_on_cut_off_and_rounds_after_it(papers: pd.DataFrame) -> None:
    """The survey's pool is exactly the records added on its cut-off (claims.yaml's
    pool size); every later record came in through a screening round."""
    from masrl_kb.kb.rounds import load_rounds
    from masrl_kb.query.claimsfile import load_claims
    from masrl_kb.query.views import survey_baseline

    baseline = pd.Timestamp(survey_baseline())
    expected = next(c.expected for c in load_claims() if c.id == "pool-size")
    assert (papers["added"] == baseline).sum() == expected
    assert (papers["added"] >= baseline).all()
    brought = {
        d["record"] for r in load_rounds() for d in r.decided.values() if d["decision"] == "include"
    }
    later = {f"papers/{k}.yaml" for k in papers.index[papers["added"] > baseline]}
    assert later == brought


# ---------------------------------------------------------------- the parse cache (issue 14)


def _copy_root(tmp_path):
    from masrl_kb.kb.synthetic import write_synthetic_root

    return write_synthetic_root(tmp_path / "kb", papers=5, exclusions=2)


def test_the_parse_cache_gives_the_same_records(tmp_path) -> None:
    from masrl_kb.kb.records import read_records

    root = _copy_root(tmp_path)
    cold = read_records(root, use_cache=False)
    first = read_records(root)
    from masrl_kb.kb.cache import CACHE_DIR, CACHE_FILE

    assert (root / CACHE_DIR / CACHE_FILE).is_file()
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


def _rewrite_cache(root, change, sign: bool) -> None:
    import json

    from masrl_kb.kb import cache

    path = root / cache.CACHE_DIR / cache.CACHE_FILE
    head, _, body = path.read_bytes().partition(b"\n")
    data = json.loads(body)
    change(data)
    body = json.dumps(data).encode()
    meta = json.loads(head)
    if sign:
        meta["mac"] = cache._mac(cache._cache_key(), body)
    path.write_bytes(json.dumps(meta).encode() + b"\n" + body)


def test_a_corrupt_cache_entry_is_parsed_again(tmp_path) -> None:
    from masrl_kb.kb.records import read_records

    root = _copy_root(tmp_path)
    expected = [r.data for r in read_records(root).papers]

    def corrupt(data) -> None:
        for digest in data["entries"]:
            data["entries"][digest] = '[[], {"\\u0000l": "one"}]'  # a wrong shape

    _rewrite_cache(root, corrupt, sign=True)
    assert [r.data for r in read_records(root).papers] == expected
    path = root / ".cache"
    for name in path.iterdir():
        name.write_text("{not json")
    assert [r.data for r in read_records(root).papers] == expected
    for name in path.iterdir():
        name.unlink()
        name.symlink_to("/dev/zero")
    assert [r.data for r in read_records(root).papers] == expected


def test_a_forged_cache_is_ignored(tmp_path) -> None:
    """A cache file that came with a pull request (no valid HMAC) is not used."""
    from masrl_kb.kb.records import read_records
    from masrl_kb.kb.validate import validate

    root = _copy_root(tmp_path)
    assert validate(root).ok

    def forge(data) -> None:
        for digest, entry in data["entries"].items():
            data["entries"][digest] = entry.replace("Synthetic University", "Forged University")

    _rewrite_cache(root, forge, sign=False)
    assert {r.data["affiliation"] for r in read_records(root).papers} == {"Synthetic University"}
    # Verdicts are covered by the same HMAC: a forged "no problems" is not believed either.
    bad = sorted((root / "papers").glob("*.yaml"))[0]
    bad.write_text(bad.read_text().replace("year: ", "year: 0x", 1))
    assert not validate(root).ok
