"""Who wrote what: the pool by author, for the authors index and for pandas users.

>>> import masrl_kb
>>> papers = masrl_kb.load_papers()
>>> by_author = masrl_kb.authors(papers=papers)        # one row per (author, paper)
>>> masrl_kb.coauthors("Amato, Christopher", papers=papers)
"""

from __future__ import annotations

import unicodedata

import pandas as pd

from masrl_kb.kb.text import shorten
from masrl_kb.query.args import checked
from masrl_kb.query.frames import load_papers
from masrl_kb.query.lang import unknown_name

AUTHOR_COLUMNS = ("authors", "year", "title")  # what authors() reads of a papers frame


def fold(text: str) -> str:
    """Lower case without accents: "Tramèr" and "Tramer" fold to the same text."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


@checked(papers=AUTHOR_COLUMNS)
def authors(papers: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per (author, paper), sorted by author; ``position`` 1 is the first author
    and ``folded`` the name without accents, for matching."""
    pool = load_papers() if papers is None else papers
    columns = (pool.index, pool["authors"], pool["year"], pool["title"])
    rows = [
        (name, key, pos, int(year), title, fold(name))
        for key, names, year, title in zip(*columns, strict=True)
        for pos, name in enumerate(names, start=1)
    ]
    frame = pd.DataFrame(rows, columns=["author", "key", "position", "year", "title", "folded"])
    frame = frame.sort_values(["folded", "author", "year", "key"], kind="stable")
    return frame.reset_index(drop=True)


@checked(papers=AUTHOR_COLUMNS)
def coauthors(author: str, papers: pd.DataFrame | None = None) -> pd.Series:
    """How many pooled papers ``author`` shares with each co-author, most first."""
    table = authors(papers)
    keys = table.loc[table["author"] == author, "key"]
    if keys.empty:
        names = sorted(table["author"].unique(), key=fold)
        what = f"unknown author {shorten(author)}"
        # "; " between names: each holds a comma ("Amato, Christopher")
        raise unknown_name(what, author, names, f"authors in the pool ({len(names)})", "; ")
    shared = table[table["key"].isin(keys) & (table["author"] != author)]
    counts = shared.groupby("author")["key"].nunique()
    return counts.sort_values(ascending=False, kind="stable").rename("shared_papers")
