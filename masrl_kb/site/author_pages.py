"""The authors index: every author in the pool, their papers and their co-authors."""

from __future__ import annotations

from masrl_kb.query.authors import authors, fold
from masrl_kb.site import urls
from masrl_kb.site.components import Page
from masrl_kb.site.context import Context

# Papers and co-authors listed per author; the rest are one link (or a count) away.
LISTED = 20


def author_entries(ctx: Context) -> list[dict]:
    """One entry per author, by folded name: papers (newest first) and co-authors."""
    table = authors(ctx.papers)
    by_paper = table.groupby("key")["author"].apply(list).to_dict()
    anchors = author_anchors(table["author"].unique())
    out = []
    for name, group in table.groupby(["folded", "author"], sort=True):
        author = name[1]
        keys = list(group.sort_values(["year", "key"], ascending=[False, True])["key"])
        partners = sorted({a for k in keys for a in by_paper[k] if a != author}, key=fold)
        out.append(
            {
                "name": author,
                # The name without accents, indexed too, so search finds "Tramer".
                "plain": fold(author) if fold(author) != author.casefold() else "",
                "anchor": anchors[author],
                "letter": (fold(author)[:1] or "?").upper(),
                "papers": keys,
                "coauthors": partners,
            }
        )
    return out


def author_anchors(names) -> dict[str, str]:
    """A unique anchor per name, from its accent-free spelling (``-2`` on a clash)."""
    out: dict[str, str] = {}
    taken: set[str] = set()
    for name in sorted(names, key=lambda n: (fold(n), n)):
        base = urls.author_anchor(fold(name))
        anchor, n = base, 1
        while anchor in taken:
            n += 1
            anchor = f"{base}-{n}"
        taken.add(anchor)
        out[name] = anchor
    return out


def authors_page(ctx: Context) -> Page:
    page = Page(urls.AUTHORS, "Authors", meta={"hide": ["navigation"]})
    entries = author_entries(ctx)
    letters = sorted({e["letter"] for e in entries})
    return page.show("authors.md", ctx=ctx, entries=entries, letters=letters, listed=LISTED)
