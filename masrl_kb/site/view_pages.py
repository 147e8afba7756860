"""The survey's view beside today's (:mod:`masrl_kb.query.views`): the Since the survey page,
the note on every page saying what date the pool covers and a preview build's banner."""

from __future__ import annotations

from masrl_kb.query.views import moved_cells, papers_added_since
from masrl_kb.site import urls
from masrl_kb.site.components import Page
from masrl_kb.site.context import ALL_CROSSES, Context, Cross
from masrl_kb.site.templates import render

DRAFTS_LISTED = 20  # drafts named in a preview banner; the rest are counted


# ---------------------------------------------------------------- since the survey


# Newest papers listed per table here; the rest are on What's new (every record by its day).
NEW_LISTED = 100
# The page's tables, in order: posted after the cut-off, before it (found late), not known.
POSTED_SIDES = ("after", "before", None)


def since_page(ctx: Context) -> Page:
    page = Page(urls.SINCE, "Since the survey")
    new = papers_added_since(ctx.papers, ctx.rounds, ctx.protocol.baseline)
    # Every cross-tab with a cell that moved, and its moved cells (``moved_cells`` rows).
    specs = [(c.rows, c.cols, c.strict) for c in ALL_CROSSES]
    moved = moved_cells(ctx.papers, ctx.root, ctx.protocol.baseline, specs)
    by_cross = dict(list(moved.groupby(["rows", "cols", "strict"], sort=False)))
    rows = list(zip(new.index, new.to_dict("records"), strict=True))
    return page.show(
        "since_survey.md",
        ctx=ctx,
        new=rows,
        by_side={side: [r for r in rows if r[1]["posted"] == side] for side in POSTED_SIDES},
        listed=NEW_LISTED,
        crosses=[
            (Cross(*spec), by_cross[spec].to_dict("records")) for spec in specs if spec in by_cross
        ],
    )


# ---------------------------------------------------------------- on every page


def with_view_notes(ctx: Context, page: Page) -> Page:
    """The page with the date its pool covers at the end (unless it says so itself) and,
    in a preview build, the drafts left out at the top."""
    data = {"ctx": ctx, "page": page}
    if ctx.preview:
        drafts = ctx.drafts.to_dict("records")
        banner = render("preview.md", drafts=drafts[:DRAFTS_LISTED], total=len(drafts), **data)
        page.body.insert(0, banner.strip())
    # The coverage line once per page: only pages that do not state it themselves get it.
    if not any("data-kb-coverage" in block for block in page.body):
        page.body.append(render("pool_note.md", **data).strip())
    return page
