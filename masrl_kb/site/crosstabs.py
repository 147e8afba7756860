"""Cross-tab pages (heat-shaded, gaps marked) and one page per non-empty cell."""

from __future__ import annotations

import math
from collections.abc import Iterator

import pandas as pd

from masrl_kb.site import urls
from masrl_kb.site.components import Page, h1, paper_list
from masrl_kb.site.context import CROSSTABS, Context, Cross, all_crosses
from masrl_kb.site.html import esc, md_text

NEAR_EMPTY = 2  # a cell with this many papers or fewer is "near-empty"
HOT = 0.7  # above this shade (0..1), cell text turns light


def twin_of(cross: Cross) -> Cross | None:
    """The other reading of a cross-tab (strict / learned <-> broad)."""
    for broad, variant in CROSSTABS:
        if cross == broad:
            return variant
        if cross == variant:
            return broad
    return None


def reading_note(ctx: Context, cross: Cross) -> str:
    if cross.strict:
        return (
            "Strict reading: only papers with an explicit credit estimator at their credit "
            "unit (<code>credit_strict</code>) are counted."
        )
    if cross.rows == "decision_learned":
        return "Learned: a paper counts under a decision only when an RL update acts on it."
    if cross.rows == "decision":
        return "Touched: a paper counts once under each decision it makes, fixed or learned."
    if "credit_unit" in (cross.rows, cross.cols):
        return "Broad reading: the finest unit at which a paper exposes any credit signal."
    return ""


def _axis_header(page: Page, ctx: Context, axis: str, value_id: object) -> str:
    label = urls.value_label(ctx, axis, value_id)
    return page.link(urls.value(axis, value_id), label)


def heat_cell(
    page: Page, ctx: Context, cross: Cross, rv: object, cv: object, count: int, peak: int
) -> str:
    """One shaded ``<td>``: zero cells are marked as gaps, others link to their papers."""
    data = f'data-row="{esc(rv)}" data-col="{esc(cv)}" data-count="{count}"'
    where = f"{urls.value_label(ctx, cross.rows, rv)} × {urls.value_label(ctx, cross.cols, cv)}"
    if count == 0:
        return (
            f'<td class="kb-cell kb-gap" {data} title="{esc("gap: no paper in " + where)}">'
            "<span>0</span></td>"
        )
    # Square root: one dominant cell (say None x None) must not wash out the rest.
    share = math.sqrt(count / peak) if peak else 0.0
    classes = "kb-cell" + (" kb-near" if count <= NEAR_EMPTY else "")
    classes += " kb-hot" if share > HOT else ""
    noun = "paper" if count == 1 else "papers"
    tip = f"{count} {noun}: {where}" + (" (near-empty)" if count <= NEAR_EMPTY else "")
    href = page.href(urls.cell(cross, rv, cv))
    return (
        f'<td class="{classes}" style="--h:{share:.3f}" {data}>'
        f'<a href="{esc(href)}" title="{esc(tip)}">{count}</a></td>'
    )


