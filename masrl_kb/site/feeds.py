"""What's new: records by the day they were added, and an Atom feed of additions."""

from __future__ import annotations

import re
from xml.sax.saxutils import escape as _escape
from xml.sax.saxutils import quoteattr

import pandas as pd

from masrl_kb.site import urls
from masrl_kb.site.components import Page
from masrl_kb.site.context import Context
from masrl_kb.site.html import safe_url

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


def new_page(ctx: Context) -> Page:
    page = Page(urls.NEW, "What's new")
    ordered = newest_first(ctx.papers)
    days = [
        (day.date().isoformat(), list(group.index))
        for day, group in ordered.groupby("added", sort=False)
    ]
    return page.show("new.md", ctx=ctx, days=days)


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
