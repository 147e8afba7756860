"""The long tables of evaluations beside the papers frame: one row per (paper, benchmark)
evaluated on, one per reported value, and the papers-by-benchmarks matrix (the decisions'
table is :mod:`masrl_kb.query.decision_table`)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pandas as pd

from masrl_kb.kb.benchmarks import read_benchmarks
from masrl_kb.kb.paths import find_root
from masrl_kb.query.args import checked
from masrl_kb.query.axes import require_columns
from masrl_kb.query.pool import PathLike, load_papers
from masrl_kb.query.values import parse_value

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
