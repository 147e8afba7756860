"""The page object every page module fills: a URL, a title, front matter and a body of
blocks (Markdown or HTML), each rendered by :meth:`Page.show` from a template."""

from __future__ import annotations

from dataclasses import dataclass, field

from masrl_kb.site.html import front_matter, rel
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
        return front_matter(self.title, **self.meta) + "\n\n".join(self.body) + "\n"
