"""Pages about the judgements themselves: readers' agreement, evaluations, releases
(:mod:`masrl_kb.query.agreement`, :func:`masrl_kb.query.evaluation_table.evaluations`)."""

from __future__ import annotations

import math
from collections.abc import Iterator

import pandas as pd

from masrl_kb.contrib.export import tables
from masrl_kb.kb.fields import ARTIFACT_KINDS
from masrl_kb.kb.model.paper import EVALUATED_CATEGORIES
from masrl_kb.query.agreement import (
    agreement,
    codebook_examples,
    declared_pairs,
    disagreements,
    without_papers,
)
from masrl_kb.query.values import best_over_time, metric_group
from masrl_kb.site import urls
from masrl_kb.site.charts import best_chart
from masrl_kb.site.components import Page
from masrl_kb.site.context import Context

EVALUATION_GROUP = "evaluation"
OUTSIDE_SHOWN = 15  # most used benchmarks outside the pool that get a table of their own
GROUP_ROWS = 10  # papers per benchmark on the Evaluations page; its own page lists all
CHART_DATES = 3  # a group gets a best-over-time chart from this many dates of values on


def _figure(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{value:.2f}"


def _figures(table: pd.DataFrame) -> list[dict]:
    return table.assign(
        n=table["n"].astype(int),
        agreement=table["agreement"].map("{:.0%}".format),
        kappa=table["kappa"].map(_figure),
        alpha=table["alpha"].map(_figure),
    ).to_dict("records")


def _headline(ctx: Context, pairs: set[frozenset[str]]) -> list[dict]:
    """The declared pairs' figures, each row with the same figures once the papers the
    codebook cites as worked examples are left out (``n_out``, ``agreement_out``, ...)."""
    if not pairs:
        return []
    rows = _figures(agreement(table=ctx.readings, pairs=pairs))
    cited = codebook_examples(ctx.root)
    out = {
        (r["readers"], r["axis"]): r
        for r in _figures(agreement(table=without_papers(ctx.readings, cited), pairs=pairs))
    }
    empty = {"n": 0, "agreement": "n/a", "kappa": "n/a", "alpha": "n/a"}
    for row in rows:
        other = out.get((row["readers"], row["axis"]), empty)
        row |= {f"{k}_out": other[k] for k in ("n", "agreement", "kappa")}
    return rows


def agreement_page(ctx: Context) -> Page:
    page = Page(urls.AGREEMENT, "Agreement", meta={"search": {"exclude": True}})
    readers = ctx.readers
    pairs = declared_pairs(readers)
    return page.show(
        "agreement.md",
        ctx=ctx,
        readers=readers,
        headline=_headline(ctx, pairs),
        rows=_figures(agreement(table=ctx.readings)),
        differ=disagreements(table=ctx.readings, pairs=pairs or None).to_dict("records"),
    )


def benchmark_groups(ctx: Context) -> list[dict]:
    """Every benchmark a paper reports on: its name, link, whether it is pooled and
    multi-agent-native, and one row per paper with the values recorded for it.
    Multi-agent-native benchmarks first, then by how many papers use them."""
    table = ctx.evaluations
    values: dict[tuple[object, object], list[dict]] = {}
    for r in ctx.results.to_dict("records"):
        values.setdefault((r["key"], r["benchmark"]), []).append(r)
    groups = []
    for bid, rows in table.groupby("benchmark", sort=False):
        first = rows.iloc[0]
        entries = [
            {"key": key, "metric": metric, "results": values.get((key, bid), [])}
            for key, metric in sorted(zip(rows["key"], rows["metric"], strict=True))
        ]
        entries.sort(key=lambda e: not e["results"])  # papers with values first (stable)
        groups.append(
            {
                "id": bid,
                "label": first["label"],
                "url": None if first["pooled"] else first["url"],
                "pooled": bool(first["pooled"]),
                "native": bool(rows["multi_agent_native"].any()),
                "papers": entries,
                "with_values": sum(bool(e["results"]) for e in entries),
            }
        )
    return sorted(groups, key=lambda g: (not g["native"], -len(g["papers"]), g["id"]))


def evaluations_page(ctx: Context) -> Page:
    page = Page(urls.EVALUATIONS, "Evaluations", meta={"hide": ["navigation", "toc"]})
    methods = ctx.papers[ctx.papers["category"].isin(EVALUATED_CATEGORIES)]
    claims = [v for v in ctx.claim_views or [] if v.claim.group == EVALUATION_GROUP]
    groups = benchmark_groups(ctx)
    pooled = set(ctx.papers.index[ctx.papers["category"] == "benchmark"])
    # Benchmarks that get their own table here: pooled or native ones, and the most used.
    shown = [g for g in groups if g["pooled"] or g["native"]]
    others = [g for g in groups if g not in shown]
    shown += others[:OUTSIDE_SHOWN]
    return page.show(
        "evaluations.md",
        ctx=ctx,
        claims=claims,
        groups=sorted(shown, key=groups.index),
        rest=others[OUTSIDE_SHOWN:],
        group_rows=GROUP_ROWS,
        unused=sorted(pooled - set(ctx.evaluations["benchmark"])),
        unevaluated=sorted(methods.index[methods["n_benchmarks"] == 0]),
        releases=[
            (kind, int(methods[f"has_{kind}"].sum()), len(methods)) for kind in ARTIFACT_KINDS
        ],
    )


def _board(page: Page, ctx: Context, gid: int, rows: pd.DataFrame) -> dict:
    """One group of a benchmark's values (one metric, setting kind and unit), ranked, with
    a best-over-time chart when papers of at least ``CHART_DATES`` dates report in it."""
    first = rows.iloc[0]
    unit = first["unit"] if isinstance(first["unit"], str) else None
    points = best_over_time(rows)
    chart = None
    if len(points) >= CHART_DATES:
        titles = {k: ctx.rows[k]["title"] for _, _, k in points}
        title = f"Best {first['metric']} reported so far, by the paper's date"
        spec = {"title": title, "tid": f"kb-best-{gid}", "unit": unit, "titles": titles}
        chart = best_chart(page, points, spec)
    return {
        "metric": first["metric"],
        "native": bool(first["multi_agent_native"]),
        "unit": unit,
        "lower": bool(first["lower_better"]),
        "rows": [{k: tables.json_value(v) for k, v in r.items()} for r in rows.to_dict("records")],
        "papers": rows["key"].nunique(),
        "chart": chart,
    }


def differences(rows: pd.DataFrame) -> list[str]:
    """What sets a benchmark's groups apart: its values' metrics, setting kinds, units."""
    said = []
    if rows["metric"].map(metric_group).nunique() > 1:
        said.append("metrics")
    if rows["multi_agent_native"].nunique() > 1:
        said.append("settings (inside a team, or an answer alone)")
    by_metric = rows.assign(u=rows["unit"].fillna("")).groupby(rows["metric"].map(metric_group))
    if (by_metric["u"].nunique() > 1).any():
        said.append("units (a value printed with a unit beside one printed without)")
    return said


def benchmark_pages(ctx: Context) -> Iterator[Page]:
    """One page per benchmark a paper reports on: its values ranked within each group of
    like values (one metric, setting kind and unit), the papers without values."""
    by_benchmark = dict(list(ctx.boards.groupby("benchmark", sort=False)))
    for group in benchmark_groups(ctx):
        page = Page(urls.benchmark(group["id"]), group["label"], meta={"kb_lean": True})
        rows = by_benchmark.get(group["id"], ctx.boards.iloc[:0])
        parts = rows.groupby("group", sort=True)
        boards = [_board(page, ctx, i, r) for i, (_, r) in enumerate(parts)]
        yield page.show(
            "benchmark.md",
            ctx=ctx,
            group=group,
            boards=boards,
            differ=differences(rows) if len(boards) > 1 else [],
            csv=RESULTS_CSV if len(rows) else None,
        )


RESULTS_CSV = "results.csv"  # beside each benchmark page; the whole table under downloads/
RESULTS_CSV_COLUMNS = [
    *"benchmark key title date metric value value_num unit setting".split(),
    *"multi_agent_native group rank lower_better where source".split(),
]


def results_csv(ctx: Context, rows: pd.DataFrame) -> str:
    """The values of ``rows`` (of :attr:`Context.boards`) as the site's CSV: the value
    as printed and as a number, cells guarded against spreadsheet formulas."""
    table = rows.assign(title=[ctx.rows[k]["title"] for k in rows["key"]])
    columns = [table[c].tolist() for c in RESULTS_CSV_COLUMNS]
    records = [
        {c: tables.json_value(v) for c, v in zip(RESULTS_CSV_COLUMNS, values, strict=True)}
        for values in zip(*columns, strict=True)
    ]
    return tables.records_csv(records) or tables.csv_text(RESULTS_CSV_COLUMNS, [], quote_all=True)


def benchmark_csvs(ctx: Context) -> dict[str, str]:
    """Each benchmark's values as CSV beside its page (benchmarks with values only)."""
    return {
        urls.benchmark(str(bid)) + RESULTS_CSV: results_csv(ctx, rows)
        for bid, rows in ctx.boards.groupby("benchmark", sort=False)
    }
