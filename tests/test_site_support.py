"""Shared helpers for the site tests: the hostile site's records, HTML parsing, a server
(the real site, built once per session, is the ``real_site`` fixture of ``tests/conftest.py``).

This module holds no tests; the site test modules import from it.
"""

from __future__ import annotations

import datetime as dt
import functools
import html
import http.server
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from html.parser import HTMLParser
from pathlib import Path

import yaml

from masrl_kb.kb.record_checks import validate
from masrl_kb.kb.synthetic import dump_record, write_synthetic_root
from masrl_kb.site import build_site

SCRIPT = "<script>alert(1)</script>"
IMG = "<img src=x onerror=alert(1)>"
MARKDOWN = "*emph* [click](javascript:alert(1)) `code` # not a heading"
BREAKOUT = "</title><script>alert(2)</script>"
KEY = "synthetic-00000"  # the hostile record


def build_hostile_site(tmp_path_factory) -> Path:
    """A site from a synthetic root whose first records carry HTML and Markdown payloads
    (built once a session by the ``hostile_site`` fixture of ``tests/conftest.py``)."""
    root = write_synthetic_root(tmp_path_factory.mktemp("hostile") / "kb", papers=4, exclusions=2)
    _rewrite(
        root / "papers" / f"{KEY}.yaml",
        {
            "title": f"{BREAKOUT} {SCRIPT} {MARKDOWN}",
            "authors": [f"Evil, {IMG}", "Doe, Jane"],
            "summary": f"{IMG} {SCRIPT} {MARKDOWN}",
            "notes": f"{SCRIPT} <a href='javascript:alert(3)'>x</a>",
            "venue": IMG,
            "affiliation": SCRIPT,
            "decisions": [
                {
                    "id": "O1",
                    "learned": True,
                    "why": f"{SCRIPT} {IMG}",
                    "mechanism": "explicit",
                    "evidence": {
                        "source": "code",
                        "where": f"{SCRIPT} {MARKDOWN}",
                        "url": 'https://example.org/a?x="><script>alert(4)</script>',
                    },
                }
            ],
            "credit_strict": True,
            "credit_mechanism": "shaping",
            "credit_evidence": {
                "source": "paper",
                "where": IMG,
                "url": "https://example.org/credit",
                "note": f"{SCRIPT} {MARKDOWN}",
            },
            "artifacts": {
                "code": "https://example.org/code",
                "weights": {"none": dt.date(2026, 11, 30)},
                "data": {"none": dt.date(2026, 11, 30)},
                "traces": {"none": dt.date(2026, 11, 30)},
                "license": SCRIPT,
                "source": "https://example.org/release",
            },
        },
    )
    _rewrite(
        root / "exclusions" / "E00001.yaml",
        {"title": SCRIPT, "note": IMG, "identifier": f'"{SCRIPT}'},
    )
    assert validate(root).ok
    site = tmp_path_factory.mktemp("hostile-site") / "site"
    assert build_site(root, site_dir=site) == 0
    return site


def _rewrite(path: Path, fields: dict) -> None:
    record = yaml.safe_load(path.read_text())
    record.update(fields)
    path.write_text(dump_record(record))


class Element:
    """A start tag with its attributes, the element it sits in and the text inside it.

    An attribute written without a value has the value "" (as in the DOM): a
    minified page writes ``data-x=""`` as ``data-x``.
    """

    def __init__(self, tag: str, attrs: dict[str, str], parent: Element | None) -> None:
        self.tag = tag
        self.attrs = attrs
        self.parent = parent
        self.chunks: list[str] = []  # the text inside, joined once on first read

    @functools.cached_property
    def text(self) -> str:
        return "".join(self.chunks)

    def get(self, name: str) -> str | None:
        return self.attrs.get(name)

    def classes(self) -> list[str]:
        return (self.get("class") or "").split()

    def within(self, other: Element) -> bool:
        """Whether this element sits inside ``other`` (at any depth)."""
        parent = self.parent
        while parent is not None and parent is not other:
            parent = parent.parent
        return parent is other


class _Collector(HTMLParser):
    VOID = {
        "area",
        "base",
        "br",
        "col",
        "embed",
        "hr",
        "img",
        "input",
        "link",
        "meta",
        "source",
        "track",
        "wbr",
    }

    RCDATA = ("title", "textarea")

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[Element] = []
        self.open: list[Element] = []

    def handle_starttag(self, tag, attrs) -> None:
        parent = self.open[-1] if self.open else None
        element = Element(tag, {k: v or "" for k, v in attrs}, parent)
        self.elements.append(element)
        if tag not in self.VOID:
            self.open.append(element)
        # As in a browser, a page's title and a textarea hold text up to their own end
        # tag (RCDATA: "<" is text there, entities still decoded); an SVG title does not.
        if tag in self.RCDATA and not any(e.tag == "svg" for e in self.open):
            self.set_cdata_mode(tag)

    def handle_endtag(self, tag) -> None:
        for i in range(len(self.open) - 1, -1, -1):
            if self.open[i].tag == tag:
                del self.open[i:]
                break

    def handle_data(self, data) -> None:
        if self.cdata_elem in self.RCDATA:
            data = html.unescape(data)
        for element in self.open:
            element.chunks.append(data)


def parse(path: Path) -> list[Element]:
    """Every element of an HTML file, in document order. A file is parsed once while it is
    unchanged (the shared sites are read by many tests): read the list, never change it."""
    stat = path.stat()
    return list(_parsed(path, stat.st_mtime_ns, stat.st_size))


@functools.lru_cache(maxsize=1024)
def _parsed(path: Path, mtime_ns: int, size: int) -> tuple[Element, ...]:
    collector = _Collector()
    collector.feed(path.read_text(encoding="utf-8"))
    return tuple(collector.elements)


def page(site: Path, url: str) -> Path:
    """The file behind a site URL (``papers/x/`` -> ``papers/x/index.html``)."""
    path = site / url
    return path / "index.html" if url.endswith("/") or not url else path


def with_attr(elements: list[Element], name: str, value: str | None = None) -> list[Element]:
    return [e for e in elements if name in e.attrs and (value is None or e.get(name) == value)]


@contextmanager
def serve(site: Path) -> Iterator[str]:
    """Serve a built site on 127.0.0.1 (a free port) for the length of the block."""

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

    handler = functools.partial(Quiet, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/"
    finally:
        server.shutdown()
        server.server_close()


def cell_keys(site: Path, target: str) -> list[str]:
    """The papers a cell link lists: a cell page's own list, or for a link to a
    reading (``#strict``, ``#learned``) that section's list."""
    path, _, reading = target.partition("#")
    elements = parse(page(site, path))
    lists = [
        e
        for e in with_attr(elements, "data-kb-list", reading or "cell")
        if e.tag == "ul" and "kb-items" in e.classes()
    ]
    if not lists:
        return []
    return [e.get("data-key") or "" for e in elements if e.tag == "li" and e.parent is lists[0]]


def hrefs(elements: list[Element], within: Element | None = None) -> set[str]:
    """The hrefs of the links among ``elements`` (only those inside ``within`` if given)."""
    return {
        e.get("href") or ""
        for e in elements
        if e.tag == "a" and "href" in e.attrs and (within is None or e.within(within))
    }
