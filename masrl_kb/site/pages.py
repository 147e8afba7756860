"""Every generated file of the site, as ``{docs path: text}`` (no MkDocs needed).

To add a page: ``my_page(ctx)`` computes the data with the query API and returns
``Page(url, title).show("my_page.md", ctx=ctx, ...)``; ``templates/my_page.md`` lays it out
with the link functions of :mod:`masrl_kb.site.templates` and the macros of ``macros.html``
(never build HTML in Python). Yield it from :func:`all_pages`; list a section page under
``nav`` in ``mkdocs.yml``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from masrl_kb.site import (
    about,
    crosstabs,
    judgement_pages,
    lists,
    screening_pages,
    urls,
    view_pages,
)
from masrl_kb.site.author_pages import authors_page
from masrl_kb.site.components import Page
from masrl_kb.site.context import Context, load_context
from masrl_kb.site.gaps import gaps_page, home_page
from masrl_kb.site.paper_pages import paper_pages
from masrl_kb.site.taxonomy_pages import taxonomy_pages


def all_pages(ctx: Context, downloads: dict[str, str]) -> Iterator[Page]:
    """Every Markdown page, section pages first."""
    yield home_page(ctx)
    yield gaps_page(ctx)
    yield Page(urls.CLAIMS, "Claims", meta={"hide": ["navigation", "toc"]}).show(
        "claims.md", ctx=ctx
    )
    yield from crosstabs.crosstab_pages(ctx)
    yield from taxonomy_pages(ctx)
    yield screening_pages.exclusions_page(ctx)
    # The survey's sources, query families, inclusion rules and exclusion codes.
    yield Page(urls.PROTOCOL, "Search and screening protocol").show("protocol.md", ctx=ctx)
    yield screening_pages.rounds_page(ctx)
    yield view_pages.since_page(ctx)
    yield screening_pages.new_page(ctx)
    yield about.downloads_page(ctx, downloads)
    yield about.contribute_page(ctx)
    yield about.cite_page(ctx)
    yield about.traces_page(ctx)
    yield judgement_pages.agreement_page(ctx)
    yield authors_page(ctx)
    yield judgement_pages.evaluations_page(ctx)
    yield from judgement_pages.benchmark_pages(ctx)
    yield from paper_pages(ctx)
    yield from crosstabs.cell_pages(ctx)


def site_files(
    root: str | os.PathLike[str] | None = None, site_url: str = "", repo_url: str = ""
) -> dict[str, str]:
    """Load the records once and render every generated file."""
    ctx = load_context(root, site_url)
    ctx.repo_url = repo_url
    return render_files(ctx)


def render_files(ctx: Context) -> dict[str, str]:
    """Every generated file of one loaded context."""
    downloads = about.download_files(ctx)
    pages = (view_pages.with_view_notes(ctx, p) for p in all_pages(ctx, downloads))
    files = {f"{p.url}index.md": p.render() for p in pages}  # MkDocs' source of the URL
    files.update(downloads)
    files.update(judgement_pages.benchmark_csvs(ctx))
    files.update(lists.list_files(ctx))  # the lists the pages just linked, one CSV each
    files[urls.FEED] = screening_pages.atom_feed(ctx)
    return files


def render_page(ctx: Context, name: str) -> str:
    """One generated page of :func:`render_files` (``name``: its docs path, such as
    ``rounds/index.md``), the same text, rendering only the pages listed before it in
    :func:`all_pages`: what a test of one page needs. ``KeyError`` for no such page."""
    return render_pages(ctx, [name])[name]


def render_pages(ctx: Context, names: list[str]) -> dict[str, str]:
    """:func:`render_page` of several pages in one walk of :func:`all_pages`, which stops
    at the last of them."""
    wanted = {name.removesuffix("index.md"): name for name in names}
    downloads = about.download_files(ctx) if urls.DOWNLOADS in wanted else {}
    found: dict[str, str] = {}
    for page in all_pages(ctx, downloads):
        if page.url in wanted:
            found[wanted[page.url]] = view_pages.with_view_notes(ctx, page).render()
            if len(found) == len(wanted):
                return found
    raise KeyError(sorted(set(names) - set(found))[0])


def edit_path(path: str) -> str | None:
    """The repository file a generated page is edited through (paper pages: the record)."""
    parts = path.split("/")
    if len(parts) == 3 and parts[0] == "papers" and parts[2] == "index.md":
        # relative to the docs folder, which the edit URI points into
        return f"../papers/{parts[1]}.yaml"
    return None
