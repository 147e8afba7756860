"""One page per taxonomy axis: each value's definition, count and papers."""

from __future__ import annotations

from collections.abc import Iterator

from masrl_kb.kb.rules import decision_status
from masrl_kb.query.frames import axis_mask, value_counts
from masrl_kb.site import urls
from masrl_kb.site.components import Page, paper_list
from masrl_kb.site.context import TAXONOMY_AXES, Context
from masrl_kb.site.html import esc, md_text


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


def _summary_table(page: Page, ctx: Context, axis: str, counts: dict) -> str:
    head = ["Id", "Value", "Definition", *counts]
    rows = []
    for v in ctx.tax[axis].values:
        cells = [
            f"<code>{esc(v.id)}</code>",
            f'<a href="#{urls.anchor(axis, v.id)}">{esc(v.label)}</a>',
            esc(v.definition),
        ]
        cells += [
            f'<span data-kb-count="{esc(name)}">{c[v.id]}</span>' for name, c in counts.items()
        ]
        cls = ' class="kb-zero"' if not next(iter(counts.values()))[v.id] else ""
        rows.append(
            f'<tr data-value="{esc(v.id)}"{cls}>'
            + "".join(f"<td>{c}</td>" for c in cells)
            + "</tr>"
        )
    th = "".join(f"<th>{esc(h)}</th>" for h in head)
    return (
        f'<div class="kb-scroll"><table class="kb-table"><thead><tr>{th}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def _reward_types(page: Page, ctx: Context, family: str) -> str:
    """The reward types of one family, each with its own anchor."""
    items = [
        f'<li id="{urls.anchor("reward_type", t.id)}"><code>{esc(t.id)}</code> '
        f"{esc(t.label)}: {esc(t.definition)}</li>"
        for t in ctx.tax["reward_type"].values
        if t.extra.get("family") == family
    ]
    return f"<p>Reward types in this family:</p><ul>{''.join(items)}</ul>" if items else ""


def _decision_extra(ctx: Context, did: str):
    """Extra cells for decision lists: status and the record's reason."""

    def cells(key: str) -> list[str]:
        entry = next(d for d in ctx.row(key)["decisions"] if d["id"] == did)
        status = decision_status(entry)
        return [f'<span class="kb-{status}-tag">{status}</span>', esc(entry["why"])]

    return cells


def _value_section(page: Page, ctx: Context, axis: str, value, counts: dict) -> list[str]:
    label = md_text(urls.value_label(ctx, axis, value.id))
    heading = f"## {label} {{#{urls.anchor(axis, value.id)}}}"
    numbers = " · ".join(f"{name.lower()}: {c[value.id]}" for name, c in counts.items())
    filt = page.link(urls.filtered({axis: value.id}), "open in the papers table")
    parts = [
        heading,
        f'<p>{esc(value.definition)} <span class="kb-dim">({numbers}) · {filt}</span></p>',
    ]
    if axis == "reward_family":
        parts.append(_reward_types(page, ctx, value.id))
    members = ctx.papers[axis_mask(ctx.papers, axis, value.id)]
    if axis == "decision":
        order = members[value.id].map({"learned": 0, "present": 1}).astype(int)
        keys = list(members.assign(_o=order).sort_values(["_o"], kind="stable").index)
        parts.append(paper_list(page, ctx, keys, ("Status", "Why"), _decision_extra(ctx, value.id)))
    else:
        parts.append(paper_list(page, ctx, members.index))
    return parts


def axis_page(ctx: Context, axis: str) -> Page:
    spec = ctx.tax[axis]
    page = Page(urls.axis_page(axis), spec.label)
    counts = _counts(ctx, axis)
    page.add(
        f"# {md_text(spec.label)}",
        f"<p>{esc(spec.description)}</p>",
        _summary_table(page, ctx, axis, counts),
    )
    for value in spec.values:
        page.add(*_value_section(page, ctx, axis, value, counts))
    return page


def taxonomy_index(ctx: Context) -> Page:
    page = Page(urls.TAXONOMY, "Taxonomy")
    items = "".join(
        f"<li>{page.link(urls.axis_page(a), ctx.tax[a].label)}: {esc(ctx.tax[a].description)}</li>"
        for a in TAXONOMY_AXES
    )
    page.add(
        "# Taxonomy",
        "<p>The survey tags every paper on a few controlled axes. Each page "
        "gives an axis's values with their definitions, counts and papers.</p>",
        f'<ul class="kb-links">{items}</ul>',
    )
    return page


def taxonomy_pages(ctx: Context) -> Iterator[Page]:
    yield taxonomy_index(ctx)
    for axis in TAXONOMY_AXES:
        yield axis_page(ctx, axis)
