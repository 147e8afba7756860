"""Pages about the judgements themselves: readers' agreement, evaluations, releases
(:mod:`masrl_kb.query.agreement`, :func:`masrl_kb.query.frames.evaluations`)."""

from __future__ import annotations

import math
from collections.abc import Iterator

import pandas as pd

from masrl_kb.kb.model.paper import EVALUATED_CATEGORIES
from masrl_kb.query.agreement import (
    agreement,
    codebook_examples,
    declared_pairs,
    disagreements,
    reader_list,
    without_papers,
)
from masrl_kb.query.frames import ARTIFACT_KINDS
from masrl_kb.site import urls
from masrl_kb.site.components import Page
from masrl_kb.site.context import Context

EVALUATION_GROUP = "evaluation"
OUTSIDE_SHOWN = 15  # most used benchmarks outside the pool that get a table of their own
GROUP_ROWS = 10  # papers per benchmark on the Evaluations page; its own page lists all


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
    readers = reader_list(ctx.papers, ctx.root)
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


def benchmark_pages(ctx: Context) -> Iterator[Page]:
    """One page per benchmark a paper reports on: the papers, their values and sources."""
    for group in benchmark_groups(ctx):
        page = Page(urls.benchmark(group["id"]), group["label"], meta={"kb_lean": True})
        yield page.show("benchmark.md", ctx=ctx, group=group)
