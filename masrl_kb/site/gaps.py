"""The gaps page (the survey's headline gaps first, then every (near-)empty cell, folded),
and the home page: the pool, its headline numbers, the claims and the gaps."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import yaml

from masrl_kb.kb.rules import NA
from masrl_kb.query.axes import select
from masrl_kb.query.views import ClaimViews
from masrl_kb.site import urls
from masrl_kb.site.charts import decision_chart, year_chart
from masrl_kb.site.components import Page
from masrl_kb.site.context import CROSSTABS, READING, SURVEY, Context, Cross, count_at
from masrl_kb.site.crosstabs import NEAR_EMPTY
from masrl_kb.site.lists import list_name
from masrl_kb.site.paper_pages import suggest_link

CLOSEST_PER_GAP = 4
INLINE_LIMIT = 12  # titles shown per list; the rest are counted


@dataclass(frozen=True)
class Headline:
    """A gap the survey names, measured with ``select`` queries (``templates/gaps.yaml``)."""

    id: str
    title: str
    text: str
    measures: tuple[tuple[str, str], ...]  # (label, where): each shown as a count
    members: str  # where: the papers that fill the gap, however few
    closest: tuple[tuple[str, str], ...]  # (label, where): who comes closest
    claims: tuple[str, ...] = ()
    group: str | None = None  # claims.yaml group: its claims are the numbers, one per reading


@dataclass(frozen=True)
class Finding:
    """A headline stated as one sentence: its number is a claim's, in both views."""

    gap: str  # the headline it summarises (an anchor on the gaps page)
    claim: str  # the claims.yaml id whose value it states
    many: str  # what the number counts, after a plural number ("papers train ...")
    one: str  # the same after the number 1 ("paper trains ...")


def _load() -> tuple[tuple[Headline, ...], tuple[Finding, ...]]:
    """The headlines and findings of the package's ``templates/gaps.yaml``."""
    data = yaml.safe_load((Path(__file__).parent / "templates" / "gaps.yaml").read_text("utf-8"))
    headlines = [
        {**h, "claims": tuple(h.get("claims", ()))}
        | {
            k: tuple((e["label"], e["where"]) for e in h.get(k, ()))
            for k in ("measures", "closest")
        }
        for h in data["headlines"]
    ]
    return tuple(Headline(**h) for h in headlines), tuple(Finding(**f) for f in data["findings"])


HEADLINES, FINDINGS = _load()


def findings(ctx: Context) -> list[dict]:
    """Each finding with its claim in both views and the papers behind today's value."""
    views = {v.claim.id: v for v in ctx.claim_views or []}
    return [
        {"finding": f, "views": views[f.claim], "papers": list(views[f.claim].today.keys)}
        for f in FINDINGS
        if f.claim in views
    ]


def measure(ctx: Context, where: str, papers: pd.DataFrame | None = None) -> list[str]:
    """The keys of the papers a headline query selects (today's pool unless ``papers``)."""
    return list(select(where, papers=ctx.papers if papers is None else papers).index)


def group_claims(ctx: Context, gap: Headline) -> list[ClaimViews]:
    """The claims of the headline's group in both views, in claims.yaml order."""
    return [v for v in ctx.claim_views or [] if gap.group and v.claim.group == gap.group]


def headline_numbers(ctx: Context, gap: Headline) -> list[dict]:
    """One entry per number (the group's claims, else its measures): label, its value in
    the survey's view and today's, whether it moved, the papers that moved it, and the
    names of the two lists (:mod:`masrl_kb.site.lists`): today's papers and the movers."""
    numbers: list[tuple[str, str, str, list[str], list[str], tuple[object, ...]]] = [
        (
            v.claim.label or v.claim.id,
            v.survey.shown_value,
            v.today.shown_value,
            list(v.papers),
            list(v.today.keys),
            ("claim", v.claim.id),
        )
        for v in group_claims(ctx, gap)
    ]
    for i, (label, where) in enumerate(() if gap.group else gap.measures):
        now, then = measure(ctx, where), measure(ctx, where, ctx.survey[0])
        movers = sorted(set(now) ^ set(then))
        numbers.append((label, str(len(then)), str(len(now)), movers, now, ("gap", gap.id, i)))
    return [
        {
            "label": label,
            "survey": was,
            "today": now,
            "moved": was != now,
            "movers": movers,
            "papers": keys,
            "name": list_name(*name),
            "movers_name": list_name(*name, "moved"),
        }
        for label, was, now, movers, keys, name in numbers
    ]


def headline(ctx: Context, gap: Headline) -> dict:
    """One headline gap: its numbers, claims, the papers filling it and who comes closest."""
    members = measure(ctx, gap.members)
    closest = [
        (
            label,
            [k for k in measure(ctx, where) if k not in members],
            list_name("gap", gap.id, "closest", i),
        )
        for i, (label, where) in enumerate(gap.closest)
    ]
    return {
        "gap": gap,
        "numbers": headline_numbers(ctx, gap),
        "claims": [v for v in ctx.claim_views or [] if v.claim.id in gap.claims],
        "layers": group_claims(ctx, gap),
        "members": members,
        "members_name": list_name("gap", gap.id, "members"),
        "closest": closest,
    }


