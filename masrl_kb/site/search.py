"""Search that loads when a reader types, and reads researchers' words.

The theme (Material for MkDocs 9) fetches ``search/search_index.json`` on every page
over http(s) (only a ``file://`` page waits until search opens) and hands it to its
search worker; its configuration names no way to defer that. So the build

- leaves in ``search/search_index.json`` only the index's settings (a few hundred
  bytes; the theme's highlighting reads its separator) and moves the documents to
  ``search/search_docs.json`` (:func:`split_index`);
- points every page at masrl-kb's worker (:func:`use_worker`), which imports the
  theme's own worker unchanged, fetches the documents on the first query, and adds
  stems, stop words and phrases (``templates/search_worker.js`` says how).

The theme's ``pipeline: [stemmer]`` is not used: it stems the index, but the theme adds
a trailing wildcard to every query word and lunr does not stem a word with a wildcard,
so "orchestration" would no longer find the indexed stem "orchestr". The worker stems
the query instead and searches each stem as a prefix of the unstemmed index.

The theme's indexer keeps the text of a page's tags and drops the tags, so cells, list
items and lines written with no whitespace between them ran together in the index
("LLMs0 in the survey's pool"); :func:`spaced_for_search` puts a space at those
boundaries before the indexer reads the page (the shipped page is minified after, so it
looks the same).
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

WORKERS = "assets/javascripts/workers"
INDEX = "search/search_index.json"
DOCS = "search/search_docs.json"
_THEME_WORKER = re.compile(r"(assets/javascripts/workers/)(search\.[0-9a-f]+\.min\.js)")
_SOURCE = Path(__file__).parent / "templates" / "search_worker.js"
# Boundaries where a reader sees a break: after a closing block, cell or item, before an
# opening one, and after a line break. ``pre`` is left alone (its whitespace is content).
_BLOCK = r"(?:p|div|li|ul|ol|dt|dd|dl|td|th|tr|thead|tbody|table|details|summary|section|h[1-6])"
_BOUNDARY = re.compile(rf"(</{_BLOCK}>(?=<)|<br\s*/?>)|(?<=>)(?=<{_BLOCK}[\s>])")
_PRE = re.compile(r"(<pre[\s>].*?</pre>)", re.S)


def spaced_for_search(html: str) -> str:
    """``html`` with a space at every block, cell, item and line boundary outside ``pre``."""
    parts = _PRE.split(html)
    return "".join(
        part if i % 2 else _BOUNDARY.sub(lambda m: (m.group(1) or "") + " ", part)
        for i, part in enumerate(parts)
    )


def worker_text(theme_worker: str) -> str:
    """masrl-kb's worker, importing the theme's worker ``theme_worker`` (a file name)."""
    return _SOURCE.read_text(encoding="utf-8").replace("__MATERIAL_WORKER__", theme_worker)


def worker_name(theme_worker: str) -> str:
    """The worker's file name, with a hash of its text (a new text is a new URL)."""
    digest = hashlib.sha256(worker_text(theme_worker).encode()).hexdigest()[:8]
    return f"kb-search.{digest}.js"


def use_worker(html: str) -> str:
    """A page whose configuration names masrl-kb's worker instead of the theme's."""
    return _THEME_WORKER.sub(lambda m: m.group(1) + worker_name(m.group(2)), html, count=1)


def split_index(site: Path) -> None:
    """Move the search documents out of the index the theme loads with every page, and
    write masrl-kb's worker beside the theme's."""
    index_path = site / INDEX
    if not index_path.is_file():  # search switched off
        return
    index = json.loads(index_path.read_text(encoding="utf-8"))
    (site / DOCS).write_text(
        json.dumps(index.get("docs", []), separators=(",", ":"), ensure_ascii=False),
        encoding="utf-8",
    )
    stub = {"config": index.get("config", {}), "docs": []}
    index_path.write_text(json.dumps(stub, separators=(",", ":")), encoding="utf-8")
    for theme_worker in sorted((site / WORKERS).glob("search.*.min.js")):
        name = worker_name(theme_worker.name)
        (site / WORKERS / name).write_text(worker_text(theme_worker.name), encoding="utf-8")
