"""The filterable papers table and one page per paper."""

from __future__ import annotations

from collections.abc import Iterator

from masrl_kb.contrib.export.bibtex import to_bibtex
from masrl_kb.kb.rules import decision_status
from masrl_kb.query.frames import value_counts
from masrl_kb.site import urls
from masrl_kb.site.components import Page, credit_cell, decision_badges, h1, tag_link
from masrl_kb.site.context import Context
from masrl_kb.site.crosstabs import cell_count
from masrl_kb.site.html import esc, ext_link

# Facets of the papers table: (URL parameter, axis). The JS reads the row's
# data-<param> attribute, a space-separated list of value ids.
FACETS = (
    ("category", "category"),
    ("reward_family", "reward_family"),
    ("credit_unit", "credit_unit"),
    ("credit_strict", None),
    ("topology", "topology"),
    ("scenario", "scenario"),
    ("decision", "decision"),
    ("learned", "decision_learned"),
    ("pool_role", "pool_role"),
    ("is_rl", "is_rl"),
    ("year", "year"),
)
FACET_LABELS = {
    "credit_strict": "Strict credit",
    "learned": "Learns decision",
    "decision": "Touches decision",
}


def _facet_values(ctx: Context, param: str, axis: str | None) -> list[tuple[str, str]]:
    """(value id, label) pairs a facet offers; years only where papers exist."""
    if axis is None:
        return [("yes", "Yes"), ("no", "No")]
    counts = value_counts(axis, papers=ctx.papers)
    return [
        (str(v), urls.value_label(ctx, axis, v)) for v, n in counts.items() if n or axis != "year"
    ]


def _facet_label(ctx: Context, param: str, axis: str | None) -> str:
    return FACET_LABELS.get(param) or urls.axis_label(ctx, axis or param)


def filter_panel(ctx: Context) -> str:
    """Chips per facet: a click includes a value, a second click excludes it."""
    facets = []
    for param, axis in FACETS:
        chips = "".join(
            f'<button type="button" class="kb-chip" data-param="{param}" data-value="{esc(v)}">'
            f'{esc(label)} <span class="kb-n"></span></button>'
            for v, label in _facet_values(ctx, param, axis)
        )
        facets.append(
            f'<div class="kb-facet"><span class="kb-facet-name">'
            f"{esc(_facet_label(ctx, param, axis))}</span>{chips}</div>"
        )
    return (
        '<div class="kb-filter" data-kb-filter>'
        '<input type="search" class="kb-q" data-kb-q placeholder="Filter by title, author, '
        'key, venue or summary" aria-label="Filter by text">'
        '<p class="kb-help">Click a tag once to keep only papers with it, twice to exclude '
        "it, a third time to clear it. The address bar keeps the filter, so a filtered view "
        "can be shared.</p>"
        f'<div class="kb-facets">{"".join(facets)}</div>'
        f'<p class="kb-status"><span data-kb-shown>{len(ctx.papers)}</span> of '
        f"<span data-kb-total>{len(ctx.papers)}</span> papers · "
        '<button type="button" class="kb-btn" data-kb-reset>Reset</button> '
        '<button type="button" class="kb-btn" data-kb-copy>Copy link</button></p></div>'
    )


def _row_data(ctx: Context, key: str, row: dict) -> dict[str, str]:
    decisions = ctx.tax["decision"].ids
    text = " ".join(
        [
            key,
            row["title"],
            " ".join(row["authors"]),
            row["venue"],
            row["affiliation"],
            row["summary"],
        ]
    )
    return {
        "key": key,
        "category": row["category"],
        "reward_family": row["reward_family"],
        "credit_unit": row["credit_unit"],
        "credit_strict": "yes" if row["credit_strict"] else "no",
        "topology": row["topology"],
        "scenario": row["scenario"],
        "decision": " ".join(d for d in decisions if row[d] != "absent"),
        "learned": " ".join(d for d in decisions if row[d] == "learned"),
        "pool_role": row["pool_role"],
        "is_rl": row["is_rl"],
        "year": str(int(row["year"])),
        "text": " ".join(text.lower().split()),
    }


TABLE_HEAD = (
    ("paper", "Paper"),
    ("year", "Year"),
    ("category", "Category"),
    ("reward", "Reward family"),
    ("credit", "Credit unit"),
    ("topology", "Topology"),
    ("scenario", "Scenario"),
    ("decisions", "Decisions"),
    ("role", "Role"),
)


def _table_row(page: Page, ctx: Context, key: str, row: dict) -> str:
    data = " ".join(f'data-{k}="{esc(v)}"' for k, v in _row_data(ctx, key, row).items())
    sort = {
        "paper": row["title"].lower(),
        "year": int(row["year"]),
        "category": row["category"],
        "reward": row["reward_family"],
        "credit": row["credit_unit"],
        "topology": row["topology"],
        "scenario": row["scenario"],
        "decisions": sum(row[d] == "learned" for d in ctx.tax["decision"].ids),
        "role": row["pool_role"],
    }
    cells = [
        f'{page.link(urls.paper(key), row["title"])}<br><code class="kb-key">{esc(key)}</code>',
        str(int(row["year"])),
        tag_link(page, ctx, "category", row["category"]),
        tag_link(page, ctx, "reward_family", row["reward_family"]),
        credit_cell(page, ctx, row),
        tag_link(page, ctx, "topology", row["topology"]),
        tag_link(page, ctx, "scenario", row["scenario"]),
        decision_badges(page, ctx, row),
        esc(ctx.tax["pool_role"].label_of(row["pool_role"])),
    ]
    tds = "".join(
        f'<td data-sort="{esc(sort[name])}">{c}</td>'
        for (name, _), c in zip(TABLE_HEAD, cells, strict=True)
    )
    return f"<tr {data}>{tds}</tr>"


