"""MkDocs hooks (``hooks:`` in mkdocs.yml): the generated pages join the build in memory.

:func:`on_files` renders every page from the records and hands MkDocs the text
directly (no temporary files); :func:`on_post_page` drops the indentation the
theme's templates leave in every page, which is an eighth of a page's bytes.

Templates mark the HTML they finish themselves (``m.html_block``: a paper
page, a list of papers, a large table). Markdown would only parse that HTML
again to pass it through unchanged, which was the largest part of a build, so
:func:`on_page_markdown` holds each marked region back and
:func:`on_page_content` puts it in place. Regions marked ``nosearch`` are left
out of what the search plugin reads, and restored before the page is themed.

The theme also inlines every icon's SVG in every page, a third of a paper
page's chrome: :func:`on_post_page` swaps each for an empty ``<svg>`` whose
class draws the icon as a CSS mask from ``assets/kb-icons.css``, written once
per build. :func:`on_post_build` removes what the theme ships but no reader
loads: source maps, and the search tokenisers of languages the index does not
use.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from urllib.parse import quote

from jinja2 import Environment
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

from masrl_kb.kb.paths import ENV_ROOT
from masrl_kb.site.build import ENV_PREVIEW
from masrl_kb.site.context import load_context
from masrl_kb.site.pages import edit_path, render_files
from masrl_kb.site.templates import template_cache

# Whitespace is meaningful inside these; everywhere else a newline plus indentation
# renders exactly like a newline.
_VERBATIM = re.compile(r"(<(pre|textarea)\b.*?</\2>)", re.S | re.I)
_INDENT = re.compile(r"\n\s+")
# A region a template marked as finished HTML (see macros.html: html_block).
_REGION = re.compile(r"^<!--kb:html( nosearch)?-->\n(.*?)\n<!--kb:end-->$", re.S | re.M)
_HELD = re.compile(r"<!--kb:held:(\d+)-->")
# A Material Design icon as the theme inlines it (one path; Font Awesome icons carry
# a licence comment and are left as they are).
_ICON = re.compile(
    r'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><path d="([^"<>]*)"/></svg>'
)
ICON_CSS = "assets/kb-icons.css"
SVG_NS = "http://www.w3.org/2000/svg"

# Per page (by source path), between the events of one build.
_held: dict[str, list[tuple[str, bool]]] = {}
_themed: dict[str, str] = {}
# Icon class -> path data, for the stylesheet written after the pages.
_icons: dict[str, str] = {}


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


def compact(html: str) -> str:
    """HTML without line indentation (``pre`` and ``textarea`` kept verbatim)."""
    # split() gives text, block, tag name, text, ...: only the text parts change.
    parts = _VERBATIM.split(html)
    parts[0::3] = [_INDENT.sub("\n", text) for text in parts[0::3]]
    del parts[2::3]
    return "".join(parts)


def icon_class(path_data: str) -> str:
    """A class name for one icon, stable across builds."""
    return "kb-i-" + hashlib.sha1(path_data.encode()).hexdigest()[:8]


def masked_icons(html: str, icons: dict[str, str]) -> str:
    """The page with each inline icon replaced by an empty ``<svg>`` of its class;
    ``icons`` gains each class's path data."""

    def swap(match: re.Match[str]) -> str:
        name = icon_class(match.group(1))
        icons[name] = match.group(1)
        return f'<svg viewBox="0 0 24 24" class="{name}"></svg>'

    return _ICON.sub(swap, html)


def icon_stylesheet(icons: dict[str, str]) -> str:
    """CSS drawing each icon class as a mask in the text colour (as the theme's own
    CSS icons are drawn)."""
    rules = []
    for name, path_data in sorted(icons.items()):
        svg = f'<svg xmlns="{SVG_NS}" viewBox="0 0 24 24"><path d="{path_data}"/></svg>'
        url = f'url("data:image/svg+xml;charset=utf-8,{quote(svg, safe=" =/:,.-")}")'
        rules.append(
            f".{name}{{-webkit-mask:{url} center/contain no-repeat;"
            f"mask:{url} center/contain no-repeat;background-color:currentcolor}}"
        )
    return "\n".join(rules) + "\n"


