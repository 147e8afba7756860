"""Pieces shared by several pages: paper lists, tag links, decision badges."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from masrl_kb.kb.rules import NA
from masrl_kb.site import urls
from masrl_kb.site.context import Context
from masrl_kb.site.html import esc, front_matter, link, rel

DECISION_STATUS_MARK = {"learned": "●", "present": "○"}


@dataclass
class Page:
    """One generated Markdown page at a directory URL."""

    url: str
    title: str
    body: list[str] = field(default_factory=list)
    meta: dict[str, object] = field(default_factory=dict)

    def add(self, *parts: str) -> None:
        """Append blocks; each becomes its own Markdown paragraph or HTML block."""
        self.body.extend(parts)

    def href(self, to_url: str) -> str:
        return rel(self.url, to_url)

    def link(self, to_url: str, text: object, title: object | None = None) -> str:
        return link(self.url, to_url, text, title)

    def render(self) -> str:
        return front_matter(self.title, **self.meta) + "\n\n".join(self.body) + "\n"


def h1(text: object) -> str:
    """A page heading as raw HTML (record text must not become Markdown)."""
    return f"<h1>{esc(text)}</h1>"


def paper_link(page: Page, ctx: Context, key: str) -> str:
    return page.link(urls.paper(key), ctx.row(key)["title"])


def tag_link(page: Page, ctx: Context, axis: str, value_id: object, short: bool = False) -> str:
    """A tag shown with its label (``short``: the survey's id, label on hover)."""
    label = urls.value_label(ctx, axis, value_id)
    if short and value_id != NA:
        return page.link(urls.value(axis, value_id), value_id, label)
    return page.link(urls.value(axis, value_id), label)


def decision_badges(page: Page, ctx: Context, row: dict) -> str:
    """O1..O5 badges: filled when learned, hollow when only present."""
    badges = []
    for did in ctx.tax["decision"].ids:
        status = row[did]
        if status == "absent":
            continue
        tip = f"{did} {ctx.tax['decision'].label_of(did)}: {status}"
        badges.append(
            f'<a class="kb-dec kb-{status}" href="{esc(page.href(urls.value("decision", did)))}"'
            f' title="{esc(tip)}">{DECISION_STATUS_MARK[status]}{did}</a>'
        )
    return " ".join(badges) or '<span class="kb-dim">none</span>'


def credit_cell(page: Page, ctx: Context, row: dict) -> str:
    strict = (
        ' <span class="kb-strict" title="strict reading: explicit credit estimator">strict</span>'
        if row["credit_strict"]
        else ""
    )
    return tag_link(page, ctx, "credit_unit", row["credit_unit"]) + strict


def paper_rows(page: Page, ctx: Context, keys: Iterable[str], extra=None) -> str:
    """``<tr>`` rows of a compact paper list (``extra(key)`` adds cells)."""
    out = []
    for key in keys:
        row = ctx.row(key)
        cells = [
            f'{paper_link(page, ctx, key)}<br><code class="kb-key">{esc(key)}</code>',
            str(int(row["year"])),
            tag_link(page, ctx, "category", row["category"]),
            tag_link(page, ctx, "reward_family", row["reward_family"], short=True),
            credit_cell(page, ctx, row),
            tag_link(page, ctx, "topology", row["topology"]),
            decision_badges(page, ctx, row),
        ]
        cells += extra(key) if extra else []
        out.append(
            f'<tr data-key="{esc(key)}">' + "".join(f"<td>{c}</td>" for c in cells) + "</tr>"
        )
    return "".join(out)


PAPER_HEAD = ["Paper", "Year", "Category", "Reward", "Credit unit", "Topology", "Decisions"]


def paper_list(page: Page, ctx: Context, keys: Iterable[str], extra_head=(), extra=None) -> str:
    """A compact table of papers; empty lists say so."""
    keys = list(keys)
    if not keys:
        return '<p class="kb-dim">No paper.</p>'
    head = "".join(f"<th>{h}</th>" for h in (*PAPER_HEAD, *extra_head))
    return (
        '<div class="kb-scroll"><table class="kb-table kb-list">'
        f"<thead><tr>{head}</tr></thead><tbody>{paper_rows(page, ctx, keys, extra)}</tbody>"
        "</table></div>"
    )


def inline_papers(page: Page, ctx: Context, keys: Iterable[str], limit: int = 0) -> str:
    """Papers as a short inline list of key links (title on hover)."""
    keys = list(keys)
    shown = keys[:limit] if limit else keys
    items = [page.link(urls.paper(k), k, ctx.row(k)["title"]) for k in shown]
    more = len(keys) - len(shown)
    if more > 0:
        items.append(f'<span class="kb-dim">and {more} more</span>')
    return ", ".join(items) if items else '<span class="kb-dim">none</span>'


def stat(name: str, value: object, label: str, href: str | None = None) -> str:
    """A headline number card; ``data-kb-stat`` lets tests find it."""
    number = f'<span class="kb-stat-n" data-kb-stat="{esc(name)}">{esc(value)}</span>'
    inner = f'{number}<span class="kb-stat-l">{esc(label)}</span>'
    if href:
        return f'<a class="kb-stat" href="{esc(href)}">{inner}</a>'
    return f'<div class="kb-stat">{inner}</div>'
