"""The gaps page: the survey's headline gaps first, then every (near-)empty cell."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from masrl_kb.kb.rules import NA
from masrl_kb.query.claims import ClaimResult
from masrl_kb.query.frames import axis_mask, select
from masrl_kb.site import urls
from masrl_kb.site.components import Page, inline_papers
from masrl_kb.site.context import CROSSTABS, Context, Cross
from masrl_kb.site.crosstabs import NEAR_EMPTY
from masrl_kb.site.html import esc, md_text

CLOSEST_PER_GAP = 4
INLINE_LIMIT = 24


@dataclass(frozen=True)
class Headline:
    """A gap the survey names, measured with ``select`` queries."""

    id: str
    title: str
    text: str
    measures: tuple[tuple[str, str], ...]  # (label, where): each shown as a count
    members: str  # where: the papers that fill the gap, however few
    closest: tuple[tuple[str, str], ...]  # (label, where): who comes closest
    claims: tuple[str, ...] = ()


LEARNS_OTHER = '(O1 == "learned" or O2 == "learned" or O4 == "learned") and O5 != "learned"'
HEADLINES = (
    Headline(
        "o5-stop",
        "Learning when to stop (O5)",
        "The survey's headline gap: does an RL update ever act on the decision that ends the "
        "team's work? Deployed teams stop by fixed budgets, external success signals or the "
        "interface ending the run.",
        (("learn O5", 'O5 == "learned"'), ("make O5 by a fixed rule", 'O5 == "present"')),
        'O5 == "learned"',
        (
            ("Stop by a fixed, prompted or heuristic rule (O5 present)", 'O5 == "present"'),
            (
                "Learn another orchestrator decision (O1 spawn, O2 delegate or O4 aggregate)",
                LEARNS_OTHER,
            ),
        ),
        ("o5-never-learned",),
    ),
    Headline(
        "message-credit",
        "Credit for single messages",
        "Which message one agent sent another earned the team's reward? Few papers expose "
        "credit at that unit, fewer still with an explicit estimator.",
        (
            ("broad reading", 'credit_unit == "message"'),
            ("strict reading", 'credit_unit == "message" and credit_strict'),
        ),
        'credit_unit == "message"',
        (
            ("Turn-level credit (the next coarser unit)", 'credit_unit == "turn"'),
            ("Tool-call credit (the next finer unit)", 'credit_unit == "tool"'),
            (
                "Learn how agents communicate (O3) without message credit",
                'O3 == "learned" and credit_unit != "message"',
            ),
        ),
        ("message-credit-broad", "message-credit-strict"),
    ),
    Headline(
        "tool-reward",
        "Rewarding tool use (R5)",
        "A reward placed on tool calls and their results inside a multi-agent team.",
        (("reward family R5", 'reward_family == "R5"'),),
        'reward_family == "R5"',
        (
            ("Credit per tool call", 'credit_unit == "tool"'),
            ("Evaluated on tool use", 'scenario == "tool_use"'),
        ),
        ("r5-tool-reward-empty",),
    ),
    Headline(
        "orchestrator-credit",
        "Credit on the orchestrator's decisions",
        "A reward or credit signal on what the orchestrator itself decided.",
        (
            ("broad reading", 'credit_unit == "orchestrator"'),
            ("strict reading", 'credit_unit == "orchestrator" and credit_strict'),
        ),
        'credit_unit == "orchestrator" and credit_strict',
        (
            (
                "Broad reading only (design or evolution signals)",
                'credit_unit == "orchestrator" and not credit_strict',
            ),
            (
                "Orchestration reward (R7) with credit elsewhere",
                'reward_family == "R7" and credit_unit != "orchestrator"',
            ),
        ),
        ("orchestrator-credit-broad", "orchestrator-credit-strict"),
    ),
)


def measure(ctx: Context, where: str) -> pd.DataFrame:
    """The papers a headline query selects."""
    return select(where, papers=ctx.papers)


def _claim_line(page: Page, ctx: Context, claim_ids: tuple[str, ...]) -> str:
    if not ctx.claims:
        return ""
    found: list[ClaimResult] = [r for r in ctx.claims if r.claim.id in claim_ids]
    items = [
        f'<span class="kb-claim-ref">{page.link(urls.HOME + "#claim-" + r.claim.id, r.claim.id)}'
        f": {_status(r)} (value {r.value}, expected {esc(r.claim.op)} {r.claim.expected})</span>"
        for r in found
    ]
    return f'<p class="kb-dim">Survey claim: {"; ".join(items)}</p>' if items else ""


def _status(result: ClaimResult) -> str:
    if result.holds:
        return '<span class="kb-holds">holds</span>'
    return '<span class="kb-broken">does not hold</span>'


def headline_numbers(ctx: Context, gap: Headline) -> list[tuple[str, int]]:
    return [(label, len(measure(ctx, where))) for label, where in gap.measures]


def headline_section(page: Page, ctx: Context, gap: Headline) -> list[str]:
    numbers = " · ".join(
        f'<strong data-kb-gap="{esc(gap.id)}:{i}">{n}</strong> {esc(label)}'
        for i, (label, n) in enumerate(headline_numbers(ctx, gap))
    )
    members = list(measure(ctx, gap.members).index)
    parts = [
        f"### {md_text(gap.title)} {{#{gap.id}}}",
        f'<p>{esc(gap.text)}</p><p class="kb-gap-numbers">{numbers}</p>',
        _claim_line(page, ctx, gap.claims),
        f"<p>Papers that fill it ({len(members)}): "
        f"{inline_papers(page, ctx, members, INLINE_LIMIT)}</p>",
    ]
    rows = []
    for label, where in gap.closest:
        keys = [k for k in measure(ctx, where).index if k not in members]
        rows.append(
            f"<li>{esc(label)} ({len(keys)}): {inline_papers(page, ctx, keys, INLINE_LIMIT)}</li>"
        )
    parts.append(f'<p>Closest:</p><ul class="kb-closest">{"".join(rows)}</ul>')
    return [p for p in parts if p]


# ---------------------------------------------------------------- cells


def closest_papers(ctx: Context, cross: Cross, rv: object, cv: object) -> list[tuple[str, str]]:
    """Papers sharing one coordinate with the cell, nearest along the other axis first.

    Returns (key, where it sits) pairs; the taxonomy order of an axis is its
    distance (credit units run from fine to coarse).
    """
    table = ctx.tables[cross]
    in_cell = set(ctx.cells.get((cross, rv, cv), []))
    found: dict[str, tuple[int, str]] = {}
    sides = (
        (cross.rows, rv, cross.cols, list(table.columns), cv),
        (cross.cols, cv, cross.rows, list(table.index), rv),
    )
    for fixed, fixed_v, other, order, other_v in sides:
        sharing = ctx.papers[axis_mask(ctx.papers, fixed, fixed_v)]
        if cross.strict:
            sharing = sharing[sharing["credit_strict"]]
        target = order.index(other_v)
        for key in sharing.index:
            if key in in_cell:
                continue
            spots = _spots(ctx, other, key, order)
            if not spots:
                continue
            dist, where = min((abs(p - target), order[p]) for p in spots)
            label = urls.value_label(ctx, other, where)
            if key not in found or dist < found[key][0]:
                found[key] = (dist, label)
    ranked = sorted(found.items(), key=lambda kv: (kv[1][0], kv[0]))
    return [(k, label) for k, (_, label) in ranked[:CLOSEST_PER_GAP]]


def _spots(ctx: Context, axis: str, key: str, order: list) -> list[int]:
    row = ctx.row(key)
    if axis in urls.DECISION_AXES:
        wanted = ("learned",) if axis == "decision_learned" else ("present", "learned")
        return [order.index(d) for d in order if row[d] in wanted]
    value = int(row[axis]) if axis == "year" else row[axis]
    return [order.index(value)] if value in order else []


def gap_cells(ctx: Context, broad: Cross, variant: Cross | None) -> list[tuple]:
    """(row, col, broad count, variant count) of every cell at or under NEAR_EMPTY.

    A cell counts when its variant reading (strict or learned) is near-empty;
    ``NA`` rows and columns are left out: "no reward" has no gap.
    """
    table = ctx.tables[broad]
    twin = ctx.tables[variant] if variant is not None else table
    out = []
    for r_i, rv in enumerate(table.index):
        for c_i, cv in enumerate(table.columns):
            if NA in (rv, cv):
                continue
            # decision and decision_learned share value ids, so one lookup serves both
            n_variant = int(twin.at[rv, cv])
            if n_variant <= NEAR_EMPTY:
                out.append((int(n_variant), int(table.at[rv, cv]), r_i, c_i, rv, cv))
    return [(rv, cv, broad_n, var_n) for var_n, broad_n, _, _, rv, cv in sorted(out)]


SURVEY_TABLES = CROSSTABS[:4]  # category x year is context, not a survey axis


def _variant_name(variant: Cross | None) -> str:
    if variant is None:
        return ""
    return "strict" if variant.strict else "learned"


def cell_gap_table(page: Page, ctx: Context, broad: Cross, variant: Cross | None) -> str:
    vname = _variant_name(variant)
    rows = []
    for rv, cv, broad_n, var_n in gap_cells(ctx, broad, variant):
        where = f"{urls.value_label(ctx, broad.rows, rv)} × {urls.value_label(ctx, broad.cols, cv)}"
        cell = page.link(urls.cell(broad, rv, cv), where) if broad_n else esc(where)
        var_cell = page.link(urls.cell(variant, rv, cv), var_n) if variant and var_n else str(var_n)
        closest = (
            ", ".join(
                f"{page.link(urls.paper(k), k, ctx.row(k)['title'])} "
                f'<span class="kb-dim">({esc(label)})</span>'
                for k, label in closest_papers(ctx, variant or broad, rv, cv)
            )
            or '<span class="kb-dim">none</span>'
        )
        cls = "kb-gap-row" if var_n == 0 else ""
        rows.append(
            f'<tr class="{cls}" data-row="{esc(rv)}" data-col="{esc(cv)}"><td>{cell}'
            f"</td><td>{broad_n}</td><td>{var_cell}</td><td>{closest}</td></tr>"
        )
    head = f"<th>Cell</th><th>Broad</th><th>{esc(vname.capitalize())}</th><th>Closest papers</th>"
    if not rows:
        return '<p class="kb-dim">No empty or near-empty cell.</p>'
    return (
        f'<div class="kb-scroll"><table class="kb-table kb-gaps"><thead><tr>{head}</tr>'
        f"</thead><tbody>{''.join(rows)}</tbody></table></div>"
    )


def gaps_page(ctx: Context) -> Page:
    page = Page(urls.GAPS, "Gaps", meta={"hide": ["navigation"]})
    page.add(
        "# Gaps",
        "<p>Where the field has no paper, or almost none. The survey's own "
        "headline gaps come first, each with the papers that come closest; then every "
        f"cell of the survey's cross-tabs with at most {NEAR_EMPTY} papers under its "
        "strict or learned reading. Counts are recomputed from the records on every "
        "build, so a gap that a new paper fills disappears here.</p>",
        "## The survey's headline gaps",
    )
    for gap in HEADLINES:
        page.add(*headline_section(page, ctx, gap))
    page.add("## Empty and near-empty cells")
    for broad, variant in SURVEY_TABLES:
        title = urls.cross_title(ctx, broad)
        page.add(
            f"### {md_text(title)} {{#{broad.slug}}}",
            f"<p>{page.link(urls.crosstab(broad), 'The table')}"
            + (
                f" · {page.link(urls.crosstab(variant), urls.cross_title(ctx, variant))}"
                if variant
                else ""
            )
            + ". Sorted by the "
            f"{esc(_variant_name(variant))} count, emptiest first; closest papers share "
            "the row or the column and sit nearest along the other axis.</p>",
            cell_gap_table(page, ctx, broad, variant),
        )
    return page
