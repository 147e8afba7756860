"""The exclusions page: the screening flow as a diagram and the exclusion log."""

from __future__ import annotations

from masrl_kb.query.frames import crosstab, value_counts
from masrl_kb.site import urls
from masrl_kb.site.components import Page
from masrl_kb.site.context import Context, count_at
from masrl_kb.site.diagrams import flow_diagram


def exclusions_page(ctx: Context) -> Page:
    page = Page(urls.EXCLUSIONS, "Exclusions", meta={"hide": ["navigation"]})
    stage, reason = ctx.tax["exclusion_stage"], ctx.tax["exclusion_reason"]
    stages = [
        (str(s), stage.label_of(str(s)), int(n))
        for s, n in value_counts("stage", papers=ctx.exclusions).items()
    ]
    pooled, excluded = len(ctx.papers), len(ctx.exclusions)
    # The screening flow as (label, count, data key), readable without the diagram.
    flow = [
        ("Records screened", pooled + excluded, "screened"),
        ("Retained in the pool", pooled, "retained"),
        ("Excluded", excluded, "excluded"),
        *((f"Excluded at: {label}", n, f"stage-{sid}") for sid, label, n in stages),
    ]
    table = crosstab("reason", "stage", papers=ctx.exclusions)
    reasons = [
        (r, reason.label_of(str(r)), [count_at(table, r, s) for s in table.columns])
        for r in table.index
    ]
    return page.show(
        "exclusions.md",
        ctx=ctx,
        diagram=flow_diagram(pooled + excluded, pooled, excluded, [s[1:] for s in stages]),
        flow=flow,
        stages=[stage.label_of(str(s)) for s in table.columns],
        reasons=reasons,
        log=zip(ctx.exclusions.index, ctx.exclusions.to_dict("records"), strict=True),
    )
