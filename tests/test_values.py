"""Reported values read as numbers (``parse_value``) and ranked only among like values
(``leaderboard``, ``boards``, ``best_over_time``), and ``results()``'s new columns."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from masrl_kb.query.frames import evaluations, load_papers, results
from masrl_kb.query.values import (
    best_over_time,
    boards,
    first_month,
    leaderboard,
    lower_is_better,
    parse_value,
)


@pytest.mark.parametrize(
    ("text", "metric", "number", "unit"),
    [
        ("82.80%", None, 82.8, "%"),
        ("74.52", "accuracy", 74.52, None),
        ("74.52", "accuracy (%)", 74.52, "%"),
        ("74.52", "success percentage", 74.52, "%"),
        (" 40.0 % ", None, 40.0, "%"),
        ("1,024 tokens", None, 1024.0, "tokens"),
        ("\u22123.5", None, -3.5, None),  # a typeset minus
        ("+16.37pp", None, 16.37, "pp"),
        ("79.8 ± 0.3", None, 79.8, None),
        ("79.8±0.3%", None, 79.8, "%"),
        ("2.5×", None, 2.5, "×"),
        (".5", None, 0.5, None),
        ("1e-3", None, 0.001, None),
    ],
)
def test_a_value_is_read_as_written(text, metric, number, unit) -> None:
    parsed = parse_value(text, metric)
    assert parsed.number == pytest.approx(number) and parsed.unit == unit


@pytest.mark.parametrize(
    "text",
    [
        "",
        "n/a",
        "about 70",
        "70-80",
        "70 to 80",
        "82,8",  # a decimal comma is not read as thousands
        "1,00",
        "nan",
        "inf",
        "1_000",
        "0x10",
        "1e999",  # overflows to infinity
        "12.5% (avg)",
        "5" * 80,  # longer than a value
        None,
        12.5,  # not text: the record's value is always text
    ],
)
def test_text_that_is_not_one_number_is_nan_with_no_unit(text) -> None:
    parsed = parse_value(text, "accuracy (%)")
    assert math.isnan(parsed.number) and parsed.unit is None


@given(st.one_of(st.text(), st.none(), st.integers(), st.floats(), st.binary()), st.text())
def test_parsing_never_raises(text, metric) -> None:
    parsed = parse_value(text, metric)
    assert isinstance(parsed.number, float)
    assert parsed.unit is None or isinstance(parsed.unit, str)
    assert math.isnan(parsed.number) or math.isfinite(parsed.number)


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_a_plain_float_round_trips(number) -> None:
    assert parse_value(repr(number)) == (number, None)
    assert parse_value(f"{number!r}%") == (number, "%")


@given(st.integers(min_value=-(10**15), max_value=10**15))
def test_a_plain_integer_round_trips(number) -> None:
    assert parse_value(str(number)) == (float(number), None)
    assert parse_value(f"{number:,}").number == float(number)


def test_lower_is_better_only_where_the_metric_says_so() -> None:
    assert lower_is_better("error rate") and lower_is_better("tokens per task")
    assert not lower_is_better("accuracy") and not lower_is_better("success rate")
    assert not lower_is_better(None)


def test_first_month_comes_from_the_arxiv_id_else_the_year() -> None:
    assert first_month("2603.12345", 2026) == "2026-03"
    assert first_month("2613.12345", 2026) == "2026"  # no month 13
    assert first_month(None, 2023) == "2023"
    assert first_month(float("nan"), float("nan")) == ""


def _values(rows: list[tuple]) -> pd.DataFrame:
    """Rows of (key, metric, value text, native, date) on one benchmark."""
    frame = pd.DataFrame(rows, columns=["key", "metric", "value", "multi_agent_native", "date"])
    parsed = [parse_value(v, m) for v, m in zip(frame["value"], frame["metric"], strict=True)]
    return frame.assign(
        benchmark="b",
        value_num=[p.number for p in parsed],
        unit=[p.unit for p in parsed],
    )


def test_only_like_values_are_ranked_together() -> None:
    table = leaderboard(
        _values(
            [
                ("a", "accuracy", "50%", False, "2025-01"),
                ("b", "Accuracy ", "70%", False, "2025-02"),  # same metric, case and space
                ("c", "accuracy", "90%", True, "2025-03"),  # inside a team
                ("d", "accuracy", "95", False, "2025-04"),  # no unit printed
                ("e", "pass@1", "99%", False, "2025-05"),
                ("f", "accuracy", "n/a", False, "2025-06"),
                ("g", "accuracy", "70.0%", False, "2025-07"),  # a tie
            ]
        )
    )
    groups = table.groupby("group")["key"].apply(list).to_dict()
    assert groups == {0: ["b", "g", "a", "f"], 1: ["c"], 2: ["d"], 3: ["e"]}
    ranks = dict(zip(table["key"], table["rank"], strict=True))
    assert (ranks["b"], ranks["g"], ranks["a"]) == (1, 1, 3)
    assert ranks["f"] is pd.NA and ranks["c"] == ranks["d"] == ranks["e"] == 1


def test_a_lower_is_better_metric_ranks_the_lowest_first() -> None:
    table = leaderboard(
        _values([("a", "error rate", "5%", False, "x"), ("b", "error rate", "3%", False, "x")])
    )
    assert list(table["key"]) == ["b", "a"] and list(table["rank"]) == [1, 2]


def test_best_over_time_keeps_the_running_best() -> None:
    table = leaderboard(
        _values(
            [
                ("a", "acc", "50%", False, "2025-01"),
                ("b", "acc", "40%", False, "2025-03"),  # worse: the best stays a's
                ("c", "acc", "60%", False, "2025-02"),
                ("d", "acc", "n/a", False, "2025-04"),  # no number: no point
                ("e", "acc", "70%", False, ""),  # no date: no point
            ]
        )
    )
    assert best_over_time(table) == [
        ("2025-01", 50.0, "a"),
        ("2025-02", 60.0, "c"),
        ("2025-03", 60.0, "c"),
    ]


@pytest.fixture(scope="module")
def papers():
    return load_papers()


def test_results_keep_the_text_and_add_its_number(papers) -> None:
    table = results(papers)
    assert list(table.columns[-2:]) == ["value_num", "unit"]
    assert table["value_num"].dtype == "float64"
    written = [
        r["value"]
        for entries in papers["evaluated_on"]
        if isinstance(entries, list)
        for e in entries
        for r in e.get("results") or []
    ]
    assert list(table["value"]) == written  # the text exactly as the records print it
    for row in table.itertuples():
        parsed = parse_value(row.value, row.metric)
        assert (math.isnan(row.value_num) and math.isnan(parsed.number)) or (
            row.value_num == parsed.number
        )
        assert row.unit == parsed.unit
    assert (table["unit"] == "%").any() and table["value_num"].notna().any()


def test_boards_date_and_group_every_value(papers) -> None:
    values = results(papers)
    table = boards(values, evaluations(papers), papers)
    assert len(table) == len(values)
    for row in table.itertuples():
        expected = first_month(papers.at[row.key, "arxiv_id"], papers.at[row.key, "year"])
        assert row.date == expected
    for _, rows in table.groupby(["benchmark", "group"]):
        assert rows["unit"].fillna("").nunique() == 1
        assert rows["multi_agent_native"].nunique() == 1
        assert rows["metric"].str.casefold().str.split().str.join(" ").nunique() == 1
