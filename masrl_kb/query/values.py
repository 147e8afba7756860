"""Reported values as numbers, and benchmark leaderboards that rank only like with like.

>>> parse_value("82.80%")
Parsed(number=82.8, unit='%')
>>> parse_value("74.52", metric="accuracy (%)")
Parsed(number=74.52, unit='%')
>>> parse_value("about 70")
Parsed(number=nan, unit=None)

A record keeps its value as printed (``Result.value``); these functions read it, never
rewrite it. Text they cannot read as one number gives NaN, never an error.
"""

from __future__ import annotations

import math
import re
from typing import NamedTuple

import pandas as pd

# A number as papers print it: an optional sign, digits with optional thousands commas, an
# optional fraction and exponent; then an optional "± spread" (ignored: the value is the
# centre) and an optional unit. Written out, not float(): float() also reads "nan",
# "inf", "1_000" and "0x1p3", which no paper prints as a value.
_NUMBER = r"[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][+-]?\d{1,3})?|[+-]?\.\d+"
_UNIT = r"%|pp|×|x|[A-Za-z][A-Za-z/]{0,11}"
_VALUE = re.compile(
    rf"(?P<number>{_NUMBER})\s*(?:(?:±|\+/-|\+-)\s*(?:{_NUMBER})\s*)?(?P<unit>{_UNIT})?",
    re.ASCII,
)
_MINUS = str.maketrans({"\u2212": "-", "\u2013": "-", "\u00a0": " ", "\u202f": " "})
# Units a metric's name gives its values when they are printed bare ('74.52').
_METRIC_PERCENT = re.compile(r"%|\bpercent(?:age)?\b", re.I)
MAX_VALUE_CHARS = 64  # longer text is a description, not a value


class Parsed(NamedTuple):
    """A value read from its text: the number (NaN when unreadable) and its unit."""

    number: float
    unit: str | None


UNREAD = Parsed(math.nan, None)


def metric_unit(metric: object) -> str | None:
    """The unit a metric's name gives its values: '%' for "accuracy (%)" or "percent"."""
    return "%" if isinstance(metric, str) and _METRIC_PERCENT.search(metric) else None


def parse_value(text: object, metric: object = None) -> Parsed:
    """The number and unit of a value as written: '82.80%' is (82.8, '%'), '74.52' is
    (74.52, the unit the ``metric`` names or None), '1,024 tokens' is (1024.0, 'tokens').
    Anything else (a range, words, an empty or non-text value) is (NaN, None). Never
    raises."""
    if not isinstance(text, str) or len(text) > MAX_VALUE_CHARS:
        return UNREAD
    match = _VALUE.fullmatch(text.translate(_MINUS).strip())
    if match is None:
        return UNREAD
    number = float(match["number"].replace(",", ""))
    if not math.isfinite(number):
        return UNREAD
    return Parsed(number, match["unit"] or metric_unit(metric))


# A metric whose name says a lower value is better; every other metric ranks highest first.
_LOWER_BETTER = re.compile(
    r"\b(?:errors?|loss|latency|cost|costs|regret|perplexity|wall[- ]clock|seconds|"
    r"tokens|turns|rounds|steps|calls)\b",
    re.I,
)


def lower_is_better(metric: object) -> bool:
    """Whether a metric's name says lower is better (an error, a loss, a cost, tokens...)."""
    return isinstance(metric, str) and _LOWER_BETTER.search(metric) is not None


def metric_group(metric: object) -> str:
    """The name a metric is grouped by: its text with case and spacing folded."""
    return " ".join(str(metric).split()).casefold()


BOARD_COLUMNS = ["group", "rank", "lower_better"]


