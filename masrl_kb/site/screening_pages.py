"""The screening pages: the exclusions (flow and log), the rounds (PRISMA flows and what
each round added) and What's new with its Atom feed, from the records and round records."""

from __future__ import annotations

from collections import Counter
from pathlib import PurePosixPath

import pandas as pd

from masrl_kb.kb.model.rounds_model import source_kind
from masrl_kb.kb.model.types import ARXIV_RE
from masrl_kb.kb.rounds import SOURCE_COUNTS, Round, awaiting_candidates
from masrl_kb.query.axes import crosstab, value_counts
from masrl_kb.query.coverage import batch_reach, recall_table, round_reach
from masrl_kb.site import urls
from masrl_kb.site.components import Page
from masrl_kb.site.context import Context, count_at
from masrl_kb.site.diagrams import flow_diagram
from masrl_kb.site.html import safe_url
from masrl_kb.site.prisma import Flow, flow_svg
from masrl_kb.site.templates import render


def record_ids(rnd: Round, decision: str) -> list[str]:
    """Keys (papers) or ids (exclusions) of the records a round's decide wrote."""
    return sorted(
        PurePosixPath(d["record"]).stem for d in rnd.decided.values() if d["decision"] == decision
    )


def pooled_includes(ctx: Context, rnd: Round) -> list[str]:
    """The round's inclusions that are in the pool: one whose record is missing (which
    validate refuses) is never counted or linked."""
    return [k for k in record_ids(rnd, "include") if k in ctx.papers.index]


def source_label(ctx: Context, source: str) -> str:
    """A batch's source as a reader names it: the kind's label, then which one."""
    axis = ctx.tax["exclusion_source"]
    kind, _, which = source.partition(":")
    label = axis.label_of(kind) if kind in axis.ids else kind
    return f"{label}: {which}" if which else label


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


def kind_totals(ctx: Context, sources: list[dict]) -> list[tuple[str, str, int]]:
    """(label, kind, records identified) per kind of source, in first-searched order: the
    flow diagram names kinds (GitHub lists, snowballing...), the tables each source."""
    totals: dict[str, int] = {}
    for row in sources:
        kind = source_kind(row["id"])
        totals[kind] = totals.get(kind, 0) + row["identified"]
    return [(source_label(ctx, kind), kind, n) for kind, n in totals.items()]


def kinds_searched(ctx: Context, rnd: Round) -> list[tuple[str, int]]:
    """(kind label, number of sources of that kind) of one round, by label."""
    names = {b["name"] for b in rnd.batches}
    counts: dict[str, int] = {}
    for name in names:
        label = source_label(ctx, source_kind(name))
        counts[label] = counts.get(label, 0) + 1
    return sorted(counts.items())


def round_flow(ctx: Context, rounds: list[Round], previous: int, title: str) -> Flow:
    """The flow of one or more rounds, starting from ``previous`` pooled studies."""
    sources = source_rows(ctx, rounds)
    batches = sum(len(r.batches) for r in rounds)
    reasons: Counter[str] = Counter()
    for rnd in rounds:
        reasons.update(rnd.reasons())
    axis = ctx.tax["exclusion_reason"]
    included = sum(len(pooled_includes(ctx, r)) for r in rounds)
    return Flow(
        title=title,
        previous=previous,
        identified=sum(r.counts["retrieved"] for r in rounds),
        source_note=f"{len(sources)} source(s), {batches} batch(es)",
        duplicates=sum(r.counts["duplicates_removed"] for r in rounds),
        outside_window=sum(r.counts["outside_window"] for r in rounds),
        screened=sum(r.counts["to_screen"] for r in rounds),
        excluded=sum(r.excluded for r in rounds),
        reasons=[(axis.label_of(c), reasons[c]) for c in axis.ids if c in reasons],
        awaiting=sum(r.awaiting for r in rounds) + sum(r.included for r in rounds) - included,
        included=included,
        sources=kind_totals(ctx, sources),
    )


def awaiting_rows(ctx: Context, rnd: Round) -> list[dict]:
    """The round's undecided candidates, with the arXiv page of those that have an arXiv id
    (built from the checked id, never taken from the file) and the source's label."""
    return [
        dict(
            c,
            url=f"https://arxiv.org/abs/{c['id']}" if ARXIV_RE.match(c["id"]) else "",
            found_in=source_label(ctx, c["source"]) if c["source"] else "",
        )
        for c in awaiting_candidates(ctx.root, rnd)
    ]


def added_by_hand(ctx: Context, rounds: list[Round]) -> list[str]:
    """Papers added after the baseline other than through a round's decide."""
    in_rounds = {k for r in rounds for k in record_ids(r, "include")}
    later = ctx.papers.index[ctx.papers["added"] > pd.Timestamp(ctx.protocol.baseline)]
    return [k for k in later if k not in in_rounds]


