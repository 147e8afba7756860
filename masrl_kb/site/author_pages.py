"""The authors index: every author in the pool, their papers and their co-authors."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from masrl_kb.query.authors import authors, fold
from masrl_kb.site import urls
from masrl_kb.site.components import Page
from masrl_kb.site.context import Context
from masrl_kb.site.html import slug

# Papers and co-authors listed per author; the rest are one link (or a count) away.
LISTED = 20


def author_entries(ctx: Context) -> list[dict]:
    """One entry per author, by folded name: papers (newest first) and co-authors."""
    table = authors(ctx.papers).sort_values(
        ["folded", "author", "year", "key"], ascending=[True, True, False, True], kind="stable"
    )
    rows = list(zip(table["author"], table["key"], table["folded"], strict=True))
    by_paper: dict[str, list[str]] = defaultdict(list)
    papers: dict[str, list[str]] = {}  # insertion order is the table's: by folded name
    for author, key, _ in rows:
        by_paper[key].append(author)
        papers.setdefault(author, []).append(key)
    folded = {author: name for author, _, name in rows}
    anchors = author_anchors(papers)
    return [
        {
            "name": author,
            # The name without accents, indexed too, so search finds "Tramer".
            "plain": folded[author] if folded[author] != author.casefold() else "",
            "anchor": anchors[author],
            "letter": (folded[author][:1] or "?").upper(),
            "papers": keys,
            "coauthors": sorted({a for k in keys for a in by_paper[k] if a != author}, key=fold),
        }
        for author, keys in papers.items()
    ]


def author_anchors(names: Iterable[str]) -> dict[str, str]:
    """A unique anchor per name, from its accent-free spelling (``-2`` on a clash)."""
    out: dict[str, str] = {}
    taken: set[str] = set()
    for name in sorted(names, key=lambda n: (fold(n), n)):
        base = "a-" + slug(fold(name))  # stable across builds
        anchor, n = base, 1
        while anchor in taken:
            n += 1
            anchor = f"{base}-{n}"
        taken.add(anchor)
        out[name] = anchor
    return out


def authors_page(ctx: Context) -> Page:
    page = Page(urls.AUTHORS, "Authors", meta={"hide": ["navigation"]})
    return page.show("authors.md", ctx=ctx, entries=author_entries(ctx), listed=LISTED)