def leaderboard(values: pd.DataFrame) -> pd.DataFrame:
    """``values`` (rows of :func:`masrl_kb.query.evaluation_table.results` on one benchmark, plus a
    boolean ``multi_agent_native``) with ``group``, ``rank`` and ``lower_better`` added.

    A group holds the values that can be ranked together: the same metric (as named,
    case and spacing aside), the same setting kind (inside a team, or an answer alone)
    and the same unit (a value without a number joins the first group of its metric and
    setting kind). Within a group, rank 1 is the best value (highest, or lowest for a
    metric that says lower is better; ties share a rank); a value without a number gets
    no rank. Groups are numbered from 0 in order of their best-ranked row's first
    appearance; rows come back sorted by group, then rank."""
    frame = values.copy()
    kinds = list(zip(frame["metric"].map(metric_group), frame["multi_agent_native"], strict=True))
    read = frame["value_num"].notna().tolist()
    units = frame["unit"].fillna("").tolist()
    # A value without a number joins the first group of its metric and setting kind.
    first_unit: dict[tuple, str] = {}
    for kind, unit, ok in zip(kinds, units, read, strict=True):
        if ok:
            first_unit.setdefault(kind, unit)
    keys = [
        (*kind, unit if ok else first_unit.get(kind, unit))
        for kind, unit, ok in zip(kinds, units, read, strict=True)
    ]
    order = {key: i for i, key in enumerate(dict.fromkeys(keys))}
    frame["group"] = [order[k] for k in keys]
    frame["lower_better"] = frame["metric"].map(lower_is_better).astype(bool)
    frame["rank"] = pd.Series(pd.NA, index=frame.index, dtype="Int64")
    for _, rows in frame.groupby("group", sort=False):
        lower = bool(rows["lower_better"].iloc[0])
        ranks = rows["value_num"].rank(method="min", ascending=lower)
        frame.loc[rows.index, "rank"] = ranks.astype("Int64")
    return frame.sort_values(["group", "rank"], kind="stable", na_position="last")


def first_month(arxiv_id: object, year: object) -> str:
    """The month a paper first appeared, as text: 'YYYY-MM' from a new-style arXiv id
    (YYMM.NNNNN), else its year ('2023'); '' when neither is known."""
    if isinstance(arxiv_id, str) and re.fullmatch(r"\d{4}\.\d{4,5}", arxiv_id):
        month = int(arxiv_id[2:4])
        if 1 <= month <= 12:
            return f"20{arxiv_id[:2]}-{month:02d}"
    return str(int(year)) if isinstance(year, int | float) and not pd.isna(year) else ""


BOARDS_COLUMNS = ["date", "multi_agent_native", *BOARD_COLUMNS]


def boards(values: pd.DataFrame, evaluations: pd.DataFrame, papers: pd.DataFrame) -> pd.DataFrame:
    """Every reported value (``values``: :func:`masrl_kb.query.evaluation_table.results`) with the
    evaluating paper's ``date`` (:func:`first_month`), whether its evaluation is
    ``multi_agent_native`` (``evaluations``: :func:`masrl_kb.query.evaluation_table.evaluations`),
    and its ``group``, ``rank`` and ``lower_better`` on its benchmark (:func:`leaderboard`);
    sorted by benchmark (as first listed), group and rank."""
    native = dict(
        zip(
            zip(evaluations["key"], evaluations["benchmark"], strict=True),
            evaluations["multi_agent_native"].astype(bool),
            strict=True,
        )
    )
    pairs = zip(values["key"], values["benchmark"], strict=True)
    frame = values.assign(
        date=[first_month(papers.at[k, "arxiv_id"], papers.at[k, "year"]) for k in values["key"]],
        multi_agent_native=[native.get(pair, False) for pair in pairs],
    )
    if frame.empty:
        return frame.assign(
            group=pd.Series(dtype="int64"),
            rank=pd.Series(dtype="Int64"),
            lower_better=pd.Series(dtype="bool"),
        )
    parts = [leaderboard(rows) for _, rows in frame.groupby("benchmark", sort=False)]
    return pd.concat(parts)


def best_over_time(group: pd.DataFrame) -> list[tuple[str, float, str]]:
    """(date, best value so far, the paper holding it) at each date a paper in ``group``
    (one :func:`leaderboard` group) reports a number, in date order."""
    lower = bool(group["lower_better"].iloc[0]) if len(group) else False
    dated = group[group["value_num"].notna() & (group["date"] != "")]
    points: list[tuple[str, float, str]] = []
    best: tuple[float, str] | None = None
    for date, rows in dated.sort_values("date", kind="stable").groupby("date", sort=True):
        top = rows.sort_values("value_num", ascending=lower, kind="stable").iloc[0]
        value = float(top["value_num"])
        if best is None or (value < best[0] if lower else value > best[0]):
            best = (value, str(top["key"]))
        points.append((str(date), best[0], best[1]))
    return points
