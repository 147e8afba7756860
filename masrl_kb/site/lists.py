"""The papers behind each number: a finding, a claim's value, a gap's list, a gap cell.

A page names each list it shows (:func:`register`, through the ``paper_set`` template
function); the number then links to the papers table filtered to exactly those papers
(``papers/?list=<name>``: ``docs/assets/kb.js`` reads the list's CSV and keeps its rows)
and to that CSV (``downloads/lists/<name>.csv``). Both come from the one registry on the
context, filled while the pages render, so no link points at a file the build did not
write and no file is written that no page links.
"""

from __future__ import annotations

import re

from masrl_kb.contrib.export.csv_io import csv_text
from masrl_kb.site import urls
from masrl_kb.site.context import Context

LISTS = "downloads/lists/"
# A list's name: also the file name and the URL value kb.js accepts (same pattern there).
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*\Z")
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")

# What a reader needs to read and cite a list; the whole record is in downloads/papers.csv.
COLUMNS = (
    "key",
    "title",
    "authors",
    "year",
    "venue",
    "arxiv_id",
    "url",
    "category",
    "is_rl",
    "reward_family",
    "credit_unit",
    "credit_strict",
    "topology",
    "scenario",
    "O1",
    "O2",
    "O3",
    "O4",
    "O5",
    "pool_role",
    "bibtex_key",
)


def list_name(*parts: object) -> str:
    """A list name from its parts (``claim``, an id...), safe as a file name and URL value."""
    name = "-".join(_UNSAFE.sub("-", str(p)).strip("-") for p in parts if str(p))
    if not NAME.match(name):
        raise ValueError(f"not a list name: {name!r}")
    return name


def view(name: str) -> str:
    """The papers table filtered to the list."""
    return f"{urls.PAPERS}?list={name}"


def csv_path(name: str) -> str:
    return f"{LISTS}{name}.csv"


def register(ctx: Context, name: str, keys: list[str] | tuple[str, ...]) -> dict[str, object]:
    """Record the list ``name`` (a page shows it) and return its count, view and CSV links.

    An empty list is not written: a page shows its 0 without links. Two pages may show
    the same list (the findings are on home and on Gaps); the same name with other papers
    is a bug in the page code, and stops the build."""
    keys = tuple(keys)
    if not NAME.match(name):
        raise ValueError(f"not a list name: {name!r}")
    unknown = [k for k in keys if k not in ctx.rows]
    if unknown:
        raise ValueError(f"list {name}: not pooled papers: {unknown[:3]}")
    if ctx.lists.setdefault(name, keys) != keys:
        raise ValueError(f"list {name} is named twice with different papers")
    if not keys:
        del ctx.lists[name]
    return {"name": name, "n": len(keys), "view": view(name), "csv": csv_path(name)}


def list_row(row: dict) -> dict[str, str]:
    """One paper as a row of a list's CSV (text cells, authors joined by "; ")."""
    out = {}
    for column in COLUMNS:
        value = row["key"] if column == "key" else row[column]
        if column == "authors":
            value = "; ".join(value) + (" and others" if row["authors_truncated"] else "")
        elif column == "credit_strict":
            value = "yes" if value else "no"
        out[column] = "" if value is None or value != value else str(value)  # NaN: empty
    return out


def list_files(ctx: Context) -> dict[str, str]:
    """``downloads/lists/<name>.csv`` for every list the pages showed, by site path."""
    return {
        csv_path(name): csv_text(COLUMNS, [list_row({**ctx.rows[key], "key": key}) for key in keys])
        for name, keys in sorted(ctx.lists.items())
    }