def rounds_page(ctx: Context) -> Page:
    rounds = ctx.rounds
    page = Page(urls.ROUNDS, "Screening rounds")
    recall = {r["round"]: r for r in recall_table(ctx.root, rounds).to_dict("records")}
    previous = len(ctx.survey[0])
    overall = round_flow(ctx, rounds, previous, "Screening flow, all rounds")
    sections = []
    for rnd in rounds:
        flow = round_flow(ctx, [rnd], previous, f"Screening flow, round {rnd.id}")
        sections.append(
            {
                "round": rnd,
                "flow": flow,
                "diagram": flow_svg(flow),
                "sources": source_rows(ctx, [rnd]),
                "batches": [
                    dict(b, label=source_label(ctx, b["name"]), reach=batch_reach(rnd, b))
                    for b in rnd.batches
                ],
                "reach": round_reach(rnd),
                "recall": recall.get(rnd.id),
                "included": pooled_includes(ctx, rnd),
                "excluded": record_ids(rnd, "exclude"),
                "awaiting": awaiting_rows(ctx, rnd),
            }
        )
        previous = flow.total
    return page.show(
        "rounds.md",
        ctx=ctx,
        overall=overall if rounds else None,
        overall_diagram=flow_svg(overall),
        overall_sources=source_rows(ctx, rounds),
        rounds=[
            (r, kinds_searched(ctx, r), round_reach(r), recall.get(r.id)) for r in rounds[::-1]
        ],
        sections=sections[::-1],  # newest round first
        by_hand=added_by_hand(ctx, rounds) if rounds else [],
    )


# ---------------------------------------------------------------- exclusions


def exclusions_page(ctx: Context) -> Page:
    page = Page(urls.EXCLUSIONS, "Exclusions", meta={"hide": ["navigation"]})
    stage, reason = ctx.tax["exclusion_stage"], ctx.tax["exclusion_reason"]
    stages = [
        (str(s), stage.label_of(str(s)), int(n))
        for s, n in value_counts("stage", papers=ctx.exclusions).items()
    ]
    pooled, excluded = len(ctx.papers), len(ctx.exclusions)
    # The screening flow as (label, count, data key), readable without the diagram.
    flow = [
        ("Records screened", pooled + excluded, "screened"),
        ("Retained in the pool", pooled, "retained"),
        ("Excluded", excluded, "excluded"),
        *((f"Excluded at: {label}", n, f"stage-{sid}") for sid, label, n in stages),
    ]
    table = crosstab("reason", "stage", papers=ctx.exclusions)
    reasons = [
        (r, reason.label_of(str(r)), [count_at(table, r, s) for s in table.columns])
        for r in table.index
    ]
    return page.show(
        "exclusions.md",
        ctx=ctx,
        diagram=flow_diagram(pooled + excluded, pooled, excluded, [s[1:] for s in stages]),
        flow=flow,
        stages=[stage.label_of(str(s)) for s in table.columns],
        reasons=reasons,
        log=zip(ctx.exclusions.index, ctx.exclusions.to_dict("records"), strict=True),
    )


# ---------------------------------------------------------------- what's new


FEED_ENTRIES = 100  # newest additions carried by the feed


def newest_first(papers: pd.DataFrame) -> pd.DataFrame:
    """Papers by ``added`` date, newest first, then by key (the index; deterministic)."""
    return papers.sort_values(["added", "key"], ascending=[False, True])


def by_day(papers: pd.DataFrame) -> list[tuple[str, list[str]]]:
    """(ISO date, keys) per ``added`` day, newest day first."""
    ordered = newest_first(papers)
    days: dict[str, list[str]] = {}
    for key, added in zip(ordered.index, ordered["added"], strict=True):
        days.setdefault(added.date().isoformat(), []).append(key)
    return list(days.items())


def _group(gid: str, title: str, papers: pd.DataFrame, rnd: Round | None = None) -> dict:
    return {"id": gid, "title": title, "round": rnd, "count": len(papers), "days": by_day(papers)}


def by_round(ctx: Context) -> list[dict]:
    """Groups of the pool, newest first: each round's additions, papers added by hand
    since the baseline, then the survey baseline. Empty when no round exists."""
    rounds = ctx.rounds
    if not rounds:
        return []
    groups = [
        _group(
            f"r-{rnd.id}",
            f"Round {rnd.id}",
            ctx.papers.loc[[k for k in record_ids(rnd, "include") if k in ctx.rows]],
            rnd,
        )
        for rnd in reversed(rounds)
    ]
    by_hand = added_by_hand(ctx, rounds)
    if by_hand:
        groups.append(_group("by-hand", "Added by hand", ctx.papers.loc[by_hand]))
    groups.append(_group("baseline", "Survey baseline", ctx.survey[0]))
    return groups


def new_page(ctx: Context) -> Page:
    page = Page(urls.NEW, "What's new")
    return page.show("new.md", ctx=ctx, groups=by_round(ctx), days=by_day(ctx.papers))


def atom_feed(ctx: Context) -> str:
    """Atom XML of the newest additions; ``updated`` is the newest ``added`` date."""
    ordered = newest_first(ctx.papers).head(FEED_ENTRIES)
    updated = ordered["added"].max().date().isoformat() if len(ordered) else "1970-01-01"
    base = ctx.site_url if safe_url(ctx.site_url) else ""
    base += "/" if base and not base.endswith("/") else ""
    entries = list(zip(ordered.index, ordered.to_dict("records"), strict=True))
    return render("feed.xml", base=base, updated=updated, entries=entries) + "\n"
