"""The authors index API: one row per (author, paper), co-authors, accent folding."""

from __future__ import annotations

import pandas as pd
import pytest

from masrl_kb.query.authors import authors, coauthors, compatible, fold, people
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
    name = table["person"].value_counts().index[0]
    shared = coauthors(name, papers)
    mine = set(table.loc[table["person"] == name, "key"])
    for other, n in shared.items():
        theirs = set(table.loc[table["person"] == other, "key"])
        assert n == len(mine & theirs) > 0
    assert name not in shared.index
    assert list(shared) == sorted(shared, reverse=True)  # most shared first


@pytest.mark.parametrize(
    ("one", "other", "same"),
    [
        ("Torr, Philip", "Torr, Philip H. S.", True),  # a middle initial in one form only
        ("Levine, S.", "Levine, Sergey", True),  # an initial
        ("Kim, T.-K.", "Kim, Tae-Kyun", True),  # hyphenated initials
        ("Zhang, Jie", "Zhang, Jieyu", False),  # a longer name is another name
        ("Wu, Yi", "Wu, Yu", False),
        ("Tramèr, Florian", "Tramer, F.", True),  # accents ignored
        ("Smith, Eric", "Smith, Eric Michael", False),  # a spelled-out extra name
        ("Smith, Eric", "Smyth, Eric", False),
    ],
)
def test_compatible_names(one: str, other: str, same: bool) -> None:
    assert compatible(one, other) is same
    assert compatible(other, one) is same


def _pool(*rows: tuple[str, list[str], str]) -> pd.DataFrame:
    return pd.DataFrame(
        {"authors": [r[1] for r in rows], "affiliation": [r[2] for r in rows]},
        index=[r[0] for r in rows],
    )


def test_people_merge_only_corroborated_compatible_spellings() -> None:
    pool = _pool(
        ("a", ["Torr, Philip", "Doe, Jane"], "University of Oxford"),
        ("b", ["Torr, Philip H. S.", "Roe, Ann"], "University of Oxford / DeepMind"),
        ("c", ["Littman, Michael", "Doe, Jane"], "unknown"),
        ("d", ["Littman, Michael L."], "Brown University"),
        ("e", ["Wu, Y.", "Poe, Al"], "MIT"),
        ("f", ["Wu, Yi", "Poe, Al"], "CMU"),
        ("g", ["Wu, Yifan", "Poe, Al"], "Stanford"),
        ("h", ["Li, Y.", "Li, Yang"], "MIT"),  # two people on one paper
    )
    person = people(pool)
    assert person["Torr, Philip"] == person["Torr, Philip H. S."] == "Torr, Philip H. S."
    assert person["Littman, Michael"] == "Littman, Michael"  # nothing corroborates it
    # "Wu, Y." could be either of two corroborated people: all three stay apart.
    assert {person[n] for n in ("Wu, Y.", "Wu, Yi", "Wu, Yifan")} == {
        "Wu, Y.",
        "Wu, Yi",
        "Wu, Yifan",
    }
    assert person["Li, Y."] == "Li, Y." and person["Li, Yang"] == "Li, Yang"


def test_the_pool_has_one_entry_per_person(papers) -> None:
    """The issue's two people written two ways are one person each (C-AUT-2)."""
    table = authors(papers)
    person = dict(zip(table["author"], table["person"], strict=True))
    assert person["Torr, Philip"] == person["Torr, Philip H. S."]
    assert person["Foerster, Jakob"] == person["Foerster, Jakob N."]
    shared = coauthors("Torr, Philip", papers)
    assert shared.equals(coauthors("Torr, Philip H. S.", papers))


def test_an_unknown_author_is_a_query_error_with_a_suggestion(papers) -> None:
    name = authors(papers)["author"].iloc[0]
    with pytest.raises(QueryError, match="did you mean"):
        coauthors(name[:-1], papers)


@pytest.mark.parametrize(
    ("text", "folded"), [("Tramèr", "tramer"), ("Balunović", "balunovic"), ("Łukasz", "łukasz")]
)
def test_fold_drops_accents_and_case(text: str, folded: str) -> None:
    assert fold(text) == folded
