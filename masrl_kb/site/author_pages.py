"""The authors index: one entry per person in the pool (spellings merged under the
codebook's C-AUT-2, :func:`masrl_kb.query.authors.people`), their papers and their
co-authors ranked by papers shared, each co-author a link to their own entry."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from masrl_kb.query.authors import fold
from masrl_kb.site import urls
from masrl_kb.site.components import Page
from masrl_kb.site.context import Context
from masrl_kb.site.html import slug

# Papers listed per author (the rest one link away in the papers table) and co-authors
# shown before the fold that opens the rest.
LISTED = 20
COAUTHORS_SHOWN = 5


def author_entries(ctx: Context) -> list[dict]:
    """One entry per person, in folded order: spellings, papers (newest first) and
    co-authors as (person, papers shared), most shared first."""
    table = ctx.authors.sort_values(
        ["folded", "author", "year", "key"], ascending=[True, True, False, True], kind="stable"
    )
    rows = list(zip(table["person"], table["author"], table["key"], table["year"], strict=True))
    by_paper: dict[str, set[str]] = defaultdict(set)
    papers: dict[str, dict[str, int]] = defaultdict(dict)  # person -> key -> year
    spellings: dict[str, set[str]] = defaultdict(set)
    for person, author, key, year in rows:
        by_paper[key].add(person)
        papers[person][key] = int(year)
        spellings[person].add(author)
    anchors = person_anchors(ctx)
    entries = []
    for person in sorted(papers, key=lambda p: (fold(p), p)):
        keys = sorted(papers[person], key=lambda k: (-papers[person][k], k))
        shared: dict[str, int] = defaultdict(int)
        for key in keys:
            for other in by_paper[key] - {person}:
                shared[other] += 1
        plain = {fold(n) for n in spellings[person] if fold(n) != n.casefold()}
        variants: list[str] = sorted(spellings[person] - {person}, key=fold)
        entries.append(
            {
                "name": person,
                "anchor": anchors[person],
                # Other spellings the records use, and accent-free ones, indexed too, so
                # search finds "Tramer" and "Torr, Philip".
                "variants": variants,
                "plain": "; ".join(sorted(plain)),
                "letter": (fold(person)[:1] or "?").upper(),
                "papers": keys,
                "coauthors": [
                    (other, n, anchors[other])
                    for other, n in sorted(shared.items(), key=lambda i: (-i[1], fold(i[0])))
                ],
            }
        )
    return entries


def person_anchors(ctx: Context) -> dict[str, str]:
    """Each author spelling and each person -> the anchor of the person's entry on the
    authors index (computed once per build: paper pages link every byline name)."""
    memo = ctx.memo.get(("author-anchors",))
    if memo is None:
        table = ctx.authors
        person = dict(zip(table["author"], table["person"], strict=True))
        anchors = author_anchors(set(person.values()))
        memo = {name: anchors[p] for name, p in person.items()} | anchors
        ctx.memo[("author-anchors",)] = memo
    return memo


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
    return page.show(
        "authors.md",
        ctx=ctx,
        entries=author_entries(ctx),
        listed=LISTED,
        shown=COAUTHORS_SHOWN,
    )
