"""The screening protocol page, and the rounds page: PRISMA-style flows and what each
round added, computed with the query API (``pool_as_of``) from the round records
(:mod:`masrl_kb.kb.rounds`)."""

from __future__ import annotations

from collections import Counter
from pathlib import PurePosixPath

import pandas as pd

from masrl_kb.kb.protocol import Protocol
from masrl_kb.kb.rounds import SOURCE_COUNTS, Round, load_rounds
from masrl_kb.query.frames import pool_as_of
from masrl_kb.site import urls
from masrl_kb.site.components import Page
from masrl_kb.site.context import Context
from masrl_kb.site.prisma import Flow, flow_rows, flow_svg


def baseline_pool(ctx: Context, protocol: Protocol) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Papers and exclusions as they stood on the protocol's baseline date."""
    return pool_as_of(ctx.papers, ctx.exclusions, protocol.baseline)


def record_ids(rnd: Round, decision: str) -> list[str]:
    """Keys (papers) or ids (exclusions) of the records a round's decide wrote."""
    return sorted(
        PurePosixPath(d["record"]).stem for d in rnd.decided.values() if d["decision"] == decision
    )


def _reasons(ctx: Context, rounds: list[Round]) -> list[tuple[str, int]]:
    totals: Counter[str] = Counter()
    for rnd in rounds:
        totals.update(rnd.reasons())
    axis = ctx.tax["exclusion_reason"]
    return [(axis.label_of(c), totals[c]) for c in axis.ids if c in totals]


def source_label(ctx: Context, source: str) -> str:
    axis = ctx.tax["exclusion_source"]
    return axis.label_of(source) if source in axis.ids else source


def source_rows(ctx: Context, rounds: list[Round]) -> list[dict]:
    """Per source over ``rounds``: batches and the flow's counts, first-searched first."""
    rows: dict[str, dict] = {}
    for rnd in rounds:
        for name, counts in rnd.by_source().items():
            empty = {"id": name, "label": source_label(ctx, name), "batches": 0}
            row = rows.setdefault(name, empty | dict.fromkeys(SOURCE_COUNTS, 0))
            for k in SOURCE_COUNTS:
                row[k] += counts[k]
        for batch in rnd.batches:
            rows[batch["name"]]["batches"] += 1
    return list(rows.values())


def round_flow(ctx: Context, rounds: list[Round], previous: int, title: str) -> Flow:
    """The flow of one or more rounds, starting from ``previous`` pooled studies."""
    sources = source_rows(ctx, rounds)
    batches = sum(len(r.batches) for r in rounds)
    return Flow(
        title=title,
        previous=previous,
        identified=sum(r.counts["retrieved"] for r in rounds),
        source_note=f"{len(sources)} source(s), {batches} batch(es)",
        duplicates=sum(r.counts["duplicates_removed"] for r in rounds),
        outside_window=sum(r.counts["outside_window"] for r in rounds),
        screened=sum(r.counts["to_screen"] for r in rounds),
        excluded=sum(r.excluded for r in rounds),
        reasons=_reasons(ctx, rounds),
        awaiting=sum(r.awaiting for r in rounds),
        included=sum(r.included for r in rounds),
        sources=[(row["label"], row["id"], row["identified"]) for row in sources],
    )


def _shown(flow: Flow) -> dict:
    return {"title": flow.title, "diagram": flow_svg(flow), "rows": flow_rows(flow)}


def _round_section(ctx: Context, rnd: Round, flow: Flow) -> dict:
    excluded = [
        (eid, ctx.exclusions.at[eid, "title"] if eid in ctx.exclusions.index else "")
        for eid in record_ids(rnd, "exclude")
    ]
    return {
        "round": rnd,
        "flow": _shown(flow),
        "sources": source_rows(ctx, [rnd]),
        "batches": [dict(b, label=source_label(ctx, b["name"])) for b in rnd.batches],
        "included": record_ids(rnd, "include"),
        "excluded": excluded,
    }


def added_by_hand(ctx: Context, protocol: Protocol, rounds: list[Round]) -> list[str]:
    """Papers added after the baseline other than through a round's decide."""
    in_rounds = {k for r in rounds for k in record_ids(r, "include")}
    later = ctx.papers.index[ctx.papers["added"] > pd.Timestamp(protocol.baseline)]
    return [k for k in later if k not in in_rounds]


def rounds_page(ctx: Context) -> Page:
    protocol = ctx.protocol
    rounds = load_rounds(ctx.root)
    page = Page(urls.ROUNDS, "Screening rounds")
    previous = len(baseline_pool(ctx, protocol)[0])
    overall = _shown(round_flow(ctx, rounds, previous, "Screening flow, all rounds"))
    sections = []
    for rnd in rounds:
        flow = round_flow(ctx, [rnd], previous, f"Screening flow, round {rnd.id}")
        sections.append(_round_section(ctx, rnd, flow))
        previous = flow.total
    return page.show(
        "rounds.md",
        ctx=ctx,
        protocol=protocol,
        overall=overall if rounds else None,
        overall_sources=source_rows(ctx, rounds),
        rounds=rounds[::-1],
        sections=sections[::-1],  # newest round first
        by_hand=added_by_hand(ctx, protocol, rounds) if rounds else [],
    )


def protocol_page(ctx: Context) -> Page:
    """The survey's sources, query families, inclusion rules and exclusion codes, from
    ``protocol.yaml`` and ``taxonomy.yaml``."""
    page = Page(urls.PROTOCOL, "Search and screening protocol")
    return page.show("protocol.md", ctx=ctx, protocol=ctx.protocol)
