"""The home page: the pool, its headline numbers, the claims and the gaps."""

from __future__ import annotations

from masrl_kb.site import urls
from masrl_kb.site.charts import decision_chart, learned_chart, year_chart
from masrl_kb.site.components import Page
from masrl_kb.site.context import SURVEY, Context
from masrl_kb.site.gaps import HEADLINES, findings, headline_numbers
from masrl_kb.site.paper_pages import suggest_link

EXPLORE = (
    (urls.CROSSTABS, "Cross-tabs", "two axes at a time, every cell linked to its papers"),
    (urls.PAPERS, "Papers", "the whole pool, filterable by any tag, year and text"),
    (urls.TAXONOMY, "Taxonomy", "each axis's values with definitions, counts and papers"),
    (urls.EXCLUSIONS, "Exclusions", "the screening flow and the records left out"),
    (urls.SINCE, "Since the survey", "papers added after the cut-off, cells and claims they moved"),
    (urls.NEW, "What's new", "records by the day they were added, with an Atom feed"),
    (urls.DOWNLOADS, "Downloads", "the pool as CSV, JSON and BibTeX"),
)


def home_page(ctx: Context) -> Page:
    page = Page(urls.HOME, "Home", meta={"hide": ["navigation"]})
    newest = ctx.papers["added"].max()
    views = ctx.claim_views
    broken = sum(not v.survey.holds for v in views) if views is not None else 0
    return page.show(
        "home.md",
        ctx=ctx,
        survey=SURVEY,
        newest=newest.date().isoformat() if len(ctx.papers) else "none",
        pooled=len(ctx.papers),
        excluded=len(ctx.exclusions),
        gaps=[(gap, headline_numbers(ctx, gap)) for gap in HEADLINES],
        findings=findings(ctx),
        claims=views,
        broken=broken,
        broken_today=sum(not v.today.holds for v in views) if views is not None else 0,
        survey_pooled=len(ctx.survey[0]),
        survey_excluded=len(ctx.survey[1]),
        year_chart=year_chart(page, ctx),
        decision_chart=decision_chart(page, ctx),
        learned_chart=learned_chart(page, ctx),
        explore=EXPLORE,
        repo=ctx.repo_url,
        suggest=suggest_link(ctx),
    )
