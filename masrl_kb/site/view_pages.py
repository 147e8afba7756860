"""The survey's view beside today's: the claims page, the Since the survey page, the
note on every page saying what date the pool covers and the banner of a preview build,
all computed by :mod:`masrl_kb.query.views` (as the command line and pandas users do)."""

from __future__ import annotations

from masrl_kb.query.views import moved_cells, new_papers
from masrl_kb.site import urls
from masrl_kb.site.components import Page
from masrl_kb.site.context import Context, Cross, all_crosses
from masrl_kb.site.templates import render

DRAFTS_LISTED = 20  # drafts named in a preview banner; the rest are counted


def claims_page(ctx: Context) -> Page:
    return Page(urls.CLAIMS, "Claims").show("claims.md", ctx=ctx)


# ---------------------------------------------------------------- since the survey


def _new_paper_rows(ctx: Context) -> list[dict]:
    frame = new_papers(ctx.papers, ctx.root, ctx.baseline)
    return [
        {"key": key, "added": added.date().isoformat(), "round": rnd}
        for key, added, rnd in zip(frame.index, frame["added"], frame["round"], strict=True)
    ]


def changed_crosses(ctx: Context) -> list[tuple[str, str, list[dict]]]:
    """(cross-tab slug, title, cells) of every cross-tab with a cell that moved."""
    crosses = all_crosses()
    moved = moved_cells(
        ctx.papers, ctx.root, ctx.baseline, [(c.rows, c.cols, c.strict) for c in crosses]
    )
    out = []
    for cross in crosses:
        mine = moved[
            (moved["rows"] == cross.rows)
            & (moved["cols"] == cross.cols)
            & (moved["strict"] == cross.strict)
        ]
        cells = [_cell(ctx, cross, row) for row in mine.to_dict("records")]
        if cells:
            out.append((cross.slug, urls.cross_title(ctx, cross), cells))
    return out


def _cell(ctx: Context, cross: Cross, row: dict) -> dict:
    rv, cv = row["row_value"], row["col_value"]
    return {
        "label": urls.cell_label(ctx, cross, rv, cv),
        "href": urls.cell(cross, rv, cv) if (cross, rv, cv) in ctx.cells else None,
        "before": row["survey"],
        "after": row["today"],
        "change": f"{row['change']:+d}",
        "movers": [k for k in row["papers"] if k in ctx.rows],
    }


# Newest papers listed here; the rest are on What's new (every record by its day).
NEW_LISTED = 100


def since_page(ctx: Context) -> Page:
    survey_papers, survey_exclusions = ctx.survey
    page = Page(urls.SINCE, "Since the survey")
    return page.show(
        "since_survey.md",
        ctx=ctx,
        counts={
            "baseline-papers": len(survey_papers),
            "baseline-exclusions": len(survey_exclusions),
            "current-papers": len(ctx.papers),
            "current-exclusions": len(ctx.exclusions),
        },
        new=(new := _new_paper_rows(ctx))[:NEW_LISTED],
        more=len(new) - NEW_LISTED,
        crosses=changed_crosses(ctx),
        has_claims=ctx.claim_views is not None,
        claims=[v for v in ctx.claim_views or [] if v.moved],
    )


# ---------------------------------------------------------------- on every page


def with_view_notes(ctx: Context, page: Page) -> Page:
    """The page with the date its pool covers at the end and, in a preview build, the
    drafts left out at the top."""
    data = {"ctx": ctx, "page": page}
    if ctx.preview:
        drafts = ctx.drafts.to_dict("records")
        banner = render("preview.md", drafts=drafts[:DRAFTS_LISTED], total=len(drafts), **data)
        page.body.insert(0, banner.strip())
    page.body.append(render("pool_note.md", **data).strip())
    return page
