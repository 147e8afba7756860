"""The pandas API on the real records and on small synthetic roots."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pytest

import masrl_kb
from masrl_kb.kb.taxonomy import load_taxonomy
from masrl_kb.query.frames import InvalidRecordsError, axis_mask
from tests.conftest import GOOD_PAPER, REPO


@pytest.fixture(scope="module")
def papers() -> pd.DataFrame:
    return masrl_kb.load_papers()


def test_one_row_per_record_file(papers: pd.DataFrame) -> None:
    files = sorted(
        p.stem for p in (Path(masrl_kb.__file__).parent.parent / "papers").glob("*.yaml")
    )
    assert list(papers.index) == files
    assert papers.index.name == "key"


def test_tag_columns_are_categoricals_in_taxonomy_order(papers: pd.DataFrame) -> None:
    tax = load_taxonomy()
    for axis in ("category", "reward_type", "credit_unit", "topology", "reward_family"):
        dtype = papers[axis].dtype
        assert isinstance(dtype, pd.CategoricalDtype) and dtype.ordered
        assert list(dtype.categories) == list(tax[axis].ids)


def test_unused_value_still_exists(papers: pd.DataFrame) -> None:
    counts = papers["reward_family"].value_counts(sort=False)
    assert "R5" in counts.index
    assert counts["R5"] == int((papers["reward_type"] == "tool").sum())


def test_reward_family_follows_reward_type(papers: pd.DataFrame) -> None:
    tax = load_taxonomy()
    for rtype, family in zip(papers["reward_type"], papers["reward_family"], strict=True):
        assert tax.family_of(rtype) == family
    assert set(papers.loc[papers["reward_type"].isin(["debate", "verifier"]), "reward_family"]) <= {
        "R6"
    }


def test_decision_columns_match_the_decision_lists(papers: pd.DataFrame) -> None:
    for key, row in papers.iterrows():
        listed = {d["id"]: d["learned"] for d in row["decisions"]}
        for did in ("O1", "O2", "O3", "O4", "O5"):
            expected = "absent" if did not in listed else ("learned" if listed[did] else "present")
            assert row[did] == expected, (key, did)


def test_crosstab_keeps_empty_rows_and_columns(papers: pd.DataFrame) -> None:
    table = masrl_kb.crosstab("reward_family", "credit_unit", papers=papers)
    tax = load_taxonomy()
    assert list(table.index) == list(tax["reward_family"].ids)
    assert list(table.columns) == list(tax["credit_unit"].ids)
    assert table.loc["R5"].sum() == int((papers["reward_family"] == "R5").sum())
    assert table["token"].sum() == int((papers["credit_unit"] == "token").sum())
    assert table.to_numpy().sum() == len(papers)


def test_crosstab_cell_equals_cell_papers(papers: pd.DataFrame) -> None:
    table = masrl_kb.crosstab("topology", "credit_unit", papers=papers)
    for topology in table.index:
        for unit in table.columns:
            cell = masrl_kb.cell_papers("topology", topology, "credit_unit", unit, papers=papers)
            assert len(cell) == table.loc[topology, unit]
            assert (cell["topology"] == topology).all() and (cell["credit_unit"] == unit).all()


def test_strict_crosstab_counts_only_strict_papers(papers: pd.DataFrame) -> None:
    broad = masrl_kb.crosstab("reward_family", "credit_unit", papers=papers)
    strict = masrl_kb.crosstab("reward_family", "credit_unit", strict=True, papers=papers)
    assert strict.to_numpy().sum() == int(papers["credit_strict"].sum())
    assert (strict <= broad).to_numpy().all()
    message = papers[papers["credit_unit"] == "message"]
    assert strict["message"].sum() == int(message["credit_strict"].sum())


def test_decision_axis_counts_each_touched_decision(papers: pd.DataFrame) -> None:
    table = masrl_kb.crosstab("decision", "topology", papers=papers)
    learned = masrl_kb.crosstab("decision_learned", "topology", papers=papers)
    for did in table.index:
        assert table.loc[did].sum() == int((papers[did] != "absent").sum())
        assert learned.loc[did].sum() == int((papers[did] == "learned").sum())


def test_year_axis_covers_every_year(papers: pd.DataFrame) -> None:
    table = masrl_kb.crosstab("category", "year", papers=papers)
    years = list(table.columns)
    assert years == list(range(papers["year"].min(), papers["year"].max() + 1))
    assert table.to_numpy().sum() == len(papers)


def test_tag_matrix_is_boolean_and_consistent(papers: pd.DataFrame) -> None:
    matrix = masrl_kb.tag_matrix(papers=papers)
    assert matrix.shape[0] == len(papers)
    assert all(pd.api.types.is_bool_dtype(dtype) for dtype in matrix.dtypes)
    assert (matrix["credit_unit"].sum(axis=1) == 1).all()
    assert matrix[("decision_learned", "O5")].sum() == int((papers["O5"] == "learned").sum())
    strict = matrix["credit_strict"]
    assert (strict.to_numpy() <= matrix["credit_unit"].to_numpy()).all()


def test_select_uses_pandas_query(papers: pd.DataFrame) -> None:
    chosen = masrl_kb.select('credit_unit == "message" and credit_strict', papers=papers)
    expected = papers[(papers["credit_unit"] == "message") & papers["credit_strict"]]
    assert list(chosen.index) == list(expected.index)
    assert len(masrl_kb.select("", papers=papers)) == len(papers)


def test_value_counts_in_taxonomy_order(papers: pd.DataFrame) -> None:
    counts = masrl_kb.value_counts("credit_unit", papers=papers)
    assert list(counts.index) == list(load_taxonomy()["credit_unit"].ids)
    assert counts.sum() == len(papers)
    assert counts["message"] == int(axis_mask(papers, "credit_unit", "message").sum())


def test_exclusions_frame() -> None:
    exclusions = masrl_kb.load_exclusions()
    assert exclusions.index.name == "id"
    assert isinstance(exclusions["stage"].dtype, pd.CategoricalDtype)
    assert exclusions.loc["E001", "arxiv_id"] == "2305.14325"


def test_works_from_any_folder_of_the_clone(monkeypatch: pytest.MonkeyPatch) -> None:
    """The data root is the clone the current folder is in (tests/test_root.py: never the
    clone the package was installed from)."""
    monkeypatch.chdir(REPO / "papers")
    monkeypatch.delenv("MASRL_KB_ROOT", raising=False)
    assert len(masrl_kb.load_papers()) == len(list((REPO / "papers").glob("*.yaml")))


def test_root_from_environment(mini_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MASRL_KB_ROOT", os.fspath(mini_root))
    assert len(masrl_kb.load_papers()) == 3


def test_invalid_records_raise_with_every_problem(mini_root: Path) -> None:
    (mini_root / "papers" / "bad.yaml").write_text(GOOD_PAPER.replace("year: 2025", "year: x"))
    with pytest.raises(InvalidRecordsError) as err:
        masrl_kb.load_papers(mini_root)
    assert "papers/bad.yaml:5: year: expected a whole number, got 'x'" in str(err.value)
    assert len(err.value.problems) == 1


def test_load_pool_equals_the_two_loaders(papers: pd.DataFrame) -> None:
    pool_papers, pool_exclusions = masrl_kb.load_pool()
    pd.testing.assert_frame_equal(pool_papers, papers)
    pd.testing.assert_frame_equal(pool_exclusions, masrl_kb.load_exclusions())


# ---------------------------------------------------------------- one error path


@pytest.mark.parametrize(
    ("call", "hint", "listed"),
    [
        (
            lambda p: masrl_kb.crosstab("reward_famly", "credit_unit", papers=p),
            "reward_family",
            "axes",
        ),
        (lambda p: masrl_kb.crosstab("topology", "credit_unt", papers=p), "credit_unit", "axes"),
        (
            lambda p: masrl_kb.cell_papers("topology", "swarn", "credit_unit", "agent", papers=p),
            "swarm",
            "allowed",
        ),
        (
            lambda p: masrl_kb.cell_papers("decision", "O11", "topology", "debate", papers=p),
            "O1",
            "allowed",
        ),
        (lambda p: masrl_kb.value_counts("scenaro", papers=p), "scenario", "axes"),
        (lambda p: masrl_kb.select('reward_famly == "R1"', papers=p), "reward_family", "columns"),
        (lambda p: masrl_kb.select('topology == "swarn"', papers=p), "swarm", "allowed"),
        (lambda p: masrl_kb.tag_matrix(papers=p.drop(columns=["topology"])), "topology", "columns"),
        (
            lambda p: masrl_kb.evaluations(papers=p.drop(columns=["evaluated_on"])),
            "evaluated_on",
            "columns",
        ),
    ],
)
def test_every_api_function_reports_unknown_names_the_same_way(
    papers: pd.DataFrame, call, hint: str, listed: str
) -> None:
    with pytest.raises(masrl_kb.UnknownNameError) as caught:
        call(papers)
    err = caught.value
    assert isinstance(err, ValueError) and isinstance(err, KeyError)
    assert isinstance(err, masrl_kb.QueryError)
    message = str(err)
    assert not message.startswith(("'", '"'))  # not KeyError's quoted form
    assert f"(did you mean {hint!r}?)" in message or listed == "columns" and hint in message
    assert f"; {listed}: " in message and "..." not in message and "more)" not in message


def test_unknown_column_lists_the_first_columns_and_a_count(papers: pd.DataFrame) -> None:
    """Issue 27: a long list is capped ("and N more"); the did-you-mean finds the name."""
    from masrl_kb.kb.text import NAMES_SHOWN
    from masrl_kb.query.lang import columns_of

    with pytest.raises(masrl_kb.UnknownNameError) as caught:
        masrl_kb.select('credit == "message"', papers=papers)
    listed, more = str(caught.value).split("; columns: ", 1)[1].rsplit(" and ", 1)
    assert listed.split(", ") == columns_of(papers)[:NAMES_SHOWN] and len(columns_of(papers)) > 40
    assert more == f"{len(columns_of(papers)) - NAMES_SHOWN} more"
    assert "(did you mean 'credit_unit'?)" in str(caught.value)


def test_unknown_axis_lists_the_first_axes_and_a_count(papers: pd.DataFrame) -> None:
    from masrl_kb.kb.text import NAMES_SHOWN
    from masrl_kb.query.frames import axes_of

    with pytest.raises(masrl_kb.UnknownNameError) as caught:
        masrl_kb.crosstab("nothing_like_it", "topology", papers=papers)
    listed, more = str(caught.value).split("; axes: ", 1)[1].rsplit(" and ", 1)
    assert listed.split(", ") == axes_of(papers)[:NAMES_SHOWN]
    assert more == f"{len(axes_of(papers)) - NAMES_SHOWN} more"
    assert "did you mean" not in str(caught.value)


def test_a_year_cell_outside_the_pool_is_empty_not_an_error(papers: pd.DataFrame) -> None:
    assert masrl_kb.cell_papers("year", 1999, "topology", "debate", papers=papers).empty
    with pytest.raises(masrl_kb.UnknownNameError, match="year: '2025' is not a year"):
        masrl_kb.cell_papers("year", "2025", "topology", "debate", papers=papers)


def test_evaluations_join_the_papers_on_key(papers: pd.DataFrame) -> None:
    table = masrl_kb.evaluations(papers)
    assert table.columns[0] == "key" == papers.index.name
    joined = table.join(papers[["title"]], on="key")
    assert len(joined) == len(table) and joined["title"].notna().all()
    matrix = masrl_kb.benchmark_matrix(papers, table=table)
    assert matrix.index.name == "key" and set(matrix.index) <= set(papers.index)


def test_frames_re_exports_the_pandas_api_it_was_split_into() -> None:
    """``masrl_kb.query.frames`` defines nothing and names every public object of the
    modules it was split into (notebooks import it); ``masrl_kb``'s names are the same
    objects."""
    import ast
    import importlib

    from masrl_kb.query import frames

    tree = ast.parse(Path(frames.__file__).read_text(encoding="utf-8"))
    assert not [n for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef)]
    for part in ("pool", "axes", "evaluation_table"):
        module = importlib.import_module(f"masrl_kb.query.{part}")
        public = [
            name
            for name, value in vars(module).items()
            if not name.startswith("_")
            and getattr(value, "__module__", None) == module.__name__
            and callable(value)
        ]
        assert public, part
        for name in public:
            assert getattr(frames, name) is getattr(module, name), name
    assert set(frames.__all__) <= set(dir(frames))
    for name, where in masrl_kb._EXPORTS.items():
        if hasattr(frames, name):
            assert getattr(masrl_kb, name) is getattr(frames, name), (name, where)
