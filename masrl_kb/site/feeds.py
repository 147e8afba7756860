"""What's new: records by screening round (or by day before any round), and an Atom
feed of additions."""

from __future__ import annotations

import pandas as pd

from masrl_kb.kb.rounds import Round, load_rounds
from masrl_kb.site import urls
from masrl_kb.site.components import Page
from masrl_kb.site.context import Context
from masrl_kb.site.html import safe_url
from masrl_kb.site.round_pages import added_by_hand, baseline_pool, record_ids
from masrl_kb.site.templates import render

FEED_ENTRIES = 100  # newest additions carried by the feed
FEED_ID = "tag:masrl-kb,2026:additions"


def newest_first(papers: pd.DataFrame) -> pd.DataFrame:
    """Papers by ``added`` date, newest first, then by key (deterministic)."""
    return (
        papers.assign(_key=papers.index)
        .sort_values(["added", "_key"], ascending=[False, True], kind="stable")
        .drop(columns="_key")
    )


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
    rounds = load_rounds(ctx.root)
    if not rounds:
        return []
    protocol = ctx.protocol
    groups = [
        _group(
            f"r-{rnd.id}",
            f"Round {rnd.id}",
            ctx.papers.loc[[k for k in record_ids(rnd, "include") if k in ctx.rows]],
            rnd,
        )
        for rnd in reversed(rounds)
    ]
    by_hand = added_by_hand(ctx, protocol, rounds)
    if by_hand:
        groups.append(_group("by-hand", "Added by hand", ctx.papers.loc[by_hand]))
    groups.append(_group("baseline", "Survey baseline", baseline_pool(ctx, protocol)[0]))
    return groups


def new_page(ctx: Context) -> Page:
    page = Page(urls.NEW, "What's new")
    return page.show(
        "new.md",
        ctx=ctx,
        groups=by_round(ctx),
        days=by_day(ctx.papers),
    )


def atom_feed(ctx: Context) -> str:
    """Atom XML of the newest additions; ``updated`` is the newest ``added`` date."""
    ordered = newest_first(ctx.papers).head(FEED_ENTRIES)
    updated = ordered["added"].max().date().isoformat() if len(ordered) else "1970-01-01"
    base = ctx.site_url if safe_url(ctx.site_url) else ""
    base += "/" if base and not base.endswith("/") else ""
    return (
        render(
            "feed.xml",
            feed_id=FEED_ID,
            base=base,
            self_href=base + urls.FEED,
            new_href=base + urls.NEW,
            updated=updated,
            entries=list(zip(ordered.index, ordered.to_dict("records"), strict=True)),
        )
        + "\n"
    )
