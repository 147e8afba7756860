"""The filterable papers table and one page per paper."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from typing import Any, cast
from urllib.parse import urlencode

import pandas as pd
from markupsafe import Markup, escape

from masrl_kb.kb.fields import ARTIFACT_KINDS
from masrl_kb.kb.model.paper import EVALUATED_CATEGORIES
from masrl_kb.kb.provenance import provisional_notes
from masrl_kb.kb.readings import KB_READER, READING_AXES
from masrl_kb.query.authors import fold
from masrl_kb.query.axes import value_counts
from masrl_kb.site import urls
from masrl_kb.site.author_pages import person_anchors
from masrl_kb.site.components import Page
from masrl_kb.site.context import READING, TWINS, Context, Cross, count_at
from masrl_kb.site.html import rel, safe_url
from masrl_kb.site.lists import LISTS
from masrl_kb.site.templates import decision_marks

# Facets of the papers table: (URL parameter, axis or its own values, label or None for
# the axis's). The JS reads the row's data-<param> attribute, a space-separated list of ids.
# BENCHMARKS: one value per benchmark some paper reports on (read from the evaluations).
BENCHMARKS = "benchmarks"
EVALUATION = [
    ("benchmark", "Reports a benchmark"),
    ("ma_native", "Multi-agent-native"),
    ("results", "Reports values"),
]
FACETS: tuple[tuple[str, str | list[tuple[str, str]], str | None], ...] = (
    ("category", "category", None),
    ("is_rl", "is_rl", None),
    ("reward_family", "reward_family", None),
    ("credit_unit", "credit_unit", None),
    ("credit_strict", [("yes", "Yes"), ("no", "No")], "Strict credit"),
    ("topology", "topology", None),
    ("scenario", "scenario", None),
    ("decision", "decision", "Touches decision"),
    ("learned", "decision_learned", "Learns decision"),
    ("pool_role", "pool_role", None),
    ("evaluation", EVALUATION, "Evaluation"),
    ("benchmark", BENCHMARKS, "Benchmark"),
    (
        "releases",
        [("code", "Has code"), ("weights", "Has weights"), ("traces", "Releases traces")],
        "Releases",
    ),
    ("year", "year", None),
)
# A facet with more values than this folds them behind its name (the benchmarks).
FOLDED_FACET = 24
# The issue forms readers use (.github/ISSUE_TEMPLATE): a wrong record, a missing paper.
REPORT_FORM = "correct-tag.yml"
SUGGEST_FORM = "suggest-paper.yml"


def suggest_link(ctx: Context) -> str | None:
    """The "Suggest a paper" issue form, when the repository is known."""
    if not ctx.repo_url:
        return None
    return f"{ctx.repo_url.rstrip('/')}/issues/new?{urlencode({'template': SUGGEST_FORM})}"


def facets(ctx: Context) -> list[tuple[str, str, list[tuple[str, str]]]]:
    """(parameter, label, values) of each facet of the papers table; years only where
    papers exist, benchmarks by the number of papers reporting on them."""
    out = []
    for param, axis, label in FACETS:
        if axis == BENCHMARKS:
            out.append((param, label or "", benchmark_values(ctx)))
            continue
        if not isinstance(axis, str):
            out.append((param, label or "", axis))
            continue
        counts = value_counts(axis, papers=ctx.papers)
        values = [
            (str(v), urls.value_label(ctx, axis, v))
            for v, n in counts.items()
            if n or axis != "year"
        ]
        out.append((param, label or urls.axis_label(ctx, axis), values))
    return out


def benchmark_values(ctx: Context) -> list[tuple[str, str]]:
    """(id, name) of every benchmark a paper reports on, most papers first."""
    table = ctx.evaluations
    if table.empty:
        return []
    counts = table.groupby("benchmark")["key"].nunique()
    names = dict(zip(table["benchmark"], table["label"], strict=True))
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], str(names[kv[0]]).casefold()))
    return [(str(bid), str(names[bid])) for bid, _ in ranked]


def rl_note(ctx: Context) -> dict[str, int]:
    """How many papers of the survey's category "RL method" are tagged as not using RL
    (``is_rl``), or only partly: the category is the survey's, the RL use is each paper's."""
    methods = ctx.papers[ctx.papers["category"] == "rl_method"]
    return {
        "methods": len(methods),
        "no": int((methods["is_rl"] == "no").sum()),
        "partial": int((methods["is_rl"] == "partial").sum()),
    }


def folded_authors(
    row: dict, shown: int = 10, entries: dict[str, str] | None = None
) -> dict[str, object]:
    """The first ``shown`` authors, and the rest for a "show all" fold; with ``entries``
    (name -> href of the person's entry on the authors index) each name is a link."""
    names = list(row["authors"])
    more = " and others" if row["authors_truncated"] else ""
    cut = len(names) > shown
    found = entries or {}
    linked = [
        Markup('<a href="{}">{}</a>').format(found[n], n) if n in found else escape(n)
        for n in names
    ]
    join = Markup("; ").join
    return {
        "shown": join(linked[:shown]) + ("; …" if cut else more),
        "rest": join(linked[shown:]) + more if cut else "",
        "total": len(names),
        # Accent-free spellings of the names that have accents, indexed for search.
        "plain": "; ".join(fold(n) for n in names if fold(n) != n.casefold()),
    }


def row_data(ctx: Context, key: str, row: dict) -> dict[str, str]:
    """The data-* attributes the table's filters read: the row's key, its value ids per
    facet and the search text the row does not show (title, key, first author, venue and
    the summary's first sentence are read from the row itself)."""
    decisions = ctx.tax["decision"].ids
    summary = " ".join(str(row["summary"]).split())
    shown = one_line(summary)
    rest = summary[len(shown) :] if summary.startswith(shown) else summary
    arxiv = row["arxiv_id"] if isinstance(row["arxiv_id"], str) else ""
    text = " ".join([" ".join(row["authors"][1:]), row["affiliation"], rest, arxiv])
    evaluated = row["evaluated_on"] if isinstance(row["evaluated_on"], list) else []
    evaluation = [
        ("benchmark", bool(evaluated)),
        ("ma_native", bool(row["ma_native_eval"])),
        ("results", key in ctx.with_results),
    ]
    computed = {
        "evaluation": " ".join(name for name, holds in evaluation if holds),
        "benchmark": " ".join(sorted({str(e["benchmark"]) for e in evaluated})),
        "credit_strict": "yes" if row["credit_strict"] else "no",
        "decision": " ".join(d for d in decisions if row[d] != "absent"),
        "learned": " ".join(d for d in decisions if row[d] == "learned"),
        "releases": " ".join(k for k in ARTIFACT_KINDS if row[f"has_{k}"]),
        "year": str(int(row["year"])),
    }
    facets = {p: computed[p] if p in computed else row[p] for p, _, _ in FACETS}
    return {"key": key, **facets, "text": " ".join(text.lower().split())}


def one_line(summary: object, limit: int = 140) -> str:
    """The summary's first sentence, cut at a word boundary within ``limit`` characters."""
    text = " ".join(str(summary or "").split())
    first = re.split(r"(?<=[.!?])\s", text, maxsplit=1)[0]
    if len(first) <= limit:
        return first
    return first[:limit].rsplit(" ", 1)[0].rstrip(",;:") + "…"


def papers_table_page(ctx: Context) -> Page:
    # The table is every record at once: the paper pages carry the search text.
    page = Page(
        urls.PAPERS, "Papers", meta={"hide": ["navigation", "toc"], "search": {"exclude": True}}
    )
    # Newest first: by year, then date added; the key (the index) breaks ties.
    newest = ctx.papers.sort_values(["year", "added", "key"], ascending=[False, False, True])
    rows = [
        {
            "key": key,
            "row": (row := ctx.rows[key]),
            "data": row_data(ctx, key, row),
            "oneline": one_line(row["summary"]),
            # the released code's http(s) URL, if the record names one
            "code": safe_url(row["artifacts"].get("code"))
            if isinstance(row["artifacts"], dict)
            else None,
        }
        for key in newest.index
    ]
    return page.show(
        "papers.md",
        ctx=ctx,
        facets=facets(ctx),
        # Every data-* column filters (a shared link may name one with no chip).
        params=" ".join(param for param, _, _ in FACETS),
        rows=rows,
        total=len(ctx.papers),
        suggest=suggest_link(ctx),
        rl=rl_note(ctx),
        folded=FOLDED_FACET,
        lists_base=LISTS,
    )


# ---------------------------------------------------------------- one paper


def paper_links(row: dict) -> tuple[str | None, list[str]]:
    """The arXiv id and the other links, none repeating the arXiv page."""
    arxiv = row["arxiv_id"] if isinstance(row["arxiv_id"], str) else None
    shown = {f"https://arxiv.org/abs/{arxiv}"} if arxiv else set()
    links = []
    for url in [row["url"], *row["extra_urls"]]:
        if isinstance(url, str) and url.rstrip("/") not in shown:
            shown.add(url.rstrip("/"))
            links.append(url)
    return arxiv, links


def citation_meta(row: dict, arxiv: str | None) -> dict[str, object]:
    """Google Scholar's ``citation_*`` fields (the theme override writes the meta tags)."""
    meta: dict[str, object] = {
        "title": row["title"],
        "authors": list(row["authors"]),
        "date": str(int(row["year"])),
    }
    if isinstance(row["venue"], str) and row["venue"]:
        meta["venue"] = row["venue"]
    if arxiv:
        meta |= {"arxiv_id": arxiv, "pdf_url": f"https://arxiv.org/pdf/{arxiv}"}
    return meta


def source_links(ctx: Context, key: str) -> dict[str, str]:
    """ "Edit this record" and "report a problem" on the repository, when it is known."""
    if not ctx.repo_url:
        return {}
    repo = ctx.repo_url.rstrip("/")
    query = urlencode({"template": REPORT_FORM, "title": f"[correction] {key}", "key": key})
    return {"edit": f"{repo}/edit/main/papers/{key}.yaml", "report": f"{repo}/issues/new?{query}"}


def paper_cells(ctx: Context, key: str) -> list[dict]:
    """The broad cross-tab cells a paper sits in, each with its count and, when the
    paper also holds under the strict or learned reading, that reading's count."""
    cells = ctx.paper_cells.get(key, [])
    spots = set(cells)
    return [
        {
            **_cell(ctx, cross, rv, cv),
            "variant": (TWINS.get(cross), rv, cv) in spots and _cell(ctx, TWINS[cross], rv, cv),
        }
        for cross, rv, cv in cells
        if cross not in READING
    ]


def _cell(ctx: Context, cross: Cross | None, rv: object, cv: object) -> dict:
    """A cell's link, label, count and reading, computed once for all the papers in it."""
    if (cross, rv, cv) not in ctx.memo:
        assert cross is not None
        ctx.memo[(cross, rv, cv)] = {
            "href": urls.cell(cross, rv, cv),
            "text": urls.cell_label(ctx, cross, rv, cv),
            "n": count_at(ctx.tables[cross], rv, cv),
            "label": READING.get(cross),
        }
    return ctx.memo[(cross, rv, cv)]


def search_tags(ctx: Context, key: str, row: dict) -> list[str]:
    """What search finds a paper by beyond its title, authors and summary: its tags,
    the decisions it touches or learns and the benchmarks it reports on (front matter
    ``tags``, which the theme's search indexes; no page prints them as tags). HTML-escaped:
    the search results show a matched tag as HTML."""
    tax = ctx.tax
    tags = [
        tax["category"].label_of(row["category"]),
        f"{row['reward_family']} {tax['reward_family'].label_of(row['reward_family'])}",
        f"{tax['topology'].label_of(row['topology'])} topology",
        f"{tax['credit_unit'].label_of(row['credit_unit'])} credit",
        f"{tax['scenario'].label_of(row['scenario'])} scenario",
    ]
    for did, status, label in decision_marks(tax, row):
        tags.append(f"{'learns' if status == 'learned' else 'has'} {did} {label}")
    for e in ctx.evaluations_by_paper.get(key, []):
        tags.append(str(e["label"]) + (" (multi-agent-native)" if e["multi_agent_native"] else ""))
    return [str(escape(t)) for t in dict.fromkeys(tags)]


def paper_page(ctx: Context, key: str) -> Page:
    row = ctx.rows[key]
    arxiv, links = paper_links(row)
    url = urls.paper(key)
    page = Page(
        url,
        row["title"],
        meta={
            "hide": ["navigation", "toc"],
            "kb_lean": True,
            "citation": citation_meta(row, arxiv),
            "tags": search_tags(ctx, key, row),
        },
    )
    index = rel(url, urls.AUTHORS)
    anchors = person_anchors(ctx)
    entries = {n: f"{index}#{anchors[n]}" for n in row["authors"] if n in anchors}
    return page.show(
        "paper.md",
        ctx=ctx,
        key=key,
        row=row,
        authors=folded_authors(row, entries=entries),
        arxiv=arxiv,
        links=links,
        cells=paper_cells(ctx, key),
        source=source_links(ctx, key),
        releases=releases(row),
        readings=other_readings(ctx, key),
        evaluated_kind=row["category"] in EVALUATED_CATEGORIES,
        provisional=provisional_notes(row),
    )


def releases(row: dict) -> list[tuple[str, str | None, str | None]]:
    """(kind, URL, the day it was checked and not found) of each artifact kind."""
    artifacts = row["artifacts"] if isinstance(row["artifacts"], dict) else {}
    out = []
    for kind in ARTIFACT_KINDS:
        value = artifacts.get(kind)
        checked = value.get("none") if isinstance(value, dict) else None
        url = value if isinstance(value, str) else None
        out.append((kind, url, str(checked) if checked else None))
    return out


def other_readings(ctx: Context, key: str) -> dict:
    """Other readers' codings of this paper: one row per reader, one cell per field,
    each cell saying whether it matches the record."""
    coded = ctx.codings.get(key, {})  # what paper_readings() tables, reader by reader
    if KB_READER not in coded:
        return {}
    others = {reader: coded[reader] for reader in sorted(coded) if reader != KB_READER}
    axes = [a for a in READING_AXES if any(pd.notna(cast(Any, v.get(a))) for v in others.values())]
    record = {a: coded[KB_READER].get(a, math.nan) for a in axes}
    rows = {
        reader: {
            a: (values[a], values[a] == record[a])
            for a in axes
            if isinstance(values.get(a), str | bool)
        }
        for reader, values in others.items()
    }
    return {"axes": axes, "record": record, "rows": rows}


def paper_pages(ctx: Context) -> Iterator[Page]:
    yield papers_table_page(ctx)
    for key in ctx.papers.index:
        yield paper_page(ctx, key)
