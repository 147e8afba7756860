"""The exclusions page: the screening flow as a diagram and the exclusion log."""

from __future__ import annotations

from masrl_kb.query.frames import crosstab, value_counts
from masrl_kb.site import urls
from masrl_kb.site.components import Page
from masrl_kb.site.context import Context, count_at
from masrl_kb.site.diagrams import flow_diagram


def _stage_counts(ctx: Context) -> list[tuple[str, str, int]]:
    counts = value_counts("stage", papers=ctx.exclusions)
    spec = ctx.tax["exclusion_stage"]
    return [(str(s), spec.label_of(str(s)), int(n)) for s, n in counts.items()]


def flow_rows(ctx: Context) -> list[tuple[str, int, str]]:
    """(label, count, data key) of the screening flow, readable without the diagram."""
    pooled, excluded = len(ctx.papers), len(ctx.exclusions)
    rows = [
        ("Records screened", pooled + excluded, "screened"),
        ("Retained in the pool", pooled, "retained"),
        ("Excluded", excluded, "excluded"),
    ]
    return rows + [
        (f"Excluded at: {label}", n, f"stage-{sid}") for sid, label, n in _stage_counts(ctx)
    ]


def reasons(ctx: Context) -> dict:
    """Exclusions per reason and stage, with labels and definitions."""
    table = crosstab("reason", "stage", papers=ctx.exclusions)
    stage, reason = ctx.tax["exclusion_stage"], ctx.tax["exclusion_reason"]
    return {
        "stages": [stage.label_of(str(s)) for s in table.columns],
        "rows": [
            (
                reason.label_of(str(r)),
                reason.value(str(r)).definition,
                [count_at(table, r, s) for s in table.columns],
            )
            for r in table.index
        ],
    }


def log_rows(ctx: Context) -> list[dict]:
    tax = ctx.tax
    return [
        {
            "id": eid,
            "title": row["title"],
            "note": row["note"],
            "url": row["url"],
            "identifier": row["identifier"],
            "source": tax["exclusion_source"].label_of(row["source"]),
            "query_family": tax["query_family"].label_of(row["query_family"]),
            "stage": tax["exclusion_stage"].label_of(row["stage"]),
            "reason": tax["exclusion_reason"].label_of(row["reason"]),
            "screened": row["screened"].date().isoformat(),
        }
        for eid, row in zip(ctx.exclusions.index, ctx.exclusions.to_dict("records"), strict=True)
    ]


def exclusions_page(ctx: Context) -> Page:
    page = Page(urls.EXCLUSIONS, "Exclusions", meta={"hide": ["navigation"]})
    stages = [(label, n) for _, label, n in _stage_counts(ctx)]
    pooled, excluded = len(ctx.papers), len(ctx.exclusions)
    return page.show(
        "exclusions.md",
        ctx=ctx,
        diagram=flow_diagram(pooled + excluded, pooled, excluded, stages),
        flow=flow_rows(ctx),
        reasons=reasons(ctx),
        log=log_rows(ctx),
    )
