"""Stable site URLs (site-relative directory URLs such as ``papers/<key>/``, made relative
by :func:`masrl_kb.site.html.rel`) and display labels for axes and values."""

from __future__ import annotations

from urllib.parse import urlencode

from masrl_kb.kb.readings import READING_AXES
from masrl_kb.kb.rules import NA
from masrl_kb.site.context import BROAD, READING, Context, Cross
from masrl_kb.site.html import slug

HOME = ""
GAPS = "gaps/"
PAPERS = "papers/"
CROSSTABS = "crosstabs/"
TAXONOMY = "taxonomy/"
EXCLUSIONS = "exclusions/"
NEW = "new/"
FEED = "feed.xml"
DOWNLOADS = "downloads/"
CONTRIBUTE = "contribute/"
CITE = "cite/"
TRACES = "traces/"
AGREEMENT = "agreement/"
EVALUATIONS = "evaluations/"
PROTOCOL = "protocol/"
ROUNDS = "rounds/"
SINCE = "since-survey/"
AUTHORS = "authors/"
CLAIMS = "claims/"
CODEBOOK = "codebook/"  # docs/codebook.md, a hand-written page


def paper(key: str) -> str:
    return f"papers/{key}/"


def benchmark(bid: str) -> str:
    """A benchmark's page (every benchmark a paper reports on, pooled or not)."""
    return f"benchmarks/{slug(bid)}/"


def axis_page(axis: str) -> str:
    """The taxonomy page an axis is described on (decision_learned and reward_type share
    one)."""
    page = {"decision_learned": "decision", "reward_type": "reward_family"}.get(axis, axis)
    return f"taxonomy/{page}/"


def value(axis: str, value_id: object) -> str:
    """A value's section on its axis page (the papers table for years)."""
    if axis == "year":
        return filtered({"year": value_id})
    return f"{axis_page(axis)}#{anchor(axis, value_id)}"


def anchor(axis: str, value_id: object) -> str:
    prefix = "type-" if axis == "reward_type" else "v-"
    return prefix + slug(value_id)


def crosstab(cross: Cross) -> str:
    return f"crosstabs/{cross.slug}/"


def cell(cross: Cross, row_value: object, col_value: object) -> str:
    """A cell's page; a strict or learned cell is a section of its broad cell's page."""
    broad, reading = BROAD.get(cross, cross), READING.get(cross)
    name = f"{broad.rows}-{slug(row_value)}--{broad.cols}-{slug(col_value)}"
    return f"cells/{name}/" + (f"#{reading}" if reading else "")


# The papers table's URL parameter per axis (see docs/assets/kb.js).
FILTER_PARAM = {"decision": "decision", "decision_learned": "learned"}


def filtered(filters: dict[str, object]) -> str:
    """The papers table filtered to ``{axis: value}`` (include filters)."""
    params = {FILTER_PARAM.get(axis, axis): str(v) for axis, v in filters.items()}
    return f"{PAPERS}?{urlencode(params)}"


def cell_filter(cross: Cross, row_value: object, col_value: object) -> str:
    """The papers table filtered to one cell."""
    filters: dict[str, object] = {cross.rows: row_value, cross.cols: col_value}
    if cross.strict:
        filters["credit_strict"] = "yes"
    return filtered(filters)


# ---------------------------------------------------------------- labels


def axis_label(ctx: Context, axis: str) -> str:
    if axis == "year":
        return "Year"
    if axis == "decision_learned":
        return f"{ctx.tax['decision'].label} (learned)"
    return ctx.tax[axis].label


def value_label(ctx: Context, axis: str, value_id: object) -> str:
    """A value's display label; ids are kept where they are the survey's names."""
    if axis == "year":
        return str(value_id)
    name = "decision" if axis == "decision_learned" else axis
    label = ctx.tax[name].label_of(str(value_id))
    if name in ("decision", "reward_family") and value_id != NA:
        return f"{value_id} {label}"
    return label


def cell_label(ctx: Context, cross: Cross, row_value: object, col_value: object) -> str:
    """A cell's two values, "row × column"."""
    return f"{value_label(ctx, cross.rows, row_value)} × {value_label(ctx, cross.cols, col_value)}"


def cross_title(ctx: Context, cross: Cross) -> str:
    reading = " (strict reading)" if cross.strict else ""
    return f"{axis_label(ctx, cross.rows)} × {axis_label(ctx, cross.cols)}{reading}"


# Reading fields whose label is not their taxonomy axis's.
READING_LABELS = {"credit_strict": "Strict credit", "is_rl": "Uses RL"}


def reading_axis_label(ctx: Context, field: str) -> str:
    """A reading field's display label ("Credit unit", "Strict credit")."""
    axis = READING_AXES.get(field)
    return READING_LABELS.get(field) or (ctx.tax[axis].label if axis else field)


def reading_label(ctx: Context, field: str, value: object) -> str:
    """A reader's value as the site labels it (yes/no for flags, taxonomy labels)."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    axis = READING_AXES.get(field)
    if axis and isinstance(value, str) and value in ctx.tax[axis].ids:
        return ctx.tax[axis].label_of(value)
    return str(value)
