"""Pages about the judgements themselves: readers' agreement, evaluations, releases.

Both pages compute with the query API (:mod:`masrl_kb.query.agreement`,
:func:`masrl_kb.query.frames.evaluations`, :func:`benchmark_matrix`) and lay
out with templates, like every other page.
"""

from __future__ import annotations

import math

from masrl_kb.kb.judgements import EVALUATED_CATEGORIES
from masrl_kb.query.agreement import agreement, disagreements, reader_list
from masrl_kb.query.frames import ARTIFACT_KINDS, benchmark_matrix
from masrl_kb.site import urls
from masrl_kb.site.components import Page
from masrl_kb.site.context import Context

EVALUATION_GROUP = "evaluation"
OUTSIDE_SHOWN = 15  # most used benchmarks outside the pool shown as matrix columns


def _figure(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{value:.2f}"


def agreement_page(ctx: Context) -> Page:
    page = Page(urls.AGREEMENT, "Agreement", meta={"search": {"exclude": True}})
    table = agreement(table=ctx.readings)
    rows = [
        {
            "readers": r.readers,
            "axis": r.axis,
            "axis_label": urls.reading_axis_label(ctx, r.axis),
            "n": int(r.n),
            "agreement": f"{r.agreement:.0%}",
            "kappa": _figure(r.kappa),
            "alpha": _figure(r.alpha),
        }
        for r in table.itertuples()
    ]
    differ = [
        {
            "readers": d.readers,
            "axis": d.axis,
            "axis_label": urls.reading_axis_label(ctx, d.axis),
            "key": d.key,
            "first": urls.reading_label(ctx, d.axis, d.first),
            "second": urls.reading_label(ctx, d.axis, d.second),
        }
        for d in disagreements(table=ctx.readings).itertuples()
    ]
    return page.show(
        "agreement.md", ctx=ctx, readers=reader_list(ctx.papers, ctx.root), rows=rows, differ=differ
    )


def _matrix_columns(ctx: Context, table, matrix) -> list[dict]:
    labels = dict(zip(table["benchmark"], table["label"], strict=True))
    urls_by_id = dict(zip(table["benchmark"], table["url"], strict=True))
    native = table.groupby("benchmark")["multi_agent_native"].any().to_dict()
    native.update(
        {k: bool(v) for k, v in ctx.papers["multi_agent_native"].items() if isinstance(v, bool)}
    )
    columns = []
    for bid in matrix.columns:
        pooled = bid in ctx.papers.index
        columns.append(
            {
                "id": bid,
                "label": ctx.row(bid)["title"] if pooled else labels.get(bid, bid),
                "pooled": pooled,
                "url": None if pooled else urls_by_id.get(bid),
                "native": bool(native.get(bid, False)),
                "users": int(matrix[bid].sum()),
            }
        )
    return columns


def evaluations_page(ctx: Context) -> Page:
    page = Page(urls.EVALUATIONS, "Evaluations", meta={"hide": ["navigation", "toc"]})
    table = ctx.evaluations
    matrix = benchmark_matrix(ctx.papers, outside=OUTSIDE_SHOWN, table=table)
    methods = ctx.papers[ctx.papers["category"].isin(EVALUATED_CATEGORIES)]
    most_used = (
        table.groupby(["benchmark", "label"])["paper"].nunique().sort_values(ascending=False)
    )
    claims = [v for v in ctx.claim_views or [] if v.claim.group == EVALUATION_GROUP]
    # An unused benchmark would be an empty column in every row: it is named once instead.
    columns = _matrix_columns(ctx, table, matrix)
    unused = [c for c in columns if not c["users"]]
    columns = [c for c in columns if c["users"]]
    return page.show(
        "evaluations.md",
        ctx=ctx,
        claims=claims,
        columns=columns,
        unused=unused,
        rows=[(key, [(c, int(matrix.at[key, c["id"]])) for c in columns]) for key in matrix.index],
        most_used=[(bid, label, int(n)) for (bid, label), n in most_used.head(10).items()],
        unevaluated=sorted(methods.index[methods["n_benchmarks"] == 0]),
        setting=ctx.tax["benchmark_setting"],
        releases=[
            (kind, int(methods[f"has_{kind}"].sum()), len(methods)) for kind in ARTIFACT_KINDS
        ],
    )
