"""Inline SVG charts drawn at build time, each with a data-table fallback: Python computes
the geometry, the ``svg.html`` template writes (and escapes) the SVG."""

from __future__ import annotations

import pandas as pd
from markupsafe import Markup

from masrl_kb.query.axes import crosstab, value_counts
from masrl_kb.site import urls
from masrl_kb.site.components import Page
from masrl_kb.site.context import Context
from masrl_kb.site.templates import macro

WIDTH, HEIGHT = 640, 260
PAD_LEFT, PAD_RIGHT, PAD_TOP, PAD_BOTTOM = 36, 8, 12, 28
# Years shown one bar each; older papers share one "earlier" bar.
RECENT_YEARS = 8
# The stacked charts by year, by their rows' axis: title, title id, the note without data.
YEAR_CHARTS = {
    "category": ("Papers per year by category", "kb-year-title", "No papers."),
    "decision_learned": (
        "Papers that learn each orchestration decision, by year",
        "kb-learned-title",
        "No paper learns a decision yet.",
    ),
}


def _ticks(peak: int) -> list[int]:
    """About five round y-axis ticks up to ``peak``."""
    step = max(1, -(-peak // 5))
    nice = (1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000)
    step = next((n for n in nice if n >= step), step)
    return list(range(0, peak + step, step))


def _recent(table: pd.DataFrame, last: int | None) -> tuple[pd.DataFrame, list[str]]:
    """``table`` (rows x years) cut to the last RECENT_YEARS years with a paper, older
    years summed into one "≤YYYY" column; column labels as text."""
    years = [int(y) for y in sorted(table.columns) if table[y].sum()]
    if not years:
        return table.iloc[:, :0], []
    end = max(years[-1], last or years[-1])
    first = end - RECENT_YEARS + 1
    shown = table[[y for y in range(first, end + 1) if y in table.columns]].copy()
    older = [y for y in years if y < first]
    if older:
        shown.insert(0, f"≤{older[-1]}", table[older].sum(axis=1))
    return shown, [str(c) for c in shown.columns]


def _axes(height: int, ticks: list[int], scale: float) -> dict:
    """The frame both charts with a y axis share: size, plot edges, where the x labels
    sit and each tick's height."""
    return {
        "width": WIDTH,
        "height": height,
        "left": PAD_LEFT,
        "right": WIDTH - PAD_RIGHT,
        "axis_y": height - PAD_BOTTOM + 18,
        "ticks": [(t, height - PAD_BOTTOM - t * scale) for t in ticks],
    }


def _stacked_years(table: pd.DataFrame, names: list[str], partial: str | None) -> dict:
    """The geometry of stacked bars per year; ``partial`` names the year still under way."""
    totals = table.sum(axis=0)
    ticks = _ticks(int(totals.max()) if len(totals) else 0)
    scale = (HEIGHT - PAD_TOP - PAD_BOTTOM) / max(ticks[-1], 1)
    slot = (WIDTH - PAD_LEFT - PAD_RIGHT) / max(len(table.columns), 1)
    bars = []
    for i, year in enumerate(table.columns):
        label, y, rects = str(year), float(HEIGHT - PAD_BOTTOM), []
        for j, name in enumerate(names):
            n = int(table.iloc[j][year])
            if n:
                y -= n * scale
                tip = f"{label}{' (so far)' if label == partial else ''} · {name}: {n}"
                rects.append({"c": j, "y": y, "h": n * scale, "tip": tip})
        bars.append({"x": PAD_LEFT + i * slot, "label": label, "partial": label == partial})
        bars[-1]["rects"] = rects
    return _axes(HEIGHT, ticks, scale) | {"slot": slot, "bars": bars}


def year_chart(page: Page, ctx: Context, axis: str = "category") -> Markup:
    """Stacked bars by year, one colour per ``axis`` value, legend linked: papers per
    category, or the papers that learn each decision (``decision_learned``)."""
    title, tid, empty = YEAR_CHARTS[axis]
    table = crosstab(axis, "year", papers=ctx.papers)
    if axis == "decision_learned":
        table = table.reindex(ids := list(ctx.tax["decision"].ids))
        names = [f"{d} {ctx.tax['decision'].label_of(d)}" for d in ids]
    else:
        names = [ctx.tax[axis].label_of(c) for c in table.index]
    if not _recent(table, None)[1] or not int(table.to_numpy().sum()):
        return Markup(f'<p class="kb-dim">{empty}</p>')
    covered = ctx.coverage  # its year is still under way, unless it is 31 December
    partial = None if (covered.month, covered.day) == (12, 31) else str(covered.year)
    table, years = _recent(table, ctx.coverage.year)
    chart = _stacked_years(table, names, partial)
    totals = table.sum(axis=0)
    with_all = axis == "category"
    rows = [
        [y, *[int(v) for v in table[c]], *([int(totals[c])] if with_all else [])]
        for y, c in zip(years, table.columns, strict=True)
        if totals[c] or not with_all
    ]
    legend = [(f"kb-c{j}", urls.value(axis, v), names[j]) for j, v in enumerate(table.index)]
    chart.update(title=title, tid=tid, partial=partial, legend=legend, rows=rows)
    chart["covered"] = covered.isoformat()
    chart["head"] = ["Year", *names, *(["All"] if with_all else [])]
    return macro("svg.html", "stacked")(chart, page)


def decision_chart(page: Page, ctx: Context) -> Markup:
    """Horizontal bars per decision, learned and present (fixed or prompted): label and
    counts on one line, the bar under it, so phones (larger text) never clip a label."""
    ids = ctx.tax["decision"].ids
    counts = {d: value_counts(d, papers=ctx.papers) for d in ids}
    peak = max((int(c["present"] + c["learned"]) for c in counts.values()), default=0) or 1
    row_h, bar_w, rows = 54, WIDTH - PAD_RIGHT, []
    for i, did in enumerate(ids):
        learned, present = int(counts[did]["learned"]), int(counts[did]["present"])
        label = f"{did} {ctx.tax['decision'].label_of(did)}"
        w_learned, w_present = bar_w * learned / peak, bar_w * present / peak
        bars = [
            ("kb-learned-bar", 0.0, w_learned, learned, "learned"),
            ("kb-present-bar", w_learned, w_present, present, "present"),
        ]
        rows.append({"y": 4 + i * row_h, "label": label, "learned": learned, "present": present})
        rows[-1].update(bars=bars, cells=[label, learned, present])
    chart = {"width": WIDTH, "height": 8 + len(ids) * row_h, "rows": rows}
    return macro("svg.html", "decisions")(chart, page)


BEST_HEIGHT = 220
BEST_LABELS = 6  # date labels shown at most under a best-over-time chart


def best_chart(page: Page, points: list[tuple[str, float, str]], c: dict) -> Markup:
    """The best value reported so far at each date (``points``:
    :func:`masrl_kb.query.values.best_over_time`), a step line with a dot per date;
    ``c`` names the ``title``, its ``tid`` and the ``unit``; ``ctx`` gives titles."""
    peak = max(v for _, v, _ in points)
    ticks = _ticks(max(1, int(-(-peak // 1))))
    inner = BEST_HEIGHT - PAD_TOP - PAD_BOTTOM
    scale = inner / max(ticks[-1], 1)
    slot = (WIDTH - PAD_LEFT - PAD_RIGHT) / len(points)
    every = -(-len(points) // BEST_LABELS)
    unit = c.get("unit") or ""
    dots = []
    for i, (date, value, key) in enumerate(points):
        x, y = PAD_LEFT + (i + 0.5) * slot, BEST_HEIGHT - PAD_BOTTOM - max(value, 0) * scale
        tip = f"{date} · best so far: {value:g}{unit} ({c['titles'][key]})"
        dots.append({"x": x, "y": y, "tip": tip, "label": date if i % every == 0 else ""})
    path = f"M{dots[0]['x']:.1f} {dots[0]['y']:.1f}" + "".join(
        f" H{d['x']:.1f} V{d['y']:.1f}" for d in dots[1:]
    )
    chart = _axes(BEST_HEIGHT, ticks, scale) | {
        "dots": dots,
        "path": path,
        "title": c["title"],
        "tid": c["tid"],
        "head": ["Date", f"Best so far{f' ({unit})' if unit else ''}", "Paper"],
        "rows": [[d, f"{v:g}", c["titles"][k]] for d, v, k in points],
    }
    return macro("svg.html", "best")(chart, page)
