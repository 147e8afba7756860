"""``masrl_kb.decisions()``: the decisions as a long table, on the real pool."""

from __future__ import annotations

import pandas as pd
import pytest

import masrl_kb
from masrl_kb.query.decision_table import DECISION_COLUMNS

IDS = ("O1", "O2", "O3", "O4", "O5")


@pytest.fixture(scope="module")
def papers() -> pd.DataFrame:
    return masrl_kb.load_papers()


@pytest.fixture(scope="module")
def table(papers: pd.DataFrame) -> pd.DataFrame:
    return masrl_kb.decisions(papers=papers)


def test_one_row_per_paper_and_decision(papers, table) -> None:
    assert list(table.columns) == DECISION_COLUMNS
    assert len(table) == sum(len(d) for d in papers["decisions"])
    assert not table.duplicated(["key", "decision"]).any()
    assert set(table["decision"]) <= set(IDS)


@pytest.mark.parametrize("did", IDS)
def test_counts_agree_with_the_papers_columns(papers, table, did: str) -> None:
    rows = table[table["decision"] == did]
    assert set(rows["key"]) == set(papers.index[papers[did] != "absent"])
    assert set(rows.loc[rows["learned"], "key"]) == set(papers.index[papers[did] == "learned"])
    learned = papers[papers[did] == "learned"]
    mechanisms = rows[rows["learned"]].set_index("key")["mechanism"]
    assert (mechanisms.loc[learned.index] == learned[f"{did}_mechanism"]).all()


def test_learned_rows_carry_their_evidence(table) -> None:
    learned = table[table["learned"]]
    assert learned["mechanism"].isin(["explicit", "implicit"]).all()
    assert learned["evidence_url"].str.startswith("http").all()
    assert learned["where"].notna().all() and learned["source"].notna().all()
    assert table.loc[~table["learned"], "mechanism"].isna().all()


def test_provisional_is_the_evidence_reason(papers, table) -> None:
    for row in table.itertuples():
        listed = next(d for d in papers.at[row.key, "decisions"] if d["id"] == row.decision)
        reason = (listed.get("evidence") or {}).get("provisional")
        assert row.provisional == reason if reason else pd.isna(row.provisional)
        assert row.why == listed["why"]
    assert table["provisional"].notna().any()  # the pool has provisional evidence to show


def test_it_is_exported_beside_evaluations_and_results() -> None:
    assert {"decisions", "evaluations", "results"} <= set(masrl_kb.__all__)
    with pytest.raises(masrl_kb.UnknownNameError):
        masrl_kb.decisions(papers=pd.DataFrame({"key": []}))
