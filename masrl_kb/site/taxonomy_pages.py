"""One page per taxonomy axis: each value's definition, count and papers."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from masrl_kb.query.axes import axis_mask, value_counts
from masrl_kb.site import urls
from masrl_kb.site.components import Page
from masrl_kb.site.context import TAXONOMY_AXES, Context

# Papers listed under one value; a longer list is the filtered papers table's job
# (each value links it), so an axis page stays the same size as the pool grows.
LISTED_PER_VALUE = 50


def _counts(ctx: Context, axis: str) -> dict[str, dict[object, int]]:
    """Named count columns of an axis page (broad + strict, touched + learned)."""
    if axis == "decision":
        return {
            "Touched": value_counts("decision", papers=ctx.papers).to_dict(),
            "Learned": value_counts("decision_learned", papers=ctx.papers).to_dict(),
        }
    counts = {"Papers": value_counts(axis, papers=ctx.papers).to_dict()}
    if axis == "credit_unit":
        strict = ctx.papers[ctx.papers["credit_strict"]]
        counts["Strict"] = value_counts(axis, papers=strict).to_dict()
    return counts


def _members(ctx: Context, axis: str, value_id: str) -> list[str]:
    """The papers under one value; for a decision, those that learn it first."""
    members = ctx.papers[axis_mask(ctx.papers, axis, value_id)]
    if axis != "decision":
        return list(members.index)
    return list(members.sort_values(value_id, key=lambda s: s != "learned", kind="stable").index)


def taxonomy_pages(ctx: Context) -> Iterator[Page]:
    yield Page(urls.TAXONOMY, "Taxonomy").show("taxonomy_index.md", ctx=ctx, axes=TAXONOMY_AXES)
    for axis in TAXONOMY_AXES:
        spec = ctx.tax[axis]
        page = Page(urls.axis_page(axis), spec.label, meta={"hide": ["navigation"]})
        types: dict[object, list] = defaultdict(list)  # reward types by family
        for t in ctx.tax["reward_type"].values if axis == "reward_family" else ():
            types[t.extra.get("family")].append(t)
        yield page.show(
            "axis.md",
            ctx=ctx,
            spec=spec,
            axis=axis,
            counts=_counts(ctx, axis),
            members={v.id: _members(ctx, axis, v.id) for v in spec.values},
            types=types,
            listed=LISTED_PER_VALUE,
        )
