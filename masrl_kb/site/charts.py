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


# Years shown one bar each; older papers share one "earlier" bar.
RECENT_YEARS = 8


def _recent(table, last: int | None):
    """``table`` (rows x years) cut to the last RECENT_YEARS years with a paper, older
    years summed into one "≤YYYY" column; column labels as text."""
    years = [y for y in sorted(table.columns) if table[y].sum()]
    if not years:
        return table.iloc[:, :0], []
    end = max(years[-1], last or years[-1])
    first = end - RECENT_YEARS + 1
    shown = table[[y for y in range(first, end + 1) if y in table.columns]].copy()
    older = [y for y in years if y < first]
    if older:
        shown.insert(0, f"≤{older[-1]}", table[older].sum(axis=1))
    return shown, [str(c) for c in shown.columns]


def _stacked_years(table, names: list[str], partial: str | None, title: str, tid: str) -> str:
    """An SVG of stacked bars per year; ``partial`` names the year still under way."""
    totals = table.sum(axis=0)
    ticks = _ticks(int(totals.max()) if len(totals) else 0)
    scale = (HEIGHT - PAD_TOP - PAD_BOTTOM) / max(ticks[-1], 1)
    slot = (WIDTH - PAD_LEFT - PAD_RIGHT) / max(len(table.columns), 1)
    parts = _y_axis(ticks, scale)
    for i, year in enumerate(table.columns):
        x, y = PAD_LEFT + i * slot, HEIGHT - PAD_BOTTOM
        label = str(year)
        mark = " kb-partial" if label == partial else ""
        for j, name in enumerate(names):
            n = int(table.iloc[j][year])
            if n:
                h = n * scale
                y -= h
                tip = f"{label}{' (so far)' if mark else ''} · {name}: {n}"
                parts.append(
                    f'<rect class="kb-c{j}{mark}" x="{x + slot * 0.15:.1f}" y="{y:.1f}" '
                    f'width="{slot * 0.7:.1f}" height="{h:.1f}"><title>{esc(tip)}</title></rect>'
                )
        parts.append(
            f'<text class="kb-tick" x="{x + slot / 2:.1f}" y="{HEIGHT - PAD_BOTTOM + 18}" '
            f'text-anchor="middle">{esc(label)}{"*" if mark else ""}</text>'
        )
    return (
        f'<svg class="kb-chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        f'aria-labelledby="{tid}"><title id="{tid}">{esc(title)}</title>{"".join(parts)}</svg>'
    )


def _partial_note(partial: str | None, covered: str) -> str:
    if not partial:
        return ""
    return (
        f'<p class="kb-note kb-partial-note">* {esc(partial)} so far: the pool covers papers '
        f"up to {esc(covered)}, so its bar is still growing.</p>"
    )


def partial_year(ctx: Context) -> tuple[str | None, str]:
    """The year still under way at the pool's coverage date (None on 31 December)."""
    covered = ctx.coverage
    return (None if (covered.month, covered.day) == (12, 31) else str(covered.year)), (
        covered.isoformat()
    )


def year_chart(page: Page, ctx: Context) -> Markup:
    """Stacked bars: papers per year, one colour per category."""
    partial, covered = partial_year(ctx)
    table, years = _recent(crosstab("category", "year", papers=ctx.papers), ctx.coverage.year)
    if not years:
        return Markup('<p class="kb-dim">No papers.</p>')
    names = [ctx.tax["category"].label_of(c) for c in table.index]
    svg = _stacked_years(table, names, partial, "Papers per year by category", "kb-year-title")
    legend = "".join(
        f'<span class="kb-key-item"><span class="kb-swatch kb-c{j}"></span>'
        f"{link(page.url, urls.value('category', c), ctx.tax['category'].label_of(c))}</span>"
        for j, c in enumerate(table.index)
    )
    totals = table.sum(axis=0)
    rows = [
        [y, *[int(v) for v in table[c]], int(totals[c])]
        for y, c in zip(years, table.columns, strict=True)
        if totals[c]
    ]
    return Markup(
        f'<figure class="kb-figure">{svg}<figcaption class="kb-legend">{legend}'
        f"</figcaption></figure>{_partial_note(partial, covered)}"
        f"{_fallback('Papers per year by category', ['Year', *names, 'All'], rows)}"
    )


def learned_chart(page: Page, ctx: Context) -> Markup:
    """Stacked bars: per year, the papers that learn each decision O1..O5."""
    partial, covered = partial_year(ctx)
    ids = list(ctx.tax["decision"].ids)
    raw = crosstab("decision_learned", "year", papers=ctx.papers).reindex(ids)
    table, years = _recent(raw, ctx.coverage.year)
    if not years or not int(table.to_numpy().sum()):
        return Markup('<p class="kb-dim">No paper learns a decision yet.</p>')
    names = [f"{d} {ctx.tax['decision'].label_of(d)}" for d in ids]
    title = "Papers that learn each orchestration decision, by year"
    svg = _stacked_years(table, names, partial, title, "kb-learned-title")
    legend = "".join(
        f'<span class="kb-key-item"><span class="kb-swatch kb-c{j}"></span>'
        f"{link(page.url, urls.value('decision_learned', d), names[j])}</span>"
        for j, d in enumerate(ids)
    )
    rows = [[y, *[int(v) for v in table[c]]] for y, c in zip(years, table.columns, strict=True)]
    return Markup(
        f'<figure class="kb-figure">{svg}<figcaption class="kb-legend">{legend}'
        f"</figcaption></figure>{_partial_note(partial, covered)}"
        f"{_fallback(title, ['Year', *names], rows)}"
    )


def decision_chart(page: Page, ctx: Context) -> Markup:
    """Horizontal bars per decision: learned, and present (fixed or prompted)."""
    ids = ctx.tax["decision"].ids
    counts = {d: value_counts(d, papers=ctx.papers) for d in ids}
    peak = max((int(c["present"] + c["learned"]) for c in counts.values()), default=0) or 1
    # Each decision: its label and counts on one line, its bar under it across the
    # chart, so phones (which enlarge the text) never clip a label.
    row_h, width = 54, WIDTH
    bar_w = width - PAD_RIGHT
    parts = []
    for i, did in enumerate(ids):
        y = 4 + i * row_h
        learned, present = int(counts[did]["learned"]), int(counts[did]["present"])
        label = f"{did} {ctx.tax['decision'].label_of(did)}"
        parts.append(
            f'<text class="kb-tick" x="0" y="{y + 16}">{esc(label)}: {learned} learned · '
            f"{present} present</text>"
        )
        x = 0.0
        for cls, n, word in (
            ("kb-learned-bar", learned, "learned"),
            ("kb-present-bar", present, "present"),
        ):
            w = bar_w * n / peak
            parts.append(
                f'<rect class="{cls}" x="{x:.1f}" y="{y + 24}" width="{w:.1f}" height="18">'
                f"<title>{esc(label)}: {n} {word}</title></rect>"
            )
            x += w
    height = 8 + len(ids) * row_h
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
