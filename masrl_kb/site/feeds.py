"""What's new: records by screening round (or by day before any round), and an Atom
feed of additions."""

from __future__ import annotations

import re
from xml.sax.saxutils import escape as _escape
from xml.sax.saxutils import quoteattr

import pandas as pd

from masrl_kb.kb.rounds import Round, load_rounds
from masrl_kb.site import urls
from masrl_kb.site.components import Page
from masrl_kb.site.context import Context
from masrl_kb.site.html import safe_url
from masrl_kb.site.protocol_pages import site_protocol
from masrl_kb.site.round_pages import added_by_hand, baseline_pool, record_ids

FEED_ENTRIES = 100  # newest additions carried by the feed
FEED_ID = "tag:masrl-kb,2026:additions"
_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def escape(text: object) -> str:
    """XML text: characters XML 1.0 forbids dropped, markup escaped."""
    return _escape(_XML_INVALID.sub("", str(text)))


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
    return [
        (day.date().isoformat(), list(group.index))
        for day, group in ordered.groupby("added", sort=False)
    ]


def _group(gid: str, title: str, papers: pd.DataFrame, rnd: Round | None = None) -> dict:
    return {"id": gid, "title": title, "round": rnd, "count": len(papers), "days": by_day(papers)}


def by_round(ctx: Context) -> list[dict]:
    """Groups of the pool, newest first: each round's additions, papers added by hand
    since the baseline, then the survey baseline. Empty when no round exists."""
    rounds = load_rounds(ctx.root)
    if not rounds:
        return []
    protocol = site_protocol(ctx)
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
        baseline=site_protocol(ctx).baseline.isoformat(),
    )


def _absolute(ctx: Context, url: str) -> str:
    base = ctx.site_url if safe_url(ctx.site_url) else ""
    if base and not base.endswith("/"):
        base += "/"
    return base + url


def _entry(ctx: Context, key: str, row: pd.Series) -> str:
    day = row["added"].date().isoformat()
    href = _absolute(ctx, urls.paper(key))
    authors = "".join(f"<author><name>{escape(a)}</name></author>" for a in row["authors"])
    return (
        "  <entry>\n"
        f"    <id>tag:masrl-kb,2026:papers/{escape(key)}</id>\n"
        f"    <title>{escape(row['title'])}</title>\n"
        f'    <link rel="alternate" href={quoteattr(href)}/>\n'
        f"    <updated>{day}T00:00:00Z</updated>\n"
        f"    <published>{day}T00:00:00Z</published>\n"
        f"    {authors}\n"
        f"    <summary>{escape(row['summary'])}</summary>\n"
        "  </entry>\n"
    )


def atom_feed(ctx: Context) -> str:
    """Atom XML of the newest additions; ``updated`` is the newest ``added`` date."""
    ordered = newest_first(ctx.papers).head(FEED_ENTRIES)
    updated = ordered["added"].max().date().isoformat() if len(ordered) else "1970-01-01"
    entries = "".join(_entry(ctx, k, r) for k, r in ordered.iterrows())
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n'
        '<feed xmlns="http://www.w3.org/2005/Atom">\n'
        f"  <id>{FEED_ID}</id>\n"
        "  <title>masrl-kb: papers added to the pool</title>\n"
        f'  <link rel="self" href={quoteattr(_absolute(ctx, urls.FEED))}/>\n'
        f'  <link rel="alternate" href={quoteattr(_absolute(ctx, urls.NEW))}/>\n'
        f"  <updated>{updated}T00:00:00Z</updated>\n"
        f"{entries}</feed>\n"
    )