# The theme's search dialog has no accessible name (axe: aria-dialog-name); name it.
_SEARCH_DIALOG = '<div class="md-search" data-md-component="search" role="dialog">'
_NAMED_DIALOG = _SEARCH_DIALOG.replace('role="dialog"', 'role="dialog" aria-label="Search"')


def theme_fixes(html: str) -> str:
    """What the theme's markup gets wrong for assistive technology, put right."""
    return html.replace(_SEARCH_DIALOG, _NAMED_DIALOG, 1)


def on_post_page(output: str, page: object, config: MkDocsConfig) -> str:
    return theme_fixes(masked_icons(compact(output), _icons))


def on_post_template(output: str, template_name: str, config: MkDocsConfig) -> str:
    """The theme's own pages (404.html) get the same icons; sitemap.xml has none."""
    if not template_name.endswith(".html"):
        return output
    return theme_fixes(masked_icons(output, _icons))


def hold_regions(markdown: str) -> tuple[str, list[tuple[str, bool]]]:
    """The Markdown with each marked HTML region replaced by a placeholder, and the
    regions as ``(html, searchable)``."""
    regions: list[tuple[str, bool]] = []

    def hold(match: re.Match[str]) -> str:
        regions.append((match.group(2), not match.group(1)))
        return f"\n<!--kb:held:{len(regions) - 1}-->\n"

    return _REGION.sub(hold, markdown), regions


def put_back(html: str, regions: list[tuple[str, bool]], search_only: bool = False) -> str:
    """The converted page with each placeholder replaced by its region (only the
    searchable ones when ``search_only``)."""

    def region(match: re.Match[str]) -> str:
        text, searchable = regions[int(match.group(1))]
        return text if searchable or not search_only else ""

    return _HELD.sub(region, html)


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    text, regions = hold_regions(markdown)
    if regions:
        _held[page.file.src_uri] = regions
    return text


def on_page_content(html: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    regions = _held.pop(page.file.src_uri, None)
    if not regions:
        return html
    full = put_back(html, regions)
    searchable = put_back(html, regions, search_only=True)
    if searchable != full:
        _themed[page.file.src_uri] = full
    return searchable


@event_priority(-100)  # after the search plugin has read the page
def on_page_context(context: dict, page: Page, config: MkDocsConfig, nav: object) -> dict:
    full = _themed.pop(page.file.src_uri, None)
    if full is not None:
        page.content = full
    return context


def lunr_files(languages: list[str]) -> set[str]:
    """The files under ``assets/javascripts/lunr`` the theme's search worker loads
    for an index in ``languages`` (the worker's own rule)."""
    files = set()
    for lang in languages:
        if lang == "ja":
            files.add("tinyseg.js")
        if lang in ("hi", "th"):
            files.add("wordcut.js")
        if lang != "en":
            files.add(f"min/lunr.{lang}.min.js")
    if len(languages) > 1:
        files.add("min/lunr.multi.min.js")
    return files | {"min/lunr.stemmer.support.min.js"} if files else set()


def unused_assets(site: Path, languages: list[str]) -> list[Path]:
    """Theme files in a built site that no page or worker loads."""
    assets = site / "assets"
    lunr = assets / "javascripts" / "lunr"
    keep = {lunr / name for name in lunr_files(languages)}
    maps = [p for p in assets.rglob("*.map") if p.is_file()]
    tokenisers = [p for p in lunr.rglob("*") if p.is_file() and p not in keep]
    return sorted(maps + tokenisers)


@event_priority(-100)  # after the search plugin has written its index
def on_post_build(config: MkDocsConfig) -> None:
    search = config.plugins.get("material/search") or config.plugins.get("search")
    languages = list(search.config.lang) if search else ["en"]
    site = Path(config.site_dir)
    (site / ICON_CSS).write_text(icon_stylesheet(_icons), encoding="utf-8")
    for path in unused_assets(site, languages):
        path.unlink()
    for folder in sorted((site / "assets").rglob("*"), reverse=True):  # deepest first
        if folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()
