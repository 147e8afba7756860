"""The home page: the pool, its headline numbers, the claims and the gaps."""

from __future__ import annotations

from masrl_kb.query.claims import ClaimResult
from masrl_kb.site import urls
from masrl_kb.site.charts import decision_chart, year_chart
from masrl_kb.site.components import Page, inline_papers, stat
from masrl_kb.site.context import SURVEY, Context
from masrl_kb.site.gaps import HEADLINES, headline_numbers
from masrl_kb.site.html import esc, ext_link


def intro(page: Page, ctx: Context) -> str:
    survey = ext_link(f"https://arxiv.org/abs/{SURVEY['arxiv_id']}", SURVEY["title"])
    newest = ctx.papers["added"].max()
    newest_text = newest.date().isoformat() if len(ctx.papers) else "none"
    return (
        '<p class="kb-lead">A curated knowledge base of the papers on reinforcement learning '
        f"for LLM-based multi-agent systems: the paper pool of the survey “{survey}” "
        f"({esc(SURVEY['author'])}, arXiv:{esc(SURVEY['arxiv_id'])}), whose pool was cut off "
        f"on <strong>{esc(SURVEY['cutoff'])}</strong>. Each paper is a reviewed record tagged "
        "on the survey's axes; every number on this site is computed from those records when "
        f"the site is built (newest record added {esc(newest_text)}).</p>"
    )


def stats(page: Page, ctx: Context) -> str:
    pooled, excluded = len(ctx.papers), len(ctx.exclusions)
    return (
        '<div class="kb-stats">'
        + "".join(
            [
                stat("pooled", pooled, "papers in the pool", page.href(urls.PAPERS)),
                stat("excluded", excluded, "screened records excluded", page.href(urls.EXCLUSIONS)),
                stat(
                    "audited",
                    pooled + excluded,
                    "records audited in all",
                    page.href(urls.EXCLUSIONS),
                ),
            ]
        )
        + "</div>"
    )


def _claim_row(page: Page, ctx: Context, result: ClaimResult) -> str:
    claim = result.claim
    status = (
        '<span class="kb-holds">holds</span>'
        if result.holds
        else '<span class="kb-broken">does not hold</span>'
    )
    papers = (
        inline_papers(page, ctx, result.keys, 12)
        if result.keys
        else (
            '<span class="kb-dim">none</span>'
            if claim.where
            else f'<span class="kb-dim">whole {esc(claim.table)} table</span>'
        )
    )
    where = f"<br><code>{esc(claim.where)}</code>" if claim.where else ""
    return (
        f'<tr id="claim-{esc(claim.id)}" data-claim="{esc(claim.id)}" '
        f'data-holds="{str(result.holds).lower()}"><td>{status}</td>'
        f'<td>{esc(claim.statement)}<br><small class="kb-dim"><code>{esc(claim.id)}</code> · '
        f"{esc(claim.table)}{where}</small></td>"
        f'<td class="kb-num" data-kb-claim-value>{result.value}</td>'
        f'<td class="kb-num">{esc(claim.op)} {claim.expected}</td><td>{papers}</td></tr>'
    )


def claims_block(page: Page, ctx: Context) -> list[str]:
    if ctx.claims is None:
        return ['<p class="kb-dim">This data root has no <code>claims.yaml</code>.</p>']
    broken = sum(not r.holds for r in ctx.claims)
    summary = (
        f"<p><strong>{len(ctx.claims) - broken}</strong> of {len(ctx.claims)} claims "
        f"hold on the current records; <strong>{broken}</strong> "
        f"{'does' if broken == 1 else 'do'} not. A claim that breaks stays listed: "
        "it is a finding, and the papers behind its value are linked.</p>"
    )
    rows = "".join(_claim_row(page, ctx, r) for r in ctx.claims)
    table = (
        '<div class="kb-scroll"><table class="kb-table kb-claims"><thead><tr>'
        "<th>Status</th><th>Claim</th><th>Value</th><th>Expected</th><th>Papers</th>"
        f"</tr></thead><tbody>{rows}</tbody></table></div>"
    )
    return [summary, table]


def gap_cards(page: Page, ctx: Context) -> str:
    cards = []
    for gap in HEADLINES:
        numbers = " · ".join(
            f"<strong>{n}</strong> {esc(label)}" for label, n in headline_numbers(ctx, gap)
        )
        cards.append(
            f'<a class="kb-card" href="{esc(page.href(urls.GAPS + "#" + gap.id))}">'
            f'<span class="kb-card-title">{esc(gap.title)}</span>'
            f'<span class="kb-card-body">{numbers}</span></a>'
        )
    return f'<div class="kb-cards">{"".join(cards)}</div>'


def explore_links(page: Page) -> str:
    items = [
        (urls.CROSSTABS, "Cross-tabs", "two axes at a time, every cell linked to its papers"),
        (urls.PAPERS, "Papers", "the whole pool, filterable by any tag, year and text"),
        (urls.TAXONOMY, "Taxonomy", "each axis's values with definitions, counts and papers"),
        (urls.EXCLUSIONS, "Exclusions", "the screening flow and the records left out"),
        (urls.NEW, "What's new", "records by the day they were added, with an Atom feed"),
        (urls.DOWNLOADS, "Downloads", "the pool as CSV, JSON and BibTeX"),
    ]
    lis = "".join(f"<li>{page.link(u, t)}: {esc(d)}</li>" for u, t, d in items)
    return f'<ul class="kb-links">{lis}</ul>'


def home_page(ctx: Context) -> Page:
    page = Page(urls.HOME, "Home", meta={"hide": ["navigation"]})
    page.add(
        "# RL for LLM-based multi-agent systems",
        intro(page, ctx),
        stats(page, ctx),
        "## Where the gaps are",
        gap_cards(page, ctx),
        "## The survey's claims, re-checked",
        *claims_block(page, ctx),
        "## Papers per year",
        year_chart(page, ctx),
        "## Orchestration decisions: learned or fixed",
        decision_chart(page, ctx),
        "## Explore",
        explore_links(page),
    )
    return page