def heat_table(page: Page, ctx: Context, cross: Cross) -> str:
    """The whole cross-tab as an HTML table."""
    table = ctx.tables[cross]
    peak = int(table.to_numpy().max()) if table.size else 0
    rows_label, cols_label = urls.axis_label(ctx, cross.rows), urls.axis_label(ctx, cross.cols)
    corner = f"{esc(cols_label)} →<br>{esc(rows_label)} ↓"
    if cross.cols == "year":  # newest first: the field's recent years are what people look for
        table = table[table.columns[::-1]]
    head = "".join(
        f'<th scope="col">{_axis_header(page, ctx, cross.cols, c)}</th>' for c in table.columns
    )
    rows = []
    for rv in table.index:
        cells = "".join(
            heat_cell(page, ctx, cross, rv, cv, int(table.at[rv, cv]), peak) for cv in table.columns
        )
        rows.append(
            f'<tr><th scope="row">{_axis_header(page, ctx, cross.rows, rv)}</th>{cells}</tr>'
        )
    return (
        f'<div class="kb-scroll"><table class="kb-heat" data-cross="{esc(cross.slug)}">'
        f'<thead><tr><th class="kb-corner">{corner}</th>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


LEGEND = (
    '<p class="kb-legend"><span class="kb-swatch kb-swatch-hot"></span> darker = more papers · '
    '<span class="kb-swatch kb-swatch-near"></span> near-empty (≤ {near}) · '
    '<span class="kb-swatch kb-swatch-gap"></span> gap (0) · click a number for its papers</p>'
)


def crosstab_page(ctx: Context, cross: Cross) -> Page:
    page = Page(urls.crosstab(cross), urls.cross_title(ctx, cross), meta={"hide": ["toc"]})
    page.add(f"# {md_text(page.title)}")
    twin = twin_of(cross)
    intro = reading_note(ctx, cross)
    if twin is not None:
        intro += " See also " + page.link(urls.crosstab(twin), urls.cross_title(ctx, twin)) + "."
    page.add(f"<p>{intro}</p>", LEGEND.format(near=NEAR_EMPTY), heat_table(page, ctx, cross))
    if cross == Cross("category", "year"):
        from masrl_kb.site.charts import year_chart

        page.add("## Papers per year by category", year_chart(page, ctx))
    return page


def crosstab_index(ctx: Context) -> Page:
    page = Page(urls.CROSSTABS, "Cross-tabs")
    page.add(
        "# Cross-tabs",
        "<p>Two axes at a time: every cell counts the papers tagged with "
        "both values and links to exactly those papers. Empty cells are the field's "
        "gaps; the " + page.link(urls.GAPS, "gaps page") + " lists them with the papers "
        "that come closest.</p>",
    )
    items = []
    for broad, variant in CROSSTABS:
        item = page.link(urls.crosstab(broad), urls.cross_title(ctx, broad))
        if variant is not None:
            item += " · " + page.link(urls.crosstab(variant), urls.cross_title(ctx, variant))
        items.append(f"<li>{item}</li>")
    page.add(f'<ul class="kb-links">{"".join(items)}</ul>')
    return page


def cell_page(ctx: Context, cross: Cross, rv: object, cv: object, keys: list[str]) -> Page:
    title = f"{urls.value_label(ctx, cross.rows, rv)} × {urls.value_label(ctx, cross.cols, cv)}"
    page = Page(
        urls.cell(cross, rv, cv),
        title,
        meta={"search": {"exclude": True}, "hide": ["navigation", "toc"]},
    )
    crumbs = " · ".join(
        [
            "Cross-tab: " + page.link(urls.crosstab(cross), urls.cross_title(ctx, cross)),
            page.link(urls.value(cross.rows, rv), urls.value_label(ctx, cross.rows, rv)),
            page.link(urls.value(cross.cols, cv), urls.value_label(ctx, cross.cols, cv)),
            page.link(urls.cell_filter(cross, rv, cv), "open in the papers table"),
        ]
    )
    noun = "paper" if len(keys) == 1 else "papers"
    page.add(
        h1(title),
        f'<p class="kb-crumbs">{crumbs}</p>',
        f'<p><strong data-kb-count="cell">{len(keys)}</strong> {noun} in this cell. '
        f"{reading_note(ctx, cross)}</p>",
        paper_list(page, ctx, keys),
    )
    return page


def cell_pages(ctx: Context) -> Iterator[Page]:
    for (cross, rv, cv), keys in ctx.cells.items():
        yield cell_page(ctx, cross, rv, cv, keys)


def crosstab_pages(ctx: Context) -> Iterator[Page]:
    yield crosstab_index(ctx)
    for cross in all_crosses():
        yield crosstab_page(ctx, cross)


def cell_count(ctx: Context, cross: Cross, rv: object, cv: object) -> int:
    """The count of one cell as the API computed it."""
    table: pd.DataFrame = ctx.tables[cross]
    return int(table.at[rv, cv])
