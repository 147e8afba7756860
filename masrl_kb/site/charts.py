"""Inline SVG charts drawn at build time, each with a data-table fallback.

SVG is assembled here rather than in a template (coordinates are arithmetic);
every text in it goes through :func:`~masrl_kb.site.html.esc`, the one SVG escaper.
"""

from __future__ import annotations

from markupsafe import Markup

from masrl_kb.query.frames import crosstab, value_counts
from masrl_kb.site import urls
from masrl_kb.site.components import Page
from masrl_kb.site.context import Context
from masrl_kb.site.html import esc, link

WIDTH, HEIGHT = 640, 260
PAD_LEFT, PAD_RIGHT, PAD_TOP, PAD_BOTTOM = 36, 8, 12, 28


def _ticks(peak: int) -> list[int]:
    """About five round y-axis ticks up to ``peak``."""
    step = max(1, -(-peak // 5))
    for nice in (1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000):
        if nice >= step:
            step = nice
            break
    return list(range(0, peak + step, step))


def _fallback(caption: str, head: list[str], rows: list[list[object]]) -> str:
    th = "".join(f"<th>{esc(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in r) + "</tr>" for r in rows)
    return (
        f'<details class="kb-chart-data"><summary>{esc(caption)}: the numbers</summary>'
        f'<div class="kb-scroll"><table class="kb-table"><thead><tr>{th}</tr></thead>'
        f"<tbody>{body}</tbody></table></div></details>"
    )


def _y_axis(ticks: list[int], scale: float) -> list[str]:
    parts = []
    for t in ticks:
        y = HEIGHT - PAD_BOTTOM - t * scale
        parts.append(
            f'<line class="kb-grid" x1="{PAD_LEFT}" x2="{WIDTH - PAD_RIGHT}" '
            f'y1="{y:.1f}" y2="{y:.1f}"/>'
            f'<text class="kb-tick" x="{PAD_LEFT - 6}" y="{y + 4:.1f}" '
            f'text-anchor="end">{t}</text>'
        )
    return parts


def year_chart(page: Page, ctx: Context) -> Markup:
    """Stacked bars: papers per year, one colour per category."""
    table = crosstab("category", "year", papers=ctx.papers)
    years = list(table.columns)
    totals = table.sum(axis=0)
    if not years:
        return Markup('<p class="kb-dim">No papers.</p>')
    ticks = _ticks(int(totals.max()))
    scale = (HEIGHT - PAD_TOP - PAD_BOTTOM) / max(ticks[-1], 1)
    slot = (WIDTH - PAD_LEFT - PAD_RIGHT) / len(years)
    parts = _y_axis(ticks, scale)
    label_every = max(1, round(len(years) / 12))
    for i, year in enumerate(years):
        x = PAD_LEFT + i * slot
        y = HEIGHT - PAD_BOTTOM
        for j, category in enumerate(table.index):
            n = int(table.at[category, year])
            if n:
                h = n * scale
                y -= h
                tip = f"{year} · {ctx.tax['category'].label_of(category)}: {n}"
                parts.append(
                    f'<rect class="kb-c{j}" x="{x + slot * 0.15:.1f}" y="{y:.1f}" '
                    f'width="{slot * 0.7:.1f}" height="{h:.1f}"><title>{esc(tip)}'
                    "</title></rect>"
                )
        if i % label_every == 0 or i == len(years) - 1:
            parts.append(
                f'<text class="kb-tick" x="{x + slot / 2:.1f}" '
                f'y="{HEIGHT - PAD_BOTTOM + 16}" text-anchor="middle">{year}</text>'
            )
    legend = "".join(
        f'<span class="kb-key-item"><span class="kb-swatch kb-c{j}"></span>'
        f"{link(page.url, urls.value('category', c), ctx.tax['category'].label_of(c))}</span>"
        for j, c in enumerate(table.index)
    )
    svg = (
        f'<svg class="kb-chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        'aria-labelledby="kb-year-title"><title id="kb-year-title">Papers per year by '
        f"category</title>{''.join(parts)}</svg>"
    )
    head = ["Year", *[ctx.tax["category"].label_of(c) for c in table.index], "All"]
    rows = [
        [y, *[int(table.at[c, y]) for c in table.index], int(totals[y])] for y in years if totals[y]
    ]
    return Markup(
        f'<figure class="kb-figure">{svg}<figcaption class="kb-legend">{legend}'
        f"</figcaption></figure>{_fallback('Papers per year by category', head, rows)}"
    )


def decision_chart(page: Page, ctx: Context) -> Markup:
    """Horizontal bars per decision: learned, and present (fixed or prompted)."""
    ids = ctx.tax["decision"].ids
    counts = {d: value_counts(d, papers=ctx.papers) for d in ids}
    peak = max((int(c["present"] + c["learned"]) for c in counts.values()), default=0) or 1
    labels = [f"{d} {ctx.tax['decision'].label_of(d)}" for d in ids]
    # Room for the longest label at the tick font (about 7 px a character at 12 px).
    row_h, width = 30, WIDTH
    label_w = 16 + 7 * max((len(label) for label in labels), default=0)
    bar_w = width - label_w - 150  # room after the bars for "n learned · n present"
    parts = []
    for i, did in enumerate(ids):
        y = 8 + i * row_h
        learned, present = int(counts[did]["learned"]), int(counts[did]["present"])
        label = f"{did} {ctx.tax['decision'].label_of(did)}"
        parts.append(
            f'<text class="kb-tick" x="{label_w - 8}" y="{y + 15}" '
            f'text-anchor="end">{esc(label)}</text>'
        )
        x = label_w
        for cls, n, word in (
            ("kb-learned-bar", learned, "learned"),
            ("kb-present-bar", present, "present"),
        ):
            w = bar_w * n / peak
            parts.append(
                f'<rect class="{cls}" x="{x:.1f}" y="{y}" width="{w:.1f}" height="20">'
                f"<title>{esc(label)}: {n} {word}</title></rect>"
            )
            x += w
        parts.append(
            f'<text class="kb-tick" x="{x + 6:.1f}" y="{y + 15}">{learned} learned · '
            f"{present} present</text>"
        )
    height = 16 + len(ids) * row_h
    svg = (
        f'<svg class="kb-chart" viewBox="0 0 {width} {height}" role="img" '
        'aria-labelledby="kb-dec-title"><title id="kb-dec-title">Orchestration decisions: '
        "papers that learn each one, and papers where it is fixed</title>"
        f"{''.join(parts)}</svg>"
    )
    legend = (
        '<span class="kb-key-item"><span class="kb-swatch kb-learned-bar"></span>learned '
        '(an RL update acts on it)</span><span class="kb-key-item"><span class="kb-swatch '
        'kb-present-bar"></span>present (fixed, prompted or heuristic)</span>'
    )
    rows = [
        [
            f"{d} {ctx.tax['decision'].label_of(d)}",
            int(counts[d]["learned"]),
            int(counts[d]["present"]),
        ]
        for d in ids
    ]
    return Markup(
        f'<figure class="kb-figure">{svg}<figcaption class="kb-legend">{legend}</figcaption>'
        f"</figure>{_fallback('Decisions', ['Decision', 'Learned', 'Present'], rows)}"
    )
