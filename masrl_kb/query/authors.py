"""Who wrote what: the pool by author, for the authors index and for pandas users.

>>> import masrl_kb
>>> papers = masrl_kb.load_papers()
>>> by_author = masrl_kb.authors(papers=papers)        # one row per (author, paper)
>>> masrl_kb.coauthors("Amato, Christopher", papers=papers)

Two spellings of one name are one person (the ``person`` column) under the codebook's
rule C-AUT-2 (docs/codebook.md), applied by :func:`people`.
"""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from collections.abc import Iterable
from itertools import combinations

import pandas as pd

from masrl_kb.kb.text import shorten
from masrl_kb.query.args import checked
from masrl_kb.query.lang import unknown_name
from masrl_kb.query.pool import load_papers

AUTHOR_COLUMNS = ("authors", "year", "title", "affiliation")  # what authors() reads
_GIVEN_SPLIT = re.compile(r"[\s.\-]+")
_AFFILIATION_SPLIT = re.compile(r"\s*[/;]\s*")


def fold(text: str) -> str:
    """Lower case without accents: "Tramèr" and "Tramer" fold to the same text."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


def name_parts(name: str) -> tuple[str, list[str]]:
    """The family name folded, without hyphens or spaces, and the given names as folded
    tokens, dots and hyphens dropped: "Torr, Philip H. S." -> ("torr", ["philip", "h", "s"])."""
    family, _, given = name.partition(",")
    return re.sub(r"[\s\-]+", "", fold(family)), [t for t in _GIVEN_SPLIT.split(fold(given)) if t]


def compatible(first: str, second: str) -> bool:
    """Whether two spellings can name one person (C-AUT-2, conditions 1 and 2): the same
    family name, and given names that agree token by token, where a one-letter initial
    agrees with any name it starts; tokens past the shorter form must be initials. A
    longer token is not an abbreviation of a longer one ("Jie" and "Jieyu" differ)."""
    return _compatible(name_parts(first), name_parts(second))


def _compatible(one: tuple[str, list[str]], two: tuple[str, list[str]]) -> bool:
    if one[0] != two[0] or not one[1] or not two[1]:
        return False
    short, long = sorted((one[1], two[1]), key=len)
    for a, b in zip(short, long, strict=False):
        if (
            a != b
            and not (len(a) == 1 and b.startswith(a))
            and not (len(b) == 1 and a.startswith(b))
        ):
            return False
    return all(len(t) == 1 for t in long[len(short) :])


def _candidates(names: list[str], parts: dict[str, tuple[str, list[str]]]) -> set[tuple[str, str]]:
    """Pairs of one family's spellings whose first given names could agree: the same
    first name, or an initial and a name it starts (so a large family costs little)."""
    by_first: dict[str, list[str]] = defaultdict(list)
    for name in names:
        if parts[name][1]:
            by_first[parts[name][1][0]].append(name)
    pairs: set[tuple[str, str]] = set()
    for first, group in by_first.items():
        pairs.update(combinations(group, 2))
        if len(first) == 1:
            for other, others in by_first.items():
                if other != first and other.startswith(first):
                    pairs.update((a, b) for a in group for b in others)
    return pairs


def _institutions(affiliation: object) -> set[str]:
    if not isinstance(affiliation, str):
        return set()
    parts = {fold(p).strip() for p in _AFFILIATION_SPLIT.split(affiliation)}
    return {p for p in parts if p and p != "unknown"}


def _fullest(names: Iterable[str]) -> str:
    """The spelling a merged person is listed under: the longest given name, then the
    most tokens, then the first in folded order."""
    return min(
        names, key=lambda n: (-len(n.partition(",")[2].strip()), -len(name_parts(n)[1]), fold(n), n)
    )


def people(papers: pd.DataFrame) -> dict[str, str]:
    """Each author spelling -> the person it names (their fullest spelling), C-AUT-2:
    compatible names (:func:`compatible`) corroborated by a co-author that appears with
    both spellings or an institution both records name; never two names on one paper.
    A group whose spellings are not all compatible with each other (an initial that
    could be either of two people) stays apart."""
    keys: dict[str, set[str]] = defaultdict(set)
    places: dict[str, set[str]] = defaultdict(set)
    partners: dict[str, set[str]] = defaultdict(set)
    for key, names, affiliation in zip(
        papers.index, papers["authors"], papers["affiliation"], strict=True
    ):
        for name in names:
            keys[name].add(key)
            places[name] |= _institutions(affiliation)
            partners[name] |= set(names) - {name}
    parts = {name: name_parts(name) for name in keys}
    by_family: dict[str, list[str]] = defaultdict(list)
    for name in sorted(keys):
        by_family[parts[name][0]].append(name)
    parent = {name: name for name in keys}

    def root(name: str) -> str:
        while parent[name] != name:
            name = parent[name]
        return name

    for names in by_family.values():
        for a, b in sorted(_candidates(names, parts)):
            if keys[a] & keys[b] or not _compatible(parts[a], parts[b]):
                continue
            if partners[a] & partners[b] or places[a] & places[b]:
                parent[root(b)] = root(a)
    groups: dict[str, list[str]] = defaultdict(list)
    for name in keys:
        groups[root(name)].append(name)
    out = {name: name for name in keys}
    for names in groups.values():
        apart = any(
            keys[a] & keys[b] or not _compatible(parts[a], parts[b])
            for a, b in combinations(names, 2)
        )
        if len(names) > 1 and not apart:
            person = _fullest(names)
            out.update(dict.fromkeys(names, person))
    return out


@checked(papers=AUTHOR_COLUMNS)
def authors(papers: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per (author, paper), sorted by author; ``position`` 1 is the first author,
    ``folded`` the name without accents, for matching, and ``person`` the spelling of
    the person the name is merged into (C-AUT-2; the name itself for most)."""
    pool = load_papers() if papers is None else papers
    columns = (pool.index, pool["authors"], pool["year"], pool["title"])
    person = people(pool)
    rows = [
        (name, key, pos, int(year), title, fold(name), person[name])
        for key, names, year, title in zip(*columns, strict=True)
        for pos, name in enumerate(names, start=1)
    ]
    frame = pd.DataFrame(
        rows, columns=["author", "key", "position", "year", "title", "folded", "person"]
    )
    frame = frame.sort_values(["folded", "author", "year", "key"], kind="stable")
    return frame.reset_index(drop=True)


@checked(papers=AUTHOR_COLUMNS)
def coauthors(author: str, papers: pd.DataFrame | None = None) -> pd.Series:
    """How many pooled papers ``author`` (any spelling of the person) shares with each
    co-author, by person, most first."""
    table = authors(papers)
    named = table.loc[(table["author"] == author) | (table["person"] == author), "person"]
    mine = table[table["person"].isin(named)]
    keys = mine["key"]
    if keys.empty:
        names = sorted(table["author"].unique(), key=fold)
        what = f"unknown author {shorten(author)}"
        # "; " between names: each holds a comma ("Amato, Christopher")
        raise unknown_name(what, author, names, f"authors in the pool ({len(names)})", "; ")
    person = mine["person"].iloc[0]
    shared = table[table["key"].isin(keys) & (table["person"] != person)]
    counts = shared.groupby("person")["key"].nunique()
    counts = counts.rename_axis("author")
    return counts.sort_values(ascending=False, kind="stable").rename("shared_papers")
