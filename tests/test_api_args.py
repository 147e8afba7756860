"""Issue 27, item 7: every public function refuses a bad argument with one line of
:class:`~masrl_kb.QueryError` (a ``ValueError``), dates included, and every list of
allowed names is capped with a did-you-mean and "and N more" by one helper
(``suggest()`` in ``masrl_kb/kb/text.py``). The hostile arguments of every exported
function are probes in ``tests/hostile/api_cases.py``."""

from __future__ import annotations

import datetime as dt
import inspect
from pathlib import Path

import pandas as pd
import pytest

import masrl_kb
from masrl_kb.kb.paths import RootNotFoundError
from masrl_kb.kb.text import NAMES_SHOWN, capped_list, closest, suggest
from masrl_kb.query.args import as_day
from tests.conftest import GOOD_PAPER
from tests.hostile.api_cases import KINDS, exported, judge


@pytest.fixture(scope="module")
def papers() -> pd.DataFrame:
    return masrl_kb.load_papers()


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("2026-13-04", "is not a day of the calendar"),
        ("2026-02-30", "is not a day of the calendar"),
        ("2026-06-031", "is not a date YYYY-MM-DD"),
        ("2026-06-03/2026-07-09", "is not a date YYYY-MM-DD"),
        ("20260603", "is not a date YYYY-MM-DD"),
        ("next week", "is not a date YYYY-MM-DD"),
    ],
)
def test_a_bad_as_of_is_one_query_error_line(mini_root: Path, text: str, why: str) -> None:
    with pytest.raises(masrl_kb.QueryError) as caught:
        masrl_kb.load_papers(mini_root, as_of=text)
    assert str(caught.value) == f"as_of: {text!r} {why}"
    assert judge(caught.value) is None


@pytest.mark.parametrize("value", [5, 2026.5, [], pd.NaT, True])
def test_an_as_of_that_is_no_date_at_all_is_refused(mini_root: Path, value: object) -> None:
    with pytest.raises(masrl_kb.QueryError, match="^as_of: "):
        masrl_kb.load_exclusions(mini_root, as_of=value)


def test_dates_as_text_date_datetime_and_timestamp_agree(papers: pd.DataFrame) -> None:
    day = dt.date(2026, 5, 4)
    counts = {
        len(masrl_kb.load_papers(as_of=value))
        for value in ("2026-05-04", day, dt.datetime(2026, 5, 4, 23, 59), pd.Timestamp(day))
    }
    assert len(counts) == 1 and 0 < counts.pop() <= len(papers)
    assert as_day("2026-05-04", "as_of") == day


def test_a_bad_baseline_is_refused_by_every_view(papers: pd.DataFrame) -> None:
    for call in (
        lambda: masrl_kb.new_papers(papers, baseline="2026-13-04"),
        lambda: masrl_kb.pool_coverage(baseline="2026-13-04"),
        lambda: masrl_kb.survey_view(baseline="2026-13-04"),
        lambda: masrl_kb.moved_cells(papers, baseline="2026-13-04"),
    ):
        with pytest.raises(masrl_kb.QueryError, match="^baseline: '2026-13-04' is not a day"):
            call()
    assert masrl_kb.pool_coverage(baseline="2026-05-04") == masrl_kb.pool_coverage(
        baseline=dt.date(2026, 5, 4)
    )


def test_an_unknown_author_is_one_capped_line_with_a_suggestion(papers: pd.DataFrame) -> None:
    with pytest.raises(masrl_kb.UnknownNameError) as caught:
        masrl_kb.coauthors("Amato, Chris", papers=papers)
    message = str(caught.value)
    total = masrl_kb.authors(papers)["author"].nunique()
    assert total > 500  # the pool's authors: the old message listed every one
    assert "(did you mean 'Amato, Christopher'?)" in message
    assert message.endswith(f" and {total - NAMES_SHOWN} more")
    assert f"authors in the pool ({total}): " in message
    assert "\n" not in message and len(message) < 600
    assert "did you mean 'Amato, Christopher'" in str(
        pytest.raises(
            masrl_kb.UnknownNameError, masrl_kb.coauthors, "Christopher Amato", papers
        ).value
    )


def test_a_huge_or_hostile_name_is_echoed_short_and_escaped(papers: pd.DataFrame) -> None:
    for call in (
        lambda: masrl_kb.coauthors("\x1b[2J" + "x" * 10_000, papers=papers),
        lambda: masrl_kb.crosstab("\x1b[2J" + "x" * 10_000, "topology", papers=papers),
        lambda: masrl_kb.cell_papers(
            "topology", "\x1b" * 5000, "credit_unit", "agent", False, papers
        ),
    ):
        with pytest.raises(masrl_kb.QueryError) as caught:
            call()
        assert judge(caught.value) is None, str(caught.value)[:200]


