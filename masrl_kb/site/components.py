"""The page object every page module fills: a URL, a title, front matter and a body of
blocks (Markdown or HTML), each rendered by :meth:`Page.show` from a template."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from markupsafe import escape

from masrl_kb.site.html import rel
from masrl_kb.site.templates import render


@dataclass
class Page:
    """One generated Markdown page at a directory URL."""

    url: str
    title: str
    # Markdown or HTML blocks: rendered templates, or trusted repository Markdown as it is.
    body: list[str] = field(default_factory=list)
    meta: dict[str, object] = field(default_factory=dict)

    def show(self, template: str, **data: object) -> Page:
        """Render ``template`` with this page and ``data`` into the next block."""
        self.body.append(render(template, page=self, **data).strip())
        return self

    def href(self, to_url: str) -> str:
        return rel(self.url, to_url)

    def render(self) -> str:
        """YAML front matter, then the blocks; the title is HTML-escaped (themes print it raw)."""
        lines = ["---", f"title: {json.dumps(str(escape(self.title)))}"]
        lines += [f"{key}: {json.dumps(value)}" for key, value in self.meta.items()]
        return "\n".join([*lines, "---", ""]) + "\n\n".join(self.body) + "\n"