def papers_table_page(ctx: Context) -> Page:
    page = Page(urls.PAPERS, "Papers", meta={"hide": ["navigation", "toc"]})
    head = "".join(
        f'<th data-sort-key="{k}" aria-sort="none"><button type="button">{esc(t)}</button></th>'
        for k, t in TABLE_HEAD
    )
    rows = "".join(_table_row(page, ctx, k, ctx.row(k)) for k in ctx.papers.index)
    page.add(
        "# Papers",
        filter_panel(ctx),
        f'<div class="kb-scroll"><table class="kb-table kb-papers" data-kb-table>'
        f"<thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table></div>",
    )
    return page


# ---------------------------------------------------------------- one paper


def _field_rows(page: Page, ctx: Context, key: str, row: dict) -> list[tuple[str, str]]:
    authors = "; ".join(row["authors"]) + (" and others" if row["authors_truncated"] else "")
    links = [ext_link(row["url"])] + [ext_link(u) for u in row["extra_urls"]]
    arxiv = row["arxiv_id"] if isinstance(row["arxiv_id"], str) else None
    tags = [
        ("Category", "category"),
        ("Uses RL", "is_rl"),
        ("Reward type", "reward_type"),
        ("Reward family", "reward_family"),
        ("Topology", "topology"),
        ("Scenario", "scenario"),
        ("Pool role", "pool_role"),
    ]
    fields = [
        ("Authors", esc(authors)),
        ("Year", esc(int(row["year"]))),
        ("Venue", esc(row["venue"])),
        ("Affiliation", esc(row["affiliation"])),
        (
            "arXiv",
            ext_link(f"https://arxiv.org/abs/{arxiv}", f"arXiv:{arxiv}")
            if arxiv
            else '<span class="kb-dim">none</span>',
        ),
        ("Links", "<br>".join(links)),
    ]
    for label, axis in tags:
        if axis in ("is_rl", "pool_role"):
            fields.append((label, esc(ctx.tax[axis].label_of(row[axis]))))
        else:
            fields.append((label, tag_link(page, ctx, axis, row[axis])))
    fields += [
        (
            "Credit unit",
            credit_cell(page, ctx, row)
            + ("" if row["credit_strict"] else ' <span class="kb-dim">(broad reading only)</span>'),
        ),
        ("Metadata verified", esc(ctx.tax["verified"].label_of(row["verified"]))),
        ("Added", esc(row["added"].date().isoformat())),
    ]
    return fields


def _decisions_table(page: Page, ctx: Context, row: dict) -> str:
    if not row["decisions"]:
        return '<p class="kb-dim">The record touches no orchestration decision.</p>'
    body = []
    for entry in sorted(row["decisions"], key=lambda d: d["id"]):
        status = decision_status(entry)
        body.append(
            f'<tr data-decision="{esc(entry["id"])}"><td>'
            f"{tag_link(page, ctx, 'decision', entry['id'])}</td>"
            f'<td><span class="kb-{status}-tag">{status}</span></td>'
            f"<td>{esc(entry['why'])}</td></tr>"
        )
    return (
        '<div class="kb-scroll"><table class="kb-table"><thead><tr><th>Decision</th>'
        f"<th>Status</th><th>Why</th></tr></thead><tbody>{''.join(body)}</tbody></table></div>"
    )


def _cells_list(page: Page, ctx: Context, key: str) -> str:
    items = []
    for cross, rv, cv in ctx.paper_cells.get(key, []):
        n = cell_count(ctx, cross, rv, cv)
        text = f"{urls.value_label(ctx, cross.rows, rv)} × {urls.value_label(ctx, cross.cols, cv)}"
        items.append(
            f"<li>{page.link(urls.cell(cross, rv, cv), text)} "
            f'<span class="kb-dim">({n} in {esc(urls.cross_title(ctx, cross))})'
            "</span></li>"
        )
    return f'<ul class="kb-cells">{"".join(items)}</ul>'


def paper_page(ctx: Context, key: str) -> Page:
    row = ctx.row(key)
    page = Page(urls.paper(key), row["title"], meta={"hide": ["navigation"]})
    fields = "".join(
        f"<tr><th>{esc(name)}</th><td>{value}</td></tr>"
        for name, value in _field_rows(page, ctx, key, row)
    )
    page.add(
        h1(row["title"]),
        f'<p class="kb-crumbs">{page.link(urls.PAPERS, "All papers")} · <code>{esc(key)}</code>'
        "</p>",
        f'<p class="kb-summary">{esc(row["summary"])}</p>',
        f'<div class="kb-scroll"><table class="kb-table kb-fields"><tbody>{fields}</tbody>'
        "</table></div>",
        "## Orchestration decisions",
        _decisions_table(page, ctx, row),
    )
    if isinstance(row["notes"], str):
        page.add("## Notes", f'<p class="kb-notes">{esc(row["notes"])}</p>')
    page.add(
        "## In the cross-tabs",
        _cells_list(page, ctx, key),
        "## Cite",
        '<div class="highlight"><pre><code class="language-bibtex">'
        f"{esc(to_bibtex(ctx.papers.loc[[key]]))}</code></pre></div>",
    )
    return page


def paper_pages(ctx: Context) -> Iterator[Page]:
    yield papers_table_page(ctx)
    for key in ctx.papers.index:
        yield paper_page(ctx, key)