def test_an_unknown_field_is_one_capped_line(mini_root: Path) -> None:
    """The line used to list every field of the model (600 characters and growing)."""
    from masrl_kb.kb.model.paper import Paper

    record = GOOD_PAPER.replace("title: ", "titel: ", 1)
    (mini_root / "papers" / "bad.yaml").write_text(record, encoding="utf-8")
    report = masrl_kb.validate(mini_root)
    (problem,) = [p for p in report.problems if p.field == "titel"]
    more = len(Paper.model_fields) - NAMES_SHOWN
    assert problem.message.startswith("unknown field 'titel' (did you mean 'title'?); ")
    assert problem.message.endswith(f" and {more} more") and more > 0
    assert "allowed fields: key, title, authors," in problem.message
    assert len(str(problem)) < 400


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda p: masrl_kb.crosstab("topology", "credit_unit", papers="x"),
            "papers: expected a DataFrame",
        ),
        (
            lambda p: masrl_kb.crosstab("topology", "credit_unit", strict="yes", papers=p),
            "strict: expected True or False",
        ),
        (
            lambda p: masrl_kb.authors(p.drop(columns=["authors"])),
            "authors() needs the column 'authors'",
        ),
        (
            lambda p: masrl_kb.new_papers(p.drop(columns=["added"])),
            "new_papers() needs the column 'added'",
        ),
        (
            lambda p: masrl_kb.benchmark_matrix(p, outside=-1),
            "outside: expected a whole number of 0 or more",
        ),
        (
            lambda p: masrl_kb.benchmark_matrix(p, table=pd.DataFrame()),
            "benchmark_matrix() needs the column 'key'",
        ),
        (
            lambda p: masrl_kb.evaluate_claims(claims=[1], papers=p),
            "claims: expected a list of claims",
        ),
        (
            lambda p: masrl_kb.moved_cells(p, crosstabs=[("a", "b")]),
            "crosstabs: expected a list of",
        ),
        (lambda p: masrl_kb.load_papers(drafts="bogus"), "drafts='bogus': allowed: error, exclude"),
        (lambda p: masrl_kb.coauthors("", papers=p), "author: expected a non-empty text"),
        (
            lambda p: masrl_kb.select("year > 2020", p, nope=1),
            "select(): got an unexpected keyword",
        ),
    ],
)
def test_bad_arguments_name_themselves(papers: pd.DataFrame, call, message: str) -> None:
    with pytest.raises(masrl_kb.QueryError) as caught:
        call(papers)
    assert str(caught.value).startswith(message)
    assert judge(caught.value) is None


@pytest.mark.parametrize("kind", ["missing", "file", "no-taxonomy", "int", "empty"])
def test_a_bad_root_is_one_line_and_a_value_error(tmp_path: Path, kind: str) -> None:
    (tmp_path / "file").write_text("x")
    (tmp_path / "no-taxonomy").mkdir()
    root = {
        "missing": str(tmp_path / "missing"),
        "file": str(tmp_path / "file"),
        "no-taxonomy": tmp_path / "no-taxonomy",
        "int": 5,
        "empty": "",
    }[kind]
    for func in (masrl_kb.load_papers, masrl_kb.validate, masrl_kb.survey_baseline):
        with pytest.raises(RootNotFoundError) as caught:
            func(root)
        assert isinstance(caught.value, ValueError) and isinstance(caught.value, FileNotFoundError)
        assert judge(caught.value) is None
        assert str(caught.value).startswith("root")


def test_every_argument_of_every_export_has_hostile_values() -> None:
    """A new parameter of an exported function must get its hostile values (and a check)."""
    for name, func in exported().items():
        for argument in inspect.signature(func).parameters:
            assert argument in KINDS, f"{name}({argument}=...) has no hostile values"


def test_the_helper_caps_suggests_and_escapes() -> None:
    names = [f"name{i:03d}" for i in range(1000)]
    assert capped_list(names) == ", ".join(names[:NAMES_SHOWN]) + f" and {1000 - NAMES_SHOWN} more"
    assert capped_list(names[:3]) == "name000, name001, name002"
    assert capped_list([]) == "none"
    assert capped_list(["a\x1bb"]) == "a\\x1bb"
    assert closest("nmae042", names) == "name042"
    assert closest("x", ["arxiv_id", "title"]) is None  # no suggestion from one letter
    assert closest("zzzzzz", names) is None
    assert (
        suggest("titel", ["key", "title"], "fields")
        == " (did you mean 'title'?); fields: key, title"
    )
    assert suggest("q", [], "fields") == "; fields: none"
