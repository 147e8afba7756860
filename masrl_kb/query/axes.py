"""Axes and cross-tabs over the papers frame: the values an axis takes, the mask of one
value, counts for two axes, one cell's papers, the tag matrix and ``select()``.

An unknown axis, column or value raises :class:`~masrl_kb.query.lang.UnknownNameError`
listing the allowed names. A paper is named by its ``key`` everywhere.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from masrl_kb.kb.fields import TAG_FIELDS
from masrl_kb.kb.text import shorten
from masrl_kb.query.args import checked
from masrl_kb.query.lang import select_rows, unknown_name
from masrl_kb.query.pool import PathLike, load_papers

DECISION_AXES = ("decision", "decision_learned")


def axis_values(axis: str, papers: pd.DataFrame) -> list:
    """The values an axis takes in tables, in order (zeros included)."""
    if axis in DECISION_AXES:
        return _decision_ids(papers)
    if axis == "year":
        years = papers["year"]
        return list(range(int(years.min()), int(years.max()) + 1)) if len(years) else []
    column = papers[axis]
    if isinstance(column.dtype, pd.CategoricalDtype):
        return list(column.cat.categories)
    return sorted(column.dropna().unique())


def _decision_ids(papers: pd.DataFrame) -> list[str]:
    names = (c for c in papers.columns if isinstance(c, str))
    return sorted(c for c in names if c.startswith("O") and c[1:].isdigit())


def axes_of(papers: pd.DataFrame) -> list[str]:
    """The axes a cross-tab may use: categorical and True/False columns, ``year``, and
    the decision axes."""
    # One pass over the dtypes (not a Series per column): this runs for every cell shown.
    names = [
        c
        for c, dtype in papers.dtypes.items()
        if isinstance(c, str)
        and (isinstance(dtype, pd.CategoricalDtype) or pd.api.types.is_bool_dtype(dtype))
    ]
    names += ["year"] if "year" in papers.columns else []
    return names + (list(DECISION_AXES) if _decision_ids(papers) else [])


def check_axis(papers: pd.DataFrame, axis: object) -> None:
    """Raise :class:`UnknownNameError` unless ``axis`` is one of :func:`axes_of`."""
    allowed = axes_of(papers)
    if axis not in allowed:
        raise unknown_name(f"unknown axis {shorten(axis)}", axis, allowed, "axes")


def check_value(papers: pd.DataFrame, axis: str, value: object) -> None:
    """Raise :class:`UnknownNameError` unless ``value`` is a value of ``axis``."""
    check_axis(papers, axis)
    if axis == "year":
        if isinstance(value, int) and not isinstance(value, bool):
            return  # a year without papers is an empty cell, not an error
        raise unknown_name(f"year: {shorten(value)} is not a year", value, [], "a whole number")
    allowed = axis_values(axis, papers)
    if value not in allowed:
        what = f"{axis}: {shorten(value)} is not one of its values"
        raise unknown_name(what, value, allowed, "allowed")


def require_columns(papers: pd.DataFrame, names: Iterable[str], who: str) -> None:
    """Raise :class:`UnknownNameError` when the frame lacks a column ``who`` reads."""
    missing = [n for n in names if n not in papers.columns]
    if missing:
        columns = [str(c) for c in papers.columns]
        raise unknown_name(f"{who} needs the column {missing[0]!r}", missing[0], columns, "columns")


def axis_mask(papers: pd.DataFrame, axis: str, value: object) -> pd.Series:
    """Which papers fall under ``axis == value`` (decision axes included)."""
    if axis == "decision":
        return papers[value] != "absent"
    if axis == "decision_learned":
        return papers[value] == "learned"
    return papers[axis] == value


def _masks(papers: pd.DataFrame, axis: str, values: list) -> np.ndarray:
    """A 0/1 matrix: one row per paper, one column per value of ``axis``."""
    matrix = np.zeros((len(papers), len(values)), dtype=np.int64)
    for i, value in enumerate(values):
        matrix[:, i] = axis_mask(papers, axis, value).to_numpy(dtype=bool, na_value=False)
    return matrix


def _strict_filter(papers: pd.DataFrame, strict: bool) -> pd.DataFrame:
    if not strict:
        return papers
    require_columns(papers, ["credit_strict"], "strict=True")
    return papers[papers["credit_strict"]]


@checked()
def crosstab(
    rows: str,
    cols: str,
    strict: bool = False,
    papers: pd.DataFrame | None = None,
    root: PathLike = None,
) -> pd.DataFrame:
    """Paper counts for two axes (:func:`axes_of`), in taxonomy order, zeros kept; a paper
    counts once per decision it touches (learns), ``strict=True`` only with ``credit_strict``."""
    papers = load_papers(root) if papers is None else papers
    check_axis(papers, rows)
    check_axis(papers, cols)
    subset = _strict_filter(papers, strict)
    row_values = axis_values(rows, papers)
    col_values = axis_values(cols, papers)
    # One product of two paper-by-value matrices rather than a pandas op per cell.
    counts = _masks(subset, rows, row_values).T @ _masks(subset, cols, col_values)
    return pd.DataFrame(
        counts, index=pd.Index(row_values, name=rows), columns=pd.Index(col_values, name=cols)
    )


@checked()
def cell_papers(
    rows: str,
    row_value: object,
    cols: str,
    col_value: object,
    strict: bool = False,
    papers: pd.DataFrame | None = None,
    root: PathLike = None,
) -> pd.DataFrame:
    """The papers counted in one cross-tab cell."""
    papers = load_papers(root) if papers is None else papers
    check_value(papers, rows, row_value)
    check_value(papers, cols, col_value)
    subset = _strict_filter(papers, strict)
    return subset[axis_mask(subset, rows, row_value) & axis_mask(subset, cols, col_value)]


@checked()
def value_counts(axis: str, papers: pd.DataFrame | None = None, root: PathLike = None) -> pd.Series:
    """Paper count per value of one axis, in taxonomy order, zeros kept."""
    papers = load_papers(root) if papers is None else papers
    check_axis(papers, axis)
    values = axis_values(axis, papers)
    counts = [int(axis_mask(papers, axis, v).sum()) for v in values]
    return pd.Series(counts, index=pd.Index(values, name=axis), name="papers")


@checked()
def tag_matrix(papers: pd.DataFrame | None = None, root: PathLike = None) -> pd.DataFrame:
    """One row per paper, one boolean column per (axis, value): every tag axis,
    ``reward_family``, ``credit_strict`` (per credit unit) and the decision axes."""
    papers = load_papers(root) if papers is None else papers
    require_columns(papers, [*TAG_FIELDS, "reward_family", "credit_strict"], "tag_matrix")
    axes = (*TAG_FIELDS, "reward_family", *DECISION_AXES)
    columns = {(a, v): axis_mask(papers, a, v) for a in axes for v in axis_values(a, papers)}
    for unit in axis_values("credit_unit", papers):
        columns[("credit_strict", unit)] = (papers["credit_unit"] == unit) & papers["credit_strict"]
    frame = pd.DataFrame(columns, index=papers.index)
    frame.columns = pd.MultiIndex.from_tuples(list(columns), names=["axis", "value"])
    return frame.astype(bool)


@checked()
def select(
    where: str | None, papers: pd.DataFrame | None = None, root: PathLike = None
) -> pd.DataFrame:
    """Papers matching a query of :mod:`masrl_kb.query.lang` (all when empty), e.g.
    ``select('credit_unit == "message" and credit_strict')``; raises ``QueryError``."""
    papers = load_papers(root) if papers is None else papers
    return select_rows(papers, where)
