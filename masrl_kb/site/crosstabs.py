"""Cross-tab pages (heat-shaded, gaps marked, totals) and one page per non-empty cell."""

from __future__ import annotations

import math
from collections.abc import Iterator

from masrl_kb.kb.rules import NA
from masrl_kb.site import urls
from masrl_kb.site.charts import year_chart
from masrl_kb.site.components import Page
from masrl_kb.site.context import ALL_CROSSES, CROSSTABS, READING, TWINS, Context, Cross, count_at

NEAR_EMPTY = 2  # a cell with this many papers or fewer is "near-empty"
# The survey's four axis pairs (category x year is context): their near-empty cells are gaps.
SURVEY_CROSSES = frozenset(broad for broad, _ in CROSSTABS[:4])
CELL_BOOST = 0.2  # search weight of a gap cell's page against the Gaps page's sections
# Axes whose column heads show the survey's short ids (label on hover) to keep tables narrow.
SHORT_COLUMNS = ("reward_family", "decision", "decision_learned")


def _distinct(ctx: Context, cross: Cross, side: str, position: int) -> int:
    """Papers in one row or column, each counted once (decision axes count a paper once)."""
    return sum(position in spots for spots in ctx.spots[(cross, side)].values())


def heat(ctx: Context, cross: Cross) -> dict:
    """Everything the heat-table macro draws for one cross-tab. "No reward" / "no credit
    unit" (NA) rows and columns stay in the table but do not set the shading's 100 %."""
    table = ctx.tables[cross]
    real = table.drop(index=NA, columns=NA, errors="ignore")
    peak = int(real.to_numpy().max()) if real.size else 0
    # Columns in taxonomy order; years ascending, as in the charts, and only years with a
    # paper (a year is not a taxonomy value, so an empty one is no gap).
    cols = list(table.columns)
    if cross.cols == "year":
        cols = sorted(c for c in cols if table[c].sum())
    rows = []
    for r_i, rv in enumerate(table.index):
        counts = [count_at(table, rv, cv) for cv in cols]
        cells = [
            {
                "col": cv,
                "count": n,
                "where": urls.cell_label(ctx, cross, rv, cv),
                "share": min(1.0, math.sqrt(n / peak)) if peak else 0.0,
            }
            for cv, n in zip(cols, counts, strict=True)
        ]
        rows.append({"value": rv, "cells": cells, "total": _distinct(ctx, cross, "rows", r_i)})
    return {
        "cross": cross,
        "title": urls.cross_title(ctx, cross),
        "short": cross.cols in SHORT_COLUMNS,
        "cols": cols,
        "rows": rows,
        "col_totals": [_distinct(ctx, cross, "cols", list(table.columns).index(c)) for c in cols],
        "total": len(set(ctx.spots[(cross, "rows")]) & set(ctx.spots[(cross, "cols")])),
    }


def crosstab_pages(ctx: Context) -> Iterator[Page]:
    yield Page(urls.CROSSTABS, "Cross-tabs").show("crosstab_index.md", ctx=ctx, pairs=CROSSTABS)
    for cross in ALL_CROSSES:
        page = Page(
            urls.crosstab(cross),
            urls.cross_title(ctx, cross),
            meta={"hide": ["navigation", "toc"], "search": {"exclude": True}},
        )
        yield page.show(
            "crosstab.md",
            ctx=ctx,
            twin=TWINS.get(cross),
            heat=heat(ctx, cross),
            near=NEAR_EMPTY,
            chart=year_chart(page, ctx) if cross == Cross("category", "year") else None,
        )


def gap_count(ctx: Context, cross: Cross, rv: object, cv: object) -> int | None:
    """The count under the strict or learned reading of a cell the Gaps page lists (a cell
    of the survey's four tables at or under NEAR_EMPTY there, ``NA`` aside); else None."""
    if cross not in SURVEY_CROSSES or NA in (rv, cv):
        return None
    variant = TWINS.get(cross)
    n = count_at(ctx.tables[variant if variant is not None else cross], rv, cv)
    return n if n <= NEAR_EMPTY else None


def cell_pages(ctx: Context) -> Iterator[Page]:
    """Each broad cell's papers, then those of the same cell under the strict or learned
    reading (a section of the page, so the two readings share one page). Search indexes
    the head of the cells that carry a finding (a gap the Gaps page lists), never the
    lists; the other cells stay out of the index."""
    for (cross, rv, cv), keys in ctx.cells.items():
        if cross in READING:
            continue
        gap = gap_count(ctx, cross, rv, cv)
        meta: dict[str, object] = {"hide": ["navigation", "toc"], "kb_lean": True}
        # Below the pages that state the finding (a cell is one of many behind a gap).
        meta["search"] = {"exclude": True} if gap is None else {"boost": CELL_BOOST}
        page = Page(urls.cell(cross, rv, cv), urls.cell_label(ctx, cross, rv, cv), meta=meta)
        variant = TWINS.get(cross)
        yield page.show(
            "cell.md",
            ctx=ctx,
            cross=cross,
            rv=rv,
            cv=cv,
            keys=keys,
            variant=variant,
            reading=READING[variant] if variant else None,
            variant_keys=ctx.cells.get((variant, rv, cv), []) if variant else [],
            gap=gap,
            near=NEAR_EMPTY,
        )