# ---------------------------------------------------------------- cells


class Neighbours:
    """Closest papers to any cell of one cross-tab, from positions computed once."""

    def __init__(self, ctx: Context, cross: Cross) -> None:
        self.ctx, self.cross = ctx, cross
        table = ctx.tables[cross]
        self.order = {"rows": list(table.index), "cols": list(table.columns)}
        # The papers at each position of either side (from the context's spots).
        self.members: dict[str, dict[int, list[str]]] = {}
        for side in ("rows", "cols"):
            self.members[side] = defaultdict(list)
            for key, spots in ctx.spots[(cross, side)].items():
                for position in spots:
                    self.members[side][position].append(key)

    def closest(self, rv: object, cv: object) -> list[tuple[str, str]]:
        """(key, where it sits) of papers sharing one coordinate with the cell, nearest
        along the other axis (in taxonomy order: credit units run fine to coarse) first."""
        ctx, cross = self.ctx, self.cross
        in_cell = set(ctx.cells.get((cross, rv, cv), []))
        found: dict[str, tuple[int, str]] = {}
        spot = {"rows": self.order["rows"].index(rv), "cols": self.order["cols"].index(cv)}
        for fixed, other, axis in (("rows", "cols", cross.cols), ("cols", "rows", cross.rows)):
            target, spots = spot[other], ctx.spots[(cross, other)]
            for key in self.members[fixed].get(spot[fixed], []):
                if key in in_cell or key not in spots:
                    continue
                dist, where = min((abs(p - target), p) for p in spots[key])
                if key not in found or dist < found[key][0]:
                    found[key] = (dist, urls.value_label(ctx, axis, self.order[other][where]))
        ranked = sorted(found.items(), key=lambda kv: (kv[1][0], kv[0]))
        return [(k, label) for k, (_, label) in ranked[:CLOSEST_PER_GAP]]


SURVEY_TABLES = CROSSTABS[:4]  # category x year is context, not a survey axis


def gap_table(ctx: Context, broad: Cross, variant: Cross | None) -> dict:
    """One axis pair's cells whose variant reading (strict or learned) is at or under
    NEAR_EMPTY, with their closest papers; ``NA`` ("no reward") has no gap."""
    table = ctx.tables[broad]
    twin = ctx.tables[variant] if variant is not None else table
    out = []
    for r_i, rv in enumerate(table.index):
        for c_i, cv in enumerate(table.columns):
            if NA in (rv, cv):
                continue
            # decision and decision_learned share value ids, so one lookup serves both
            n_variant = count_at(twin, rv, cv)
            if n_variant <= NEAR_EMPTY:
                out.append((n_variant, count_at(table, rv, cv), r_i, c_i, rv, cv))
    neighbours = Neighbours(ctx, variant or broad)
    # Each (near-)empty cell: its values, its papers under both readings (counts are their
    # lengths; each a named list) and its closest papers.
    cells = [
        {
            "row": rv,
            "col": cv,
            "broad": _cell_list(ctx, broad, rv, cv),
            "variant": _cell_list(ctx, variant or broad, rv, cv),
            "closest": neighbours.closest(rv, cv),
        }
        for _, _, _, _, rv, cv in sorted(out)
    ]
    return {
        "broad": broad,
        "variant": variant,
        "variant_name": READING[variant] if variant else "",
        "cells": cells,
        "empty": sum(not cell["variant"]["papers"] for cell in cells),
    }


def _cell_list(ctx: Context, cross: Cross, rv: object, cv: object) -> dict[str, object]:
    """A cell's papers under one reading, and the name of their list."""
    return {
        "papers": ctx.cells.get((cross, rv, cv), []),
        "name": list_name("cell", cross.slug, rv, cv),
    }


def gaps_page(ctx: Context) -> Page:
    page = Page(urls.GAPS, "Gaps", meta={"hide": ["navigation"]})
    return page.show(
        "gaps.md",
        ctx=ctx,
        near=NEAR_EMPTY,
        headlines=[headline(ctx, gap) for gap in HEADLINES],
        findings=findings(ctx),
        tables=[gap_table(ctx, broad, variant) for broad, variant in SURVEY_TABLES],
        inline_limit=INLINE_LIMIT,
    )


def home_page(ctx: Context) -> Page:
    page = Page(urls.HOME, "Home", meta={"hide": ["navigation"]})
    return page.show(
        "home.md",
        ctx=ctx,
        survey=SURVEY,
        gaps=[(gap, headline_numbers(ctx, gap)) for gap in HEADLINES],
        findings=findings(ctx),
        year_chart=year_chart(page, ctx),
        decision_chart=decision_chart(page, ctx),
        learned_chart=year_chart(page, ctx, "decision_learned"),
        suggest=suggest_link(ctx),
    )
