"""MkDocs hooks (``hooks:`` in mkdocs.yml): the events that join the generated pages
to the build. Each concern lives in its own module; this one only wires them.

- :func:`on_files`: every page rendered from the records, handed over in memory;
- :func:`on_post_page`: the finished page (:func:`finish`): held-out regions put
  back (:mod:`~masrl_kb.site.md_stash`), icons as classes
  (:mod:`~masrl_kb.site.icons`), minified by ``minify-html``;
- :func:`on_post_build`: the icon stylesheet written, the search documents moved out
  of the index every page loads and masrl-kb's search worker written
  (:mod:`~masrl_kb.site.search`), unused theme files removed
  (:mod:`~masrl_kb.site.theme_assets`).
"""

from __future__ import annotations

import os
from pathlib import Path

import minify_html
from jinja2 import Environment
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files

from masrl_kb.kb.paths import ENV_ROOT
from masrl_kb.site.build import ENV_PREVIEW
from masrl_kb.site.context import load_context
from masrl_kb.site.icons import ICON_CSS, icon_stylesheet, masked_icons
from masrl_kb.site.md_stash import restore_asides
from masrl_kb.site.pages import edit_path, render_files
from masrl_kb.site.search import spaced_for_search, split_index, use_worker
from masrl_kb.site.templates import template_cache
from masrl_kb.site.theme_assets import prune

# Icon class -> path data, for the stylesheet written after the pages (one build).
_icons: dict[str, str] = {}
# The theme's search dialog has no accessible name (axe: aria-dialog-name); name it.
_SEARCH_DIALOG = '<div class="md-search" data-md-component="search" role="dialog">'
_NAMED_DIALOG = _SEARCH_DIALOG.replace('role="dialog"', 'role="dialog" aria-label="Search"')


def on_env(env: Environment, config: MkDocsConfig, files: Files) -> Environment:
    """The theme's compiled templates are kept between builds like the pages' own."""
    env.bytecode_cache = template_cache()
    return env


def on_files(files: Files, config: MkDocsConfig) -> Files:
    """Add every generated page and download, read from the data root in ``MASRL_KB_ROOT``."""
    drafts = "exclude" if os.environ.get(ENV_PREVIEW) == "1" else "error"
    ctx = load_context(os.environ.get(ENV_ROOT) or None, config.site_url or "", drafts)
    ctx.repo_url = config.repo_url or ""
    if len(ctx.papers):
        # Reproducible builds: MkDocs dates the sitemap from SOURCE_DATE_EPOCH when set,
        # so the only date in the output is the newest record's.
        newest = ctx.papers["added"].max().tz_localize("UTC")
        os.environ.setdefault("SOURCE_DATE_EPOCH", str(int(newest.timestamp())))
    for path, text in render_files(ctx).items():
        generated = File.generated(config, path, content=text)
        generated.edit_uri = edit_path(path)  # None: generated, no "edit this page"
        files.append(generated)
    return files


@event_priority(50)  # before the search plugin indexes the page
def on_page_content(html: str, page: object, config: MkDocsConfig, files: Files) -> str:
    return spaced_for_search(html)


def finish(html: str, icons: dict[str, str]) -> str:
    """A themed page as shipped: held-out regions back, icons as classes, the search
    dialog named and pointed at masrl-kb's search worker, minified (``pre`` and
    ``textarea`` keep their whitespace)."""
    html = masked_icons(restore_asides(html), icons).replace(_SEARCH_DIALOG, _NAMED_DIALOG, 1)
    html = use_worker(html)
    return minify_html.minify(html, keep_closing_tags=True, keep_html_and_head_opening_tags=True)


def on_post_page(output: str, page: object, config: MkDocsConfig) -> str:
    return finish(output, _icons)


def on_post_template(output: str, template_name: str, config: MkDocsConfig) -> str:
    """The theme's own pages (404.html) are finished alike; sitemap.xml is left as it is."""
    return finish(output, _icons) if template_name.endswith(".html") else output


@event_priority(-100)  # after the search plugin has written its index
def on_post_build(config: MkDocsConfig) -> None:
    search = config.plugins.get("material/search") or config.plugins.get("search")
    site = Path(config.site_dir)
    (site / ICON_CSS).write_text(icon_stylesheet(_icons), encoding="utf-8")
    split_index(site)
    prune(site, list(search.config.lang) if search else ["en"])
