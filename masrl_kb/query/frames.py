"""The pandas API: records as DataFrames, the tag matrix and cross-tabs.

Load once (``papers = load_papers()``) and pass ``papers=`` to the other functions.
An unknown axis, column or value raises :class:`~masrl_kb.query.lang.UnknownNameError`
listing the allowed names. A paper is named by its ``key`` everywhere.
"""

from __future__ import annotations

import collections
import datetime as dt
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, cast

import numpy as np
import pandas as pd

from masrl_kb.kb import cache
from masrl_kb.kb.benchmarks import read_benchmarks
from masrl_kb.kb.crossrules import arxiv_ids_of
from masrl_kb.kb.drafts import Draft, check_mode, split_drafts
from masrl_kb.kb.fields import (
    ARTIFACT_KINDS,
    EXCLUSION_FIELDS,
    PAPER_FIELDS,
    TAG_FIELDS,
    categorical_axes,
    paper_columns,
)
from masrl_kb.kb.paths import find_root
from masrl_kb.kb.problem import Problem
from masrl_kb.kb.record_checks import validate_records
from masrl_kb.kb.records import RecordSet, read_records
from masrl_kb.kb.rules import ABSENT, decision_statuses
from masrl_kb.kb.taxonomy import Taxonomy, TaxonomyError, load_taxonomy
from masrl_kb.kb.text import shorten
from masrl_kb.query.args import checked
from masrl_kb.query.lang import select_rows, unknown_name
from masrl_kb.query.values import parse_value

PathLike = str | os.PathLike[str] | None
Frames = tuple[pd.DataFrame, pd.DataFrame]
__all__ = ["ARTIFACT_KINDS"]  # re-exported for the pages that list releases
DateLike = dt.date | str | None
DECISION_AXES = ("decision", "decision_learned")
# The exclusion fields the model types as taxonomy values: categorical columns.
EXCLUSION_TAGS = {f.name: f.axis for f in EXCLUSION_FIELDS if f.axis}
DRAFT_COLUMNS = ["path", "kind", "id", "title", "unfinished"]


