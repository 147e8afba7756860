"""The home page: the pool, its headline numbers, the claims and the gaps."""

from __future__ import annotations

from masrl_kb.site import urls
from masrl_kb.site.charts import decision_chart, learned_chart, year_chart
from masrl_kb.site.components import Page
from masrl_kb.site.context import SURVEY, Context
from masrl_kb.site.gaps import HEADLINES, findings, headline_numbers
from masrl_kb.site.paper_pages import suggest_link


def home_page(ctx: Context) -> Page:
    page = Page(urls.HOME, "Home", meta={"hide": ["navigation"]})
    return page.show(
        "home.md",
        ctx=ctx,
        survey=SURVEY,
        gaps=[(gap, headline_numbers(ctx, gap)) for gap in HEADLINES],
        findings=findings(ctx),
        year_chart=year_chart(page, ctx),
        decision_chart=decision_chart(page, ctx),
        learned_chart=learned_chart(page, ctx),
        suggest=suggest_link(ctx),
    )
