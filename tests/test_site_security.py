"""Free text renders as text, and only http(s) links are ever emitted."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from markupsafe import escape

from masrl_kb.kb.record_checks import validate
from masrl_kb.kb.synthetic import dump_record
from masrl_kb.site import safe_url
from masrl_kb.site.diagrams import Box, diagram
from masrl_kb.site.html import md_text
from masrl_kb.site.templates import render
from tests.test_site_support import (
    BREAKOUT,
    IMG,
    KEY,
    MARKDOWN,
    SCRIPT,
    page,
    parse,
)


@pytest.mark.parametrize(
    "url, expected",
    [
        ("https://arxiv.org/abs/2505.19591", "https://arxiv.org/abs/2505.19591"),
        ("http://example.org/x?a=1&b=2", "http://example.org/x?a=1&b=2"),
        ("  https://example.org/  ", "https://example.org/"),
        ("HTTPS://EXAMPLE.ORG/", "HTTPS://EXAMPLE.ORG/"),
        ("javascript:alert(1)", None),
        ("JavaScript:alert(1)", None),
        ("java\tscript:alert(1)", None),
        ("data:text/html,<script>alert(1)</script>", None),
        ("vbscript:msgbox(1)", None),
        ("//evil.example/x", None),
        ("/relative/path", None),
        ("https:///no-host", None),
        ("https://exa mple.org/", None),
        ("", None),
        (None, None),
        (42, None),
    ],
)
def test_safe_url_lets_only_http_urls_through(url, expected) -> None:
    assert safe_url(url) == expected


def test_escapers_neutralise_markup() -> None:
    assert escape(SCRIPT) == "&lt;script&gt;alert(1)&lt;/script&gt;"
    assert escape('"x"') == "&#34;x&#34;"
    heading = md_text(MARKDOWN)
    assert "\\*emph\\*" in heading and "\\[click\\]" in heading and "&#35;" in heading
    assert md_text("it's #1 &") == "it's &#35;1 &amp;"
    svg = diagram([Box("a", (SCRIPT,), 0, 0)], [], f'"{SCRIPT}')
    assert "<script>" not in svg and "&lt;script&gt;" in svg


def test_templates_escape_by_default() -> None:
    html = render("missing.md", name=SCRIPT)
    assert "<script>" not in html and "&lt;script&gt;" in html


def test_validation_rejects_a_javascript_url(mini_root: Path) -> None:
    path = mini_root / "papers" / f"{KEY}.yaml"
    record = yaml.safe_load(path.read_text())
    record["extra_urls"] = ["javascript:alert(1)"]
    path.write_text(dump_record(record))
    report = validate(mini_root)
    assert not report.ok
    assert any("extra_urls" in p.field for p in report.problems)


def _all_html(site: Path) -> list[tuple[Path, str]]:
    return [(p, p.read_text(encoding="utf-8")) for p in sorted(site.rglob("*.html"))]


def test_payloads_never_reach_the_html_as_markup(hostile_site: Path) -> None:
    """Checked on the parsed page (what a browser builds): the minifier writes ``<``
    bare inside quoted attributes and ``>`` bare in text, which is text either way."""
    for path, _ in _all_html(hostile_site):
        elements = parse(path)
        assert not [e for e in elements if e.tag == "script" and "alert" in e.text], path
        assert not [e for e in elements if e.tag == "img" and e.get("src") == "x"], path
        assert not [e for e in elements for name in e.attrs if name.startswith("on")], path
        for element in elements:
            for value in element.attrs.values():
                assert not value.strip().lower().startswith("javascript:"), path
        # A title breaking out of <title> would leave a script element: none runs alert.
        head = [e for e in elements if e.tag == "title" and e.parent and e.parent.tag == "head"]
        assert len(head) == 1, path


def test_payloads_render_as_text(hostile_site: Path) -> None:
    elements = parse(page(hostile_site, f"papers/{KEY}/"))
    (summary,) = [e for e in elements if e.tag == "p" and "kb-summary" in e.classes()]
    assert f"{IMG} {SCRIPT}" in summary.text
    html = page(hostile_site, f"papers/{KEY}/").read_text()
    assert "&lt;script>alert(1)&lt;/script>" in html and "&lt;img src=x onerror=alert(1)>" in html
    (h1,) = [e for e in elements if e.tag == "h1"]
    assert SCRIPT in h1.text and "*emph*" in h1.text and "[click](javascript:" in h1.text
    assert not [e for e in elements if e.tag in ("em", "img") and "kb" not in str(e.attrs)]
    (title,) = [e for e in elements if e.tag == "title"]
    assert BREAKOUT in title.text  # shown as text in the browser tab, not parsed


def test_every_href_in_the_hostile_site_is_http_or_relative(hostile_site: Path) -> None:
    for path, _ in _all_html(hostile_site):
        for element in parse(path):
            href = element.get("href")
            if href is not None:
                assert not href.lower().startswith(("javascript:", "data:", "vbscript:")), path


def test_relative_links_match_posixpath() -> None:
    import posixpath

    from masrl_kb.site.html import rel

    urls = ["", "papers/", "papers/x/", "cells/a--b/", "taxonomy/decision/", "downloads/papers.csv"]
    targets = [*urls, "papers/?year=2025", "taxonomy/decision/#v-O1", "feed.xml", "#claim-x"]
    for base in urls:
        folder = base if base.endswith("/") or not base else posixpath.dirname(base)
        for target in targets:
            path = target.split("?")[0].split("#")[0]
            expected = posixpath.relpath(path.rstrip("/") or ".", folder.rstrip("/") or ".")
            if path.endswith("/") or not path:
                expected = "./" if expected == "." else expected + "/"
            assert rel(base, target).startswith(expected), (base, target)
