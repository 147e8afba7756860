"""A Markdown extension: the HTML a template finished (``m.html_block``) goes into
Python-Markdown's own stash rather than being parsed again (once the largest part of a
build). A ``nosearch`` region is held out as a placeholder comment, so the search plugin
never parses it; :func:`restore_asides` puts it back in the finished page. Record text
cannot forge a marker: templates escape it (``&lt;!--``).
"""

from __future__ import annotations

import itertools
import re

from markdown import Extension, Markdown
from markdown.preprocessors import Preprocessor

REGION = re.compile(r"^<!--kb:html( nosearch)?-->\n(.*?)\n<!--kb:end-->$", re.S | re.M)
ASIDE = re.compile(r"<!--kb:aside:(\d+)-->")
# Regions held out of search, from conversion until the page is finished (one build).
_asides: dict[int, str] = {}
_numbers = itertools.count()


class _StashRegions(Preprocessor):
    def run(self, lines: list[str]) -> list[str]:
        def stash(match: re.Match[str]) -> str:
            html = match.group(2)
            if match.group(1):
                number = next(_numbers)
                _asides[number], html = html, f"<!--kb:aside:{number}-->"
            return f"\n\n{self.md.htmlStash.store(html)}\n\n"

        return REGION.sub(stash, "\n".join(lines)).split("\n")


class StashExtension(Extension):
    def extendMarkdown(self, md: Markdown) -> None:  # noqa: N802 - Markdown's API
        # After whitespace normalisation (30, which would strip the stash's
        # placeholder characters), before Markdown's own raw HTML block stash (20).
        md.preprocessors.register(_StashRegions(md), "kb_stash", 25)


def makeExtension(**kwargs: object) -> StashExtension:  # noqa: N802 - Markdown's API
    return StashExtension(**kwargs)


def restore_asides(html: str) -> str:
    """The page with each region held out of search back in its place."""
    return ASIDE.sub(lambda m: _asides.pop(int(m.group(1))), html)
