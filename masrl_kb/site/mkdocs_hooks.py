"""MkDocs hooks (``hooks:`` in mkdocs.yml): the generated pages join the build in memory.

:func:`on_files` renders every page from the records and hands MkDocs the text
directly (no temporary files); :func:`on_post_page` drops the indentation the
theme's templates leave in every page, which is an eighth of a page's bytes.
"""

from __future__ import annotations

import os
import re

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files

from masrl_kb.kb.paths import ENV_ROOT
from masrl_kb.site.context import load_context
from masrl_kb.site.pages import edit_path, render_files

# Whitespace is meaningful inside these; everywhere else a newline plus indentation
# renders exactly like a newline.
_INDENT = re.compile(r"(<(pre|textarea)\b.*?</\2>)|\n\s+", re.S | re.I)


def on_files(files: Files, config: MkDocsConfig) -> Files:
    """Add every generated page and download, read from the data root in ``MASRL_KB_ROOT``."""
    ctx = load_context(os.environ.get(ENV_ROOT) or None, config.site_url or "")
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
    return _INDENT.sub(lambda m: m.group(1) or "\n", html)


def on_post_page(output: str, page: object, config: MkDocsConfig) -> str:
    return compact(output)
