"""URL and text helpers shared by the templates. ``markupsafe.escape`` is the one HTML
escaper (templates autoescape record text, written inside HTML elements); :func:`md_text`
also backslashes Markdown for headings; :func:`safe_url` lets only http(s) URLs be hrefs.
"""

from __future__ import annotations

import posixpath
import re
from functools import lru_cache

from markupsafe import escape

from masrl_kb.kb.rules import is_http_url

# Characters Python-Markdown treats as syntax; escaped in the few places
# (headings) where text is written as Markdown rather than inside HTML.
_MD_SPECIALS = re.compile(r"([\\`*_{}\[\]()+\-.!])")
_SLUG_UNSAFE = re.compile(r"[^A-Za-z0-9_.]+")
_SUFFIX = re.compile(r"([^?#]*)([?#]?)(.*)", re.S)  # path, then a query or a fragment


def safe_url(url: object) -> str | None:
    """The URL if it is an absolute http(s) URL with a host, else None."""
    if not isinstance(url, str):
        return None
    text = url.strip()
    if any(ord(c) < 0x21 for c in text):  # control characters or spaces hide schemes
        return None
    return text if is_http_url(text) else None


def md_text(text: object) -> str:
    """Text for a Markdown heading: HTML-escaped, Markdown syntax backslashed."""
    # Quotes are plain text outside attributes, so escape's entities for them go back.
    html = str(escape(text)).replace("&#39;", "'").replace("&#34;", '"')
    return _MD_SPECIALS.sub(r"\\\1", html).replace("#", "&#35;")  # a bare # ends an ATX heading


def slug(value: object) -> str:
    """A value id as a URL path segment."""
    return _SLUG_UNSAFE.sub("-", str(value)).strip("-") or "x"


def rel(from_url: str, to_url: str) -> str:
    """A relative href between site URLs (``papers/x/``, ``""`` for home, or a file such as
    ``downloads/papers.csv``), keeping the target's ``?query`` or ``#fragment``, so the site
    works under any base path."""
    path, sep, rest = _SUFFIX.match(to_url).groups()  # type: ignore[union-attr]
    base = from_url if from_url.endswith("/") or not from_url else posixpath.dirname(from_url)
    return _rel_path(base, path) + sep + rest


@lru_cache(maxsize=65536)
def _rel_path(base: str, path: str) -> str:
    """``posixpath.relpath`` for clean site paths, by segment arithmetic (hot: every link)."""
    here = [p for p in base.split("/") if p]
    there = [p for p in path.split("/") if p]
    common = 0
    for a, b in zip(here, there, strict=False):
        if a != b:
            break
        common += 1
    rel_path = "/".join([".."] * (len(here) - common) + there[common:]) or "."
    if path.endswith("/") or not path:
        rel_path = "./" if rel_path == "." else rel_path + "/"
    return rel_path
