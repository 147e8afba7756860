"""Every generated file of the site, as ``{docs path: text}``.

:func:`site_files` is pure (no MkDocs needed), so tests can look at the pages
without building; :mod:`masrl_kb.site.mkdocs_hooks` hands them to MkDocs.

Adding a page
-------------
1. Write a function ``my_page(ctx: Context) -> Page`` in a module of this
   package: compute the data from ``ctx`` (records, cross-tabs, claims) with the
   query API, then ``return Page(url, title, meta=...).show("my_page.md", ctx=ctx,
   ...)``. Give the URL a constant or function in :mod:`masrl_kb.site.urls`.
2. Write ``templates/my_page.md``: Markdown headings plus HTML blocks, laid out
   with the link functions (``link``, ``paper_link``, ``tag``: see
   :mod:`masrl_kb.site.templates`) and the shared macros (``{% import "macros.html"
   as m with context %}``: ``m.paper_list``, ``m.heat_table``, ``m.scroll``...).
   Jinja escapes every value; never build HTML in Python. Wrap large finished HTML (a
   list that grows with the pool) in ``{% call m.html_block() %}`` at the top
   level: it goes into Python-Markdown's own stash (:mod:`masrl_kb.site.md_stash`;
   ``search=false`` also keeps it out of the search index).
3. Yield it from :func:`all_pages` and, for a section page, list its Markdown path
   under ``nav`` in ``mkdocs.yml``. Front matter ``hide: [navigation, toc]``
   widens a page; ``search: {exclude: true}`` keeps tables out of the search index.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from masrl_kb.site import urls
from masrl_kb.site.about import (
    cite_page,
    contribute_page,
    download_files,
    downloads_page,
    traces_page,
)
from masrl_kb.site.author_pages import authors_page
from masrl_kb.site.components import Page
from masrl_kb.site.context import Context, load_context
from masrl_kb.site.crosstabs import cell_pages, crosstab_pages
from masrl_kb.site.exclusion_pages import exclusions_page
from masrl_kb.site.feeds import atom_feed, new_page
from masrl_kb.site.gaps import gaps_page
from masrl_kb.site.home import home_page
from masrl_kb.site.judgement_pages import agreement_page, benchmark_pages, evaluations_page
from masrl_kb.site.paper_pages import paper_pages
from masrl_kb.site.protocol_pages import protocol_page
from masrl_kb.site.round_pages import rounds_page
from masrl_kb.site.taxonomy_pages import taxonomy_pages
from masrl_kb.site.view_pages import claims_page, since_page, with_view_notes


def all_pages(ctx: Context, downloads: dict[str, str]) -> Iterator[Page]:
    """Every Markdown page, section pages first."""
    yield home_page(ctx)
    yield gaps_page(ctx)
    yield claims_page(ctx)
    yield from crosstab_pages(ctx)
    yield from taxonomy_pages(ctx)
    yield exclusions_page(ctx)
    yield protocol_page(ctx)
    yield rounds_page(ctx)
    yield since_page(ctx)
    yield new_page(ctx)
    yield downloads_page(ctx, downloads)
    yield contribute_page(ctx)
    yield cite_page(ctx)
    yield traces_page(ctx)
    yield agreement_page(ctx)
    yield authors_page(ctx)
    yield evaluations_page(ctx)
    yield from benchmark_pages(ctx)
    yield from paper_pages(ctx)
    yield from cell_pages(ctx)


def site_files(
    root: str | os.PathLike[str] | None = None, site_url: str = "", repo_url: str = ""
) -> dict[str, str]:
    """Load the records once and render every generated file."""
    ctx = load_context(root, site_url)
    ctx.repo_url = repo_url
    return render_files(ctx)


def render_files(ctx: Context) -> dict[str, str]:
    """Every generated file of one loaded context."""
    downloads = download_files(ctx)
    pages = (with_view_notes(ctx, p) for p in all_pages(ctx, downloads))
    files = {urls.source_path(p.url): p.render() for p in pages}
    files.update(downloads)
    files[urls.FEED] = atom_feed(ctx)
    return files


def edit_path(path: str) -> str | None:
    """The repository file a generated page is edited through (paper pages: the record)."""
    parts = path.split("/")
    if len(parts) == 3 and parts[0] == "papers" and parts[2] == "index.md":
        # relative to the docs folder, which the edit URI points into
        return f"../papers/{parts[1]}.yaml"
    return None