class InvalidRecordsError(ValueError):
    """Raised when records fail validation; ``problems`` lists every one."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        shown = "\n".join(str(p) for p in problems[:20])
        more = f"\n... and {len(problems) - 20} more" if len(problems) > 20 else ""
        start = " " if len(problems) == 1 else "\n"  # one problem, one line
        super().__init__(f"{len(problems)} invalid record problem(s):{start}{shown}{more}")


# ---------------------------------------------------------------- loading


@checked()
def load_papers(
    root: PathLike = None, as_of: DateLike = None, drafts: str = "error"
) -> pd.DataFrame:
    """One row per pooled paper, indexed by ``key``, tags as ordered categoricals, derived
    columns (``reward_family``, ``bibtex_key``, one per decision id: its status).
    ``as_of``: papers added by that day; ``drafts``: records with ``TODO`` fields invalid
    (``"error"``) or left out (``"exclude"``). Raises :class:`InvalidRecordsError`."""
    return load_pool(root, as_of=as_of, drafts=drafts)[0]


@checked()
def load_exclusions(
    root: PathLike = None, as_of: DateLike = None, drafts: str = "error"
) -> pd.DataFrame:
    """One row per excluded record, indexed by ``id``; ``as_of`` and ``drafts`` as for
    :func:`load_papers` (``as_of`` by the day screened)."""
    return load_pool(root, as_of=as_of, drafts=drafts)[1]


@checked()
def load_pool(root: PathLike = None, as_of: DateLike = None, drafts: str = "error") -> Frames:
    """``(load_papers(), load_exclusions())`` from one read and validation."""
    papers, exclusions = _built_pool(find_root(root), check_mode(drafts))
    return (papers, exclusions) if as_of is None else pool_as_of(papers, exclusions, as_of)


@checked()
def load_drafts(root: PathLike = None) -> pd.DataFrame:
    """The records holding ``TODO`` fields: what ``load_papers(drafts="exclude")`` leaves out."""
    _, found = split_drafts(read_records(root))
    rows = [[d.path, d.kind, d.id, d.title, list(d.unfinished)] for d in found]
    return pd.DataFrame(rows, columns=DRAFT_COLUMNS)


def pool_as_of(papers: pd.DataFrame, exclusions: pd.DataFrame, as_of: dt.date | str) -> Frames:
    """The pool as it stood on ``as_of``: papers added, exclusions screened by that day."""
    day = pd.Timestamp(as_of)
    return papers[papers["added"] <= day], exclusions[exclusions["screened"] <= day]


def _built_pool(base: Path, drafts: str) -> Frames:
    """Both frames, kept (:mod:`masrl_kb.kb.cache`) when the pool has no drafts."""
    salt = f"frames {pd.__version__} {np.__version__}"
    key = cache.pool_fingerprint(base, salt)  # before reading: the frames are of these files
    kept = cache.load(f"frames-{key}", base) if key is not None else None
    if isinstance(kept, tuple) and [type(f) for f in kept] == [pd.DataFrame] * 2:
        return cast(Frames, kept)
    records = read_records(base)
    left_out: list[Draft] = []
    if drafts == "exclude":
        records, left_out = split_drafts(records)
    tax = _checked(records)
    built = _papers_table(records, tax), _exclusions_table(records, tax)
    if not left_out:
        cache.store_if_unchanged(
            "frames", key, built, lambda: cache.pool_fingerprint(base, salt), base
        )
    return built


def _checked(records: RecordSet) -> Taxonomy:
    """The taxonomy, once every record of ``records`` has passed validation."""
    try:
        tax = load_taxonomy(records.root)
    except TaxonomyError as err:
        raise InvalidRecordsError(err.problems) from None
    problems = validate_records(records, tax)
    if problems:
        raise InvalidRecordsError(problems)
    return tax


# ---------------------------------------------------------------- records as rows


def _categorical(values: Iterable[object], ids: Sequence[str]) -> pd.Categorical:
    return pd.Categorical(list(values), categories=list(ids), ordered=True)


def _without_lines(value: Any) -> Any:
    """A record value as plain dicts and lists, without the YAML reader's line numbers."""
    if isinstance(value, dict):
        return {k: _without_lines(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_lines(v) for v in value]
    return value


def _paper_row(record: object) -> dict[str, Any]:
    row = _without_lines(record)
    citation, artifacts = row["citation"], row.get("artifacts") or {}
    row.update(bibtex_key=citation["bibtex_key"], entry_type=citation["entry_type"])
    row.update(decision_statuses(row["decisions"]))
    for d in row["decisions"]:
        row[f"{d['id']}_mechanism"] = d.get("mechanism")
        row[f"{d['id']}_source"] = (d.get("evidence") or {}).get("source")
    row["credit_source"] = (row.get("credit_evidence") or {}).get("source")
    for kind in ARTIFACT_KINDS:
        url = artifacts.get(kind)
        row[f"has_{kind}"] = isinstance(url, str)
        row[f"{kind}_url"] = url if isinstance(url, str) else None
    row["license"] = artifacts.get("license")
    evaluations = row.get("evaluated_on") or []
    # None when the record has no evaluated_on; [] when it says "checked, none".
    row["evaluated_on"] = evaluations if "evaluated_on" in row else None
    row["n_benchmarks"] = len(evaluations)
    row["ma_native_eval"] = any(e.get("multi_agent_native") for e in evaluations)
    return row


def _tag_columns(frame: pd.DataFrame, tax: Taxonomy) -> None:
    """Every column typed as a taxonomy value (record fields by the model, derived
    columns by :data:`~masrl_kb.kb.fields.DERIVED`) as an ordered categorical."""
    for did in tax["decision"].ids:
        statuses = frame.get(did, [None] * len(frame))
        frame[did] = [s if isinstance(s, str) else ABSENT for s in statuses]
    for name, axis in categorical_axes(tax["decision"].ids).items():
        frame[name] = _categorical(frame.get(name, [None] * len(frame)), tax[axis].ids)


def _papers_table(records: RecordSet, tax: Taxonomy) -> pd.DataFrame:
    frame = pd.DataFrame([_paper_row(r.data) for r in records.papers])
    # an optional field no record uses is still a column
    frame = frame.assign(**{f.name: None for f in PAPER_FIELDS if f.name not in frame})
    frame["sources"] = [s if isinstance(s, list) else [] for s in frame["sources"]]
    frame["authors_truncated"] = frame["authors_truncated"].fillna(False).astype(bool)
    frame["extra_urls"] = [u if isinstance(u, list) else [] for u in frame["extra_urls"]]
    frame["reward_family"] = [tax.family_of(r) for r in frame["reward_type"]]
    _tag_columns(frame, tax)
    frame["rl_methods_using"] = _benchmark_use(frame)
    # multi_agent_native holds True/False on benchmark records only; this one is queryable.
    frame["ma_native_benchmark"] = [v is True for v in frame["multi_agent_native"]]
    frame["added"] = pd.to_datetime(frame["added"])
    frame["year"] = frame["year"].astype(int)
    frame["credit_strict"] = frame["credit_strict"].astype(bool)
    return frame.set_index("key").sort_index()[paper_columns(tax["decision"].ids)]


def _benchmark_use(frame: pd.DataFrame) -> list[int]:
    """For each record, how many RL methods report results on it (0 for non-benchmarks)."""
    uses = collections.Counter(
        key
        for category, evaluations in zip(frame["category"], frame["evaluated_on"], strict=True)
        if category == "rl_method"
        for key in {e.get("benchmark") for e in evaluations or []} - {None}
    )
    return [uses[key] for key in frame["key"]]


def _exclusions_table(records: RecordSet, tax: Taxonomy) -> pd.DataFrame:
    rows = [_without_lines(rec.data) for rec in records.exclusions]
    for row in rows:
        row["arxiv_id"] = min(arxiv_ids_of(row), default=None)
    frame = pd.DataFrame(rows, columns=[*(f.name for f in EXCLUSION_FIELDS), "arxiv_id"])
    for column, axis in EXCLUSION_TAGS.items():
        frame[column] = _categorical(frame[column], tax[axis].ids)
    frame["screened"] = pd.to_datetime(frame["screened"])
    return frame.set_index("id").sort_index()


# ---------------------------------------------------------------- axes


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


# ---------------------------------------------------------------- evaluations

EVALUATION_COLUMNS = "key benchmark label pooled url metric multi_agent_native category".split()
RESULT_COLUMNS = ["key", "benchmark", "metric", "value", "setting", "where", "source"]
# Read from ``value`` (kept as written) by :func:`masrl_kb.query.values.parse_value`.
RESULT_NUMBER_COLUMNS = ["value_num", "unit"]


def _entries(papers: pd.DataFrame) -> Iterable[tuple[str, str, dict[str, Any]]]:
    """(paper key, its category, one evaluated_on entry) for every entry of every paper."""
    for key, category, entries in zip(
        papers.index, papers["category"], papers["evaluated_on"], strict=True
    ):
        yield from ((key, category, e) for e in (entries if isinstance(entries, list) else []))


@checked()
def evaluations(papers: pd.DataFrame | None = None, root: PathLike = None) -> pd.DataFrame:
    """One row per (paper ``key``, ``benchmark``) a paper reports results on: ``benchmark``
    a pooled record's key (``pooled``) or an id of ``benchmarks.yaml``, ``label`` its title
    or name, ``category`` the evaluating paper's."""
    base = find_root(root)
    papers = load_papers(base) if papers is None else papers
    require_columns(papers, ["title", "url", "category", "evaluated_on"], "evaluations")
    outside = {b.id: b for b in read_benchmarks(base).benchmarks}
    rows = []
    for key, category, e in _entries(papers):
        bid = e["benchmark"]
        pooled = bid in papers.index
        known = outside.get(bid)
        label = papers.at[bid, "title"] if pooled else getattr(known, "name", bid)
        url = papers.at[bid, "url"] if pooled else getattr(known, "url", None)
        native = bool(e["multi_agent_native"])
        rows.append([key, bid, label, pooled, url, e["metric"], native, category])
    return pd.DataFrame(rows, columns=EVALUATION_COLUMNS)


@checked(papers=("category", "evaluated_on"))
def results(papers: pd.DataFrame | None = None, root: PathLike = None) -> pd.DataFrame:
    """One row per reported value (``RESULT_COLUMNS``); evaluations without one have none.
    ``value`` is the text as printed; ``value_num`` the number read from it (NaN when it
    is not one number) and ``unit`` its unit ('%', or the one the metric names; None)."""
    papers = load_papers(root) if papers is None else papers
    rows = []
    for key, _, e in _entries(papers):
        for r in e.get("results") or []:
            parsed = parse_value(r["value"], r["metric"])
            row = [key, e["benchmark"], *(r[c] for c in RESULT_COLUMNS[2:])]
            rows.append([*row, parsed.number, parsed.unit])
    table = pd.DataFrame(rows, columns=RESULT_COLUMNS + RESULT_NUMBER_COLUMNS)
    table["unit"] = pd.Series(
        [u if isinstance(u, str) else None for u in table["unit"]], dtype=object
    )
    return table.astype({"value_num": "float64"})


@checked(papers=("category",), table=("key", "benchmark", "pooled"))
def benchmark_matrix(
    papers: pd.DataFrame | None = None,
    root: PathLike = None,
    outside: int = 15,
    table: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Papers with an evaluation x benchmarks (every pooled one, then the ``outside`` most
    used others), 1 where the paper reports on it; ``table``: an :func:`evaluations` frame."""
    base = find_root(root) if papers is None or table is None else None
    papers = load_papers(base) if papers is None else papers
    table = evaluations(papers, base) if table is None else table
    pooled = sorted(papers.index[papers["category"] == "benchmark"])
    counts = table[~table["pooled"]].groupby("benchmark")["key"].nunique()
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], str(kv[0]).casefold()))
    columns = pooled + [name for name, _ in ranked[:outside]]
    reported = pd.crosstab(table["key"], table["benchmark"]).clip(upper=1)
    matrix = reported.reindex(columns=columns, fill_value=0)
    matrix.columns.name = "benchmark"
    return matrix
