"""The authors index API: one row per (author, paper), co-authors, accent folding."""

from __future__ import annotations

import pytest

from masrl_kb.query.authors import authors, coauthors, fold
from masrl_kb.query.frames import load_papers
from masrl_kb.query.lang import QueryError


@pytest.fixture(scope="module")
def papers():
    return load_papers()


def test_one_row_per_author_and_paper(papers) -> None:
    table = authors(papers)
    assert len(table) == sum(len(a) for a in papers["authors"])
    for key, names in papers["authors"].items():
        rows = table[table["key"] == key].sort_values("position")
        assert list(rows["author"]) == list(names)
        assert list(rows["position"]) == list(range(1, len(names) + 1))


def test_coauthors_count_shared_papers(papers) -> None:
    table = authors(papers)
    name = table["author"].value_counts().index[0]
    shared = coauthors(name, papers)
    mine = set(table.loc[table["author"] == name, "key"])
    for other, n in shared.items():
        theirs = set(table.loc[table["author"] == other, "key"])
        assert n == len(mine & theirs) > 0
    assert name not in shared.index


def test_an_unknown_author_is_a_query_error_with_a_suggestion(papers) -> None:
    name = authors(papers)["author"].iloc[0]
    with pytest.raises(QueryError, match="did you mean"):
        coauthors(name[:-1], papers)


@pytest.mark.parametrize(
    ("text", "folded"), [("Tramèr", "tramer"), ("Balunović", "balunovic"), ("Łukasz", "łukasz")]
)
def test_fold_drops_accents_and_case(text: str, folded: str) -> None:
    assert fold(text) == folded
